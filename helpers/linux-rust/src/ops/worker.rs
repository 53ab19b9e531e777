//! A dedicated OS thread that runs blocking jobs one at a time, in the order
//! they were submitted, on state that lives on that thread (for `input`: its
//! own X connection). Async callers await the result, so the helper's
//! single-threaded runtime keeps answering other requests meanwhile (a 3 s
//! held key does not delay a `list_windows`), while two jobs never
//! interleave (two `input` ops never mix their key events).

use crate::error::{Error, Result};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Synthetic input jobs queued or running (the "input" worker's). Readers of
/// the accessibility tree look at it: a bulk Cache.GetItems read while the
/// app handles synthetic key/pointer events crashed Chromium, so while input
/// is in flight they walk the tree (small, bounded calls) instead.
static INPUT_IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Bulk accessibility reads (Cache.GetItems) in flight. Input waits for them
/// (bounded by BULK_READ_WAIT) before it is sent, the other half of the rule.
static BULK_READS: AtomicUsize = AtomicUsize::new(0);

/// Longest an input job waits for bulk reads to finish before it goes anyway.
const BULK_READ_WAIT: Duration = Duration::from_millis(3000);

/// Whether synthetic input is queued or being sent.
pub fn input_in_flight() -> bool {
    INPUT_IN_FLIGHT.load(Ordering::SeqCst) > 0
}

/// Marks a bulk read in flight for as long as it lives.
pub struct BulkRead(());

impl BulkRead {
    /// None: input is in flight, do not start a bulk read now.
    pub fn begin() -> Option<BulkRead> {
        if input_in_flight() {
            return None;
        }
        BULK_READS.fetch_add(1, Ordering::SeqCst);
        // Input may have been queued between the check and the count.
        if input_in_flight() {
            BULK_READS.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(BulkRead(()))
    }
}

impl Drop for BulkRead {
    fn drop(&mut self) {
        BULK_READS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Decrements a counter when dropped (on the worker thread, after the job,
/// panicking or not; or when a job is dropped unrun).
struct Count(&'static AtomicUsize);

impl Drop for Count {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

type Job<S> = Box<dyn FnOnce(&mut S) + Send + 'static>;

pub struct Worker<S> {
    name: &'static str,
    tx: RefCell<Option<mpsc::Sender<Job<S>>>>,
}

impl<S: Default + 'static> Worker<S> {
    /// The thread starts with the first job.
    pub fn new(name: &'static str) -> Self {
        Worker { name, tx: RefCell::new(None) }
    }

    fn sender(&self) -> Result<mpsc::Sender<Job<S>>> {
        if let Some(tx) = self.tx.borrow().as_ref() {
            return Ok(tx.clone());
        }
        let (tx, rx) = mpsc::channel::<Job<S>>();
        std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || {
                // The state is made here: it need not be Send (an X
                // connection with a shared-memory segment is not).
                let mut state = S::default();
                for job in rx {
                    if catch_unwind(AssertUnwindSafe(|| job(&mut state))).is_err() {
                        // A bug in a job: start over with fresh state (the
                        // panic was printed on stderr; the caller gets INTERNAL).
                        state = S::default();
                    }
                }
            })
            .map_err(|e| Error::internal(format!("cannot start the {} thread: {e}", self.name)))?;
        *self.tx.borrow_mut() = Some(tx.clone());
        Ok(tx)
    }

    /// Queue `f` behind the jobs already submitted and await its result.
    /// The "input" worker's jobs count as input in flight from here until
    /// they have run, and wait (bounded) for bulk reads to end first.
    pub async fn run<T: Send + 'static>(&self, f: impl FnOnce(&mut S) -> T + Send + 'static) -> Result<T> {
        let counted = if self.name == "input" {
            INPUT_IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
            // Made at once: a caller that gives up while waiting below (its
            // deadline) still counts down.
            let c = Count(&INPUT_IN_FLIGHT);
            let until = Instant::now() + BULK_READ_WAIT;
            while BULK_READS.load(Ordering::SeqCst) > 0 && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Some(c)
        } else {
            None
        };
        let (done, result) = tokio::sync::oneshot::channel();
        let job: Job<S> = Box::new(move |s| {
            let r = f(s);
            // Counted down before the caller hears the job is done: a tree
            // read that follows the input must not still see it in flight.
            drop(counted);
            let _ = done.send(r);
        });
        if let Err(mpsc::SendError(job)) = self.sender()?.send(job) {
            // The thread is gone (cannot happen short of an abort): start another.
            *self.tx.borrow_mut() = None;
            self.sender()?.send(job).map_err(|_| Error::internal(format!("the {} thread is gone", self.name)))?;
        }
        result.await.map_err(|_| Error::internal(format!("the {} thread dropped a job (it panicked)", self.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    /// A blocking job does not block the runtime: other tasks run meanwhile.
    #[test]
    fn blocking_job_leaves_the_runtime_free() {
        let w: Worker<()> = Worker::new("test-worker");
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt(), async {
            let t0 = Instant::now();
            let slow = w.run(|_| std::thread::sleep(Duration::from_millis(400)));
            let quick = async {
                tokio::time::sleep(Duration::from_millis(5)).await;
                t0.elapsed()
            };
            let (slow, quick) = tokio::join!(slow, quick);
            slow.unwrap();
            assert!(quick < Duration::from_millis(200), "the quick task waited {quick:?}");
            assert!(t0.elapsed() >= Duration::from_millis(400));
        });
    }

    /// Jobs run one at a time, in submission order, on one thread's state.
    #[test]
    fn jobs_are_serialised_in_order() {
        let w: Worker<Vec<u32>> = Worker::new("test-worker");
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt(), async {
            let job = |n: u32| {
                move |log: &mut Vec<u32>| {
                    log.push(n * 10);
                    std::thread::sleep(Duration::from_millis(20));
                    log.push(n * 10 + 1);
                    log.clone()
                }
            };
            let (a, b, c) = tokio::join!(w.run(job(1)), w.run(job(2)), w.run(job(3)));
            assert_eq!(a.unwrap(), [10, 11]);
            assert_eq!(b.unwrap(), [10, 11, 20, 21]);
            assert_eq!(c.unwrap(), [10, 11, 20, 21, 30, 31]);
        });
    }

    /// Input jobs count as in flight until they have run; bulk reads are
    /// refused meanwhile.
    #[test]
    fn input_in_flight_blocks_bulk_reads() {
        let w: Worker<()> = Worker::new("input");
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt(), async {
            assert!(!input_in_flight());
            // The job runs until the probe has looked (whatever the load).
            let (looked, wait) = mpsc::channel::<()>();
            let job = w.run(move |_| {
                let _ = wait.recv_timeout(Duration::from_secs(10));
            });
            let probe = async {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let seen = (input_in_flight(), BulkRead::begin().is_none());
                looked.send(()).unwrap();
                seen
            };
            let (r, (busy, refused)) = tokio::join!(job, probe);
            r.unwrap();
            assert!(busy && refused);
            assert!(!input_in_flight(), "counted down after the job");
            let g = BulkRead::begin();
            assert!(g.is_some());
            drop(g);
            assert_eq!(BULK_READS.load(Ordering::SeqCst), 0);
        });
    }

    /// A panicking job fails its caller only; the worker goes on with fresh state.
    #[test]
    fn a_panic_is_contained() {
        let w: Worker<u32> = Worker::new("test-worker");
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt(), async {
            assert_eq!(w.run(|n| { *n += 1; *n }).await.unwrap(), 1);
            assert!(w.run(|_: &mut u32| -> u32 { panic!("test panic (expected)") }).await.is_err());
            assert_eq!(w.run(|n| { *n += 1; *n }).await.unwrap(), 1, "state was reset");
        });
    }
}
