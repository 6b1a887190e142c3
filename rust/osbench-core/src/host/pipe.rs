//! Pipe ping-pong: two pipes, one per direction; a message is the 8-byte sequence number.
//! Each hop is a `write` on one side and a blocking `read` on the other: the classic
//! `perf bench sched pipe` and lmbench `lat_ctx` set-up.

use super::sys::{close, pipe, read_exact, two, write_all};
use super::{Channel, Side};
use crate::error::Result;

pub struct Pipe {
    /// `[read end, write end]` of the pipe carrying messages to A, and to B.
    to_a: [libc::c_int; 2],
    to_b: [libc::c_int; 2],
}

impl Pipe {
    pub fn new() -> Result<Pipe> {
        let (to_a, to_b) = two(pipe, |[read, write]| {
            close(read);
            close(write);
        })?;
        Ok(Pipe { to_a, to_b })
    }

    fn fds(&self, side: Side) -> [libc::c_int; 2] {
        match side {
            Side::A => self.to_a,
            Side::B => self.to_b,
        }
    }
}

impl Channel for Pipe {
    fn send(&self, to: Side, seq: u64) -> std::result::Result<(), i32> {
        write_all(self.fds(to)[1], &seq.to_ne_bytes())
    }

    /// Returns the sequence number carried by the message.
    fn recv(&self, me: Side, _expect: u64) -> std::result::Result<u64, i32> {
        let mut buf = [0u8; 8];
        read_exact(self.fds(me)[0], &mut buf)?;
        Ok(u64::from_ne_bytes(buf))
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        for fd in self.to_a.iter().chain(self.to_b.iter()) {
            close(*fd);
        }
    }
}
