//! The golden vectors of helpers/protocol/vectors (generated from
//! src/wire/vectors.ts): every vector's bytes decode to its meaning, and
//! decoding into this helper's typed structs and re-encoding gives the same
//! message back (modulo map key order and integer widths) on the fields this
//! helper knows: a vector may carry fields of a newer minor version, which
//! the typed decode drops (they are listed on stderr). A newer helper's
//! vocabulary words are compared as the contract reads them (`tolerated`):
//! an unknown role or action name is `other`, an unknown state is dropped.

use super::codec::{decode_body, encode_body, read_frame, to_value};
use super::messages::*;
use super::vocabulary::{ActionName, Role, State};
use rmpv::Value;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::PathBuf;

fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../protocol/vectors")
}

/// Semantic equality: maps compare as sets of entries, numbers by value.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| y.iter().any(|(k2, v2)| k.as_str() == k2.as_str() && k.as_str().is_some() && same(v, v2)))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Value::Integer(_) | Value::F32(_) | Value::F64(_), Value::Integer(_) | Value::F32(_) | Value::F64(_)) => {
            match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
                (Some(p), Some(q), _, _) => p == q,
                (_, _, Some(p), Some(q)) => p == q,
                _ => a.as_f64().zip(b.as_f64()).map(|(p, q)| p == q).unwrap_or(false),
            }
        }
        _ => a == b,
    }
}

/// `ours` (our re-encoding) against `theirs` (the vector) on the fields we
/// know: every field we wrote must be in the vector with the same meaning,
/// except an optional field the vector omits (we write nil or a default
/// for it); fields only in the vector are unknown to us and collected in
/// `dropped`.
fn known_same(ours: &Value, theirs: &Value, at: &str, dropped: &mut Vec<String>) -> bool {
    match (ours, theirs) {
        (Value::Map(x), Value::Map(y)) => {
            let key = |k: &Value| k.as_str().map(str::to_string);
            for (k2, _) in y {
                if !x.iter().any(|(k, _)| key(k) == key(k2)) {
                    dropped.push(format!("{at}.{}", key(k2).unwrap_or_default()));
                }
            }
            x.iter().all(|(k, v)| {
                let Some(name) = key(k) else { return false };
                match y.iter().find(|(k2, _)| key(k2).as_deref() == Some(&name)) {
                    Some((_, v2)) => known_same(v, v2, &format!("{at}.{name}"), dropped),
                    None => is_default(v),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).enumerate().all(|(i, (p, q))| known_same(p, q, &format!("{at}[{i}]"), dropped))
        }
        _ => same(ours, theirs),
    }
}

/// What `#[serde(default)]` makes of an absent field.
fn is_default(v: &Value) -> bool {
    match v {
        Value::Nil => true,
        Value::Boolean(b) => !b,
        Value::Integer(i) => i.as_u64() == Some(0),
        Value::String(s) => s.as_str() == Some(""),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// A message as the contract reads it: in every node or locator (a map with
/// `role` and `native_role`), an unknown role is "other", unknown states
/// are dropped and an unknown action name is "other".
fn tolerated(v: &Value) -> Value {
    match v {
        Value::Map(m) => {
            let node = ["role", "native_role"].iter().all(|k| m.iter().any(|(kk, _)| kk.as_str() == Some(k)));
            Value::Map(
                m.iter()
                    .map(|(k, x)| {
                        let x = match (node, k.as_str(), x) {
                            (true, Some("role"), Value::String(r)) => Value::from(Role::parse(r.as_str().unwrap_or("")).unwrap_or(Role::Other).as_str()),
                            (true, Some("states"), Value::Array(a)) => {
                                Value::Array(a.iter().filter(|s| s.as_str().and_then(State::parse).is_some()).cloned().collect())
                            }
                            (true, Some("actions"), Value::Array(a)) => Value::Array(
                                a.iter()
                                    .map(|act| match act {
                                        Value::Map(am) => Value::Map(
                                            am.iter()
                                                .map(|(ak, av)| match (ak.as_str(), av.as_str()) {
                                                    (Some("name"), Some(n)) => (ak.clone(), Value::from(ActionName::parse(n).unwrap_or(ActionName::Other).as_str())),
                                                    _ => (ak.clone(), tolerated(av)),
                                                })
                                                .collect(),
                                        ),
                                        other => tolerated(other),
                                    })
                                    .collect(),
                            ),
                            _ => tolerated(x),
                        };
                        (k.clone(), x)
                    })
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(tolerated).collect()),
        other => other.clone(),
    }
}

fn roundtrip<T: DeserializeOwned + Serialize>(v: &Value, what: &str) -> Value {
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, v).unwrap();
    let typed: T = rmp_serde::from_slice(&bytes).unwrap_or_else(|e| panic!("{what}: typed decode failed: {e}"));
    to_value(&typed)
}

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_map()?.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
}

fn args_roundtrip(op: &str, args: &Value) -> Value {
    match op {
        "permissions" | "list_apps" => roundtrip::<NoArgs>(args, op),
        "list_windows" => roundtrip::<ListWindowsArgs>(args, op),
        "get_tree" => roundtrip::<GetTreeArgs>(args, op),
        "screenshot" => roundtrip::<ScreenshotArgs>(args, op),
        "hit_test" => roundtrip::<HitTestArgs>(args, op),
        "element_action" => roundtrip::<ElementActionArgs>(args, op),
        "input" => roundtrip::<InputArgs>(args, op),
        "watch_user_input" => roundtrip::<WatchArgs>(args, op),
        "set_accessibility" => roundtrip::<SetAccessibilityArgs>(args, op),
        "focused_element" => roundtrip::<FocusedElementArgs>(args, op),
        "settle" => roundtrip::<SettleArgs>(args, op),
        // ---- issue 15: click
        "point_click" => roundtrip::<crate::ops::point_click::PointClickArgs>(args, op),
        // ---- end click
        other => panic!("vector for unknown op {other}"),
    }
}

fn result_roundtrip(op: &str, r: &Value) -> Value {
    match op {
        "permissions" => roundtrip::<PermissionsResult>(r, op),
        "list_apps" => roundtrip::<ListAppsResult>(r, op),
        "list_windows" => roundtrip::<ListWindowsResult>(r, op),
        "get_tree" => roundtrip::<GetTreeResult>(r, op),
        "screenshot" => roundtrip::<ScreenshotResult>(r, op),
        "hit_test" => roundtrip::<HitTestResult>(r, op),
        "element_action" => roundtrip::<ElementActionResult>(r, op),
        "input" => roundtrip::<InputResult>(r, op),
        "watch_user_input" => roundtrip::<WatchResult>(r, op),
        "set_accessibility" => roundtrip::<SetAccessibilityResult>(r, op),
        "focused_element" => roundtrip::<FocusedElementResult>(r, op),
        "settle" => roundtrip::<SettleResult>(r, op),
        // ---- issue 15: click
        "point_click" => roundtrip::<crate::ops::point_click::PointClickResult>(r, op),
        // ---- end click
        other => panic!("vector for unknown op {other}"),
    }
}

#[test]
fn golden_vectors_decode_and_reencode() {
    let dir = vectors_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIPPED: no golden vectors at {} (generate them with the orchestrator's gen-protocol script)", dir.display());
        return;
    };
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    names.sort();
    assert!(!names.is_empty(), "vectors folder is empty");
    let mut checked = 0;
    for json_path in names {
        let name = json_path.file_name().unwrap().to_string_lossy().to_string();
        let meta: serde_json::Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
        let bin = std::fs::read(json_path.with_extension("bin")).unwrap_or_else(|e| panic!("{name}: no .bin: {e}"));
        if let Some(hex) = meta.get("frame_hex").and_then(|h| h.as_str()) {
            let from_hex: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
            assert_eq!(from_hex, bin, "{name}: .bin and frame_hex differ");
        }
        // The bytes decode to the vector's meaning.
        let mut r = &bin[..];
        let body = read_frame(&mut r).unwrap().unwrap_or_else(|| panic!("{name}: empty"));
        assert!(r.is_empty(), "{name}: trailing bytes after the frame");
        let v = decode_body(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
        let meaning: Value = rmpv::decode::read_value(&mut &rmp_serde::to_vec_named(&meta["message"]).unwrap()[..]).unwrap();
        assert!(same(&v, &meaning), "{name}: bytes decode to {v} but the vector says {meaning}");
        // Through our typed structs and back.
        let kind = get(&v, "type").and_then(|t| t.as_str()).unwrap().to_string();
        let op = meta.get("op").and_then(|o| o.as_str()).map(str::to_string);
        let again = match kind.as_str() {
            "hello" => roundtrip::<Hello>(&v, &name),
            "event" => roundtrip::<Event>(&v, &name),
            "cancel" => {
                assert!(matches!(parse_incoming(&v), Ok(Incoming::Cancel { .. })), "{name}");
                v.clone()
            }
            "request" => {
                let Ok(Incoming::Request { id, op: rop, deadline_ms, args }) = parse_incoming(&v) else { panic!("{name}: not a request") };
                let args = args_roundtrip(&rop, &args);
                Value::Map(vec![
                    ("type".into(), "request".into()),
                    ("id".into(), id.into()),
                    ("op".into(), rop.as_str().into()),
                    ("deadline_ms".into(), deadline_ms.into()),
                    ("args".into(), args),
                ])
            }
            "response" => {
                let mut resp: Response = rmp_serde::from_slice(&body).unwrap_or_else(|e| panic!("{name}: {e}"));
                if let (Some(op), Some(result)) = (&op, &resp.result) {
                    resp.result = Some(result_roundtrip(op, result));
                }
                to_value(&resp)
            }
            other => panic!("{name}: unknown frame type {other}"),
        };
        let mut dropped = Vec::new();
        let read = tolerated(&v);
        assert!(known_same(&again, &read, "", &mut dropped), "{name}: re-encoded as {again} but was {read}");
        if !dropped.is_empty() {
            eprintln!("{name}: fields unknown to this helper, ignored: {}", dropped.join(", "));
        }
        // And our own encoding of it is a valid frame body.
        let _ = decode_body(&encode_body(&again)).unwrap();
        checked += 1;
    }
    eprintln!("checked {checked} golden vectors");
}

#[test]
fn known_same_tolerates_unknown_and_defaulted_fields() {
    let m = |e: Vec<(&str, Value)>| Value::Map(e.into_iter().map(|(k, v)| (Value::from(k), v)).collect());
    let theirs = m(vec![("a", 1.into()), ("extra", m(vec![("x", 1.into())]))]);
    let mut dropped = Vec::new();
    assert!(known_same(&m(vec![("a", 1.into()), ("opt", Value::Nil), ("n", 0.into())]), &theirs, "", &mut dropped));
    assert_eq!(dropped, [".extra"]);
    assert!(!known_same(&m(vec![("a", 2.into())]), &theirs, "", &mut Vec::new()), "a known field differs");
    assert!(!known_same(&m(vec![("a", 1.into()), ("n", 3.into())]), &theirs, "", &mut Vec::new()), "a non-default field is missing from the vector");
}

/// The vector's message, by name (None when the vectors are not generated).
fn vector(name: &str) -> Option<Value> {
    let dir = vectors_dir();
    let entries = std::fs::read_dir(&dir).ok()?;
    let path = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "bin") && p.file_stem().is_some_and(|s| s.to_string_lossy().split_once('-').is_some_and(|(_, n)| n == name)))
        .unwrap_or_else(|| panic!("no vector {name} in {}", dir.display()));
    let bin = std::fs::read(path).unwrap();
    let body = read_frame(&mut &bin[..]).unwrap().unwrap();
    Some(decode_body(&body).unwrap())
}

fn typed<T: DeserializeOwned>(v: &Value) -> T {
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, v).unwrap();
    rmp_serde::from_slice(&bytes).unwrap()
}

#[test]
fn protocol_2_vectors_mean_what_they_say() {
    let Some(hello) = vector("hello") else { return };
    let h: Hello = typed(&hello);
    assert_eq!(h.protocol, PROTOCOL, "the golden hello is this helper's protocol");
    // ---- issue 15: click (2.3)
    assert_eq!(PROTOCOL, [2, 3]);
    // ---- end click

    // A newer helper's words: the role reads as other, the unknown state is
    // dropped, the unknown action is other with its native name kept.
    let v = vector("response-get-tree-unknown-words").unwrap();
    let r: GetTreeResult = typed(get(&v, "result").unwrap());
    let n = &r.nodes[0];
    assert_eq!(n.role, Role::Other);
    assert_eq!(n.native_role, "hologram view");
    assert_eq!(n.states, [State::Focused]);
    assert_eq!(n.actions, [NodeAction { name: ActionName::Other, native: "rotate".into() }]);

    // A node with the 2.0 words, and a secure one.
    let v = vector("response-get-tree").unwrap();
    let r: GetTreeResult = typed(get(&v, "result").unwrap());
    assert_eq!((r.nodes[0].role, r.nodes[0].native_role.as_str()), (Role::Window, "frame"));
    assert_eq!(r.nodes[1].actions, [NodeAction { name: ActionName::Press, native: "click".into() }]);
    let p = &r.nodes[2];
    assert!(p.role == Role::SecureTextField && p.states.contains(&State::Secure) && p.secure && p.value.is_none());

    // Screenshot: region and max_width; absent in a 1.x request.
    let v = vector("request-screenshot-region-scale").unwrap();
    let a: ScreenshotArgs = typed(get(&v, "args").unwrap());
    assert_eq!((a.region, a.max_width), (Some(Rect::new(100, 80, 400, 300)), Some(200)));
    let v = vector("request-screenshot").unwrap();
    let a: ScreenshotArgs = typed(get(&v, "args").unwrap());
    assert_eq!((a.region, a.max_width), (None, None));
    let v = vector("response-screenshot-scaled").unwrap();
    let r: ScreenshotResult = typed(get(&v, "result").unwrap());
    assert_eq!((r.width, r.height, r.origin.x, r.origin.y, r.scale), (200, 150, 100, 80, 0.5));

    // Locators carry both roles; secondary takes a native action name.
    let v = vector("request-element-action-secondary").unwrap();
    let a: ElementActionArgs = typed(get(&v, "args").unwrap());
    assert_eq!((a.locator.role, a.locator.native_role.as_str()), (Role::TreeItem, "tree item"));
    assert_eq!(a.action_name.as_deref(), Some("expand or contract"));

    // Process identity and neutral permission ids.
    let v = vector("response-list-apps-identity").unwrap();
    let r: ListAppsResult = typed(get(&v, "result").unwrap());
    let app = &r.apps[0];
    assert!(app.executable_deleted);
    assert_eq!((app.process_name.as_deref(), app.bundle_id.as_deref()), (Some("gnome-text-edit"), Some("org.gnome.TextEditor")));
    let v = vector("response-list-apps-toolkit").unwrap();
    let r: ListAppsResult = typed(get(&v, "result").unwrap());
    assert!(!r.apps[0].executable_deleted && r.apps[0].process_name.is_none() && r.apps[0].bundle_id.is_none(), "1.2 apps decode");
    let v = vector("response-permissions").unwrap();
    let r: PermissionsResult = typed(get(&v, "result").unwrap());
    assert_eq!((r.checks[0].id.as_str(), r.checks[0].native_id.as_deref()), ("accessibility", Some("atspi_bus")));
}

#[test]
fn tolerated_reads_unknown_words_as_the_contract_does() {
    let m = |e: Vec<(&str, Value)>| Value::Map(e.into_iter().map(|(k, v)| (Value::from(k), v)).collect());
    let node = m(vec![
        ("role", "hologram".into()),
        ("native_role", "x".into()),
        ("states", Value::Array(vec!["focused".into(), "shimmering".into()])),
        ("actions", Value::Array(vec![m(vec![("name", "rotate".into()), ("native", "rotate".into())])])),
    ]);
    let want = m(vec![
        ("role", "other".into()),
        ("native_role", "x".into()),
        ("states", Value::Array(vec!["focused".into()])),
        ("actions", Value::Array(vec![m(vec![("name", "other".into()), ("native", "rotate".into())])])),
    ]);
    assert_eq!(tolerated(&m(vec![("nodes", Value::Array(vec![node]))])), m(vec![("nodes", Value::Array(vec![want]))]));
    // Not a node: a "role" elsewhere is left alone.
    let other = m(vec![("role", "hologram".into())]);
    assert_eq!(tolerated(&other), other);
}

// ---- issue 14: screenshot options
#[test]
fn protocol_2_2_screenshot_format_vectors() {
    let Some(v) = vector("request-screenshot-format") else { return };
    let a: ScreenshotArgs = typed(get(&v, "args").unwrap());
    assert_eq!((a.format, a.quality, a.max_width), (Some(ImageFormat::Webp), Some(60), None));
    // A 2.1 request has neither: PNG at the default quality.
    let v = vector("request-screenshot").unwrap();
    let a: ScreenshotArgs = typed(get(&v, "args").unwrap());
    assert_eq!((a.format, a.quality), (None, None));
    let v = vector("response-screenshot-format").unwrap();
    let r: ScreenshotResult = typed(get(&v, "result").unwrap());
    assert_eq!(r.format, Some(ImageFormat::Webp));
    let v = vector("response-screenshot-scaled").unwrap();
    let r: ScreenshotResult = typed(get(&v, "result").unwrap());
    assert_eq!(r.format, None, "a 2.1 result names no format");
}
// ---- end screenshot options

// ---- issue 15: click
#[test]
fn protocol_2_3_point_click_vectors() {
    use crate::ops::point_click::{ClickOutcome, Held, Level, PointClickArgs, PointClickResult};
    let Some(v) = vector("request-point-click") else { return };
    let a: PointClickArgs = typed(get(&v, "args").unwrap());
    assert_eq!((a.x, a.y, a.pid, a.count, a.restore_pointer), (608, 404, 4242, 1, true));
    assert_eq!(a.press.as_ref().unwrap().actions, ["press", "toggle"]);
    assert!(a.expect.is_none());
    let v = vector("request-point-click-expect").unwrap();
    let a: PointClickArgs = typed(get(&v, "args").unwrap());
    assert!(a.press.is_none() && a.hold_words.is_empty());
    assert_eq!(a.expect.unwrap()[1], Level { path: vec![0, 2], native_role: "push button".into(), name: "Delete".into() });
    let v = vector("response-point-click-held").unwrap();
    let r: PointClickResult = typed(get(&v, "result").unwrap());
    assert_eq!((r.outcome, r.held, r.ancestors.len()), (ClickOutcome::Held, Some(Held::Name), 2));
    assert_eq!(r.ancestors[1].name, "Delete");
    let v = vector("response-point-click-clicked").unwrap();
    let r: PointClickResult = typed(get(&v, "result").unwrap());
    assert_eq!((r.outcome, r.held), (ClickOutcome::Clicked, None));
    assert_eq!(r.node.unwrap().name, "Canvas");
}
// ---- end click
