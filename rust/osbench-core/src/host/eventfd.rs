//! eventfd ping-pong: one eventfd counter per direction. A send adds 1, a receive reads and
//! resets the counter. No payload travels, so a receive that reads anything but 1 means the two
//! sides did not strictly alternate.

use super::sys::{close, errno, os_error, read_exact, two, write_all};
use super::{Channel, Side, POISON};
use crate::error::Result;

pub struct EventFd {
    to_a: libc::c_int,
    to_b: libc::c_int,
}

fn eventfd() -> Result<libc::c_int> {
    // SAFETY: plain system call; the result is checked.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
    if fd < 0 {
        return Err(os_error("eventfd", errno()));
    }
    Ok(fd)
}

impl EventFd {
    pub fn new() -> Result<EventFd> {
        let (to_a, to_b) = two(eventfd, close)?;
        Ok(EventFd { to_a, to_b })
    }

    fn fd(&self, side: Side) -> libc::c_int {
        match side {
            Side::A => self.to_a,
            Side::B => self.to_b,
        }
    }
}

impl Channel for EventFd {
    fn send(&self, to: Side, seq: u64) -> std::result::Result<(), i32> {
        let add: u64 = if seq == POISON { 1 << 40 } else { 1 };
        write_all(self.fd(to), &add.to_ne_bytes())
    }

    /// Returns `expect` when exactly one message was pending, `POISON` otherwise.
    fn recv(&self, me: Side, expect: u64) -> std::result::Result<u64, i32> {
        let mut buf = [0u8; 8];
        read_exact(self.fd(me), &mut buf)?;
        Ok(if u64::from_ne_bytes(buf) == 1 { expect } else { POISON })
    }
}

impl Drop for EventFd {
    fn drop(&mut self) {
        close(self.to_a);
        close(self.to_b);
    }
}
