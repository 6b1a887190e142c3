//! Intrusive doubly linked lists over dense ids: `prev`/`next` live in arrays indexed by id,
//! so moving an id costs a few array writes and no allocation. One [`Links`] can carry several
//! [`List`]s at once (ARC's four lists, LFU's frequency buckets) since an id is in one list at a time.

use super::{ensure, NIL};

#[derive(Debug, Default, Clone)]
pub struct Links {
    prev: Vec<u32>,
    next: Vec<u32>,
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
    pub fn with_ids(n_ids: usize) -> Self {
        Links { prev: vec![NIL; n_ids], next: vec![NIL; n_ids] }
    }

    /// Make room for `id` (online use).
    #[inline]
    pub fn ensure(&mut self, id: u32) {
        ensure(&mut self.prev, id, NIL);
        ensure(&mut self.next, id, NIL);
    }

    #[inline]
    pub fn push_front(&mut self, list: &mut List, id: u32) {
        let i = id as usize;
        self.prev[i] = NIL;
        self.next[i] = list.head;
        if list.head != NIL {
            self.prev[list.head as usize] = id;
        } else {
            list.tail = id;
        }
        list.head = id;
        list.len += 1;
    }

    #[inline]
    pub fn remove(&mut self, list: &mut List, id: u32) {
        let i = id as usize;
        let (p, n) = (self.prev[i], self.next[i]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            list.head = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            list.tail = p;
        }
        list.len -= 1;
    }

    /// Remove and return the oldest id, or None when empty.
    #[inline]
    pub fn pop_back(&mut self, list: &mut List) -> Option<u32> {
        let id = list.tail;
        if id == NIL {
            return None;
        }
        self.remove(list, id);
        Some(id)
    }
}
