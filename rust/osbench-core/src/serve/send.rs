//! When each request is sent (`python/osbench/serve/drive.py: Sender`): the one send rule of
//! every loop that serves requests, one engine's ([`super::engine::run`]) and replicas' behind a
//! router ([`super::cluster`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// When each request is sent (`drive.py: Sender`): at its arrival, or under `concurrency` at
/// its arrival or when a request finishes and leaves room, whichever is later.
pub(crate) struct Sender<'a> {
    arrival: &'a [f64],
    next: usize,
    /// When each free place in flight became free (a min-heap of times' bits: all >= 0).
    room: Option<BinaryHeap<Reverse<u64>>>,
}

impl<'a> Sender<'a> {
    pub(crate) fn new(arrival: &'a [f64], concurrency: Option<usize>) -> Self {
        let room = concurrency.map(|c| std::iter::repeat_n(Reverse(0.0f64.to_bits()), c.min(arrival.len())).collect());
        Sender { arrival, next: 0, room }
    }

    pub(crate) fn more(&self) -> bool {
        self.next < self.arrival.len()
    }

    pub(crate) fn time(&self) -> f64 {
        if !self.more() {
            return f64::INFINITY;
        }
        match &self.room {
            None => self.arrival[self.next],
            Some(room) => {
                room.peek().map_or(f64::INFINITY, |&Reverse(t)| self.arrival[self.next].max(f64::from_bits(t)))
            }
        }
    }

    pub(crate) fn send(&mut self) -> (usize, f64) {
        let sent = (self.next, self.time());
        if let Some(room) = self.room.as_mut() {
            room.pop();
        }
        self.next += 1;
        sent
    }

    pub(crate) fn finished(&mut self, end: f64, count: usize) {
        if let Some(room) = self.room.as_mut() {
            room.extend(std::iter::repeat_n(Reverse(end.to_bits()), count));
        }
    }
}
