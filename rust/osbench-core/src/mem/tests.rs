//! Core tests: the lecture's golden facts and the allocators' invariants. The exhaustive
//! native-vs-reference comparison lives in the Python tests (hypothesis).

use super::sim::{simulate, Requests, PREEMPTED, REJECTED, SERVED};
use super::translate::{slot_mapping, translate, Rows};
use super::*;
use crate::cancel::Cancel;

fn no_cancel() -> Cancel {
    Cancel::new()
}

#[test]
fn demo1_translation() {
    // Page size 4096, page table {0: 7, 1: 3, 2: 12, 3: 5}: 5000 -> 13192, 20000 faults.
    let table = [7, 3, 12, 5];
    let vaddrs = [5000, 20000, 0, 4095];
    let mut out = [0; 4];
    let faults = translate(&vaddrs, &table, 4096, &mut out, &no_cancel()).unwrap();
    assert_eq!(out, [13192, -1, 7 * 4096, 7 * 4096 + 4095]);
    assert_eq!(faults, 1);
}

#[test]
fn translation_refuses_bad_input() {
    let mut out = [0; 1];
    assert!(translate(&[1], &[0], 3000, &mut out, &no_cancel()).is_err());
    assert!(translate(&[-1], &[0], 4096, &mut out, &no_cancel()).is_err());
    assert!(translate(&[1], &[-2], 4096, &mut out, &no_cancel()).is_err());
    assert!(translate(&[1], &[i64::MAX / 2], 4096, &mut out, &no_cancel()).is_err());
}

#[test]
fn demo1_slot_mapping() {
    // Block table {0: 9, 1: 2, 2: 31}, block size 16: token 37 -> block 31, slot 5.
    let table = [9, 2, 31];
    let mut out = [0; 3];
    let unmapped =
        slot_mapping(&table, 3, Rows::Grid { tokens_per_row: 3 }, &[37, 0, 48], 16, &mut out, &no_cancel()).unwrap();
    assert_eq!(out, [31 * 16 + 5, 9 * 16, -1]);
    assert_eq!(unmapped, 1);
    // Two rows addressed by sequence id; block size not a power of two.
    let table = [4, 5, 6, 7];
    let mut out = [0; 2];
    slot_mapping(&table, 2, Rows::Ids(&[1, 0]), &[3, 4], 3, &mut out, &no_cancel()).unwrap();
    assert_eq!(out, [7 * 3, 5 * 3 + 1]);
    assert!(slot_mapping(&table, 2, Rows::Ids(&[2, 0]), &[3, 4], 3, &mut out, &no_cancel()).is_err());
    assert!(slot_mapping(&table, 2, Rows::Ids(&[1, 0]), &[3, -4], 3, &mut out, &no_cancel()).is_err());
}

#[test]
fn free_list_coalesces() {
    let mut fl = FreeList::new(100);
    let a = fl.allocate(10, Fit::First).unwrap();
    let b = fl.allocate(20, Fit::First).unwrap();
    let c = fl.allocate(30, Fit::First).unwrap();
    assert_eq!((a, b, c), (0, 10, 30));
    fl.release(a, 10);
    fl.release(c, 30);
    assert_eq!(fl.blocks().collect::<Vec<_>>(), vec![(0, 10), (30, 70)]);
    fl.release(b, 20);
    assert_eq!(fl.blocks().collect::<Vec<_>>(), vec![(0, 100)]);
    fl.check().unwrap();
}

#[test]
fn fits_choose_as_documented() {
    // Free blocks [0,10) [20,25) [40,50) [60,100): holes of 10, 5, 10, 40.
    let mut fl = FreeList::new(100);
    for size in [10, 10, 5, 15, 10, 10] {
        fl.allocate(size, Fit::First).unwrap();
    }
    fl.release(0, 10);
    fl.release(20, 5);
    fl.release(40, 10);
    let blocks: Vec<_> = fl.blocks().collect();
    assert_eq!(blocks, vec![(0, 10), (20, 5), (40, 10), (60, 40)]);
    assert_eq!(first::pick(fl.sizes(), 6), Some(0));
    assert_eq!(best::pick(fl.sizes(), 4), Some(1));
    assert_eq!(best::pick(fl.sizes(), 6), Some(0));
    assert_eq!(worst::pick(fl.sizes(), 6), Some(3));
    assert_eq!(worst::pick(fl.sizes(), 41), None);
    assert_eq!(best::pick(fl.sizes(), 41), None);
    assert_eq!(first::pick(fl.sizes(), 41), None);
}

/// A small deterministic generator, so the tests need no crates.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn random_requests(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<u64>, Vec<u64>) {
    let mut g = Lcg(seed);
    let mut t = 0.0;
    let (mut a, mut d, mut u, mut f) = (vec![], vec![], vec![], vec![]);
    for _ in 0..n {
        t += (g.next() % 4) as f64 * 0.25;
        a.push(t);
        d.push(1.0 + (g.next() % 40) as f64 * 0.5);
        let init = 1 + g.next() % 60;
        u.push(init);
        f.push(init + g.next() % 3 * (g.next() % 50));
    }
    (a, d, u, f)
}

#[test]
fn every_strategy_keeps_its_invariants() {
    let (a, d, u, f) = random_requests(600, 7);
    let r = Requests { arrival: &a, duration: &d, initial: &u, final_size: &f };
    for StrategyInfo { name, .. } in STRATEGIES {
        let mut s = AnyStrategy::new(name, 1000, a.len(), 16, 120).unwrap();
        let out = simulate(&mut s, &r, 1000, true, &no_cancel()).unwrap();
        let rejected = out.status.iter().filter(|&&s| s == REJECTED).count();
        assert!(rejected > 0 && rejected < a.len(), "{name}: {rejected} rejected");
        assert!(out.status.iter().all(|&s| s == SERVED || s == REJECTED || s == PREEMPTED && name == "paged"));
        for i in 0..a.len() {
            assert!(out.data[i] <= out.allocated[i] && out.allocated[i] <= 1000);
        }
    }
}

#[test]
fn oversized_requests_are_refused_not_fatal() {
    let r = Requests { arrival: &[0.0, 1.0], duration: &[1.0, 1.0], initial: &[5, 50], final_size: &[500, 50] };
    for StrategyInfo { name, .. } in STRATEGIES {
        let mut s = AnyStrategy::new(name, 100, 2, 4, 60).unwrap();
        let out = simulate(&mut s, &r, 100, true, &no_cancel()).unwrap();
        assert_eq!(out.status[1], SERVED, "{name}");
        assert_ne!(out.status[0], SERVED, "{name}");
    }
}

#[test]
fn each_strategy_refuses_a_bad_value_of_what_it_reads() {
    for info in STRATEGIES {
        assert!(AnyStrategy::new(info.name, 10, 1, 1, 1).is_ok(), "{}", info.name);
        // Zero is never a page size or a bound; only the strategy that reads it refuses it.
        assert_eq!(AnyStrategy::new(info.name, 10, 1, 0, 1).is_err(), info.reads.contains(&PAGE_SIZE));
        assert_eq!(AnyStrategy::new(info.name, 10, 1, 1, 0).is_err(), info.reads.contains(&BOUND));
    }
}

#[test]
fn bad_requests_and_parameters_are_errors() {
    assert!(AnyStrategy::new("first", 0, 1, 1, 1).is_err());
    assert!(AnyStrategy::new("paged", 10, 1, 0, 1).is_err());
    assert!(AnyStrategy::new("reserve", 10, 1, 1, 0).is_err());
    assert!(AnyStrategy::new("buddy", 10, 1, 1, 1).is_err());
    let mut s = AnyStrategy::new("first", 10, 2, 1, 1).unwrap();
    let bad = [
        Requests { arrival: &[1.0, 0.5], duration: &[1.0, 1.0], initial: &[1, 1], final_size: &[1, 1] },
        Requests { arrival: &[0.0, 0.5], duration: &[0.0, 1.0], initial: &[1, 1], final_size: &[1, 1] },
        Requests { arrival: &[0.0, 0.5], duration: &[1.0, 1.0], initial: &[0, 1], final_size: &[1, 1] },
        Requests { arrival: &[0.0, 0.5], duration: &[1.0, 1.0], initial: &[2, 1], final_size: &[1, 1] },
        Requests { arrival: &[0.0, f64::NAN], duration: &[1.0, 1.0], initial: &[1, 1], final_size: &[1, 1] },
        Requests { arrival: &[0.0], duration: &[1.0, 1.0], initial: &[1, 1], final_size: &[1, 1] },
    ];
    for r in bad {
        assert!(simulate(&mut s, &r, 10, false, &no_cancel()).is_err());
    }
}
