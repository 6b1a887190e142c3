//! A contiguous free list with coalescing: the state behind first, best and worst fit.
//!
//! Free blocks are kept twice: by address (to find neighbours when a block is freed, and for
//! first fit) and by (size, address) (for best and worst fit). A placement always takes the
//! low end of the chosen block. Freeing merges the block with a free neighbour on either
//! side, so no two free blocks are ever adjacent.

use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Default)]
pub struct FreeList {
    capacity: u64,
    by_addr: BTreeMap<u64, u64>,
    by_size: BTreeSet<(u64, u64)>,
    free: u64,
}

/// Which free block a contiguous allocator picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// The lowest-addressed block that is large enough.
    First,
    /// The smallest block that is large enough; ties go to the lowest address.
    Best,
    /// The largest block; ties go to the lowest address.
    Worst,
}

impl FreeList {
    /// One free block covering `[0, capacity)`.
    pub fn new(capacity: u64) -> Self {
        let mut fl = FreeList { capacity, ..Default::default() };
        if capacity > 0 {
            fl.insert(0, capacity);
        }
        fl
    }

    fn insert(&mut self, addr: u64, size: u64) {
        self.by_addr.insert(addr, size);
        self.by_size.insert((size, addr));
        self.free += size;
    }

    fn remove(&mut self, addr: u64, size: u64) {
        self.by_addr.remove(&addr);
        self.by_size.remove(&(size, addr));
        self.free -= size;
    }

    /// Total free units.
    pub fn free(&self) -> u64 {
        self.free
    }

    /// The largest free block (0 if none).
    pub fn largest(&self) -> u64 {
        self.by_size.last().map_or(0, |&(s, _)| s)
    }

    /// Free blocks in address order, as (address, size).
    pub fn blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.by_addr.iter().map(|(&a, &s)| (a, s))
    }

    /// Free blocks indexed by (size, address).
    pub fn by_size(&self) -> &BTreeSet<(u64, u64)> {
        &self.by_size
    }

    /// Choose a block for `size` units under `fit`, take its low end, and return the address.
    pub fn allocate(&mut self, size: u64, fit: Fit) -> Option<u64> {
        if size == 0 || size > self.largest() {
            return None;
        }
        let (addr, block) = match fit {
            Fit::First => super::first::pick(self, size),
            Fit::Best => super::best::pick(self, size),
            Fit::Worst => super::worst::pick(self, size),
        }?;
        self.remove(addr, block);
        if block > size {
            self.insert(addr + size, block - size);
        }
        Some(addr)
    }

    /// Return `[addr, addr + size)` to the free list, merging with free neighbours.
    pub fn release(&mut self, addr: u64, size: u64) {
        let (mut start, mut len) = (addr, size);
        if let Some((&a, &s)) = self.by_addr.range(..addr).next_back() {
            if a + s == addr {
                self.remove(a, s);
                start = a;
                len += s;
            }
        }
        if let Some(&s) = self.by_addr.get(&(addr + size)) {
            self.remove(addr + size, s);
            len += s;
        }
        self.insert(start, len);
    }

    /// Check the invariants: blocks inside capacity, in order, never touching or overlapping,
    /// the two indexes agreeing, the free total right. Returns a description of the first
    /// violation.
    pub fn check(&self) -> std::result::Result<(), String> {
        let mut end = None::<u64>;
        let mut total = 0;
        for (a, s) in self.blocks() {
            if s == 0 || a + s > self.capacity {
                return Err(format!("free block [{a}, {}) is empty or outside capacity {}", a + s, self.capacity));
            }
            if let Some(e) = end {
                if a <= e {
                    return Err(format!("free block at {a} touches or overlaps the previous one ending at {e}"));
                }
            }
            if !self.by_size.contains(&(s, a)) {
                return Err(format!("free block [{a}, {}) missing from the size index", a + s));
            }
            end = Some(a + s);
            total += s;
        }
        if total != self.free || self.by_size.len() != self.by_addr.len() {
            return Err(format!("free total {} != sum of blocks {total}", self.free));
        }
        Ok(())
    }
}

/// A contiguous allocator: each request gets one block of the free list, chosen by `fit`.
/// With `bound` set it is the reserving allocator: every request gets exactly `bound` units
/// (placed first fit), and a request whose final size exceeds the bound is refused.
#[derive(Debug, Clone)]
pub struct Contiguous {
    fit: Fit,
    bound: Option<u64>,
    list: FreeList,
    /// Per request: (address, size) while it holds a block.
    placed: Vec<(u64, u64)>,
    allocated: u64,
}

impl Contiguous {
    pub fn new(fit: Fit, capacity: u64, n_requests: usize, bound: Option<u64>) -> Self {
        Contiguous { fit, bound, list: FreeList::new(capacity), placed: vec![(0, 0); n_requests], allocated: 0 }
    }
}

impl super::Strategy for Contiguous {
    fn admit(&mut self, id: usize, _initial: u64, final_size: u64) -> Option<u64> {
        let size = match self.bound {
            Some(b) if final_size > b => return None,
            Some(b) => b,
            // The fits are told the final size up front: the best case for contiguous allocation.
            None => final_size,
        };
        let addr = self.list.allocate(size, self.fit)?;
        *self.placed.get_mut(id)? = (addr, size);
        self.allocated += size;
        Some(size)
    }
    fn grow(&mut self, _id: usize, _new_size: u64) -> Option<u64> {
        Some(0) // the block already covers the final size
    }
    fn release(&mut self, id: usize) -> u64 {
        let Some(slot) = self.placed.get_mut(id) else { return 0 };
        let (addr, size) = std::mem::take(slot);
        if size > 0 {
            self.list.release(addr, size);
            self.allocated -= size;
        }
        size
    }
    fn largest_free(&self) -> u64 {
        self.list.largest()
    }
    fn allocated(&self) -> u64 {
        self.allocated
    }
    fn check(&self) -> std::result::Result<(), String> {
        self.list.check()?;
        // Live blocks and free blocks together must tile [0, capacity) without overlap.
        let mut spans: Vec<(u64, u64)> = self.placed.iter().copied().filter(|&(_, s)| s > 0).collect();
        spans.extend(self.list.blocks());
        spans.sort_unstable();
        let mut end = 0;
        for (a, s) in spans {
            if a < end {
                return Err(format!("block [{a}, {}) overlaps another ending at {end}", a + s));
            }
            if a > end {
                return Err(format!("[{end}, {a}) is neither free nor allocated"));
            }
            end = a + s;
        }
        if end != self.list.capacity {
            return Err(format!("blocks end at {end}, capacity is {}", self.list.capacity));
        }
        if self.allocated + self.list.free() != self.list.capacity {
            return Err(format!("allocated {} + free {} != capacity {}", self.allocated, self.list.free(), self.list.capacity));
        }
        Ok(())
    }
}
