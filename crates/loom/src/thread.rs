//! `loom::thread`: cmc's virtual threads.

pub use cmc_thread::thread::{
    current, park, spawn, yield_now, AccessError, Builder, JoinHandle, LocalKey, Thread, ThreadId,
};
pub use std::thread::panicking;
