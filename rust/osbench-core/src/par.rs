//! One scoped fan-out for the core's parallel work (curves over many capacities, translation in
//! parts), with one panic policy, [`guarded`]: a task that panics is a bug in osbench, reported
//! as [`Error::Internal`](crate::Error::Internal) with its message, never as an interruption
//! and never as a crash. The binding runs its worker threads under the same policy.

use crate::error::{internal, Result};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Run `work` on every item on up to `threads` scoped threads (each takes the next item when
/// it is free) and return the results in the items' order; the first error by position wins.
/// One thread (or one item) runs on the calling thread.
pub fn map<I: Send, R: Send>(items: Vec<I>, threads: usize, work: impl Fn(I) -> Result<R> + Sync) -> Result<Vec<R>> {
    let n = items.len();
    let guarded = |item: I| guarded(|| work(item));
    let threads = threads.clamp(1, n.max(1));
    if threads == 1 {
        return items.into_iter().map(guarded).collect();
    }
    let queue = Mutex::new(items.into_iter().enumerate());
    let mut results: Vec<Option<Result<R>>> = (0..n).map(|_| None).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    // The lock is held only to take the next item, which cannot panic.
                    while let Some((i, item)) = queue.lock().ok().and_then(|mut q| q.next()) {
                        done.push((i, guarded(item)));
                    }
                    done
                })
            })
            .collect();
        for worker in workers {
            // `guarded` catches every panic of the work, so a worker can only end normally.
            if let Ok(done) = worker.join() {
                for (i, r) in done {
                    results[i] = Some(r);
                }
            }
        }
    });
    results.into_iter().map(|r| r.unwrap_or_else(|| Err(internal("a parallel task gave no result")))).collect()
}

/// Run `work`, turning a panic into an internal error that carries its message.
pub fn guarded<R>(work: impl FnOnce() -> Result<R>) -> Result<R> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|p| Err(panicked(p)))
}

/// The message of a caught panic, as an internal error.
fn panicked(payload: Box<dyn std::any::Any + Send>) -> crate::Error {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_string());
    internal(format!("a worker thread panicked: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{invalid, Error};

    #[test]
    fn results_keep_the_order_and_the_first_error_by_position_wins() {
        for threads in [1, 2, 7] {
            let squares = map((0..100u64).collect(), threads, |i| Ok(i * i)).unwrap();
            assert_eq!(squares, (0..100u64).map(|i| i * i).collect::<Vec<_>>());
            let r =
                map((0..50u64).collect(), threads, |i| if i % 20 == 19 { Err(invalid("i", i, "none")) } else { Ok(i) });
            assert_eq!(r.unwrap_err().to_string(), "i=19 is not accepted: none");
        }
        assert_eq!(map(Vec::<u8>::new(), 4, |_| Ok(())).unwrap(), vec![]);
    }

    #[test]
    fn a_panic_is_an_internal_error() {
        for threads in [1, 3] {
            let r = map((0..6).collect(), threads, |i: i32| if i == 4 { panic!("boom {i}") } else { Ok(i) });
            match r {
                Err(Error::Internal { what }) => assert!(what.contains("boom 4"), "{what}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
