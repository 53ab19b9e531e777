//! The Wayland wire protocol spoken directly on the compositor's socket (no
//! libwayland): shared by the screencopy client and the virtual input
//! devices.
//!
//! Wire format: each message is the object id (u32), then (size << 16 |
//! opcode) (u32), then the arguments, 32-bit aligned; strings are a u32
//! length (NUL included) and the padded bytes; an fd travels as ancillary
//! data (SCM_RIGHTS).

use crate::error::{Code, Error, Result};
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

pub const DISPLAY: u32 = 1;

/// A connection; its errors carry `code` (the op's own failure code:
/// SCREENSHOT_FAILED for a capture, ACTION_FAILED for input).
pub struct Conn {
    s: UnixStream,
    buf: Vec<u8>,
    /// File descriptors received (SCM_RIGHTS), in order: an event with an
    /// fd argument takes the first (`take_fd`); the rest close with the Conn.
    fds: VecDeque<OwnedFd>,
    pub code: Code,
}

pub struct Msg {
    pub object: u32,
    pub opcode: u16,
    pub args: Vec<u8>,
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_ne_bytes());
}

pub fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len() as u32 + 1);
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// A request: object, opcode and the u32 words of its arguments.
pub fn message(object: u32, opcode: u16, args: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(8 + args.len());
    put_u32(&mut m, object);
    put_u32(&mut m, ((8 + args.len() as u32) << 16) | opcode as u32);
    m.extend_from_slice(args);
    m
}

/// A request whose arguments are all 32-bit words (uint, int, fixed, object, new_id).
pub fn words(object: u32, opcode: u16, args: &[u32]) -> Vec<u8> {
    let mut a = Vec::with_capacity(args.len() * 4);
    for &v in args {
        put_u32(&mut a, v);
    }
    message(object, opcode, &a)
}

/// wl_registry.bind(name, interface, version, id).
pub fn bind(registry: u32, name: u32, interface: &str, version: u32, id: u32) -> Vec<u8> {
    let mut a = Vec::new();
    put_u32(&mut a, name);
    put_str(&mut a, interface);
    put_u32(&mut a, version);
    put_u32(&mut a, id);
    message(registry, 0, &a)
}

/// Argument reader.
pub struct Args<'a>(pub &'a [u8]);

impl Args<'_> {
    pub fn u32(&mut self) -> Result<u32> {
        if self.0.len() < 4 {
            return Err(Error::internal("Wayland: short message"));
        }
        let v = u32::from_ne_bytes(self.0[..4].try_into().expect("4 bytes"));
        self.0 = &self.0[4..];
        Ok(v)
    }
    pub fn string(&mut self) -> Result<String> {
        let len = self.u32()? as usize;
        let padded = (len + 3) & !3;
        if self.0.len() < padded {
            return Err(Error::internal("Wayland: short string"));
        }
        let s = String::from_utf8_lossy(&self.0[..len.saturating_sub(1)]).into_owned();
        self.0 = &self.0[padded..];
        Ok(s)
    }
}

impl Conn {
    /// Connect to $WAYLAND_DISPLAY (in $XDG_RUNTIME_DIR unless absolute).
    pub fn connect(code: Code) -> Result<Conn> {
        let failed = |m: String| Error::new(code, m);
        let dir = std::env::var("XDG_RUNTIME_DIR").map_err(|_| failed("Wayland: XDG_RUNTIME_DIR is unset".into()))?;
        let name = std::env::var("WAYLAND_DISPLAY").unwrap_or_else(|_| "wayland-0".into());
        let path = if name.starts_with('/') { name } else { format!("{dir}/{name}") };
        let s = UnixStream::connect(&path).map_err(|e| failed(format!("Wayland: connect {path}: {e}")))?;
        Ok(Conn { s, buf: Vec::new(), fds: VecDeque::new(), code })
    }

    pub fn failed(&self, msg: impl Into<String>) -> Error {
        Error::new(self.code, msg.into())
    }

    pub fn send(&mut self, m: &[u8]) -> Result<()> {
        use std::io::Write;
        let code = self.code;
        self.s.write_all(m).map_err(|e| Error::new(code, format!("Wayland: write: {e}")))
    }

    /// One message with a file descriptor (SCM_RIGHTS).
    pub fn send_fd(&mut self, m: &[u8], fd: i32) -> Result<()> {
        // SAFETY: the iovec and control buffer outlive the sendmsg call; the
        // cmsg pointer is the first header of a buffer sized for one fd.
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
                return Err(self.failed(format!("Wayland: sendmsg: {}", std::io::Error::last_os_error())));
            }
        }
        Ok(())
    }

    /// The next event, waiting until `deadline`. A wl_display.error is
    /// returned as an error (the connection is dead after it).
    pub fn next(&mut self, deadline: Instant) -> Result<Msg> {
        self.next_until(deadline)?.ok_or_else(|| Error::timeout("Wayland: the compositor did not answer in time"))
    }

    /// The fd an event just read carries (its fd argument).
    pub fn take_fd(&mut self) -> Option<OwnedFd> {
        self.fds.pop_front()
    }

    /// The next event, or None once `until` passed with none.
    pub fn next_until(&mut self, until: Instant) -> Result<Option<Msg>> {
        loop {
            if self.buf.len() >= 8 {
                let object = u32::from_ne_bytes(self.buf[0..4].try_into().expect("4 bytes"));
                let word = u32::from_ne_bytes(self.buf[4..8].try_into().expect("4 bytes"));
                let size = (word >> 16) as usize;
                if size < 8 {
                    return Err(self.failed("Wayland: malformed event"));
                }
                if self.buf.len() >= size {
                    let args = self.buf[8..size].to_vec();
                    self.buf.drain(..size);
                    let m = Msg { object, opcode: (word & 0xffff) as u16, args };
                    if m.object == DISPLAY && m.opcode == 0 {
                        let mut a = Args(&m.args);
                        let (obj, code, text) = (a.u32()?, a.u32()?, a.string()?);
                        return Err(self.failed(format!("Wayland protocol error on object {obj} (code {code}): {text}")));
                    }
                    return Ok(Some(m));
                }
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let code = self.code;
            self.s.set_read_timeout(Some(left.max(Duration::from_millis(1)))).map_err(|e| Error::new(code, format!("Wayland: {e}")))?;
            match self.receive() {
                Ok(0) => return Err(self.failed("Wayland: the compositor closed the connection")),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted) => continue,
                Err(e) => return Err(self.failed(format!("Wayland: read: {e}"))),
            }
        }
    }

    /// One recvmsg: the bytes to `buf`, any fds (close-on-exec) to `fds`.
    fn receive(&mut self) -> std::io::Result<usize> {
        const MAX_FDS: usize = 28; // libwayland's own limit per message batch
        let mut chunk = [0u8; 4096];
        // SAFETY: the iovec and control buffer outlive recvmsg; the cmsg walk
        // stays inside msg_controllen as the CMSG macros check.
        unsafe {
            let mut iov = libc::iovec { iov_base: chunk.as_mut_ptr() as *mut libc::c_void, iov_len: chunk.len() };
            let space = libc::CMSG_SPACE((MAX_FDS * std::mem::size_of::<i32>()) as u32) as usize;
            let mut control = vec![0u8; space];
            let mut hdr: libc::msghdr = std::mem::zeroed();
            hdr.msg_iov = &mut iov;
            hdr.msg_iovlen = 1;
            hdr.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            hdr.msg_controllen = space as _;
            let n = libc::recvmsg(self.s.as_raw_fd(), &mut hdr, libc::MSG_CMSG_CLOEXEC);
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut cmsg = libc::CMSG_FIRSTHDR(&hdr);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cmsg) as *const i32;
                    let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<i32>();
                    for i in 0..count {
                        self.fds.push_back(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.add(i))));
                    }
                }
                cmsg = libc::CMSG_NXTHDR(&hdr, cmsg);
            }
            self.buf.extend_from_slice(&chunk[..n as usize]);
            Ok(n as usize)
        }
    }

    /// wl_display.sync with callback `id`, then every event until its done:
    /// everything sent before was processed by the compositor (and any
    /// protocol error it raised is returned). Events other than the done are
    /// passed to `each`.
    pub fn roundtrip(&mut self, id: u32, deadline: Instant, mut each: impl FnMut(&Msg) -> Result<()>) -> Result<()> {
        self.send(&words(DISPLAY, 0, &[id]))?;
        loop {
            let e = self.next(deadline)?;
            if e.object == id {
                return Ok(());
            }
            each(&e)?;
        }
    }
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
        let w = words(9, 3, &[1, 2]);
        assert_eq!(w.len(), 16);
        assert_eq!(u32::from_ne_bytes(w[4..8].try_into().unwrap()), (16 << 16) | 3);
        assert_eq!(bind(2, 5, "wl_seat", 1, 10).len(), 8 + 4 + 4 + 8 + 4 + 4);
    }
}
