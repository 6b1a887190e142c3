//! The radix tree: an arena of nodes with integer handles.
//!
//! Semantics follow SGLang's `RadixCache` (lecture section 5):
//! - a node holds a run of tokens (a whole number of pages); children are keyed by their first
//!   page, so two children of one node never share a first page;
//! - `insert` walks, splits where the new sequence diverges inside a node, and adds one leaf
//!   for the new suffix; it returns the length that was already cached;
//! - `match_prefix` returns the longest cached prefix and the node where it ends, splitting
//!   that node if the match ends inside it (the upper part is returned);
//! - `lock`/`unlock` add/remove one reference along the path to the root; a node going 0->1
//!   moves its tokens from evictable to protected, 1->0 back;
//! - `evict(n)` removes least recently used unlocked leaves, whole nodes, until at least `n`
//!   tokens are freed; a parent whose last child went becomes a candidate.
//!
//! Time is a logical clock: every stamp takes the next tick, so no two nodes ever share a
//! last-access time and the eviction order is a total order. The order of stamps: an insert
//! stamps the root, then each node on the path from the top; a match does the same except that
//! an empty match stamps nothing. A node created by a split (the upper part) or by an insert
//! (the new leaf) takes the next tick when it is created, after the node it was split from was
//! stamped.
//!
//! Children live in one hash map keyed by (parent, first token). With pages longer than one
//! token, children that share a first token but differ later in their first page are chained
//! through `next_same`.

use crate::error::{invalid, Result};
use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

/// Index of the root node. The root holds no tokens and is never evicted.
pub const ROOT: u32 = 0;
const NIL: u32 = u32::MAX;

/// A multiplicative hasher for the (parent, first token) keys: no SipHash in the hot loop.
#[derive(Default, Clone, Copy)]
pub struct MixHasher(u64);

const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl MixHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(26) ^ x).wrapping_mul(MIX);
    }
}

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn finish(&self) -> u64 {
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (x >> 32)
    }
}

pub type MixBuild = BuildHasherDefault<MixHasher>;

/// A handle to a node: its arena index and the generation of that slot, so a handle to an
/// evicted node is refused even after its slot is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Handle {
    pub index: u32,
    pub generation: u32,
}

#[derive(Debug, Clone)]
struct Node {
    parent: u32,
    /// Next child of the same parent with the same first token (page_size > 1 only).
    next_same: u32,
    tokens: Vec<i64>,
    lock_ref: u64,
    last_access: u64,
    n_children: u32,
    generation: u32,
    alive: bool,
    /// When it took its place among its parent's children: they are listed in this order, the
    /// order Python's dict keeps them in (insertion; a split's upper node takes the place of
    /// the node it was split from).
    order: u64,
}

/// One node as seen from outside: for tests, snapshots and drawings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeView {
    /// Arena index of the node (stable while the node lives; not comparable across engines).
    pub index: u32,
    pub parent: u32,
    pub tokens: Vec<i64>,
    pub lock_ref: u64,
    pub last_access: u64,
}

/// The radix tree. See the module documentation for the semantics.
#[derive(Debug, Clone)]
pub struct RadixTree {
    page_size: usize,
    nodes: Vec<Node>,
    free: Vec<u32>,
    children: HashMap<(u32, i64), u32, MixBuild>,
    /// Unlocked leaves (not the root), ordered by (last access, index): the eviction order.
    evictable: BTreeSet<(u64, u32)>,
    clock: u64,
    evictable_size: u64,
    protected_size: u64,
    num_nodes: usize,
    evicted_nodes: u64,
    evicted_tokens: u64,
    /// Reused buffer for paths.
    scratch: Vec<u32>,
    /// The last child order handed out (`Node::order`).
    orders: u64,
}

/// Length of the common prefix of `a` and `b`, cut down to whole pages.
#[inline]
fn common_pages(a: &[i64], b: &[i64], page: usize) -> usize {
    // Whole blocks first (slice equality on integers is a memcmp), then token by token.
    const BLOCK: usize = 64;
    let len = a.len().min(b.len());
    let mut n = 0;
    while n + BLOCK <= len && a[n..n + BLOCK] == b[n..n + BLOCK] {
        n += BLOCK;
    }
    n += a[n..len].iter().zip(&b[n..len]).take_while(|(x, y)| x == y).count();
    n - n % page
}

impl RadixTree {
    /// An empty tree. `page_size` tokens per page (at least 1).
    pub fn new(page_size: usize) -> Result<RadixTree> {
        if page_size == 0 {
            return Err(invalid("page_size", page_size, "a positive number of tokens per page"));
        }
        let root = Node {
            parent: NIL,
            next_same: NIL,
            tokens: Vec::new(),
            lock_ref: 0,
            last_access: 0,
            n_children: 0,
            generation: 0,
            alive: true,
            order: 0,
        };
        Ok(RadixTree {
            page_size,
            nodes: vec![root],
            free: Vec::new(),
            children: HashMap::default(),
            evictable: BTreeSet::new(),
            clock: 0,
            evictable_size: 0,
            protected_size: 0,
            num_nodes: 0,
            evicted_nodes: 0,
            evicted_tokens: 0,
            scratch: Vec::new(),
            orders: 0,
        })
    }

    pub fn page_size(&self) -> usize {
        self.page_size
    }
    /// Tokens stored (evictable + protected).
    pub fn total_size(&self) -> u64 {
        self.evictable_size + self.protected_size
    }
    /// Tokens in nodes no running request holds.
    pub fn evictable_size(&self) -> u64 {
        self.evictable_size
    }
    /// Tokens in nodes some running request holds (lock count above 0).
    pub fn protected_size(&self) -> u64 {
        self.protected_size
    }
    /// Nodes other than the root.
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }
    /// Nodes and tokens removed by `evict` since the tree was made.
    pub fn evicted(&self) -> (u64, u64) {
        (self.evicted_nodes, self.evicted_tokens)
    }
    /// The current value of the logical clock (the last tick handed out).
    pub fn clock(&self) -> u64 {
        self.clock
    }
    pub fn root(&self) -> Handle {
        Handle { index: ROOT, generation: 0 }
    }

    /// `tokens` cut down to whole pages.
    #[inline]
    fn aligned<'a>(&self, tokens: &'a [i64]) -> &'a [i64] {
        &tokens[..tokens.len() - tokens.len() % self.page_size]
    }

    #[inline]
    fn is_evictable(&self, i: u32) -> bool {
        let n = &self.nodes[i as usize];
        i != ROOT && n.alive && n.lock_ref == 0 && n.n_children == 0
    }

    #[inline]
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Stamp `i` with the next tick, keeping the eviction order in step.
    #[inline]
    fn stamp(&mut self, i: u32) {
        let t = self.tick();
        if self.is_evictable(i) {
            let old = self.nodes[i as usize].last_access;
            self.evictable.remove(&(old, i));
            self.evictable.insert((t, i));
        }
        self.nodes[i as usize].last_access = t;
    }

    /// The child of `parent` whose first page equals the first page of `key` (non-empty, aligned).
    #[inline]
    fn find_child(&self, parent: u32, key: &[i64]) -> Option<u32> {
        let first = *key.first()?;
        let mut c = *self.children.get(&(parent, first))?;
        if self.page_size == 1 {
            return Some(c);
        }
        let page = &key[..self.page_size.min(key.len())];
        while c != NIL {
            let node = &self.nodes[c as usize];
            if node.tokens.get(..page.len()) == Some(page) {
                return Some(c);
            }
            c = node.next_same;
        }
        None
    }

    /// Link `child` (tokens already set) under `parent`.
    fn link_child(&mut self, parent: u32, child: u32) {
        let first = self.nodes[child as usize].tokens[0];
        let head = self.children.insert((parent, first), child).unwrap_or(NIL);
        self.nodes[child as usize].next_same = head;
        self.nodes[child as usize].parent = parent;
        self.orders += 1;
        self.nodes[child as usize].order = self.orders;
    }

    /// Unlink `child` from its parent's chain (the parent's child count is left to the caller).
    fn unlink_child(&mut self, child: u32) {
        let parent = self.nodes[child as usize].parent;
        let first = self.nodes[child as usize].tokens[0];
        let next = self.nodes[child as usize].next_same;
        self.replace_in_chain((parent, first), child, next);
        self.nodes[child as usize].next_same = NIL;
    }

    /// Put `with` where `child` stands in the chain of children sharing the first page `key`
    /// (the map holds the chain's head, `next_same` links the rest). `with` is NIL, or a node
    /// whose `next_same` already points past `child`.
    fn replace_in_chain(&mut self, key: (u32, i64), child: u32, with: u32) {
        match self.children.get(&key).copied() {
            Some(head) if head == child => {
                if with == NIL {
                    self.children.remove(&key);
                } else {
                    self.children.insert(key, with);
                }
            }
            Some(mut c) => {
                while c != NIL {
                    let after = self.nodes[c as usize].next_same;
                    if after == child {
                        self.nodes[c as usize].next_same = with;
                        break;
                    }
                    c = after;
                }
            }
            None => {}
        }
    }

    fn alloc(&mut self, parent: u32, tokens: Vec<i64>, lock_ref: u64, n_children: u32) -> u32 {
        let last_access = self.tick();
        self.num_nodes += 1;
        if let Some(i) = self.free.pop() {
            let n = &mut self.nodes[i as usize];
            n.parent = parent;
            n.next_same = NIL;
            n.tokens = tokens;
            n.lock_ref = lock_ref;
            n.last_access = last_access;
            n.n_children = n_children;
            n.alive = true;
            i
        } else {
            let i = self.nodes.len() as u32;
            self.nodes.push(Node {
                parent,
                next_same: NIL,
                tokens,
                lock_ref,
                last_access,
                n_children,
                generation: 0,
                alive: true,
                order: 0,
            });
            i
        }
    }

    /// Split `child` after `at` tokens; the new upper node takes its place and is returned.
    fn split(&mut self, child: u32, at: usize) -> u32 {
        let c = child as usize;
        let tail = self.nodes[c].tokens.split_off(at);
        let head = std::mem::replace(&mut self.nodes[c].tokens, tail);
        let parent = self.nodes[c].parent;
        let lock_ref = self.nodes[c].lock_ref;
        // The upper node replaces the child in the parent's chain (same first page).
        let upper = self.alloc(parent, head, lock_ref, 1);
        self.nodes[upper as usize].order = self.nodes[c].order;
        let first = self.nodes[upper as usize].tokens[0];
        self.nodes[upper as usize].next_same = self.nodes[c].next_same;
        self.replace_in_chain((parent, first), child, upper);
        self.nodes[c].next_same = NIL;
        self.link_child(upper, child);
        upper
    }

    /// Check that `h` names a live node of this tree.
    pub fn check(&self, h: Handle) -> Result<u32> {
        match self.nodes.get(h.index as usize) {
            Some(n) if n.alive && n.generation == h.generation => Ok(h.index),
            _ => Err(invalid("node", format!("#{}", h.index), "a node of this tree that has not been evicted")),
        }
    }

    fn handle(&self, i: u32) -> Handle {
        Handle { index: i, generation: self.nodes[i as usize].generation }
    }

    /// Insert `tokens` (cut to whole pages). Returns the length of the prefix already cached.
    pub fn insert(&mut self, tokens: &[i64]) -> u64 {
        let key = self.aligned(tokens);
        self.stamp(ROOT);
        self.insert_below(ROOT, 0, key)
    }

    /// The same as `insert(tokens)` when the path from the root to `h` is known to hold
    /// `tokens[..matched]` (as just returned by `match_prefix`, the path locked since): the
    /// path is stamped in the same order as `insert` would, without comparing its tokens again.
    pub fn insert_after_match(&mut self, h: Handle, matched: u64, tokens: &[i64]) -> Result<u64> {
        let node = self.check(h)?;
        let key = self.aligned(tokens);
        let mut path = std::mem::take(&mut self.scratch);
        path.clear();
        let mut i = node;
        let mut held = 0usize;
        while i != ROOT {
            path.push(i);
            held += self.nodes[i as usize].tokens.len();
            i = self.nodes[i as usize].parent;
        }
        let pos = usize::try_from(matched).unwrap_or(usize::MAX);
        if held != pos || pos > key.len() {
            self.scratch = path;
            return Err(invalid("matched", matched, "the length of the path from the root to the node, within tokens"));
        }
        self.stamp(ROOT);
        for &n in path.iter().rev() {
            self.stamp(n);
        }
        self.scratch = path;
        Ok(self.insert_below(node, pos, key))
    }

    /// Continue an insert of `key` at `node`, `pos` tokens already walked (and stamped).
    fn insert_below(&mut self, node: u32, pos: usize, key: &[i64]) -> u64 {
        let (node, pos) = self.descend(node, pos, key, false);
        if pos < key.len() {
            let leaf_len = (key.len() - pos) as u64;
            if self.is_evictable(node) {
                let t = self.nodes[node as usize].last_access;
                self.evictable.remove(&(t, node));
            }
            let leaf = self.alloc(node, key[pos..].to_vec(), 0, 0);
            self.link_child(node, leaf);
            self.nodes[node as usize].n_children += 1;
            let t = self.nodes[leaf as usize].last_access;
            self.evictable.insert((t, leaf));
            self.evictable_size += leaf_len;
        }
        pos as u64
    }

    /// The longest cached prefix of `tokens` (cut to whole pages) and the node where it ends.
    pub fn match_prefix(&mut self, tokens: &[i64]) -> (u64, Handle) {
        let key = self.aligned(tokens);
        if key.is_empty() {
            return (0, self.root());
        }
        self.stamp(ROOT);
        let (node, pos) = self.descend(ROOT, 0, key, true);
        (pos as u64, self.handle(node))
    }

    /// Walk down from `node` along `key`, `pos` tokens already walked: stamp each child entered
    /// and split one that matches only in part (whole pages). A lookup (`stop_at_split`) ends
    /// at the split; an insert walks on below it. Returns the node reached and the tokens walked.
    fn descend(&mut self, mut node: u32, mut pos: usize, key: &[i64], stop_at_split: bool) -> (u32, usize) {
        while pos < key.len() {
            let Some(child) = self.find_child(node, &key[pos..]) else { break };
            self.stamp(child);
            let len = self.nodes[child as usize].tokens.len();
            let m = common_pages(&self.nodes[child as usize].tokens, &key[pos..], self.page_size);
            pos += m;
            if m == len {
                node = child;
                continue;
            }
            node = self.split(child, m);
            if stop_at_split {
                break;
            }
        }
        (node, pos)
    }

    /// Add one reference to every node from `h` up to the root (the root itself has none).
    pub fn lock(&mut self, h: Handle) -> Result<()> {
        let mut i = self.check(h)?;
        while i != ROOT {
            let len = self.nodes[i as usize].tokens.len() as u64;
            if self.nodes[i as usize].lock_ref == 0 {
                if self.is_evictable(i) {
                    let t = self.nodes[i as usize].last_access;
                    self.evictable.remove(&(t, i));
                }
                self.evictable_size -= len;
                self.protected_size += len;
            }
            self.nodes[i as usize].lock_ref += 1;
            i = self.nodes[i as usize].parent;
        }
        Ok(())
    }

    /// Remove one reference from every node from `h` up to the root. Refuses a node whose
    /// count is already 0 (nothing is changed then).
    pub fn unlock(&mut self, h: Handle) -> Result<()> {
        let mut i = self.check(h)?;
        if i != ROOT && self.nodes[i as usize].lock_ref == 0 {
            return Err(invalid("node", format!("#{i}"), "a locked node (its lock count is 0)"));
        }
        while i != ROOT {
            let len = self.nodes[i as usize].tokens.len() as u64;
            let n = &mut self.nodes[i as usize];
            n.lock_ref = n.lock_ref.saturating_sub(1);
            if n.lock_ref == 0 {
                self.evictable_size += len;
                self.protected_size -= len;
                if self.is_evictable(i) {
                    let t = self.nodes[i as usize].last_access;
                    self.evictable.insert((t, i));
                }
            }
            i = self.nodes[i as usize].parent;
        }
        Ok(())
    }

    /// Remove least recently used unlocked leaves until at least `n` tokens are freed or no
    /// unlocked leaf is left. Returns the tokens freed.
    pub fn evict(&mut self, n: u64) -> u64 {
        let mut freed = 0u64;
        while freed < n {
            let Some((_, x)) = self.evictable.pop_first() else { break };
            freed += self.delete_leaf(x);
        }
        freed
    }

    /// Delete leaf `x` (already out of the evictable set); its parent may become a candidate.
    fn delete_leaf(&mut self, x: u32) -> u64 {
        self.unlink_child(x);
        let parent = self.nodes[x as usize].parent;
        let n = &mut self.nodes[x as usize];
        let len = n.tokens.len() as u64;
        n.tokens = Vec::new();
        n.alive = false;
        n.generation = n.generation.wrapping_add(1);
        n.parent = NIL;
        self.free.push(x);
        self.num_nodes -= 1;
        self.evictable_size -= len;
        self.evicted_nodes += 1;
        self.evicted_tokens += len;
        self.nodes[parent as usize].n_children -= 1;
        if self.is_evictable(parent) {
            let t = self.nodes[parent as usize].last_access;
            self.evictable.insert((t, parent));
        }
        len
    }

    /// Every node but the root, in preorder with children sorted by their tokens (so two
    /// engines building the same tree list it the same way).
    pub fn nodes(&self) -> Vec<NodeView> {
        let mut kids: Vec<Vec<u32>> = vec![Vec::new(); self.nodes.len()];
        for (i, n) in self.nodes.iter().enumerate().skip(1) {
            if n.alive {
                kids[n.parent as usize].push(i as u32);
            }
        }
        for k in kids.iter_mut() {
            k.sort_by(|&a, &b| self.nodes[a as usize].tokens.cmp(&self.nodes[b as usize].tokens));
        }
        let mut out = Vec::with_capacity(self.num_nodes);
        let mut stack: Vec<u32> = kids[ROOT as usize].iter().rev().copied().collect();
        while let Some(i) = stack.pop() {
            let n = &self.nodes[i as usize];
            out.push(NodeView {
                index: i,
                parent: n.parent,
                tokens: n.tokens.clone(),
                lock_ref: n.lock_ref,
                last_access: n.last_access,
            });
            stack.extend(kids[i as usize].iter().rev().copied());
        }
        out
    }

    /// Tokens, lock count and last access of one node.
    pub fn node(&self, h: Handle) -> Result<NodeView> {
        let i = self.check(h)?;
        let n = &self.nodes[i as usize];
        Ok(NodeView {
            index: i,
            parent: n.parent,
            tokens: n.tokens.clone(),
            lock_ref: n.lock_ref,
            last_access: n.last_access,
        })
    }

    /// The handle of a node's parent (None for the root).
    pub fn parent(&self, h: Handle) -> Result<Option<Handle>> {
        let i = self.check(h)?;
        Ok(if i == ROOT { None } else { Some(self.handle(self.nodes[i as usize].parent)) })
    }

    /// Where a node stands among its parent's children: their order is that of this number,
    /// the order of insertion, a split's upper node in the place of the node it was split from
    /// (the order Python's dict of children keeps, which SGLang's `dfs-weight` walks).
    pub fn child_order(&self, h: Handle) -> Result<u64> {
        let i = self.check(h)?;
        Ok(self.nodes[i as usize].order)
    }

    /// The handle of the node at arena index `i`, if it is alive (for listing nodes).
    pub fn handle_of(&self, i: u32) -> Option<Handle> {
        match self.nodes.get(i as usize) {
            Some(n) if n.alive => Some(self.handle(i)),
            _ => None,
        }
    }
}
