//! CPU scheduling on one server (lecture section 2): the event loop and one file per policy.
//!
//! The semantics, tie-breaks included, are those of `python/osbench/sched/reference.py`; this
//! loop performs the same floating-point operations in the same order, so the two engines
//! give bit-equal completion times.
//!
//! Jobs are taken in arrival order (arrival time, ties by job id); a job's position in that
//! order is its `rank`, and every tie-break compares ranks. At each decision point the
//! policy picks a job and a limit on how long it may run (a quantum, or infinity); the job
//! runs for `min(remaining, limit, next_arrival - t)` (the last term only for preemptive
//! policies), ties going to the earlier term. Jobs that arrived by the new time join the
//! policy before an interrupted job is handed back. Starting a job other than the last one
//! run costs `switch_cost` (the very first job excepted). `ps` has its own loop by virtual time.

mod fcfs;
mod heap;
mod mlfq;
mod priority;
mod ps;
mod rr;
mod sjf;
mod srpt;

pub use fcfs::Fcfs;
pub use heap::{Heap, Key};
pub use mlfq::Mlfq;
pub use priority::Priority;
pub use rr::Rr;
pub use sjf::Sjf;
pub use srpt::Srpt;

use crate::cancel::Cancel;
use crate::error::{internal, invalid, Result};

/// The parameters of a run as users name them: the fields of [`Params`].
pub const QUANTUM: &str = "quantum";
pub const SWITCH_COST: &str = "switch_cost";
pub const LEVELS: &str = "levels";
pub const BOOST: &str = "boost";
pub const USE_PREDICTIONS: &str = "use_predictions";
pub const AGING: &str = "aging";

/// One row of the policy table: a policy as users see it, and how it runs.
#[derive(Clone, Copy)]
pub struct PolicyInfo {
    /// Lower case, as users name it.
    pub name: &'static str,
    /// The parameters it reads; every other must keep its default.
    pub reads: &'static [&'static str],
    /// Whether an arrival is a decision point (the running job may be preempted).
    pub preemptive: bool,
    run: fn(&mut Jobs, &[u32], &Params, &Cancel) -> Result<Outcome>,
}

impl PolicyInfo {
    /// A policy of the shared event loop ([`run`]); the type says whether it preempts.
    const fn looped<P: Policy>(name: &'static str, reads: &'static [&'static str]) -> PolicyInfo {
        PolicyInfo { name, reads, preemptive: P::PREEMPTIVE, run: run_looped::<P> }
    }
}

fn run_looped<P: Policy>(jobs: &mut Jobs, order: &[u32], p: &Params, cancel: &Cancel) -> Result<Outcome> {
    run(P::new(jobs, p), jobs, order, p.switch_cost, cancel)
}

/// Every policy, in the order users see them. The one list of policies: the binding exports
/// it, and Python derives its names, the parameters each accepts and the CLI's choices from it.
pub const POLICIES: [PolicyInfo; 7] = [
    PolicyInfo::looped::<Fcfs>("fcfs", &[SWITCH_COST]),
    PolicyInfo::looped::<Sjf>("sjf", &[SWITCH_COST, USE_PREDICTIONS]),
    PolicyInfo::looped::<Srpt>("srpt", &[SWITCH_COST, USE_PREDICTIONS]),
    PolicyInfo::looped::<Rr>("rr", &[SWITCH_COST, QUANTUM]),
    // Processor sharing has a loop of its own, by virtual time; it never switches, so it
    // reads no switch cost (the quantum -> 0 limit would switch infinitely often).
    PolicyInfo { name: "ps", reads: &[], preemptive: true, run: |jobs, order, _, cancel| ps::run(jobs, order, cancel) },
    PolicyInfo::looped::<Mlfq>("mlfq", &[SWITCH_COST, QUANTUM, LEVELS, BOOST]),
    PolicyInfo::looped::<Priority>("priority", &[SWITCH_COST, AGING]),
];

/// The row of the policy named `name`.
pub fn policy(name: &str) -> Result<&'static PolicyInfo> {
    POLICIES.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
        invalid("policy", format!("{name:?}"), format!("one of {}", names.join(", ")))
    })
}

/// How many loop iterations run between two looks at the cancel flag.
const CHECK_EVERY: u32 = 1 << 16;

/// An event loop's finished jobs, told to `cancel` (which may stop the run) every
/// [`CHECK_EVERY`] iterations and once more at the end.
#[derive(Default)]
struct Progress {
    tick: u32,
    reported: usize,
}

impl Progress {
    /// One more iteration, `done` jobs finished so far.
    #[inline]
    fn tick(&mut self, done: usize, cancel: &Cancel) -> Result<()> {
        self.tick += 1;
        if self.tick == CHECK_EVERY {
            self.tick = 0;
            cancel.advance((done - self.reported) as u64)?;
            self.reported = done;
        }
        Ok(())
    }

    /// The end of the run: the jobs finished since the last look.
    fn finish(&self, done: usize, cancel: &Cancel) {
        cancel.progress((done - self.reported) as u64);
    }
}

/// The jobs: inputs and the state that changes during a run.
pub struct Jobs<'a> {
    pub arrival: &'a [f64],
    pub size: &'a [f64],
    pub predicted: &'a [f64],
    /// Priority key: class + aging * arrival (smaller runs first).
    pub key: Vec<f64>,
    pub rank: Vec<u32>,
    pub remaining: Vec<f64>,
    pub attained: Vec<f64>,
}

/// What the event loop asks of a policy.
pub trait Policy {
    /// True when an arrival is a decision point (the running job may be preempted).
    const PREEMPTIVE: bool;
    /// A policy with no job yet, for these jobs, reading the parameters it uses.
    fn new(jobs: &Jobs, params: &Params) -> Self;
    fn arrive(&mut self, jobs: &Jobs, j: u32, t: f64);
    fn is_empty(&self) -> bool;
    /// Remove and return the job to run now and how long it may run at most.
    /// Called only when not empty.
    fn pick(&mut self, jobs: &Jobs, t: f64) -> (u32, f64);
    /// Job `j` ran `ran` and was interrupted (not finished) at time `t`.
    fn put_back(&mut self, jobs: &Jobs, j: u32, ran: f64, t: f64);
}

/// Parameters of a run; each policy reads the ones its row lists.
#[derive(Debug, Clone, Copy)]
pub struct Params {
    pub quantum: f64,
    pub switch_cost: f64,
    /// MLFQ levels; 0 = unbounded.
    pub levels: u32,
    /// MLFQ boost period; infinity = never.
    pub boost: f64,
    pub use_predictions: bool,
    pub aging: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params { quantum: 0.1, switch_cost: 0.0, levels: 0, boost: f64::INFINITY, use_predictions: false, aging: 0.0 }
    }
}

impl Params {
    /// (name, value as users see it, whether it is the default) of every parameter.
    fn each(&self) -> [(&'static str, String, bool); 6] {
        let d = Params::default();
        let levels = if self.levels == 0 { "None".to_string() } else { self.levels.to_string() };
        let boost = if self.boost == f64::INFINITY { "None".to_string() } else { self.boost.to_string() };
        [
            (QUANTUM, self.quantum.to_string(), self.quantum == d.quantum),
            (SWITCH_COST, self.switch_cost.to_string(), self.switch_cost == d.switch_cost),
            (LEVELS, levels, self.levels == d.levels),
            (BOOST, boost, self.boost == d.boost),
            (USE_PREDICTIONS, self.use_predictions.to_string(), self.use_predictions == d.use_predictions),
            (AGING, self.aging.to_string(), self.aging == d.aging),
        ]
    }
}

/// The result of a run: per-job completion and first-service times, and switch counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub completion: Vec<f64>,
    pub first_start: Vec<f64>,
    pub switches: u64,
    pub switch_time: f64,
}

fn check_array(name: &'static str, values: &[f64], positive: bool) -> Result<()> {
    for (i, &v) in values.iter().enumerate() {
        let ok = v.is_finite() && if positive { v > 0.0 } else { v >= 0.0 };
        if !ok {
            let what = if positive { "finite numbers > 0" } else { "finite numbers >= 0" };
            return Err(invalid(name, format!("{v} at index {i}"), what));
        }
    }
    Ok(())
}

/// Check the inputs and parameters of a run of `policy`.
pub fn validate(
    policy: &PolicyInfo,
    arrival: &[f64],
    size: &[f64],
    predicted: &[f64],
    classes: &[i64],
    p: &Params,
) -> Result<()> {
    let n = arrival.len();
    if size.len() != n {
        return Err(invalid("size", format!("{} entries", size.len()), format!("{n} entries, one per arrival")));
    }
    if !predicted.is_empty() && predicted.len() != n {
        return Err(invalid(
            "predicted",
            format!("{} entries", predicted.len()),
            format!("{n} entries, one per job (or none)"),
        ));
    }
    if !classes.is_empty() && classes.len() != n {
        return Err(invalid(
            "priority",
            format!("{} entries", classes.len()),
            format!("{n} entries, one per job (or none)"),
        ));
    }
    if n >= u32::MAX as usize {
        return Err(invalid("arrival", format!("{n} jobs"), "fewer than 2**32 - 1 jobs"));
    }
    check_array("arrival", arrival, false)?;
    check_array("size", size, true)?;
    check_array("predicted", predicted, true)?;
    if !(p.switch_cost.is_finite() && p.switch_cost >= 0.0) {
        return Err(invalid("switch_cost", p.switch_cost, "a finite number >= 0"));
    }
    if !(p.quantum.is_finite() && p.quantum > 0.0) {
        return Err(invalid("quantum", p.quantum, "a finite number > 0"));
    }
    if policy.reads.contains(&QUANTUM) {
        let floor = quantum_floor(size);
        if p.quantum < floor {
            return Err(invalid(
                "quantum",
                p.quantum,
                format!("at least {floor:e}: a shorter turn is lost in the rounding of the largest job's work"),
            ));
        }
    }
    if p.boost.is_nan() || p.boost <= 0.0 {
        return Err(invalid("boost", p.boost, "a number > 0 (infinity: never)"));
    }
    if !(p.aging.is_finite() && p.aging >= 0.0) {
        return Err(invalid("aging", p.aging, "a finite number >= 0"));
    }
    for (name, value, default) in p.each() {
        if !default && !policy.reads.contains(&name) {
            let reads = if policy.reads.is_empty() { "none".to_string() } else { policy.reads.join(", ") };
            return Err(invalid(
                name,
                value,
                format!("its default for policy={:?}, which does not read it (it reads {reads})", policy.name),
            ));
        }
    }
    if p.use_predictions && predicted.is_empty() {
        return Err(invalid("predicted", "none", "predicted sizes when use_predictions is true"));
    }
    Ok(())
}

/// The shortest quantum that always makes progress: a turn takes `min(quantum, remaining)`
/// from a job's remaining work (and adds it to its attained service), both at most the
/// largest job `S`, and any `x <= S` changes when `2 * S * EPSILON` (at least one unit in the
/// last place of `S`) is added to or taken from it; a shorter turn could leave the work
/// unchanged forever. (The clock may be coarser, far from 0: a turn then still ends, on the
/// clock's resolution.) The Python layer computes the same floor
/// (`osbench.sched.schedule.quantum_floor`).
pub fn quantum_floor(size: &[f64]) -> f64 {
    2.0 * size.iter().fold(0.0f64, |m, &s| m.max(s)) * f64::EPSILON
}

/// Build the job table: ranks in arrival order (ties by id) and priority keys. Built in
/// steps of [`CHECK_EVERY`] jobs with a look at `cancel` between them (a table of 100M jobs
/// takes seconds); arrivals already in order, as generated workloads are, are not sorted, and
/// others are sorted by [`arrival_order`], which looks at `cancel` as often.
pub fn make_jobs<'a>(
    arrival: &'a [f64],
    size: &'a [f64],
    predicted: &'a [f64],
    classes: &[i64],
    aging: f64,
    cancel: &Cancel,
) -> Result<(Jobs<'a>, Vec<u32>)> {
    let n = arrival.len();
    let step = CHECK_EVERY as usize;
    // In the sort's own order (-0.0 before 0.0).
    let in_order = |a: f64, b: f64| a.total_cmp(&b).is_le();
    let mut sorted = true;
    for part in arrival.chunks(step) {
        cancel.check()?;
        sorted &= part.windows(2).all(|w| in_order(w[0], w[1]));
    }
    sorted &= arrival.chunks(step).zip(arrival.chunks(step).skip(1)).all(|(a, b)| in_order(a[a.len() - 1], b[0]));
    let order = if sorted {
        let mut order: Vec<u32> = Vec::with_capacity(n);
        for a in (0..n).step_by(step) {
            cancel.check()?;
            order.extend(a as u32..(a + step).min(n) as u32);
        }
        order
    } else {
        arrival_order(arrival, cancel)?
    };
    let mut rank = vec![0u32; n];
    for (k, part) in order.chunks(step).enumerate() {
        cancel.check()?;
        for (r, &j) in part.iter().enumerate() {
            rank[j as usize] = (k * step + r) as u32;
        }
    }
    let mut key = Vec::with_capacity(n);
    for a in (0..n).step_by(step) {
        cancel.check()?;
        let b = (a + step).min(n);
        if classes.is_empty() {
            key.extend(arrival[a..b].iter().map(|&t| 0.0 + aging * t));
        } else {
            key.extend(classes[a..b].iter().zip(&arrival[a..b]).map(|(&c, &t)| c as f64 + aging * t));
        }
    }
    let predicted = if predicted.is_empty() { size } else { predicted };
    let mut remaining = Vec::with_capacity(n);
    for part in size.chunks(step) {
        cancel.check()?;
        remaining.extend_from_slice(part);
    }
    let jobs = Jobs { arrival, size, predicted, key, rank, remaining, attained: vec![0.0; n] };
    Ok((jobs, order))
}

/// The job ids in arrival order, ties by id (a stable sort's order, `total_cmp`'s: -0.0
/// before 0.0), sorted in steps of [`CHECK_EVERY`] with a look at `cancel` between them (one
/// sort of 30M arrivals takes seconds). Each job is sorted as the pair (arrival as an
/// order-preserving integer, id): pairs are distinct, so any sort gives the one order; runs of
/// `CHECK_EVERY` pairs are sorted, then merged pairwise, a step of output at a time.
pub fn arrival_order(arrival: &[f64], cancel: &Cancel) -> Result<Vec<u32>> {
    let n = arrival.len();
    let step = CHECK_EVERY as usize;
    let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(n);
    for (k, part) in arrival.chunks(step).enumerate() {
        cancel.check()?;
        let first = k * step;
        pairs.extend(part.iter().enumerate().map(|(i, &t)| (ordered_bits(t), (first + i) as u32)));
        let at = pairs.len() - part.len();
        pairs[at..].sort_unstable();
    }
    let mut spare: Vec<(u64, u32)> = Vec::with_capacity(n);
    let mut width = step;
    while width < n {
        spare.clear();
        for lo in (0..n).step_by(2 * width) {
            let (mid, hi) = ((lo + width).min(n), (lo + 2 * width).min(n));
            merge(&pairs[lo..mid], &pairs[mid..hi], &mut spare, step, cancel)?;
        }
        std::mem::swap(&mut pairs, &mut spare);
        width *= 2;
    }
    drop(spare);
    let mut order = Vec::with_capacity(n);
    for part in pairs.chunks(step) {
        cancel.check()?;
        order.extend(part.iter().map(|&(_, j)| j));
    }
    Ok(order)
}

/// An integer whose order is `f64::total_cmp`'s (negative numbers flipped whole, others above them).
fn ordered_bits(t: f64) -> u64 {
    let bits = t.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// Append the merge of two sorted runs to `out`, looking at `cancel` every `step` pairs.
fn merge(
    left: &[(u64, u32)],
    right: &[(u64, u32)],
    out: &mut Vec<(u64, u32)>,
    step: usize,
    cancel: &Cancel,
) -> Result<()> {
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        cancel.check()?;
        let end = out.len() + step;
        while out.len() < end && i < left.len() && j < right.len() {
            if left[i] < right[j] {
                out.push(left[i]);
                i += 1;
            } else {
                out.push(right[j]);
                j += 1;
            }
        }
    }
    for rest in [&left[i..], &right[j..]] {
        for part in rest.chunks(step) {
            cancel.check()?;
            out.extend_from_slice(part);
        }
    }
    Ok(())
}

/// Simulate `policy` on the jobs. `predicted` and `classes` may be empty (none given).
/// Progress: one unit a job finished (the number of turns is not known ahead).
pub fn simulate(
    policy: &str,
    arrival: &[f64],
    size: &[f64],
    predicted: &[f64],
    classes: &[i64],
    p: &Params,
    cancel: &Cancel,
) -> Result<Outcome> {
    let info = self::policy(policy)?;
    validate(info, arrival, size, predicted, classes, p)?;
    cancel.plan(arrival.len() as u64);
    let (mut jobs, order) = make_jobs(arrival, size, predicted, classes, p.aging, cancel)?;
    (info.run)(&mut jobs, &order, p, cancel)
}

/// The event loop shared by every policy but `ps` (see the module docs).
pub fn run<P: Policy>(
    mut pol: P,
    jobs: &mut Jobs,
    order: &[u32],
    switch_cost: f64,
    cancel: &Cancel,
) -> Result<Outcome> {
    let n = order.len();
    let mut completion = vec![f64::NAN; n];
    let mut first_start = vec![f64::NAN; n];
    let mut started = vec![false; n];
    let mut t = 0.0f64;
    let mut k = 0usize;
    let mut last = u32::MAX;
    let mut switches = 0u64;
    let mut switch_time = 0.0f64;
    let mut done = 0usize;
    let mut progress = Progress::default();

    // Hand every job that has arrived by `t` to the policy, in arrival order.
    macro_rules! admit {
        ($t:expr) => {
            while k < n && jobs.arrival[order[k] as usize] <= $t {
                pol.arrive(jobs, order[k], $t);
                k += 1;
            }
        };
    }

    while done < n {
        progress.tick(done, cancel)?;
        if pol.is_empty() {
            let Some(&next) = order.get(k) else {
                return Err(internal("the policy is empty but jobs remain and none is left to arrive"));
            };
            let a = jobs.arrival[next as usize];
            if a > t {
                t = a;
            }
            admit!(t);
        }
        let (j, limit) = pol.pick(jobs, t);
        let ju = j as usize;
        if last != u32::MAX && j != last {
            t += switch_cost;
            switches += 1;
            switch_time += switch_cost;
            admit!(t);
        }
        last = j;
        if !started[ju] {
            started[ju] = true;
            first_start[ju] = t;
        }
        let mut run = jobs.remaining[ju];
        let mut cause = 0u8;
        if limit < run {
            run = limit;
            cause = 1;
        }
        if P::PREEMPTIVE && k < n {
            let gap = jobs.arrival[order[k] as usize] - t;
            if gap < run {
                run = gap;
                cause = 2;
            }
        }
        if cause == 2 {
            t = jobs.arrival[order[k] as usize];
        } else {
            t += run;
        }
        jobs.attained[ju] += run;
        if cause == 0 {
            jobs.remaining[ju] = 0.0;
            completion[ju] = t;
            done += 1;
            admit!(t);
        } else {
            jobs.remaining[ju] -= run;
            admit!(t);
            pol.put_back(jobs, j, run, t);
        }
    }
    progress.finish(done, cancel);
    Ok(Outcome { completion, first_start, switches, switch_time })
}

#[cfg(test)]
mod golden;
#[cfg(test)]
mod tests;
