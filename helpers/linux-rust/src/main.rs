//! deckhand-helper-linux: the Linux platform helper of deckhand.
//!
//! Speaks the wire protocol on stdin/stdout (u32 big-endian length + one
//! msgpack map per frame); stderr carries diagnostics only. Exits 0 when
//! stdin closes, 2 on a malformed frame (the supervisor restarts it).

mod atspi;
mod error;
mod ops;
mod procfs;
mod wayland;
mod wire;
mod x11;

use ops::{send_frame, Ctx, Out};
use std::collections::{BTreeMap, HashSet};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use wire::codec::{decode_body, encode_frame, peek_head, read_frame, FrameError, MAX_FRAME_BYTES};
use wire::messages::{parse_incoming, Capability, Hello, HelperInfo, Incoming, Limits, CAPABILITY_KEYS, PROTOCOL};

/// How each capability was verified. "live" = run by us against a real
/// desktop (Xvfb + openbox + AT-SPI + GTK 3 apps, see README.md).
fn capability(key: &str, ext: Option<x11::Extensions>, session_bus: bool) -> Capability {
    let live = |note: &str| Capability { supported: true, verified: "live".into(), note: Some(note.into()).filter(|n: &String| !n.is_empty()) };
    let no_x = |what: &str| Capability { supported: false, verified: "live".into(), note: Some(format!("no X display at startup: {what}")) };
    let x = ext.is_some();
    match key {
        "permissions" => live(""),
        "list_apps" => live("X11 EWMH windows + AT-SPI registry, joined to /proc"),
        "list_windows" if x => live("EWMH _NET_CLIENT_LIST_STACKING (root children without a WM)"),
        "list_windows" => no_x("no windows"),
        "get_tree" => live("AT-SPI; path = child indices from the window's frame accessible"),
        "get_tree.cache_bulk" => live("org.a11y.atspi.Cache.GetItems + pipelined calls; falls back to a pipelined walk"),
        "screenshot" if x => live("Composite NameWindowPixmap + MIT-SHM, PNG"),
        "screenshot" => no_x("no capture"),
        "screenshot.occluded" => match ext {
            Some(e) if e.composite.is_some() => live("Composite redirection of the window's frame"),
            _ => Capability { supported: false, verified: "live".into(), note: Some("no Composite extension".into()) },
        },
        "screenshot.popups" if x => live("the app's mapped override-redirect windows (menus, combo lists, tooltips; owner by _NET_WM_PID, else WM_TRANSIENT_FOR / WM_CLIENT_LEADER, else the same X client) composited over the window image bottom to top, clipped to the window, before redaction; read from the screen, or from their own Composite pixmap when another app's window covers them. Run live on GTK 3, GTK 4, Qt 5, LibreOffice (gtk3), Chromium and Firefox menus; a GTK 4 popover's shadow margin is black, as Xvfb without a compositing manager shows it"),
        "screenshot.popups" => no_x("no capture"),
        "screenshot.scale" if x => live("region: crop to the screen rectangle intersected with the window (none -> INVALID_ARGUMENTS); max_width: area averaging (box filter, exact integer weights), never up, one factor for both axes (max_width / width, height rounded down), after redaction; width, height, origin and scale describe the PNG (pixel i shows screen point origin + i / scale). Run against a real X server by tests/screenshot_live.rs"),
        "screenshot.scale" => no_x("no capture"),
        // ---- issue 14: screenshot options
        "screenshot.formats" if x => live("format png (default; the png crate, fast compression), jpeg (jpeg-encoder: baseline JFIF, optimised Huffman tables, chroma 4:2:0 below quality 90) or webp (lossy VP8 by libwebp's WebPEncodeRGB, built from the source vendored in libwebp-sys; at most 16383 pixels a side); quality 1-100, default 80, for jpeg and webp (ignored for png); encoded after crop, redaction and scaling, written 0600 then renamed into place; `format` in the result names what was written. Run live on the GTK 3 fixture, gtk3-widget-factory, Chromium and Qt 5 (featherpad) by test/live/image-options.test.ts, the files decoded by ImageMagick"),
        "screenshot.formats" => no_x("no capture"),
        // ---- end screenshot options
        "screenshot.redact_secure" => live("every password-text accessible of the window (Collection.GetMatches, shown or not; the showing-tree search without Collection) blacked out where it touches the image"),
        "hit_test" => live("stacking order + Component.GetAccessibleAtPoint"),
        "action.click" => live("Action.DoAction of the first press-like action chosen by name (press, click, activate, toggle, jump; check/uncheck/select on check boxes and radio buttons), never another action; none -> ACTION_UNSUPPORTED listing the advertised names"),
        "action.set_value" => live("EditableText.SetTextContents or Value.CurrentValue, read back (differs -> VERIFICATION_FAILED); neither interface -> ACTION_UNSUPPORTED reason no-editable-text"),
        "action.type_text" => live("EditableText.InsertText at the caret (selection deleted first)"),
        "action.select_text" => live("Text.SetSelection / AddSelection, read back"),
        "action.focus" => live("Component.GrabFocus"),
        "action.scroll_into_view" => Capability {
            supported: true,
            verified: "unverified".into(),
            note: Some("Component.ScrollTo; GTK 3 does not implement it (the app answers false -> ACTION_FAILED)".into()),
        },
        "action.secondary" => live("Action by advertised name"),
        "input.pointer" | "input.keyboard" => match ext {
            Some(e) if e.xtest.is_some() => live("XTest: moves the real pointer / focus (foreground input); a click's button is held until the app read the press (_NET_WM_USER_TIME within two clock ticks around it), 12 ms at most"),
            Some(_) => Capability { supported: false, verified: "live".into(), note: Some("no XTEST extension".into()) },
            None => no_x("no input"),
        },
        "input.focus_guard" => match ext {
            Some(e) if e.xtest.is_some() => live("GetInputFocus -> top-level client (WM_STATE) + _NET_WM_PID / WM_TRANSIENT_FOR before each key down, tap and 8-character chunk; activation by _NET_ACTIVE_WINDOW"),
            Some(_) => Capability { supported: false, verified: "live".into(), note: Some("no XTEST extension".into()) },
            None => no_x("no input"),
        },
        "input.pointer_guard" => match ext {
            Some(e) if e.xtest.is_some() => live("TranslateCoordinates(root) -> the topmost mapped root child at the point (the server's own hit test) -> its client (WM_STATE) before every motion, press, release and scroll notch; override-redirect windows only with the target's _NET_WM_PID"),
            Some(_) => Capability { supported: false, verified: "live".into(), note: Some("no XTEST extension".into()) },
            None => no_x("no input"),
        },
        "focused_element" => live("org.a11y.atspi.Collection.GetMatches(state FOCUSED) on the application root (falls back to Cache.GetItems, then a bounded walk); not limited to showing nodes"),
        "settle" => live("signals from the app's unique name on the accessibility bus (match rule on the sender) until none came for quiet_ms, bounded by max_ms and the deadline; the wait opens and closes with a round trip to the app (2.3, issue 15: what it sent before answering is counted at once; an event in flight at the close reopens the window); object:children-changed / property-change / state-changed / text-changed are registered with the registry for the wait and dropped 1 s after the last settle, so changes finished before the settle began are not seen"),
        "set_accessibility" if session_bus => live("org.a11y.Status.IsEnabled via org.freedesktop.DBus.Properties.Set on the session bus"),
        "set_accessibility" => Capability { supported: false, verified: "live".into(), note: Some("no session D-Bus reachable at startup".into()) },
        "watch_user_input" => match ext {
            Some(e) if e.xinput.is_some() => Capability {
                supported: true,
                verified: "unverified".into(),
                note: Some("XInput2 raw events, XTest devices ignored; the filtering was run live, real devices were not (Xvfb has none)".into()),
            },
            _ => Capability { supported: false, verified: "live".into(), note: Some("no XInput 2".into()) },
        },
        // ---- issue 13: app lifecycle
        "list_installed" => live("Desktop Entry files of $XDG_DATA_HOME/applications then $XDG_DATA_DIRS/applications (spec defaults), earlier dirs winning by desktop file id (subdir/ -> '-'); Type=Application with an Exec only, Hidden=true and a TryExec not found left out; Exec split per the spec's quoting, field codes removed; at most 5000 files of 256 KiB"),
        "launch" => live("fork+setsid+fork+execve, no shell: the app in a session of its own, stdin/stdout/stderr /dev/null, no other descriptor, not a descendant of the helper (a small watcher process reaps it and reports its exit for launch_status); QT_ACCESSIBILITY=1, QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1, GNOME_ACCESSIBILITY=1 and GIO_LAUNCHED_DESKTOP_FILE added, DECKHAND_* dropped; --force-renderer-accessibility for Chromium-family executables; on a Wayland session with the helper as root and the compositor as another user (SO_PEERCRED of its Wayland socket), the app runs as that user (its uid and gid, no supplementary groups, the compositor's HOME, USER and LOGNAME); exec failure -> LAUNCH_FAILED reason not-found / not-executable / bad-format / exec-failed"),
        "window_op" if x => live("activate: EWMH _NET_ACTIVE_WINDOW (source: pager), the input focus read back; restore: MapWindow (ICCCM iconic -> normal), then _NET_ACTIVE_WINDOW, shown and not hidden read back; close: WM_DELETE_WINDOW when WM_PROTOCOLS lists it, else _NET_CLOSE_WINDOW, the window's end awaited (2 s); never XKillClient or a signal"),
        "window_op" => no_x("no window manager to ask"),
        // ---- end lifecycle

        // ---- issue 13: clipboard
        "clipboard.get" if x => live("GetSelectionOwner + ConvertSelection to the helper's own window (TARGETS, then UTF8_STRING, STRING, TEXT; INCR read, cut at 8 MiB), each answer awaited at most 2 s; owner pid from _NET_WM_PID, the client leader's, or a managed window of the same X client (null for a client without one, e.g. xclip); never converts text whose targets carry x-kde-passwordManagerHint"),
        "clipboard.get" => no_x("no selections"),
        "clipboard.set" if x => live("a detached owner: this binary re-executed with --own-selection, the text on its stdin, forked into its own session; it takes the selection at a server timestamp, confirms it with GetSelectionOwner and serves TARGETS, TIMESTAMP, UTF8_STRING, text/plain;charset=utf-8, TEXT, STRING, text/plain (no MULTIPLE, no INCR: at most 4 MiB) until SelectionClear; text nil: SetSelectionOwner None"),
        "clipboard.set" => no_x("no selections"),
        "clipboard.paste" => match ext {
            Some(e) if e.xtest.is_some() => live("focus guard first (activation once), then the previous text read (not when marked secret), the selection owned in-process, the chord sent by XTest under the guard, requests served until one was answered with the text and 150 ms passed quiet (or wait_ms), then the previous text handed to a detached owner (or the selection cleared)"),
            Some(_) => Capability { supported: false, verified: "live".into(), note: Some("no XTEST extension".into()) },
            None => no_x("no input"),
        },
        // ---- end clipboard

        // ---- issue 13: menus
        "menu_tree" => live("the window's menu bar(s) (a bounded search of its on-screen nodes) or one node's subtree, walked whether its menus are open or not (menus, popup menus and the items holding them; separators left out), bounded by max_nodes, max_depth and a call budget; shortcut from Action.GetKeyBinding (ATK's accelerator field; Qt 5's single field, a lone mnemonic dropped). Run live on GTK 3 (fixture, mousepad) and Qt 5 (fixture, featherpad); a window whose accessible is not among the app's top-level accessibles (Qt 5 popups) has no roots"),
        "menu_close" => live("Selection.ClearSelection on the menu shell holding the opener (GTK 3 menu bars and menus), else the opener's show-menu action again (Qt 5 toggles its menu); then waits up to 1 s for the items to leave the screen. Run live on GTK 3 and Qt 5"),
        // ---- end menus

        // ---- issue 15: click
        "point_click" => match ext {
            Some(e) if e.xtest.is_some() => live("the pointer guard's window test (TranslateCoordinates -> client; listed, or an override-redirect popup of the pid), then hit_test's pipelined GetAccessibleAtPoint descent with the ancestors' names in the same batch; holds (sends nothing) on a name that may hold a hold word (ASCII substring; any non-ASCII name), on no node when words are given, or on a chain other than `expect`; else Action.DoAction of a press-like node (element_action click) or XTest move + click + pointer restore under the guard, the button held until the app read the press (its _NET_WM_USER_TIME set to a time between two ticks of a clock property of ours around the press), 12 ms at most. Run live on the GTK 3 fixture, gtk3-widget-factory and the Qt 5 fixture by test/live/coordinate-click.test.ts"),
            Some(_) => Capability { supported: false, verified: "live".into(), note: Some("no XTEST extension".into()) },
            None => no_x("no input"),
        },
        // ---- end click
        _ => Capability { supported: false, verified: "unverified".into(), note: None },
    }
}

// ---- issue 19: the Wayland backend's capabilities
/// What the Wayland backend offers: windows and trees when the compositor is
/// sway, the AT-SPI-only ops (the X11 backend's own answers, which need no
/// display), and an honest refusal of everything else, saying why.
fn capability_wayland(key: &str, backend: &wayland::Backend, session_bus: bool) -> Capability {
    let live = |note: &str| Capability { supported: true, verified: "live".into(), note: Some(note.into()) };
    let no = |note: String| Capability { supported: false, verified: "live".into(), note: Some(note) };
    let sway = matches!(backend, wayland::Backend::Sway { .. });
    let missing = match backend {
        wayland::Backend::Wayland { missing } => missing.clone(),
        _ => String::new(),
    };
    let not_yet = |what: &str| no(format!("Wayland: {what}: not implemented by this helper yet (issue 19)"));
    match key {
        "permissions" | "get_tree.cache_bulk" | "settle" | "set_accessibility" | "list_installed" | "launch" => capability(key, None, session_bus),
        "list_apps" if sway => live("AT-SPI registry + sway IPC views (window_count), joined to /proc"),
        "list_apps" => live("AT-SPI registry joined to /proc (no compositor window list: window_count 0)"),
        "list_windows" if sway => live(
            "sway IPC get_tree: window_id = the sway container id; bounds = the view's content (rect moved by window_rect); z_index 0 the bottom: \
             hidden views (other workspaces, inactive tabs, scratchpad = minimized), then tiled views in tree order (the focused one last), then floating views in sway's order, \
             then fullscreen ones (sway has no global z-order). Popups are no views (xdg_popups): when one app's windows are asked for with popups true, its \
             top-level accessibles that are shown menus (Chromium's context menu) are listed as popup windows above them (popup true; the id names \
             the parent view and the accessible's place, wayland/popups.rs; bounds in the parent's surface coordinates moved to the screen), and the \
             element routes reach them by that id. Run live on sway 1.7 by test/live/wayland-helper.test.ts and (popups) matrix-wayland.test.ts \
             menus.chromium.context",
        ),
        "get_tree" if sway => live(
            "AT-SPI, native Wayland windows: the frame matched in the app's surface coordinates, extents moved to the screen by the surface origin \
             (sway's content origin less the client-side shadow margins, read from the frame and its children's extents); an Xwayland window \
             by X11's rules (its extents are X root = sway layout coordinates at scale 1). Run live on sway 1.7 (GTK 3 native and under Xwayland) by \
             test/live/wayland-helper.test.ts",
        ),
        "list_windows" | "get_tree" => no(format!("Wayland without a compositor window list: {missing}")),
        "screenshot" if sway => live(
            "wlr-screencopy of the window's content region of the screen (window_id 0: the output), cursor not drawn, spoken on the Wayland socket \
             (memfd wl_shm buffer); sway 1.7 has no per-window capture, so a window another shown window overlaps is refused: SCREENSHOT_FAILED \
             reason covered (details.covering_window_id); not shown: reason not-shown; an Xwayland window's region like any view's; \
             the part off the output is left out (origin and size say what was captured). PNG. Run live on sway 1.7 by test/live/wayland-helper.test.ts",
        ),
        "screenshot.redact_secure" if sway => live(
            "every password-text accessible of the window (the X11 search, in the app's surface coordinates, moved to the screen by the surface origin) \
             blacked out where it touches the image; window_id 0: every shown native window's. Run live (GTK 3 password entry) by test/live/wayland-helper.test.ts",
        ),
        "screenshot.occluded" if sway => no("Wayland: sway 1.7 has no per-window capture (wlr-screencopy copies outputs and regions): a covered window is refused, reason covered".into()),
        // ---- issue 19: element routes and window ops (ops/window.rs, wayland/window_ops.rs)
        "screenshot.scale" | "screenshot.formats" if sway => live(
            "the X11 path's finish-and-write step after the wlr-screencopy capture: max_width scaling (area average), PNG / JPEG / WebP with quality. \
             Run live on sway 1.7 by test/live/wayland-elements.test.ts (sizes, decodable files close to the PNG)",
        ),
        "screenshot.popups" if sway => no("Wayland: xdg_popup menus are not views in sway's tree and sway 1.7 cannot capture a surface by itself; a window's screenshot is its content region of the screen (an open menu over it shows only where it lies inside that region)".into()),
        // GTK 3 has no Component.ScrollTo: not run live on either backend.
        "action.scroll_into_view" if sway => Capability { verified: "unverified".into(), ..capability(key, None, session_bus) },
        k if (k.starts_with("action.") || k == "focused_element") && sway => live(&format!(
            "{}; the window from sway's tree (container id), its frame matched in the app's surface coordinates as get_tree does (an Xwayland window's \
             in screen coordinates, as on X11). Run live on sway 1.7 (GTK 3 native and under Xwayland) by test/live/wayland-elements.test.ts",
            capability(k, None, session_bus).note.unwrap_or_default()
        )),
        "hit_test" if sway => live(
            "the topmost shown sway view whose frame holds the point, the pointer guard's test (none: pid and window null; sway's \
             title bar: its pid and window, no node), \
             then GetAccessibleAtPoint descended in the app's surface coordinates (the point less the surface origin; an Xwayland view's: the screen's), \
             the node's bounds moved back to the screen; no node while the app has a menu open (an xdg_popup, not in sway's tree: the point may be on it). Run live on sway 1.7 (GTK 3) by test/live/wayland-elements.test.ts",
        ),
        k @ ("menu_tree" | "menu_close") if sway => live(&format!(
            "{}; on Wayland the window from sway's tree, its frame matched in the app's surface coordinates. Run live on sway 1.7 (GTK 3) by \
             test/live/wayland-elements.test.ts",
            capability(k, None, session_bus).note.unwrap_or_default()
        )),
        "window_op" if sway => live(
            "sway IPC: activate `[con_id=N] focus`, the view holding sway's focus read back; restore: a scratchpad (minimized) view shown with \
             `[con_id=N] scratchpad show` (floating, current workspace) then `focus`, shown and focused read back; close `[con_id=N] kill` \
             (xdg_toplevel.close: the app's own close, never a signal), the view's end awaited (2 s); an Xwayland view is closed by X11's rule, \
             never sway's kill (which kills an X client without WM_DELETE_WINDOW): WM_DELETE_WINDOW sent to its X window on Xwayland's $DISPLAY \
             when its WM_PROTOCOLS has it, else ACTION_UNSUPPORTED reason xwayland-no-wm-delete (no X display: WINDOW_NOT_FOUND reason \
             xwayland-window); done false when the window is still there after 2 s (a GTK 3 app under Xwayland closed every time run alone, \
             and twice not within 2 s under the full live suite's load). Run live on sway 1.7 by test/live/wayland-elements.test.ts",
        ),
        // ---- end element routes
        k if k.starts_with("screenshot") => not_yet("wlr-screencopy capture (screenshot.scale, screenshot.formats, screenshot.popups: the X11 path's steps after capture are not run live on Wayland yet)"),
        "input.keyboard" if sway => live(
            "the helper's own virtual keyboard (zwp_virtual_keyboard_v1, kept for the helper's life) with a keymap it generates: one key per keysym the \
             input needs (any Unicode character or key name, whatever the layout), Shift/Control/Alt/Super with their modifier_map, the modifier state sent \
             with each change; the helper's first input waits 500 ms once for the apps to bind the new keyboard. Held keys released on every exit. Run live on \
             sway 1.7 (GTK 3, native Wayland) by test/live/wayland-input.test.ts",
        ),
        "input.pointer" if sway => live(
            "the helper's own virtual pointer (zwlr_virtual_pointer_v1): absolute motion over the output layout (sway get_outputs), buttons held 12 ms \
             per click (Wayland shows no client's reading of a press), wheel notches (axis_discrete). The pointer is never put back: Wayland lets no client \
             read its position (sway 1.7's IPC neither), so a moved pointer is reported pointer_restored false. Run live on sway 1.7 (GTK 3) by \
             test/live/wayland-input.test.ts",
        ),
        "input.focus_guard" if sway => live(
            "sway IPC get_tree: the focused view must be the target's container before each key down, tap and 8-character chunk (a dialog of the \
             target is refused: sway's IPC has no xdg_toplevel parent); activation by `[con_id=N] focus`, read back until focused. Run live on sway 1.7 \
             by test/live/wayland-input.test.ts",
        ),
        "input.pointer_guard" if sway => live(
            "sway IPC get_tree: the topmost shown view whose frame (content, borders, title bar) holds the point (fullscreen, then floating in sway's \
             order, then tiled) must be one of the target's before every motion, press, release and scroll notch; a point on no view is refused. Popups \
             and layer-shell surfaces are not in sway's tree: a point over one is judged by the view below. Run live on sway 1.7 by \
             test/live/wayland-input.test.ts",
        ),
        k if k.starts_with("input.") => no(format!("Wayland: {}", if missing.is_empty() { "not supported".into() } else { format!("input needs sway: {missing}") })),
        "point_click" if sway => live(
            "the input pointer guard's verdict from sway's tree (the topmost shown view's frame must be one of `windows`), \
             then hit_test's descent in the app's surface coordinates (no node while the app has a menu open: its xdg_popup is not in sway's tree), \
             the hold words and `expect` as on X11; a press-like node pressed through accessibility, anything else a virtual-pointer click under the \
             guard (pointer_restored false: Wayland lets no client read the pointer). Run live on sway 1.7 (GTK 3) by test/live/wayland-elements.test.ts",
        ),
        // ---- issue 19: the Wayland clipboard (wayland/data_control.rs, wayland/clipboard.rs)
        "clipboard.get" if sway => live(
            "wlr-data-control (zwlr_data_control_manager_v1; version 2 for the primary selection): the seat's selection offer and its mime types \
             (the targets), the text read through a pipe (text/plain;charset=utf-8, then UTF8_STRING, text/plain, STRING, TEXT; cut at 8 MiB), the owner's \
             answer awaited at most 2 s; never read when the types carry x-kde-passwordManagerHint. Wayland names no owner: owner_pid is null and \
             owner_window is the number of the selection this helper's device saw (a change between the two requests shows as another number); \
             the focus is sway's focused view. A compositor without the protocol: ACTION_UNSUPPORTED reason no-data-control. \
             Run live on sway 1.7 against wl-copy and a logging owner by test/live/matrix-wayland.test.ts (wayland.clipboard.*)",
        ),
        "clipboard.set" if sway => live(
            "a detached owner (this binary with --own-selection, the text on its stdin, forked into its own session) whose wlr-data-control source offers \
             text/plain;charset=utf-8, text/plain, UTF8_STRING, STRING and TEXT, confirmed when the compositor relays that offer back, serving each send \
             (5 s a reader) until cancelled; text nil: set_selection(null). Run live on sway 1.7 against wl-paste by test/live/matrix-wayland.test.ts",
        ),
        "clipboard.paste" if sway => live(
            "the focus guard (sway's focused view), the previous selection read (not a secret's), a wlr-data-control source of the text made the selection \
             and confirmed, the chord through the virtual keyboard under the guard, the target's sends served until 150 ms quiet, then the previous text \
             back through a detached owner (or the selection cleared). Run live on sway 1.7 (GTK 3 native) by test/live/matrix-wayland.test.ts",
        ),
        // ---- end Wayland clipboard
        "point_click" => not_yet("point_click needs sway"),
        k if k.starts_with("action.") || k == "hit_test" || k == "menu_tree" || k == "menu_close" || k == "focused_element" => {
            not_yet("the window's frame and screen coordinates for this op (get_tree has them; the element routes do not yet)")
        }
        "window_op" => not_yet("window activation / close through sway IPC"),
        k if k.starts_with("clipboard.") => no(format!("Wayland: the clipboard ops need sway (its focused view for the focus checks): {missing}")),
        "watch_user_input" if sway => live(
            "org_kde_kwin_idle on the seat (a 50 ms idle timeout: `resumed` is the seat's next input after 50 ms of quiet), on a connection and a thread \
             of its own; input while this helper's own input runs or within 150 ms after it is taken as its own; any other input counts (another \
             deckhand's or wtype's included: the kill switch errs on the side of pausing); input within 50 ms of the seat's last input is not seen \
             apart from it. A compositor without the protocol: ACTION_UNSUPPORTED reason no-idle-protocol. Run live on sway 1.7 by \
             test/live/wayland-input.test.ts (wtype reported, the helper's own typing not)",
        ),
        "watch_user_input" => no(format!("Wayland: watching input needs sway: {missing}")),
        _ => Capability { supported: false, verified: "unverified".into(), note: None },
    }
}
// ---- end Wayland

fn hello() -> Hello {
    let backend = wayland::backend();
    let ext = if !backend.is_wayland() && std::env::var("DISPLAY").map(|d| !d.is_empty()).unwrap_or(false) {
        x11::X::connect().ok().map(|x| x.ext)
    } else {
        None
    };
    let bus = session_bus_reachable();
    let capabilities: BTreeMap<String, Capability> = CAPABILITY_KEYS
        .iter()
        .map(|k| (k.to_string(), if backend.is_wayland() { capability_wayland(k, backend, bus) } else { capability(k, ext, bus) }))
        .collect();
    Hello {
        kind: "hello".into(),
        protocol: PROTOCOL,
        helper: HelperInfo {
            name: "deckhand-helper-linux".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            platform: "linux".into(),
            backend: backend.name().into(),
        },
        capabilities,
        limits: Limits { max_frame_bytes: MAX_FRAME_BYTES as u64 },
    }
}

/// Whether the session D-Bus socket accepts a connection (checked without
/// the D-Bus handshake: hello must not wait on a bus). Non-unix transports
/// are not probed and count as reachable.
fn session_bus_reachable() -> bool {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixStream};
    let addresses = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .filter(|a| !a.is_empty())
        .or_else(|| std::env::var("XDG_RUNTIME_DIR").ok().map(|d| format!("unix:path={d}/bus")));
    let Some(addresses) = addresses else { return false };
    addresses.split(';').any(|a| {
        let Some((transport, params)) = a.split_once(':') else { return false };
        if transport != "unix" {
            return true;
        }
        let param = |key: &str| params.split(',').filter_map(|kv| kv.split_once('=')).find(|(k, _)| *k == key).map(|(_, v)| unescape(v));
        if let Some(path) = param("path") {
            UnixStream::connect(path).is_ok()
        } else if let Some(name) = param("abstract") {
            SocketAddr::from_abstract_name(name.as_bytes()).and_then(|sa| UnixStream::connect_addr(&sa)).is_ok()
        } else {
            true
        }
    })
}

/// D-Bus address values are %-escaped.
fn unescape(v: &str) -> String {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(n) = std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(n);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// DECKHAND_HELPER_DEBUG set (non-empty, not "0"): per-request timing and
/// other success diagnostics on stderr. Failures are always logged.
pub fn debug() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("DECKHAND_HELPER_DEBUG").is_ok_and(|v| !v.is_empty() && v != "0"))
}

enum Msg {
    Request { id: u64, op: String, deadline_ms: u64, args: rmpv::Value },
    /// A request frame above the size limit, skipped unread: answered with
    /// an error (its id and op were found in its first bytes).
    Oversized { id: u64, op: String, len: usize },
    Eof,
    Malformed(String),
}

fn main() {
    // ---- issue 13: clipboard
    // The detached selection owner (ops/clipboard.rs): before anything starts a thread.
    let args: Vec<std::ffi::OsString> = std::env::args_os().take(3).collect();
    if args.get(1).is_some_and(|a| a == "--own-selection") {
        std::process::exit(ops::clipboard::own_selection_main(&args));
    }
    // ---- end clipboard
    // ---- issue 19: the Wayland desktop's seat devices (wayland/devices.rs)
    if args.get(1).is_some_and(|a| a == "--seat-devices") {
        std::process::exit(wayland::devices::hold_seat_devices());
    }
    // ---- end Wayland
    die_with_parent();
    std::process::exit(run());
}

/// The helper lives no longer than the process that started it (deckhand),
/// however that ends: the kernel SIGKILLs it when its parent dies
/// (PR_SET_PDEATHSIG), which reaches a stopped process too. Without it, a
/// helper that deckhand had SIGSTOPped to kill its tree (supervisor.ts
/// killHelperTree: stop the group, walk it, SIGKILL) stayed stopped for
/// ever when deckhand itself was SIGKILLed in between: the end of stdin
/// cannot wake a stopped process, and it kept its X and bus connections
/// (found 2026-12-03: a stopped helper left after each full test run). Not
/// for the detached selection owner and the seat devices above: they are
/// meant to outlive their parent. The parent may be gone already: then exit.
fn die_with_parent() {
    // SAFETY: getppid and prctl(PR_SET_PDEATHSIG) have no memory effects.
    unsafe {
        let parent = libc::getppid();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
        if libc::getppid() != parent {
            std::process::exit(0);
        }
    }
}

fn run() -> i32 {
    let out: Out = Arc::new(Mutex::new(Box::new(std::io::stdout())));
    send_frame(&out, &encode_frame(&hello()));

    let cancelled: Arc<Mutex<HashSet<u64>>> = Arc::new(Mutex::new(HashSet::new()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let cancelled_r = cancelled.clone();
    let reader = std::thread::Builder::new().name("stdin".into()).spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            let msg = match read_frame(&mut input) {
                Ok(None) => Msg::Eof,
                Err(FrameError::Skipped { len, head }) => match peek_head(&head) {
                    (Some(kind), Some(id), op) if kind == "request" => Msg::Oversized { id, op: op.unwrap_or_default(), len },
                    (kind, id, _) => {
                        // Nothing to answer (no request id before the big
                        // value): the orchestrator's own timeout covers it.
                        eprintln!(
                            "deckhand-helper-linux: skipped a frame of {len} bytes (limit {MAX_FRAME_BYTES}; type {kind:?}, id {id:?}): no request id to answer"
                        );
                        continue;
                    }
                },
                Err(e) => Msg::Malformed(e.to_string()),
                Ok(Some(body)) => match decode_body(&body).map_err(|e| e.to_string()).and_then(|v| parse_incoming(&v)) {
                    Err(e) => Msg::Malformed(e),
                    Ok(Incoming::Cancel { id }) => {
                        if let Ok(mut s) = cancelled_r.lock() {
                            s.insert(id);
                        }
                        continue;
                    }
                    Ok(Incoming::Request { id, op, deadline_ms, args }) => Msg::Request { id, op, deadline_ms, args },
                },
            };
            let stop = !matches!(msg, Msg::Request { .. } | Msg::Oversized { .. });
            if tx.send(msg).is_err() || stop {
                return;
            }
        }
    });
    if let Err(e) = reader {
        eprintln!("deckhand-helper-linux: cannot start the stdin reader: {e}");
        return 1;
    }

    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("deckhand-helper-linux: cannot start the runtime: {e}");
            return 1;
        }
    };
    let ctx = Rc::new(Ctx::new(out.clone(), cancelled.clone()));
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        // ---- issue 15: warm start
        // Open the accessibility bus and the X connection while the
        // orchestrator is still loading (a one-shot CLI call spawns the helper
        // first): its first request then finds both ready instead of paying
        // the connections (5-10 ms cold) in the caller's wait. A failure here
        // is not cached: the first request that needs a connection tries again
        // and reports it.
        {
            let ctx = ctx.clone();
            tokio::task::spawn_local(async move {
                let _ = ctx.with_x(|_| Ok(()));
                // The session bus too (ctx.a11y finds the accessibility bus through it).
                let _ = ctx.a11y().await;
            });
        }
        // ---- end warm start
        let mut inflight = Vec::new();
        let mut seen: HashSet<u64> = HashSet::new();
        loop {
            match rx.recv().await {
                Some(Msg::Request { id, op, deadline_ms, args }) => {
                    if !seen.insert(id) {
                        eprintln!("deckhand-helper-linux: duplicate request id {id}: protocol breach");
                        return 2;
                    }
                    let ctx = ctx.clone();
                    inflight.retain(|h: &tokio::task::JoinHandle<()>| !h.is_finished());
                    inflight.push(tokio::task::spawn_local(async move {
                        let resp = ops::handle(&ctx, id, &op, deadline_ms, args).await;
                        send_frame(&ctx.out, &encode_frame(&resp));
                        if let Ok(mut s) = ctx.cancelled.lock() {
                            s.remove(&id); // a late cancel for a finished id is ignored
                        }
                    }));
                }
                Some(Msg::Oversized { id, op, len }) => {
                    if !seen.insert(id) {
                        eprintln!("deckhand-helper-linux: duplicate request id {id}: protocol breach");
                        return 2;
                    }
                    eprintln!("deckhand-helper-linux: {op} #{id}: request frame of {len} bytes exceeds the limit of {MAX_FRAME_BYTES}: skipped, refused");
                    send_frame(&ctx.out, &encode_frame(&ops::refuse_oversized(id, &op, len)));
                }
                Some(Msg::Malformed(e)) => {
                    eprintln!("deckhand-helper-linux: malformed frame: {e}; exiting with code 2");
                    return 2;
                }
                Some(Msg::Eof) | None => {
                    // stdin closed: let in-flight requests answer (each is bounded by its deadline).
                    for h in inflight {
                        let _ = h.await;
                    }
                    return 0;
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every capability key of the contract has an answer of its own (none
    /// falls through to "unsupported, unverified"), and the X-dependent ones
    /// are unsupported without a display.
    #[test]
    fn every_capability_key_is_answered() {
        let ext = x11::Extensions { composite: Some((0, 4)), shm: Some((1, 2)), xtest: Some((2, 2)), xinput: Some((2, 2)) };
        for k in CAPABILITY_KEYS {
            let c = capability(k, Some(ext), true);
            assert!(c.supported, "{k} unsupported with every extension");
            assert!(c.note.is_some() || *k == "permissions", "{k} has no note");
        }
        for k in ["input.pointer_guard", "input.focus_guard", "input.pointer", "input.keyboard"] {
            assert!(!capability(k, None, true).supported, "{k} without X");
        }
        assert!(capability("focused_element", None, true).supported, "focused_element needs no X");
    }

    /// On Wayland every key is answered with a note; with sway, windows and
    /// trees are supported and input, capture and the element routes are
    /// refused; without sway, windows and trees are refused naming what is
    /// missing.
    #[test]
    fn wayland_capabilities_are_honest() {
        let sway = wayland::Backend::Sway { socket: "/s".into() };
        let other = wayland::Backend::Wayland { missing: "SWAYSOCK is unset".into() };
        for k in CAPABILITY_KEYS {
            for b in [&sway, &other] {
                let c = capability_wayland(k, b, true);
                assert!(c.note.is_some() || *k == "permissions", "{k} has no note on {b:?}");
                let unverified = *k == "action.scroll_into_view" && matches!(b, wayland::Backend::Sway { .. });
                assert_eq!(c.verified, if unverified { "unverified" } else { "live" }, "{k}");
            }
        }
        for k in ["list_windows", "get_tree", "list_apps", "permissions", "settle", "launch"] {
            assert!(capability_wayland(k, &sway, true).supported, "{k} with sway");
        }
        assert!(capability_wayland("screenshot", &sway, true).supported && !capability_wayland("screenshot", &other, true).supported);
        assert!(!capability_wayland("screenshot.occluded", &sway, true).supported);
        for k in ["input.keyboard", "input.pointer", "input.focus_guard", "input.pointer_guard"] {
            assert!(capability_wayland(k, &sway, true).supported, "{k} with sway");
            assert!(!capability_wayland(k, &other, true).supported, "{k} without sway");
        }
        assert!(capability_wayland("point_click", &sway, true).supported && !capability_wayland("point_click", &other, true).supported);
        // The clipboard: wlr-data-control, with sway (its focused view is the focus checks' source).
        for k in ["clipboard.get", "clipboard.set", "clipboard.paste"] {
            let c = capability_wayland(k, &sway, true);
            assert!(c.supported && c.note.unwrap().contains("wlr-data-control"), "{k} with sway");
            assert!(!capability_wayland(k, &other, true).supported, "{k} without sway");
        }
        // The element routes, window ops and screenshot options: run live with sway only.
        for k in ["action.click", "action.set_value", "action.focus", "hit_test", "focused_element", "menu_tree", "menu_close", "window_op", "screenshot.formats", "screenshot.scale"] {
            let c = capability_wayland(k, &sway, true);
            assert!(c.supported && c.verified == "live", "{k} with sway");
            assert!(c.note.unwrap().contains("wayland-elements.test.ts"), "{k}");
            assert!(!capability_wayland(k, &other, true).supported, "{k} without sway");
        }
        assert!(!capability_wayland("screenshot.popups", &sway, true).supported);
        for k in ["list_windows", "get_tree"] {
            let c = capability_wayland(k, &other, true);
            assert!(!c.supported && c.note.unwrap().contains("SWAYSOCK is unset"), "{k}");
        }
    }
}
