//! Building blocks for the list-based policies.
//!
//! [`Slots`] gives each cached (or ghost) id a slot number below the cache's size, and
//! [`Links`] threads doubly linked lists through those slots. Per-access work then touches one
//! entry of the id-sized `slot_of` array and otherwise stays inside arrays as small as the cache,
//! which stay in the CPU caches: no hashing, no allocation. One [`Links`] can carry several
//! [`List`]s (ARC's four lists, LFU's frequency buckets), as a slot is in one list at a time.
//! [`Placed`] adds the queue each slot is in, for the policies whose objects and ghosts move
//! between queues. The sampling policies keep their objects in a [`Dense`] array instead.

use std::ops::{Deref, DerefMut};

use super::memory::{filled, prefetch};
use super::policy::{ensure, put};
use super::NIL;

/// One number per id (its slot, or its position), NIL for none: a policy's one id-sized array,
/// which grows as new ids come.
#[derive(Debug, Default, Clone)]
pub struct PerId(Vec<u32>);

impl PerId {
    /// NIL for ids below `n_ids` (more grow).
    pub fn new(n_ids: usize) -> Self {
        PerId(filled(n_ids, NIL))
    }

    /// The number of `id`, or NIL; makes room for a new id.
    #[inline(always)]
    pub fn get(&mut self, id: u32) -> u32 {
        ensure(&mut self.0, id, NIL);
        self.0[id as usize]
    }

    /// The number of `id`, or NIL.
    #[inline]
    pub fn peek(&self, id: u32) -> u32 {
        self.0.get(id as usize).copied().unwrap_or(NIL)
    }

    /// Set the number of `id`, which has been looked up ([`PerId::get`]).
    #[inline(always)]
    pub fn set(&mut self, id: u32, number: u32) {
        self.0[id as usize] = number;
    }

    /// Ask for the line holding `id`'s number (see [`prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        prefetch(self.0.as_ptr().wrapping_add(id as usize));
    }
}

/// id -> slot and slot -> id, with a free list of released slots.
#[derive(Debug, Default, Clone)]
pub struct Slots {
    slot_of: PerId,
    id_of: Vec<u32>,
    free: Vec<u32>,
}

impl Slots {
    pub fn new(n_ids: usize, expected_slots: usize) -> Self {
        Slots { slot_of: PerId::new(n_ids), id_of: Vec::with_capacity(expected_slots), free: Vec::new() }
    }

    /// The slot of `id`, or NIL.
    #[inline]
    pub fn get(&mut self, id: u32) -> u32 {
        self.slot_of.get(id)
    }

    /// Ask for the line holding `id`'s slot number.
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        self.slot_of.prefetch(id);
    }

    #[inline]
    pub fn peek(&self, id: u32) -> u32 {
        self.slot_of.peek(id)
    }

    /// Whether `id` holds a slot.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.peek(id) != NIL
    }

    /// Give `id` a slot (a released one if any). The caller has checked `get(id) == NIL`.
    #[inline]
    pub fn assign(&mut self, id: u32) -> u32 {
        let slot = match self.free.pop() {
            Some(s) => {
                self.id_of[s as usize] = id;
                s
            }
            None => {
                self.id_of.push(id);
                (self.id_of.len() - 1) as u32
            }
        };
        self.slot_of.set(id, slot);
        slot
    }

    /// The id in `slot` (a slot in use).
    #[inline]
    pub fn id(&self, slot: u32) -> u32 {
        self.id_of[slot as usize]
    }

    /// Take the slot away from its id.
    #[inline]
    pub fn release(&mut self, slot: u32) {
        let id = self.id_of[slot as usize];
        self.slot_of.set(id, NIL);
        self.free.push(slot);
    }
}

/// A slot's neighbours in its list (NIL at an end).
#[derive(Debug, Clone, Copy)]
pub struct Link {
    pub prev: u32,
    pub next: u32,
}

impl Link {
    /// The links of a slot in no list.
    pub const NONE: Link = Link { prev: NIL, next: NIL };
}

/// A per-slot record that holds its slot's [`Link`]: a [`Links`] node, or a policy's own record
/// that keeps the links beside the rest of the slot's state in one cache line (MQ's).
pub trait Linked {
    fn link(&self) -> Link;
    fn link_mut(&mut self) -> &mut Link;
}

impl Linked for Link {
    #[inline(always)]
    fn link(&self) -> Link {
        *self
    }
    #[inline(always)]
    fn link_mut(&mut self) -> &mut Link {
        self
    }
}

/// Put `slot` (in no list, its record in `nodes`) at the front of `list`.
#[inline(always)]
pub fn push_front<N: Linked>(nodes: &mut [N], list: &mut List, slot: u32) {
    *nodes[slot as usize].link_mut() = Link { prev: NIL, next: list.head };
    if list.head != NIL {
        nodes[list.head as usize].link_mut().prev = slot;
    } else {
        list.tail = slot;
    }
    list.head = slot;
    list.len += 1;
}

/// Take `slot` out of `list`, which holds it.
#[inline(always)]
pub fn unlink<N: Linked>(nodes: &mut [N], list: &mut List, slot: u32) {
    let Link { prev, next } = nodes[slot as usize].link();
    if prev != NIL {
        nodes[prev as usize].link_mut().next = next;
    } else {
        list.head = next;
    }
    if next != NIL {
        nodes[next as usize].link_mut().prev = prev;
    } else {
        list.tail = prev;
    }
    list.len -= 1;
}

#[derive(Debug, Default, Clone)]
pub struct Links {
    nodes: Vec<Link>,
}

/// One list: the front is the most recently inserted end, the back the oldest.
#[derive(Debug, Clone, Copy)]
pub struct List {
    pub head: u32,
    pub tail: u32,
    pub len: usize,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, len: 0 }
    }
}

impl Links {
    pub fn with_capacity(slots: usize) -> Self {
        Links { nodes: Vec::with_capacity(slots) }
    }

    /// Ask for the line of `slot`'s links.
    #[inline(always)]
    pub fn prefetch(&self, slot: u32) {
        prefetch(self.nodes.as_ptr().wrapping_add(slot as usize));
    }

    /// Make room for `slot`.
    #[inline]
    pub fn ensure(&mut self, slot: u32) {
        if slot as usize >= self.nodes.len() {
            self.nodes.resize(slot as usize + 1, Link::NONE);
        }
    }

    #[inline]
    pub fn push_front(&mut self, list: &mut List, slot: u32) {
        self.ensure(slot);
        push_front(&mut self.nodes, list, slot);
    }

    #[inline]
    pub fn remove(&mut self, list: &mut List, slot: u32) {
        unlink(&mut self.nodes, list, slot);
    }

    /// The neighbour of `slot` towards the front (the newer end), or NIL.
    #[inline]
    pub fn newer(&self, slot: u32) -> u32 {
        self.nodes.get(slot as usize).map_or(NIL, |n| n.prev)
    }

    /// Remove and return the oldest slot, or None when empty.
    #[inline]
    pub fn pop_back(&mut self, list: &mut List) -> Option<u32> {
        let slot = list.tail;
        if slot == NIL {
            return None;
        }
        self.remove(list, slot);
        Some(slot)
    }
}

/// `N` queues over one set of slots, each counting what it holds: bytes when the caller
/// passes `SIZED = true` (sizes recorded with [`Queues::set_size`]), else objects, so one
/// policy loop serves both modes and the unit path reads no sizes. The queues are indexed
/// by the policy's own constants. S3-FIFO and 2Q keep three, ARC four (see [`Placed`]).
pub struct Queues<const N: usize> {
    links: Links,
    lists: [List; N],
    held: [u64; N],
    size_of: Vec<u64>,
}

impl<const N: usize> Queues<N> {
    pub fn with_capacity(slots: usize) -> Self {
        Queues { links: Links::with_capacity(slots), lists: [List::default(); N], held: [0; N], size_of: Vec::new() }
    }

    /// The size of the object in `slot`: its bytes when sized, else 1.
    #[inline(always)]
    pub fn size<const SIZED: bool>(&self, slot: u32) -> u64 {
        if SIZED {
            self.size_of[slot as usize]
        } else {
            1
        }
    }

    /// Sized mode: record the size of the object entering `slot`.
    #[inline]
    pub fn set_size(&mut self, slot: u32, size: u64) {
        ensure(&mut self.size_of, slot, 0);
        self.size_of[slot as usize] = size;
    }

    /// What queue `q` holds: bytes when sized, else objects.
    #[inline]
    pub fn held(&self, q: usize) -> u64 {
        self.held[q]
    }

    /// The oldest slot of queue `q` (its next to leave), or NIL when it is empty.
    #[inline]
    pub fn oldest(&self, q: usize) -> u32 {
        self.lists[q].tail
    }

    /// Objects in queue `q`.
    #[inline]
    pub fn len(&self, q: usize) -> usize {
        self.lists[q].len
    }

    /// Put `slot` at the new end of queue `q`.
    #[inline]
    pub fn push<const SIZED: bool>(&mut self, q: usize, slot: u32) {
        self.held[q] += self.size::<SIZED>(slot);
        self.links.push_front(&mut self.lists[q], slot);
    }

    /// Take the oldest slot of queue `q`.
    #[inline]
    pub fn pop<const SIZED: bool>(&mut self, q: usize) -> Option<u32> {
        let slot = self.links.pop_back(&mut self.lists[q])?;
        self.held[q] -= self.size::<SIZED>(slot);
        Some(slot)
    }

    /// Take `slot` out of queue `q`.
    #[inline]
    pub fn remove<const SIZED: bool>(&mut self, q: usize, slot: u32) {
        self.links.remove(&mut self.lists[q], slot);
        self.held[q] -= self.size::<SIZED>(slot);
    }

    /// Move `slot` from queue `from` to the new end of queue `to`.
    #[inline]
    pub fn move_to<const SIZED: bool>(&mut self, from: usize, to: usize, slot: u32) {
        self.remove::<SIZED>(from, slot);
        self.push::<SIZED>(to, slot);
    }

    /// Give `id` a slot in `slots` and put it at the new end of queue `q` with its `size`
    /// (recorded in sized mode); returns the slot.
    #[inline]
    pub fn admit<const SIZED: bool>(&mut self, q: usize, id: u32, size: u64, slots: &mut Slots) -> u32 {
        let slot = slots.assign(id);
        if SIZED {
            self.set_size(slot, size);
        }
        self.push::<SIZED>(q, slot);
        slot
    }

    /// Take `slot` out of queue `q` and free it in `slots`.
    #[inline]
    pub fn forget<const SIZED: bool>(&mut self, q: usize, slot: u32, slots: &mut Slots) {
        self.remove::<SIZED>(q, slot);
        slots.release(slot);
    }

    /// Take the oldest slot of queue `q` and free it in `slots`; false when `q` is empty.
    #[inline]
    pub fn drop_oldest<const SIZED: bool>(&mut self, q: usize, slots: &mut Slots) -> bool {
        match self.pop::<SIZED>(q) {
            Some(slot) => {
                slots.release(slot);
                true
            }
            None => false,
        }
    }

    /// Take the oldest slots of queue `q`, freeing them in `slots`, until `size` more fits in
    /// `limit` (or `q` is empty): room in a ghost queue, or in an LRU of its own size.
    #[inline]
    pub fn make_room<const SIZED: bool>(&mut self, q: usize, size: u64, limit: u64, slots: &mut Slots) {
        while self.held[q] + size > limit {
            if !self.drop_oldest::<SIZED>(q, slots) {
                break;
            }
        }
    }

    /// Move `slot`, in queue `q`, to its new end (an LRU touch; what `q` holds is unchanged).
    #[inline]
    pub fn touch(&mut self, q: usize, slot: u32) {
        if self.lists[q].head != slot {
            self.links.remove(&mut self.lists[q], slot);
            self.links.push_front(&mut self.lists[q], slot);
        }
    }
}

/// [`Slots`], `N` [`Queues`] over them and the queue of each slot: the state of the policies
/// whose objects, and ghost ids, move between FIFO and LRU queues (ARC, S3-FIFO, 2Q, Clock2Q+).
/// The first `CACHED` queues hold the cached objects, the others ghost ids. Each operation keeps
/// the queue recorded for a slot the one it is in; queues are named by the policy's constants.
pub struct Placed<const N: usize, const CACHED: usize> {
    slots: Slots,
    queues: Queues<N>,
    /// The queue of each slot.
    place: Vec<u8>,
}

impl<const N: usize, const CACHED: usize> Placed<N, CACHED> {
    /// Ids below `n_ids` (more grow), about `expected` slots.
    pub fn new(n_ids: usize, expected: usize) -> Self {
        Placed {
            slots: Slots::new(n_ids, expected),
            queues: Queues::with_capacity(expected),
            place: Vec::with_capacity(expected),
        }
    }

    /// The slot of `id` and its queue, if it holds one (a cached object or a ghost).
    #[inline(always)]
    pub fn find(&mut self, id: u32) -> Option<(u32, usize)> {
        let slot = self.slots.get(id);
        if slot == NIL {
            None
        } else {
            Some((slot, self.place[slot as usize] as usize))
        }
    }

    /// Whether `id` is cached (holds a slot in a cached queue).
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        let slot = self.slots.peek(id);
        slot != NIL && (self.place[slot as usize] as usize) < CACHED
    }

    /// Ask for the line holding `id`'s slot number.
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        self.slots.prefetch(id);
    }

    /// Cached objects.
    pub fn len(&self) -> usize {
        (0..CACHED).map(|q| self.queues.len(q)).sum()
    }

    /// What the cached objects hold: bytes when sized, else objects.
    pub fn used(&self) -> u64 {
        (0..CACHED).map(|q| self.queues.held(q)).sum()
    }

    /// What queue `q` holds: bytes when sized, else objects.
    #[inline(always)]
    pub fn held(&self, q: usize) -> u64 {
        self.queues.held(q)
    }

    /// The size of the object in `slot`: its bytes when sized, else 1.
    #[inline(always)]
    pub fn size<const SIZED: bool>(&self, slot: u32) -> u64 {
        self.queues.size::<SIZED>(slot)
    }

    /// Give `id` a slot at the new end of `to`, with its `size` (recorded when sized).
    #[inline]
    pub fn admit<const SIZED: bool>(&mut self, to: usize, id: u32, size: u64) -> u32 {
        let slot = self.queues.admit::<SIZED>(to, id, size, &mut self.slots);
        put(&mut self.place, slot, to as u8);
        slot
    }

    /// Put `slot`, in no queue, at the new end of `to`.
    #[inline]
    pub fn push<const SIZED: bool>(&mut self, slot: u32, to: usize) {
        self.queues.push::<SIZED>(to, slot);
        self.place[slot as usize] = to as u8;
    }

    /// Take the oldest slot of `from` out of it (its place is then stale until it is pushed
    /// or released).
    #[inline]
    pub fn pop<const SIZED: bool>(&mut self, from: usize) -> Option<u32> {
        self.queues.pop::<SIZED>(from)
    }

    /// Move `slot` from its queue to the new end of `to`.
    #[inline]
    pub fn move_to<const SIZED: bool>(&mut self, slot: u32, to: usize) {
        self.queues.move_to::<SIZED>(self.place[slot as usize] as usize, to, slot);
        self.place[slot as usize] = to as u8;
    }

    /// Move `slot`, in queue `q`, to its new end (an LRU touch).
    #[inline]
    pub fn touch(&mut self, q: usize, slot: u32) {
        self.queues.touch(q, slot);
    }

    /// Free `slot`, in no queue (popped).
    #[inline]
    pub fn release(&mut self, slot: u32) {
        self.slots.release(slot);
    }

    /// Take `slot` out of its queue and free it.
    #[inline]
    pub fn forget<const SIZED: bool>(&mut self, slot: u32) {
        self.queues.forget::<SIZED>(self.place[slot as usize] as usize, slot, &mut self.slots);
    }

    /// Take the oldest slot of `from` and free it; false when `from` is empty.
    #[inline]
    pub fn drop_oldest<const SIZED: bool>(&mut self, from: usize) -> bool {
        self.queues.drop_oldest::<SIZED>(from, &mut self.slots)
    }

    /// [`Queues::make_room`] in queue `q`.
    #[inline]
    pub fn make_room<const SIZED: bool>(&mut self, q: usize, size: u64, limit: u64) {
        self.queues.make_room::<SIZED>(q, size, limit, &mut self.slots);
    }
}

/// What a [`Dense`] array holds of each cached object: at least its id.
pub trait Member: Copy {
    fn id(&self) -> u32;
}

/// Random's members are their ids.
impl Member for u32 {
    #[inline(always)]
    fn id(&self) -> u32 {
        *self
    }
}

/// The cached objects in one dense array, each id knowing its position in it (NIL if not
/// cached): a random draw is one index, and an eviction takes the victim's place with the last
/// member (swap-remove). Random's ids, Hyperbolic's entries, LHD's tags. Reads and writes the
/// members as a slice.
pub struct Dense<T> {
    members: Vec<T>,
    position: PerId,
}

impl<T: Member> Dense<T> {
    /// Room for about `expected` members, positions for ids below `n_ids` (more grow).
    pub fn new(expected: usize, n_ids: usize) -> Self {
        Dense { members: Vec::with_capacity(expected), position: PerId::new(n_ids) }
    }

    /// The position of `id`, or NIL; makes room for a new id.
    #[inline(always)]
    pub fn get(&mut self, id: u32) -> u32 {
        self.position.get(id)
    }

    /// The position of `id`, or NIL.
    #[inline]
    pub fn peek(&self, id: u32) -> u32 {
        self.position.peek(id)
    }

    /// Whether `id` is a member.
    #[inline]
    pub fn contains(&self, id: u32) -> bool {
        self.peek(id) != NIL
    }

    /// Add `member`, whose id is not a member and has been looked up ([`Dense::get`]), at the end.
    #[inline(always)]
    pub fn push(&mut self, member: T) {
        self.position.set(member.id(), self.members.len() as u32);
        self.members.push(member);
    }

    /// Remove and return the member at `at`; the last member takes its place.
    #[inline]
    pub fn swap_remove(&mut self, at: usize) -> T {
        let victim = self.members.swap_remove(at);
        if let Some(moved) = self.members.get(at) {
            self.position.set(moved.id(), at as u32);
        }
        self.position.set(victim.id(), NIL);
        victim
    }

    /// Ask for the line holding `id`'s position ([`Policy::prefetch`](super::Policy::prefetch)).
    #[inline(always)]
    pub fn prefetch(&self, id: u32) {
        self.position.prefetch(id);
    }

    /// Ask for the line of `id`'s member, if it is one (its position has arrived).
    #[inline(always)]
    pub fn prefetch_near(&self, id: u32) {
        let at = self.peek(id);
        if at != NIL {
            prefetch(self.members.as_ptr().wrapping_add(at as usize));
        }
    }
}

impl<T> Deref for Dense<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        &self.members
    }
}

impl<T> DerefMut for Dense<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.members
    }
}
