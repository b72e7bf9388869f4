//! `loom::alloc`: std's allocator, with cmc-thread's freed-memory tracking on `dealloc`
//! (a use of an atomic or cell in a freed block is reported). loom reports allocations
//! still alive at the end of an execution; here only `sync::Arc` allocations are (cmc's
//! leak check).

pub use cmc_thread::alloc::{alloc, alloc_zeroed, dealloc, Layout};

/// loom's leak-tracked value: a plain wrapper here (not tracked).
#[derive(Debug)]
pub struct Track<T>(T);

impl<T> Track<T> {
    /// Wraps `value`.
    pub fn new(value: T) -> Track<T> {
        Track(value)
    }

    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.0
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.0
    }

    /// Unwraps the value.
    pub fn into_inner(self) -> T {
        self.0
    }
}
