//! Golden behaviour of every scheduling policy, with no Python involved: small cases worked
//! out by hand (each decision point in the comment), and checksums of runs on a seeded
//! workload generated here, recorded from the reference engine (`osbench.sched.reference`).
//! `tests/sched/test_core_golden.py` regenerates the workload in Python and checks every
//! checksum below against the reference engine again.

use super::*;
use crate::hash::SplitMix64;

fn run(policy: &str, arrival: &[f64], size: &[f64], predicted: &[f64], classes: &[i64], p: Params) -> Outcome {
    simulate(policy, arrival, size, predicted, classes, &p, &Cancel::new()).expect("valid input")
}

fn plain(policy: &str, arrival: &[f64], size: &[f64], p: Params) -> Outcome {
    run(policy, arrival, size, &[], &[], p)
}

fn quantum(q: f64) -> Params {
    Params { quantum: q, ..Params::default() }
}

/// (completion, first_start, switches) of a run.
fn facts(o: &Outcome) -> (Vec<f64>, Vec<f64>, u64) {
    (o.completion.clone(), o.first_start.clone(), o.switches)
}

#[test]
fn fcfs_charges_a_switch_between_two_jobs_and_none_before_the_first() {
    let o = plain("fcfs", &[0.0, 0.0], &[1.0, 1.0], Params { switch_cost: 0.5, ..Params::default() });
    // 0 runs 0..1, the switch takes 1..1.5, 1 runs 1.5..2.5.
    assert_eq!(facts(&o), (vec![1.0, 2.5], vec![0.0, 1.5], 1));
    assert_eq!(o.switch_time, 0.5);
}

#[test]
fn sjf_runs_the_shortest_waiting_job_to_completion() {
    // 0 runs 0..3 (alone at 0, never preempted); then 1 (size 1) and 2 (size 2).
    let o = plain("sjf", &[0.0, 1.0, 1.0], &[3.0, 1.0, 2.0], Params::default());
    assert_eq!(facts(&o), (vec![3.0, 4.0, 6.0], vec![0.0, 3.0, 4.0], 2));
    // By predicted sizes 3, 5, 1: 2 goes before 1.
    let p = Params { use_predictions: true, ..Params::default() };
    let o = run("sjf", &[0.0, 1.0, 1.0], &[3.0, 1.0, 2.0], &[3.0, 5.0, 1.0], &[], p);
    assert_eq!(facts(&o), (vec![3.0, 6.0, 5.0], vec![0.0, 5.0, 3.0], 2));
}

#[test]
fn srpt_preempts_for_a_shorter_remaining_time_and_not_on_a_tie() {
    // At 1, 0 has 1 left and 1 needs 1: a tie goes to the earlier arrival, so 0 runs on.
    let o = plain("srpt", &[0.0, 1.0], &[2.0, 1.0], Params::default());
    assert_eq!(facts(&o), (vec![2.0, 3.0], vec![0.0, 2.0], 1));
    // By predictions (4 and 1) minus service: at 1, 0's key is 4 - 1 = 3 and 1's is 1: 1 runs.
    let p = Params { use_predictions: true, ..Params::default() };
    let o = run("srpt", &[0.0, 1.0], &[2.0, 1.0], &[4.0, 1.0], &[], p);
    assert_eq!(facts(&o), (vec![3.0, 2.0], vec![0.0, 1.0], 2));
    // A shorter job preempts at once: 0 runs 0..1, 1 runs 1..1.5, 0 finishes at 4.5.
    let o = plain("srpt", &[0.0, 1.0], &[4.0, 0.5], Params::default());
    assert_eq!(facts(&o), (vec![4.5, 1.5], vec![0.0, 1.0], 2));
}

#[test]
fn rr_puts_an_arrival_at_the_quantum_end_before_the_interrupted_job() {
    // 0 runs 0..1; 1 arrives at 1, as the quantum ends, and goes first.
    let o = plain("rr", &[0.0, 1.0], &[2.0, 1.0], quantum(1.0));
    assert_eq!(facts(&o), (vec![3.0, 2.0], vec![0.0, 1.0], 2));
    // A job alone runs quantum after quantum without a switch.
    assert_eq!(facts(&plain("rr", &[0.0], &[3.5], quantum(1.0))), (vec![3.5], vec![0.0], 0));
}

#[test]
fn ps_shares_the_server_equally() {
    // 0 alone until 1 (2 left); 0 and 1 at rate 1/2 until 2 (1.5 and 0.5 left); three jobs at
    // rate 1/3: 1 finishes at 3.5; 0 and 2 at 1/2: 0 (1 left) at 5.5; 2 (0.5 left) at 6.
    let o = plain("ps", &[0.0, 1.0, 2.0], &[3.0, 1.0, 2.0], Params::default());
    assert_eq!(facts(&o), (vec![5.5, 3.5, 6.0], vec![0.0, 1.0, 2.0], 0));
}

#[test]
fn mlfq_demotes_doubles_allotments_and_keeps_a_preempted_place() {
    // Quantum 1. Level 0: 0 runs 0..1, 1 runs 1..2; both drop to level 1 (allotment 2). 0 runs
    // from 2 and is preempted at 2.5 by 2 (level 0), which runs to 3.5; 0 resumes at the head
    // of level 1 with 1.5 of its allotment left (to 5), then 1 runs 5..7; both drop to level 2
    // with 1 left: 0 finishes at 8, 1 at 9.
    let o = plain("mlfq", &[0.0, 0.0, 2.5], &[4.0, 4.0, 1.0], quantum(1.0));
    assert_eq!(facts(&o), (vec![8.0, 9.0, 3.5], vec![0.0, 1.0, 2.5], 7));
    // Two jobs of 8: unbounded levels give allotments 1, 2, 4, 8 (turns 0 1 0 1 0 1 0 1); two
    // levels cap them at 2 (0 1 0 1 0 1 0 1 0 1): the same completions, two more switches.
    let unbounded = plain("mlfq", &[0.0, 0.0], &[8.0, 8.0], quantum(1.0));
    let two = plain("mlfq", &[0.0, 0.0], &[8.0, 8.0], Params { levels: 2, ..quantum(1.0) });
    assert_eq!(facts(&unbounded), (vec![15.0, 16.0], vec![0.0, 1.0], 7));
    assert_eq!(facts(&two), (vec![15.0, 16.0], vec![0.0, 1.0], 9));
    // One level is round robin.
    let one = plain("mlfq", &[0.0, 0.0], &[8.0, 8.0], Params { levels: 1, ..quantum(1.0) });
    assert_eq!(facts(&one), facts(&plain("rr", &[0.0, 0.0], &[8.0, 8.0], quantum(1.0))));
}

#[test]
fn mlfq_boost_brings_every_job_back_to_level_0() {
    // Quantum 1, boost every 3. 0 runs 0..1, 1 runs 1..2 (both to level 1); 0 runs 2..3, cut
    // by the boost; everyone to level 0 in order (0, 1) with allotment 1: 0 runs 3..4 and 1
    // 4..5, both to level 1; 0 finishes its last unit at 6; the boost at 6 sends 1 to level 0,
    // where it runs 6..7, then 7..8 at level 1.
    let o = plain("mlfq", &[0.0, 0.0], &[4.0, 4.0], Params { boost: 3.0, ..quantum(1.0) });
    assert_eq!(facts(&o), (vec![6.0, 8.0], vec![0.0, 1.0], 5));
}

#[test]
fn priority_preempts_by_class_and_aging_orders_by_class_plus_aging_times_arrival() {
    // Class 1 at 0, two class-0 jobs at 1: they preempt it and run in arrival order.
    let o = run("priority", &[0.0, 1.0, 1.0], &[2.0, 1.0, 1.0], &[], &[1, 0, 0], Params::default());
    assert_eq!(facts(&o), (vec![4.0, 2.0, 3.0], vec![0.0, 1.0, 2.0], 3));
    // Aging 1: keys 1 + 0, 0 + 1, 0 + 1: a tie at 1 goes to the earlier arrival, job 0.
    let p = Params { aging: 1.0, ..Params::default() };
    let o = run("priority", &[0.0, 1.0, 1.0], &[2.0, 1.0, 1.0], &[], &[1, 0, 0], p);
    assert_eq!(facts(&o), (vec![2.0, 3.0, 4.0], vec![0.0, 2.0, 3.0], 2));
}

// ------------------------------------------------------------------ a seeded workload

/// `n` jobs with bursts, ties and preemptions: a quarter arrive with the job before them, the
/// others 1/4 to 4 time units later; sizes 1/8 to 3 (load about 0.92); classes 0 to 2;
/// predictions the size times 1/2, 1, 3/2 or 2. Every number is a multiple of 1/8, exact in
/// binary. Returns (arrival, size, predicted, class).
pub(crate) fn golden_workload(seed: u64, n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<i64>) {
    let mut rng = SplitMix64(seed);
    let (mut arrival, mut size, mut predicted, mut class) = (vec![], vec![], vec![], vec![]);
    let mut t = 0.0;
    for _ in 0..n {
        if rng.below(4) != 0 {
            t += (1 + rng.below(16)) as f64 / 4.0;
        }
        arrival.push(t);
        let s = (1 + rng.below(24)) as f64 / 8.0;
        size.push(s);
        class.push(rng.below(3) as i64);
        predicted.push(s * (1 + rng.below(4)) as f64 / 2.0);
    }
    (arrival, size, predicted, class)
}

/// Σ (i + 1) * v[i], in index order: a swap of two jobs' values changes it.
fn weighted(v: &[f64]) -> f64 {
    v.iter().enumerate().fold(0.0, |total, (i, &x)| total + (i + 1) as f64 * x)
}

/// On `golden_workload(7, 400)`: (policy, parameters, weighted completion, weighted first
/// start, switches), from the reference engine.
#[rustfmt::skip]
const GOLDEN_RUNS: [(&str, Params, f64, f64, u64); 14] = {
    const D: Params = Params {
        quantum: 0.1, switch_cost: 0.0, levels: 0, boost: f64::INFINITY, use_predictions: false, aging: 0.0,
    };
    [
        ("fcfs", D, 36052749.5, 35928676.125, 399),
        ("fcfs", Params { switch_cost: 0.25, ..D }, 38477591.75, 38353518.375, 399),
        ("sjf", D, 35675074.5, 35551001.125, 399),
        ("sjf", Params { use_predictions: true, ..D }, 35740687.5, 35616614.125, 399),
        ("srpt", D, 35658676.75, 35511873.125, 483),
        ("srpt", Params { use_predictions: true, switch_cost: 0.125, ..D }, 36456265.75, 36224433.5, 515),
        ("rr", Params { quantum: 0.5, ..D }, 36391514.125, 35369266.125, 1271),
        ("rr", Params { quantum: 1.0, switch_cost: 0.125, ..D }, 39198127.125, 37007235.5, 761),
        ("ps", D, 36524204.71057946, 35029510.5, 0),
        ("mlfq", Params { quantum: 0.5, ..D }, 36737513.375, 35052612.0, 1000),
        ("mlfq", Params { quantum: 0.25, levels: 3, ..D }, 36582930.125, 35037754.375, 1227),
        ("mlfq", Params { quantum: 0.5, boost: 8.0, switch_cost: 0.015625, ..D }, 36804597.15625, 35314490.46875, 1223),
        ("priority", D, 36003605.375, 35809816.125, 502),
        ("priority", Params { aging: 0.5, switch_cost: 0.125, ..D }, 36972481.25, 36847424.25, 405),
    ]
};

#[test]
fn the_golden_workload_has_bursts_and_near_full_load() {
    let (arrival, size, ..) = golden_workload(7, 400);
    let bursts = arrival.windows(2).filter(|w| w[0] == w[1]).count();
    assert_eq!(bursts, 107);
    let load = size.iter().sum::<f64>() / arrival[399];
    assert!((0.9..0.95).contains(&load), "{load}");
    assert_eq!(GOLDEN_RUNS[0].1.quantum, Params::default().quantum, "D is the default");
}

#[test]
fn golden_runs_equal_the_reference_engine() {
    let (arrival, size, predicted, class) = golden_workload(7, 400);
    for (policy, p, completion, first_start, switches) in GOLDEN_RUNS {
        let o = run(policy, &arrival, &size, &predicted, &class, p);
        let got = (weighted(&o.completion), weighted(&o.first_start), o.switches);
        assert_eq!(got, (completion, first_start, switches), "{policy} {p:?}");
        assert_eq!(o.switch_time, o.switches as f64 * p.switch_cost, "{policy} {p:?}");
    }
}
