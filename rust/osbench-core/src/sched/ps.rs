//! Exact processor sharing, the quantum -> 0 limit of round robin, by virtual time.
//!
//! With m jobs present each is served at rate 1/m; virtual time V advances at rate 1/m and
//! stands still while idle. A job arriving at virtual time V with size s finishes when V
//! reaches its tag V + s: the smallest tag (ties: arrival order, then job id) finishes first,
//! at t + (tag - V) * m. An arrival exactly at a completion instant comes after it. Every
//! job starts at its arrival; PS has no switches.

use super::heap::JobHeap;
use super::{Jobs, Outcome, Progress};
use crate::cancel::Cancel;
use crate::error::Result;

pub fn run(jobs: &Jobs, order: &[u32], cancel: &Cancel) -> Result<Outcome> {
    let n = order.len();
    let mut completion = vec![f64::NAN; n];
    let mut first_start = vec![f64::NAN; n];
    let mut heap = JobHeap::default();
    let mut t = 0.0f64;
    let mut v = 0.0f64;
    let mut k = 0usize;
    let mut done = 0usize;
    let mut progress = Progress::default();
    let arrival = |k: usize| jobs.arrival[order[k] as usize];
    while done < n {
        progress.tick(done, cancel)?;
        let Some((tag, j)) = heap.peek() else {
            if k >= n {
                break;
            }
            let a = arrival(k);
            if a > t {
                t = a;
            }
            admit(jobs, order, &mut k, t, v, &mut heap, &mut first_start);
            continue;
        };
        let m = heap.len() as f64;
        let mut t_done = t + (tag - v) * m;
        if t_done < t {
            t_done = t;
        }
        if k < n && arrival(k) < t_done {
            let a = arrival(k);
            v += (a - t) / m;
            t = a;
            admit(jobs, order, &mut k, t, v, &mut heap, &mut first_start);
        } else {
            heap.pop();
            t = t_done;
            if tag > v {
                v = tag;
            }
            completion[j as usize] = t;
            done += 1;
        }
    }
    progress.finish(done, cancel);
    Ok(Outcome { completion, first_start, switches: 0, switch_time: 0.0 })
}

/// Hand every job that has arrived by `t` (virtual time `v`) to the heap: its tag is
/// `v + size`, and it starts at once.
fn admit(jobs: &Jobs, order: &[u32], k: &mut usize, t: f64, v: f64, heap: &mut JobHeap, first_start: &mut [f64]) {
    while *k < order.len() && jobs.arrival[order[*k] as usize] <= t {
        let i = order[*k] as usize;
        heap.push(v + jobs.size[i], jobs.rank[i], order[*k]);
        first_start[i] = t;
        *k += 1;
    }
}
