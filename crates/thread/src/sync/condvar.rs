//! Instrumented `Condvar`. `wait` is two switch points: releasing the mutex and starting to
//! wait happen in one step, then waking (enabled once notified) is a second step, then the
//! mutex is re-acquired. `notify_one` wakes the longest waiter. Spurious wake-ups are not
//! modelled; a timed wait may time out at any point (its wake step is always enabled). A wait
//! nobody notifies shows up as a deadlock ("wake(Condvar#n) with no notify").

use super::mutex::MutexGuard;
use crate::rt::{self, ObjCell, ObjId, ObjState, Op, Value};
use std::panic::Location;
use std::sync::LockResult;
use std::time::Duration;

/// A condition variable with the API of `std::sync::Condvar`.
#[derive(Default)]
pub struct Condvar {
    id: ObjCell,
    fallback: std::sync::Condvar,
}

/// Whether a timed wait returned because it timed out (std's type cannot be constructed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitTimeoutResult(bool);

impl WaitTimeoutResult {
    /// True when the wait timed out rather than being notified.
    pub fn timed_out(&self) -> bool {
        self.0
    }
}

fn condvar_state() -> ObjState {
    ObjState::Condvar {
        waiting: Vec::new(),
        notified: 0,
    }
}

impl Condvar {
    /// Creates a condition variable; it is registered with the checker on first use.
    pub const fn new() -> Self {
        Condvar {
            id: ObjCell::new(),
            fallback: std::sync::Condvar::new(),
        }
    }

    /// Like `new`; reports show the condition variable as `name#id`.
    pub const fn named(name: &'static str) -> Self {
        Condvar {
            id: ObjCell::named(name),
            fallback: std::sync::Condvar::new(),
        }
    }

    fn obj_id(&self, location: &'static Location<'static>) -> Option<ObjId> {
        rt::register(&self.id, "Condvar", condvar_state, location)
    }

    /// Releases `guard`'s mutex, waits for a notification, and re-acquires the mutex
    /// (switch points).
    #[track_caller]
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> LockResult<MutexGuard<'a, T>> {
        Ok(self.wait_inner(guard, None, Location::caller()).0)
    }

    /// Waits while `condition` holds, re-checking it after every wake-up.
    #[track_caller]
    pub fn wait_while<'a, T, F: FnMut(&mut T) -> bool>(
        &self,
        mut guard: MutexGuard<'a, T>,
        mut condition: F,
    ) -> LockResult<MutexGuard<'a, T>> {
        let location = Location::caller();
        while condition(&mut *guard) {
            guard = self.wait_inner(guard, None, location).0;
        }
        Ok(guard)
    }

    /// Like `wait`, but may time out: under the checker the timeout can happen at any point,
    /// whatever `dur` is.
    #[track_caller]
    pub fn wait_timeout<'a, T>(
        &self,
        guard: MutexGuard<'a, T>,
        dur: Duration,
    ) -> LockResult<(MutexGuard<'a, T>, WaitTimeoutResult)> {
        Ok(self.wait_inner(guard, Some(dur), Location::caller()))
    }

    fn wait_inner<'a, T>(
        &self,
        mut guard: MutexGuard<'a, T>,
        timeout: Option<Duration>,
        location: &'static Location<'static>,
    ) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
        let (Some(m), Some(cv)) = (guard.id, self.obj_id(location)) else {
            let g = guard
                .fallback
                .take()
                .expect("a guard outside an execution holds the std lock");
            let (g, timed_out) = match timeout {
                Some(d) => {
                    let (g, r) = self
                        .fallback
                        .wait_timeout(g, d)
                        .unwrap_or_else(|e| e.into_inner());
                    (g, r.timed_out())
                }
                None => (
                    self.fallback.wait(g).unwrap_or_else(|e| e.into_inner()),
                    false,
                ),
            };
            guard.fallback = Some(g);
            return (guard, WaitTimeoutResult(timed_out));
        };
        rt::schedule(Op::CondWait(cv, m), location);
        let lock = guard.lock;
        guard.id = None; // released here, not again by the guard's drop
        drop(guard);
        rt::with(|st| {
            st.lock_release(m);
            let me = st.active;
            if let ObjState::Condvar { waiting, .. } = st.state_mut(cv) {
                waiting.push(me);
            }
            st.note_access(cv, true);
        });
        rt::schedule(Op::CondWake(cv, timeout.is_some()), location);
        let timed_out = rt::with(|st| {
            let me = st.active;
            let timed_out = match st.state_mut(cv) {
                ObjState::Condvar { waiting, notified } => {
                    let was_notified = *notified & (1 << me) != 0;
                    *notified &= !(1 << me);
                    waiting.retain(|&t| t != me);
                    !was_notified
                }
                _ => false,
            };
            if timed_out {
                st.elapsed += timeout.unwrap_or_default();
            }
            st.set_value(Value::Bool(timed_out));
            st.note_access(cv, true);
            timed_out
        })
        .unwrap_or(false);
        let guard = lock.lock_at(location).unwrap_or_else(|e| e.into_inner());
        (guard, WaitTimeoutResult(timed_out))
    }

    /// Wakes the longest-waiting thread, if any (a switch point).
    #[track_caller]
    pub fn notify_one(&self) {
        self.notify(false, Location::caller())
    }

    /// Wakes every waiting thread (a switch point).
    #[track_caller]
    pub fn notify_all(&self) {
        self.notify(true, Location::caller())
    }

    fn notify(&self, all: bool, location: &'static Location<'static>) {
        let Some(cv) = self.obj_id(location) else {
            return if all {
                self.fallback.notify_all()
            } else {
                self.fallback.notify_one()
            };
        };
        rt::schedule(Op::Notify(cv, all), location);
        rt::with(|st| {
            let mut woken = 0;
            if let ObjState::Condvar { waiting, notified } = st.state_mut(cv) {
                woken = if all {
                    waiting.len()
                } else {
                    waiting.len().min(1)
                };
                for t in waiting.drain(..woken) {
                    *notified |= 1 << t;
                }
            }
            st.set_value(Value::Int(woken as i128));
            st.note_access(cv, true);
        });
    }
}

impl std::fmt::Debug for Condvar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Condvar { .. }")
    }
}
