//! Tests of the tree reader against a fake AT-SPI application served over a
//! peer-to-peer D-Bus connection (issue 15): what the reader sends, how many
//! calls it has in flight at once, which limits it keeps, and how a direct
//! connection is chosen, used and given up. The fake answers the calls the
//! reader makes (Cache.GetItems, GetChildren, GetExtents, GetActions,
//! Properties.Get, GetApplicationBusAddress) from a small model, and holds
//! its answers back until no new call has come for HOLD: every call the
//! reader had in flight is then held at once, so the largest batch held is
//! the reader's largest number of calls in flight.

use super::tree::{self, Limits};
use super::{direct, A11y, ObjRef, CACHE_PATH, ROOT_PATH};
use crate::wire::messages::Rect;
use futures_util::StreamExt;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use zbus::zvariant::{OwnedObjectPath, Value};

const BUS: &str = ":1.42";
const FRAME: &str = "/org/a11y/atspi/accessible/1";
const HOLD: Duration = Duration::from_millis(15);
const SHOWING_VISIBLE: u32 = (1 << 25) | (1 << 30);
const ROLE_FRAME: u32 = 23;
const ROLE_PUSH_BUTTON: u32 = 43;

#[derive(Clone)]
struct Node {
    parent: String,
    index: i32,
    role: u32,
    name: String,
    ifaces: Vec<&'static str>,
    extents: (i32, i32, i32, i32),
    children: Vec<String>,
}

/// A frame with `n` push buttons, each 10x10 in a row of 40.
fn app(n: usize) -> BTreeMap<String, Node> {
    let mut m = BTreeMap::new();
    let kids: Vec<String> = (0..n).map(|i| format!("/org/a11y/atspi/accessible/{}", 100 + i)).collect();
    m.insert(
        ROOT_PATH.to_string(),
        Node { parent: ROOT_PATH.into(), index: -1, role: 75, name: "fake".into(), ifaces: vec!["org.a11y.atspi.Accessible"], extents: (0, 0, 0, 0), children: vec![FRAME.into()] },
    );
    m.insert(
        FRAME.to_string(),
        Node {
            parent: ROOT_PATH.into(),
            index: 0,
            role: ROLE_FRAME,
            name: "Fake window".into(),
            ifaces: vec!["org.a11y.atspi.Accessible", "org.a11y.atspi.Component"],
            extents: (100, 50, 400, 300),
            children: kids.clone(),
        },
    );
    for (i, k) in kids.iter().enumerate() {
        let (x, y) = (100 + 10 * (i as i32 % 40), 50 + 10 * (i as i32 / 40));
        m.insert(
            k.clone(),
            Node {
                parent: FRAME.into(),
                index: i as i32,
                role: ROLE_PUSH_BUTTON,
                name: format!("b{i}"),
                ifaces: vec!["org.a11y.atspi.Accessible", "org.a11y.atspi.Component", "org.a11y.atspi.Action"],
                extents: (x, y, 10, 10),
                children: vec![],
            },
        );
    }
    m
}

#[derive(Default)]
struct Stats {
    calls: Cell<u32>,
    max_held: Cell<usize>,
    by_method: RefCell<BTreeMap<String, u32>>,
    /// What the "bus daemon" says is BUS's pid (GetConnectionUnixProcessID).
    pid: Cell<u32>,
}

fn objref(p: &str) -> ObjRef {
    (BUS.to_string(), OwnedObjectPath::try_from(p.to_string()).unwrap())
}

type CacheItem = (ObjRef, ObjRef, ObjRef, i32, i32, Vec<String>, String, u32, String, Vec<u32>);

/// Answer one call from the model.
async fn answer(conn: &zbus::Connection, m: &BTreeMap<String, Node>, msg: &zbus::Message, socket: &Option<String>, stats: &Stats) {
    let hdr = msg.header();
    let to_registry = hdr.destination().is_some_and(|d| d.as_str() == super::REGISTRY);
    let (iface, member, path) = (
        hdr.interface().map(|i| i.to_string()).unwrap_or_default(),
        hdr.member().map(|m| m.to_string()).unwrap_or_default(),
        hdr.path().map(|p| p.to_string()).unwrap_or_default(),
    );
    let node = m.get(&path);
    let r = match (iface.as_str(), member.as_str()) {
        ("org.a11y.atspi.Cache", "GetItems") if path == CACHE_PATH => {
            let items: Vec<CacheItem> = m
                .iter()
                .map(|(p, n)| (objref(p), objref(ROOT_PATH), objref(&n.parent), n.index, n.children.len() as i32, n.ifaces.iter().map(|s| s.to_string()).collect(), n.name.clone(), n.role, String::new(), vec![SHOWING_VISIBLE, 0]))
                .collect();
            conn.reply(&hdr, &items).await
        }
        ("org.a11y.atspi.Accessible", "GetChildren") if to_registry => conn.reply(&hdr, &vec![objref(ROOT_PATH)]).await,
        ("org.freedesktop.DBus", "GetConnectionUnixProcessID") => {
            let (name,): (String,) = msg.body().deserialize().unwrap();
            if name == BUS {
                conn.reply(&hdr, &stats.pid.get()).await
            } else {
                conn.reply_error(&hdr, "org.freedesktop.DBus.Error.NameHasNoOwner", &name).await
            }
        }
        ("org.a11y.atspi.Accessible", "GetChildren") if node.is_some() => {
            let kids: Vec<ObjRef> = node.unwrap().children.iter().map(|c| objref(c)).collect();
            conn.reply(&hdr, &kids).await
        }
        ("org.a11y.atspi.Component", "GetExtents") if node.is_some() => conn.reply(&hdr, &node.unwrap().extents).await,
        ("org.a11y.atspi.Action", "GetActions") if node.is_some() => conn.reply(&hdr, &vec![("Click".to_string(), String::new(), String::new())]).await,
        ("org.a11y.atspi.Application", "GetApplicationBusAddress") => conn.reply(&hdr, &socket.clone().map(|s| format!("unix:path={s}")).unwrap_or_default()).await,
        ("org.freedesktop.DBus.Properties", "Get") => {
            let (i, name): (String, String) = msg.body().deserialize().unwrap();
            let v = match (i.as_str(), name.as_str()) {
                ("org.a11y.atspi.Application", "ToolkitName") => Value::from("Fake"),
                ("org.a11y.atspi.Application", "Version") => Value::from("1.0"),
                ("org.a11y.atspi.Accessible", "AccessibleId") => Value::from(""),
                ("org.a11y.atspi.Accessible", "Name") => Value::from(node.map(|n| n.name.clone()).unwrap_or_default()),
                ("org.a11y.atspi.Accessible", "ChildCount") => Value::from(node.map(|n| n.children.len() as i32).unwrap_or(0)),
                _ => Value::from(""),
            };
            conn.reply(&hdr, &v).await
        }
        ("org.freedesktop.DBus.Peer", "Ping") => conn.reply(&hdr, &()).await,
        _ => conn.reply_error(&hdr, "org.freedesktop.DBus.Error.UnknownMethod", &format!("no {iface}.{member} on {path}")).await,
    };
    r.unwrap();
}

/// Serve the model on `conn` until it closes, holding answers back (HOLD).
async fn serve(conn: zbus::Connection, m: Rc<BTreeMap<String, Node>>, stats: Rc<Stats>, socket: Option<String>) {
    let mut stream = zbus::MessageStream::from(&conn);
    while let Some(Ok(first)) = stream.next().await {
        let mut held = vec![first];
        while let Ok(Some(Ok(msg))) = tokio::time::timeout(HOLD, stream.next()).await {
            held.push(msg);
        }
        let calls: Vec<&zbus::Message> = held.iter().filter(|m| m.message_type() == zbus::message::Type::MethodCall).collect();
        stats.max_held.set(stats.max_held.get().max(calls.len()));
        for msg in calls {
            stats.calls.set(stats.calls.get() + 1);
            let k = msg.header().member().map(|m| m.to_string()).unwrap_or_default();
            *stats.by_method.borrow_mut().entry(k).or_insert(0) += 1;
            answer(&conn, &m, msg, &socket, &stats).await;
        }
    }
}

/// A client connection to a fake app serving `m` (its stats), over a socket pair.
async fn fake(m: BTreeMap<String, Node>, socket: Option<String>) -> (zbus::Connection, Rc<Stats>) {
    let (a, b) = tokio::net::UnixStream::pair().unwrap();
    let server = zbus::connection::Builder::unix_stream(a).server(zbus::Guid::generate()).unwrap().p2p().build();
    let client = zbus::connection::Builder::unix_stream(b).p2p().build();
    let (server, client) = tokio::join!(server, client);
    let stats = Rc::new(Stats::default());
    tokio::task::spawn_local(serve(server.unwrap(), Rc::new(m), stats.clone(), socket));
    (client.unwrap(), stats)
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    tokio::task::LocalSet::new().block_on(&rt, f)
}

fn lim(max_nodes: u32) -> Limits {
    Limits { max_depth: 64, max_children: 1000, max_nodes, clip: None }
}

const WINDOW: Rect = Rect { x: 100, y: 50, width: 400, height: 300 };

/// Read over a direct connection: every node, with its details; never more
/// than MAX_IN_FLIGHT detail calls in flight (plus the few urgent structure
/// calls); without the bound, the reader would have had hundreds at once.
#[test]
fn direct_reads_keep_a_bounded_number_in_flight() {
    run(async {
        let (conn, stats) = fake(app(300), None).await;
        let slots = Arc::new(tokio::sync::Semaphore::new(direct::MAX_IN_FLIGHT));
        let a = A11y::for_tests(conn.clone()).budgeted(super::REQUEST_CALL_BUDGET).with_direct(BUS, conn.clone(), slots);
        let t = tree::read_tree(&a, BUS, "Fake window", WINDOW, &lim(2000)).await.unwrap();
        assert_eq!(t.nodes.len(), 301);
        assert!(!t.truncated);
        assert_eq!(t.source, "cache");
        let b7 = t.nodes.iter().find(|n| n.name == "b7").unwrap();
        assert_eq!((b7.path.clone(), b7.bounds), (vec![7], Some(Rect::new(170, 50, 10, 10))));
        assert_eq!(b7.actions.len(), 1);
        let held = stats.max_held.get();
        assert!(held <= direct::MAX_IN_FLIGHT + 4, "{held} calls were in flight at once");
        assert!(held >= direct::MAX_IN_FLIGHT / 2, "the reader pipelines ({held} at once)");
        assert_eq!(stats.calls.get(), t.calls, "every call counted against the budget");

        // The same read with no bound: the fake sees far more at once (the test can fail).
        let (conn, stats) = fake(app(300), None).await;
        let unbounded = Arc::new(tokio::sync::Semaphore::new(100_000));
        let a = A11y::for_tests(conn.clone()).budgeted(super::REQUEST_CALL_BUDGET).with_direct(BUS, conn.clone(), unbounded);
        tree::read_tree(&a, BUS, "Fake window", WINDOW, &lim(2000)).await.unwrap();
        assert!(stats.max_held.get() > 4 * direct::MAX_IN_FLIGHT, "unbounded: {} at once", stats.max_held.get());
    });
}

/// max_nodes and the call budget hold with pipelined reads: the details of
/// nodes past the limit are never asked for.
#[test]
fn limits_and_budget_hold() {
    run(async {
        let (conn, stats) = fake(app(300), None).await;
        let slots = Arc::new(tokio::sync::Semaphore::new(direct::MAX_IN_FLIGHT));
        let a = A11y::for_tests(conn.clone()).budgeted(super::REQUEST_CALL_BUDGET).with_direct(BUS, conn.clone(), slots);
        let t = tree::read_tree(&a, BUS, "Fake window", WINDOW, &lim(50)).await.unwrap();
        assert_eq!(t.nodes.len(), 50);
        assert!(t.truncated);
        // The frame and 49 buttons: one GetExtents each, one more for the view.
        assert_eq!(stats.by_method.borrow().get("GetExtents").copied(), Some(51));

        let (conn, stats) = fake(app(300), None).await;
        let slots = Arc::new(tokio::sync::Semaphore::new(direct::MAX_IN_FLIGHT));
        let a = A11y::for_tests(conn.clone()).budgeted(120).with_direct(BUS, conn.clone(), slots);
        let t = tree::read_tree(&a, BUS, "Fake window", WINDOW, &lim(2000)).await.unwrap();
        assert!(t.truncated, "the budget ran out");
        assert!(stats.calls.get() <= 120, "{} calls made on a budget of 120", stats.calls.get());
        assert_eq!(t.calls, 120);
    });
}

/// A direct connection whose application side is gone: the call is sent
/// again over the bus (whose errors callers know), and the direct
/// connection is given up for that bus name.
#[test]
fn a_failed_direct_connection_falls_back_to_the_bus() {
    run(async {
        let (bus_conn, bus_stats) = fake(app(3), None).await;
        // A direct connection whose server side is closed at once.
        let (x, y) = tokio::net::UnixStream::pair().unwrap();
        let server = zbus::connection::Builder::unix_stream(x).server(zbus::Guid::generate()).unwrap().p2p().build();
        let client = zbus::connection::Builder::unix_stream(y).p2p().build();
        let (server, client) = tokio::join!(server, client);
        drop(server.unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
        let slots = Arc::new(tokio::sync::Semaphore::new(direct::MAX_IN_FLIGHT));
        let bus = ":1.77";
        let a = A11y::for_tests(bus_conn).budgeted(1000).with_direct(bus, client.unwrap(), slots);
        let ext: (i32, i32, i32, i32) = a.call(bus, FRAME, super::I_COMPONENT, "GetExtents", &(0u32,)).await.unwrap();
        assert_eq!(ext, (100, 50, 400, 300), "answered over the bus");
        assert_eq!(bus_stats.by_method.borrow().get("GetExtents").copied(), Some(1));
        assert!(direct::is_unavailable(bus), "the direct connection is given up");
    });
}

/// attach: a socket whose peer is the application's pid is used; the same
/// socket for another pid is refused (the address comes from the
/// application: its peer is checked, never trusted).
#[test]
fn attach_checks_the_peer_pid() {
    run(async {
        let dir = std::env::temp_dir().join(format!("dh-direct-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        let sock = dir.join("app.sock");
        let _ = std::fs::remove_file(&sock);
        let listener = tokio::net::UnixListener::bind(&sock).unwrap();
        let direct_stats = Rc::new(Stats::default());
        let ds = direct_stats.clone();
        tokio::task::spawn_local(async move {
            while let Ok((s, _)) = listener.accept().await {
                let conn = zbus::connection::Builder::unix_stream(s).server(zbus::Guid::generate()).unwrap().p2p().build().await.unwrap();
                tokio::task::spawn_local(serve(conn, Rc::new(app(2)), ds.clone(), None));
            }
        });
        let path = sock.to_string_lossy().into_owned();
        let (bus_conn, _) = fake(app(2), Some(path.clone())).await;
        let a = A11y::for_tests(bus_conn).budgeted(1000);
        let me = std::process::id();
        let d = direct::attach(&a, ":1.501", me).await;
        assert!(d.is_direct(":1.501"), "our own pid is the socket's peer");
        let ext: (i32, i32, i32, i32) = d.call(":1.501", FRAME, super::I_COMPONENT, "GetExtents", &(0u32,)).await.unwrap();
        assert_eq!(ext, (100, 50, 400, 300));
        assert_eq!(direct_stats.by_method.borrow().get("GetExtents").copied(), Some(1), "answered over the direct connection");
        // The connection known for :1.501 leads to our pid: never used as another pid's
        // (a bus name of an earlier bus daemon now naming another application).
        let again = direct::attach(&a, ":1.501", 1).await;
        assert!(!again.is_direct(":1.501"), "a connection checked for one pid is not used for another");
        let other = direct::attach(&a, ":1.502", 1).await;
        assert!(!other.is_direct(":1.502"), "a socket of another process than the app's is refused");
        assert!(direct::is_unavailable(":1.502"));
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// A secure-field search started while a tree read's Cache.GetItems is in
/// flight takes its answer: the application serialises its cache once.
#[test]
fn a_concurrent_reader_joins_the_cache_read_in_flight() {
    run(async {
        let (conn, stats) = fake(app(5), None).await;
        let a = A11y::for_tests(conn.clone()).budgeted(1000);
        let (m1, m2) = tokio::join!(tree::model_from_cache(&a, BUS), async {
            tokio::task::yield_now().await;
            tree::model_from_cache_joined(&a, BUS).await
        });
        let (m1, m2) = (m1.unwrap(), m2.unwrap());
        assert_eq!(m1.items.len(), 7);
        assert_eq!(m2.items.len(), 7);
        assert_eq!(stats.by_method.borrow().get("GetItems").copied(), Some(1), "one Cache.GetItems for both");
        // Nothing in flight: the joiner sends its own.
        tree::model_from_cache_joined(&a, BUS).await.unwrap();
        assert_eq!(stats.by_method.borrow().get("GetItems").copied(), Some(2));
    });
}

/// The application's bus name by pid: the registry's listing once, then the
/// name remembered, checked with one call each time; when the bus daemon no
/// longer says that name is the pid's, the registry is asked again.
#[test]
fn the_bus_name_of_a_pid_is_remembered_and_checked() {
    use crate::ops::{observe, Ctx};
    run(async {
        let (conn, stats) = fake(app(2), None).await;
        stats.pid.set(4242);
        let ctx = Ctx::new(Arc::new(std::sync::Mutex::new(Box::new(std::io::sink()))), Default::default());
        let a = A11y::for_tests(conn);
        assert_eq!(observe::bus_of(&ctx, &a, 4242).await.unwrap(), BUS);
        let count = |m: &str| stats.by_method.borrow().get(m).copied().unwrap_or(0);
        assert_eq!((count("GetChildren"), count("GetConnectionUnixProcessID")), (1, 1), "the registry's listing");
        assert_eq!(observe::bus_of(&ctx, &a, 4242).await.unwrap(), BUS);
        assert_eq!((count("GetChildren"), count("GetConnectionUnixProcessID")), (1, 2), "one check, no listing");
        // The name now answers for another process: not taken; the listing
        // finds no application with that pid.
        stats.pid.set(5555);
        let e = observe::bus_of(&ctx, &a, 4242).await.unwrap_err();
        assert_eq!(e.code, crate::error::Code::AppNotFound);
        assert_eq!(count("GetChildren"), 2, "asked the registry again");
        assert!(ctx.resolved.borrow().bus(4242).is_none(), "the wrong guess is forgotten");
    });
}
