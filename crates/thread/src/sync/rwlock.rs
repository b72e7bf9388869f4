//! Instrumented `RwLock`: `read`, `write`, `try_read`, `try_write` and the guards' release
//! are switch points. A writer waits until no thread holds the lock; a reader waits while a
//! writer holds it (no writer preference is modelled). Outside an execution it behaves as a
//! std `RwLock`.

use crate::rt::{self, ObjCell, ObjId, ObjState, Op};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::panic::Location;
use std::sync::{LockResult, TryLockError, TryLockResult};

/// A reader-writer lock with the API of `std::sync::RwLock`.
pub struct RwLock<T: ?Sized> {
    id: ObjCell,
    fallback: std::sync::RwLock<()>,
    data: UnsafeCell<T>,
}

// SAFETY: access to `data` is serialised by the modelled lock inside an execution (one virtual
// thread runs at a time, shared guards only hand out `&T`) or by `fallback` outside.
unsafe impl<T: ?Sized + Send> Send for RwLock<T> {}
// SAFETY: as above; shared guards on several threads need `T: Sync`.
unsafe impl<T: ?Sized + Send + Sync> Sync for RwLock<T> {}

fn rwlock_state() -> ObjState {
    ObjState::RwLock {
        writer: None,
        readers: 0,
    }
}

enum Fallback<'a> {
    None,
    Read(#[allow(dead_code)] std::sync::RwLockReadGuard<'a, ()>),
    Write(#[allow(dead_code)] std::sync::RwLockWriteGuard<'a, ()>),
}

impl<T> RwLock<T> {
    /// Creates an unlocked lock; it is registered with the checker on first use.
    pub const fn new(t: T) -> Self {
        RwLock {
            id: ObjCell::new(),
            fallback: std::sync::RwLock::new(()),
            data: UnsafeCell::new(t),
        }
    }

    /// Like `new`; reports show the lock as `name#id`.
    pub const fn named(name: &'static str, t: T) -> Self {
        RwLock {
            id: ObjCell::named(name),
            fallback: std::sync::RwLock::new(()),
            data: UnsafeCell::new(t),
        }
    }

    /// Consumes the lock and returns the data.
    pub fn into_inner(self) -> LockResult<T> {
        Ok(self.data.into_inner())
    }
}

impl<T: ?Sized> RwLock<T> {
    fn obj_id(&self, location: &'static Location<'static>) -> Option<ObjId> {
        rt::register(&self.id, "RwLock", rwlock_state, location)
    }

    /// Acquires the lock, shared or exclusive, blocking until it is free
    /// for that mode (a switch point); outside a checked execution, the
    /// std lock behind it is taken instead.
    fn acquire(&self, shared: bool, location: &'static Location<'static>) -> Guard<'_, T> {
        let Some(id) = self.obj_id(location) else {
            let fallback = if shared {
                Fallback::Read(self.fallback.read().unwrap_or_else(|e| e.into_inner()))
            } else {
                Fallback::Write(self.fallback.write().unwrap_or_else(|e| e.into_inner()))
            };
            return Guard::new(self, None, location, fallback);
        };
        let op = if shared {
            Op::ReadLock(id)
        } else {
            Op::Lock(id)
        };
        rt::schedule(op, location);
        rt::with(|st| st.lock_acquire(id, shared));
        Guard::new(self, Some(id), location, Fallback::None)
    }

    /// Acquires the lock shared, blocking while a writer holds it (a switch point).
    #[track_caller]
    pub fn read(&self) -> LockResult<RwLockReadGuard<'_, T>> {
        Ok(RwLockReadGuard(self.acquire(true, Location::caller())))
    }

    /// Acquires the lock exclusively, blocking while any thread holds it (a switch point).
    #[track_caller]
    pub fn write(&self) -> LockResult<RwLockWriteGuard<'_, T>> {
        Ok(RwLockWriteGuard(self.acquire(false, Location::caller())))
    }

    /// Acquires the lock, shared or exclusive, if it is free for that mode
    /// (a switch point); `None` if it is not.
    fn try_acquire(
        &self,
        shared: bool,
        location: &'static Location<'static>,
    ) -> Option<Guard<'_, T>> {
        let Some(id) = self.obj_id(location) else {
            let fallback = if shared {
                Fallback::Read(self.fallback.try_read().ok()?)
            } else {
                Fallback::Write(self.fallback.try_write().ok()?)
            };
            return Some(Guard::new(self, None, location, fallback));
        };
        let op = if shared {
            Op::TryReadLock(id)
        } else {
            Op::TryLock(id)
        };
        rt::schedule(op, location);
        (rt::with(|st| st.try_acquire(id, shared)) == Some(true))
            .then(|| Guard::new(self, Some(id), location, Fallback::None))
    }

    /// Acquires the lock shared if no writer holds it (a switch point).
    #[track_caller]
    pub fn try_read(&self) -> TryLockResult<RwLockReadGuard<'_, T>> {
        self.try_acquire(true, Location::caller())
            .map(RwLockReadGuard)
            .ok_or(TryLockError::WouldBlock)
    }

    /// Acquires the lock exclusively if no thread holds it (a switch point).
    #[track_caller]
    pub fn try_write(&self) -> TryLockResult<RwLockWriteGuard<'_, T>> {
        self.try_acquire(false, Location::caller())
            .map(RwLockWriteGuard)
            .ok_or(TryLockError::WouldBlock)
    }

    /// Mutable access without locking (exclusive borrow).
    pub fn get_mut(&mut self) -> LockResult<&mut T> {
        Ok(self.data.get_mut())
    }
}

impl<T: Default> Default for RwLock<T> {
    fn default() -> Self {
        RwLock::new(T::default())
    }
}

impl<T: ?Sized> std::fmt::Debug for RwLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RwLock { .. }")
    }
}

/// What both guards share: the lock, its id in the execution, and the release on drop.
struct Guard<'a, T: ?Sized> {
    lock: &'a RwLock<T>,
    id: Option<ObjId>,
    location: &'static Location<'static>,
    fallback: Fallback<'a>,
}

impl<'a, T: ?Sized> Guard<'a, T> {
    fn new(
        lock: &'a RwLock<T>,
        id: Option<ObjId>,
        location: &'static Location<'static>,
        fallback: Fallback<'a>,
    ) -> Self {
        Guard {
            lock,
            id,
            location,
            fallback,
        }
    }
}

impl<T: ?Sized> Drop for Guard<'_, T> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            rt::schedule(Op::Unlock(id), self.location);
            rt::with(|st| st.lock_release(id));
        }
        self.fallback = Fallback::None;
    }
}

/// Holds an [`RwLock`] shared; releasing it (on drop) is a switch point.
pub struct RwLockReadGuard<'a, T: ?Sized>(Guard<'a, T>);

/// Holds an [`RwLock`] exclusively; releasing it (on drop) is a switch point.
pub struct RwLockWriteGuard<'a, T: ?Sized>(Guard<'a, T>);

impl<T: ?Sized> Deref for RwLockReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves this thread holds the lock shared: no writer exists.
        unsafe { &*self.0.lock.data.get() }
    }
}

impl<T: ?Sized> Deref for RwLockWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves this thread holds the lock exclusively.
        unsafe { &*self.0.lock.data.get() }
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLockReadGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized + std::fmt::Debug> std::fmt::Debug for RwLockWriteGuard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<T: ?Sized> DerefMut for RwLockWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves this thread holds the lock exclusively.
        unsafe { &mut *self.0.lock.data.get() }
    }
}
