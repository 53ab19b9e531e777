//! Screenshot file formats (protocol 2.2, capability `screenshot.formats`):
//! PNG (lossless, the default), JPEG (pure-Rust `jpeg-encoder`) and lossy
//! WebP (libwebp, built from the source vendored in `libwebp-sys`). Large
//! windows are several times smaller as JPEG or WebP, which is what an agent
//! pays for when an image travels to a model. The image is encoded in memory
//! and written like the PNG: mode 0600 from the start, then renamed into
//! place, so a reader never sees a partial file.

use crate::error::{Code, Error, Result};
use crate::wire::messages::ImageFormat;
use crate::x11::capture;

/// Quality when the request names none (1-100, as libjpeg and cwebp count it).
pub const DEFAULT_QUALITY: u32 = 80;
/// libwebp's largest width or height.
const WEBP_MAX_SIDE: u32 = 16383;

fn failed(msg: impl Into<String>) -> Error {
    Error::new(Code::ScreenshotFailed, msg)
}

/// The quality asked for, checked (1-100); absent: DEFAULT_QUALITY.
pub fn quality_of(q: Option<u32>) -> Result<u32> {
    match q {
        None => Ok(DEFAULT_QUALITY),
        Some(q) if (1..=100).contains(&q) => Ok(q),
        Some(q) => Err(Error::invalid(format!("quality must be 1-100, not {q}")).with("reason", "quality-out-of-range")),
    }
}

/// Encode packed RGB (`width * height * 3` bytes) as JPEG at `quality`.
pub fn encode_jpeg(rgb: &[u8], width: u32, height: u32, quality: u32) -> Result<Vec<u8>> {
    let (w, h) = match (u16::try_from(width), u16::try_from(height)) {
        (Ok(w), Ok(h)) => (w, h),
        _ => return Err(failed(format!("a {width}x{height} image is too large for JPEG (65535 pixels a side)"))),
    };
    let mut out = Vec::with_capacity(rgb.len() / 8);
    // Baseline JFIF; chroma 4:2:0 below quality 90, 4:4:4 from 90 (the
    // crate's choice, as libjpeg's cjpeg); optimised Huffman tables: a few
    // percent smaller for one more pass.
    let mut enc = jpeg_encoder::Encoder::new(&mut out, quality as u8);
    enc.set_optimized_huffman_tables(true);
    enc.encode(rgb, w, h, jpeg_encoder::ColorType::Rgb).map_err(|e| failed(format!("JPEG encode: {e}")))?;
    Ok(out)
}

/// Encode packed RGB as lossy WebP at `quality` (libwebp's simple encoder).
pub fn encode_webp(rgb: &[u8], width: u32, height: u32, quality: u32) -> Result<Vec<u8>> {
    if width == 0 || height == 0 || width > WEBP_MAX_SIDE || height > WEBP_MAX_SIDE {
        return Err(failed(format!("a {width}x{height} image cannot be WebP (1-{WEBP_MAX_SIDE} pixels a side)")));
    }
    if rgb.len() != width as usize * height as usize * 3 {
        return Err(failed("WebP encode: the image buffer does not match its size"));
    }
    let mut ptr: *mut u8 = std::ptr::null_mut();
    // SAFETY: rgb holds height rows of width*3 bytes (checked above); libwebp
    // allocates the output, which is copied and then freed with WebPFree.
    let size = unsafe { libwebp_sys::WebPEncodeRGB(rgb.as_ptr(), width as i32, height as i32, (width * 3) as i32, quality as f32, &mut ptr) };
    if ptr.is_null() {
        return Err(failed("WebP encode failed (libwebp returned nothing)"));
    }
    let out = if size == 0 { None } else { Some(unsafe { std::slice::from_raw_parts(ptr, size) }.to_vec()) };
    unsafe { libwebp_sys::WebPFree(ptr as *mut std::ffi::c_void) };
    out.ok_or_else(|| failed("WebP encode failed (libwebp wrote no bytes)"))
}

/// Write the image at `path` in `format`. Returns the format written.
pub fn write_image(path: &str, rgb: &[u8], width: u32, height: u32, format: ImageFormat, quality: u32) -> Result<ImageFormat> {
    let bytes = match format {
        ImageFormat::Png => {
            capture::write_png(path, rgb, width, height)?;
            return Ok(ImageFormat::Png);
        }
        ImageFormat::Jpeg => encode_jpeg(rgb, width, height, quality)?,
        ImageFormat::Webp => encode_webp(rgb, width, height, quality)?,
    };
    write_atomic(path, &bytes)?;
    Ok(format)
}

/// Write encoded bytes atomically, 0600 (capture::write_file_atomic).
fn write_atomic(path: &str, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    capture::write_file_atomic(path, |file| file.write_all(bytes).map_err(|e| failed(format!("write {path}: {e}"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test card: smooth gradients with a few sharp edges, like a window.
    fn card(w: u32, h: u32) -> Vec<u8> {
        let mut rgb = Vec::with_capacity((w * h * 3) as usize);
        for y in 0..h {
            for x in 0..w {
                let edge = (x / 16 + y / 16) % 2 == 0;
                rgb.extend_from_slice(&[(x * 255 / w) as u8, (y * 255 / h) as u8, if edge { 200 } else { 40 }]);
            }
        }
        rgb
    }

    #[test]
    fn quality_defaults_and_bounds() {
        assert_eq!(quality_of(None).unwrap(), DEFAULT_QUALITY);
        assert_eq!(quality_of(Some(1)).unwrap(), 1);
        assert_eq!(quality_of(Some(100)).unwrap(), 100);
        assert_eq!(quality_of(Some(0)).unwrap_err().code, Code::InvalidArguments);
        assert_eq!(quality_of(Some(101)).unwrap_err().code, Code::InvalidArguments);
    }

    #[test]
    fn jpeg_is_a_jfif_file_of_the_size_and_quality_changes_it() {
        let (w, h) = (320, 200);
        let rgb = card(w, h);
        let hi = encode_jpeg(&rgb, w, h, 95).unwrap();
        let lo = encode_jpeg(&rgb, w, h, 20).unwrap();
        assert_eq!(&hi[..3], &[0xFF, 0xD8, 0xFF]);
        assert_eq!(&hi[hi.len() - 2..], &[0xFF, 0xD9]);
        assert!(lo.len() < hi.len(), "q20 {} >= q95 {}", lo.len(), hi.len());
        // The frame header (SOF0) carries the size.
        let sof = hi.windows(2).position(|p| p == [0xFF, 0xC0]).expect("SOF0");
        let hh = u16::from_be_bytes([hi[sof + 5], hi[sof + 6]]);
        let ww = u16::from_be_bytes([hi[sof + 7], hi[sof + 8]]);
        assert_eq!((ww as u32, hh as u32), (w, h));
    }

    #[test]
    fn webp_is_a_lossy_riff_file_of_the_size_and_quality_changes_it() {
        let (w, h) = (320, 200);
        let rgb = card(w, h);
        let hi = encode_webp(&rgb, w, h, 95).unwrap();
        let lo = encode_webp(&rgb, w, h, 10).unwrap();
        assert_eq!(&hi[..4], b"RIFF");
        assert_eq!(&hi[8..12], b"WEBP");
        assert_eq!(&hi[12..16], b"VP8 ", "lossy (VP8), not lossless (VP8L)");
        assert!(lo.len() < hi.len(), "q10 {} >= q95 {}", lo.len(), hi.len());
        // VP8 key frame header: start code 9d 01 2a, then 14-bit width and height.
        assert_eq!(&hi[23..26], &[0x9d, 0x01, 0x2a]);
        let ww = u16::from_le_bytes([hi[26], hi[27]]) & 0x3fff;
        let hh = u16::from_le_bytes([hi[28], hi[29]]) & 0x3fff;
        assert_eq!((ww as u32, hh as u32), (w, h));
    }

    #[test]
    fn oversize_images_are_refused_not_truncated() {
        assert_eq!(encode_webp(&[], 20000, 1, 80).unwrap_err().code, Code::ScreenshotFailed);
        assert_eq!(encode_jpeg(&[], 70000, 1, 80).unwrap_err().code, Code::ScreenshotFailed);
    }

    #[test]
    fn written_files_are_private_and_complete() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("deckhand-imgfmt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rgb = card(64, 48);
        for (f, magic) in [(ImageFormat::Png, &b"\x89PNG"[..]), (ImageFormat::Jpeg, &[0xFF, 0xD8][..]), (ImageFormat::Webp, &b"RIFF"[..])] {
            let p = dir.join(format!("x.{f:?}"));
            let got = write_image(p.to_str().unwrap(), &rgb, 64, 48, f, 80).unwrap();
            assert_eq!(got, f);
            let bytes = std::fs::read(&p).unwrap();
            assert!(bytes.starts_with(magic), "{f:?}");
            assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        }
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
        std::fs::remove_dir_all(&dir).ok();
    }
}
