//! A tracked `UnsafeCell` with loom's shape (`with`, `with_mut`): every access is checked
//! against the accesses of other threads, and two that conflict (one writes) with no
//! happens-before between them are reported as a data race, with both call sites. Accesses
//! are not switch points (a race is found in any execution containing both accesses).
//! Outside an execution the closures just run.

use crate::rt::{self, ObjCell, ObjState};
use std::panic::Location;

/// A cell whose unsynchronised concurrent accesses are reported as data races.
#[derive(Debug, Default)]
pub struct UnsafeCell<T: ?Sized> {
    id: ObjCell,
    data: std::cell::UnsafeCell<T>,
}

// SAFETY: as for std's `UnsafeCell` shared through a type that is `Sync`: the user's code
// guarantees (and the checker verifies) that accesses are ordered.
unsafe impl<T: ?Sized + Send> Sync for UnsafeCell<T> {}

fn cell_state() -> ObjState {
    ObjState::Cell(Default::default())
}

impl<T> UnsafeCell<T> {
    /// A cell holding `data`; it is registered with the checker on first use.
    pub const fn new(data: T) -> Self {
        UnsafeCell {
            id: ObjCell::new(),
            data: std::cell::UnsafeCell::new(data),
        }
    }

    /// Like `new`; reports show the cell as `name#id`.
    pub const fn named(name: &'static str, data: T) -> Self {
        UnsafeCell {
            id: ObjCell::named(name),
            data: std::cell::UnsafeCell::new(data),
        }
    }

    /// The value (the cell is consumed, so no access can race with this one).
    pub fn into_inner(self) -> T {
        self.data.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a shared pointer to the value: a read, checked for races.
    #[track_caller]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.access(false, Location::caller());
        f(self.data.get())
    }

    /// Runs `f` with a mutable pointer to the value: a write, checked for races.
    #[track_caller]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.access(true, Location::caller());
        f(self.data.get())
    }

    /// Exclusive access through `&mut self` (never a race).
    pub fn get_mut(&mut self) -> &mut T {
        self.data.get_mut()
    }

    fn access(&self, write: bool, location: &'static Location<'static>) {
        let Some(id) = rt::register(&self.id, "UnsafeCell", cell_state, location) else {
            return;
        };
        let raced = rt::with(|st| st.cell_access(id, write, location));
        if let Some(Err(race)) = raced {
            rt::fail(race, location);
        }
    }
}
