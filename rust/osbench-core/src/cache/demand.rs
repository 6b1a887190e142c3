//! Demand paging with the byte accounting written once, as libCacheSim's `cache_get_base`
//! does it: on a miss, an object larger than the cache is never admitted; otherwise victims
//! leave until the newcomer fits ("while occupied + size > capacity: evict"), and it enters.
//! A policy that fits this shape only decides the order: what a hit changes, which object
//! leaves, where a newcomer goes ([`Evict`]). [`Demand`] makes it a [`Policy`].

use super::policy::{delegate, put, Gate, Options, Policy};

/// The order of a list-and-evict policy. Sizes never reach it: [`Demand`] counts them, by the
/// handle under which the policy keeps each object (its slot, or its id where it keeps
/// per-id state), so that they sit as close together as the policy's own state.
pub trait Evict {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self;
    /// If `id` is cached, record the hit (the policy's own bookkeeping) and return true.
    fn hit(&mut self, id: u32, next_use: u64) -> bool;
    /// Remove the policy's victim and return its handle; None when empty.
    fn evict(&mut self) -> Option<u32>;
    /// Insert `id`, which is not cached (room has been made); returns its handle.
    fn insert(&mut self, id: u32, next_use: u64) -> u32;
    fn contains(&self, id: u32) -> bool;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// [`Policy::prefetch`]: ask for the line of `id`'s per-id state.
    #[inline(always)]
    fn prefetch(&self, _id: u32) {}
    /// [`Policy::prefetch_near`].
    #[inline(always)]
    fn prefetch_near(&self, _id: u32) {}
}

/// An [`Evict`] order under demand paging, holding objects (or bytes) up to the capacity.
pub struct Demand<E> {
    order: E,
    capacity: u64,
    /// Objects held, or bytes in sized mode.
    used: u64,
    /// Sized mode: each cached object's size when it entered, by handle.
    size_of: Vec<u64>,
}

impl<E: Evict> Demand<E> {
    /// A miss: the newcomer enters if it fits the cache, after victims leave to make room.
    #[inline(always)]
    fn miss<const SIZED: bool>(&mut self, id: u32, size: u64, next_use: u64) {
        if SIZED && size > self.capacity {
            return;
        }
        while self.used + size > self.capacity {
            let Some(victim) = self.order.evict() else { break };
            self.used -= if SIZED { self.size_of[victim as usize] } else { 1 };
        }
        let handle = self.order.insert(id, next_use);
        if SIZED {
            put(&mut self.size_of, handle, size);
        }
        self.used += size;
    }
}

impl<E: Evict> Policy for Demand<E> {
    fn new(capacity: usize, n_ids: usize, options: Options) -> Self {
        Demand { order: E::new(capacity, n_ids, options), capacity: capacity as u64, used: 0, size_of: Vec::new() }
    }

    #[inline(always)]
    fn step<const SIZED: bool>(&mut self, id: u32, size: u64, next_use: u64) -> bool {
        if self.order.hit(id, next_use) {
            return true;
        }
        self.miss::<SIZED>(id, size, next_use);
        false
    }

    /// The lookup, then the gate, then the insertion: libCacheSim's order exactly (a missing
    /// object's lookup changes nothing here, so this is also the trait's default in effect).
    #[inline(always)]
    fn step_gated<const SIZED: bool, G: Gate>(&mut self, id: u32, size: u64, next_use: u64, gate: &mut G) -> bool {
        gate.seen(id, size);
        if self.order.hit(id, next_use) {
            return true;
        }
        if gate.admit(id, size) {
            self.miss::<SIZED>(id, size, next_use);
        }
        false
    }

    delegate!(order: contains, len, prefetch, prefetch_near);
    fn used(&self) -> u64 {
        self.used
    }
}
