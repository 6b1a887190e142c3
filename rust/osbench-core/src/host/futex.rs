//! futex ping-pong: one 32-bit word per direction in shared memory. A send stores the message
//! number (plus one, so 0 means "nothing yet") and wakes the waiter with `FUTEX_WAKE`; a receive
//! sleeps with `FUTEX_WAIT` while the word still holds the previous number. This is the wake-up
//! underneath every mutex and condition variable, with nothing else around it.
//!
//! The words live in a `MAP_SHARED` mapping and the operations are the shared (not
//! `FUTEX_PRIVATE_FLAG`) ones, so the same channel works between two processes after `fork`.

use super::sys::{errno, Mapping};
use super::{Channel, Side, POISON};
use crate::error::Result;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct Futex {
    words: Mapping,
}

impl Futex {
    pub fn new() -> Result<Futex> {
        Ok(Futex { words: Mapping::anonymous(4096, true, 0)? })
    }

    fn word(&self, side: Side) -> &AtomicU32 {
        let index = match side {
            Side::A => 0,
            Side::B => 16, // a different cache line
        };
        // SAFETY: the mapping is 4096 bytes, page aligned and zero-filled; both offsets are in
        // range and 4-byte aligned; AtomicU32 has the layout of u32.
        unsafe { &*(self.words.ptr as *const AtomicU32).add(index) }
    }
}

fn futex(word: &AtomicU32, op: libc::c_int, val: u32) -> libc::c_long {
    // SAFETY: the word is valid shared memory for the life of the channel; no timeout is given.
    unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), op, val, std::ptr::null::<libc::timespec>(), 0usize, 0u32) }
}

impl Channel for Futex {
    fn send(&self, to: Side, seq: u64) -> std::result::Result<(), i32> {
        let word = self.word(to);
        let value = if seq == POISON { u32::MAX } else { (seq as u32).wrapping_add(1) };
        word.store(value, Ordering::Release);
        if futex(word, libc::FUTEX_WAKE, 1) < 0 {
            return Err(errno());
        }
        Ok(())
    }

    /// Returns the message number found in the word.
    fn recv(&self, me: Side, expect: u64) -> std::result::Result<u64, i32> {
        let word = self.word(me);
        let previous = expect as u32; // the word holds seq + 1: the previous message is `expect`
        loop {
            let now = word.load(Ordering::Acquire);
            if now != previous {
                return Ok(if now == u32::MAX { POISON } else { now.wrapping_sub(1) as u64 });
            }
            if futex(word, libc::FUTEX_WAIT, previous) < 0 {
                let e = errno();
                // EAGAIN: the word changed before we slept; EINTR: a signal. Look again.
                if e != libc::EAGAIN && e != libc::EINTR {
                    return Err(e);
                }
            }
        }
    }
}
