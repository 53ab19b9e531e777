//! /proc facts about a process.

use std::path::Path;

pub fn comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim_end().to_string())
}

/// Canonical executable path (the /proc/PID/exe link, resolved).
pub fn executable(pid: u32) -> Option<String> {
    let link = format!("/proc/{pid}/exe");
    let target = std::fs::read_link(&link).ok()?;
    let canon = std::fs::canonicalize(&target).unwrap_or(target);
    Some(canon.to_string_lossy().into_owned())
}

/// Field 22 of /proc/PID/stat (start time in clock ticks since boot).
pub fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_time(&stat)
}

pub fn parse_start_time(stat: &str) -> Option<u64> {
    // comm (field 2) may contain spaces and parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(22 - 3).and_then(|f| f.parse().ok())
}

/// The desktop file id the process was launched from, when it says so.
pub fn desktop_id(pid: u32) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    for var in env.split(|&b| b == 0) {
        for key in ["GIO_LAUNCHED_DESKTOP_FILE=", "BAMF_DESKTOP_FILE_HINT="] {
            if let Some(v) = var.strip_prefix(key.as_bytes()) {
                let v = String::from_utf8_lossy(v);
                if let Some(name) = Path::new(v.as_ref()).file_name() {
                    return Some(name.to_string_lossy().into_owned());
                }
            }
        }
    }
    None
}

pub fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_field_22() {
        let stat = "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 12345 67 18446744073709551615";
        assert_eq!(parse_start_time(stat), Some(987654));
        assert!(start_time(std::process::id()).is_some());
        assert!(executable(std::process::id()).is_some());
    }
}
