//! Window capture: Composite (the window's own pixels even when covered),
//! read through MIT-SHM when the server offers it, else plain GetImage.
//! Pixels come back as packed RGB.

use super::{Shm, X};
use crate::error::{Code, Error, Result};
use crate::wire::messages::Rect;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::composite::{ConnectionExt as _, Redirect};
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, ImageOrder};

pub struct Image {
    pub width: u32,
    pub height: u32,
    /// Screen position of pixel (0,0).
    pub origin: (i32, i32),
    /// Packed RGB, width*height*3 bytes.
    pub rgb: Vec<u8>,
    pub method: String,
}

fn failed(msg: impl Into<String>) -> Error {
    Error::new(Code::ScreenshotFailed, msg)
}

pub fn free_shm(x: &X, seg: Shm) {
    let _ = x.conn.shm_detach(seg.seg);
    let _ = x.conn.flush();
    unsafe {
        libc::shmdt(seg.addr as *const libc::c_void);
    }
}

/// Make sure a shared segment of at least `size` bytes is attached.
fn ensure_shm(x: &mut X, size: usize) -> Result<()> {
    if let Some(s) = &x.shm_seg {
        if s.size >= size {
            return Ok(());
        }
    }
    if let Some(old) = x.shm_seg.take() {
        free_shm(x, old);
    }
    // Round up to 4 MiB to avoid reallocating for every slightly bigger window.
    let size = size.div_ceil(4 << 20) * (4 << 20);
    let shmid = unsafe { libc::shmget(libc::IPC_PRIVATE, size, libc::IPC_CREAT | 0o600) };
    if shmid < 0 {
        return Err(failed(format!("shmget: {}", std::io::Error::last_os_error())));
    }
    let addr = unsafe { libc::shmat(shmid, std::ptr::null(), 0) };
    if addr as isize == -1 {
        unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
        return Err(failed(format!("shmat: {}", std::io::Error::last_os_error())));
    }
    let seg = x.conn.generate_id()?;
    let attached = x.conn.shm_attach(seg, shmid as u32, false).map(|c| c.check());
    // The segment disappears once both sides detach.
    unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
    match attached {
        Ok(Ok(())) => {
            x.shm_seg = Some(Shm { addr: addr as *mut u8, size, seg });
            Ok(())
        }
        other => {
            unsafe { libc::shmdt(addr) };
            Err(failed(format!("MIT-SHM attach refused: {other:?}")))
        }
    }
}

/// Read a ZPixmap rectangle of a drawable into raw bytes (4 bytes per pixel).
fn read_raw(x: &mut X, drawable: u32, r: (i16, i16, u16, u16)) -> Result<(Vec<u8>, &'static str)> {
    let (px, py, w, h) = r;
    let need = w as usize * h as usize * 4;
    if x.ext.shm.is_some() && !x.shm_broken {
        match ensure_shm(x, need) {
            Ok(()) => {
                let seg = x.shm_seg.as_ref().unwrap();
                let (sid, addr) = (seg.seg, seg.addr);
                let reply = x
                    .conn
                    .shm_get_image(drawable, px, py, w, h, !0, ImageFormat::Z_PIXMAP.into(), sid, 0)?
                    .reply()
                    .map_err(|e| failed(format!("shm GetImage: {e}")))?;
                let size = (reply.size as usize).min(need);
                let data = unsafe { std::slice::from_raw_parts(addr, size) }.to_vec();
                return Ok((data, "shm"));
            }
            Err(e) => {
                eprintln!("deckhand-helper-linux: MIT-SHM unavailable, using GetImage: {}", e.message);
                x.shm_broken = true;
            }
        }
    }
    let reply = x
        .conn
        .get_image(ImageFormat::Z_PIXMAP, drawable, px, py, w, h, !0)?
        .reply()
        .map_err(|e| failed(format!("GetImage: {e}")))?;
    Ok((reply.data, "getimage"))
}

/// Convert 32-bit-per-pixel ZPixmap data to packed RGB (pixels missing
/// from a short `raw` stay black).
pub fn bgrx_to_rgb(raw: &[u8], width: u32, height: u32, lsb_first: bool) -> Vec<u8> {
    let n = width as usize * height as usize;
    let mut out = vec![0u8; n * 3];
    // Zipped exact chunks: no index arithmetic or bounds checks per pixel
    // (a 1366x741 window: 1 M pixels per screenshot).
    let pairs = out.chunks_exact_mut(3).zip(raw.chunks_exact(4));
    if lsb_first {
        for (o, px) in pairs {
            o.copy_from_slice(&[px[2], px[1], px[0]]);
        }
    } else {
        for (o, px) in pairs {
            o.copy_from_slice(&[px[1], px[2], px[3]]);
        }
    }
    out
}

/// `read_raw` straight to packed RGB: through MIT-SHM the pixels are
/// converted from the shared segment itself (no copy of the raw image).
fn read_rgb(x: &mut X, drawable: u32, r: (i16, i16, u16, u16), lsb: bool) -> Result<(Vec<u8>, &'static str)> {
    let (px, py, w, h) = r;
    let need = w as usize * h as usize * 4;
    if x.ext.shm.is_some() && !x.shm_broken && ensure_shm(x, need).is_ok() {
        let seg = x.shm_seg.as_ref().unwrap();
        let (sid, addr) = (seg.seg, seg.addr);
        let reply = x
            .conn
            .shm_get_image(drawable, px, py, w, h, !0, ImageFormat::Z_PIXMAP.into(), sid, 0)?
            .reply()
            .map_err(|e| failed(format!("shm GetImage: {e}")))?;
        let size = (reply.size as usize).min(need);
        // SAFETY: the segment is attached and at least `need` bytes long
        // (ensure_shm); the server finished writing it (the reply came).
        let raw = unsafe { std::slice::from_raw_parts(addr, size) };
        return Ok((bgrx_to_rgb(raw, w as u32, h as u32, lsb), "shm"));
    }
    let (raw, how) = read_raw(x, drawable, r)?;
    Ok((bgrx_to_rgb(&raw, w as u32, h as u32, lsb), how))
}

fn bpp_for_depth(x: &X, depth: u8) -> Option<u8> {
    x.conn.setup().pixmap_formats.iter().find(|f| f.depth == depth).map(|f| f.bits_per_pixel)
}

/// Check that shared-memory capture really works (attach + a 1x1 read).
pub fn capture_root_probe(x: &mut X) -> Result<()> {
    if x.shm_broken {
        return Err(failed("MIT-SHM failed earlier on this connection"));
    }
    ensure_shm(x, 4096)?;
    let seg = x.shm_seg.as_ref().map(|s| s.seg).unwrap_or(0);
    let root = x.root;
    x.conn
        .shm_get_image(root, 0, 0, 1, 1, !0, ImageFormat::Z_PIXMAP.into(), seg, 0)?
        .reply()
        .map_err(|e| failed(format!("shm GetImage: {e}")))?;
    Ok(())
}

/// Longest wait for an application to repaint after its first redirection.
fn redirect_wait_ms() -> u64 {
    std::env::var("DECKHAND_REDIRECT_WAIT_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(250)
}

/// Whether any part of a top-level frame is covered by a viewable sibling
/// above it, or lies off the screen (then its on-screen copy is incomplete).
pub fn covered_or_offscreen(x: &X, frame: u32) -> Result<bool> {
    let tree = x.conn.query_tree(x.root)?.reply()?;
    let Some(pos) = tree.children.iter().position(|&w| w == frame) else { return Ok(true) };
    let g = x.conn.get_geometry(frame)?.reply()?;
    let bw = 2 * g.border_width as u32;
    let me = Rect::new(g.x as i32, g.y as i32, g.width as u32 + bw, g.height as u32 + bw);
    let (sw, sh) = x.screen_size();
    if me.intersect(&Rect::new(0, 0, sw as u32, sh as u32)) != Some(me) {
        return Ok(true);
    }
    let above = &tree.children[pos + 1..];
    let mut cookies = Vec::with_capacity(above.len());
    for &w in above {
        cookies.push((x.conn.get_window_attributes(w)?, x.conn.get_geometry(w)?));
    }
    for (a, gc) in cookies {
        let (Ok(a), Ok(gg)) = (a.reply(), gc.reply()) else { continue };
        if a.map_state != x11rb::protocol::xproto::MapState::VIEWABLE || a.class == x11rb::protocol::xproto::WindowClass::INPUT_ONLY {
            continue;
        }
        let bw = 2 * gg.border_width as u32;
        let r = Rect::new(gg.x as i32, gg.y as i32, gg.width as u32 + bw, gg.height as u32 + bw);
        if r.intersect(&me).is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Capture the whole root window (window_id 0).
pub fn capture_root(x: &mut X) -> Result<Image> {
    let (w, h) = x.screen_size();
    let depth = x.root_depth;
    if bpp_for_depth(x, depth) != Some(32) {
        return Err(failed(format!("unsupported root depth {depth} (need 32 bits per pixel)")));
    }
    let root = x.root;
    let lsb = x.conn.setup().image_byte_order == ImageOrder::LSB_FIRST;
    let (rgb, how) = read_rgb(x, root, (0, 0, w, h), lsb)?;
    Ok(Image { width: w as u32, height: h as u32, origin: (0, 0), rgb, method: format!("root+{how}") })
}

pub enum Step {
    Done(Image),
    /// The window was just redirected while covered: poll until it repainted.
    Wait(Pending),
}

pub struct Pending {
    pixmap: u32,
    rect: (i16, i16, u16, u16),
    before: Vec<u8>,
    last: (Vec<u8>, &'static str),
    changed_at: Option<Instant>,
    cap: Instant,
    origin: (i32, i32),
    lsb: bool,
}

impl Pending {
    /// One read of the backing pixmap; true once the repaint has landed
    /// (pixels changed, then 15 ms more) or the wait is over.
    pub fn poll(&mut self, x: &mut X) -> Result<bool> {
        let now = Instant::now();
        if now + Duration::from_millis(10) >= self.cap {
            return Ok(true);
        }
        let raw = read_raw(x, self.pixmap, self.rect)?;
        if let Some(t) = self.changed_at {
            self.last = raw;
            return Ok(now >= t + Duration::from_millis(15));
        }
        if raw.0 != self.before {
            self.changed_at = Some(now);
        }
        self.last = raw;
        Ok(false)
    }

    pub fn finish(self, x: &mut X) -> Image {
        let _ = x.conn.free_pixmap(self.pixmap);
        let _ = x.conn.flush();
        let (w, h) = (self.rect.2 as u32, self.rect.3 as u32);
        Image { width: w, height: h, origin: self.origin, rgb: bgrx_to_rgb(&self.last.0, w, h, self.lsb), method: format!("composite+{}", self.last.1) }
    }

    pub fn abandon(self, x: &mut X) {
        let _ = x.conn.free_pixmap(self.pixmap);
        let _ = x.conn.flush();
    }
}

/// Capture one window's own pixels (client area, no WM frame), even when
/// other windows cover it.
pub fn capture_window(x: &mut X, win: u32, deadline: Instant) -> Result<Step> {
    let info = super::windows::window_info(x, win)?;
    if !info.viewable {
        return Err(failed("the window is not viewable (minimized or unmapped)").with("window_id", win));
    }
    let (w, h) = (info.bounds.width as u16, info.bounds.height as u16);
    if w == 0 || h == 0 {
        return Err(failed("the window has no area"));
    }
    let lsb = x.conn.setup().image_byte_order == ImageOrder::LSB_FIRST;
    let frame = super::windows::toplevel_frame(x, win)?;

    if x.ext.composite.is_some() {
        let mut first = false;
        if !x.redirected.contains(&frame) {
            x.conn
                .composite_redirect_window(frame, Redirect::AUTOMATIC)?
                .check()
                .map_err(|e| failed(format!("Composite redirect: {e}")))?;
            x.redirected.insert(frame);
            first = true;
        }
        let fgeom = x.conn.get_geometry(frame)?.reply()?;
        if bpp_for_depth(x, fgeom.depth) != Some(32) {
            return Err(failed(format!("unsupported window depth {}", fgeom.depth)));
        }
        let off = x.conn.translate_coordinates(win, frame, 0, 0)?.reply()?;
        let bw = fgeom.border_width as i16;
        let rect = (off.dst_x + bw, off.dst_y + bw, w, h);
        let pixmap = x.conn.generate_id()?;
        x.conn
            .composite_name_window_pixmap(frame, pixmap)?
            .check()
            .map_err(|e| failed(format!("Composite NameWindowPixmap: {e}")))?;
        let origin = (info.bounds.x, info.bounds.y);
        if !first {
            // Redirected by an earlier capture: the backing pixmap holds the
            // window's own current pixels.
            let res = read_rgb(x, pixmap, rect, lsb);
            let _ = x.conn.free_pixmap(pixmap);
            let _ = x.conn.flush();
            let (rgb, how) = res?;
            return Ok(Step::Done(Image { width: w as u32, height: h as u32, origin, rgb, method: format!("composite+{how}") }));
        }
        let res = read_raw(x, pixmap, rect);
        match res {
            Ok(first_read) if covered_or_offscreen(x, frame).unwrap_or(true) => {
                // The fresh backing pixmap holds what was on screen, including
                // whatever covered the window; the application repaints those
                // parts after its Expose. The caller polls (shared-memory
                // reads are cheap) until the pixels change, without blocking.
                let cap = (Instant::now() + Duration::from_millis(redirect_wait_ms())).min(deadline);
                return Ok(Step::Wait(Pending {
                    pixmap,
                    rect,
                    before: first_read.0.clone(),
                    last: first_read,
                    changed_at: None,
                    cap,
                    origin,
                    lsb,
                }));
            }
            Ok(raw) => {
                let p = Pending { pixmap, rect, before: Vec::new(), last: raw, changed_at: None, cap: Instant::now(), origin, lsb };
                return Ok(Step::Done(p.finish(x)));
            }
            Err(e) => {
                let _ = x.conn.free_pixmap(pixmap);
                let _ = x.conn.flush();
                return Err(e);
            }
        }
    }

    // No Composite: only what is visible on screen is right.
    let geom = x.conn.get_geometry(win)?.reply()?;
    if bpp_for_depth(x, geom.depth) != Some(32) {
        return Err(failed(format!("unsupported window depth {}", geom.depth)));
    }
    let (rgb, how) = read_rgb(x, win, (0, 0, w, h), lsb)?;
    Ok(Step::Done(Image { width: w as u32, height: h as u32, origin: (info.bounds.x, info.bounds.y), rgb, method: format!("window+{how}") }))
}

/// Longest wait for a popup covered by another app's window to repaint
/// after it was redirected to read its own pixels (synchronous: rare).
const POPUP_REPAINT_WAIT: Duration = Duration::from_millis(100);

/// Composite over a window's image every viewable popup of the window's app
/// (open menu, combo box list, tooltip: override-redirect windows, which
/// the window's own pixels never include) that overlaps the image, bottom
/// to top. Returns how many were composited.
///
/// Clipped to the window image: the image keeps the window's origin and
/// size, so its pixels map to the window's (and its accessibility tree's)
/// coordinates exactly as without popups; the part of a menu hanging out of
/// the window is cut at the window's edge.
///
/// A popup with nothing of another app above it is read from the root
/// (what the screen shows there is its pixels, or those of the app's popups
/// above it, which are composited next anyway). One under another app's
/// window is read from its own Composite backing pixmap (redirected for the
/// read, then released); without Composite it is left out. A popup that
/// vanished meanwhile is left out.
pub fn composite_popups(x: &mut X, win: u32, img: &mut Image) -> Result<u32> {
    use x11rb::protocol::xproto::{MapState, WindowClass};
    let st = super::windows::stack(x)?;
    let pid = match st.managed.iter().find(|w| w.id == win) {
        Some(w) => w.pid,
        None => super::windows::window_info(x, win)?.pid,
    };
    let img_rect = Rect::new(img.origin.0, img.origin.1, img.width, img.height);
    let mine: Vec<&super::windows::Popup> =
        st.popups.iter().filter(|p| st.same_app(x, p, win, pid) && p.info.bounds.intersect(&img_rect).is_some()).collect();
    if mine.is_empty() {
        return Ok(0);
    }
    let lsb = x.conn.setup().image_byte_order == ImageOrder::LSB_FIRST;
    let (sw, sh) = x.screen_size();
    let screen = Rect::new(0, 0, sw as u32, sh as u32);
    let root_ok = bpp_for_depth(x, x.root_depth) == Some(32);
    // What else is above the lowest of them: another app's window (or popup)
    // there hides part of it on screen.
    let ours: std::collections::HashSet<u32> = mine.iter().map(|p| p.info.id).collect();
    let lowest = mine[0].root_pos;
    let mut cookies = Vec::new();
    for (pos, &w) in st.root_children.iter().enumerate().skip(lowest + 1) {
        if !ours.contains(&w) {
            cookies.push((pos, x.conn.get_window_attributes(w)?, x.conn.get_geometry(w)?));
        }
    }
    let mut foreign: Vec<(usize, Rect)> = Vec::new();
    for (pos, a, g) in cookies {
        let (Ok(a), Ok(g)) = (a.reply(), g.reply()) else { continue };
        if a.map_state == MapState::VIEWABLE && a.class != WindowClass::INPUT_ONLY {
            let bw = 2 * g.border_width as u32;
            foreign.push((pos, Rect::new(g.x as i32, g.y as i32, g.width as u32 + bw, g.height as u32 + bw)));
        }
    }
    let mut n = 0;
    for p in mine {
        let Some(r) = p.info.bounds.intersect(&img_rect) else { continue };
        let covered = foreign.iter().any(|(pos, f)| *pos > p.root_pos && f.intersect(&r).is_some());
        let got = if !covered {
            match r.intersect(&screen) {
                Some(r) if root_ok => {
                    let root = x.root;
                    read_raw(x, root, (r.x as i16, r.y as i16, r.width as u16, r.height as u16)).ok().map(|d| (r, d.0))
                }
                _ => None,
            }
        } else if x.ext.composite.is_some() {
            let sub = (r.x - p.info.bounds.x, r.y - p.info.bounds.y, r.width as u16, r.height as u16);
            read_own_pixels(x, p.info.id, sub).ok().flatten().map(|d| (r, d))
        } else {
            None
        };
        let Some((r, raw)) = got else { continue };
        let rgb = bgrx_to_rgb(&raw, r.width, r.height, lsb);
        if rgb.len() < r.width as usize * r.height as usize * 3 {
            continue;
        }
        let (dx, dy) = ((r.x - img.origin.0) as usize, (r.y - img.origin.1) as usize);
        let row = r.width as usize * 3;
        for y in 0..r.height as usize {
            let at = ((dy + y) * img.width as usize + dx) * 3;
            img.rgb[at..at + row].copy_from_slice(&rgb[y * row..(y + 1) * row]);
        }
        n += 1;
    }
    if n > 0 {
        img.method = format!("{}+{n} popups", img.method);
    }
    Ok(n)
}

/// A popup's own pixels over `sub` (popup coordinates), through a
/// Composite redirection made for this read and undone after it (popups
/// come and go: keeping them redirected would pile up dead ids). The fresh
/// backing pixmap first holds what the screen showed, the covering window
/// included: wait (bounded) for the app's repaint. None: not 32 bpp.
fn read_own_pixels(x: &mut X, popup: u32, sub: (i32, i32, u16, u16)) -> Result<Option<Vec<u8>>> {
    let g = x.conn.get_geometry(popup)?.reply()?;
    if bpp_for_depth(x, g.depth) != Some(32) {
        return Ok(None);
    }
    x.conn
        .composite_redirect_window(popup, Redirect::AUTOMATIC)?
        .check()
        .map_err(|e| failed(format!("Composite redirect: {e}")))?;
    let pixmap = x.conn.generate_id()?;
    let res = (|| -> Result<Vec<u8>> {
        x.conn
            .composite_name_window_pixmap(popup, pixmap)?
            .check()
            .map_err(|e| failed(format!("Composite NameWindowPixmap: {e}")))?;
        let bw = g.border_width as i32;
        let rect = ((sub.0 + bw) as i16, (sub.1 + bw) as i16, sub.2, sub.3);
        let before = read_raw(x, pixmap, rect)?.0;
        let cap = Instant::now() + POPUP_REPAINT_WAIT;
        let mut changed: Option<Instant> = None;
        let mut last = before.clone();
        while Instant::now() < cap {
            std::thread::sleep(Duration::from_millis(5));
            last = read_raw(x, pixmap, rect)?.0;
            match changed {
                Some(t) if Instant::now() >= t + Duration::from_millis(15) => break,
                Some(_) => {}
                None if last != before => changed = Some(Instant::now()),
                None => {}
            }
        }
        Ok(last)
    })();
    let _ = x.conn.free_pixmap(pixmap);
    let _ = x.conn.composite_unredirect_window(popup, Redirect::AUTOMATIC);
    let _ = x.conn.flush();
    res.map(Some)
}

/// Black out screen rectangles on an image whose pixel (0,0) is at `origin`.
/// Returns how many rectangles touched the image.
pub fn redact(rgb: &mut [u8], width: u32, height: u32, origin: (i32, i32), rects: &[Rect]) -> u32 {
    let image = Rect::new(0, 0, width, height);
    let mut count = 0;
    for r in rects {
        let local = Rect::new(r.x.saturating_sub(origin.0), r.y.saturating_sub(origin.1), r.width, r.height);
        let Some(c) = local.intersect(&image) else { continue };
        count += 1;
        for y in c.y..c.y + c.height as i32 {
            let row = y as usize * width as usize * 3;
            let start = row + c.x as usize * 3;
            let end = start + c.width as usize * 3;
            rgb[start..end].fill(0);
        }
    }
    count
}

/// The part of `img` inside the screen rectangle `r`; None when they do not
/// overlap. The image itself when `r` covers all of it.
pub fn crop(img: Image, r: Rect) -> Option<Image> {
    let whole = Rect::new(img.origin.0, img.origin.1, img.width, img.height);
    let c = r.intersect(&whole)?;
    if c == whole {
        return Some(img);
    }
    let (dx, dy) = ((c.x - whole.x) as usize, (c.y - whole.y) as usize);
    let (row, stride) = (c.width as usize * 3, img.width as usize * 3);
    let mut rgb = Vec::with_capacity(row * c.height as usize);
    for y in 0..c.height as usize {
        let at = (dy + y) * stride + dx * 3;
        rgb.extend_from_slice(&img.rgb[at..at + row]);
    }
    Some(Image { width: c.width, height: c.height, origin: (c.x, c.y), rgb, method: format!("{}+crop", img.method) })
}

/// Size and scale of `w` x `h` fitted into `max_width` columns: never up;
/// one factor for both axes, max_width / w, the height rounded down (at
/// least 1 row) so that every output pixel lies inside the source: output
/// pixel (ix, iy) covers source [i / scale, (i + 1) / scale) on each axis.
pub fn scaled_size(w: u32, h: u32, max_width: u32) -> (u32, u32, f64) {
    if w <= max_width || max_width == 0 || w == 0 {
        return (w, h, 1.0);
    }
    let nh = ((h as u64 * max_width as u64) / w as u64).max(1) as u32;
    (max_width, nh, max_width as f64 / w as f64)
}

/// Box-filter weights along one axis scaled by num/den: output o covers
/// source [o * den / num, (o + 1) * den / num) (clipped to the source), and
/// averages every source pixel by the length of it inside that interval, in
/// units of 1/num (a source pixel is num units wide). Exact: integers only.
fn box_weights(src: u32, out: u32, num: u64, den: u64) -> Vec<Vec<(u32, u32)>> {
    let end = src as u64 * num;
    (0..out as u64)
        .map(|o| {
            let (a, b) = (o * den, ((o + 1) * den).min(end));
            if b <= a {
                // Only for a 1-row output of a source under one unit tall: its last pixel.
                return vec![(src.saturating_sub(1), 1)];
            }
            (a / num..=(b - 1) / num)
                .map(|i| {
                    let (lo, hi) = ((i * num).max(a), ((i + 1) * num).min(b));
                    (i as u32, (hi - lo) as u32)
                })
                .filter(|&(_, w)| w > 0)
                .collect()
        })
        .collect()
}

/// Scale packed RGB down to at most `max_width` pixels wide by area
/// averaging (a box filter: each output pixel is the exact mean of the
/// source area it covers), aspect kept (`scaled_size`). Returns the pixels,
/// their size and the scale (output pixels per source pixel); the image
/// unchanged (scale 1) when it is narrow enough.
pub fn downscale(rgb: Vec<u8>, w: u32, h: u32, max_width: u32) -> (Vec<u8>, u32, u32, f64) {
    let (nw, nh, scale) = scaled_size(w, h, max_width);
    if (nw, nh) == (w, h) {
        return (rgb, w, h, 1.0);
    }
    let (num, den) = (nw as u64, w as u64);
    let xs = box_weights(w, nw, num, den);
    let ys = box_weights(h, nh, num, den);
    let (w_, nw_) = (w as usize, nw as usize);
    // Horizontal pass: every source row to nw weighted sums (at most w * 255).
    let mut tmp = vec![0u32; nw_ * h as usize * 3];
    for y in 0..h as usize {
        let src = &rgb[y * w_ * 3..(y + 1) * w_ * 3];
        let dst = &mut tmp[y * nw_ * 3..(y + 1) * nw_ * 3];
        for (ox, ws) in xs.iter().enumerate() {
            let mut acc = [0u32; 3];
            for &(i, wt) in ws {
                let p = i as usize * 3;
                acc[0] += wt * src[p] as u32;
                acc[1] += wt * src[p + 1] as u32;
                acc[2] += wt * src[p + 2] as u32;
            }
            dst[ox * 3..ox * 3 + 3].copy_from_slice(&acc);
        }
    }
    let sx: Vec<u64> = xs.iter().map(|ws| ws.iter().map(|&(_, wt)| wt as u64).sum()).collect();
    // Vertical pass, then the division by the covered area (rounded).
    let mut out = vec![0u8; nw_ * nh as usize * 3];
    for (oy, ws) in ys.iter().enumerate() {
        let sy: u64 = ws.iter().map(|&(_, wt)| wt as u64).sum();
        for ox in 0..nw_ {
            let mut acc = [0u64; 3];
            for &(j, wt) in ws {
                let p = (j as usize * nw_ + ox) * 3;
                for c in 0..3 {
                    acc[c] += wt as u64 * tmp[p + c] as u64;
                }
            }
            let d = sx[ox] * sy;
            let o = (oy * nw_ + ox) * 3;
            for c in 0..3 {
                out[o + c] = ((acc[c] + d / 2) / d).min(255) as u8;
            }
        }
    }
    (out, nw, nh, scale)
}

/// What a screenshot writes, from the window's (or screen's) image: cropped
/// to `region` (screen coordinates; no overlap with the image ->
/// INVALID_ARGUMENTS), `redact` rectangles blacked out (before any scaling),
/// then scaled down to `max_width`. Returns the image (its size and origin
/// describe the PNG exactly), the number of rectangles that touched it, and
/// the scale: image pixel (ix, iy) shows screen point origin + (ix, iy) / scale.
pub fn finish_image(img: Image, region: Option<Rect>, redact_rects: &[Rect], max_width: Option<u32>) -> Result<(Image, u32, f64)> {
    let mut img = match region {
        None => img,
        Some(r) => {
            let (ox, oy, w, h) = (img.origin.0, img.origin.1, img.width, img.height);
            crop(img, r).ok_or_else(|| {
                Error::invalid(format!(
                    "region {}x{} at ({}, {}) does not overlap the captured area {w}x{h} at ({ox}, {oy})",
                    r.width, r.height, r.x, r.y
                ))
                .with("reason", "region-outside-window")
            })?
        }
    };
    let redacted = redact(&mut img.rgb, img.width, img.height, img.origin, redact_rects);
    let scale = match max_width {
        Some(mw) if img.width > mw => {
            let (rgb, w, h, scale) = downscale(std::mem::take(&mut img.rgb), img.width, img.height, mw);
            img = Image { width: w, height: h, rgb, method: format!("{}+box-scale", img.method), ..img };
            scale
        }
        _ => 1.0,
    };
    Ok((img, redacted, scale))
}

/// Encode RGB as PNG (fast settings) and write it atomically (tmp + rename).
pub fn write_png(path: &str, rgb: &[u8], width: u32, height: u32) -> Result<()> {
    write_file_atomic(path, |file| {
        use std::io::Write;
        let mut buf = std::io::BufWriter::with_capacity(1 << 20, file);
        {
            let mut enc = png::Encoder::new(&mut buf, width, height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            // The fastest deflate (fdeflate) with one fixed filter: Paeth
            // gives the adaptive filter's size here (171 kB for widget-factory's
            // 1366x741 window, against 170 kB) at two thirds of the time
            // (1.25 ms against 1.9 ms); Up is faster still but 2.7x larger.
            enc.set_compression(png::Compression::Fast);
            enc.set_filter(png::Filter::Paeth);
            let mut w = enc.write_header().map_err(|e| failed(format!("PNG header: {e}")))?;
            w.write_image_data(rgb).map_err(|e| failed(format!("PNG encode: {e}")))?;
            w.finish().map_err(|e| failed(format!("PNG finish: {e}")))?;
        }
        buf.flush()?;
        Ok(())
    })
}

/// Write an image file at an absolute path atomically: `write` fills a
/// temporary file beside it, which is then renamed into place (and removed on
/// failure). 0600 from the start: a window image can show private text, and
/// the file must never be readable by others, not even between create and
/// rename.
pub fn write_file_atomic(path: &str, write: impl FnOnce(&mut std::fs::File) -> Result<()>) -> Result<()> {
    let target = std::path::Path::new(path);
    if !target.is_absolute() {
        return Err(Error::invalid("screenshot path must be absolute"));
    }
    let dir = target.parent().ok_or_else(|| Error::invalid("screenshot path has no directory"))?;
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let tmp = dir.join(format!(
        ".{}.tmp-{}-{}",
        target.file_name().map(|f| f.to_string_lossy()).unwrap_or_default(),
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let result = (|| -> Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).map_err(|e| {
            failed(format!("cannot create {}: {e}", tmp.display()))
        })?;
        write(&mut file)?;
        // No fsync: the file is a fresh observation, read right away and
        // taken again after a crash; the rename keeps readers from ever
        // seeing a partial file. (fsync cost 0.3-5 ms per image here.)
        std::fs::rename(&tmp, target).map_err(|e| failed(format!("rename to {path}: {e}")))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bgrx_conversion() {
        let raw = [1u8, 2, 3, 0, 10, 20, 30, 0];
        assert_eq!(bgrx_to_rgb(&raw, 2, 1, true), vec![3, 2, 1, 30, 20, 10]);
        let raw = [0u8, 1, 2, 3];
        assert_eq!(bgrx_to_rgb(&raw, 1, 1, false), vec![1, 2, 3]);
    }

    #[test]
    fn redaction_maps_screen_to_image_coords_and_clips() {
        let (w, h) = (4u32, 3u32);
        let mut rgb = vec![255u8; (w * h * 3) as usize];
        // image origin at screen (100, 50); rect covers screen x 101..103, y 51..
        let n = redact(&mut rgb, w, h, (100, 50), &[Rect::new(101, 51, 2, 10), Rect::new(0, 0, 5, 5)]);
        assert_eq!(n, 1, "the second rect is off the image");
        let px = |x: usize, y: usize| rgb[(y * w as usize + x) * 3];
        assert_eq!(px(0, 0), 255);
        assert_eq!(px(1, 1), 0);
        assert_eq!(px(2, 2), 0);
        assert_eq!(px(3, 1), 255);
        assert_eq!(px(1, 0), 255);
        // a rect partly left/above the image clips to it
        let mut rgb2 = vec![255u8; (w * h * 3) as usize];
        assert_eq!(redact(&mut rgb2, w, h, (100, 50), &[Rect::new(90, 40, 11, 11)]), 1);
        assert_eq!(rgb2[0], 0);
        assert_eq!(rgb2[3], 255);
    }

    fn image(w: u32, h: u32, origin: (i32, i32), f: impl Fn(u32, u32) -> [u8; 3]) -> Image {
        let mut rgb = Vec::with_capacity((w * h * 3) as usize);
        for y in 0..h {
            for x in 0..w {
                rgb.extend_from_slice(&f(x, y));
            }
        }
        Image { width: w, height: h, origin, rgb, method: "test".into() }
    }

    fn px(img: &Image, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * img.width + x) * 3) as usize;
        [img.rgb[i], img.rgb[i + 1], img.rgb[i + 2]]
    }

    #[test]
    fn scale_math() {
        assert_eq!(scaled_size(1920, 1080, 800), (800, 450, 800.0 / 1920.0));
        assert_eq!(scaled_size(800, 600, 800), (800, 600, 1.0), "already narrow enough");
        assert_eq!(scaled_size(800, 600, 1600), (800, 600, 1.0), "never up");
        // The height is rounded down: every output row lies inside the source.
        assert_eq!(scaled_size(1001, 3, 1000), (1000, 2, 1000.0 / 1001.0));
        assert_eq!(scaled_size(860, 640, 500), (500, 372, 500.0 / 860.0));
        assert_eq!(scaled_size(1000, 1, 100), (100, 1, 0.1), "at least one row");
        // Weights: 3 -> 2 columns, each output covers 1.5 source pixels (units of 1/2).
        assert_eq!(box_weights(3, 2, 2, 3), vec![vec![(0, 2), (1, 1)], vec![(1, 1), (2, 2)]]);
        // 4 -> 2: two whole pixels each.
        assert_eq!(box_weights(4, 2, 2, 4), vec![vec![(0, 2), (1, 2)], vec![(2, 2), (3, 2)]]);
        // Every output's weights sum to the source length it covers (den), inside the source.
        for (src, out) in [(1920u32, 800u32), (1366, 1000), (997, 16), (33, 32)] {
            for ws in box_weights(src, out, out as u64, src as u64) {
                assert_eq!(ws.iter().map(|&(_, w)| w as u64).sum::<u64>(), src as u64);
                assert!(ws.iter().all(|&(i, _)| i < src));
            }
        }
    }

    #[test]
    fn downscale_averages_areas() {
        // 3 -> 2 columns: (0*2 + 90*1)/3 = 30 and (90*1 + 180*2)/3 = 150.
        let (rgb, w, h, s) = downscale(vec![0, 0, 0, 90, 90, 90, 180, 180, 180], 3, 1, 2);
        assert_eq!((w, h), (2, 1));
        assert_eq!(rgb, vec![30, 30, 30, 150, 150, 150]);
        assert!((s - 2.0 / 3.0).abs() < 1e-12);
        // A uniform image stays uniform, any factor.
        let flat = image(1366, 741, (0, 0), |_, _| [12, 200, 77]);
        let (rgb, w, h, _) = downscale(flat.rgb, 1366, 741, 500);
        assert_eq!((w, h), (500, 271));
        assert_eq!(rgb.len(), 500 * 271 * 3);
        assert!(rgb.chunks(3).all(|p| p == [12, 200, 77]));
        // A 2x2 checkerboard of 0/255 halves to mid grey.
        let checker = image(64, 64, (0, 0), |x, y| if (x + y) % 2 == 0 { [255; 3] } else { [0; 3] });
        let (rgb, w, h, s) = downscale(checker.rgb, 64, 64, 32);
        assert_eq!((w, h, s), (32, 32, 0.5));
        assert!(rgb.iter().all(|&v| v == 128), "{:?}", &rgb[..6]);
        // Narrow enough: untouched.
        let (rgb, w, h, s) = downscale(vec![1, 2, 3], 1, 1, 16);
        assert_eq!((rgb, w, h, s), (vec![1, 2, 3], 1, 1, 1.0));
    }

    #[test]
    fn crop_keeps_screen_coordinates() {
        let img = image(100, 50, (200, 300), |x, y| [x as u8, y as u8, 0]);
        let c = crop(image(100, 50, (200, 300), |x, y| [x as u8, y as u8, 0]), Rect::new(210, 320, 30, 10)).unwrap();
        assert_eq!((c.width, c.height, c.origin), (30, 10, (210, 320)));
        assert_eq!(px(&c, 0, 0), [10, 20, 0]);
        assert_eq!(px(&c, 29, 9), [39, 29, 0]);
        // Clipped to the image.
        let c = crop(image(100, 50, (200, 300), |x, y| [x as u8, y as u8, 0]), Rect::new(150, 340, 100, 100)).unwrap();
        assert_eq!((c.width, c.height, c.origin), (50, 10, (200, 340)));
        assert_eq!(px(&c, 0, 0), [0, 40, 0]);
        // No overlap.
        assert!(crop(image(10, 10, (0, 0), |_, _| [0; 3]), Rect::new(10, 0, 5, 5)).is_none());
        assert!(crop(image(10, 10, (0, 0), |_, _| [0; 3]), Rect::new(2, 2, 0, 5)).is_none(), "an empty region");
        // Covering all of it: the same image.
        let same = crop(img, Rect::new(0, 0, 10_000, 10_000)).unwrap();
        assert_eq!((same.width, same.height, same.origin, same.method.as_str()), (100, 50, (200, 300), "test"));
    }

    #[test]
    fn finish_crops_redacts_then_scales() {
        // A 400x200 window at (100, 50): white, with a secure field (screen
        // 150..250 x 80..100) and a red marker column at screen x = 300.
        let win = || image(400, 200, (100, 50), |x, _| if x + 100 == 300 { [255, 0, 0] } else { [255; 3] });
        let secure = Rect::new(150, 80, 100, 20);
        // Region (screen) 120..520 x 60..160, clipped to the window: 120..500.
        let (img, redacted, scale) = finish_image(win(), Some(Rect::new(120, 60, 400, 100)), &[secure, Rect::new(0, 0, 5, 5)], Some(95)).unwrap();
        assert_eq!(redacted, 1, "the rect off the image does not count");
        assert_eq!((img.width, img.height, img.origin), (95, 25, (120, 60)), "380x100 at (120, 60) scaled by 95/380");
        assert_eq!(scale, 0.25);
        assert_eq!(img.rgb.len(), 95 * 25 * 3);
        // Image pixel (ix, iy) shows screen origin + i / scale: the secure
        // field (screen x 150..250, y 80..100) is ix 7.5..32.5, iy 5..10.
        assert_eq!(px(&img, 10, 6), [0, 0, 0], "redacted before scaling");
        assert_eq!(px(&img, 31, 9), [0, 0, 0]);
        assert_eq!(px(&img, 40, 6), [255, 255, 255]);
        assert_eq!(px(&img, 10, 11), [255, 255, 255], "below the field");
        // The red column (screen x 300) is ix (300 - 120) / 4 = 45: a quarter red.
        assert_eq!(px(&img, 45, 0), [255, 191, 191]);
        assert_eq!(px(&img, 44, 0), [255, 255, 255]);
        assert!(img.method.ends_with("+crop+box-scale"), "{}", img.method);
        // No region, narrow enough: untouched, scale 1.
        let (img, redacted, scale) = finish_image(win(), None, &[], Some(400)).unwrap();
        assert_eq!((img.width, img.height, img.origin, redacted, scale), (400, 200, (100, 50), 0, 1.0));
        // A region outside the window is refused.
        let Err(e) = finish_image(win(), Some(Rect::new(0, 0, 100, 50)), &[], None) else { panic!("a region outside the window was accepted") };
        assert_eq!(e.code, Code::InvalidArguments);
        // Whole image region + scale only.
        let (img, _, scale) = finish_image(win(), Some(Rect::new(100, 50, 400, 200)), &[], Some(100)).unwrap();
        assert_eq!((img.width, img.height, img.origin, scale), (100, 50, (100, 50), 0.25));
        assert!(!img.method.contains("crop"));
    }

    #[test]
    fn png_written_atomically() {
        let dir = std::env::temp_dir().join(format!("deckhand-png-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.png");
        write_png(p.to_str().unwrap(), &[0u8; 2 * 2 * 3], 2, 2).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        assert!(write_png("relative.png", &[0u8; 3], 1, 1).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

