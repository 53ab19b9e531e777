//! What earlier requests learned about windows' accessibles, kept to make the
//! next request cheaper. Nothing here is ever trusted: every entry is only a
//! guess that the caller verifies live (in the same pipelined batch as its
//! other calls) before acting on it, and falls back to the full resolution
//! when the guess is wrong. A wrong or stale entry costs time, never
//! correctness.

use crate::wire::messages::Rect;
use std::collections::{BTreeSet, HashMap};

/// How a window's frame accessible was chosen (so a cached choice is checked
/// the same way).
#[derive(Debug, Clone)]
pub struct FrameEntry {
    /// Unique name of the application on the accessibility bus.
    pub bus: String,
    /// Object path of the frame accessible.
    pub frame: String,
    /// Chosen because its name equals the window title: valid while it still
    /// does. Otherwise chosen by extents: valid while its name is `name` and
    /// its extents are still close to the window's bounds.
    pub by_name: bool,
    pub name: String,
}

/// One known node below a frame.
#[derive(Debug, Clone)]
pub struct Known {
    pub obj: String,
    pub bounds: Option<Rect>,
}

/// Locator path -> object path (and last seen bounds) below one frame.
#[derive(Default)]
pub struct FrameTree {
    pub nodes: HashMap<Vec<u32>, Known>,
    pub kids: HashMap<Vec<u32>, BTreeSet<u32>>,
    /// Object path -> locator path.
    pub paths: HashMap<String, Vec<u32>>,
}

const MAX_NODES_PER_FRAME: usize = 50_000;
const MAX_FRAMES: usize = 16;
const MAX_WINDOWS: usize = 256;

impl FrameTree {
    pub fn insert(&mut self, path: Vec<u32>, obj: String, bounds: Option<Rect>) {
        if self.nodes.len() >= MAX_NODES_PER_FRAME && !self.nodes.contains_key(&path) {
            return;
        }
        if let Some(old) = self.nodes.get(&path) {
            if old.obj != obj && self.paths.get(&old.obj) == Some(&path) {
                self.paths.remove(&old.obj);
            }
        }
        if let Some((last, parent)) = path.split_last() {
            self.kids.entry(parent.to_vec()).or_default().insert(*last);
        }
        self.paths.insert(obj.clone(), path.clone());
        let bounds = bounds.or_else(|| self.nodes.get(&path).filter(|k| k.obj == obj).and_then(|k| k.bounds));
        self.nodes.insert(path, Known { obj, bounds });
    }

    /// Object paths of `path`'s prefixes of length 1, 2, ... as long as they
    /// are known.
    pub fn chain(&self, path: &[u32]) -> Vec<String> {
        let mut out = Vec::new();
        for k in 1..=path.len() {
            match self.nodes.get(&path[..k]) {
                Some(n) => out.push(n.obj.clone()),
                None => break,
            }
        }
        out
    }

    /// The guessed chain of accessibles under a screen point, as
    /// GetAccessibleAtPoint descends (the first child, in order, whose last
    /// seen bounds contain the point), with their locator paths.
    pub fn predict_at(&self, x: i32, y: i32) -> Vec<(Vec<u32>, String)> {
        let mut out = Vec::new();
        let mut cur: Vec<u32> = Vec::new();
        for _ in 0..64 {
            let Some(kids) = self.kids.get(&cur) else { break };
            let next = kids.iter().find_map(|&i| {
                let mut p = cur.clone();
                p.push(i);
                let n = self.nodes.get(&p)?;
                n.bounds.filter(|b| b.width > 0 && b.height > 0 && b.contains(x, y)).map(|_| (p, n.obj.clone()))
            });
            match next {
                Some((p, obj)) => {
                    cur = p.clone();
                    out.push((p, obj));
                }
                None => break,
            }
        }
        out
    }
}

#[derive(Default)]
pub struct ResolveCache {
    /// (pid, X window id) -> its frame accessible.
    pub frames: HashMap<(u32, u32), FrameEntry>,
    /// (bus, frame path) -> nodes below it.
    pub trees: HashMap<(String, String), FrameTree>,
    /// (bus, frame path) -> how the toolkit's answers are read there (GTK 4's
    /// window-relative extents). A guess like the rest: an app restarted at
    /// the same bus name is a new bus name.
    pub views: HashMap<(String, String), crate::atspi::tree::View>,
    /// pid -> the application's unique name on the accessibility bus, as
    /// the registry listed it. A guess: checked with one
    /// GetConnectionUnixProcessID (`ops::observe::bus_of`) before use.
    pub buses: HashMap<u32, String>,
}

impl ResolveCache {
    pub fn clear(&mut self) {
        self.frames.clear();
        self.trees.clear();
        self.views.clear();
        self.buses.clear();
    }

    pub fn bus(&self, pid: u32) -> Option<String> {
        self.buses.get(&pid).cloned()
    }

    pub fn set_bus(&mut self, pid: u32, bus: &str) {
        if self.buses.len() >= MAX_WINDOWS && !self.buses.contains_key(&pid) {
            self.buses.clear();
        }
        self.buses.insert(pid, bus.to_string());
    }

    pub fn forget_bus(&mut self, pid: u32) {
        self.buses.remove(&pid);
    }

    pub fn view(&self, bus: &str, frame: &str) -> Option<crate::atspi::tree::View> {
        self.views.get(&(bus.to_string(), frame.to_string())).copied()
    }

    pub fn set_view(&mut self, bus: &str, frame: &str, v: crate::atspi::tree::View) {
        if self.views.len() >= MAX_WINDOWS {
            self.views.clear();
        }
        self.views.insert((bus.to_string(), frame.to_string()), v);
    }

    pub fn frame(&self, pid: u32, window_id: u32) -> Option<FrameEntry> {
        self.frames.get(&(pid, window_id)).cloned()
    }

    pub fn set_frame(&mut self, pid: u32, window_id: u32, e: FrameEntry) {
        if self.frames.len() >= MAX_WINDOWS && !self.frames.contains_key(&(pid, window_id)) {
            self.frames.clear();
        }
        self.frames.insert((pid, window_id), e);
    }

    pub fn forget_frame(&mut self, pid: u32, window_id: u32) {
        if let Some(e) = self.frames.remove(&(pid, window_id)) {
            self.views.remove(&(e.bus.clone(), e.frame.clone()));
            self.trees.remove(&(e.bus, e.frame));
        }
    }

    pub fn tree(&self, bus: &str, frame: &str) -> Option<&FrameTree> {
        self.trees.get(&(bus.to_string(), frame.to_string()))
    }

    pub fn tree_mut(&mut self, bus: &str, frame: &str) -> &mut FrameTree {
        let key = (bus.to_string(), frame.to_string());
        if self.trees.len() >= MAX_FRAMES && !self.trees.contains_key(&key) {
            self.trees.clear();
        }
        self.trees.entry(key).or_default()
    }

    /// Replace what is known below a frame (a fresh get_tree).
    pub fn replace_tree(&mut self, bus: &str, frame: &str, nodes: impl IntoIterator<Item = (Vec<u32>, String, Option<Rect>)>) {
        let t = self.tree_mut(bus, frame);
        *t = FrameTree::default();
        for (p, o, b) in nodes {
            if !p.is_empty() {
                t.insert(p, o, b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_and_prediction() {
        let mut t = FrameTree::default();
        t.insert(vec![0], "/a".into(), Some(Rect::new(0, 0, 100, 100)));
        t.insert(vec![0, 0], "/a0".into(), Some(Rect::new(0, 0, 50, 50)));
        t.insert(vec![0, 1], "/a1".into(), Some(Rect::new(50, 0, 50, 50)));
        t.insert(vec![0, 1, 3], "/a13".into(), None);
        assert_eq!(t.chain(&[0, 1, 3]), vec!["/a", "/a1", "/a13"]);
        assert_eq!(t.chain(&[0, 2, 3]), vec!["/a"]);
        assert!(t.chain(&[1]).is_empty());
        let p = t.predict_at(60, 10);
        assert_eq!(p, vec![(vec![0], "/a".to_string()), (vec![0, 1], "/a1".to_string())]);
        assert!(t.predict_at(200, 10).is_empty());
        // A node replaced at the same path: the old object no longer maps there.
        t.insert(vec![0, 1], "/b1".into(), None);
        assert!(!t.paths.contains_key("/a1"));
        assert_eq!(t.nodes[&vec![0, 1]].bounds, None, "bounds of another object are not inherited");
        assert_eq!(t.paths["/b1"], vec![0, 1]);
    }
}
