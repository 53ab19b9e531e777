//! Frame codec: a 4-byte big-endian length, then one msgpack map with string
//! keys. Structs are always written as maps (`rmp_serde::to_vec_named`).

use serde::Serialize;
use std::io::{self, Read, Write};

/// Largest frame this helper reads or writes (announced in hello.limits).
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug)]
pub enum FrameError {
    /// The stream ended in the middle of a frame.
    Truncated,
    Oversized(usize),
    Malformed(String),
    NotAMap,
    Io(io::Error),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Truncated => write!(f, "stream ended inside a frame"),
            FrameError::Oversized(n) => write!(f, "frame of {n} bytes exceeds the limit of {MAX_FRAME_BYTES}"),
            FrameError::Malformed(m) => write!(f, "undecodable msgpack body: {m}"),
            FrameError::NotAMap => write!(f, "frame body is not a msgpack map"),
            FrameError::Io(e) => write!(f, "I/O: {e}"),
        }
    }
}

/// Read one frame body. `Ok(None)` on a clean end of stream (between frames).
pub fn read_frame<R: Read>(r: &mut R) -> Result<Option<Vec<u8>>, FrameError> {
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut head[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(FrameError::Truncated),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    let len = u32::from_be_bytes(head) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(FrameError::Oversized(len));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            FrameError::Truncated
        } else {
            FrameError::Io(e)
        }
    })?;
    Ok(Some(body))
}

/// Decode a frame body into a msgpack value; it must be a map with string keys.
pub fn decode_body(body: &[u8]) -> Result<rmpv::Value, FrameError> {
    let mut cur = body;
    let v = rmpv::decode::read_value(&mut cur).map_err(|e| FrameError::Malformed(e.to_string()))?;
    if !cur.is_empty() {
        return Err(FrameError::Malformed(format!("{} trailing bytes after the map", cur.len())));
    }
    match &v {
        rmpv::Value::Map(entries) => {
            if entries.iter().any(|(k, _)| !k.is_str()) {
                return Err(FrameError::NotAMap);
            }
        }
        _ => return Err(FrameError::NotAMap),
    }
    Ok(v)
}

/// Encode a message body (structs as maps, Option::None as nil).
pub fn encode_body<T: Serialize + ?Sized>(msg: &T) -> Vec<u8> {
    // Serializing our own plain structs cannot fail; a failure here is a bug.
    rmp_serde::to_vec_named(msg).expect("msgpack encoding of a helper message")
}

/// Encode a whole frame: length prefix + body.
pub fn encode_frame<T: Serialize + ?Sized>(msg: &T) -> Vec<u8> {
    let body = encode_body(msg);
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

pub fn write_frame<W: Write>(w: &mut W, frame: &[u8]) -> io::Result<()> {
    w.write_all(frame)?;
    w.flush()
}

/// Convert any serializable value to a msgpack value with named struct fields.
pub fn to_value<T: Serialize + ?Sized>(v: &T) -> rmpv::Value {
    let bytes = encode_body(v);
    rmpv::decode::read_value(&mut &bytes[..]).expect("re-decoding our own msgpack")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Serialize)]
    struct S {
        a: u32,
        b: Option<String>,
    }

    #[test]
    fn structs_are_maps_and_none_is_nil() {
        let v = to_value(&S { a: 1, b: None });
        let m = v.as_map().expect("map");
        assert_eq!(m[0].0.as_str(), Some("a"));
        assert_eq!(m[1].1, rmpv::Value::Nil);
    }

    #[test]
    fn frame_round_trip() {
        let f = encode_frame(&S { a: 7, b: Some("x".into()) });
        assert_eq!(u32::from_be_bytes([f[0], f[1], f[2], f[3]]) as usize, f.len() - 4);
        let mut r = &f[..];
        let body = read_frame(&mut r).unwrap().unwrap();
        let v = decode_body(&body).unwrap();
        assert_eq!(v.as_map().unwrap().len(), 2);
        assert!(read_frame(&mut r).unwrap().is_none(), "clean EOF after the frame");
    }

    #[test]
    fn truncated_and_oversized() {
        let f = encode_frame(&S { a: 7, b: None });
        let mut r = &f[..f.len() - 1];
        assert!(matches!(read_frame(&mut r), Err(FrameError::Truncated)));
        let mut r = &[0u8, 0][..];
        assert!(matches!(read_frame(&mut r), Err(FrameError::Truncated)));
        let big = ((MAX_FRAME_BYTES + 1) as u32).to_be_bytes();
        let mut r = &big[..];
        assert!(matches!(read_frame(&mut r), Err(FrameError::Oversized(_))));
    }

    #[test]
    fn non_map_and_garbage_rejected() {
        let arr = rmp_serde::to_vec(&(1, 2)).unwrap();
        assert!(matches!(decode_body(&arr), Err(FrameError::NotAMap)));
        assert!(decode_body(&[0xc1]).is_err());
        assert!(matches!(decode_body(&[0xdf, 0, 0, 0, 5]), Err(FrameError::Malformed(_))), "map header without entries");
        let mut two = encode_body(&S { a: 1, b: None });
        two.push(0xc0);
        assert!(matches!(decode_body(&two), Err(FrameError::Malformed(_))));
    }
}
