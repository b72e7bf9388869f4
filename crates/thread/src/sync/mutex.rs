//! Instrumented `Mutex`: `lock`, `try_lock` and the guard's release are switch points.
//! A thread whose `lock` cannot succeed is blocked until the owner releases. Panics inside
//! checked code stop the execution, so the lock is never observed poisoned.

use crate::rt::{self, ObjCell, ObjId, ObjState, Op};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

/// A mutual-exclusion lock with the API of `std::sync::Mutex`.
/// Outside an execution it behaves as a plain std mutex.
pub struct Mutex<T: ?Sized> {
    id: ObjCell,
    fallback: std::sync::Mutex<()>,
    /// Formats the value for reports (mutexes made with [`Mutex::shown`]).
    show: Option<fn(&T) -> String>,
    data: UnsafeCell<T>,
}

fn debug_text<T: std::fmt::Debug + ?Sized>(value: &T) -> String {
    format!("{value:?}")
}

// SAFETY: access to `data` is serialised by the modelled lock (inside an execution, where only
// one virtual thread runs at a time) or by `fallback` (outside).
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}
// SAFETY: as above.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}

fn mutex_state() -> ObjState {
    ObjState::Mutex { owner: None }
}

impl<T> Mutex<T> {
    /// Creates an unlocked mutex; it is registered with the checker on first use.
    pub const fn new(t: T) -> Self {
        Mutex {
            id: ObjCell::new(),
            fallback: std::sync::Mutex::new(()),
            show: None,
            data: UnsafeCell::new(t),
        }
    }

    /// Like `new`; reports show the mutex as `name#id`.
    pub const fn named(name: &'static str, t: T) -> Self {
        Mutex {
            id: ObjCell::named(name),
            fallback: std::sync::Mutex::new(()),
            show: None,
            data: UnsafeCell::new(t),
        }
    }

    /// Like `named`, and reports also show the value (`Debug`) after every `lock` and
    /// `unlock` step, in the thread's column: `name#id = value`. (`new` and `named` cannot
    /// show it: stable Rust cannot tell whether an arbitrary `T` is `Debug`.)
    pub const fn shown(name: &'static str, t: T) -> Self
    where
        T: std::fmt::Debug,
    {
        Mutex {
            id: ObjCell::named(name),
            fallback: std::sync::Mutex::new(()),
            show: Some(debug_text::<T>),
            data: UnsafeCell::new(t),
        }
    }

    /// Consumes the mutex and returns the data.
    pub fn into_inner(self) -> LockResult<T> {
        Ok(self.data.into_inner())
    }
}

impl<T: ?Sized> Mutex<T> {
    pub(crate) fn obj_id(&self, location: &'static Location<'static>) -> Option<ObjId> {
        rt::register(&self.id, "Mutex", mutex_state, location)
    }

    /// Acquires the lock, blocking the virtual thread while another holds it (a switch point).
    #[track_caller]
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        self.lock_at(Location::caller())
    }

    /// `lock` reported at `location`.
    pub(crate) fn lock_at(
        &self,
        location: &'static Location<'static>,
    ) -> LockResult<MutexGuard<'_, T>> {
        let Some(id) = self.obj_id(location) else {
            let g = self.fallback.lock().unwrap_or_else(|e| e.into_inner());
            return Ok(MutexGuard {
                lock: self,
                id: None,
                location,
                fallback: Some(g),
            });
        };
        rt::schedule(Op::Lock(id), location);
        rt::with(|st| st.lock_acquire(id, false));
        Ok(self.acquired(id, location))
    }

    /// The guard of the checker's lock `id`, just acquired at `location`
    /// (its value shown in the trace).
    fn acquired(&self, id: ObjId, location: &'static Location<'static>) -> MutexGuard<'_, T> {
        let guard = MutexGuard {
            lock: self,
            id: Some(id),
            location,
            fallback: None,
        };
        guard.show_value(id);
        guard
    }

    /// Acquires the lock if it is free (a switch point); a failure counts as a read for
    /// spin-loop detection.
    #[track_caller]
    pub fn try_lock(&self) -> TryLockResult<MutexGuard<'_, T>> {
        let location = Location::caller();
        let Some(id) = self.obj_id(location) else {
            return match self.fallback.try_lock() {
                Ok(g) => Ok(MutexGuard {
                    lock: self,
                    id: None,
                    location,
                    fallback: Some(g),
                }),
                Err(_) => Err(TryLockError::WouldBlock),
            };
        };
        rt::schedule(Op::TryLock(id), location);
        let acquired = rt::with(|st| st.try_acquire(id, false));
        if acquired == Some(true) {
            Ok(self.acquired(id, location))
        } else {
            Err(TryLockError::WouldBlock)
        }
    }

    /// Mutable access without locking (exclusive borrow).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        Ok(self.data.get_mut())
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
        Mutex::new(T::default())
    }
}

impl<T: ?Sized> std::fmt::Debug for Mutex<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mutex { .. }")
    }
}

/// Holds a [`Mutex`] locked; releasing it (on drop) is a switch point.
pub struct MutexGuard<'a, T: ?Sized> {
    pub(crate) lock: &'a Mutex<T>,
    pub(crate) id: Option<ObjId>,
    pub(crate) location: &'static Location<'static>,
    pub(crate) fallback: Option<std::sync::MutexGuard<'a, ()>>,
}

impl<T: ?Sized> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves this thread holds the lock.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T: ?Sized> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves this thread holds the lock exclusively.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T: ?Sized> MutexGuard<'_, T> {
    /// For a [`Mutex::shown`] mutex held by the running thread: labels its column with the
    /// value, shown after the thread's latest step.
    fn show_value(&self, id: ObjId) {
        if let Some(show) = self.lock.show {
            let text = show(self);
            let name = rt::with(|st| st.object_name(id));
            if let Some(name) = name {
                rt::annotate(format!("{name} = {text}"));
            }
        }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            rt::schedule(Op::Unlock(id), self.location);
            self.show_value(id);
            rt::with(|st| st.lock_release(id));
        }
        self.fallback.take();
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for MutexGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}
