//! Installed applications: the Desktop Entry files of the XDG data
//! directories (Desktop Entry Specification 1.5, "Desktop File ID",
//! "Recognized desktop entry keys", "The Exec key").
//!
//! `$XDG_DATA_HOME/applications` first, then each of `$XDG_DATA_DIRS`'s
//! `applications` (defaults per the Base Directory spec); an entry of an
//! earlier directory shadows every later one with the same desktop file id,
//! a hidden one included (that is how a user deletes a system entry). Only
//! `Type=Application` entries with an `Exec` are apps; `Hidden=true` and a
//! `TryExec` naming no executable leave the entry out. Everything read is
//! bounded: entries, directory depth, bytes per file.

use std::collections::HashSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Most .desktop files looked at in all directories together.
pub const MAX_FILES: usize = 5000;
/// A file larger than this is not an entry we read (real ones are a few KiB,
/// the largest with every translation ~60 KiB).
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Subdirectory levels below an `applications` directory (ids of subdirs: `kde4-foo.desktop`).
const MAX_DEPTH: usize = 4;
/// Most arguments kept of one Exec line.
const MAX_EXEC_ARGS: usize = 256;

/// One installed application, as the wire's list_installed reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub desktop_id: String,
    pub name: String,
    pub executable: Option<String>,
    pub exec: Vec<String>,
    pub terminal: bool,
    pub no_display: bool,
    /// Where the entry was read (the launch environment names it).
    pub path: PathBuf,
}

/// The keys of the `[Desktop Entry]` group we use, unescaped.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: Option<String>,
    pub name: Option<String>,
    pub exec: Option<String>,
    pub try_exec: Option<String>,
    pub hidden: bool,
    pub no_display: bool,
    pub terminal: bool,
}

/// The `[Desktop Entry]` group of a file's text. Localized keys
/// (`Name[de]`) are skipped, the first of duplicated keys is kept, other
/// groups (`[Desktop Action new-window]`) are ignored.
pub fn parse_entry(text: &str) -> Entry {
    let mut e = Entry::default();
    let mut in_main = false;
    let mut seen: HashSet<&str> = HashSet::new();
    for raw in text.lines() {
        let line = raw.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            in_main = line.trim_end() == "[Desktop Entry]";
            continue;
        }
        if !in_main {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.trim_end();
        if key.contains('[') || !seen.insert(key) {
            continue;
        }
        let value = unescape_value(value.trim_start());
        let truth = value.trim() == "true";
        match key {
            "Type" => e.kind = Some(value),
            "Name" => e.name = Some(value),
            "Exec" => e.exec = Some(value),
            "TryExec" => e.try_exec = Some(value),
            "Hidden" => e.hidden = truth,
            "NoDisplay" => e.no_display = truth,
            "Terminal" => e.terminal = truth,
            _ => {}
        }
    }
    e
}

/// A value of type string: `\s` `\n` `\t` `\r` `\\` (the spec's escapes);
/// any other backslash is kept as it is (the Exec key's own quoting reads it).
pub fn unescape_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let mut it = v.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The field codes: each expands to files, URLs, the icon, the name or the
/// entry's path when a launcher opens something; we open nothing, so each
/// is removed (`%%` is a literal `%`). Deprecated codes are removed too.
const FIELD_CODES: &[char] = &['f', 'F', 'u', 'U', 'd', 'D', 'n', 'N', 'i', 'c', 'k', 'v', 'm'];

/// An Exec value (already unescaped as a string) as its arguments: split at
/// unquoted blanks; `"..."` quotes an argument, inside which `\"`, `` \` ``,
/// `\$` and `\\` are the escaped character; single quotes and a backslash
/// outside quotes are read as a shell would (as GLib does). Field codes
/// are removed, and an argument that was only field codes is dropped.
/// Err: an unterminated quote (the entry is invalid).
pub fn split_exec(exec: &str) -> Result<Vec<String>, String> {
    // (text, whether it held anything but field codes)
    let mut args: Vec<(String, bool)> = Vec::new();
    let mut cur = String::new();
    let mut in_arg = false;
    let mut literal = false;
    let mut it = exec.chars().peekable();
    let push = |args: &mut Vec<(String, bool)>, cur: &mut String, literal: bool| {
        args.push((std::mem::take(cur), literal));
    };
    while let Some(c) = it.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_arg {
                    push(&mut args, &mut cur, literal);
                    in_arg = false;
                    literal = false;
                }
            }
            '"' => {
                in_arg = true;
                literal = true;
                loop {
                    match it.next() {
                        None => return Err("unterminated double quote".into()),
                        Some('"') => break,
                        Some('\\') => match it.peek() {
                            Some(&n) if matches!(n, '"' | '`' | '$' | '\\') => {
                                cur.push(n);
                                it.next();
                            }
                            _ => cur.push('\\'),
                        },
                        Some('%') => {
                            field_code(&mut it, &mut cur);
                        }
                        Some(ch) => cur.push(ch),
                    }
                }
            }
            '\'' => {
                in_arg = true;
                literal = true;
                loop {
                    match it.next() {
                        None => return Err("unterminated single quote".into()),
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                    }
                }
            }
            '\\' => {
                in_arg = true;
                literal = true;
                if let Some(n) = it.next() {
                    cur.push(n);
                }
            }
            '%' => {
                in_arg = true;
                if field_code(&mut it, &mut cur) {
                    literal = true;
                }
            }
            ch => {
                in_arg = true;
                literal = true;
                cur.push(ch);
            }
        }
        if args.len() > MAX_EXEC_ARGS {
            return Err(format!("more than {MAX_EXEC_ARGS} arguments"));
        }
    }
    if in_arg {
        push(&mut args, &mut cur, literal);
    }
    Ok(args.into_iter().filter(|(_, literal)| *literal).map(|(a, _)| a).collect())
}

/// After a `%`: `%%` is a `%` (returns true: literal text); a field code is
/// dropped (false). An unknown code is dropped too (the spec calls it invalid).
fn field_code(it: &mut std::iter::Peekable<std::str::Chars<'_>>, cur: &mut String) -> bool {
    match it.next() {
        Some('%') => {
            cur.push('%');
            true
        }
        Some(c) if FIELD_CODES.contains(&c) => false,
        Some(_) => false,
        None => {
            cur.push('%');
            true
        }
    }
}

/// Whether a path is a regular file (after symlinks) we may execute.
pub fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else { return false };
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return false;
    }
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: a valid NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::X_OK) == 0 }
}

/// A program name as the Exec key and a shell resolve it: a path with a
/// slash is taken as it is (absolute only), a bare name is looked up in
/// each directory of `path_var`. The absolute path, or None.
pub fn resolve_program(name: &str, path_var: Option<&str>) -> Option<PathBuf> {
    if name.is_empty() {
        return None;
    }
    if name.contains('/') {
        let p = PathBuf::from(name);
        return (p.is_absolute() && is_executable(&p)).then_some(p);
    }
    let path_var = path_var.unwrap_or("/usr/local/bin:/usr/bin:/bin");
    path_var.split(':').filter(|d| d.starts_with('/')).map(|d| Path::new(d).join(name)).find(|p| is_executable(p))
}

/// The `applications` directories, most important first.
pub fn application_dirs(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty());
    let mut dirs = Vec::new();
    match nonempty("XDG_DATA_HOME").filter(|v| v.starts_with('/')) {
        Some(d) => dirs.push(PathBuf::from(d)),
        None => {
            if let Some(home) = nonempty("HOME") {
                dirs.push(Path::new(&home).join(".local/share"));
            }
        }
    }
    let data_dirs = nonempty("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share/:/usr/share/".into());
    dirs.extend(data_dirs.split(':').filter(|d| d.starts_with('/')).map(PathBuf::from));
    let mut seen = HashSet::new();
    dirs.into_iter().map(|d| d.join("applications")).filter(|d| seen.insert(d.clone())).collect()
}

/// Every `.desktop` file under one applications directory, with its desktop
/// file id (the path below the directory, `/` made `-`), sorted by id.
fn files_of(dir: &Path, budget: &mut usize) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((d, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        let mut names: Vec<_> = rd.flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            if *budget == 0 {
                return out;
            }
            let p = e.path();
            let Ok(ft) = e.file_type() else { continue };
            // Symlinked directories are followed only through metadata (bounded by depth).
            let is_dir = ft.is_dir() || (ft.is_symlink() && p.is_dir());
            if is_dir {
                if depth < MAX_DEPTH {
                    stack.push((p, depth + 1));
                }
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".desktop") {
                continue;
            }
            let Ok(rel) = p.strip_prefix(dir) else { continue };
            let id = rel.to_string_lossy().replace('/', "-");
            *budget -= 1;
            out.push((id, p));
        }
    }
    out.sort();
    out
}

/// An entry's file read as an installed app, or None (not an app, hidden,
/// TryExec missing, no or a broken Exec, unreadable, too large).
pub fn read_installed(id: &str, path: &Path, path_var: Option<&str>) -> Option<Installed> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let e = parse_entry(&String::from_utf8_lossy(&bytes));
    installed_of(id, path, &e, path_var)
}

/// The app an entry describes, or None when it is not one we list.
pub fn installed_of(id: &str, path: &Path, e: &Entry, path_var: Option<&str>) -> Option<Installed> {
    if e.kind.as_deref() != Some("Application") || e.hidden {
        return None;
    }
    if let Some(t) = e.try_exec.as_deref().filter(|t| !t.trim().is_empty()) {
        resolve_program(t.trim(), path_var)?;
    }
    let exec = split_exec(e.exec.as_deref()?).ok()?;
    let program = exec.first()?;
    let executable = resolve_program(program, path_var).map(|p| p.to_string_lossy().into_owned());
    Some(Installed {
        desktop_id: id.to_string(),
        name: e.name.clone().unwrap_or_else(|| id.trim_end_matches(".desktop").to_string()),
        executable,
        exec,
        terminal: e.terminal,
        no_display: e.no_display,
        path: path.to_path_buf(),
    })
}

/// Every installed app of these directories (earlier ones winning by id),
/// sorted by desktop id.
pub fn scan(dirs: &[PathBuf], path_var: Option<&str>) -> Vec<Installed> {
    let mut budget = MAX_FILES;
    let mut claimed: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    for dir in dirs {
        for (id, path) in files_of(dir, &mut budget) {
            // The first directory's entry claims the id, even when it is
            // not an app we list (Hidden=true deletes the system's entry).
            if !claimed.insert(id.clone()) {
                continue;
            }
            if let Some(app) = read_installed(&id, &path, path_var) {
                out.push(app);
            }
        }
    }
    out.sort_by(|a, b| a.desktop_id.cmp(&b.desktop_id));
    out
}

/// The installed apps of this process's environment.
pub fn scan_env() -> Vec<Installed> {
    let env = |k: &str| std::env::var(k).ok();
    scan(&application_dirs(&env), std::env::var("PATH").ok().as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("deckhand-desktop-test-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn field_codes_are_removed_and_percent_kept() {
        assert_eq!(split_exec("mousepad %U").unwrap(), ["mousepad"]);
        assert_eq!(split_exec("featherpad %U").unwrap(), ["featherpad"]);
        assert_eq!(split_exec("app --open=%f --icon %i %c %k").unwrap(), ["app", "--open=", "--icon"]);
        assert_eq!(split_exec("printf 100%% %F").unwrap(), ["printf", "100%"]);
        assert_eq!(split_exec("app %u%U").unwrap(), ["app"], "an argument of field codes only is dropped");
        // Deprecated and unknown codes go too.
        assert_eq!(split_exec("app %d %D %n %N %v %m %x").unwrap(), ["app"]);
    }

    #[test]
    fn quoting_per_the_exec_key() {
        assert_eq!(split_exec(r#""/opt/My App/bin/app" --title "a b""#).unwrap(), ["/opt/My App/bin/app", "--title", "a b"]);
        // Inside double quotes: \" \` \$ \\ are the character; another backslash stays.
        assert_eq!(split_exec(r#"sh -c "echo \"hi\" \$HOME \`x\` \\ \n""#).unwrap(), ["sh", "-c", r#"echo "hi" $HOME `x` \ \n"#]);
        assert_eq!(split_exec(r#"a"b c"d"#).unwrap(), ["ab cd"], "quotes join with the text around them");
        assert_eq!(split_exec("app ''").unwrap(), ["app", ""], "an empty quoted argument is kept");
        assert_eq!(split_exec("  app   x  ").unwrap(), ["app", "x"]);
        assert!(split_exec(r#"app "unterminated"#).is_err());
        assert!(split_exec("app 'open").is_err());
        assert_eq!(split_exec("app \"%f\"").unwrap(), ["app", ""], "a quoted argument stays an argument");
    }

    #[test]
    fn value_escapes_then_exec_quoting() {
        // In the file: Exec=sh -c "printf \\"x\\"" (string-level \\ is one backslash).
        let e = parse_entry("[Desktop Entry]\nType=Application\nName=X\\sY\nExec=sh -c \"printf \\\\\"x\\\\\"\"\n");
        assert_eq!(e.name.as_deref(), Some("X Y"));
        assert_eq!(split_exec(e.exec.as_deref().unwrap()).unwrap(), ["sh", "-c", "printf \"x\""]);
        assert_eq!(unescape_value(r"a\tb\nc\\d\q"), "a\tb\nc\\d\\q");
    }

    #[test]
    fn only_the_main_group_and_unlocalized_keys() {
        let text = "# comment\n[Desktop Entry]\nName[de]=Schreiber\nName = Writer\nName=Second\nType=Application\nExec=writer %U\nNoDisplay=true\nTerminal=false\nHidden=false\n\n[Desktop Action new]\nName=New Window\nExec=writer --new\n";
        let e = parse_entry(text);
        assert_eq!(e.name.as_deref(), Some("Writer"));
        assert_eq!(e.exec.as_deref(), Some("writer %U"));
        assert!(e.no_display && !e.terminal && !e.hidden);
        assert_eq!(e.kind.as_deref(), Some("Application"));
    }

    #[test]
    fn hidden_links_and_bad_try_exec_are_not_apps() {
        let p = Path::new("/x.desktop");
        let app = |extra: &str| {
            let e = parse_entry(&format!("[Desktop Entry]\nType=Application\nName=T\nExec=sh -c true\n{extra}"));
            installed_of("t.desktop", p, &e, Some("/usr/bin:/bin"))
        };
        let ok = app("").expect("a plain entry is an app");
        assert_eq!(ok.exec, ["sh", "-c", "true"]);
        assert!(ok.executable.as_deref().is_some_and(|x| x.ends_with("/sh")));
        assert!(app("Hidden=true").is_none());
        assert!(app("TryExec=/nonexistent/deckhand-test-binary").is_none());
        assert!(app("TryExec=deckhand-no-such-program-anywhere").is_none());
        assert!(app("TryExec=sh").is_some());
        assert!(app("NoDisplay=true").is_some_and(|a| a.no_display), "NoDisplay entries are listed, marked");
        assert!(app("Terminal=true").is_some_and(|a| a.terminal));
        let link = parse_entry("[Desktop Entry]\nType=Link\nName=L\nURL=https://example.com\n");
        assert!(installed_of("l.desktop", p, &link, None).is_none());
        let no_exec = parse_entry("[Desktop Entry]\nType=Application\nName=D\nDBusActivatable=true\n");
        assert!(installed_of("d.desktop", p, &no_exec, None).is_none());
        // A program that is not found is still listed, executable null.
        let missing = parse_entry("[Desktop Entry]\nType=Application\nName=M\nExec=deckhand-no-such-program-anywhere --x\n");
        let m = installed_of("m.desktop", p, &missing, Some("/usr/bin")).unwrap();
        assert_eq!((m.executable, m.exec), (None, vec!["deckhand-no-such-program-anywhere".to_string(), "--x".to_string()]));
    }

    #[test]
    fn desktop_ids_of_subdirs_and_shadowing() {
        let home = tmp("home");
        let sys = tmp("sys");
        let write = |dir: &Path, rel: &str, text: &str| {
            let p = dir.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        };
        let entry = |name: &str| format!("[Desktop Entry]\nType=Application\nName={name}\nExec=sh\n");
        write(&sys, "kde4/konq.desktop", &entry("Konq"));
        write(&sys, "a/b/deep.desktop", &entry("Deep"));
        write(&sys, "shadowed.desktop", &entry("System"));
        write(&sys, "deleted.desktop", &entry("Deleted by the user"));
        write(&sys, "notes.txt", "not an entry");
        write(&home, "shadowed.desktop", &entry("User"));
        write(&home, "deleted.desktop", "[Desktop Entry]\nType=Application\nName=Gone\nExec=sh\nHidden=true\n");
        write(&sys, "big.desktop", &format!("{}\n# {}\n", entry("Big"), "x".repeat(MAX_FILE_BYTES as usize)));
        let apps = scan(&[home.clone(), sys.clone()], Some("/usr/bin:/bin"));
        let ids: Vec<(&str, &str)> = apps.iter().map(|a| (a.desktop_id.as_str(), a.name.as_str())).collect();
        assert_eq!(ids, [("a-b-deep.desktop", "Deep"), ("kde4-konq.desktop", "Konq"), ("shadowed.desktop", "User")]);
        assert_eq!(apps[2].path, home.join("shadowed.desktop"));
        let _ = fs::remove_dir_all(&home);
        let _ = fs::remove_dir_all(&sys);
    }

    #[test]
    fn xdg_defaults() {
        let none = |_: &str| None;
        assert_eq!(application_dirs(&none), [PathBuf::from("/usr/local/share/applications"), PathBuf::from("/usr/share/applications")]);
        let env = |k: &str| match k {
            "HOME" => Some("/home/u".to_string()),
            "XDG_DATA_DIRS" => Some("/opt/share:relative:/usr/share".to_string()),
            _ => None,
        };
        assert_eq!(
            application_dirs(&env),
            [PathBuf::from("/home/u/.local/share/applications"), PathBuf::from("/opt/share/applications"), PathBuf::from("/usr/share/applications")]
        );
        let env2 = |k: &str| (k == "XDG_DATA_HOME").then(|| "/tmp/dh".to_string());
        assert_eq!(application_dirs(&env2)[0], PathBuf::from("/tmp/dh/applications"));
    }

    #[test]
    fn program_resolution() {
        assert!(resolve_program("sh", Some("/nonexistent:/bin:/usr/bin")).is_some());
        assert!(resolve_program("sh", Some("relative/dir")).is_none(), "relative PATH entries are not searched");
        assert!(resolve_program("bin/sh", Some("/")).is_none(), "relative paths are refused");
        assert!(resolve_program("/etc/passwd", None).is_none(), "not executable");
        assert!(resolve_program("/bin", None).is_none(), "a directory");
    }
}
