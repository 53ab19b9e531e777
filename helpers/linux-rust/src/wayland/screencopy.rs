//! wlr-screencopy (zwlr_screencopy_manager_v1) capture of a screen region,
//! speaking the Wayland wire protocol directly on the compositor's socket
//! (no libwayland): a registry round trip, wl_shm and the screencopy
//! manager bound, the output's region captured into a memfd-backed wl_shm
//! buffer passed with SCM_RIGHTS (the wire itself: `super::wire`).

use super::wire::{message, put_str, put_u32, Args, Conn, DISPLAY};
use crate::error::{Code, Error, Result};
use crate::wire::messages::Rect;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

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
    let mut c = Conn::connect(Code::ScreenshotFailed)?;
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
    fn pixels_become_rgb_and_flip_when_inverted() {
        // 2x2, stride 12 (4 bytes of padding per row): B, G, R, X words.
        let raw = [1, 2, 3, 0, 4, 5, 6, 0, 9, 9, 9, 9, 7, 8, 9, 0, 10, 11, 12, 0, 9, 9, 9, 9];
        assert_eq!(to_rgb(&raw, 2, 2, 12, false), vec![3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10]);
        assert_eq!(to_rgb(&raw, 2, 2, 12, true), vec![9, 8, 7, 12, 11, 10, 3, 2, 1, 6, 5, 4]);
    }
}
