use super::*;
use crate::Error;

fn sim(policy: &str, arrival: &[f64], size: &[f64], p: Params) -> Outcome {
    simulate(policy, arrival, size, &[], &[], &p, &AtomicBool::new(false)).expect("valid input")
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
fn mlfq_demotes_and_boosts() {
    // quantum 1: a job of size 4 at t=0, a job of size 1 at t=2 preempts it at level 1.
    let o = sim("mlfq", &[0.0, 2.0], &[4.0, 1.0], Params { quantum: 1.0, ..Params::default() });
    assert_eq!(o.completion, vec![5.0, 3.0]);
    let b = sim("mlfq", &[0.0, 0.0], &[3.0, 3.0], Params { quantum: 1.0, boost: 10.0, ..Params::default() });
    assert_eq!(b.completion.len(), 2);
}

#[test]
fn priority_with_aging() {
    // Batch (class 1) at t=0, interactive (class 0) at t=1.
    let run = |aging: f64| {
        let p = Params { aging, ..Params::default() };
        simulate("priority", &[0.0, 1.0], &[3.0, 1.0], &[], &[1, 0], &p, &AtomicBool::new(false)).expect("valid")
    };
    assert_eq!(run(0.0).completion, vec![4.0, 2.0]);
    // Aging 2/unit: the batch key 1 + 0 = 1 beats the interactive key 0 + 2 = 2.
    assert_eq!(run(2.0).completion, vec![3.0, 4.0]);
}

#[test]
fn bad_input_is_an_error() {
    let c = AtomicBool::new(false);
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
    let c = AtomicBool::new(true);
    assert_eq!(simulate("fcfs", &a, &s, &[], &[], &Params::default(), &c), Err(Error::Interrupted));
}

#[test]
fn every_policy_in_the_table_runs_and_is_found_by_name() {
    let (a, s, pred) = ([0.0, 0.5, 1.0, 1.0], [2.0, 1.0, 0.5, 3.0], [1.0, 1.0, 1.0, 1.0]);
    for info in &POLICIES {
        assert_eq!(policy(info.name).map(|p| p.name), Ok(info.name));
        let o = simulate(info.name, &a, &s, &pred, &[0, 1, 0, 1], &Params::default(), &AtomicBool::new(false))
            .expect("valid input");
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
    let c = AtomicBool::new(false);
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
        let p = if info.reads.contains(&QUANTUM) {
            Params { quantum: 1.0, ..Params::default() }
        } else {
            Params::default()
        };
        let o = simulate(info.name, &[0.0, 1.25], &[10.0, 1.0], &[], &[1, 0], &p, &AtomicBool::new(false)).unwrap();
        assert_eq!(o.first_start[1] == 1.25, info.preemptive, "{}", info.name);
    }
}

#[test]
fn a_quantum_below_the_rounding_of_the_work_is_refused() {
    let c = AtomicBool::new(false);
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
