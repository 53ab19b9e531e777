//! A tiny driver for the helper: spawns it, prints its hello, sends each
//! request given as JSON on argv and prints each response as JSON with the
//! round-trip time.
//!
//!   cargo run --release --example drive -- '{"op":"list_windows","args":{"pid":null}}'
//!   drive --hello --repeat 5 '{"op":"get_tree","args":{...}}'
//!   drive --parallel REQ1 REQ2   (send all, then read the answers)
//!   drive --cycle --repeat 5 REQ1 REQ2   (REQ1 REQ2 REQ1 REQ2 ...)
//!
//! A request is {"op", "args", "deadline_ms"?, "cancel_after_ms"?}; ids are
//! assigned here. With --parallel, "cancel_after_ms" sends a `cancel` frame
//! for that request after so many ms. An argument `@FILE` reads the request
//! from FILE.
//! DECKHAND_HELPER overrides the helper path (default: next to this binary's
//! target dir, target/release/deckhand-helper-linux).

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

fn read_frame(r: &mut impl Read) -> Option<rmpv::Value> {
    let mut head = [0u8; 4];
    r.read_exact(&mut head).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
    r.read_exact(&mut body).ok()?;
    rmpv::decode::read_value(&mut &body[..]).ok()
}

fn write_frame(w: &mut impl Write, v: &serde_json::Value) {
    let body = rmp_serde::to_vec_named(v).expect("encode");
    w.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    w.write_all(&body).unwrap();
    w.flush().unwrap();
}

fn to_json(v: &rmpv::Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<unprintable: {e}>"))
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut show_hello = false;
    let mut repeat = 1usize;
    let mut quiet = false;
    let mut parallel = false;
    let mut cycle = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--hello" => {
                show_hello = true;
                args.remove(i);
            }
            "--parallel" => {
                parallel = true;
                args.remove(i);
            }
            "--cycle" => {
                cycle = true;
                args.remove(i);
            }
            "--quiet" => {
                quiet = true;
                args.remove(i);
            }
            "--repeat" => {
                repeat = args[i + 1].parse().expect("--repeat N");
                args.drain(i..i + 2);
            }
            _ => i += 1,
        }
    }
    // `@FILE`: the request is read from FILE (a drag of 10,000 points does
    // not fit in one argv string).
    for a in args.iter_mut() {
        if let Some(path) = a.strip_prefix('@') {
            *a = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
    }
    let helper = std::env::var("DECKHAND_HELPER").unwrap_or_else(|_| {
        let exe = std::env::current_exe().unwrap();
        // target/release/examples/drive -> target/release/deckhand-helper-linux
        exe.parent().and_then(|p| p.parent()).unwrap().join("deckhand-helper-linux").to_string_lossy().into_owned()
    });
    let mut child = Command::new(&helper).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("spawn helper");
    let stdin = std::sync::Arc::new(std::sync::Mutex::new(child.stdin.take().unwrap()));
    let mut stdout = child.stdout.take().unwrap();
    let t0 = Instant::now();
    let hello = read_frame(&mut stdout).expect("hello frame");
    eprintln!("[drive] hello after {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    if show_hello {
        println!("{}", to_json(&hello));
    }
    let mut id = 0u64;
    if parallel {
        // Send every request at once, then read the answers as they come.
        let t = Instant::now();
        for a in &args {
            let req: serde_json::Value = serde_json::from_str(a).expect("request JSON");
            id += 1;
            write_frame(&mut *stdin.lock().unwrap(), &serde_json::json!({
                "type": "request", "id": id, "op": req["op"],
                "deadline_ms": req.get("deadline_ms").cloned().unwrap_or(serde_json::json!(10000)),
                "args": req.get("args").cloned().unwrap_or(serde_json::json!({})),
            }));
            if let Some(ms) = req.get("cancel_after_ms").and_then(|m| m.as_u64()) {
                let (stdin, cid) = (stdin.clone(), id);
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    eprintln!("[drive] cancel #{cid} after {ms} ms");
                    write_frame(&mut *stdin.lock().unwrap(), &serde_json::json!({"type": "cancel", "id": cid}));
                });
            }
        }
        let mut left = id;
        while left > 0 {
            let v = read_frame(&mut stdout).expect("frame");
            let is_resp = v.as_map().map(|m| m.iter().any(|(k, v)| k.as_str() == Some("type") && v.as_str() == Some("response"))).unwrap_or(false);
            if is_resp {
                left -= 1;
                let rid = v.as_map().and_then(|m| m.iter().find(|(k, _)| k.as_str() == Some("id")).and_then(|(_, v)| v.as_u64())).unwrap_or(0);
                eprintln!("[drive] response #{rid} after {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
            }
            if !quiet || !is_resp {
                println!("{}", to_json(&v));
            }
        }
        args.clear();
    }
    // --cycle: the whole list `repeat` times (A B A B ...), else each
    // request `repeat` times in turn (A A B B ...).
    let order: Vec<&String> = if cycle {
        (0..repeat).flat_map(|_| args.iter()).collect()
    } else {
        args.iter().flat_map(|a| std::iter::repeat_n(a, repeat)).collect()
    };
    for a in order {
        let req: serde_json::Value = serde_json::from_str(a).expect("request JSON");
        {
            id += 1;
            let frame = serde_json::json!({
                "type": "request",
                "id": id,
                "op": req["op"],
                "deadline_ms": req.get("deadline_ms").cloned().unwrap_or(serde_json::json!(10000)),
                "args": req.get("args").cloned().unwrap_or(serde_json::json!({})),
            });
            let t = Instant::now();
            write_frame(&mut *stdin.lock().unwrap(), &frame);
            // Skip event frames until our response arrives.
            loop {
                let v = read_frame(&mut stdout).expect("response frame");
                let is_resp = v.as_map().map(|m| m.iter().any(|(k, v)| k.as_str() == Some("type") && v.as_str() == Some("response"))).unwrap_or(false);
                if !is_resp {
                    println!("{}", to_json(&v));
                    continue;
                }
                let ms = t.elapsed().as_secs_f64() * 1e3;
                eprintln!("[drive] {} #{id}: {ms:.3} ms", req["op"]);
                if !quiet {
                    println!("{}", to_json(&v));
                }
                break;
            }
        }
    }
    drop(stdin); // the cancel threads are done by now (or never fire): EOF

    let status = child.wait().expect("wait");
    eprintln!("[drive] helper exited: {status}");
}
