//! The event-driven allocation simulator.
//!
//! Request `i` arrives at `arrival[i]`, holds `initial[i]` units, grows one unit at a time to
//! `final_size[i]` while it lives, and leaves at `arrival[i] + duration[i]`. With
//! `g = final - initial > 0` the k-th unit (k = 1..g) comes at
//! `arrival + duration * k / (g + 1)`, so a request reaches its final size before it leaves.
//!
//! Events at the same time run departures first, then growth, then arrivals; among events
//! of one kind the lower request id goes first. Arrivals must come in non-decreasing time.
//! At each arrival, before placing the request, the simulator records the data held (sum of
//! the current sizes of live requests), the units allocated, and the largest free block: the
//! memory as an arriving request sees it (with Poisson arrivals, the time average).
//! A request larger than the whole capacity is refused and counted, like any other refusal.

use super::queue::EventHeap;
use super::{AnyStrategy, Strategy};
use crate::cancel::Cancel;
use crate::error::{invalid, Result};

pub const SERVED: u8 = 0;
pub const REJECTED: u8 = 1;
pub const PREEMPTED: u8 = 2;

const DEPART: u8 = 0;
const GROW: u8 = 1;

/// Arrivals and events between two looks at the cancel flag.
const CHUNK: usize = 1 << 14;

/// The requests: parallel slices, one entry per request.
#[derive(Debug, Clone, Copy)]
pub struct Requests<'a> {
    pub arrival: &'a [f64],
    pub duration: &'a [f64],
    pub initial: &'a [u64],
    pub final_size: &'a [u64],
}

/// What happened: per request, its status and the memory it saw at its arrival.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// [`SERVED`], [`REJECTED`] at arrival, or [`PREEMPTED`] (could not grow).
    pub status: Vec<u8>,
    pub data: Vec<u64>,
    pub allocated: Vec<u64>,
    pub largest_free: Vec<u64>,
}

/// The same, written into slices the caller owns (one entry per request each).
#[derive(Debug)]
pub struct OutcomeMut<'a> {
    pub status: &'a mut [u8],
    pub data: &'a mut [u64],
    pub allocated: &'a mut [u64],
    pub largest_free: &'a mut [u64],
}

/// A pending event, ordered by (time, kind, request id), packed in one u128 so the heap
/// compares single integers (branch-free). Times are finite and >= 0, so the bits of the f64
/// (with -0.0 made +0.0) order like the numbers; they fill the high 64 bits, then the kind,
/// then the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event(u128);

impl Event {
    fn new(time: f64, kind: u8, id: u32) -> Event {
        Event((u128::from((time + 0.0).to_bits()) << 64) | (u128::from(kind) << 32) | u128::from(id))
    }
    fn time(&self) -> f64 {
        f64::from_bits((self.0 >> 64) as u64)
    }
    fn kind(&self) -> u8 {
        (self.0 >> 32) as u8
    }
    fn id(&self) -> u32 {
        self.0 as u32
    }
}

/// Validate the requests; the first bad entry is named.
pub fn validate(r: &Requests<'_>) -> Result<()> {
    let n = r.arrival.len();
    for (name, len) in
        [("duration", r.duration.len()), ("initial", r.initial.len()), ("final_size", r.final_size.len())]
    {
        if len != n {
            return Err(invalid(name, format!("{len} entries"), format!("{n} entries, one per request")));
        }
    }
    if n >= u32::MAX as usize {
        return Err(invalid("requests", n, "fewer than 2**32 - 1 requests"));
    }
    let mut last = 0.0f64;
    for i in 0..n {
        let (a, d, u, f) = (r.arrival[i], r.duration[i], r.initial[i], r.final_size[i]);
        if !(a.is_finite() && a >= 0.0) || a < last {
            return Err(invalid("arrival", format!("{a} at index {i}"), "finite times >= 0 in non-decreasing order"));
        }
        if !(d.is_finite() && d > 0.0) {
            return Err(invalid("duration", format!("{d} at index {i}"), "finite positive durations"));
        }
        if u == 0 || u > f {
            return Err(invalid("initial", format!("{u} at index {i}"), format!("sizes in [1, final_size={f}]")));
        }
        last = a;
    }
    Ok(())
}

/// Run the requests through `strategy`. `check` verifies the strategy's invariants and the
/// simulator's bookkeeping after every event (slow; for tests).
pub fn simulate(
    strategy: &mut AnyStrategy,
    requests: &Requests<'_>,
    capacity: u64,
    check: bool,
    cancel: &Cancel,
) -> Result<Outcome> {
    let n = requests.arrival.len();
    let mut out =
        Outcome { status: vec![SERVED; n], data: vec![0; n], allocated: vec![0; n], largest_free: vec![0; n] };
    let view = OutcomeMut {
        status: &mut out.status,
        data: &mut out.data,
        allocated: &mut out.allocated,
        largest_free: &mut out.largest_free,
    };
    simulate_into(strategy, requests, capacity, check, cancel, view)?;
    Ok(out)
}

/// [`simulate`], writing into the caller's slices (every entry is written).
pub fn simulate_into(
    strategy: &mut AnyStrategy,
    requests: &Requests<'_>,
    capacity: u64,
    check: bool,
    cancel: &Cancel,
    out: OutcomeMut<'_>,
) -> Result<()> {
    validate(requests)?;
    let n = requests.arrival.len();
    for (name, len) in [
        ("status", out.status.len()),
        ("data", out.data.len()),
        ("allocated", out.allocated.len()),
        ("largest_free", out.largest_free.len()),
    ] {
        if len != n {
            return Err(invalid(name, format!("{len} entries"), format!("{n} entries, one per request")));
        }
    }
    match strategy {
        AnyStrategy::Contiguous(s) => run(s, requests, capacity, check, cancel, out),
        AnyStrategy::Paged(s) => run(s, requests, capacity, check, cancel, out),
    }
}

struct State {
    size: Vec<u64>,
    alive: Vec<bool>,
    data: u64,
    allocated: u64,
}

fn verify<S: Strategy>(s: &S, st: &State) -> Result<()> {
    let data: u64 = st.size.iter().zip(&st.alive).filter(|(_, &a)| a).map(|(&s, _)| s).sum();
    let problem = s.check().err().or_else(|| {
        (s.allocated() != st.allocated).then(|| format!("allocated {} != strategy's {}", st.allocated, s.allocated()))
    });
    let problem =
        problem.or_else(|| (data != st.data).then(|| format!("data {} != sum of live sizes {data}", st.data)));
    let problem =
        problem.or_else(|| (st.data > st.allocated).then(|| format!("data {} > allocated {}", st.data, st.allocated)));
    match problem {
        Some(p) => Err(invalid("check", "true", format!("an invariant was violated: {p}"))),
        None => Ok(()),
    }
}

fn growth_time(r: &Requests<'_>, i: usize, k: u64) -> f64 {
    let g = r.final_size[i] - r.initial[i];
    r.arrival[i] + r.duration[i] * (k as f64) / ((g + 1) as f64)
}

fn run<S: Strategy>(
    s: &mut S,
    r: &Requests<'_>,
    capacity: u64,
    check: bool,
    cancel: &Cancel,
    mut out: OutcomeMut<'_>,
) -> Result<()> {
    let n = r.arrival.len();
    out.status.fill(SERVED);
    let mut st = State { size: vec![0; n], alive: vec![false; n], data: 0, allocated: 0 };
    let mut heap: EventHeap<Event> = EventHeap::new();

    let handle = |s: &mut S, st: &mut State, heap: &mut EventHeap<Event>, out: &mut OutcomeMut<'_>, ev: Event| {
        let i = ev.id() as usize;
        if !st.alive[i] {
            return; // preempted earlier: its remaining events are void
        }
        if ev.kind() == DEPART {
            st.allocated -= s.release(i);
            st.data -= st.size[i];
            st.alive[i] = false;
            return;
        }
        let new_size = st.size[i] + 1;
        match s.grow(i, new_size) {
            Some(extra) => {
                st.allocated += extra;
                st.data += 1;
                st.size[i] = new_size;
                if new_size < r.final_size[i] {
                    // The next unit is number (units grown so far) + 1.
                    heap.push(Event::new(growth_time(r, i, new_size - r.initial[i] + 1), GROW, ev.id()));
                }
            }
            None => {
                st.allocated -= s.release(i);
                st.data -= st.size[i];
                st.alive[i] = false;
                out.status[i] = PREEMPTED;
            }
        }
    };

    // Arrivals and events since the last look at the cancel: a request may grow many times
    // between two arrivals. Progress: one unit an arrival.
    let mut work = 0usize;
    let mut reported = 0usize;
    macro_rules! tick {
        ($arrived:expr) => {
            work += 1;
            if work >= CHUNK {
                work = 0;
                cancel.advance(($arrived - reported) as u64)?;
                reported = $arrived;
            }
        };
    }
    cancel.plan(n as u64);
    for i in 0..n {
        tick!(i);
        let t = r.arrival[i];
        // Everything up to and including time t runs before the arrival (arrivals sort last).
        while let Some(&ev) = heap.peek() {
            if ev.time() > t {
                break;
            }
            tick!(i);
            heap.pop();
            handle(s, &mut st, &mut heap, &mut out, ev);
            if check {
                verify(s, &st)?;
            }
        }
        out.data[i] = st.data;
        out.allocated[i] = st.allocated;
        out.largest_free[i] = s.largest_free();
        let (u, f) = (r.initial[i], r.final_size[i]);
        let placed = if f > capacity { None } else { s.admit(i, u, f) };
        match placed {
            None => out.status[i] = REJECTED,
            Some(units) => {
                st.allocated += units;
                st.data += u;
                st.size[i] = u;
                st.alive[i] = true;
                heap.push(Event::new(t + r.duration[i], DEPART, i as u32));
                if f > u {
                    heap.push(Event::new(growth_time(r, i, 1), GROW, i as u32));
                }
            }
        }
        if check {
            verify(s, &st)?;
        }
    }
    cancel.progress((n - reported) as u64);
    reported = n;
    while let Some(ev) = heap.pop() {
        tick!(n);
        handle(s, &mut st, &mut heap, &mut out, ev);
        if check {
            verify(s, &st)?;
        }
    }
    Ok(())
}
