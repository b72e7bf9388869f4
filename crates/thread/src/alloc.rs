//! Allocation with freed-memory tracking (loom's `loom::alloc` shape). Inside an execution,
//! [`dealloc`] keeps the block until the execution ends and records it freed, so that a
//! later use of an instrumented object inside it (an atomic, `cell::UnsafeCell`, lock, ...)
//! is reported as `use after free`, and freeing it again as a double free. Use of plain
//! memory in the block (not an instrumented object) is not seen. Outside an execution these
//! are std's functions.

use crate::rt;
pub use std::alloc::Layout;
use std::panic::Location;

/// Allocates a block as `std::alloc::alloc`; inside an execution the block is recorded, so
/// that the objects placed in it have their uses checked against its free.
///
/// # Safety
/// As `std::alloc::alloc`: `layout` has a non-zero size.
pub unsafe fn alloc(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's contract.
    let ptr = unsafe { std::alloc::alloc(layout) };
    rt::allocated(ptr as usize, layout.size());
    ptr
}

/// As [`alloc`], with the block zeroed.
///
/// # Safety
/// As `std::alloc::alloc_zeroed`: `layout` has a non-zero size.
pub unsafe fn alloc_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: the caller's contract.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    rt::allocated(ptr as usize, layout.size());
    ptr
}

/// Frees a block from [`alloc`] / [`alloc_zeroed`]; see the module docs for what the
/// checker does inside an execution.
///
/// # Safety
/// As `std::alloc::dealloc`: `ptr` was allocated with `layout` by this allocator and is
/// not freed yet.
#[track_caller]
pub unsafe fn dealloc(ptr: *mut u8, layout: Layout) {
    if !rt::free(ptr as usize, layout, Location::caller()) {
        // SAFETY: the caller's contract.
        unsafe { std::alloc::dealloc(ptr, layout) }
    }
}
