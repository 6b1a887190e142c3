//! The engine loop (`python/osbench/serve/drive.py: drive`): an [`Engine`] owns the clock, the
//! recorder, the step time, the livelock guard and the decode jump, and runs any
//! [`Scheduler`] one step at a time. It is driven from outside ([`Engine::add_request`],
//! [`Engine::next_event_time`], [`Engine::step`]), so that one event loop can drive several
//! engines (replicas behind a router, prefill and decode pools); [`run`] is the loop of one
//! engine over a list of requests, open (each at its arrival) or closed (at most `concurrency`
//! in flight, as `benchmark_serving --max-concurrency` sends them).
//!
//! **The decode jump.** After a *quiet* step the scheduler tells how many steps follow that are
//! the same but for their token counts ([`Scheduler::quiet_stretch`]); no request arrives in
//! between (the driver says when the next one will, [`Engine::next_arrival`]). Those steps are
//! recorded one by one, each with its own Batch and duration (the same arithmetic as a single
//! step), but the requests are updated once, at the end: the work per step is O(1) instead of
//! O(batch).

use super::livelock::Guard;
use super::scheduler::{NewRequest, Occupancy, Scheduler};
use super::send::Sender;
use super::step_time::{Batch, StepTime};
use super::{Options, Record, Requests, Run};
use crate::cancel::Cancel;
use crate::error::{internal, invalid, try_grow, Result};

/// Requests scheduled (summed over steps) between two looks at the cancel: a millisecond or
/// two of work.
const CHECK_WORK: u64 = 1 << 16;

/// A step's swap copies and recomputation, and its loads from the KV tiers, as recorded.
#[derive(Debug, Clone, Copy, Default)]
struct SwapRow {
    out_bytes: u64,
    in_bytes: u64,
    time: f64,
    recomputed: u64,
    tier_bytes: u64,
    tier_time: f64,
}

/// Collects a run step by step (`run.py: Recorder`).
struct Recorder {
    run: Run,
    /// Keep the per-step rows ([`Options::steps`]).
    steps: bool,
}

impl Recorder {
    fn new(capacity: usize, record: bool, steps: bool) -> Self {
        let mut run = Run {
            arrival: Vec::with_capacity(capacity),
            admitted: Vec::with_capacity(capacity),
            first_token: Vec::with_capacity(capacity),
            finish: Vec::with_capacity(capacity),
            preemptions: Vec::with_capacity(capacity),
            cached_tokens: Vec::with_capacity(capacity),
            ..Run::default()
        };
        if record {
            run.record = Some(Record {
                scheduled_offsets: vec![0],
                preempted_offsets: vec![0],
                admitted_offsets: vec![0],
                ..Record::default()
            });
        }
        Recorder { run, steps }
    }

    fn request(&mut self, arrival: f64) {
        let r = &mut self.run;
        r.arrival.push(arrival);
        r.admitted.push(f64::NAN);
        r.first_token.push(f64::NAN);
        r.finish.push(f64::NAN);
        r.preemptions.push(0);
        r.cached_tokens.push(0);
        r.tier_tokens.push(0);
    }

    /// One step's row: its start, duration and Batch, and the engine's state after it. The
    /// columns grow together; out of memory is an error, not an abort.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &mut self,
        start: f64,
        duration: f64,
        b: &Batch,
        num_preempted: usize,
        num_waiting: usize,
        pool: Occupancy,
        swap: SwapRow,
    ) -> Result<()> {
        if !self.steps {
            return Ok(());
        }
        let s = &mut self.run;
        if s.start.len() == s.start.capacity() {
            const WHAT: &str = "the steps' records";
            try_grow(&mut s.start, 1, WHAT)?;
            try_grow(&mut s.duration, 1, WHAT)?;
            try_grow(&mut s.swap_time, 1, WHAT)?;
            try_grow(&mut s.tier_time, 1, WHAT)?;
            for column in [
                &mut s.num_seqs,
                &mut s.prefill_seqs,
                &mut s.prefill_tokens,
                &mut s.decode_seqs,
                &mut s.context_tokens,
                &mut s.attention_pairs,
                &mut s.num_preempted,
                &mut s.num_waiting,
                &mut s.blocks_used,
                &mut s.blocks_cached,
                &mut s.swap_out_bytes,
                &mut s.swap_in_bytes,
                &mut s.recomputed_tokens,
                &mut s.tier_load_bytes,
            ] {
                try_grow(column, 1, WHAT)?;
            }
        }
        s.start.push(start);
        s.duration.push(duration);
        s.num_seqs.push(b.num_seqs as i64);
        s.prefill_seqs.push(b.prefill_seqs as i64);
        s.prefill_tokens.push(b.prefill_tokens as i64);
        s.decode_seqs.push(b.decode_seqs as i64);
        s.context_tokens.push(b.context_tokens as i64);
        s.attention_pairs.push(b.attention_pairs as i64);
        s.num_preempted.push(num_preempted as i64);
        s.num_waiting.push(num_waiting as i64);
        s.blocks_used.push(pool.used as i64);
        s.blocks_cached.push(pool.cached as i64);
        s.swap_out_bytes.push(swap.out_bytes as i64);
        s.swap_in_bytes.push(swap.in_bytes as i64);
        s.swap_time.push(swap.time);
        s.recomputed_tokens.push(swap.recomputed as i64);
        s.tier_load_bytes.push(swap.tier_bytes as i64);
        s.tier_time.push(swap.tier_time);
        Ok(())
    }
}

impl Record {
    /// Room for one more step's detail, with `scheduled`, `preempted` and `admitted` entries.
    fn grow(&mut self, scheduled: usize, preempted: usize, admitted: usize) -> Result<()> {
        const WHAT: &str = "the steps' detail (record=True)";
        try_grow(&mut self.scheduled_request, scheduled, WHAT)?;
        try_grow(&mut self.scheduled_tokens, scheduled, WHAT)?;
        try_grow(&mut self.preempted_request, preempted, WHAT)?;
        try_grow(&mut self.admitted_request, admitted, WHAT)?;
        try_grow(&mut self.admitted_hit_tokens, admitted, WHAT)?;
        for column in [
            &mut self.scheduled_offsets,
            &mut self.preempted_offsets,
            &mut self.admitted_offsets,
            &mut self.free_blocks,
        ] {
            try_grow(column, 1, WHAT)?;
        }
        Ok(())
    }
}

/// One serving engine: a scheduler on a clock.
pub struct Engine<'a, S: Scheduler> {
    sched: S,
    step_time: &'a StepTime,
    options: Options,
    cancel: &'a Cancel,
    rec: Recorder,
    now: f64,
    /// When the driver adds its next request: None when it adds no more, infinity when it
    /// does not know yet (after some request finishes).
    next_arrival: Option<f64>,
    /// A request was added since the last step.
    arrived: bool,
    num_requests: usize,
    num_finished: usize,
    guard: Guard,
    /// Work since the last look at the cancel.
    work: u64,
}

impl<'a, S: Scheduler> Engine<'a, S> {
    /// An engine at time 0 with no request. `capacity`: how many requests are expected (room
    /// is made for them up front).
    pub fn new(sched: S, step_time: &'a StepTime, options: Options, cancel: &'a Cancel, capacity: usize) -> Self {
        Engine {
            sched,
            step_time,
            options,
            cancel,
            rec: Recorder::new(capacity, options.record, options.steps),
            now: 0.0,
            next_arrival: Some(0.0),
            arrived: false,
            num_requests: 0,
            num_finished: 0,
            guard: Guard::default(),
            work: 0,
        }
    }

    /// A request reaches the engine at `request.arrival`: no step starts before it (an idle
    /// engine's clock moves on to it; a busy one takes it at its next step). Its index must be
    /// the number of requests added before it.
    pub fn add_request(&mut self, request: NewRequest<'_>) -> Result<()> {
        if request.index as usize != self.num_requests {
            return Err(internal(format!("request {} added as request {}", request.index, self.num_requests)));
        }
        if request.arrival > self.now {
            self.now = request.arrival;
        }
        self.rec.request(request.arrival);
        self.sched.add_request(request);
        self.num_requests += 1;
        self.arrived = true;
        Ok(())
    }

    /// When the driver will add its next request (None: never; infinity: not before some
    /// request finishes). The decode jump stops short of it; the livelock error says when it
    /// is (a run repeating without progress is stopped at once: nothing changes before then).
    /// Until told, the engine expects one at once.
    pub fn next_arrival(&mut self, at: Option<f64>) {
        self.next_arrival = at;
    }

    /// When the next step starts: now, if a request is running or waiting; None when idle.
    pub fn next_event_time(&self) -> Option<f64> {
        self.sched.has_unfinished_requests().then_some(self.now)
    }

    /// Nothing runs or waits: the loop waits for its next request ([`Scheduler::on_idle`]).
    pub fn idle(&mut self) {
        self.sched.on_idle();
    }

    /// The clock: when the last step ended (or the time given to [`Engine::step`]).
    pub fn clock(&self) -> f64 {
        self.now
    }

    pub fn num_requests(&self) -> usize {
        self.num_requests
    }

    pub fn num_finished(&self) -> usize {
        self.num_finished
    }

    /// The requests that finished in the last step, in order.
    pub fn finished(&self) -> &[u32] {
        &self.sched.plan().finished
    }

    /// Run one step starting at `now` (or at the clock, if later), then the quiet stretch after
    /// it, if any and the options allow. Needs a request running or waiting.
    pub fn step(&mut self, now: f64) -> Result<()> {
        if self.work >= CHECK_WORK {
            self.cancel.advance(self.work)?;
            self.work = 0;
        }
        if now > self.now {
            self.now = now;
        }
        let now = self.now;
        let plan = self.sched.schedule()?;
        if plan.scheduled.is_empty() {
            return Err(internal(format!("the engine scheduled nothing at t={now} with requests waiting")));
        }
        let batch = plan.batch;
        // The swap copies and the tiers' loads block the step (`swap.py`, `tiers.py`): their
        // time is added to the model's.
        let swap = SwapRow {
            out_bytes: plan.swap_out_bytes,
            in_bytes: plan.swap_in_bytes,
            time: plan.swap_time,
            recomputed: plan.recomputed_tokens,
            tier_bytes: plan.tier_load_bytes,
            tier_time: plan.tier_time,
        };
        let duration = self.step_time.duration_with(&batch, &plan.prefill_chunks)? + swap.time + swap.tier_time;
        let end = step_end(now, duration)?;
        let num_waiting = self.sched.num_waiting();
        let pool = self.sched.occupancy();
        self.sched.update_from_output()?;
        let plan = self.sched.plan();
        for &index in &plan.produced {
            if self.sched.num_output_tokens(index) == 1 {
                self.rec.run.first_token[index as usize] = end;
            }
        }
        for &index in &plan.finished {
            self.rec.run.finish[index as usize] = end;
        }
        self.num_finished += plan.finished.len();
        for &index in &plan.preempted {
            self.rec.run.preemptions[index as usize] += 1;
        }
        for &(index, hit) in &plan.admitted {
            if self.rec.run.admitted[index as usize].is_nan() {
                self.rec.run.admitted[index as usize] = now;
                self.rec.run.cached_tokens[index as usize] = hit as i64;
                if let Some(&(_, loaded)) = plan.loaded.iter().find(|&&(i, _)| i == index) {
                    self.rec.run.tier_tokens[index as usize] = loaded as i64;
                }
            }
        }
        let pool = Occupancy { cached: self.sched.occupancy().cached, ..pool };
        self.rec.row(now, duration, &batch, plan.preempted.len(), num_waiting, pool, swap)?;
        if let Some(r) = self.rec.run.record.as_mut() {
            r.grow(plan.scheduled.len(), plan.preempted.len(), plan.admitted.len())?;
            r.scheduled_request.extend(plan.scheduled.iter().map(|&(i, _)| i64::from(i)));
            r.scheduled_tokens.extend(plan.scheduled.iter().map(|&(_, t)| t as i64));
            r.scheduled_offsets.push(r.scheduled_request.len() as i64);
            r.preempted_request.extend(plan.preempted.iter().map(|&i| i64::from(i)));
            r.preempted_offsets.push(r.preempted_request.len() as i64);
            r.admitted_request.extend(plan.admitted.iter().map(|&(i, _)| i64::from(i)));
            r.admitted_hit_tokens.extend(plan.admitted.iter().map(|&(_, h)| h as i64));
            r.admitted_offsets.push(r.admitted_request.len() as i64);
            r.free_blocks.push(pool.free as i64);
        }
        self.work += plan.scheduled.len() as u64 + 1;
        self.now = end;
        let progressed = std::mem::take(&mut self.arrived) || !plan.produced.is_empty();
        let sched = &self.sched;
        if self.guard.repeats(progressed, end, |out| sched.write_state(out))? {
            return Err(self.sched.livelock_error(&self.guard.stalled(self.next_arrival)));
        }
        if self.options.jump {
            let steps = self.jump(num_waiting, pool)?;
            self.rec.run.jumped_steps += steps;
            self.work += steps;
            if steps > 0 {
                // Each step of the stretch produced tokens, as each would one by one.
                self.guard.progress(self.now);
            }
        }
        Ok(())
    }

    /// The steps of the quiet stretch after the last step, recorded, up to the next arrival;
    /// returns how many. `num_waiting` and `pool`: the state they keep.
    fn jump(&mut self, num_waiting: usize, pool: Occupancy) -> Result<u64> {
        let stretch = self.sched.quiet_stretch();
        if stretch.steps == 0 {
            return Ok(0);
        }
        let running = self.sched.running();
        let num_seqs = running.len() as u64;
        let mut context = stretch.context_tokens;
        let next_time = self.next_arrival.unwrap_or(f64::INFINITY);
        let mut now = self.now;
        let mut done = 0;
        while done < stretch.steps && next_time > now {
            if done % CHECK_WORK == CHECK_WORK - 1 {
                self.cancel.check()?;
            }
            let batch = Batch {
                num_seqs,
                prefill_seqs: 0,
                prefill_tokens: 0,
                decode_seqs: num_seqs,
                context_tokens: context,
                attention_pairs: context + num_seqs,
            };
            let duration = self.step_time.duration(&batch)?;
            self.rec.row(now, duration, &batch, 0, num_waiting, pool, SwapRow::default())?;
            if let Some(r) = self.rec.run.record.as_mut() {
                r.grow(running.len(), 0, 0)?;
                r.scheduled_request.extend(running.iter().map(|&i| i64::from(i)));
                r.scheduled_tokens.extend(std::iter::repeat_n(1, running.len()));
                r.scheduled_offsets.push(r.scheduled_request.len() as i64);
                r.preempted_offsets.push(r.preempted_request.len() as i64);
                r.admitted_offsets.push(r.admitted_request.len() as i64);
                r.free_blocks.push(pool.free as i64);
            }
            now = step_end(now, duration)?;
            context += num_seqs;
            done += 1;
        }
        self.sched.skip_quiet(done)?;
        self.now = now;
        Ok(done)
    }

    /// The run so far, as recorded (a loop over several engines reads each step's row).
    pub fn run(&self) -> &Run {
        &self.rec.run
    }

    /// The run so far, with what its KV tiers did.
    pub fn into_run(self) -> Run {
        let mut run = self.rec.run;
        run.tier_blocks = self.sched.tier_counts().iter().map(|c| [c.hits, c.stored, c.inserted]).collect();
        run
    }
}

/// When a step of `duration` seconds that starts at `now` ends (`drive.py: step_end`). The
/// clock is float64 seconds: steps that would carry it past the largest one are refused, not
/// left to end at infinity.
pub(crate) fn step_end(now: f64, duration: f64) -> Result<f64> {
    let end = now + duration;
    if end.is_finite() {
        Ok(end)
    } else {
        Err(invalid(
            "step_time",
            format!("a step of {duration:e} s at {now:e} s"),
            "steps whose times keep the clock finite (float64 seconds, at most about 1.8e308)",
        ))
    }
}

/// Request `i` of `reqs`, reaching the engine at `arrival`.
fn new_request<'r>(reqs: &Requests<'r>, i: usize, arrival: f64) -> NewRequest<'r> {
    let keys = if reqs.key_offsets.is_empty() {
        None
    } else {
        let (a, b) = (reqs.key_offsets[i] as usize, reqs.key_offsets[i + 1] as usize);
        Some(&reqs.keys[a..b])
    };
    let priority = if reqs.priority.is_empty() { 0 } else { reqs.priority[i] };
    let predicted = if reqs.predicted.is_empty() { reqs.output_len[i] } else { reqs.predicted[i] };
    NewRequest {
        index: i as u32,
        arrival,
        priority,
        prompt_len: reqs.prompt_len[i] as u64,
        output_len: reqs.output_len[i] as u64,
        predicted: predicted as u64,
        keys,
        external: 0,
    }
}

/// Serve `reqs` (checked: `super::simulate`) on one engine. Each request reaches the engine at
/// its arrival; with `concurrency`, at most that many are in flight: request `i` is sent at
/// its arrival or when a request finishes and leaves room, whichever is later (the run's
/// `arrival` holds when each was sent).
pub fn run<S: Scheduler>(
    sched: S,
    reqs: &Requests,
    step_time: &StepTime,
    options: Options,
    cancel: &Cancel,
) -> Result<Run> {
    let n = reqs.arrival.len();
    let mut engine = Engine::new(sched, step_time, options, cancel, n);
    let mut sender = Sender::new(reqs.arrival, options.concurrency, options.turnaround, options.warmup);
    let mut now = 0.0_f64;
    while engine.num_finished() < n {
        while sender.more() && sender.time() <= now {
            let (i, sent) = sender.send();
            engine.add_request(new_request(reqs, i, sent))?;
        }
        engine.next_arrival(sender.more().then(|| sender.time()));
        match engine.next_event_time() {
            Some(_) => {
                engine.step(now)?;
                now = engine.clock();
                sender.finished(now, engine.finished().len())?;
            }
            None => {
                engine.idle();
                now = sender.time();
            }
        }
    }
    Ok(engine.into_run())
}
