//! Round trips between two threads or two processes, timed on side A with no Python in the loop.
//!
//! Round trip `i`: A sends message `i` to B, B receives it and sends `i` back, A receives it.
//! Each side counts the messages it received and those that were not the one it expected, so
//! the caller can check that the two sides really alternated. B also publishes the CPU it ran on
//! at each hop, so every sample says where its two ends were (the unpinned runs are bimodal:
//! same CPU or not, depending on where the scheduler put them).
//!
//! A watchdog (the calling thread) wakes side A with a poison message if the caller cancels or
//! the child process dies, so nothing can block forever.

use super::sys::{self, check_cpu, current_cpu, Mapping};
use super::{Channel, Side, MECHANISMS, POISON};
use crate::cancel::Cancel;
use crate::error::{invalid, Error, Result};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Two threads of this process, or this process and a forked child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Threads,
    Processes,
}

impl Mode {
    pub fn parse(name: &str) -> Result<Mode> {
        match name {
            "threads" => Ok(Mode::Threads),
            "processes" => Ok(Mode::Processes),
            _ => Err(invalid("mode", name, "one of threads, processes")),
        }
    }
}

/// What one ping-pong run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PingPong {
    /// Nanoseconds per round trip, one sample per timed batch.
    pub samples_ns: Vec<f64>,
    /// The CPU side A was on at the end of each sample, and the CPU side B last echoed from.
    pub cpu_a: Vec<i32>,
    pub cpu_b: Vec<i32>,
    /// Messages each side received (warm-up included): both equal the number of round trips.
    pub received_a: u64,
    pub received_b: u64,
    /// Messages that were not the one expected (a strict alternation gives 0).
    pub mismatched: u64,
    /// Round trips made, warm-up included.
    pub round_trips: u64,
}

/// Counters both sides update; placed in `MAP_SHARED` memory so a forked child updates them too.
#[repr(C)]
struct Shared {
    received_a: AtomicU64,
    received_b: AtomicU64,
    mismatched: AtomicU64,
    cpu_b: AtomicI32,
    /// Set when the run must end early; `reason` says why (an errno, or one of the codes below).
    stop: AtomicBool,
    reason: AtomicI32,
    child: AtomicI32,
}

const REASON_CANCEL: i32 = -1;
const REASON_CHILD_DIED: i32 = -2;

fn shared(map: &Mapping) -> &Shared {
    // SAFETY: the mapping is a zero-filled page, larger than Shared and page aligned; all fields
    // are atomics for which all-zero bytes are valid values.
    unsafe { &*(map.ptr as *const Shared) }
}

/// Stop the run and wake side A (it may be blocked in a receive).
fn abort(ch: &dyn Channel, sh: &Shared, reason: i32) {
    if !sh.stop.swap(true, Ordering::AcqRel) {
        sh.reason.store(reason, Ordering::Release);
    }
    let _ = ch.send(Side::A, POISON);
}

/// Side B: echo `total` messages. Runs in a thread or a forked child: no allocation.
fn echo(ch: &dyn Channel, sh: &Shared, total: u64, cpu: Option<usize>) -> std::result::Result<(), i32> {
    if let Some(c) = cpu {
        sys::pin(c)?;
    }
    for i in 0..total {
        let got = ch.recv(Side::B, i)?;
        if sh.stop.load(Ordering::Acquire) {
            return Ok(());
        }
        sh.received_b.fetch_add(1, Ordering::Relaxed);
        if got != i {
            sh.mismatched.fetch_add(1, Ordering::Relaxed);
        }
        sh.cpu_b.store(current_cpu(), Ordering::Relaxed);
        ch.send(Side::A, i)?;
    }
    Ok(())
}

fn echo_or_abort(ch: &dyn Channel, sh: &Shared, total: u64, cpu: Option<usize>) -> bool {
    match echo(ch, sh, total, cpu) {
        Ok(()) => true,
        Err(errno) => {
            abort(ch, sh, errno.max(1));
            false
        }
    }
}

/// One round trip from side A; `Err` when the run must stop.
fn round_trip(ch: &dyn Channel, sh: &Shared, i: u64) -> std::result::Result<(), ()> {
    ch.send(Side::B, i).map_err(|e| abort(ch, sh, e.max(1)))?;
    let got = ch.recv(Side::A, i).map_err(|e| abort(ch, sh, e.max(1)))?;
    if sh.stop.load(Ordering::Acquire) {
        return Err(());
    }
    sh.received_a.fetch_add(1, Ordering::Relaxed);
    if got != i {
        sh.mismatched.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

struct Plan {
    rounds: usize,
    warmup: usize,
    batch: usize,
}

/// Side A: warm up, then time `rounds` batches of `batch` round trips.
fn drive(ch: &dyn Channel, sh: &Shared, plan: &Plan, cpu: Option<usize>, out: &mut PingPong) {
    if let Some(c) = cpu {
        if let Err(e) = sys::pin(c) {
            abort(ch, sh, e.max(1));
            return;
        }
    }
    let mut i = 0u64;
    for _ in 0..plan.warmup {
        if round_trip(ch, sh, i).is_err() {
            return;
        }
        i += 1;
    }
    for _ in 0..plan.rounds {
        let start = Instant::now();
        for _ in 0..plan.batch {
            if round_trip(ch, sh, i).is_err() {
                return;
            }
            i += 1;
        }
        let ns = start.elapsed().as_nanos() as f64 / plan.batch as f64;
        out.samples_ns.push(ns);
        out.cpu_a.push(current_cpu());
        out.cpu_b.push(sh.cpu_b.load(Ordering::Relaxed));
    }
}

fn channel(mechanism: &str) -> Result<Box<dyn Channel + Send>> {
    let Some(m) = MECHANISMS.iter().find(|m| m.name == mechanism) else {
        let names: Vec<&str> = MECHANISMS.iter().map(|m| m.name).collect();
        return Err(invalid("mechanism", mechanism, format!("one of {}", names.join(", "))));
    };
    (m.open)()
}

/// Did the child end other than by finishing its echoes (killed, or exited with an error)?
/// Looks without reaping it (WNOWAIT), so the final wait still works. A child that exited with
/// status 0 sent all its replies, which side A will still read.
fn child_failed(pid: libc::pid_t) -> bool {
    if pid <= 0 {
        return false;
    }
    // SAFETY: info is a valid, writable siginfo_t; WNOWAIT leaves the child to be reaped later.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT);
        r == 0 && info.si_pid() == pid && !(info.si_code == libc::CLD_EXITED && info.si_status() == 0)
    }
}

/// Round trips between two threads or two processes through `mechanism` (see [`MECHANISMS`]).
///
/// `rounds` timed samples of `batch` round trips each follow `warmup` untimed round trips.
/// `cpu_a`, `cpu_b` pin the two sides (None: where the scheduler puts them).
#[allow(clippy::too_many_arguments)]
pub fn pingpong(
    mechanism: &str,
    mode: Mode,
    rounds: usize,
    warmup: usize,
    batch: usize,
    cpu_a: Option<usize>,
    cpu_b: Option<usize>,
    cancel: &Cancel,
) -> Result<PingPong> {
    if rounds == 0 || rounds > 10_000_000 {
        return Err(invalid("rounds", rounds, "a number of samples from 1 to 10,000,000"));
    }
    if batch == 0 || batch > 1_000_000 {
        return Err(invalid("batch", batch, "a number of round trips per sample from 1 to 1,000,000"));
    }
    if warmup > 10_000_000 {
        return Err(invalid("warmup", warmup, "a number of round trips from 0 to 10,000,000"));
    }
    let total = (rounds as u64) * (batch as u64) + warmup as u64;
    if total >= (u32::MAX as u64) / 2 {
        return Err(invalid("rounds", rounds, "fewer than 2**31 round trips in all (rounds x batch + warmup)"));
    }
    check_cpu("cpu_a", cpu_a)?;
    check_cpu("cpu_b", cpu_b)?;
    let ch = channel(mechanism)?;
    let map = Mapping::anonymous(4096, true, 0)?;
    let sh = shared(&map);
    sh.cpu_b.store(-1, Ordering::Relaxed);
    let plan = Plan { rounds, warmup, batch };
    let mut out = PingPong {
        samples_ns: Vec::with_capacity(rounds),
        cpu_a: Vec::with_capacity(rounds),
        cpu_b: Vec::with_capacity(rounds),
        received_a: 0,
        received_b: 0,
        mismatched: 0,
        round_trips: 0,
    };
    let ch: &(dyn Channel + Send) = &*ch;
    let mut fork_errno = 0;
    std::thread::scope(|scope| {
        let (out, fork_errno, plan) = (&mut out, &mut fork_errno, &plan);
        let side_a = scope.spawn(move || match mode {
            Mode::Threads => {
                let side_b = scope.spawn(move || echo_or_abort(ch, sh, total, cpu_b));
                drive(ch, sh, plan, cpu_a, out);
                if sh.stop.load(Ordering::Acquire) {
                    // B may be blocked waiting for a message that will not come.
                    let _ = ch.send(Side::B, POISON);
                }
                let _ = side_b.join();
                true
            }
            Mode::Processes => {
                // Fork before pinning A, so an unpinned child keeps the process's CPU set.
                // SAFETY: the child only runs `echo` (system calls and atomics) and `_exit`.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    let ok = echo_or_abort(ch, sh, total, cpu_b);
                    sys::child_exit(if ok { 0 } else { 1 });
                }
                if pid < 0 {
                    *fork_errno = sys::errno();
                    return false;
                }
                sh.child.store(pid, Ordering::Release);
                drive(ch, sh, plan, cpu_a, out);
                if sh.stop.load(Ordering::Acquire) {
                    let _ = ch.send(Side::B, POISON);
                }
                sys::wait_child(pid)
            }
        });
        // The watchdog: wake A if the caller cancels or the child dies.
        while !side_a.is_finished() {
            std::thread::park_timeout(Duration::from_millis(20));
            if cancel.check().is_err() {
                abort(ch, sh, REASON_CANCEL);
            } else if mode == Mode::Processes && child_failed(sh.child.load(Ordering::Acquire)) {
                abort(ch, sh, REASON_CHILD_DIED);
            }
        }
        let _ = side_a.join();
    });
    if fork_errno != 0 {
        return Err(sys::os_error("fork", fork_errno));
    }
    if sh.stop.load(Ordering::Acquire) {
        return Err(match sh.reason.load(Ordering::Acquire) {
            REASON_CANCEL => Error::Interrupted,
            REASON_CHILD_DIED => sys::os_error("the echo child", libc::ECHILD),
            errno => sys::os_error("the ping-pong channel", errno),
        });
    }
    out.received_a = sh.received_a.load(Ordering::Acquire);
    out.received_b = sh.received_b.load(Ordering::Acquire);
    out.mismatched = sh.mismatched.load(Ordering::Acquire);
    out.round_trips = total;
    Ok(out)
}
