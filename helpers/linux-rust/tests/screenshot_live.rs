//! Live: the release helper (this package's binary) against a real X
//! server. Starts a private Xvfb, maps a window whose pixels are a known
//! pattern (its background pixmap: the server itself paints it, so no
//! client has to answer Expose), and asks the helper for screenshots with
//! `region` and `max_width` (capability `screenshot.scale`): the PNG's size,
//! origin and scale, and its pixels where the pattern says what they must be.
//!
//! Skipped (with a line on stderr) when Xvfb is not installed. No D-Bus or
//! AT-SPI is needed: nothing here asks for secure-field redaction.

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt as _, CreateGCAux, CreateWindowAux, Rectangle, WindowClass};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// Ends the process it holds when dropped (only that pid): SIGTERM (Xvfb
/// then removes its socket and lock file), SIGKILL if still there after 3 s.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(3) {
                if let Ok(Some(_)) = self.0.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn which(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

/// A private Xvfb on a free display, and a connection to it.
fn xvfb() -> Option<(Killed, String, RustConnection, usize)> {
    if !which("Xvfb") {
        eprintln!("SKIPPED: no Xvfb on PATH (package xvfb)");
        return None;
    }
    for n in 170..230 {
        if std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() || std::path::Path::new(&format!("/tmp/.X{n}-lock")).exists() {
            continue;
        }
        let display = format!(":{n}");
        let child = Command::new("Xvfb")
            .args([display.as_str(), "-screen", "0", "640x480x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        let mut server = Killed(child);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(15) {
            if let Ok(Some(_)) = server.0.try_wait() {
                break; // lost the race for this display: try the next one
            }
            if let Ok((conn, screen)) = x11rb::connect(Some(&display)) {
                return Some((server, display, conn, screen));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    panic!("could not start Xvfb on any display :170-:229");
}

const WIN: (i16, i16, u16, u16) = (50, 40, 200, 100);
const WHITE: [u8; 3] = [255, 255, 255];
const BLACK: [u8; 3] = [0, 0, 0];
const GREEN: [u8; 3] = [0, 255, 0];
const RED: [u8; 3] = [255, 0, 0];

/// The window's pattern at window pixel (x, y): white, a black stripe at
/// x 100..104, a green block 20..60 x 20..60, a red block 140..180 x 60..100.
fn pattern(x: u32, y: u32) -> [u8; 3] {
    if (100..104).contains(&x) {
        BLACK
    } else if (20..60).contains(&x) && (20..60).contains(&y) {
        GREEN
    } else if (140..180).contains(&x) && (60..100).contains(&y) {
        RED
    } else {
        WHITE
    }
}

/// Map a top-level window showing `pattern` (as its background pixmap).
fn pattern_window(conn: &RustConnection, screen: usize) -> u32 {
    let s = &conn.setup().roots[screen];
    let (root, depth) = (s.root, s.root_depth);
    let pix = conn.generate_id().unwrap();
    conn.create_pixmap(depth, pix, root, WIN.2, WIN.3).unwrap();
    let gc = conn.generate_id().unwrap();
    conn.create_gc(gc, pix, &CreateGCAux::new().foreground(0xffffff)).unwrap();
    let rect = |x: i16, y: i16, w: u16, h: u16| Rectangle { x, y, width: w, height: h };
    conn.poly_fill_rectangle(pix, gc, &[rect(0, 0, WIN.2, WIN.3)]).unwrap();
    for (color, r) in [(0x000000u32, rect(100, 0, 4, WIN.3)), (0x00ff00, rect(20, 20, 40, 40)), (0xff0000, rect(140, 60, 40, 40))] {
        conn.change_gc(gc, &x11rb::protocol::xproto::ChangeGCAux::new().foreground(color)).unwrap();
        conn.poly_fill_rectangle(pix, gc, &[r]).unwrap();
    }
    let win = conn.generate_id().unwrap();
    conn.create_window(depth, win, root, WIN.0, WIN.1, WIN.2, WIN.3, 0, WindowClass::INPUT_OUTPUT, 0, &CreateWindowAux::new().background_pixmap(pix))
        .unwrap();
    conn.map_window(win).unwrap();
    conn.sync().unwrap();
    win
}

fn write_frame(w: &mut impl Write, v: &serde_json::Value) {
    let body = rmp_serde::to_vec_named(v).unwrap();
    w.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    w.write_all(&body).unwrap();
    w.flush().unwrap();
}

fn read_frame(r: &mut impl Read) -> serde_json::Value {
    let mut head = [0u8; 4];
    r.read_exact(&mut head).expect("a frame from the helper");
    let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
    r.read_exact(&mut body).unwrap();
    let v = rmpv::decode::read_value(&mut &body[..]).unwrap();
    serde_json::to_value(&v).unwrap()
}

struct Png {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Png {
    fn read(path: &str) -> Png {
        let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        buf.truncate(info.buffer_size());
        Png { width: info.width, height: info.height, rgb: buf }
    }
    fn at(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }
}

#[test]
fn screenshot_region_and_max_width_on_a_real_x_server() {
    let Some((_server, display, conn, screen)) = xvfb() else { return };
    let win = pattern_window(&conn, screen);
    let dir = std::env::temp_dir().join(format!("deckhand-shot-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let child = Command::new(env!("CARGO_BIN_EXE_deckhand-helper-linux"))
        .env("DISPLAY", &display)
        // No session bus: nothing here needs AT-SPI.
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("AT_SPI_BUS_ADDRESS")
        .env("XDG_RUNTIME_DIR", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the helper");
    let mut helper = Killed(child);
    let mut stdin = helper.0.stdin.take().unwrap();
    let mut stdout = helper.0.stdout.take().unwrap();
    let hello = read_frame(&mut stdout);
    assert_eq!(hello["protocol"], serde_json::json!([2, 3])); // issue 15: click (2.3)
    assert_eq!(hello["capabilities"]["screenshot.scale"]["supported"], true, "{}", hello["capabilities"]["screenshot.scale"]);

    let mut id = 0;
    let mut shot = |extra: serde_json::Value| -> (serde_json::Value, Option<Png>) {
        id += 1;
        let path = dir.join(format!("shot-{id}.png")).to_string_lossy().into_owned();
        let mut args = serde_json::json!({"window_id": win, "path": path, "redact_secure": false, "redact": []});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        write_frame(&mut stdin, &serde_json::json!({"type": "request", "id": id, "op": "screenshot", "deadline_ms": 10000, "args": args}));
        let r = read_frame(&mut stdout);
        assert_eq!(r["id"], id);
        let png = (r["ok"] == true).then(|| Png::read(&path));
        if let Some(p) = &png {
            // The result describes the PNG exactly.
            assert_eq!((r["result"]["width"].as_u64(), r["result"]["height"].as_u64()), (Some(p.width as u64), Some(p.height as u64)), "{r}");
        }
        (r, png)
    };
    let origin = |r: &serde_json::Value| (r["result"]["origin"]["x"].as_i64().unwrap(), r["result"]["origin"]["y"].as_i64().unwrap());
    let scale = |r: &serde_json::Value| r["result"]["scale"].as_f64().unwrap();

    // The whole window, native size: exactly the pattern.
    let (r, png) = shot(serde_json::json!({}));
    let png = png.unwrap_or_else(|| panic!("{r}"));
    assert_eq!((png.width, png.height, origin(&r), scale(&r)), (200, 100, (50, 40), 1.0));
    for y in 0..100 {
        for x in 0..200 {
            assert_eq!(png.at(x, y), pattern(x, y), "pixel ({x}, {y})");
        }
    }

    // max_width 100: half size; pixel i shows screen origin + i / 0.5.
    let (r, png) = shot(serde_json::json!({"max_width": 100}));
    let png = png.unwrap_or_else(|| panic!("{r}"));
    assert_eq!((png.width, png.height, origin(&r), scale(&r)), (100, 50, (50, 40), 0.5));
    assert!(r["result"]["method"].as_str().unwrap().ends_with("+box-scale"), "{r}");
    assert_eq!(png.at(20, 20), GREEN, "window (40, 40)");
    assert_eq!(png.at(50, 10), BLACK, "the stripe at window x 100..104 is image x 50..52");
    assert_eq!(png.at(51, 10), BLACK);
    assert_eq!(png.at(49, 10), WHITE);
    assert_eq!(png.at(80, 40), RED, "window (160, 80)");
    // Area averaging at an edge: image x 29 covers window x 58..60 (green) .. 60 (white): all green;
    // image x 30 covers 60..62: white.
    assert_eq!(png.at(29, 15), GREEN);
    assert_eq!(png.at(30, 15), WHITE);

    // Never up.
    let (r, png) = shot(serde_json::json!({"max_width": 1000}));
    assert_eq!((png.unwrap().width, scale(&r)), (200, 1.0));

    // region: screen 130..190 x 50..80 = window 80..140 x 10..40; clipped
    // to the window when it reaches out.
    let (r, png) = shot(serde_json::json!({"region": {"x": 130, "y": 50, "width": 60, "height": 30}}));
    let png = png.unwrap_or_else(|| panic!("{r}"));
    assert_eq!((png.width, png.height, origin(&r), scale(&r)), (60, 30, (130, 50), 1.0));
    for y in 0..30 {
        for x in 0..60 {
            assert_eq!(png.at(x, y), pattern(x + 80, y + 10), "region pixel ({x}, {y})");
        }
    }
    let (r, png) = shot(serde_json::json!({"region": {"x": 0, "y": 0, "width": 100, "height": 70}}));
    assert_eq!((png.unwrap().width, origin(&r)), (50, (50, 40)), "screen 0..100 x 0..70 clipped to the window: 50x30 at (50, 40)");
    assert_eq!(r["result"]["height"], 30);

    // region + max_width + redact: redaction first (the red block's screen
    // rect, 190..230 x 100..140), then the crop's scale.
    let (r, png) = shot(serde_json::json!({
        "region": {"x": 150, "y": 40, "width": 100, "height": 100},
        "max_width": 25,
        "redact": [{"x": 190, "y": 100, "width": 40, "height": 40}],
    }));
    let png = png.unwrap_or_else(|| panic!("{r}"));
    assert_eq!((png.width, png.height, origin(&r), scale(&r)), (25, 25, (150, 40), 0.25));
    assert_eq!(r["result"]["redacted"], 1);
    // Image pixel (ix, iy) covers screen 150 + 4 ix .. +4, 40 + 4 iy .. +4.
    assert_eq!(png.at(12, 20), BLACK, "screen (198, 120): the red block, redacted before scaling");
    assert_eq!(png.at(0, 0), BLACK, "screen 150..154: the stripe (window x 100..104)");
    assert_eq!(png.at(1, 0), WHITE);
    assert_eq!(png.at(24, 24), WHITE);

    // A region outside the window, a too small max_width: INVALID_ARGUMENTS.
    let (r, png) = shot(serde_json::json!({"region": {"x": 300, "y": 300, "width": 10, "height": 10}}));
    assert!(png.is_none());
    assert_eq!(r["error"]["code"], "INVALID_ARGUMENTS", "{r}");
    let (r, _) = shot(serde_json::json!({"max_width": 8}));
    assert_eq!(r["error"]["code"], "INVALID_ARGUMENTS", "{r}");

    // ---- issue 14: screenshot options (2.2: format and quality)
    // The default names its format; JPEG and WebP files are what their
    // headers say, at the size the result says; quality changes the size.
    let (r, _) = shot(serde_json::json!({}));
    assert_eq!(r["result"]["format"], "png", "{r}");
    let mut encoded = |format: &str, quality: u32| -> (serde_json::Value, Vec<u8>) {
        id += 1;
        let path = dir.join(format!("shot-{id}.{format}")).to_string_lossy().into_owned();
        let args = serde_json::json!({"window_id": win, "path": path, "redact_secure": false, "redact": [], "region": {"x": 60, "y": 50, "width": 180, "height": 80}, "format": format, "quality": quality});
        write_frame(&mut stdin, &serde_json::json!({"type": "request", "id": id, "op": "screenshot", "deadline_ms": 10000, "args": args}));
        let r = read_frame(&mut stdout);
        let bytes = if r["ok"] == true { std::fs::read(&path).unwrap() } else { Vec::new() };
        (r, bytes)
    };
    let (r, jpg) = encoded("jpeg", 90);
    assert_eq!((r["result"]["format"].as_str(), r["result"]["width"].as_u64(), r["result"]["height"].as_u64()), (Some("jpeg"), Some(180), Some(80)), "{r}");
    assert_eq!(&jpg[..3], &[0xFF, 0xD8, 0xFF]);
    let sof = jpg.windows(2).position(|p| p == [0xFF, 0xC0]).expect("a baseline JPEG");
    assert_eq!((u16::from_be_bytes([jpg[sof + 7], jpg[sof + 8]]), u16::from_be_bytes([jpg[sof + 5], jpg[sof + 6]])), (180, 80));
    let (_, jpg_low) = encoded("jpeg", 10);
    assert!(jpg_low.len() < jpg.len(), "quality 10: {} bytes, 90: {}", jpg_low.len(), jpg.len());
    let (r, webp) = encoded("webp", 90);
    assert_eq!(r["result"]["format"], "webp", "{r}");
    assert_eq!((&webp[..4], &webp[8..16]), (&b"RIFF"[..], &b"WEBPVP8 "[..]));
    assert_eq!((u16::from_le_bytes([webp[26], webp[27]]) & 0x3fff, u16::from_le_bytes([webp[28], webp[29]]) & 0x3fff), (180, 80));
    let (r, _) = encoded("webp", 0);
    assert_eq!(r["error"]["code"], "INVALID_ARGUMENTS", "quality 0: {r}");
    // ---- end screenshot options

    drop(stdin);
    let _ = helper.0.wait();
    std::fs::remove_dir_all(&dir).unwrap();
}
