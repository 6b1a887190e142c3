//! A contiguous free list with coalescing: the state behind first, best and worst fit.
//!
//! Free blocks are kept sorted by address in two parallel arrays (addresses, sizes): the
//! choice rules scan the sizes, which sit contiguously in memory, and a freed block finds its
//! neighbours by binary search. A placement always takes the low end of the chosen block.
//! Freeing merges the block with a free neighbour on either side, so no two free blocks are
//! ever adjacent. Every operation is O(free blocks), with small constants: there are rarely
//! more free blocks than live requests. The choice rules are pure functions of the sizes
//! (`first.rs`, `best.rs`, `worst.rs`): they know nothing of this list.

use super::{best, first, worst};

#[derive(Debug, Clone, Default)]
pub struct FreeList {
    capacity: u64,
    addrs: Vec<u64>,
    sizes: Vec<u64>,
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
            fl.addrs.push(0);
            fl.sizes.push(capacity);
            fl.free = capacity;
        }
        fl
    }

    /// Total free units.
    pub fn free(&self) -> u64 {
        self.free
    }

    /// The largest free block (0 if none).
    pub fn largest(&self) -> u64 {
        self.sizes.iter().copied().max().unwrap_or(0)
    }

    /// Sizes of the free blocks, in address order.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// Free blocks in address order, as (address, size).
    pub fn blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.addrs.iter().copied().zip(self.sizes.iter().copied())
    }

    /// The block at position `i` in address order, as (address, size).
    pub fn block(&self, i: usize) -> Option<(u64, u64)> {
        Some((*self.addrs.get(i)?, *self.sizes.get(i)?))
    }

    /// Choose a block for `size` units under `fit`, take its low end, and return the address.
    pub fn allocate(&mut self, size: u64, fit: Fit) -> Option<u64> {
        if size == 0 {
            return None;
        }
        let i = match fit {
            Fit::First => first::pick(&self.sizes, size),
            Fit::Best => best::pick(&self.sizes, size),
            Fit::Worst => worst::pick(&self.sizes, size),
        }?;
        let (addr, block) = self.block(i)?;
        if block < size {
            return None;
        }
        if block > size {
            self.addrs[i] = addr + size;
            self.sizes[i] = block - size;
        } else {
            self.addrs.remove(i);
            self.sizes.remove(i);
        }
        self.free -= size;
        Some(addr)
    }

    /// Return `[addr, addr + size)` to the free list, merging with free neighbours.
    pub fn release(&mut self, addr: u64, size: u64) {
        // i: the first free block after addr.
        let i = self.addrs.partition_point(|&a| a < addr);
        let joins_before = i > 0 && self.addrs[i - 1] + self.sizes[i - 1] == addr;
        let joins_after = i < self.addrs.len() && addr + size == self.addrs[i];
        match (joins_before, joins_after) {
            (true, true) => {
                self.sizes[i - 1] += size + self.sizes[i];
                self.addrs.remove(i);
                self.sizes.remove(i);
            }
            (true, false) => self.sizes[i - 1] += size,
            (false, true) => {
                self.addrs[i] = addr;
                self.sizes[i] += size;
            }
            (false, false) => {
                self.addrs.insert(i, addr);
                self.sizes.insert(i, size);
            }
        }
        self.free += size;
    }

    /// Check the invariants: blocks inside capacity, in order, never touching or overlapping,
    /// the free total right. Returns a description of the first violation.
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
            end = Some(a + s);
            total += s;
        }
        if total != self.free || self.addrs.len() != self.sizes.len() {
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
            return Err(format!(
                "allocated {} + free {} != capacity {}",
                self.allocated,
                self.list.free(),
                self.list.capacity
            ));
        }
        Ok(())
    }
}
