//! Read-only ops: permissions, list_apps, list_windows, get_tree,
//! screenshot, hit_test.

use super::window::sway_socket;
use super::worker::Worker;
use super::Ctx;
use crate::atspi::actions;
use crate::atspi::cache::FrameEntry;
use crate::atspi::{self, apps, collection, tree, within, A11y};
use crate::error::{Code, Error, Result};
use crate::procfs;
use crate::wire::messages::*;
use crate::wayland::{self, sway, Backend};
use crate::x11::{capture, windows, X};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One check, under its neutral id (`atspi::vocabulary::permission_id`),
/// this helper's own id kept as `native_id`.
fn check(native_id: &str, granted: Option<bool>, detail: String, remediation: &str) -> PermissionCheck {
    let status = match granted {
        Some(true) => "granted",
        Some(false) => "denied",
        None => "unknown",
    };
    PermissionCheck {
        id: atspi::vocabulary::permission_id(native_id).into(),
        native_id: Some(native_id.into()),
        status: status.into(),
        detail,
        remediation: if granted == Some(true) { String::new() } else { remediation.into() },
        advisory: Some(false),
    }
}

pub async fn permissions(ctx: &Ctx, _: NoArgs, _deadline: Instant) -> Result<PermissionsResult> {
    let mut checks = Vec::new();
    let t = Duration::from_millis(2000);

    // AT-SPI bus: GetAddress on the session bus, then connect.
    let session = within(t, "session bus", ctx.session()).await;
    let bus_check = match &session {
        Err(e) => check("atspi_bus", Some(false), e.message.clone(), "run inside a D-Bus session (DBUS_SESSION_BUS_ADDRESS)"),
        Ok(s) => match within(t, "org.a11y.Bus.GetAddress", atspi::bus_address(Some(s))).await.inspect_err(|_| ctx.session_failed()) {
            Err(e) => check(
                "atspi_bus",
                Some(false),
                e.message,
                "start the accessibility bus: /usr/libexec/at-spi-bus-launcher --launch-immediately (package at-spi2-core)",
            ),
            Ok(addr) => match within(t, "accessibility bus", ctx.a11y()).await {
                Ok(_) => check("atspi_bus", Some(true), format!("org.a11y.Bus answered ({addr}); the accessibility bus connected"), ""),
                Err(e) => check(
                    "atspi_bus",
                    Some(false),
                    format!("org.a11y.Bus answered ({addr}) but connecting failed: {}", e.message),
                    "restart at-spi-bus-launcher for this session",
                ),
            },
        },
    };
    checks.push(bus_check);

    // org.a11y.Status.IsEnabled: advisory whatever it says (observation
    // never waits on it).
    let enabled = match &session {
        Ok(s) => {
            let r = within(t, "org.a11y.Status", atspi::a11y_enabled(s)).await;
            // A failed call may be a dead connection: the next check opens a new one.
            if r.is_err() {
                ctx.session_failed();
            }
            match r {
                Ok(true) => check("accessibility_enabled", Some(true), "org.a11y.Status.IsEnabled is true".into(), ""),
                // Advisory: observation goes on (GTK 3 exposes its tree
                // regardless); only the toolkits named here need the flag.
                Ok(false) => PermissionCheck {
                    advisory: Some(true),
                    ..check(
                        "accessibility_enabled",
                        Some(false),
                        "org.a11y.Status.IsEnabled is false: GTK 3 trees are readable anyway, but toolkits that check the flag \
                         (Qt, Chromium/Electron, Firefox, GTK 4 with some versions) do not expose their accessibility trees"
                            .into(),
                        "run `deckhand permissions --enable-accessibility` (or set org.a11y.Status IsEnabled=true on the session bus), \
                         then restart those apps",
                    )
                },
                Err(e) => check("accessibility_enabled", None, format!("cannot read org.a11y.Status.IsEnabled: {}", e.message), "start at-spi-bus-launcher for this session"),
            }
        }
        Err(e) => check("accessibility_enabled", None, format!("no session bus: {}", e.message), "run inside a D-Bus session"),
    };
    checks.push(PermissionCheck { advisory: Some(true), ..enabled });

    // ---- issue 19: on Wayland the compositor stands for the display.
    if wayland::backend().is_wayland() {
        checks.extend(wayland_checks());
        return Ok(PermissionsResult { checks });
    }
    // ---- end Wayland
    // X display and extensions.
    let x = ctx.with_x(|x| {
        let (w, h) = x.screen_size();
        let vendor = String::from_utf8_lossy(&x11rb::connection::Connection::setup(&x.conn).vendor).to_string();
        let shm_probe = if x.ext.shm.is_some() {
            // A real attach, not just the extension's presence (a remote server cannot share memory).
            let probe = capture::capture_root_probe(x);
            Some(probe)
        } else {
            None
        };
        Ok((w, h, vendor, x.ext, shm_probe))
    });
    let display = std::env::var("DISPLAY").unwrap_or_default();
    match x {
        Err(e) => {
            checks.push(check("x_display", Some(false), format!("DISPLAY={display:?}: {}", e.message), "set DISPLAY to a running X server (Xorg or Xvfb) this user may connect to"));
            for id in ["xtest", "composite", "mit_shm"] {
                checks.push(check(id, None, "no X display".into(), "fix x_display first"));
            }
        }
        Ok((w, h, vendor, ext, shm_probe)) => {
            checks.push(check("x_display", Some(true), format!("DISPLAY={display} ({vendor}, {w}x{h})"), ""));
            checks.push(match ext.xtest {
                Some((a, b)) => check("xtest", Some(true), format!("XTEST {a}.{b}"), ""),
                None => check("xtest", Some(false), "the X server has no XTEST extension: no foreground input".into(), "enable the XTEST extension (Xvfb: +extension XTEST)"),
            });
            checks.push(match ext.composite {
                Some((a, b)) => check("composite", Some(true), format!("Composite {a}.{b}: covered windows can be captured"), ""),
                None => check("composite", Some(false), "no Composite extension: screenshots of covered windows show what covers them".into(), "enable Composite (Xvfb: +extension Composite)"),
            });
            checks.push(match (ext.shm, shm_probe) {
                (Some((a, b)), Some(Ok(()))) => check("mit_shm", Some(true), format!("MIT-SHM {a}.{b}: shared-memory capture works"), ""),
                (Some((a, b)), Some(Err(e))) => check("mit_shm", Some(false), format!("MIT-SHM {a}.{b} present but attaching failed: {}", e.message), "run on the same host as the X server; screenshots fall back to GetImage (slower)"),
                _ => check("mit_shm", Some(false), "no MIT-SHM: screenshots use GetImage over the socket (slower)".into(), "enable MIT-SHM (Xvfb: +extension MIT-SHM)"),
            });
        }
    }
    Ok(PermissionsResult { checks })
}

pub async fn list_apps(ctx: &Ctx, _: NoArgs, _deadline: Instant) -> Result<ListAppsResult> {
    // X side: windows per pid.
    let mut windows_per_pid: HashMap<u32, u32> = HashMap::new();
    let x_ok = if wayland::backend().is_wayland() {
        // sway's views (none to count without sway: the AT-SPI side alone).
        sway_socket().and_then(|s| s.map(|s| sway::list(&s)).transpose()).map(|views| {
            for v in views.into_iter().flatten() {
                if let Some(p) = v.pid {
                    *windows_per_pid.entry(p).or_default() += 1;
                }
            }
        })
    } else {
        ctx.with_x(|x| {
        let ids = windows::stacking_ids(x)?;
        for w in windows::describe(x, &ids)? {
            if let Some(p) = w.pid {
                *windows_per_pid.entry(p).or_default() += 1;
            }
        }
        Ok(())
    })
    };
    if let Err(e) = &x_ok {
        eprintln!("deckhand-helper-linux: list_apps without X windows: {}", e.message);
    }
    // AT-SPI side.
    let mut accessible: HashMap<u32, String> = HashMap::new();
    let a11y_res = match ctx.a11y().await {
        Ok(a) => apps::list(&a, true).await,
        Err(e) => Err(e),
    };
    match a11y_res {
        Ok(list) => {
            for e in list {
                if let Some(p) = e.pid {
                    accessible.entry(p).or_insert(e.name);
                }
            }
        }
        Err(e) => eprintln!("deckhand-helper-linux: list_apps without AT-SPI: {}", e.message),
    }
    if let Err(e) = x_ok {
        if accessible.is_empty() {
            return Err(e);
        }
    }
    let me = std::process::id();
    let mut pids: Vec<u32> = windows_per_pid.keys().chain(accessible.keys()).copied().collect();
    pids.sort_unstable();
    pids.dedup();
    let mut out = Vec::new();
    for pid in pids {
        if pid == me || !procfs::alive(pid) {
            continue;
        }
        let comm = procfs::comm(pid);
        if comm.as_deref().is_some_and(|c| c.starts_with("at-spi2-registr") || c.starts_with("at-spi-bus-laun")) {
            continue;
        }
        let (executable, executable_deleted) = match procfs::executable_info(pid) {
            Some((path, deleted)) => (Some(path), deleted),
            None => (None, false),
        };
        let acc_name = accessible.get(&pid).cloned().filter(|n| !n.is_empty());
        let exe_base = executable.as_ref().and_then(|e| std::path::Path::new(e).file_name().map(|f| f.to_string_lossy().into_owned()));
        let name = acc_name.or(exe_base).or_else(|| comm.clone()).unwrap_or_else(|| format!("pid {pid}"));
        let toolkit = procfs::toolkit(pid, executable.as_deref()).map(String::from);
        out.push(WireApp {
            pid,
            name,
            executable,
            executable_deleted,
            process_name: comm,
            bundle_id: procfs::flatpak_id(pid),
            desktop_id: procfs::desktop_id(pid),
            accessible: accessible.contains_key(&pid),
            start_time: procfs::start_time(pid),
            window_count: windows_per_pid.get(&pid).copied().unwrap_or(0),
            toolkit,
        });
    }
    out.sort_by(|a, b| a.name.to_lowercase().cmp(&b.name.to_lowercase()).then(a.pid.cmp(&b.pid)));
    Ok(ListAppsResult { apps: out })
}

pub async fn list_windows(ctx: &Ctx, a: ListWindowsArgs) -> Result<ListWindowsResult> {
    if let Some(sock) = sway_socket()? {
        let views = sway::list(&sock)?;
        let mut windows = sway_windows(&views, a.pid);
        // An app's popups (wayland/popups.rs) when asked for with its windows: sway lists none,
        // and each lookup costs calls into the app (an observation does not ask).
        if let Some(pid) = a.pid.filter(|_| a.popups) {
            let base = views.len() as u32;
            windows.extend(tokio::time::timeout(POPUP_LOOKUP, popup_windows(ctx, &views, pid, base)).await.unwrap_or_default());
        }
        return Ok(ListWindowsResult { windows });
    }
    ctx.with_x(|x| Ok(ListWindowsResult { windows: windows::list_windows_with_popups(x, a.pid)? }))
}

// ---- issue 19: Wayland (sway)
/// The Wayland backend's checks: the compositor (sway's IPC answering
/// stands for the display), input (the virtual devices' globals) and
/// capture (what wlr-screencopy cannot do).
fn wayland_checks() -> Vec<PermissionCheck> {
    let display = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
    let compositor = match wayland::backend() {
        Backend::Sway { socket } => match sway::answers(socket) {
            Some(version) => check("wayland_compositor", Some(true), format!("WAYLAND_DISPLAY={display}; sway {version} answers at SWAYSOCK={socket}"), ""),
            None => check("wayland_compositor", Some(false), format!("WAYLAND_DISPLAY={display}; sway's IPC at SWAYSOCK={socket} no longer answers"), "restart the session's sway, or point SWAYSOCK at it"),
        },
        Backend::Wayland { missing } => check("wayland_compositor", Some(false), format!("WAYLAND_DISPLAY={display}: {missing}"), "run under sway with SWAYSOCK set (other compositors: not supported yet)"),
        Backend::X11 => unreachable!("wayland_checks on the X11 backend"),
    };
    // ---- issue 19 input: the globals the virtual devices need, asked of the compositor.
    let devices = "virtual keyboard and pointer (zwp_virtual_keyboard_manager_v1, zwlr_virtual_pointer_manager_v1)";
    let input = match wayland::backend() {
        Backend::Sway { .. } => match wayland::devices::lacking(Instant::now() + std::time::Duration::from_millis(1000)) {
            Ok(l) if l.is_empty() => check("wayland_input", Some(true), format!("{devices}: offered by the compositor"), ""),
            Ok(l) => check("wayland_input", Some(false), format!("{devices}: the compositor lacks {}", l.join(", ")), "run sway (wlroots) as the session's compositor"),
            Err(e) => check("wayland_input", Some(false), format!("{devices}: the compositor's registry did not answer: {}", e.message), "check WAYLAND_DISPLAY"),
        },
        _ => check("wayland_input", Some(false), format!("{devices}: input on Wayland needs sway's IPC for its guards"), "run under sway with SWAYSOCK set"),
    };
    vec![
        compositor,
        input,
        check(
            "wayland_capture",
            Some(false),
            "wlr-screencopy copies what is on the screen: a window's own pixels cannot be read, a covered window's screenshot is refused (reason covered)".into(),
            "bring the window to the front (or use an X11 session) for its screenshot",
        ),
    ]
}

/// sway's views as wire windows: the container id as window_id, z_index
/// from `sway::views`' order (0 the bottom), scratchpad views minimized.
pub fn sway_windows(views: &[sway::View], pid: Option<u32>) -> Vec<WireWindow> {
    views
        .iter()
        .enumerate()
        .filter(|(_, v)| pid.is_none() || v.pid == pid)
        .map(|(z, v)| WireWindow { window_id: v.con_id, z_index: z as u32, title: v.title.clone(), bounds: v.bounds, minimized: v.scratchpad, pid: v.pid, popup: false })
        .collect()
}

/// Longest a window list waits for an app's popups (a hung app lists none).
const POPUP_LOOKUP: Duration = Duration::from_millis(1500);
/// Accessibility calls one popup lookup may make.
const POPUP_CALLS: u32 = 96;

/// The popups an app shows on sway as popup windows over its focused (else
/// topmost shown) native view: ids from wayland::popups, bounds on the
/// screen (the parent surface's origin added), above every view. Best
/// effort: an app without a tree, or one that does not answer, has none.
async fn popup_windows(ctx: &Ctx, views: &[sway::View], pid: u32, base: u32) -> Vec<WireWindow> {
    let shown = views.iter().filter(|v| v.pid == Some(pid) && v.shell != "xwayland" && v.visible && !v.scratchpad);
    let Some(parent) = shown.clone().find(|v| v.focused).or_else(|| shown.last()) else { return Vec::new() };
    let Ok(a) = ctx.a11y().await.map(|a| a.budgeted(POPUP_CALLS)) else { return Vec::new() };
    let Ok(bus) = bus_of(ctx, &a, pid).await else { return Vec::new() };
    let Ok(found) = wayland::popups::discover(&a, &bus).await else { return Vec::new() };
    if found.is_empty() {
        return Vec::new();
    }
    let origin = surface_origin_of(&a, &bus, &parent.title, parent.bounds).await.unwrap_or((parent.bounds.x, parent.bounds.y));
    found
        .into_iter()
        .enumerate()
        .filter_map(|(k, (index, _, ext))| {
            let window_id = wayland::popups::id(parent.con_id, index)?;
            let bounds = ext.map(|r| Rect::new(r.x + origin.0, r.y + origin.1, r.width, r.height)).unwrap_or(parent.bounds);
            Some(WireWindow { window_id, z_index: base + k as u32, title: String::new(), bounds, minimized: false, pid: Some(pid), popup: true })
        })
        .collect()
}

/// Where the surface of a native Wayland window (content at `content` on
/// the screen) has its origin: its frame matched in its own coordinates,
/// then `wayland::surface_origin`.
async fn surface_origin_of(a: &A11y, bus: &str, title: &str, content: Rect) -> Result<(i32, i32)> {
    let local = Rect::new(0, 0, content.width, content.height);
    let cands = tree::frame_candidates(a, bus, None).await?;
    let frame = tree::match_frame(a, bus, &cands, title, local).await?;
    let fe = tree::extents(a, bus, &frame).await;
    Ok(tree::surface_offset(a, bus, &frame, fe, content).await)
}

/// Secure fields of one sway view, on the screen: a native Wayland window's
/// found in the app's own coordinates (`secure_rects_for`), moved by the
/// surface origin; an Xwayland window's found as on X11 (its app's
/// coordinates are the screen's, `window::of_view`).
async fn secure_rects_wayland(ctx: &Ctx, a: &A11y, v: &sway::View) -> Result<Vec<Rect>> {
    let Some(pid) = v.pid else { return Ok(Vec::new()) };
    let bus = match bus_of(ctx, a, pid).await {
        Ok(b) => b,
        Err(e) if e.code == Code::AppNotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    if v.shell == "xwayland" {
        return secure_rects_for(a, Some(&bus), Some(pid), &v.title, v.bounds).await;
    }
    let local = Rect::new(0, 0, v.bounds.width, v.bounds.height);
    let (rects, origin) = tokio::join!(secure_rects_for(a, Some(&bus), Some(pid), &v.title, local), surface_origin_of(a, &bus, &v.title, v.bounds));
    let rects = rects?;
    if rects.is_empty() {
        return Ok(rects);
    }
    let (ox, oy) = origin?;
    Ok(rects.into_iter().map(|r| Rect::new(r.x.saturating_add(ox), r.y.saturating_add(oy), r.width, r.height)).collect())
}

/// screenshot on sway: the window's content region of the screen (or the
/// whole output) captured with wlr-screencopy, so a window another one
/// covers is refused (sway 1.7 has no per-window capture): SCREENSHOT_FAILED
/// reason covered, naming the covering window. Not shown (another workspace,
/// the scratchpad): reason not-shown. Then the X11 path's crop, redaction,
/// scaling and encoding.
async fn screenshot_wayland(ctx: &Ctx, sock: &str, args: ScreenshotArgs, format: ImageFormat, quality: u32, deadline: Instant) -> Result<ScreenshotResult> {
    let t0 = Instant::now();
    let views = sway::list(sock)?;
    let output = sway::outputs(sock)?.into_iter().next().ok_or_else(|| Error::new(Code::ScreenshotFailed, "sway has no active output"))?;
    let shown = |v: &&sway::View| v.visible && !v.scratchpad;
    let (area, targets): (Rect, Vec<sway::View>) = if args.window_id == 0 {
        (output, views.iter().filter(shown).cloned().collect())
    } else {
        let z = views.iter().position(|v| v.con_id == args.window_id).ok_or_else(|| {
            Error::new(Code::WindowNotFound, format!("sway has no view with container id {}", args.window_id)).with("window_id", args.window_id)
        })?;
        let v = &views[z];
        if !shown(&v) {
            return Err(Error::new(Code::ScreenshotFailed, format!("window {} is not shown (another workspace, a hidden tab or the scratchpad): sway 1.7 captures only what is on the screen", v.con_id))
                .with("reason", "not-shown"));
        }
        if let Some(o) = views[z + 1..].iter().filter(shown).find(|o| wayland::intersect(o.bounds, v.bounds).is_some()) {
            return Err(Error::new(
                Code::ScreenshotFailed,
                format!("window {} is covered by window {} ({:?}): sway 1.7 captures only what is on the screen, not a window's own pixels", v.con_id, o.con_id, o.title),
            )
            .with("reason", "covered")
            .with("covering_window_id", o.con_id));
        }
        let area = wayland::intersect(v.bounds, output).ok_or_else(|| Error::new(Code::ScreenshotFailed, format!("window {} is off the screen", v.con_id)).with("reason", "offscreen"))?;
        (area, vec![v.clone()])
    };
    // The secure fields, looked for while the compositor copies the pixels.
    let secure = async {
        if !args.redact_secure {
            return Ok(Vec::new());
        }
        let a = ctx.a11y().await.map_err(|e| e.recode(Code::ScreenshotFailed))?;
        let mut rects = Vec::new();
        for v in &targets {
            let t = SECURE_SEARCH_TIMEOUT.min(deadline.saturating_duration_since(Instant::now()));
            rects.extend(within(t, "the secure-field search", secure_rects_wayland(ctx, &a, v)).await.map_err(|e| {
                let m = format!("cannot find the secure fields to redact: {}", e.message);
                Error::new(if e.code == Code::Timeout { Code::Timeout } else { Code::ScreenshotFailed }, m)
            })?);
        }
        Ok::<_, Error>(rects)
    };
    let local = Rect::new(area.x - output.x, area.y - output.y, area.width, area.height);
    let capture = capture_worker().run(move |_| wayland::screencopy::capture_region(local, deadline));
    let capture = async { capture.await.and_then(|r| r) };
    let (secure, cap) = tokio::join!(secure, capture);
    let cap = cap?;
    let secure = secure?;
    let t_cap = t0.elapsed();
    let img = capture::Image { width: cap.width, height: cap.height, origin: (area.x, area.y), rgb: cap.rgb, method: "wlr-screencopy".into() };
    let mut rects = args.redact.clone();
    let n_secure = secure.len();
    rects.extend(secure);
    let (img, redacted, scale, format) = finish_and_write(img, &args, rects, format, quality).await?;
    if crate::debug() {
        eprintln!(
            "deckhand-helper-linux: screenshot {}x{} via wlr-screencopy (capture {:.1} ms, total {:.1} ms, {n_secure} secure fields, {redacted} rects redacted)",
            img.width,
            img.height,
            t_cap.as_secs_f64() * 1e3,
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(ScreenshotResult {
        path: args.path,
        width: img.width,
        height: img.height,
        origin: Point { x: img.origin.0, y: img.origin.1 },
        scale,
        method: img.method,
        redacted,
        popups: None,
        format: Some(format),
    })
}

// ---- end Wayland

/// The accessibility bus name of the application with this pid: the one an
/// earlier request found, when the bus daemon still says that name belongs
/// to `pid` (one call: unique names are never reused, so the name is still
/// that process's connection), else the registry's listing (`apps::find_by_pid`,
/// a call per application).
pub async fn bus_of(ctx: &Ctx, a: &A11y, pid: u32) -> Result<String> {
    let guess = ctx.resolved.borrow().bus(pid);
    if let Some(bus) = guess {
        if a.pid_of(&bus).await.ok() == Some(pid) {
            return Ok(bus);
        }
        ctx.resolved.borrow_mut().forget_bus(pid);
    }
    let bus = apps::find_by_pid(a, pid).await?;
    ctx.resolved.borrow_mut().set_bus(pid, &bus);
    Ok(bus)
}

pub async fn get_tree(ctx: &Ctx, args: GetTreeArgs) -> Result<GetTreeResult> {
    let target = super::window::of_pid(ctx, args.pid, args.window_id)?;
    let w = &target.info;
    // Every call this read makes into the app is counted and bounded.
    let a = ctx.a11y().await?.budgeted(atspi::REQUEST_CALL_BUDGET);
    let bus = bus_of(ctx, &a, args.pid).await?;
    // Straight to the application when it offers its own socket (no bus
    // daemon relaying each of the read's hundreds of calls).
    let a = atspi::direct::attach(&a, &bus, args.pid).await;
    // On Wayland the frame is matched in the app's own (surface) coordinates
    // and the bounds moved to the screen by the surface origin; nothing is
    // clipped (the surface's coordinates are not the screen's).
    let clip = if target.content.is_none() { Some(w.bounds) } else { None };
    let lim = tree::Limits { max_depth: args.max_depth, max_children: args.max_children, max_nodes: args.max_nodes, clip };
    let t = tree::read_tree_placed(&a, &bus, &w.title, w.bounds, &lim, target.content).await?;
    {
        // Remember the frame and every returned node's object: later
        // element_action / hit_test requests use them as guesses.
        let mut c = ctx.resolved.borrow_mut();
        c.set_frame(args.pid, w.id, FrameEntry { bus: bus.clone(), frame: t.frame.clone(), by_name: t.frame_by_name, name: t.frame_name.clone() });
        c.replace_tree(&bus, &t.frame, t.nodes.iter().zip(&t.objects).map(|(n, o)| (n.path.clone(), o.clone(), n.bounds)));
        c.set_view(&bus, &t.frame, t.view);
    }
    Ok(GetTreeResult { nodes: t.nodes, truncated: t.truncated, source: t.source.into(), calls: Some(t.calls) })
}

/// Most secure fields one window's Collection query returns. A window with
/// this many also gets the showing-tree search, and both are blacked out.
const MAX_SECURE_PER_WINDOW: i32 = 200;

/// Longest the secure-field search of one window may take (within the
/// request's deadline): a hung application fails the screenshot (closed).
const SECURE_SEARCH_TIMEOUT: Duration = Duration::from_millis(2000);

/// Secure-field rectangles of one window (empty when its app is not on the
/// accessibility bus: nothing there can be known). `bus`: the app's bus
/// name when already looked up (None: not on the bus); `pid`: its process
/// (a direct connection is checked to lead to it).
///
/// Collection.GetMatches(role password text) on the window's frame finds
/// every one, also those the showing-only tree walk never reaches (GTK 3
/// says a GtkViewport scrolled down by more than its height is not showing,
/// so the walk prunes everything in it): each one's screen box
/// (`collection::locate_secure`, which also places fields GTK gives no
/// position) is blacked out wherever it touches the image (a box reaching
/// outside the visible part of a scrolled pane over-redacts, never under).
/// Without Collection, or where Collection is not safe to ask (a node
/// managing its descendants): the showing-tree search (`tree::secure_bounds_in`).
async fn secure_rects_for(a: &A11y, bus: Option<&str>, pid: Option<u32>, title: &str, bounds: Rect) -> Result<Vec<Rect>> {
    let Some(bus) = bus else { return Ok(Vec::new()) };
    // Straight to the application when it offers its own socket.
    let a = match pid {
        Some(pid) => atspi::direct::attach(a, bus, pid).await,
        None => a.clone(),
    };
    let a = &a;
    // One Cache.GetItems answers three questions: the frame candidates (the
    // application root's children), whether Collection may be asked (no node
    // managing its descendants: `collection::model_is_safe`) and, when not,
    // the showing tree searched instead.
    let mut cached = tree::model_from_cache_joined(a, bus).await;
    let cands = tree::frame_candidates(a, bus, cached.as_ref()).await?;
    let frame = match tree::match_frame(a, bus, &cands, title, bounds).await {
        Ok(f) => f,
        Err(e) if e.code == Code::WindowNotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let safe = collection::model_is_safe(cached.as_ref());
    let via_tree = |cached: Option<tree::Model>| {
        let frame = frame.clone();
        async move {
            match tree::secure_bounds_in(a, bus, cached, &frame, bounds).await {
                Ok(r) => Ok(r),
                Err(e) if e.code == Code::WindowNotFound => Ok(Vec::new()),
                Err(e) => Err(e),
            }
        }
    };
    // Collection would visit every cell of a huge table: the bounded tree search instead.
    if !safe {
        return via_tree(cached.take()).await;
    }
    match collection::secure_rects(a, bus, &frame, MAX_SECURE_PER_WINDOW).await? {
        Some((mut rects, found)) => {
            if found >= MAX_SECURE_PER_WINDOW as usize {
                rects.extend(via_tree(cached.take()).await?);
            }
            if crate::debug() {
                eprintln!("deckhand-helper-linux: redact_secure {title:?}: {found} password fields via Collection, {} rects {rects:?}", rects.len());
            }
            Ok(rects)
        }
        None => via_tree(cached.take()).await,
    }
}

/// The thread screenshots capture and encode on, with its own X connection
/// (made on first use, made again after it broke). One per runtime thread,
/// never dropped.
fn capture_worker() -> &'static Worker<Option<X>> {
    thread_local! {
        static CAPTURE: &'static Worker<Option<X>> = Box::leak(Box::new(Worker::new("capture")));
    }
    CAPTURE.with(|w| *w)
}

/// Run X work on the capture thread's connection, connecting first when
/// there is none; a broken connection is dropped (the next job reconnects).
fn own_x<T>(slot: &mut Option<X>, f: impl FnOnce(&mut X) -> Result<T>) -> Result<T> {
    if slot.is_none() {
        *slot = Some(X::connect()?);
    }
    let r = f(slot.as_mut().expect("connected above"));
    if let Err(e) = &r {
        if e.message.starts_with("X connection") {
            *slot = None;
        }
    }
    r
}

/// The contract's least max_width.
const MIN_MAX_WIDTH: u32 = 16;

/// Crop to the region, black out, then scale, and write the file (X11 and
/// Wayland captures alike): the result describes the image file. Encoding is
/// CPU work too: on the capture thread.
async fn finish_and_write(img: capture::Image, args: &ScreenshotArgs, rects: Vec<Rect>, format: ImageFormat, quality: u32) -> Result<(capture::Image, u32, f64, ImageFormat)> {
    let (region, max_width, path) = (args.region, args.max_width, args.path.clone());
    capture_worker()
        .run(move |_| {
            let (mut img, redacted, scale) = capture::finish_image(img, region, &rects, max_width)?;
            let format = super::image_format::write_image(&path, &img.rgb, img.width, img.height, format, quality)?;
            img.rgb = Vec::new();
            Ok::<_, Error>((img, redacted, scale, format))
        })
        .await?
}

pub async fn screenshot(ctx: &Ctx, args: ScreenshotArgs, deadline: Instant) -> Result<ScreenshotResult> {
    let t0 = Instant::now();
    if !std::path::Path::new(&args.path).is_absolute() {
        return Err(Error::invalid("path must be absolute"));
    }
    if let Some(mw) = args.max_width {
        if mw < MIN_MAX_WIDTH {
            return Err(Error::invalid(format!("max_width must be at least {MIN_MAX_WIDTH}, not {mw}")));
        }
    }
    if args.region.is_some_and(|r| r.width == 0 || r.height == 0) {
        return Err(Error::invalid("region is empty").with("reason", "region-outside-window"));
    }
    // ---- issue 14: screenshot options (checked before anything is captured)
    let format = args.format.unwrap_or(ImageFormat::Png);
    let quality = super::image_format::quality_of(args.quality)?;
    // ---- end screenshot options
    if let Some(sock) = sway_socket()? {
        return screenshot_wayland(ctx, &sock, args, format, quality, deadline).await;
    }
    // Which windows' secure fields must be blacked out.
    let targets: Vec<windows::WinInfo> = if !args.redact_secure {
        Vec::new()
    } else if args.window_id == 0 {
        ctx.with_x(|x| {
            let ids = windows::stacking_ids(x)?;
            Ok(windows::describe(x, &ids)?.into_iter().filter(|w| !w.minimized && w.pid.is_some()).collect())
        })?
    } else {
        vec![ctx.with_x(|x| windows::window_info(x, args.window_id))?]
    };
    let a11y = if targets.iter().any(|w| w.pid.is_some()) { Some(ctx.a11y().await) } else { None };
    let secure = async {
        let mut rects = Vec::new();
        if let Some(a) = &a11y {
            let a = a.as_ref().map_err(|e| e.clone().recode(Code::ScreenshotFailed))?;
            // Each window's application on the bus (None: not on it, nothing
            // there can be known): one window's by its pid (`bus_of`), every
            // window's (window_id 0) from one registry listing.
            let t = SECURE_SEARCH_TIMEOUT.min(deadline.saturating_duration_since(Instant::now()));
            let buses: HashMap<u32, String> = if let [w] = targets.as_slice() {
                match w.pid {
                    None => HashMap::new(),
                    Some(pid) => match within(t, "the accessibility registry", bus_of(ctx, a, pid)).await {
                        Ok(bus) => HashMap::from([(pid, bus)]),
                        Err(e) if e.code == Code::AppNotFound => HashMap::new(),
                        Err(e) => return Err(e),
                    },
                }
            } else {
                within(t, "the accessibility registry", apps::list(a, false)).await?.into_iter().filter_map(|e| e.pid.map(|p| (p, e.bus))).collect()
            };
            let futs = targets.iter().filter_map(|w| {
                let bus = buses.get(&w.pid?).map(String::as_str);
                let t = SECURE_SEARCH_TIMEOUT.min(deadline.saturating_duration_since(Instant::now()));
                Some(within(t, "the secure-field search", secure_rects_for(a, bus, w.pid, &w.title, w.bounds)))
            });
            for r in futures_util::future::join_all(futs).await {
                rects.extend(r.map_err(|e| {
                    let m = format!("cannot find the secure fields to redact: {}", e.message);
                    Error::new(if e.code == Code::Timeout { Code::Timeout } else { Code::ScreenshotFailed }, m)
                })?);
            }
        }
        Ok::<_, Error>(rects)
    };
    // Ask AT-SPI and capture at the same time, the capture on its own thread
    // and X connection (`capture_worker`): the runtime keeps sending and
    // answering accessibility calls meanwhile (the secure-field search, and a
    // tree read of the same observation: its application is the bottleneck,
    // and must not sit idle while the helper copies pixels).
    let window_id = args.window_id;
    let capture = capture_worker().run(move |slot| {
        own_x(slot, |x| {
            let step = if window_id == 0 { capture::capture_root(x).map(capture::Step::Done) } else { capture::capture_window(x, window_id, deadline) }?;
            let mut img = match step {
                capture::Step::Done(img) => img,
                // A window just redirected while covered: poll (this thread
                // only) until the application repainted it.
                capture::Step::Wait(mut p) => loop {
                    std::thread::sleep(Duration::from_millis(8));
                    match p.poll(x) {
                        Ok(false) => continue,
                        Ok(true) => break p.finish(x),
                        Err(e) => {
                            p.abandon(x);
                            return Err(e);
                        }
                    }
                },
            };
            // The app's open menus and lists are windows of their own: put
            // them on the window's image (before redaction, which covers them
            // too). The whole screen has them already.
            let popups = if window_id == 0 { None } else { Some(capture::composite_popups(x, window_id, &mut img)?) };
            Ok((img, popups))
        })
    });
    let capture = async { capture.await.and_then(|r| r) };
    let (secure, img) = tokio::join!(secure, capture);
    let (img, popups) = img?;
    let secure = secure?;
    let t_cap = t0.elapsed();
    let mut rects = args.redact.clone();
    let n_secure = secure.len();
    rects.extend(secure);
    let (img, redacted, scale, format) = finish_and_write(img, &args, rects, format, quality).await?;
    if crate::debug() {
        eprintln!(
        "deckhand-helper-linux: screenshot {}x{} via {} (capture {:.1} ms, total {:.1} ms, {} secure fields, {redacted} rects redacted)",
        img.width,
        img.height,
        img.method,
        t_cap.as_secs_f64() * 1e3,
        t0.elapsed().as_secs_f64() * 1e3,
        n_secure
    );
    }
    Ok(ScreenshotResult {
        path: args.path,
        width: img.width,
        height: img.height,
        origin: Point { x: img.origin.0, y: img.origin.1 },
        scale,
        method: img.method,
        redacted,
        popups,
        format: Some(format),
    })
}

/// Longest a focused_element query may take (within the request's deadline).
const FOCUS_QUERY_TIMEOUT: Duration = Duration::from_millis(2000);

/// focused_element: the accessible of app `pid` holding the keyboard focus,
/// read live in one bounded query (Collection.GetMatches(state focused) on
/// the application root; see `collection::focused_objects` for the
/// fallbacks), not from the showing-only tree: a focused password field
/// scrolled out of view is found too. All the app's windows are searched,
/// active or not. Several candidates (a toolkit that leaves a stale focused
/// state): the one in the active frame, else the first in tree order.
pub async fn focused_element(ctx: &Ctx, args: FocusedElementArgs, deadline: Instant) -> Result<FocusedElementResult> {
    let t = FOCUS_QUERY_TIMEOUT.min(deadline.saturating_duration_since(Instant::now()));
    let until = Instant::now() + t;
    let a = ctx.a11y().await?.budgeted(atspi::REQUEST_CALL_BUDGET);
    let found = within(t, "the focused_element query", async {
        let bus = apps::find_by_pid(&a, args.pid).await?;
        let (objs, source) = collection::focused_objects(&a, &bus, until).await?;
        if objs.is_empty() {
            return Ok(None);
        }
        // Each candidate's chain up to its frame, and each frame's states.
        let chains = futures_util::future::join_all(objs.iter().map(|o| collection::chain_to_frame(&a, &bus, o))).await;
        let active_bit = collection::state_bit(::atspi::State::Active);
        let frame_states = futures_util::future::join_all(chains.iter().map(|c| async {
            match c.as_ref().and_then(|c| c.first()) {
                Some(f) => a.call::<_, Vec<u32>>(&bus, f, atspi::I_ACCESSIBLE, "GetState", &()).await.map(|w| tree::states_from_words(&w)).unwrap_or(0),
                None => 0,
            }
        }))
        .await;
        let pick = frame_states.iter().position(|s| s & active_bit != 0).unwrap_or(0);
        let obj = objs[pick].clone();
        let chain = chains[pick].clone();
        // The path from the frame: each level's position in its parent's
        // GetChildren list (what get_tree's paths are).
        let path = match &chain {
            Some(c) if c.len() > 1 => actions::positions_in_children(&a, &bus, c).await.ok().flatten(),
            Some(_) => Some(Vec::new()), // the frame itself is focused
            None => None,
        };
        let parent = chain.as_ref().and_then(|c| c.len().checked_sub(2).map(|i| c[i].clone())).unwrap_or_default();
        let index = path.as_ref().and_then(|p| p.last().copied()).unwrap_or(0) as i32;
        let (item, identifier) = tree::describe_with_id(&a, &bus, &obj, &parent, index).await?;
        // Bounds, actions (and the value, never for a secure field: read_value
        // refuses, wire_node drops it) as get_tree's nodes have them.
        let mut details = tree::fetch_details(&a, &bus, &[&item]).await.pop().unwrap_or_default();
        details.identifier = identifier;
        // Path unknown (the climb did not reach the application root, or a
        // level was not in its parent's children): [] as for the frame. The
        // orchestrator reads only secure, role, states, name and bounds here.
        let node = tree::wire_node(path.unwrap_or_default(), &item, details);
        if crate::debug() {
            eprintln!("deckhand-helper-linux: focused_element pid {}: {} candidates via {source:?}", args.pid, objs.len());
        }
        Ok::<_, Error>(Some((bus, chain.and_then(|c| c.first().cloned()), node)))
    })
    .await?;
    let Some((bus, frame, node)) = found else {
        return Ok(FocusedElementResult { window_id: None, node: None });
    };
    // The window of the frame: the pid's window that resolve_frame would
    // match to this frame (title, ties by extents). Its view moves the
    // node's bounds to the screen where the app's coordinates are not the
    // screen's (a native Wayland window: surface-relative); a node whose
    // window is not found there has no bounds (they could not be placed).
    let mut node = node;
    let window_id = match frame {
        None => None,
        Some(frame) => {
            let wins = super::window::of_app(ctx, args.pid).unwrap_or_default();
            let rest = deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(500));
            let found = within(rest, "matching the frame to a window", async {
                let cands = tree::frame_candidates(&a, &bus, None).await?;
                for w in &wins {
                    if let Ok(f) = tree::match_frame(&a, &bus, &cands, &w.info.title, w.info.bounds).await {
                        if f == frame {
                            let offset = if w.content.is_some() { Some(w.view(&a, &bus, &frame).await.offset) } else { None };
                            return Ok(Some((w.info.id, offset)));
                        }
                    }
                }
                Ok(None)
            })
            .await
            .unwrap_or(None);
            if let Some((_, Some((dx, dy)))) = found {
                node.bounds = node.bounds.map(|b| Rect::new(b.x.saturating_add(dx), b.y.saturating_add(dy), b.width, b.height));
            } else if found.is_none() && super::window::sway_socket().ok().flatten().is_some() {
                node.bounds = None;
            }
            found.map(|(id, _)| id)
        }
    };
    Ok(FocusedElementResult { window_id, node: Some(node) })
}

pub async fn hit_test(ctx: &Ctx, args: HitTestArgs) -> Result<HitTestResult> {
    use super::window::At;
    let w = match super::window::at_point(ctx, args.x, args.y)? {
        At::Nothing => return Ok(HitTestResult { pid: None, window_id: None, node: None }),
        At::Window(w) => w,
    };
    // The same descent as point_click's (frame guesses checked live, GTK 4's
    // window-relative coordinates, a Wayland surface's), with the node's
    // value instead of the ancestors' names.
    let node = match w.info.pid {
        None => None,
        // An open menu on Wayland is an xdg_popup, not a view in sway's tree:
        // where it lies is not known, and the point may be on it rather than
        // on the window's node below. No node then (also when it cannot be
        // told), never the node beneath.
        Some(pid) if w.content.is_some() && wayland_menu_open(ctx, pid).await? != Some(false) => None,
        Some(pid) => super::point_click::chain_at(ctx, pid, &w, args.x, args.y, actions::AtWants { names: false, value: true }).await?.and_then(|f| f.hit.node),
    };
    Ok(HitTestResult { pid: w.info.pid, window_id: Some(w.info.id), node })
}

/// Whether app `pid` has a menu open (`collection::menu_open`); an app not on
/// the accessibility bus has none to tell of.
pub(crate) async fn wayland_menu_open(ctx: &Ctx, pid: u32) -> Result<Option<bool>> {
    let a = ctx.a11y().await?;
    match bus_of(ctx, &a, pid).await {
        Ok(bus) => collection::menu_open(&a, &bus).await,
        Err(e) if e.code == Code::AppNotFound => Ok(Some(false)),
        Err(e) => Err(e),
    }
}
