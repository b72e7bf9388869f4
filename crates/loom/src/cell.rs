//! `loom::cell`: an `UnsafeCell` with loom's shape on cmc's race-checked cell (`with`,
//! `with_mut`, and `get`/`get_mut` returning [`ConstPtr`]/[`MutPtr`]), and std's `Cell`
//! (accesses of a `Cell` are not checked: it is `!Sync`, so one thread owns it).
//!
//! loom checks a `ConstPtr`/`MutPtr` access over the pointer's whole life, from `get` to
//! its drop. Here the access is checked once, when the pointer is made (as a `with` or
//! `with_mut` there): a race with an access made while the pointer lives on, after a
//! synchronisation of its own thread, is not reported.

use cmc_thread::cell::UnsafeCell as CheckedUnsafeCell;
pub use std::cell::Cell;

/// A cell whose unsynchronised concurrent accesses are reported as data races.
#[derive(Debug, Default)]
pub struct UnsafeCell<T: ?Sized>(CheckedUnsafeCell<T>);

impl<T> UnsafeCell<T> {
    /// A cell holding `data`.
    pub const fn new(data: T) -> Self {
        UnsafeCell(CheckedUnsafeCell::new(data))
    }

    /// The value (the cell is consumed, so no access can race with this one).
    pub fn into_inner(self) -> T {
        self.0.into_inner()
    }
}

impl<T> From<T> for UnsafeCell<T> {
    fn from(data: T) -> Self {
        UnsafeCell::new(data)
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a shared pointer to the value: a read, checked for races.
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.0.with(f)
    }

    /// Runs `f` with a mutable pointer to the value: a write, checked for races.
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.0.with_mut(f)
    }

    /// A shared pointer to the value: a read, checked for races when it is made.
    #[track_caller]
    pub fn get(&self) -> ConstPtr<T> {
        ConstPtr {
            ptr: self.0.with(|p| p),
        }
    }

    /// A mutable pointer to the value: a write, checked for races when it is made.
    #[track_caller]
    pub fn get_mut(&self) -> MutPtr<T> {
        MutPtr {
            ptr: self.0.with_mut(|p| p),
        }
    }
}

/// loom's checked `*const T` to an [`UnsafeCell`]'s value (from [`UnsafeCell::get`]).
#[derive(Debug)]
pub struct ConstPtr<T: ?Sized> {
    ptr: *const T,
}

impl<T: ?Sized> ConstPtr<T> {
    /// The value.
    ///
    /// # Safety
    /// As for dereferencing a `*const T`: the cell is alive and nobody writes it meanwhile.
    pub unsafe fn deref(&self) -> &T {
        // SAFETY: per the contract.
        unsafe { &*self.ptr }
    }

    /// Runs `f` with the pointer.
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.ptr)
    }
}

/// loom's checked `*mut T` to an [`UnsafeCell`]'s value (from [`UnsafeCell::get_mut`]).
#[derive(Debug)]
pub struct MutPtr<T: ?Sized> {
    ptr: *mut T,
}

impl<T: ?Sized> MutPtr<T> {
    /// The value, mutably.
    ///
    /// # Safety
    /// As for dereferencing a `*mut T`: the cell is alive and nobody else accesses it
    /// meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn deref(&self) -> &mut T {
        // SAFETY: per the contract.
        unsafe { &mut *self.ptr }
    }

    /// Runs `f` with the pointer.
    pub fn with<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.ptr)
    }
}
