//! wlr-screencopy (zwlr_screencopy_manager_v1) capture of a screen region,
//! speaking the Wayland wire protocol directly on the compositor's socket
//! (no libwayland): a registry round trip, wl_shm and the screencopy
//! manager bound, the output's region captured into a memfd-backed wl_shm
//! buffer passed with SCM_RIGHTS.
//!
//! Wire format: each message is the object id (u32), then (size << 16 |
//! opcode) (u32), then the arguments, 32-bit aligned; strings are a u32
//! length (NUL included) and the padded bytes; an fd travels as ancillary
//! data.

use crate::error::{Code, Error, Result};
use crate::wire::messages::Rect;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

const DISPLAY: u32 = 1;
const REGISTRY: u32 = 2;
const SYNC: u32 = 3;
const SHM: u32 = 4;
const MANAGER: u32 = 5;
const OUTPUT: u32 = 6;
const FRAME: u32 = 7;
const POOL: u32 = 8;
const BUFFER: u32 = 9;

/// wl_shm formats this reads (little-endian 32-bit words).
const ARGB8888: u32 = 0;
const XRGB8888: u32 = 1;

fn failed(msg: impl Into<String>) -> Error {
    Error::new(Code::ScreenshotFailed, msg.into())
}

struct Conn {
    s: UnixStream,
    buf: Vec<u8>,
}

struct Msg {
    object: u32,
    opcode: u16,
    args: Vec<u8>,
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_ne_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32 + 1);
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    while out.len() % 4 != 0 {
        out.push(0);
    }
}

fn message(object: u32, opcode: u16, args: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(8 + args.len());
    put_u32(&mut m, object);
    put_u32(&mut m, ((8 + args.len() as u32) << 16) | opcode as u32);
    m.extend_from_slice(args);
    m
}

/// Argument reader.
struct Args<'a>(&'a [u8]);

impl Args<'_> {
    fn u32(&mut self) -> Result<u32> {
        if self.0.len() < 4 {
            return Err(failed("Wayland: short message"));
        }
        let v = u32::from_ne_bytes(self.0[..4].try_into().expect("4 bytes"));
        self.0 = &self.0[4..];
        Ok(v)
    }
    fn string(&mut self) -> Result<String> {
        let len = self.u32()? as usize;
        let padded = (len + 3) & !3;
        if self.0.len() < padded {
            return Err(failed("Wayland: short string"));
        }
        let s = String::from_utf8_lossy(&self.0[..len.saturating_sub(1)]).into_owned();
        self.0 = &self.0[padded..];
        Ok(s)
    }
}

impl Conn {
    fn connect() -> Result<Conn> {
        let dir = std::env::var("XDG_RUNTIME_DIR").map_err(|_| failed("Wayland: XDG_RUNTIME_DIR is unset"))?;
        let name = std::env::var("WAYLAND_DISPLAY").unwrap_or_else(|_| "wayland-0".into());
        let path = if name.starts_with('/') { name } else { format!("{dir}/{name}") };
        let s = UnixStream::connect(&path).map_err(|e| failed(format!("Wayland: connect {path}: {e}")))?;
        Ok(Conn { s, buf: Vec::new() })
    }

    fn send(&mut self, m: &[u8]) -> Result<()> {
        use std::io::Write;
        self.s.write_all(m).map_err(|e| failed(format!("Wayland: write: {e}")))
    }

    /// One message with a file descriptor (SCM_RIGHTS).
    fn send_fd(&mut self, m: &[u8], fd: i32) -> Result<()> {
        unsafe {
            let mut iov = libc::iovec { iov_base: m.as_ptr() as *mut libc::c_void, iov_len: m.len() };
            let space = libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) as usize;
            let mut control = vec![0u8; space];
            let mut hdr: libc::msghdr = std::mem::zeroed();
            hdr.msg_iov = &mut iov;
            hdr.msg_iovlen = 1;
            hdr.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            hdr.msg_controllen = space as _;
            let cmsg = libc::CMSG_FIRSTHDR(&hdr);
            (*cmsg).cmsg_level = libc::SOL_SOCKET;
            (*cmsg).cmsg_type = libc::SCM_RIGHTS;
            (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut i32, fd);
            let n = libc::sendmsg(self.s.as_raw_fd(), &hdr, libc::MSG_NOSIGNAL);
            if n < 0 || n as usize != m.len() {
                return Err(failed(format!("Wayland: sendmsg: {}", std::io::Error::last_os_error())));
            }
        }
        Ok(())
    }

    /// The next event, waiting until `deadline`.
    fn next(&mut self, deadline: Instant) -> Result<Msg> {
        loop {
            if self.buf.len() >= 8 {
                let object = u32::from_ne_bytes(self.buf[0..4].try_into().expect("4 bytes"));
                let word = u32::from_ne_bytes(self.buf[4..8].try_into().expect("4 bytes"));
                let size = (word >> 16) as usize;
                if size < 8 {
                    return Err(failed("Wayland: malformed event"));
                }
                if self.buf.len() >= size {
                    let args = self.buf[8..size].to_vec();
                    self.buf.drain(..size);
                    let m = Msg { object, opcode: (word & 0xffff) as u16, args };
                    if m.object == DISPLAY && m.opcode == 0 {
                        let mut a = Args(&m.args);
                        let (obj, code, text) = (a.u32()?, a.u32()?, a.string()?);
                        return Err(failed(format!("Wayland protocol error on object {obj} (code {code}): {text}")));
                    }
                    return Ok(m);
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::timeout("Wayland: the compositor did not answer in time"));
            }
            self.s.set_read_timeout(Some(left.max(Duration::from_millis(1)))).map_err(|e| failed(format!("Wayland: {e}")))?;
            let mut chunk = [0u8; 4096];
            match self.s.read(&mut chunk) {
                Ok(0) => return Err(failed("Wayland: the compositor closed the connection")),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => continue,
                Err(e) => return Err(failed(format!("Wayland: read: {e}"))),
            }
        }
    }
}

/// A captured region: packed RGB, `width` x `height`.
pub struct Capture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

/// Captures `region` (compositor/screen coordinates, inside the first
/// output) with wlr-screencopy, the cursor not drawn.
pub fn capture_region(region: Rect, deadline: Instant) -> Result<Capture> {
    if region.width == 0 || region.height == 0 {
        return Err(failed("nothing to capture: the region is empty"));
    }
    let mut c = Conn::connect()?;
    // Registry, then a sync whose done ends the globals.
    let mut m = message(DISPLAY, 1, &{
        let mut a = Vec::new();
        put_u32(&mut a, REGISTRY);
        a
    });
    m.extend(message(DISPLAY, 0, &SYNC.to_ne_bytes()));
    c.send(&m)?;
    let (mut shm, mut manager, mut output) = (None, None, None);
    loop {
        let e = c.next(deadline)?;
        if e.object == SYNC {
            break;
        }
        if e.object == REGISTRY && e.opcode == 0 {
            let mut a = Args(&e.args);
            let (name, interface, version) = (a.u32()?, a.string()?, a.u32()?);
            match interface.as_str() {
                "wl_shm" => shm = Some((name, 1)),
                "zwlr_screencopy_manager_v1" => manager = Some((name, version.min(3))),
                "wl_output" if output.is_none() => output = Some((name, 1)),
                _ => {}
            }
        }
    }
    let (Some(shm), Some(manager), Some(output)) = (shm, manager, output) else {
        return Err(failed(format!(
            "the compositor lacks {}",
            [("wl_shm", shm.is_none()), ("zwlr_screencopy_manager_v1", manager.is_none()), ("wl_output", output.is_none())]
                .iter()
                .filter(|(_, missing)| *missing)
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    };
    let bind = |(name, version): (u32, u32), interface: &str, id: u32| {
        let mut a = Vec::new();
        put_u32(&mut a, name);
        put_str(&mut a, interface);
        put_u32(&mut a, version);
        put_u32(&mut a, id);
        message(REGISTRY, 0, &a)
    };
    let mut m = bind(shm, "wl_shm", SHM);
    m.extend(bind(manager, "zwlr_screencopy_manager_v1", MANAGER));
    m.extend(bind(output, "wl_output", OUTPUT));
    // capture_output_region(frame, overlay_cursor 0, output, x, y, width, height)
    let mut a = Vec::new();
    for v in [FRAME, 0, OUTPUT, region.x as u32, region.y as u32, region.width, region.height] {
        put_u32(&mut a, v);
    }
    m.extend(message(MANAGER, 1, &a));
    c.send(&m)?;

    // The frame's buffer offers (version 3 ends them with buffer_done).
    let mut shm_buffer: Option<(u32, u32, u32, u32)> = None;
    let mut y_invert = false;
    loop {
        let e = c.next(deadline)?;
        if e.object != FRAME {
            continue; // wl_shm formats, wl_output facts, delete_id
        }
        let mut a = Args(&e.args);
        match e.opcode {
            0 => {
                let (format, w, h, stride) = (a.u32()?, a.u32()?, a.u32()?, a.u32()?);
                if format == ARGB8888 || format == XRGB8888 {
                    shm_buffer = Some((format, w, h, stride));
                }
                if manager.1 < 3 {
                    break;
                }
            }
            1 => y_invert = a.u32()? & 1 != 0,
            3 => return Err(failed("the compositor refused the capture (screencopy failed)")),
            6 => break, // buffer_done
            _ => {}
        }
    }
    let Some((format, w, h, stride)) = shm_buffer else {
        return Err(failed("the compositor offers no 32-bit RGB shared-memory buffer for the capture"));
    };
    let size = stride as usize * h as usize;
    let fd = unsafe { libc::memfd_create(c"deckhand-screencopy".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(failed(format!("memfd_create: {}", std::io::Error::last_os_error())));
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let file = std::fs::File::from(fd);
    file.set_len(size as u64).map_err(|e| failed(format!("memfd size: {e}")))?;
    // wl_shm.create_pool(id, fd, size), then wl_shm_pool.create_buffer(id, offset, w, h, stride, format), frame.copy(buffer).
    let mut a = Vec::new();
    put_u32(&mut a, POOL);
    put_u32(&mut a, size as u32);
    c.send_fd(&message(SHM, 0, &a), file.as_raw_fd())?;
    let mut a = Vec::new();
    for v in [BUFFER, 0, w, h, stride, format] {
        put_u32(&mut a, v);
    }
    let mut m = message(POOL, 0, &a);
    m.extend(message(FRAME, 0, &BUFFER.to_ne_bytes()));
    c.send(&m)?;
    loop {
        let e = c.next(deadline)?;
        if e.object != FRAME {
            continue;
        }
        match e.opcode {
            1 => y_invert = Args(&e.args).u32()? & 1 != 0,
            2 => break, // ready
            3 => return Err(failed("the compositor could not copy the region (screencopy failed)")),
            _ => {}
        }
    }
    let mut raw = vec![0u8; size];
    use std::os::unix::fs::FileExt;
    file.read_exact_at(&mut raw, 0).map_err(|e| failed(format!("reading the capture: {e}")))?;
    Ok(Capture { width: w, height: h, rgb: to_rgb(&raw, w, h, stride, y_invert) })
}

/// XRGB/ARGB8888 (little-endian words: B, G, R, X bytes) to packed RGB,
/// flipped when the compositor says the rows are bottom-up.
pub fn to_rgb(raw: &[u8], w: u32, h: u32, stride: u32, y_invert: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(w as usize * h as usize * 3);
    for row in 0..h {
        let src = if y_invert { h - 1 - row } else { row } as usize * stride as usize;
        for px in raw[src..src + w as usize * 4].chunks_exact(4) {
            out.extend_from_slice(&[px[2], px[1], px[0]]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_laid_out_as_the_wire_says() {
        let mut a = Vec::new();
        put_u32(&mut a, 7);
        put_str(&mut a, "wl_shm");
        let m = message(2, 0, &a);
        // header 8 + u32 4 + string length 4 + "wl_shm\0" padded to 8
        assert_eq!(m.len(), 24);
        assert_eq!(u32::from_ne_bytes(m[4..8].try_into().unwrap()), (24 << 16) | 0);
        let mut r = Args(&m[8..]);
        assert_eq!((r.u32().unwrap(), r.string().unwrap()), (7, "wl_shm".to_string()));
        assert!(r.0.is_empty());
    }

    #[test]
    fn pixels_become_rgb_and_flip_when_inverted() {
        // 2x2, stride 12 (4 bytes of padding per row): B, G, R, X words.
        let raw = [1, 2, 3, 0, 4, 5, 6, 0, 9, 9, 9, 9, 7, 8, 9, 0, 10, 11, 12, 0, 9, 9, 9, 9];
        assert_eq!(to_rgb(&raw, 2, 2, 12, false), vec![3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10]);
        assert_eq!(to_rgb(&raw, 2, 2, 12, true), vec![9, 8, 7, 12, 11, 10, 3, 2, 1, 6, 5, 4]);
    }
}
