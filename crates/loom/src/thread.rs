//! `loom::thread`: cmc's virtual threads.

pub use cmc_thread::thread::{
    current, park, yield_now, AccessError, Builder, JoinHandle, LocalKey, Thread, ThreadId,
};
pub use std::thread::panicking;

/// Spawns a virtual thread. As loom's, `f` and its result need not be `Send` (a model may
/// share an `Rc` between its threads; see [`Builder::spawn_local`]). Panics outside a
/// model, as loom's does.
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + 'static,
    T: 'static,
{
    Builder::new()
        .spawn_local(f)
        .expect("loom::thread::spawn called outside loom::model")
}
