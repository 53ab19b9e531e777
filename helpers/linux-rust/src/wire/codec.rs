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
    /// A length prefix above the limit whose body does not even start like
    /// a msgpack map: the stream is out of step, nothing can be trusted.
    Oversized(usize),
    /// A frame above the limit that was read past and discarded (never
    /// buffered); `head` holds its first bytes (at most `SKIPPED_HEAD`) so
    /// the request's id can be found and answered.
    Skipped { len: usize, head: Vec<u8> },
    Malformed(String),
    NotAMap,
    Io(io::Error),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Truncated => write!(f, "stream ended inside a frame"),
            FrameError::Oversized(n) => write!(f, "frame of {n} bytes exceeds the limit of {MAX_FRAME_BYTES} and is not a msgpack map"),
            FrameError::Skipped { len, .. } => write!(f, "frame of {len} bytes exceeds the limit of {MAX_FRAME_BYTES}: skipped"),
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
        return skip_frame(r, len);
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

/// How much of an oversized frame is kept to find its request id.
pub const SKIPPED_HEAD: usize = 4096;

fn eof_is_truncated(e: io::Error) -> FrameError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        FrameError::Truncated
    } else {
        FrameError::Io(e)
    }
}

/// A frame above the limit: if its body starts like a msgpack map (what
/// every frame is), its length prefix is believed and exactly `len` bytes
/// are read and thrown away in small pieces (nothing is buffered but the
/// first `SKIPPED_HEAD` bytes), so the next frame is read in step. A body
/// that does not start with a map marker means the stream is out of step
/// (the prefix is garbage, skipping by it could swallow later frames):
/// `Oversized`, a fatal error as before.
fn skip_frame<R: Read>(r: &mut R, len: usize) -> Result<Option<Vec<u8>>, FrameError> {
    let mut first = [0u8; 1];
    r.read_exact(&mut first).map_err(eof_is_truncated)?;
    if !is_map_marker(first[0]) {
        return Err(FrameError::Oversized(len));
    }
    let mut head = vec![first[0]; 1];
    let more = (SKIPPED_HEAD - 1).min(len - 1);
    head.resize(1 + more, 0);
    r.read_exact(&mut head[1..]).map_err(eof_is_truncated)?;
    let rest = (len - head.len()) as u64;
    let copied = io::copy(&mut r.take(rest), &mut io::sink()).map_err(FrameError::Io)?;
    if copied < rest {
        return Err(FrameError::Truncated);
    }
    Err(FrameError::Skipped { len, head })
}

fn is_map_marker(b: u8) -> bool {
    (0x80..=0x8f).contains(&b) || b == 0xde || b == 0xdf
}

/// The first entries of a (truncated) request body: `type`, `id` and `op`
/// when they come before the first value that does not fit in `head` (the
/// orchestrator writes type, id, op, deadline_ms, then args). Never
/// allocates much (rmpv caps preallocation) and never panics.
pub fn peek_head(head: &[u8]) -> (Option<String>, Option<u64>, Option<String>) {
    let (mut kind, mut id, mut op) = (None, None, None);
    let Some((&m, rest)) = head.split_first() else { return (kind, id, op) };
    let (n, mut cur) = match m {
        0x80..=0x8f => ((m & 0x0f) as u64, rest),
        0xde if rest.len() >= 2 => (u16::from_be_bytes([rest[0], rest[1]]) as u64, &rest[2..]),
        0xdf if rest.len() >= 4 => (u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as u64, &rest[4..]),
        _ => return (kind, id, op),
    };
    for _ in 0..n.min(64) {
        let Ok(k) = rmpv::decode::read_value(&mut cur) else { break };
        let Ok(v) = rmpv::decode::read_value(&mut cur) else { break };
        match k.as_str() {
            Some("type") => kind = v.as_str().map(str::to_string),
            Some("id") => id = v.as_u64(),
            Some("op") => op = v.as_str().map(str::to_string),
            _ => {}
        }
    }
    (kind, id, op)
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
        // A prefix above the limit followed by something that is not a map:
        // out of step, fatal.
        let mut big = ((MAX_FRAME_BYTES + 1) as u32).to_be_bytes().to_vec();
        big.push(0x92);
        let mut r = &big[..];
        assert!(matches!(read_frame(&mut r), Err(FrameError::Oversized(_))));
        // ... or by the end of the stream.
        let big = ((MAX_FRAME_BYTES + 1) as u32).to_be_bytes();
        let mut r = &big[..];
        assert!(matches!(read_frame(&mut r), Err(FrameError::Truncated)));
    }

    /// An oversized request is skipped exactly (the frame after it is read
    /// in step), its head keeps the id, and nothing close to its size is
    /// held in memory.
    #[test]
    fn oversized_frame_is_skipped_and_the_next_one_read() {
        use rmpv::Value;
        let len = MAX_FRAME_BYTES + 1000;
        let req = Value::Map(vec![
            ("type".into(), "request".into()),
            ("id".into(), 77.into()),
            ("op".into(), "element_action".into()),
            ("deadline_ms".into(), 5000.into()),
            ("args".into(), Value::Map(vec![("text".into(), Value::String("x".repeat(len).into()))])),
        ]);
        let mut body = Vec::new();
        rmpv::encode::write_value(&mut body, &req).unwrap();
        let mut stream = (body.len() as u32).to_be_bytes().to_vec();
        stream.extend_from_slice(&body);
        let next = encode_frame(&S { a: 9, b: None });
        stream.extend_from_slice(&next);
        let mut r = &stream[..];
        match read_frame(&mut r) {
            Err(FrameError::Skipped { len: n, head }) => {
                assert_eq!(n, body.len());
                assert_eq!(head.len(), SKIPPED_HEAD);
                assert_eq!(peek_head(&head), (Some("request".into()), Some(77), Some("element_action".into())));
            }
            other => panic!("{other:?}"),
        }
        let body = read_frame(&mut r).unwrap().expect("the next frame");
        assert_eq!(decode_body(&body).unwrap().as_map().unwrap()[0].1, Value::from(9));
        assert!(read_frame(&mut r).unwrap().is_none());
        // Truncated inside the skipped part: the stream ended.
        let mut r = &stream[..stream.len() / 2];
        assert!(matches!(read_frame(&mut r), Err(FrameError::Truncated)));
    }

    #[test]
    fn peek_head_is_tolerant() {
        assert_eq!(peek_head(&[]), (None, None, None));
        assert_eq!(peek_head(&[0x92, 1, 2]), (None, None, None));
        assert_eq!(peek_head(&[0xdf, 0xff]), (None, None, None));
        // A map of 2^32-1 entries, cut right after its header.
        assert_eq!(peek_head(&[0xdf, 0xff, 0xff, 0xff, 0xff]), (None, None, None));
        // id first, then a huge string header with no bytes behind it.
        let mut h = vec![0x82, 0xa2, b'i', b'd', 0x05, 0xa4, b'a', b'r', b'g', b's', 0xdb, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(peek_head(&h), (None, Some(5), None));
        h.truncate(3);
        assert_eq!(peek_head(&h), (None, None, None));
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
