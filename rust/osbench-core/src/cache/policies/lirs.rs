//! LIRS (Jiang and Zhang, SIGMETRICS 2002) as libCacheSim implements it: the stack S (LIR
//! blocks and HIR blocks, resident or not), the queue Q (resident HIR blocks) and NH (the
//! non-resident HIR blocks of S, oldest first), three LRU lists with one copy of a block per
//! list, each with its own flags and size. The HIR blocks get 1% of the capacity (at least
//! one object or byte), the LIR blocks the rest. The rules, and the counts libCacheSim keeps
//! (also where they part from what is resident), are spelled out in the reference engine's
//! `LIRS` class; this file follows them step for step. Sized mode counts bytes.

use crate::cache::list::{Links, List, Slots};
use crate::cache::memory::prefetch;
use crate::cache::policy::{put, Options, Policy};
use crate::cache::NIL;

/// One LRU list of copies: front (head) the top, back (tail) the bottom.
struct Lru {
    slots: Slots,
    links: Links,
    list: List,
    /// Per slot: the copy's size and its block's id.
    size: Vec<u64>,
    ids: Vec<u32>,
}

impl Lru {
    fn new(n_ids: usize, expected: usize) -> Lru {
        Lru {
            slots: Slots::new(n_ids, expected),
            links: Links::with_capacity(expected),
            list: List::default(),
            size: Vec::new(),
            ids: Vec::new(),
        }
    }
    #[inline]
    fn find(&mut self, id: u32) -> u32 {
        self.slots.get(id)
    }
    /// Move `slot` to the top.
    #[inline]
    fn touch(&mut self, slot: u32) {
        if self.list.head != slot {
            self.links.remove(&mut self.list, slot);
            self.links.push_front(&mut self.list, slot);
        }
    }
    /// A new copy of `id` (not in the list) at the top.
    #[inline]
    fn insert(&mut self, id: u32, size: u64) -> u32 {
        // The id may be new to this list's per-id array (online use grows it). A second copy
        // in one list would orphan the first's slot: every caller removes the old copy first.
        let existing = self.slots.get(id);
        debug_assert!(existing == NIL, "LIRS list already holds a copy of {id}");
        let slot = self.slots.assign(id);
        put(&mut self.size, slot, size);
        put(&mut self.ids, slot, id);
        self.links.push_front(&mut self.list, slot);
        slot
    }
    #[inline]
    fn remove(&mut self, slot: u32) {
        self.links.remove(&mut self.list, slot);
        self.slots.release(slot);
    }
    /// `id`'s newest copy leaves, if it is found.
    #[inline]
    fn discard(&mut self, id: u32) {
        let slot = self.find(id);
        if slot != NIL {
            self.remove(slot);
        }
    }
    /// The id of the copy in `slot`.
    #[inline]
    fn id(&self, slot: u32) -> u32 {
        self.ids[slot as usize]
    }
}

pub struct Lirs {
    capacity: i64,
    lirs_limit: i64,
    hirs_limit: i64,
    s: Lru,
    /// Boxed: the policy sits by value in the table's enum, which should not grow for it.
    q: Box<Lru>,
    nh: Box<Lru>,
    /// Per S slot: LIR, resident.
    is_lir: Vec<bool>,
    in_cache: Vec<bool>,
    /// What S holds, every copy (libCacheSim's `LRU_s->occupied_byte`).
    s_bytes: i64,
    lirs_count: i64,
    hirs_count: i64,
    /// libCacheSim's `occupied_byte`, kept by its rules.
    occupied: i64,
}

impl Lirs {
    fn s_insert(&mut self, id: u32, size: u64, is_lir: bool) {
        let slot = self.s.insert(id, size);
        put(&mut self.is_lir, slot, is_lir);
        put(&mut self.in_cache, slot, true);
        self.s_bytes += size as i64;
    }

    fn s_remove(&mut self, slot: u32) {
        self.s_bytes -= self.s.size[slot as usize] as i64;
        self.s.remove(slot);
    }

    /// `LIRS_prune`: HIR blocks leave the bottom of S, which keeps its top block.
    fn prune(&mut self) {
        while self.s.list.len > 1 {
            let bottom = self.s.list.tail;
            if self.is_lir[bottom as usize] {
                break;
            }
            if !self.in_cache[bottom as usize] {
                self.nh.discard(self.s.id(bottom));
            }
            self.s_remove(bottom);
        }
    }

    /// `evictLIR`: S's bottom block leaves S, and enters Q as a resident HIR block if it fits
    /// the HIR limit.
    fn evict_lir(&mut self) {
        let bottom = self.s.list.tail;
        if bottom == NIL {
            return;
        }
        let (id, size) = (self.s.id(bottom), self.s.size[bottom as usize]);
        self.lirs_count -= size as i64;
        self.s_remove(bottom);
        self.occupied -= size as i64;
        if size as i64 <= self.hirs_limit {
            while self.hirs_count + size as i64 > self.hirs_limit {
                if !self.evict_hir() {
                    break;
                }
            }
            self.q.insert(id, size);
            self.hirs_count += size as i64;
            self.occupied += size as i64;
        }
        self.prune();
    }

    /// `evictHIR`: Q's bottom block leaves the cache; its copy in S, if any, turns
    /// non-resident and enters NH. False when Q is empty.
    fn evict_hir(&mut self) -> bool {
        let bottom = self.q.list.tail;
        if bottom == NIL {
            return false;
        }
        let (id, size) = (self.q.id(bottom), self.q.size[bottom as usize]);
        self.hirs_count -= size as i64;
        self.q.remove(bottom);
        let s = self.s.find(id);
        if s != NIL {
            self.in_cache[s as usize] = false;
            self.nh.insert(id, size);
        }
        self.occupied -= size as i64;
        true
    }

    /// The lookup (`LIRS_find`); true on a hit.
    fn find(&mut self, id: u32) -> bool {
        let (s, q) = (self.s.find(id), self.q.find(id));
        if s != NIL {
            self.s.touch(s);
        }
        if q != NIL {
            self.q.touch(q);
        }
        if s != NIL {
            if self.is_lir[s as usize] {
                self.prune();
                return true;
            }
            if !self.in_cache[s as usize] {
                return false;
            }
            if q != NIL {
                // A resident HIR block in S turns LIR (hit_RD_HIRinS).
                let q_size = self.q.size[q as usize] as i64;
                self.hirs_count -= q_size;
                self.q.remove(q);
                self.occupied -= q_size;
            }
            let size = self.s.size[s as usize] as i64;
            while self.lirs_count + size > self.lirs_limit && self.s.list.len > 0 {
                self.evict_lir();
            }
            self.is_lir[s as usize] = true;
            self.lirs_count += size;
            self.occupied += size;
            return true;
        }
        if q != NIL {
            // A resident HIR block only in Q (hit_RD_HIRinQ): a new HIR copy on top of S.
            let size = self.q.size[q as usize];
            while self.lirs_count + size as i64 > self.lirs_limit && self.s.list.len > 0 {
                self.evict_lir();
            }
            self.s_insert(id, size, false);
            return true;
        }
        false
    }

    /// `LIRS_can_insert` (after the lookup missed).
    fn can_insert(&mut self, id: u32, size: u64) -> bool {
        if size as i64 > self.capacity {
            return false;
        }
        let s = self.s.find(id);
        if s != NIL {
            // A non-resident HIR block of S (a resident one would have hit).
            let s_size = self.s.size[s as usize] as i64;
            while self.lirs_count + s_size > self.lirs_limit && self.s.list.len > 0 {
                self.evict_lir();
            }
            self.nh.discard(id);
            return true;
        }
        let size = size as i64;
        if size > self.lirs_limit || size > self.hirs_limit {
            return false;
        }
        if self.lirs_count + size > self.lirs_limit && self.hirs_count + size > self.hirs_limit {
            while self.hirs_count + size > self.hirs_limit {
                if !self.evict_hir() {
                    break;
                }
            }
        }
        true
    }

    /// One step of making room (`LIRS_evict`); false when it could do nothing.
    fn evict(&mut self, id: u32, size: u64) -> bool {
        let size = size as i64;
        if self.s.find(id) != NIL {
            let mut progress = false;
            while self.hirs_count >= self.hirs_limit && self.evict_hir() {
                progress = true;
            }
            if self.s.list.len > 0 {
                self.evict_lir();
                progress = true;
            }
            return progress;
        }
        if self.lirs_count + size > self.lirs_limit && self.hirs_count + size > self.hirs_limit {
            return self.evict_hir();
        }
        false
    }

    /// `LIRS_insert`.
    fn insert(&mut self, id: u32, size: u64) {
        let s = self.s.find(id);
        if s != NIL {
            self.is_lir[s as usize] = true;
            self.in_cache[s as usize] = true;
            let s_size = self.s.size[s as usize] as i64;
            self.lirs_count += s_size;
            self.occupied += s_size;
        } else if self.lirs_count + size as i64 <= self.lirs_limit {
            self.s_insert(id, size, true);
            self.lirs_count += size as i64;
            self.occupied += size as i64;
        } else {
            self.s_insert(id, size, false);
            self.q.insert(id, size);
            self.hirs_count += size as i64;
            self.occupied += size as i64;
        }
    }

    /// Whether `id` is resident: a LIR or resident copy in S, or a copy in Q.
    fn resident(&self, id: u32) -> bool {
        let s = self.s.slots.peek(id);
        (s != NIL && (self.is_lir[s as usize] || self.in_cache[s as usize])) || self.q.slots.peek(id) != NIL
    }
}

impl Policy for Lirs {
    fn new(capacity: usize, n_ids: usize, _: Options) -> Self {
        // Same arithmetic as libCacheSim's LIRS_init.
        let hirs_limit = ((0.01 * capacity as f64) as i64).max(1);
        let capacity = capacity as i64;
        let expected = ((2 * capacity + 1) as usize).min(n_ids);
        Lirs {
            capacity,
            lirs_limit: capacity - hirs_limit,
            hirs_limit,
            s: Lru::new(n_ids, expected),
            q: Box::new(Lru::new(n_ids, expected)),
            nh: Box::new(Lru::new(n_ids, expected)),
            is_lir: Vec::with_capacity(expected),
            in_cache: Vec::with_capacity(expected),
            s_bytes: 0,
            lirs_count: 0,
            hirs_count: 0,
            occupied: 0,
        }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, _next_use: u64) -> bool {
        let hit = self.find(id);
        if !hit && self.can_insert(id, size) {
            while self.occupied + size as i64 > self.capacity {
                if !self.evict(id, size) {
                    break;
                }
            }
            self.insert(id, size);
        }
        // limitStack: S holds at most twice the capacity while NH has blocks to drop.
        while self.s_bytes > 2 * self.capacity {
            let oldest = self.nh.list.tail;
            if oldest == NIL {
                break;
            }
            let nh_id = self.nh.id(oldest);
            self.nh.remove(oldest);
            let s = self.s.find(nh_id);
            if s != NIL {
                self.s_remove(s);
            }
        }
        hit
    }

    #[inline(always)]
    fn prefetch(&self, id: u32) {
        // Each list keeps its own per-id slot array: a hit reads S's and Q's, a miss NH's too.
        self.s.slots.prefetch(id);
        self.q.slots.prefetch(id);
        self.nh.slots.prefetch(id);
    }

    #[inline(always)]
    fn prefetch_near(&self, id: u32) {
        let s = self.s.slots.peek(id);
        if s != NIL {
            self.s.links.prefetch(s);
            prefetch(self.is_lir.as_ptr().wrapping_add(s as usize));
        }
        let q = self.q.slots.peek(id);
        if q != NIL {
            self.q.links.prefetch(q);
        }
    }
    fn contains(&self, id: u32) -> bool {
        self.resident(id)
    }
    fn len(&self) -> usize {
        // Q's copies are resident; so are S's LIR and resident copies that Q does not hold.
        let mut n = self.q.list.len;
        let mut slot = self.s.list.tail;
        while slot != NIL {
            let s = slot as usize;
            if (self.is_lir[s] || self.in_cache[s]) && self.q.slots.peek(self.s.id(slot)) == NIL {
                n += 1;
            }
            slot = self.s.links.newer(slot);
        }
        n
    }
    fn used(&self) -> u64 {
        let mut used: u64 = 0;
        let mut slot = self.q.list.tail;
        while slot != NIL {
            used += self.q.size[slot as usize];
            slot = self.q.links.newer(slot);
        }
        let mut slot = self.s.list.tail;
        while slot != NIL {
            let s = slot as usize;
            if (self.is_lir[s] || self.in_cache[s]) && self.q.slots.peek(self.s.id(slot)) == NIL {
                used += self.s.size[s];
            }
            slot = self.s.links.newer(slot);
        }
        used
    }
}
