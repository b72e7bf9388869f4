//! Instrumented `Once` and `OnceLock`. Entering `call_once` is a switch point that blocks
//! while another thread runs the initialiser; completing it is another; `is_completed` and
//! `OnceLock::get` are read switch points. Outside an execution they behave as std's.

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

impl<T> OnceLock<T> {
    /// An empty cell.
    pub const fn new() -> Self {
        OnceLock {
            once: Once::new(),
            value: UnsafeCell::new(None),
        }
    }

    /// The value, if initialised (a switch point).
    #[track_caller]
    pub fn get(&self) -> Option<&T> {
        if self.once.is_completed() {
            // SAFETY: completed: no more writes.
            unsafe { (*self.value.get()).as_ref() }
        } else {
            None
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
        // SAFETY: `init` returned, so the cell is initialised and no longer written.
        unsafe { (*self.value.get()).as_ref() }.expect("initialised by call_once")
    }

    fn init<F: FnOnce() -> T>(&self, f: F, location: &'static Location<'static>) {
        self.once.call_once_at(
            || {
                let v = f();
                // SAFETY: only the thread running the initialiser writes, once.
                let stale = unsafe { (*self.value.get()).replace(v) };
                // A value left by an earlier execution (a static initialised again) is
                // dropped outside the checker: it takes no step in this execution.
                rt::outside_execution(move || drop(stale));
            },
            location,
        );
    }

    /// Mutable access to the value (exclusive borrow).
    pub fn get_mut(&mut self) -> Option<&mut T> {
        self.value.get_mut().as_mut()
    }

    /// Consumes the cell and returns the value.
    pub fn into_inner(self) -> Option<T> {
        self.value.into_inner()
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
/// every execution (as loom's `lazy_static!`), which is why the initialiser must be `Fn`.
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
