//! Replicas behind a router on one clock (`python/osbench/serve/replicas.py: drive_replicas`,
//! the reference, which states the rules; equal to it decision for decision and step for
//! step). Each replica is an [`Engine`] with its own scheduler and KV; the loop takes the
//! earliest event, the next request's send time or the earliest busy replica's next step (a
//! send first on a tie, then replicas by index), and routes each request when it is sent
//! with what the router can see then ([`routers`]).
//!
//! **The decode jump.** A replica's step may take the quiet stretch after it at once, up to
//! the next send: nothing in a quiet stretch finishes, allocates or admits, so every step of
//! it reports what its first one did, and the router sees the same replica at any instant of
//! the stretch. Under closed-loop clients the next send may wait for a finish; a finish comes
//! at the end of some replica's step, so the jump stops short of the other replicas' next
//! steps too.

use super::engine::Engine;
use super::routers::{self, Arrival, View};
use super::scheduler::{NewRequest, Scheduler};
use super::send::Sender;
use super::step_time::StepTime;
use super::{Options, Requests, Run};
use crate::cancel::Cancel;
use crate::error::{internal, invalid, Result};

/// The most replicas accepted (`cluster.py: MAX_REPLICAS`).
pub const MAX_REPLICAS: usize = 4096;

/// One cluster run (`replicas.py: ClusterRun`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterRun {
    /// Per request: the replica that served it.
    pub replica: Vec<i64>,
    /// Per request, one entry per replica (row-major): the outstanding requests the router saw.
    pub load: Vec<i64>,
    /// Per replica: its run, its requests numbered as it received them.
    pub runs: Vec<Run>,
}

/// What a replica's step shows the router once it has ended (`replicas.py: _Report`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Report {
    pub(super) blocks_used: u64,
    pub(super) num_waiting: u64,
    pub(super) num_running: u64,
    pub(super) added_before: usize,
}

/// One replica on the loop's clock (`replicas.py: _Engine`).
pub(super) struct Replica<'a, S: Scheduler> {
    pub(super) engine: Engine<'a, S>,
    /// The requests given to it, in order.
    pub(super) given: Vec<u32>,
    /// Prompt blocks of the requests given to it, summed in order.
    pub(super) blocks: Vec<u64>,
    pub(super) outstanding: u64,
    pub(super) tokens: u64,
    pub(super) report: Report,
    /// The step in progress: when it ends, its report, the requests it finishes.
    pub(super) pending: Option<(f64, Report, Vec<u32>)>,
}

impl<'a, S: Scheduler> Replica<'a, S> {
    /// A replica of each scheduler of `scheds`, with no request yet and room for `capacity`.
    pub(super) fn all(
        scheds: Vec<S>,
        step_time: &'a StepTime,
        options: Options,
        cancel: &'a Cancel,
        capacity: usize,
    ) -> Vec<Self> {
        let replica = |sched| Replica {
            engine: Engine::new(sched, step_time, options, cancel, capacity),
            given: Vec::with_capacity(capacity),
            blocks: vec![0],
            outstanding: 0,
            tokens: 0,
            report: Report::default(),
            pending: None,
        };
        scheds.into_iter().map(replica).collect()
    }

    /// One step at `t`, the driver's next arrival (`next`) told first, after publishing what
    /// ended by `t`: its report and the requests it finishes pend until its end. Returns its
    /// start, its end and those requests.
    pub(super) fn step(
        &mut self,
        t: f64,
        next: Option<f64>,
        tokens: &dyn Fn(u32) -> u64,
    ) -> Result<(f64, f64, &[u32])> {
        self.publish(t, tokens);
        let added_before = self.given.len();
        let row = self.engine.run().start.len();
        self.engine.next_arrival(next);
        self.engine.step(t)?;
        let run = self.engine.run();
        let (start, end) = (run.start[row], run.start[row] + run.duration[row]);
        let report = Report {
            blocks_used: run.blocks_used[row] as u64,
            num_waiting: run.num_waiting[row] as u64,
            num_running: run.num_seqs[row] as u64,
            added_before,
        };
        let finished: Vec<u32> = self.engine.finished().iter().map(|&j| self.given[j as usize]).collect();
        let (_, _, finished) = self.pending.insert((end, report, finished));
        Ok((start, end, finished))
    }

    /// What the router sees of it at `now` (what ended by then published first), with
    /// `usable_blocks` KV blocks of `block_size` tokens.
    pub(super) fn view(&mut self, now: f64, tokens: &dyn Fn(u32) -> u64, usable_blocks: u64, block_size: u64) -> View {
        self.publish(now, tokens);
        View {
            outstanding: self.outstanding,
            tokens: self.tokens,
            blocks_used: self.report.blocks_used,
            num_waiting: self.report.num_waiting,
            num_running: self.report.num_running,
            unreported_blocks: self.blocks[self.blocks.len() - 1] - self.blocks[self.report.added_before],
            usable_blocks,
            block_size,
        }
    }

    pub(super) fn publish(&mut self, now: f64, tokens: &dyn Fn(u32) -> u64) {
        if let Some((end, report, finished)) = &self.pending {
            if *end <= now {
                self.report = *report;
                self.outstanding -= finished.len() as u64;
                self.tokens -= finished.iter().map(|&i| tokens(i)).sum::<u64>();
                self.pending = None;
            }
        }
    }
}

/// Refuses router block keys that are not those of `n` requests (non-decreasing offsets from 0
/// to `len(router_keys)`), when the router of `spec` reads them.
pub(super) fn check_router_keys(spec: &routers::Spec, n: usize, keys: &[u64], offsets: &[i64]) -> Result<()> {
    if spec.needs_keys() {
        let o = offsets;
        if o.len() != n + 1 || o[0] != 0 || o[n] != keys.len() as i64 || o.windows(2).any(|w| w[1] < w[0]) {
            return Err(invalid(
                "router_key_offsets",
                format!("{} offsets", o.len()),
                format!("{} non-decreasing offsets from 0 to len(router_keys)={}", n + 1, keys.len()),
            ));
        }
    }
    Ok(())
}

/// Serve `reqs` (checked: [`super::simulate_cluster`]) on one engine per scheduler of
/// `scheds`, each with `usable_blocks` KV blocks of `block_size` tokens, behind the router
/// `spec`, each step taking `step_time`. `router_keys` and `router_key_offsets`: the prompts'
/// block keys at the router's granularity, for a router that reads them.
#[allow(clippy::too_many_arguments)]
pub fn run<S: Scheduler>(
    scheds: Vec<S>,
    reqs: &Requests,
    step_time: &StepTime,
    options: Options,
    spec: &routers::Spec,
    router_keys: &[u64],
    router_key_offsets: &[i64],
    usable_blocks: u64,
    block_size: u64,
    cancel: &Cancel,
) -> Result<ClusterRun> {
    let n = reqs.arrival.len();
    if !(1..=MAX_REPLICAS).contains(&scheds.len()) {
        return Err(invalid("replicas", scheds.len(), format!("a positive integer up to {MAX_REPLICAS}")));
    }
    check_router_keys(spec, n, router_keys, router_key_offsets)?;
    let capacity = n.div_ceil(scheds.len());
    let reps = Replica::all(scheds, step_time, options, cancel, capacity);
    let sender = Sender::new(reqs.arrival, options.concurrency, options.turnaround, options.warmup);
    drive(reqs, reps, spec, router_keys, router_key_offsets, usable_blocks, block_size, sender)
}

#[allow(clippy::too_many_arguments)]
fn drive<S: Scheduler>(
    reqs: &Requests,
    mut reps: Vec<Replica<'_, S>>,
    spec: &routers::Spec,
    router_keys: &[u64],
    router_key_offsets: &[i64],
    usable_blocks: u64,
    block_size: u64,
    mut sender: Sender<'_>,
) -> Result<ClusterRun> {
    let n = reqs.arrival.len();
    let num = reps.len();
    let mut router = spec.build(num);
    let tokens = |i: u32| (reqs.prompt_len[i as usize] + reqs.output_len[i as usize]) as u64;
    let mut out = ClusterRun { replica: vec![0; n], load: Vec::with_capacity(n * num), runs: Vec::new() };
    let mut views = vec![View::default(); num];
    let mut num_finished = 0;
    while num_finished < n {
        let t_send = sender.time();
        let mut busy: Option<(usize, f64)> = None;
        for (k, rep) in reps.iter().enumerate() {
            if let Some(t) = rep.engine.next_event_time() {
                if busy.is_none_or(|(_, b)| t < b) {
                    busy = Some((k, t));
                }
            }
        }
        match busy {
            Some((k, t)) if t < t_send => {
                let next = if !sender.more() {
                    None
                } else if t_send.is_finite() {
                    Some(t_send)
                } else {
                    // A send waits for a finish, at the end of some other replica's next step.
                    let others = reps.iter().enumerate().filter(|&(j, _)| j != k);
                    Some(others.filter_map(|(_, r)| r.engine.next_event_time()).fold(f64::INFINITY, f64::min))
                };
                let (_, end, finished) = reps[k].step(t, next, &tokens)?;
                num_finished += finished.len();
                sender.finished(end, finished.len())?;
            }
            _ => {
                if t_send == f64::INFINITY {
                    return Err(internal("no request can be sent and no replica runs"));
                }
                let (i, sent) = sender.send();
                for (view, rep) in views.iter_mut().zip(reps.iter_mut()) {
                    *view = rep.view(sent, &tokens, usable_blocks, block_size);
                }
                out.load.extend(views.iter().map(|v| v.outstanding as i64));
                let keys = if spec.needs_keys() {
                    &router_keys[router_key_offsets[i] as usize..router_key_offsets[i + 1] as usize]
                } else {
                    &[]
                };
                let prompt_len = reqs.prompt_len[i] as u64;
                let arrival =
                    Arrival { index: i, arrival: sent, prompt_len, output_len: reqs.output_len[i] as u64, keys };
                let k = router.route(&arrival, &views);
                if k >= num {
                    return Err(internal(format!("the router chose replica {k} of {num}")));
                }
                out.replica[i] = k as i64;
                let rep = &mut reps[k];
                let (a, b) = (reqs.key_offsets.get(i), reqs.key_offsets.get(i + 1));
                let own_keys = match (a, b) {
                    (Some(&a), Some(&b)) => Some(&reqs.keys[a as usize..b as usize]),
                    _ => None,
                };
                let priority = if reqs.priority.is_empty() { 0 } else { reqs.priority[i] };
                let predicted = if reqs.predicted.is_empty() { reqs.output_len[i] } else { reqs.predicted[i] };
                let index = rep.given.len() as u32;
                rep.engine.add_request(NewRequest {
                    index,
                    arrival: sent,
                    priority,
                    prompt_len,
                    output_len: reqs.output_len[i] as u64,
                    predicted: predicted as u64,
                    keys: own_keys,
                    external: 0,
                })?;
                rep.given.push(i as u32);
                let total = rep.blocks[rep.blocks.len() - 1] + prompt_len.div_ceil(block_size);
                rep.blocks.push(total);
                rep.outstanding += 1;
                rep.tokens += tokens(i as u32);
            }
        }
    }
    out.runs = reps.into_iter().map(|r| r.engine.into_run()).collect();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{simulate, simulate_cluster, Config, Settings};
    use super::*;
    use crate::error::Error;
    use crate::hash::SplitMix64;

    const STEP: StepTime = StepTime::Linear([0.01, 0.0025, 0.005, 0.0]);

    fn config(num_blocks: u64, prefix: bool) -> Config {
        Config::new(Settings {
            num_blocks,
            block_size: 4,
            max_num_batched_tokens: 32,
            max_num_seqs: 4,
            max_model_len: 128,
            enable_prefix_caching: prefix,
            scheduler_reserve_full_isl: false,
            ..Settings::default()
        })
        .unwrap()
    }

    /// Arrivals, prompts, outputs, and prompt keys with their offsets.
    type Workload = (Vec<f64>, Vec<i64>, Vec<i64>, Vec<u64>, Vec<i64>);

    /// A workload (few distinct keys: shared prefixes).
    fn workload(n: usize, seed: u64) -> Workload {
        let mut rng = SplitMix64(seed);
        let mut below = |k: u64| rng.next_u64() % k;
        let (mut arrival, mut prompt, mut output, mut keys, mut offsets) = (vec![], vec![], vec![], vec![], vec![0]);
        let mut t = 0.0;
        for _ in 0..n {
            t += below(6) as f64 * 0.01;
            arrival.push(t);
            let p = 1 + below(60) as i64;
            prompt.push(p);
            output.push(1 + below(30) as i64);
            keys.extend((0..p / 4).map(|_| below(2)));
            offsets.push(keys.len() as i64);
        }
        (arrival, prompt, output, keys, offsets)
    }

    const PREFIX: routers::prefix_aware::Params = routers::prefix_aware::Params {
        cache_threshold: 0.3,
        balance_abs_threshold: 2,
        balance_rel_threshold: 1.5,
        block_size: 4,
    };

    fn specs() -> Vec<routers::Spec> {
        routers::ROUTERS.iter().map(|name| routers::Spec::new(name, 7, PREFIX).unwrap()).collect()
    }

    #[test]
    fn one_replica_with_any_router_is_the_single_engine() {
        let (a, p, o, k, ko) = workload(80, 3);
        let reqs = Requests {
            arrival: &a,
            prompt_len: &p,
            output_len: &o,
            keys: &k,
            key_offsets: &ko,
            priority: &[],
            predicted: &[],
        };
        let cfg = config(40, true);
        for concurrency in [None, Some(3)] {
            let options = Options { record: true, jump: true, concurrency, ..Options::default() };
            let alone = simulate(&reqs, &cfg, &STEP, options, &Cancel::new()).unwrap();
            for spec in specs() {
                let out = simulate_cluster(&reqs, &cfg, &STEP, options, 1, &spec, &k, &ko, &Cancel::new()).unwrap();
                assert!(out.replica.iter().all(|&r| r == 0));
                let run = out.runs.into_iter().next().unwrap();
                assert_eq!(Run { jumped_steps: 0, ..run }, Run { jumped_steps: 0, ..alone.clone() }, "{spec:?}");
            }
        }
    }

    #[test]
    fn round_robin_over_three_replicas_is_three_engines() {
        let (a, p, o, _, _) = workload(90, 5);
        let reqs = Requests { arrival: &a, prompt_len: &p, output_len: &o, ..Requests::default() };
        let cfg = config(30, false);
        let options = Options { record: true, ..Options::default() };
        let spec = routers::Spec::RoundRobin;
        let out = simulate_cluster(&reqs, &cfg, &STEP, options, 3, &spec, &[], &[], &Cancel::new()).unwrap();
        for (k, run) in out.runs.into_iter().enumerate() {
            let pick = |v: &[i64]| v.iter().skip(k).step_by(3).copied().collect::<Vec<_>>();
            let share: Vec<f64> = a.iter().skip(k).step_by(3).copied().collect();
            let (sp, so) = (pick(&p), pick(&o));
            let alone = Requests { arrival: &share, prompt_len: &sp, output_len: &so, ..Requests::default() };
            let expected = simulate(&alone, &cfg, &STEP, options, &Cancel::new()).unwrap();
            assert_eq!(Run { jumped_steps: 0, ..run }, Run { jumped_steps: 0, ..expected });
        }
    }

    #[test]
    fn bad_input_is_refused_by_name() {
        let reqs = Requests { arrival: &[0.0], prompt_len: &[4], output_len: &[1], ..Requests::default() };
        let cfg = config(10, false);
        let spec = routers::Spec::RoundRobin;
        for replicas in [0, MAX_REPLICAS + 1] {
            let r = simulate_cluster(&reqs, &cfg, &STEP, Options::default(), replicas, &spec, &[], &[], &Cancel::new());
            assert!(matches!(r, Err(Error::InvalidArgument { name: "replicas", .. })));
        }
        let unknown = routers::Spec::new("fastest", 0, PREFIX);
        assert!(matches!(unknown, Err(Error::InvalidArgument { name: "router", .. })));
        let bad = routers::prefix_aware::Params { cache_threshold: 1.5, ..PREFIX };
        assert!(matches!(routers::Spec::new("prefix-aware", 0, bad), Err(Error::InvalidArgument { .. })));
        let prefix = routers::Spec::new("prefix-aware", 0, PREFIX).unwrap();
        let r = simulate_cluster(&reqs, &cfg, &STEP, Options::default(), 2, &prefix, &[], &[0], &Cancel::new());
        assert!(matches!(r, Err(Error::InvalidArgument { name: "router_key_offsets", .. })));
    }

    #[test]
    fn a_raised_cancel_flag_stops_a_cluster_run() {
        let flood = crate::serve::tests::Flood::new(20_000, 60);
        let reqs = flood.requests();
        let cfg = config(10_000, false);
        let spec = routers::Spec::LeastTokens;
        let r = simulate_cluster(&reqs, &cfg, &STEP, Options::default(), 4, &spec, &[], &[], &Cancel::raised());
        assert_eq!(r, Err(Error::Interrupted));
    }
}
