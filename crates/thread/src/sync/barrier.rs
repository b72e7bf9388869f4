//! Instrumented `Barrier`: `wait` is two switch points, arriving (never blocks) and leaving
//! (blocks until the last of the `n` threads of its generation arrived). The thread whose
//! arrival completes a generation is its leader. Outside an execution it is std's barrier.

use crate::rt::{self, ObjCell, ObjState, Op, Value};
use std::panic::Location;

/// A barrier with the API of `std::sync::Barrier`.
pub struct Barrier {
    id: ObjCell,
    n: usize,
    fallback: std::sync::Barrier,
}

/// Tells whether a thread was the leader of its generation.
#[derive(Debug)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this thread completed the generation (exactly one per generation).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

fn unregistered() -> ObjState {
    ObjState::Plain
}

impl Barrier {
    /// A barrier that releases its waiters each time `n` of them arrived (`n` 0 acts as 1).
    pub fn new(n: usize) -> Self {
        Barrier {
            id: ObjCell::new(),
            n: n.max(1),
            fallback: std::sync::Barrier::new(n),
        }
    }

    /// Waits until `n` threads called `wait` (switch points: arrive, then leave).
    #[track_caller]
    pub fn wait(&self) -> BarrierWaitResult {
        let location = Location::caller();
        let n = self.n;
        let Some(b) = rt::with(|st| {
            let b = self.id.get(st, "Barrier", unregistered, location);
            if matches!(st.objects[b].state, ObjState::Plain) {
                *st.state_mut(b) = ObjState::Barrier {
                    n,
                    arrived: 0,
                    generation: 0,
                };
            }
            b
        }) else {
            rt::check_outside(&self.id, "Barrier", location);
            return BarrierWaitResult(self.fallback.wait().is_leader());
        };
        rt::schedule(Op::BarrierWait(b), location);
        let (generation, leader) = rt::with(|st| {
            let ObjState::Barrier {
                n,
                arrived,
                generation,
            } = st.state_mut(b)
            else {
                unreachable!("a barrier's state");
            };
            let mine = *generation;
            *arrived += 1;
            let leader = *arrived == *n;
            if leader {
                *arrived = 0;
                *generation += 1;
            }
            st.set_value(Value::Bool(leader));
            st.note_access(b, true);
            (mine, leader)
        })
        .expect("in an execution");
        rt::schedule(Op::BarrierLeave(b, generation), location);
        rt::with(|st| st.note_access(b, false));
        BarrierWaitResult(leader)
    }
}

impl std::fmt::Debug for Barrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Barrier {{ n: {} }}", self.n)
    }
}
