//! Instrumented `Once` and `OnceLock`. Entering `call_once` is a switch point that blocks
//! while another thread runs the initialiser; completing it is another; `is_completed` and
//! `OnceLock::get` are read switch points. Outside an execution they behave as std's.
//!
//! Inside an execution a `OnceLock`'s value belongs to the execution, not to the cell: a
//! `static` is initialised afresh in every execution, two checks running at the same time
//! (parallel tests) each have their own value, and the value dies with the execution (the
//! last thread to finish drops it, as loom drops its lazy statics). A reference to the value
//! must therefore not outlive the execution.

use crate::rt::{self, ObjCell, ObjId, ObjState, Op, Value};
use std::cell::UnsafeCell;
use std::panic::Location;

/// A one-time initialisation with the API of `std::sync::Once`.
pub struct Once {
    id: ObjCell,
    fallback: std::sync::Once,
}

fn once_state() -> ObjState {
    ObjState::Once {
        running: None,
        done: false,
    }
}

impl Default for Once {
    fn default() -> Self {
        Once::new()
    }
}

impl Once {
    /// A `Once` that has not run; it is registered with the checker on first use.
    pub const fn new() -> Self {
        Once {
            id: ObjCell::new(),
            fallback: std::sync::Once::new(),
        }
    }

    fn obj_id(&self, location: &'static Location<'static>) -> Option<ObjId> {
        rt::register(&self.id, "Once", once_state, location)
    }

    /// Runs `f` if no thread ran it yet; blocks while another thread runs it (switch
    /// points at entry and, for the thread that runs `f`, at completion).
    #[track_caller]
    pub fn call_once<F: FnOnce()>(&self, f: F) {
        self.call_once_at(f, Location::caller())
    }

    pub(crate) fn call_once_at<F: FnOnce()>(&self, f: F, location: &'static Location<'static>) {
        let Some(o) = self.obj_id(location) else {
            return self.fallback.call_once(f);
        };
        rt::schedule(Op::OnceEnter(o), location);
        let run = rt::with(|st| {
            let me = st.active;
            let run = match st.state_mut(o) {
                ObjState::Once { running, done } if !*done => {
                    *running = Some(me);
                    true
                }
                _ => false,
            };
            st.set_value(Value::Bool(run));
            st.note_access(o, run);
            run
        });
        if run != Some(true) {
            return;
        }
        f();
        rt::schedule(Op::OnceDone(o), location);
        rt::with(|st| {
            *st.state_mut(o) = ObjState::Once {
                running: None,
                done: true,
            };
            st.note_access(o, true);
        });
    }

    /// Whether the initialiser completed (a switch point).
    #[track_caller]
    pub fn is_completed(&self) -> bool {
        let location = Location::caller();
        let Some(o) = self.obj_id(location) else {
            return self.fallback.is_completed();
        };
        rt::schedule(Op::OnceGet(o), location);
        rt::with(|st| {
            let done = matches!(st.objects[o].state, ObjState::Once { done: true, .. });
            st.set_value(Value::Bool(done));
            st.note_access(o, false);
            done
        })
        .unwrap_or(false)
    }
}

impl std::fmt::Debug for Once {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Once { .. }")
    }
}

/// A cell written once, with the API of `std::sync::OnceLock`.
pub struct OnceLock<T> {
    once: Once,
    /// The value when initialised outside any execution (inside one, the execution keeps it).
    value: UnsafeCell<Option<T>>,
}

// SAFETY: `value` is written only by the thread running the initialiser inside `once`, and
// read only after `once` completed (which the runtime orders after the write).
unsafe impl<T: Send> Send for OnceLock<T> {}
// SAFETY: as above; shared readers need `T: Sync`, and the initialising thread may differ
// from the creating one, so `T: Send`.
unsafe impl<T: Send + Sync> Sync for OnceLock<T> {}

impl<T> Default for OnceLock<T> {
    fn default() -> Self {
        OnceLock::new()
    }
}

/// Where a `OnceLock`'s value is.
enum Slot<T> {
    /// Inside an execution: the value the execution keeps, if initialised there.
    Execution(Option<*mut T>),
    /// Outside every execution: the cell's own.
    Cell,
}

impl<T> OnceLock<T> {
    /// An empty cell.
    pub const fn new() -> Self {
        OnceLock {
            once: Once::new(),
            value: UnsafeCell::new(None),
        }
    }

    fn slot(&self) -> Slot<T> {
        let kept = rt::with(|st| {
            let once = self.once.id.current(st)?;
            // SAFETY: the execution keeps this cell's value as a `T` (see `init`).
            st.once_value(once).map(|v| unsafe { v.as_ptr::<T>() })
        });
        kept.map_or(Slot::Cell, Slot::Execution)
    }

    /// The value, if initialised (a switch point).
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        if !self.once.is_completed() {
            return None;
        }
        match self.slot() {
            // SAFETY: completed, so no more writes; the execution keeps the value boxed until
            // the cell is dropped (which needs `&mut self`) or the execution ends.
            Slot::Execution(value) => value.map(|v| unsafe { &*v }),
            // SAFETY: completed: no more writes.
            Slot::Cell => unsafe { (*self.value.get()).as_ref() },
        }
    }

    /// Initialises the cell with `value` if empty; returns `Err(value)` if it was full.
    #[track_caller]
    pub fn set(&self, value: T) -> Result<(), T> {
        let mut value = Some(value);
        self.init(|| value.take().expect("set once"), Location::caller());
        value.map_or(Ok(()), Err)
    }

    /// The value, initialising it with `f` first if empty (switch points as `call_once`).
    #[track_caller]
    pub fn get_or_init<F: FnOnce() -> T>(&self, f: F) -> &T {
        self.init(f, Location::caller());
        let value = match self.slot() {
            // SAFETY: as in `get`.
            Slot::Execution(value) => value.map(|v| unsafe { &*v }),
            // SAFETY: `init` returned, so the cell is initialised and no longer written.
            Slot::Cell => unsafe { (*self.value.get()).as_ref() },
        };
        value.expect("initialised by call_once")
    }

    fn init<F: FnOnce() -> T>(&self, f: F, location: &'static Location<'static>) {
        self.once.call_once_at(
            || {
                let mut value = Some(f());
                rt::with(|st| {
                    if let Some(once) = self.once.id.current(st) {
                        let v = value.take().expect("initialised once");
                        st.once_values.push((once, rt::ErasedBox::new(v)));
                    }
                });
                if let Some(v) = value {
                    // SAFETY: outside an execution std's `Once` runs this once, and only
                    // this thread writes.
                    unsafe { *self.value.get() = Some(v) };
                }
            },
            location,
        );
    }

    /// Mutable access to the value (exclusive borrow).
    pub fn get_mut(&mut self) -> Option<&mut T> {
        match self.slot() {
            // SAFETY: `&mut self`: nothing else reaches the value.
            Slot::Execution(Some(v)) => Some(unsafe { &mut *v }),
            Slot::Execution(None) | Slot::Cell => self.value.get_mut().as_mut(),
        }
    }

    /// Takes the value out of the cell (the execution's, or else the cell's own).
    fn take(&mut self) -> Option<T> {
        let kept = rt::with(|st| {
            let once = self.once.id.current(st)?;
            st.take_once_value(once)
        })
        .flatten();
        match kept {
            // SAFETY: the execution kept this cell's value as a `T`.
            Some(v) => Some(unsafe { v.into_inner::<T>() }),
            None => self.value.get_mut().take(),
        }
    }

    /// Consumes the cell and returns the value.
    pub fn into_inner(mut self) -> Option<T> {
        self.take()
    }
}

impl<T> Drop for OnceLock<T> {
    /// Drops the value, wherever it is kept.
    fn drop(&mut self) {
        drop(self.take());
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for OnceLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnceLock { .. }")
    }
}

/// A value initialised on first access, with the API of `std::sync::LazyLock` (built on
/// [`OnceLock`], so first access is a switch point and concurrent first accesses block
/// while one thread initialises). Inside the checker a `static` one is initialised again in
/// every execution and dropped at its end (as loom's `lazy_static!`), which is why the
/// initialiser must be `Fn`.
pub struct LazyLock<T, F = fn() -> T> {
    cell: OnceLock<T>,
    init: F,
}

impl<T, F: Fn() -> T> LazyLock<T, F> {
    /// A lazy value computed by `init` on first access.
    pub const fn new(init: F) -> Self {
        LazyLock {
            cell: OnceLock::new(),
            init,
        }
    }

    /// Initialises the value if needed and returns it.
    #[track_caller]
    pub fn force(this: &Self) -> &T {
        this.cell.get_or_init(&this.init)
    }
}

impl<T, F: Fn() -> T> std::ops::Deref for LazyLock<T, F> {
    type Target = T;
    #[track_caller]
    fn deref(&self) -> &T {
        LazyLock::force(self)
    }
}

impl<T: std::fmt::Debug, F> std::fmt::Debug for LazyLock<T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LazyLock { .. }")
    }
}
