//! The filters' rules on short hand-checked sequences, and the table's checks.

use super::*;
use crate::cache::{replay_admitted, Accesses, Value};
use crate::cancel::Cancel;

static NO: Cancel = Cancel::new();

fn admission(name: &str, given: &[(&'static str, Value)]) -> Admission {
    let mut o = Options::new();
    for &(k, v) in given {
        o.set(k, v).unwrap();
    }
    Admission::new(name, &o).unwrap()
}

fn accesses<'a>(ids: &'a [u32], sizes: Option<&'a [u64]>, next: &'a mut Vec<u64>) -> Accesses<'a> {
    let n = ids.iter().map(|&i| i as usize + 1).max().unwrap_or(0);
    next.resize(ids.len(), 0);
    crate::cache::keys::next_use(ids, n, next, &NO).unwrap();
    let mut acc = Accesses::new(ids, n).unwrap().with_next_use(next).unwrap();
    if let Some(s) = sizes {
        acc = acc.with_sizes(s).unwrap();
    }
    acc
}

fn hits(policy: &str, capacity: u64, ids: &[u32], sizes: Option<&[u64]>, a: &Admission) -> Vec<bool> {
    let mut next = Vec::new();
    let acc = accesses(ids, sizes, &mut next);
    let mut mask = vec![false; ids.len()];
    replay_admitted(policy, capacity, &acc, Options::new(), Some(a), &mut mask, &NO).unwrap();
    mask
}

fn plain(policy: &str, capacity: u64, ids: &[u32], sizes: Option<&[u64]>) -> Vec<bool> {
    let mut next = Vec::new();
    let acc = accesses(ids, sizes, &mut next);
    let mut mask = vec![false; ids.len()];
    crate::cache::replay(policy, capacity, &acc, Options::new(), &mut mask, &NO).unwrap();
    mask
}

#[test]
fn bloom_admits_on_the_second_miss() {
    let b = admission("bloom", &[]);
    // 1 and 2 miss and stay out; 1 again enters; then hits. libcachesim's BloomFilterAdmissioner
    // under LRU(10) gives the same flags.
    let got = hits("lru", 10, &[1, 2, 1, 1, 3, 3, 2, 2], None, &b);
    assert_eq!(got, [false, false, false, true, false, false, false, true]);
}

#[test]
fn size_admits_strictly_below_the_threshold() {
    let s = admission("size", &[("size", Value::Int(10))]);
    let got = hits("fifo", 100, &[0, 0, 1, 1, 2, 2], Some(&[9, 9, 10, 10, 11, 11]), &s);
    assert_eq!(got, [false, true, false, false, false, false]);
}

#[test]
fn prob_one_admits_all_and_the_seed_decides_the_rest() {
    let ids: Vec<u32> = (0..2000).map(|i| (i * 7919 % 97) as u32).collect();
    let all = admission("prob", &[("prob", Value::Real(1.0))]);
    let plain = crate::cache::replay("lru", 20, &Accesses::new(&ids, 97).unwrap(), Options::new(), &mut [], &NO);
    let with: u64 = hits("lru", 20, &ids, None, &all).iter().map(|&h| h as u64).sum();
    assert_eq!(with, plain.unwrap());
    let a = hits("lru", 20, &ids, None, &admission("prob", &[("prob", Value::Real(0.3)), ("seed", Value::Int(1))]));
    let b = hits("lru", 20, &ids, None, &admission("prob", &[("prob", Value::Real(0.3)), ("seed", Value::Int(1))]));
    let c = hits("lru", 20, &ids, None, &admission("prob", &[("prob", Value::Real(0.3)), ("seed", Value::Int(2))]));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn bad_names_and_parameters_are_refused_clearly() {
    let err = Admission::new("nope", &Options::new()).unwrap_err().to_string();
    assert!(err.contains("admission") && err.contains("bloom") && err.contains("adaptsize"), "{err}");
    let mut o = Options::new();
    o.set("prob", Value::Real(1.5)).unwrap();
    let err = Admission::new("prob", &o).unwrap_err().to_string();
    assert!(err.contains("prob=1.5") && err.contains("(0, 1]"), "{err}");
    let err = Admission::new("bloom", &o).unwrap_err().to_string();
    assert!(err.contains("admission bloom") && err.contains("none"), "{err}");
    o = Options::new();
    o.set("reconf_interval", Value::Int(0)).unwrap();
    assert!(Admission::new("adaptsize", &o).is_err());
    assert!(parameter("exponent").is_ok() && parameter("k").is_err());
}

#[test]
fn a_filter_that_admits_all_changes_nothing_and_every_filter_runs_under_every_policy() {
    let ids: Vec<u32> = (0..3000u32).map(|i| (i.wrapping_mul(2654435761) >> 20) % 300).collect();
    let sizes: Vec<u64> = ids.iter().map(|&i| 1 + (i as u64 * 37) % 50).collect();
    let all = admission("prob", &[("prob", Value::Real(1.0))]);
    for p in crate::cache::TABLE {
        if p.takes_costs && p.name != "gdsf" || p.min_capacity() > 40 {
            continue;
        }
        assert_eq!(hits(p.name, 40, &ids, None, &all), plain(p.name, 40, &ids, None), "{}", p.name);
        assert_eq!(hits(p.name, 800, &ids, Some(&sizes), &all), plain(p.name, 800, &ids, Some(&sizes)), "{}", p.name);
        for f in FILTERS {
            let a = Admission::new(f.name, &Options::new()).unwrap();
            // Runs without a panic in both modes (the hits themselves: the Python tests).
            hits(p.name, 40, &ids, None, &a);
            hits(p.name, 800, &ids, Some(&sizes), &a);
        }
    }
}

/// AdaptSize's reconfiguration (most of a second over a million objects) looks at the cancel:
/// a replay stops inside it, before the access that set it off, and an interrupted
/// reconfiguration taken up again gives what an uninterrupted one gives.
#[test]
fn adaptsize_reconfiguration_stops_on_the_cancel_with_results_unchanged() {
    let a = admission("adaptsize", &[("reconf_interval", Value::Int(1000))]);
    // 3000 distinct objects of 10 bytes against 100: the known ones hold more than 3x the cache.
    let ids: Vec<u32> = (0..3000).collect();
    let sizes = vec![10; ids.len()];
    let mut next = Vec::new();
    let acc = accesses(&ids, Some(&sizes), &mut next);
    // Raised at the first look after the 999 accesses before the first reconfiguration.
    let cancel = Cancel::polled_every(Box::new(|c: &Cancel| c.done() >= 999), std::time::Duration::ZERO);
    let mut mask = vec![false; ids.len()];
    let got = replay_admitted("lru", 100, &acc, Options::new(), Some(&a), &mut mask, &cancel);
    assert_eq!(got, Err(crate::Error::Interrupted));
    assert_eq!(cancel.done(), 999);

    // One filter seeing every access, another whose reconfigurations are prepared first and
    // interrupted once each: the same c, the same admissions.
    let mut whole = a.build(100, 0).unwrap();
    let mut stopped = a.build(100, 0).unwrap();
    let raised = Cancel::raised();
    let mut reconfigurations = 0;
    for (&id, &size) in ids.iter().zip(&sizes) {
        if stopped.light_accesses() == 0 {
            assert_eq!(stopped.prepare(&raised), Err(crate::Error::Interrupted));
            assert_eq!(stopped.light_accesses(), 0);
            stopped.prepare(&NO).unwrap();
            assert!(stopped.light_accesses() >= 1);
            reconfigurations += 1;
        }
        whole.seen(id, size);
        stopped.seen(id, size);
        assert_eq!(whole.admit(id, size), stopped.admit(id, size));
    }
    let c = |f: &AnyFilter| match f {
        AnyFilter::adaptsize(f) => f.c(),
        _ => unreachable!(),
    };
    assert_eq!(reconfigurations, 3); // at accesses 1000, 2000 and 3000
    assert!(c(&whole) != (1u64 << 15) as f64, "c was tuned");
    assert_eq!(c(&whole).to_bits(), c(&stopped).to_bits());
}
