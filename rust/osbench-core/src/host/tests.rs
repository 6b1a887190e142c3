use super::chase::{cycle, latency};
use super::faults::{cow_faults, touch_fresh, Prefault};
use super::pingpong::{pingpong, Mode};
use super::sys::allowed_cpus;
use super::MECHANISMS;
use crate::cancel::Cancel;
use crate::hash::SplitMix64;

#[test]
fn splitmix64_golden() {
    // Reference values of splitmix64 seeded with 0 (Vigna's reference implementation).
    let mut r = SplitMix64(0);
    assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
    assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
}

#[test]
fn cycle_is_one_cycle_through_every_line() {
    for &n in &[2usize, 3, 10, 1000] {
        let next = cycle(n, 7, &Cancel::new()).unwrap();
        let mut seen = vec![false; n];
        let mut p = 0usize;
        for _ in 0..n {
            assert!(!seen[p]);
            seen[p] = true;
            p = next[p] as usize;
        }
        assert_eq!(p, 0);
        assert!(seen.iter().all(|&s| s));
    }
    assert!(cycle(1, 0, &Cancel::new()).is_err());
}

#[test]
fn latency_positive_and_checked() {
    let never = Cancel::new();
    let v = latency(16 << 10, 10_000, 3, 1, false, &never).unwrap();
    let h = latency(4 << 20, 10_000, 2, 1, true, &never).unwrap();
    assert!(h.iter().all(|&x| x > 0.0));
    assert_eq!(v.len(), 3);
    assert!(v.iter().all(|&x| x > 0.0));
    assert!(latency(64, 10, 1, 1, false, &never).is_err());
    assert!(latency(1 << 20, 0, 1, 1, false, &never).is_err());
    assert!(latency(1 << 20, 10, 0, 1, false, &never).is_err());
    let cancelled = Cancel::raised();
    assert_eq!(latency(1 << 20, 10, 1, 1, false, &cancelled), Err(crate::Error::Interrupted));
}

#[test]
fn pingpong_alternates_for_every_mechanism_and_mode() {
    let never = Cancel::new();
    for m in MECHANISMS.map(|m| m.name) {
        for mode in [Mode::Threads, Mode::Processes] {
            let r = pingpong(m, mode, 50, 20, 2, None, None, &never).unwrap();
            assert_eq!(r.round_trips, 120, "{m} {mode:?}");
            assert_eq!(r.received_a, 120, "{m} {mode:?}");
            assert_eq!(r.received_b, 120, "{m} {mode:?}");
            assert_eq!(r.mismatched, 0, "{m} {mode:?}");
            assert_eq!(r.samples_ns.len(), 50);
            assert!(r.samples_ns.iter().all(|&x| x > 0.0));
            assert!(r.cpu_b.iter().all(|&c| c >= 0));
        }
    }
}

#[test]
fn pingpong_pinned_sides_report_their_cpus() {
    let never = Cancel::new();
    let cpus = allowed_cpus();
    let (a, b) = (cpus[0], *cpus.last().unwrap());
    let r = pingpong("pipe", Mode::Threads, 20, 5, 1, Some(a), Some(b), &never).unwrap();
    assert!(r.cpu_a.iter().all(|&c| c == a as i32));
    assert!(r.cpu_b.iter().all(|&c| c == b as i32));
}

#[test]
fn pingpong_rejects_bad_input_and_answers_cancel() {
    let never = Cancel::new();
    assert!(pingpong("smoke", Mode::Threads, 10, 0, 1, None, None, &never).is_err());
    assert!(pingpong("pipe", Mode::Threads, 0, 0, 1, None, None, &never).is_err());
    assert!(pingpong("pipe", Mode::Threads, 10, 0, 0, None, None, &never).is_err());
    assert!(pingpong("pipe", Mode::Threads, 10, 0, 1, Some(100_000), None, &never).is_err());
    assert!(Mode::parse("fibers").is_err());
    let cancelled = Cancel::raised();
    for m in MECHANISMS.map(|m| m.name) {
        for mode in [Mode::Threads, Mode::Processes] {
            let r = pingpong(m, mode, 1_000_000, 0, 10, None, None, &cancelled);
            assert_eq!(r, Err(crate::Error::Interrupted), "{m} {mode:?}");
        }
    }
}

#[test]
fn touching_a_fresh_mapping_faults_once_per_page() {
    let t = touch_fresh(4 << 20, Prefault::None, &Cancel::new()).unwrap();
    assert_eq!(t.pages, (4 << 20) / t.page_size);
    // Every page faults once (THP "always" could map 2 MiB per fault: allow fewer, never more
    // than a few extra).
    assert!(t.touch_minor_faults <= t.pages + 8);
    let p = touch_fresh(4 << 20, Prefault::Populate, &Cancel::new()).unwrap();
    assert!(p.touch_minor_faults < 8, "{p:?}");
    assert!(touch_fresh(0, Prefault::None, &Cancel::new()).is_err());
    assert!(Prefault::parse("eager").is_err());
}

#[test]
fn cow_child_faults_about_once_per_written_page() {
    for k in [0u64, 10, 200] {
        let c = cow_faults(4 << 20, k, &Cancel::new()).unwrap();
        assert!(c.child_minor_faults >= k, "{c:?}");
        assert!(c.child_minor_faults <= k + 8, "{c:?}");
    }
    assert!(cow_faults(4096 * 4, 5, &Cancel::new()).is_err());
}

#[test]
fn a_cancel_while_the_cow_child_writes_stops_the_wait() {
    // 4 MiB: the parent's touch loop checks the cancel once; the hook says stop at the next
    // check, the first of the wait for the child.
    let asks = std::sync::atomic::AtomicU64::new(0);
    let asks = std::sync::Arc::new(asks);
    let seen = asks.clone();
    let cancel = Cancel::polled_every(
        Box::new(move |_| seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 1),
        std::time::Duration::ZERO,
    );
    let r = cow_faults(4 << 20, 1000, &cancel);
    assert!(matches!(r, Err(crate::error::Error::Interrupted)), "{r:?}");
    assert_eq!(asks.load(std::sync::atomic::Ordering::Relaxed), 2);
}
