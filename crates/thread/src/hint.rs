//! `hint::spin_loop`: under the checker, a yield point (the thread gives way to the others,
//! as with `thread::yield_now`); std's hint outside an execution.

use crate::rt::{self, Op};
use std::panic::Location;

/// Signals a spin-wait iteration: a yield point under the checker.
#[track_caller]
pub fn spin_loop() {
    if rt::in_execution() {
        rt::schedule(Op::Yield, Location::caller());
    } else {
        std::hint::spin_loop()
    }
}
