use super::*;
use crate::Error;

fn sim(policy: &str, arrival: &[f64], size: &[f64], p: Params) -> Outcome {
    simulate(policy, arrival, size, &[], &[], &p, &Cancel::new()).expect("valid input")
}

/// The default parameters, with `quantum` for a policy that reads one.
fn quantum_if_read(info: &PolicyInfo, quantum: f64) -> Params {
    if info.reads.contains(&QUANTUM) {
        Params { quantum, ..Params::default() }
    } else {
        Params::default()
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn exercise_1() {
    // Lecture exercise 1: sizes 8, 4, 2, 1 at t = 0, queued in that order.
    let a = [0.0; 4];
    let s = [8.0, 4.0, 2.0, 1.0];
    assert_eq!(sim("fcfs", &a, &s, Params::default()).completion, vec![8.0, 12.0, 14.0, 15.0]);
    assert_eq!(mean(&sim("fcfs", &a, &s, Params::default()).completion), 12.25);
    assert_eq!(sim("sjf", &a, &s, Params::default()).completion, vec![15.0, 7.0, 3.0, 1.0]);
    assert_eq!(mean(&sim("srpt", &a, &s, Params::default()).completion), 6.5);
    let rr = sim("rr", &a, &s, Params { quantum: 1.0, ..Params::default() });
    assert_eq!(rr.completion, vec![15.0, 11.0, 7.0, 4.0]);
    assert_eq!(mean(&rr.completion), 9.25);
}

#[test]
fn convoy() {
    let a = [0.0; 3];
    let s = [10.0, 1.0, 1.0];
    assert_eq!(mean(&sim("fcfs", &a, &s, Params::default()).completion), 11.0);
    assert_eq!(mean(&sim("sjf", &a, &s, Params::default()).completion), 5.0);
}

#[test]
fn ps_two_jobs() {
    // Two jobs of size 1 and 3 at t=0: both at rate 1/2 until t=2, then the big one alone.
    let o = sim("ps", &[0.0, 0.0], &[1.0, 3.0], Params::default());
    assert_eq!(o.completion, vec![2.0, 4.0]);
    assert_eq!(o.first_start, vec![0.0, 0.0]);
}

#[test]
fn srpt_preempts_and_switch_cost_counts() {
    let p = Params { switch_cost: 0.5, ..Params::default() };
    let o = sim("srpt", &[0.0, 1.0], &[4.0, 1.0], p);
    // Job 0 runs 0..1, switch 1..1.5, job 1 runs 1.5..2.5, switch, job 0 runs 3..6.
    assert_eq!(o.completion, vec![6.0, 2.5]);
    assert_eq!(o.switches, 2);
    assert_eq!(o.switch_time, 1.0);
}

#[test]
fn mlfq_a_newcomer_preempts_a_demoted_job() {
    // quantum 1: a job of size 4 at t=0, a job of size 1 at t=2 preempts it at level 1.
    let o = sim("mlfq", &[0.0, 2.0], &[4.0, 1.0], Params { quantum: 1.0, ..Params::default() });
    assert_eq!(o.completion, vec![5.0, 3.0]);
}

#[test]
fn priority_with_aging() {
    // Batch (class 1) at t=0, interactive (class 0) at t=1.
    let run = |aging: f64| {
        let p = Params { aging, ..Params::default() };
        simulate("priority", &[0.0, 1.0], &[3.0, 1.0], &[], &[1, 0], &p, &Cancel::new()).expect("valid")
    };
    assert_eq!(run(0.0).completion, vec![4.0, 2.0]);
    // Aging 2/unit: the batch key 1 + 0 = 1 beats the interactive key 0 + 2 = 2.
    assert_eq!(run(2.0).completion, vec![3.0, 4.0]);
}

#[test]
fn bad_input_is_an_error() {
    let c = Cancel::new();
    let p = Params::default();
    assert!(simulate("lifo", &[0.0], &[1.0], &[], &[], &p, &c).is_err());
    assert!(simulate("fcfs", &[0.0], &[-1.0], &[], &[], &p, &c).is_err());
    assert!(simulate("fcfs", &[f64::NAN], &[1.0], &[], &[], &p, &c).is_err());
    assert!(simulate("fcfs", &[0.0, 1.0], &[1.0], &[], &[], &p, &c).is_err());
    assert!(simulate("rr", &[0.0], &[1.0], &[], &[], &Params { quantum: 0.0, ..p }, &c).is_err());
    assert!(simulate("ps", &[0.0], &[1.0], &[], &[], &Params { switch_cost: 1.0, ..p }, &c).is_err());
    assert!(simulate("srpt", &[0.0], &[1.0], &[], &[], &Params { use_predictions: true, ..p }, &c).is_err());
    assert!(simulate("fcfs", &[], &[], &[], &[], &p, &c).is_ok());
}

#[test]
fn cancel_stops_long_runs() {
    let n = 200_000;
    let a: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let s = vec![0.5; n];
    let c = Cancel::raised();
    // Every policy's loop looks at the flag (PS has a loop of its own).
    for info in &POLICIES {
        let r = simulate(info.name, &a, &s, &[], &[], &Params::default(), &c);
        assert_eq!(r, Err(Error::Interrupted), "{}", info.name);
    }
}

#[test]
fn every_policy_in_the_table_runs_and_is_found_by_name() {
    let (a, s, pred) = ([0.0, 0.5, 1.0, 1.0], [2.0, 1.0, 0.5, 3.0], [1.0, 1.0, 1.0, 1.0]);
    for info in &POLICIES {
        assert_eq!(policy(info.name).map(|p| p.name), Ok(info.name));
        let o =
            simulate(info.name, &a, &s, &pred, &[0, 1, 0, 1], &Params::default(), &Cancel::new()).expect("valid input");
        // Every job completes, no earlier than its arrival plus its size.
        assert!(o.completion.iter().zip(a.iter().zip(&s)).all(|(&c, (&a, &s))| c >= a + s), "{}", info.name);
    }
    let names: Vec<&str> = POLICIES.iter().map(|p| p.name).collect();
    assert_eq!(names, ["fcfs", "sjf", "srpt", "rr", "ps", "mlfq", "priority"]);
}

#[test]
fn a_parameter_off_its_default_is_refused_unless_the_policy_reads_it() {
    let d = Params::default();
    let off = [
        (QUANTUM, Params { quantum: 0.5, ..d }),
        (SWITCH_COST, Params { switch_cost: 0.5, ..d }),
        (LEVELS, Params { levels: 2, ..d }),
        (BOOST, Params { boost: 5.0, ..d }),
        (USE_PREDICTIONS, Params { use_predictions: true, ..d }),
        (AGING, Params { aging: 0.5, ..d }),
    ];
    let c = Cancel::new();
    for info in &POLICIES {
        for (name, p) in &off {
            let r = simulate(info.name, &[0.0, 1.0], &[2.0, 1.0], &[1.0, 1.0], &[], p, &c);
            match r {
                Ok(_) => assert!(info.reads.contains(name), "{} ran with {name} off its default", info.name),
                Err(Error::InvalidArgument { name: refused, .. }) => {
                    assert!(!info.reads.contains(name), "{} refused {name}, which it reads", info.name);
                    assert_eq!(refused, *name);
                }
                Err(e) => panic!("{}: {e}", info.name),
            }
        }
    }
}

#[test]
fn preemption_follows_the_table() {
    // A long job (class 1) at t=0 and a short one (class 0) at t=1.25, quantum 1: a preemptive
    // policy serves the short one the moment it arrives; the others make it wait (RR until the
    // quantum ends at t=2).
    for info in &POLICIES {
        let p = quantum_if_read(info, 1.0);
        let o = simulate(info.name, &[0.0, 1.25], &[10.0, 1.0], &[], &[1, 0], &p, &Cancel::new()).unwrap();
        assert_eq!(o.first_start[1] == 1.25, info.preemptive, "{}", info.name);
    }
}

/// The message of the error a run with these inputs gives.
fn refusal(policy: &str, arrival: &[f64], size: &[f64], predicted: &[f64], classes: &[i64], p: Params) -> String {
    match simulate(policy, arrival, size, predicted, classes, &p, &Cancel::new()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{policy} {arrival:?} {size:?} {p:?} was accepted"),
    }
}

#[test]
fn every_bad_input_is_refused_by_name_at_its_boundary() {
    let d = Params::default();
    let run =
        |arrival: &[f64], size: &[f64], predicted: &[f64], p: Params| refusal("srpt", arrival, size, predicted, &[], p);
    // Sizes and predictions must be positive; arrivals may be 0, not below.
    assert_eq!(run(&[0.0], &[0.0], &[], d), "size=0 at index 0 is not accepted: finite numbers > 0");
    assert_eq!(run(&[0.0, -0.5], &[1.0, 1.0], &[], d), "arrival=-0.5 at index 1 is not accepted: finite numbers >= 0");
    assert!(run(&[0.0], &[f64::INFINITY], &[], d).starts_with("size=inf at index 0"));
    let pred = Params { use_predictions: true, ..d };
    assert_eq!(run(&[0.0], &[1.0], &[0.0], pred), "predicted=0 at index 0 is not accepted: finite numbers > 0");
    assert!(run(&[0.0], &[1.0], &[], pred).starts_with("predicted=none is not accepted"));
    assert!(run(&[0.0, 1.0], &[1.0, 1.0], &[1.0], d).starts_with("predicted=1 entries is not accepted: 2 entries"));
    assert!(refusal("fcfs", &[0.0, 1.0], &[1.0, 1.0], &[], &[0], d).starts_with("priority=1 entries is not accepted"));
    assert!(refusal("fcfs", &[0.0], &[1.0, 1.0], &[], &[], d).starts_with("size=2 entries is not accepted: 1 entries"));
    // Parameters: each at the edge of what it takes.
    let rr = |p: Params| refusal("rr", &[0.0], &[1.0], &[], &[], p);
    assert!(rr(Params { quantum: 0.0, ..d }).starts_with("quantum=0 is not accepted"));
    assert!(rr(Params { quantum: f64::INFINITY, ..d }).starts_with("quantum=inf is not accepted"));
    assert!(rr(Params { switch_cost: -0.1, ..d }).starts_with("switch_cost=-0.1 is not accepted"));
    assert!(rr(Params { switch_cost: f64::NAN, ..d }).starts_with("switch_cost=NaN is not accepted"));
    let mlfq = |p: Params| refusal("mlfq", &[0.0], &[1.0], &[], &[], p);
    assert!(mlfq(Params { boost: 0.0, ..d }).starts_with("boost=0 is not accepted"));
    assert!(mlfq(Params { boost: f64::NAN, ..d }).starts_with("boost=NaN is not accepted"));
    let aged = |p: Params| refusal("priority", &[0.0], &[1.0], &[], &[], p);
    assert!(aged(Params { aging: -1.0, ..d }).starts_with("aging=-1 is not accepted"));
    assert!(aged(Params { aging: f64::INFINITY, ..d }).starts_with("aging=inf is not accepted"));
    // A parameter off its default that the policy does not read is named with its value.
    assert_eq!(
        refusal("fcfs", &[0.0], &[1.0], &[], &[], Params { levels: 2, ..d }),
        "levels=2 is not accepted: its default for policy=\"fcfs\", which does not read it (it reads switch_cost)"
    );
    assert!(
        refusal("fcfs", &[0.0], &[1.0], &[], &[], Params { boost: 4.0, ..d }).starts_with("boost=4 is not accepted")
    );
    assert!(refusal("ps", &[0.0], &[1.0], &[], &[], Params { quantum: 0.5, ..d }).ends_with("(it reads none)"));
    assert!(
        refusal("lifo", &[0.0], &[1.0], &[], &[], d).starts_with("policy=\"lifo\" is not accepted: one of fcfs, sjf")
    );
    // The edges that are accepted: arrival 0, infinite boost (never), zero switch cost and aging.
    for (policy, p) in
        [("mlfq", Params { boost: f64::INFINITY, levels: 1, ..d }), ("priority", Params { aging: 0.0, ..d })]
    {
        assert!(simulate(policy, &[0.0], &[1.0], &[], &[], &p, &Cancel::new()).is_ok(), "{policy}");
    }
}

#[test]
fn the_outcome_of_an_idle_gap_and_a_late_start() {
    // Jobs arrive after the clock starts and after idle gaps: time jumps to each arrival.
    for info in &POLICIES {
        let p = quantum_if_read(info, 10.0);
        let o = sim(info.name, &[2.0, 10.0, 10.5], &[1.0, 0.25, 4.0], p);
        assert_eq!(o.first_start[..2], [2.0, 10.0], "{}", info.name);
        assert_eq!(o.completion[0], 3.0, "{}", info.name);
        assert_eq!(o.completion.iter().cloned().fold(0.0, f64::max), 14.5, "{}", info.name);
    }
}

#[test]
fn priority_without_classes_ages_into_first_come_first_served() {
    // Every class 0: the key is aging * arrival, so an earlier arrival always goes first and a
    // newcomer never preempts, which is FCFS (its own engine here).
    let (a, s) = ([0.0, 1.0, 1.0, 2.5, 7.0], [3.0, 2.0, 0.5, 4.0, 1.0]);
    let fcfs = sim("fcfs", &a, &s, Params::default());
    assert_eq!(fcfs.completion, vec![3.0, 5.0, 5.5, 9.5, 10.5]);
    for aging in [0.5, 1.0, 3.0] {
        let o = sim("priority", &a, &s, Params { aging, ..Params::default() });
        assert_eq!((o.completion, o.switches), (fcfs.completion.clone(), fcfs.switches), "aging {aging}");
    }
}

#[test]
fn mlfq_boosts_keep_coming_after_float_rounding_and_idle_gaps() {
    // Two long jobs together: each boost puts both back at level 0, where they alternate
    // within the period, so there are at least two switches per boost period. At boost 0.7 the
    // third boost time, 3 x 0.7, divides back to just under 3 (the count must still move on),
    // and an idle gap of 70 periods must be caught up, not end the boosts.
    let p = Params { quantum: 0.05, boost: 0.7, ..Params::default() };
    for (lead, start) in [(None, 0.0), (Some(0.5), 50.3)] {
        let (mut a, mut s) = (vec![start, start], vec![100.0, 100.0]);
        if let Some(size) = lead {
            a.insert(0, 0.0);
            s.insert(0, size);
        }
        let o = sim("mlfq", &a, &s, p);
        let periods = (150.0 / p.boost) as u64;
        assert!(o.switches >= 2 * periods, "start {start}: {} switches for {periods} boost periods", o.switches);
    }
}

#[test]
fn a_quantum_below_the_rounding_of_the_work_is_refused() {
    let c = Cancel::new();
    for policy in ["rr", "mlfq"] {
        for q in [1e-17, 1e-300] {
            let p = Params { quantum: q, ..Params::default() };
            let e = simulate(policy, &[0.0], &[1.0], &[], &[], &p, &c).unwrap_err();
            assert!(e.to_string().contains("quantum"), "{e}");
        }
        // at the floor a turn still moves the clock and the remaining work
        let floor = quantum_floor(&[1.0, 4.0]);
        assert_eq!(floor, 8.0 * f64::EPSILON);
        assert!(4.0 - floor < 4.0 && 0.5 + floor > 0.5);
        let p = Params { quantum: 1e-3, ..Params::default() };
        assert!(simulate(policy, &[0.0], &[1.0], &[], &[], &p, &c).is_ok());
    }
}

/// The job table is built in steps that look at the cancel, and skips the sort of arrivals
/// already in order: the order is a stable sort's either way (ties by id, -0.0 before 0.0).
#[test]
fn the_job_table_orders_jobs_as_a_stable_sort_and_stops_on_the_cancel() {
    let n = 3 * CHECK_EVERY as usize + 7;
    let stable = |arrival: &[f64]| {
        let mut order: Vec<u32> = (0..arrival.len() as u32).collect();
        order.sort_by(|&a, &b| arrival[a as usize].total_cmp(&arrival[b as usize]));
        order
    };
    let in_order: Vec<f64> = (0..n).map(|i| (i / 3) as f64).collect(); // ties in threes
    let mut shuffled = in_order.clone();
    shuffled.swap(5, n - 2);
    let zeros = [0.0, -0.0, 0.0, 1.0];
    for arrival in [&in_order[..], &shuffled[..], &zeros[..]] {
        let size = vec![1.0; arrival.len()];
        let (jobs, order) = make_jobs(arrival, &size, &[], &[], 0.0, &Cancel::new()).unwrap();
        assert_eq!(order, stable(arrival));
        assert!(order.iter().enumerate().all(|(r, &j)| jobs.rank[j as usize] == r as u32));
    }
    let size = vec![1.0; n];
    assert!(matches!(make_jobs(&in_order, &size, &[], &[], 0.0, &Cancel::raised()), Err(Error::Interrupted)));
}

/// The sort of arrivals not in order gives a stable sort's order (ties by id across the runs
/// it merges, -0.0 before 0.0, runs that do not fill a step), and looks at the cancel in every
/// step of every pass: raised at any of its looks, it stops there.
#[test]
fn the_arrival_sort_is_a_stable_sort_and_stops_at_each_of_its_looks() {
    let step = CHECK_EVERY as usize;
    let stable = |arrival: &[f64]| {
        let mut order: Vec<u32> = (0..arrival.len() as u32).collect();
        order.sort_by(|&a, &b| arrival[a as usize].total_cmp(&arrival[b as usize]));
        order
    };
    let values = [-3.5, -0.0, 0.0, 1.0, 2.5, 1e300, f64::MIN_POSITIVE, -f64::MIN_POSITIVE];
    let n = 5 * step + 11;
    let ties: Vec<f64> = (0..n).map(|i| values[(crate::hash::splitmix64(i as u64) % 8) as usize]).collect();
    let spread: Vec<f64> = (0..n).map(|i| (crate::hash::splitmix64(i as u64) >> 11) as f64 - 1e15).collect();
    let falling: Vec<f64> = (0..n).map(|i| (n - i) as f64).collect();
    for arrival in [&ties[..], &spread[..], &falling[..], &[], &[2.0, 1.0], &[0.0, -0.0]] {
        assert_eq!(arrival_order(arrival, &Cancel::new()).unwrap(), stable(arrival));
    }
    let looks = |raise_at: u64| {
        let count = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = count.clone();
        let hook = Box::new(move |_: &Cancel| seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 == raise_at);
        let got = arrival_order(&spread, &Cancel::polled_every(hook, std::time::Duration::ZERO));
        (got, count.load(std::sync::atomic::Ordering::Relaxed))
    };
    let (got, total) = looks(0);
    assert_eq!(got.unwrap(), stable(&spread));
    // At least one look a step: building the pairs, each of the three merge passes, the ids.
    let steps = n.div_ceil(step) as u64;
    assert!(total >= 5 * steps, "{total} looks for {steps} steps");
    for k in 1..=total {
        assert!(matches!(looks(k).0, Err(Error::Interrupted)), "raised at look {k} of {total}");
    }
}
