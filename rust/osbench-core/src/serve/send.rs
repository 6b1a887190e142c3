//! When each request is sent (`python/osbench/serve/drive.py: Sender`): the one send rule of
//! every loop that serves requests, one engine's ([`super::engine::run`]) and replicas' behind a
//! router ([`super::cluster`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{invalid, Result};

/// When each request is sent (`drive.py: Sender`): at its arrival, or under `concurrency` at
/// its arrival or `turnaround` seconds after a request finishes and leaves room, whichever is
/// later; the requests after the first `warmup` ones only once all of those have finished,
/// `turnaround` after the last finish.
pub(crate) struct Sender<'a> {
    arrival: &'a [f64],
    next: usize,
    turnaround: f64,
    /// When each free place in flight takes its next request (a min-heap of times' bits: all
    /// >= 0).
    room: Option<BinaryHeap<Reverse<u64>>>,
    /// The requests of the warm-up phase (the first ones).
    warmup: usize,
    /// Warm-up requests not finished yet: until they all have, no later request is sent, so
    /// every finish meanwhile is one of theirs.
    warming: usize,
    /// When the requests after the warm-up may be sent.
    opens: f64,
}

impl<'a> Sender<'a> {
    pub(crate) fn new(arrival: &'a [f64], concurrency: Option<usize>, turnaround: f64, warmup: usize) -> Self {
        let room = concurrency.map(|c| std::iter::repeat_n(Reverse(0.0f64.to_bits()), c.min(arrival.len())).collect());
        let warmup = if concurrency.is_some() { warmup.min(arrival.len()) } else { 0 };
        let opens = if warmup > 0 { f64::INFINITY } else { 0.0 };
        Sender { arrival, next: 0, turnaround, room, warmup, warming: warmup, opens }
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
            Some(room) => room.peek().map_or(f64::INFINITY, |&Reverse(t)| {
                let sent = self.arrival[self.next].max(f64::from_bits(t));
                if self.next < self.warmup {
                    sent
                } else {
                    sent.max(self.opens)
                }
            }),
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

    /// `count` requests finished at `end`, each leaving room for one more, taken `turnaround`
    /// seconds later; refused when that send would come at infinity (`drive.py: Sender`).
    pub(crate) fn finished(&mut self, end: f64, count: usize) -> Result<()> {
        let next = end + self.turnaround;
        if count > 0 && !next.is_finite() {
            return Err(invalid(
                "turnaround",
                format!("{:e}", self.turnaround),
                format!("a turnaround that keeps the clients' sends finite: after a finish at {end:e} s the next would come at inf"),
            ));
        }
        if let Some(room) = self.room.as_mut() {
            room.extend(std::iter::repeat_n(Reverse(next.to_bits()), count));
        }
        if self.warming > 0 && count > 0 {
            // Every finish is a warm-up request's until they all have finished (nothing else
            // was sent): `count` cannot exceed `warming`; saturating keeps that a certainty.
            self.warming = self.warming.saturating_sub(count);
            if self.warming == 0 {
                self.opens = next;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Sender;
    use crate::error::Error;

    #[test]
    fn a_freed_place_takes_the_next_request_a_turnaround_after_the_finish() {
        let arrival = [0.0, 0.0, 0.0, 2.0];
        let mut sender = Sender::new(&arrival, Some(2), 0.25, 0);
        assert_eq!((sender.send(), sender.send()), ((0, 0.0), (1, 0.0)));
        assert_eq!(sender.time(), f64::INFINITY); // both places taken
        sender.finished(1.0, 1).unwrap();
        assert_eq!(sender.send(), (2, 1.25));
        sender.finished(1.5, 1).unwrap();
        assert_eq!(sender.send(), (3, 2.0)); // its arrival is later than the freed place
        assert!(!sender.more());
    }

    #[test]
    fn the_requests_after_the_warm_up_wait_until_all_of_it_has_finished() {
        let arrival = [0.0; 5];
        let mut sender = Sender::new(&arrival, Some(2), 0.25, 3);
        assert_eq!((sender.send(), sender.send()), ((0, 0.0), (1, 0.0)));
        sender.finished(1.0, 1).unwrap();
        assert_eq!(sender.send(), (2, 1.25)); // the warm-up's last request
        sender.finished(2.0, 1).unwrap();
        assert_eq!(sender.time(), f64::INFINITY); // a place is free, but request 2 still runs
        sender.finished(3.0, 1).unwrap();
        assert_eq!((sender.send(), sender.send()), ((3, 3.25), (4, 3.25)));
    }

    #[test]
    fn a_send_that_would_come_at_infinity_is_refused_by_name() {
        let arrival = [0.0; 2];
        let mut sender = Sender::new(&arrival, Some(1), 1.7e308, 0);
        sender.send();
        let refused = sender.finished(1.7e308, 1);
        assert!(matches!(refused, Err(Error::InvalidArgument { name: "turnaround", .. })), "{refused:?}");
        assert!(sender.finished(1.7e308, 0).is_ok()); // no finish, no send
    }
}
