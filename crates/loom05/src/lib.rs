//! loom 0.5's public API on cmc-thread's checker: crates/loom (loom 0.7's API) re-exported,
//! plus the items loom 0.5 has and 0.7 dropped (`sync::atomic::spin_loop_hint`). A suite
//! that requires loom 0.5 runs unchanged with
//! `--config 'patch.crates-io.loom.path="crates/loom05"'` and its own `--cfg`.

pub use loom07::{
    alloc, cell, future, hint, lazy_static, model, thread, thread_local, MAX_THREADS,
};

// `model`, `lazy_static` and `thread_local` above each bring every namespace of the name:
// the module and the function `model`, the module and the macro `lazy_static!`.
pub mod sync {
    //! `loom::sync`, with loom 0.5's `atomic` module.
    pub use loom07::sync::*;

    pub mod atomic {
        //! loom 0.5's `loom::sync::atomic`: 0.7's, plus `spin_loop_hint`.
        pub use loom07::sync::atomic::*;

        /// loom 0.5's spin-loop hint (std deprecated the name): the thread yields, as with
        /// [`crate::hint::spin_loop`].
        pub fn spin_loop_hint() {
            crate::hint::spin_loop();
        }
    }
}
