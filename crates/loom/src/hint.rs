//! `loom::hint`.

pub use cmc_thread::hint::spin_loop;
pub use std::hint::unreachable_unchecked;
