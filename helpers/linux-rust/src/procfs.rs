//! /proc facts about a process.

use std::path::Path;

pub fn comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim_end().to_string())
}

/// Canonical executable path (the /proc/PID/exe link, resolved).
#[cfg(test)]
pub fn executable(pid: u32) -> Option<String> {
    executable_info(pid).map(|(path, _)| path)
}

/// What the kernel appends to /proc/PID/exe's target once the file is gone.
const DELETED_SUFFIX: &str = " (deleted)";

/// The executable's path and whether it was deleted (or replaced: a package
/// upgrade renames a new file over it) since the process started. A deleted
/// one's path is the link's target without the kernel's " (deleted)", not
/// resolved further (its directories may still be symlinks); a present one
/// is canonicalised. Deleted = the running image has no link left on disk
/// (st_nlink 0 through the exe link), else (unreadable) the suffix alone.
pub fn executable_info(pid: u32) -> Option<(String, bool)> {
    use std::os::unix::fs::MetadataExt;
    let link = format!("/proc/{pid}/exe");
    let target = std::fs::read_link(&link).ok()?.to_string_lossy().into_owned();
    let unlinked = std::fs::metadata(&link).ok().map(|m| m.nlink() == 0);
    let (path, deleted) = split_deleted(&target, unlinked);
    if deleted {
        return Some((path.to_string(), true));
    }
    let canon = std::fs::canonicalize(path).map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| path.to_string());
    Some((canon, false))
}

/// (path, deleted) of an exe link target. `unlinked`: whether the image's
/// link count is 0 (None: unknown). A name that really ends in " (deleted)"
/// of a file still on disk is not a deletion.
pub fn split_deleted(target: &str, unlinked: Option<bool>) -> (&str, bool) {
    match (target.strip_suffix(DELETED_SUFFIX), unlinked) {
        (Some(p), Some(true) | None) => (p, true),
        _ => (target, false),
    }
}

/// The Flatpak application id of a process: `name` in the `[Application]`
/// group of /proc/PID/root/.flatpak-info (the sandbox's own file, readable
/// for a process of the same user). None outside Flatpak, or unreadable.
pub fn flatpak_id(pid: u32) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/root/.flatpak-info")).ok()?;
    parse_flatpak_info(&text)
}

/// `name=` of the `[Application]` group of a .flatpak-info (a GLib key file).
pub fn parse_flatpak_info(text: &str) -> Option<String> {
    let mut in_app = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_app = line == "[Application]";
            continue;
        }
        if !in_app || line.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            if k.trim() == "name" {
                let v = v.trim();
                return (!v.is_empty()).then(|| v.to_string());
            }
        }
    }
    None
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

/// Most bytes of /proc/PID/maps read to recognise a toolkit: a GTK or Qt
/// app's maps are 50-150 KiB; a browser's can be megabytes, but those are
/// recognised from their executable (or its first lines) long before.
const MAPS_BUDGET: u64 = 512 * 1024;

/// How sure a toolkit guess is: an application family (which may load
/// GTK for its dialogs: LibreOffice's gtk3 plugin, Firefox, Chromium) beats
/// Qt (whose GTK platform theme loads GTK), which beats GTK.
fn rank(toolkit: &str) -> u8 {
    match toolkit {
        "libreoffice" | "firefox" | "chromium" | "electron" => 3,
        "qt5" | "qt6" => 2,
        _ => 1,
    }
}

/// The toolkit an executable path stands for by itself.
pub fn toolkit_from_executable(path: &str) -> Option<&'static str> {
    let lower = path.to_ascii_lowercase();
    let base = lower.rsplit('/').next().unwrap_or(&lower);
    let base = base.strip_suffix(" (deleted)").unwrap_or(base);
    match base {
        "soffice.bin" | "soffice" | "oosplash" => return Some("libreoffice"),
        "firefox" | "firefox-esr" | "firefox-bin" => return Some("firefox"),
        "chromium" | "chromium-browser" | "chrome" | "google-chrome" | "headless_shell" => return Some("chromium"),
        "electron" => return Some("electron"),
        _ => {}
    }
    if lower.contains("/electron/") {
        return Some("electron");
    }
    None
}

/// The toolkit one /proc/PID/maps line shows (a mapped library or the
/// executable), if any.
pub fn toolkit_from_map_line(line: &str) -> Option<&'static str> {
    // The path is everything from the first '/' (it may hold spaces; lines
    // of anonymous, [heap] or [stack] mappings have none).
    let path = &line[line.find('/')?..];
    if let Some(t) = toolkit_from_executable(path.trim_end()) {
        return Some(t);
    }
    let base = path.rsplit('/').next().unwrap_or(path);
    let table: [(&str, &'static str); 13] = [
        ("libmergedlo.so", "libreoffice"),
        ("libsofficeapp.so", "libreoffice"),
        ("libxul.so", "firefox"),
        ("libcef.so", "chromium"),
        ("libQt6Gui.so", "qt6"),
        ("libQt6Widgets.so", "qt6"),
        ("libQt6Core.so", "qt6"),
        ("libQt5Gui.so", "qt5"),
        ("libQt5Widgets.so", "qt5"),
        ("libQt5Core.so", "qt5"),
        ("libgtk-4.so", "gtk4"),
        ("libgtk-3.so", "gtk3"),
        ("libgtk-x11-2.0.so", "gtk2"),
    ];
    table.iter().find(|(lib, _)| base.starts_with(lib)).map(|&(_, t)| t)
}

/// The best toolkit guess from maps lines; stops at the first line naming
/// an application family (nothing can beat it).
pub fn toolkit_from_maps(r: impl std::io::BufRead) -> Option<&'static str> {
    let mut best: Option<&'static str> = None;
    for line in r.split(b'\n') {
        let Ok(line) = line else { break };
        let Some(t) = toolkit_from_map_line(&String::from_utf8_lossy(&line)) else { continue };
        if best.is_none_or(|b| rank(t) > rank(b)) {
            best = Some(t);
            if rank(t) == 3 {
                break;
            }
        }
    }
    best
}

/// The UI toolkit a process is built on: from its executable, else its
/// mapped libraries (None when unknown, or its maps are unreadable: another
/// user's process).
pub fn toolkit(pid: u32, executable: Option<&str>) -> Option<&'static str> {
    if let Some(t) = executable.and_then(toolkit_from_executable) {
        return Some(t);
    }
    use std::io::Read;
    let f = std::fs::File::open(format!("/proc/{pid}/maps")).ok()?;
    toolkit_from_maps(std::io::BufReader::with_capacity(64 * 1024, f.take(MAPS_BUDGET)))
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

    #[test]
    fn deleted_executables() {
        assert_eq!(split_deleted("/usr/bin/app (deleted)", Some(true)), ("/usr/bin/app", true));
        assert_eq!(split_deleted("/usr/bin/app (deleted)", None), ("/usr/bin/app", true), "link count unknown: the suffix says");
        assert_eq!(split_deleted("/opt/odd name (deleted)", Some(false)), ("/opt/odd name (deleted)", false), "a file really named so");
        assert_eq!(split_deleted("/usr/bin/app", Some(false)), ("/usr/bin/app", false));
        assert_eq!(split_deleted("/usr/bin/app", Some(true)), ("/usr/bin/app", false));
        // Our own executable is on disk.
        let (me, deleted) = executable_info(std::process::id()).unwrap();
        assert!(!deleted && std::path::Path::new(&me).is_absolute(), "{me}");
    }

    /// A real process whose executable is deleted while it runs.
    #[test]
    fn deleted_executable_of_a_live_process() {
        let Ok(sleep) = std::fs::canonicalize("/bin/sleep") else {
            eprintln!("SKIPPED: no /bin/sleep");
            return;
        };
        let dir = std::env::temp_dir().join(format!("deckhand-exe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dir = std::fs::canonicalize(&dir).unwrap();
        let copy = dir.join("dh-sleeper");
        std::fs::copy(&sleep, &copy).unwrap();
        let mut child = std::process::Command::new(&copy).arg("30").spawn().unwrap();
        let pid = child.id();
        // Wait until the exec happened (the link names the copy).
        let t0 = std::time::Instant::now();
        while executable(pid).as_deref() != copy.to_str() && t0.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let before = executable_info(pid);
        let name = comm(pid);
        std::fs::remove_file(&copy).unwrap();
        let after = executable_info(pid);
        let _ = child.kill();
        let _ = child.wait();
        std::fs::remove_dir_all(&dir).unwrap();
        let copy = copy.to_str().unwrap().to_string();
        assert_eq!(before, Some((copy.clone(), false)));
        assert_eq!(after, Some((copy, true)), "deleted, the path without the suffix");
        assert_eq!(name.as_deref(), Some("dh-sleeper"));
    }

    #[test]
    fn flatpak_info() {
        let info = "[Application]\nname=org.gnome.TextEditor\nruntime=runtime/org.gnome.Platform/x86_64/45\n\n[Instance]\ninstance-id=123\n";
        assert_eq!(parse_flatpak_info(info).as_deref(), Some("org.gnome.TextEditor"));
        // A runtime (no [Application] group), a name elsewhere, an empty one.
        assert_eq!(parse_flatpak_info("[Runtime]\nname=org.freedesktop.Platform\n"), None);
        assert_eq!(parse_flatpak_info("[Instance]\nname=x\n[Application]\n# name=no\n name = org.x.Y \n").as_deref(), Some("org.x.Y"));
        assert_eq!(parse_flatpak_info("[Application]\nname=\n"), None);
        assert_eq!(parse_flatpak_info(""), None);
        // Not in a sandbox.
        assert_eq!(flatpak_id(std::process::id()), None);
    }

    #[test]
    fn toolkit_from_sample_maps() {
        let gtk3 = "\
55d0c8a00000-55d0c8a02000 r--p 00000000 08:01 393231                     /usr/bin/mousepad
7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 
7f1c2b400000-7f1c2b4a0000 r--p 00000000 08:01 400100                     /usr/lib/x86_64-linux-gnu/libgtk-3.so.0.2404.29
7f1c2c000000-7f1c2c010000 r-xp 00000000 08:01 400101                     /usr/lib/x86_64-linux-gnu/libgdk-3.so.0.2404.29
7ffd6b1d0000-7ffd6b1f1000 rw-p 00000000 00:00 0                          [stack]
";
        assert_eq!(toolkit_from_maps(gtk3.as_bytes()), Some("gtk3"));
        let gtk4 = "7f00-7f01 r--p 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libgtk-4.so.1.800.3\n";
        assert_eq!(toolkit_from_maps(gtk4.as_bytes()), Some("gtk4"));
        // Qt with the GTK platform theme loaded: Qt wins, wherever it comes.
        let qt5 = "\
7f00-7f01 r--p 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libgtk-3.so.0
7f02-7f03 r--p 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libQt5Core.so.5.15.8
7f04-7f05 r--p 00000000 08:01 3 /usr/lib/x86_64-linux-gnu/libQt5Gui.so.5.15.8
";
        assert_eq!(toolkit_from_maps(qt5.as_bytes()), Some("qt5"));
        let qt6 = "7f02-7f03 r--p 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libQt6Gui.so.6.4.2\n";
        assert_eq!(toolkit_from_maps(qt6.as_bytes()), Some("qt6"));
        // LibreOffice with its gtk3 VCL plugin.
        let lo = "\
7f00-7f01 r--p 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libgtk-3.so.0
7f02-7f03 r--p 00000000 08:01 2 /usr/lib/libreoffice/program/libmergedlo.so
";
        assert_eq!(toolkit_from_maps(lo.as_bytes()), Some("libreoffice"));
        let ff = "7f00-7f01 r--p 00000000 08:01 1 /usr/lib/firefox-esr/libxul.so\n7f02-7f03 r--p 0 08:01 2 /usr/lib/x86_64-linux-gnu/libgtk-3.so.0\n";
        assert_eq!(toolkit_from_maps(ff.as_bytes()), Some("firefox"));
        let chromium = "55aa-55ab r--p 00000000 08:01 1 /usr/lib/chromium/chromium\n7f00-7f01 r--p 0 08:01 2 /usr/lib/x86_64-linux-gnu/libgtk-3.so.0\n";
        assert_eq!(toolkit_from_maps(chromium.as_bytes()), Some("chromium"));
        let cef = "7f00-7f01 r--p 00000000 08:01 1 /opt/app/libcef.so\n";
        assert_eq!(toolkit_from_maps(cef.as_bytes()), Some("chromium"));
        let electron = "55aa-55ab r--p 00000000 08:01 1 /usr/lib/node_modules/electron/dist/electron\n";
        assert_eq!(toolkit_from_maps(electron.as_bytes()), Some("electron"));
        // A replaced library, a path with a space, anonymous and special lines.
        assert_eq!(toolkit_from_map_line("7f00-7f01 r--p 0 08:01 1 /usr/lib/libgtk-3.so.0.2404.29 (deleted)"), Some("gtk3"));
        assert_eq!(toolkit_from_map_line("7f00-7f01 r--p 0 08:01 1 /opt/My App/libQt6Core.so.6"), Some("qt6"));
        assert_eq!(toolkit_from_map_line("7f00-7f01 rw-p 00000000 00:00 0 "), None);
        assert_eq!(toolkit_from_map_line("7ffd-7ffe rw-p 00000000 00:00 0   [heap]"), None);
        assert_eq!(toolkit_from_map_line("7f00-7f01 r--p 0 08:01 1 /usr/lib/x86_64-linux-gnu/libgtk-3-common.so"), None);
        assert_eq!(toolkit_from_maps("".as_bytes()), None);
        assert_eq!(toolkit_from_executable("/usr/lib/libreoffice/program/soffice.bin"), Some("libreoffice"));
        assert_eq!(toolkit_from_executable("/usr/lib/firefox-esr/firefox-esr"), Some("firefox"));
        assert_eq!(toolkit_from_executable("/usr/bin/mousepad"), None);
        // Our own process: readable, no toolkit.
        assert_eq!(toolkit(std::process::id(), None), None);
        assert_eq!(toolkit(u32::MAX, None), None, "no such process");
    }
}
