//! `loom::cell`: cmc's race-checked `UnsafeCell` (`with`, `with_mut`) and std's `Cell`
//! (accesses of a `Cell` are not checked: it is `!Sync`, so one thread owns it).

pub use cmc_thread::cell::UnsafeCell;
pub use std::cell::Cell;
