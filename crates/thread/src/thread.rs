//! Instrumented `std::thread`: `spawn`, `scope`, `JoinHandle::join`, `park`/`unpark`,
//! `yield_now` and `current`. Inside an execution threads are virtual (coroutines run one at
//! a time by the checker); outside one, `spawn` falls back to `std::thread::spawn`.
//!
//! A panic in any virtual thread is reported as a failure of the execution (as loom does),
//! so `join` never returns `Err` under the checker.

use crate::rt::{self, ObjId, Op};
use std::marker::PhantomData;
use std::panic::Location;
use std::sync::{Arc, Mutex as StdMutex};

/// Identifier of a virtual thread: 0 is the model's main thread, then spawn order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub usize);

/// A handle to a virtual thread, used to unpark it.
#[derive(Clone, Debug)]
pub struct Thread {
    id: ThreadId,
    park: Option<ObjId>,
    std: Option<std::thread::Thread>,
}

impl Thread {
    /// The thread's id.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// Makes the thread's park token available (a switch point); a later or pending `park`
    /// returns.
    #[track_caller]
    pub fn unpark(&self) {
        if let Some(t) = &self.std {
            return t.unpark();
        }
        let Some(obj) = self.park else { return };
        rt::schedule(Op::Unpark(obj), Location::caller());
        rt::with(|st| {
            if let rt::ObjState::Park { token, .. } = st.state_mut(obj) {
                *token = true;
            }
            st.note_access(obj, true);
        });
    }
}

/// The handle of the running thread.
pub fn current() -> Thread {
    rt::with(|st| {
        let me = st.active;
        Thread {
            id: ThreadId(me),
            park: Some(st.threads[me].park),
            std: None,
        }
    })
    .unwrap_or_else(|| Thread {
        id: ThreadId(usize::MAX),
        park: None,
        std: Some(std::thread::current()),
    })
}

/// Blocks the running thread until its park token is available, then consumes it (a switch
/// point). Spurious wake-ups are not modelled.
#[track_caller]
pub fn park() {
    let location = Location::caller();
    let Some(obj) = rt::with(|st| st.threads[st.active].park) else {
        return std::thread::park();
    };
    rt::schedule(Op::Park(obj), location);
    rt::with(|st| {
        if let rt::ObjState::Park { token, .. } = st.state_mut(obj) {
            *token = false;
        }
        st.note_access(obj, true);
    });
}

/// A preemption point with no other effect.
#[track_caller]
pub fn yield_now() {
    if rt::in_execution() {
        rt::schedule(Op::Yield, Location::caller());
    } else {
        std::thread::yield_now()
    }
}

type Slot<T> = Arc<StdMutex<Option<T>>>;

enum Inner<T> {
    Virtual { id: usize, result: Slot<T> },
    Std(std::thread::JoinHandle<T>),
}

/// Owned permission to join a spawned thread.
pub struct JoinHandle<T> {
    inner: Inner<T>,
    thread: Thread,
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish and returns its result (a switch point that blocks
    /// until the thread finished).
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        match self.inner {
            Inner::Std(h) => h.join(),
            Inner::Virtual { id, result } => Ok(join_virtual(id, &result, Location::caller())),
        }
    }

    /// The spawned thread's handle.
    pub fn thread(&self) -> &Thread {
        &self.thread
    }

    /// Whether the thread finished (a switch point, so the answer is explored both ways).
    #[track_caller]
    pub fn is_finished(&self) -> bool {
        match &self.inner {
            Inner::Std(h) => h.is_finished(),
            Inner::Virtual { id, .. } => {
                rt::schedule(Op::Yield, Location::caller());
                rt::with(|st| st.threads[*id].finished).unwrap_or(true)
            }
        }
    }
}

fn join_virtual<T>(id: usize, result: &Slot<T>, location: &'static Location<'static>) -> T {
    rt::schedule(Op::Join(id), location);
    let value = result.lock().unwrap_or_else(|e| e.into_inner()).take();
    value.expect("cmc: a joined thread finished without a result (it panicked, which stops the execution first)")
}

/// Spawns a virtual thread running `f` (a switch point).
#[track_caller]
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let location = Location::caller();
    if !rt::in_execution() {
        let h = std::thread::spawn(f);
        let thread = Thread {
            id: ThreadId(usize::MAX),
            park: None,
            std: Some(h.thread().clone()),
        };
        return JoinHandle {
            inner: Inner::Std(h),
            thread,
        };
    }
    // SAFETY: 'static closure and result.
    let (id, result) = unsafe { spawn_boxed(Box::new(f), location) };
    let park = rt::with(|st| st.threads[id].park);
    JoinHandle {
        inner: Inner::Virtual { id, result },
        thread: Thread {
            id: ThreadId(id),
            park,
            std: None,
        },
    }
}

/// Spawns a virtual thread running `f`.
///
/// # Safety
/// The thread must be joined before `'a` ends (trivial for `'a = 'static`).
unsafe fn spawn_boxed<'a, T: 'a>(
    f: Box<dyn FnOnce() -> T + 'a>,
    location: &'static Location<'static>,
) -> (usize, Slot<T>) {
    rt::schedule(Op::Spawn(0), location);
    let result: Slot<T> = Arc::new(StdMutex::new(None));
    let slot = result.clone();
    let body: Box<dyn FnOnce() + 'a> = Box::new(move || {
        let v = f();
        *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
    });
    // SAFETY: guaranteed by the caller: the thread finishes before 'a ends.
    let body: rt::SpawnFn =
        unsafe { std::mem::transmute::<Box<dyn FnOnce() + 'a>, rt::SpawnFn>(body) };
    let id = rt::with(|st| st.spawn(body, location)).flatten();
    let id = id.unwrap_or_else(|| {
        panic!(
            "cmc: more than {} threads in one execution",
            rt::MAX_THREADS
        )
    });
    (id, result)
}

/// A scope whose threads may borrow from the enclosing stack frame; see [`scope`].
pub struct Scope<'scope, 'env: 'scope> {
    spawned: std::cell::RefCell<Vec<usize>>,
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// Owned permission to join a thread spawned in a [`Scope`].
pub struct ScopedJoinHandle<'scope, T> {
    id: usize,
    result: Slot<T>,
    _scope: PhantomData<&'scope ()>,
}

impl<T> ScopedJoinHandle<'_, T> {
    /// Waits for the thread to finish and returns its result (a switch point).
    #[track_caller]
    pub fn join(self) -> std::thread::Result<T> {
        Ok(join_virtual(self.id, &self.result, Location::caller()))
    }
}

impl<'scope> Scope<'scope, '_> {
    /// Spawns a virtual thread that may borrow from outside the scope (a switch point).
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        // SAFETY: `scope` joins every thread spawned here before returning, so the closure
        // and its result never outlive 'scope (the same argument as std::thread::scope).
        let (id, result) = unsafe { spawn_boxed(Box::new(f), Location::caller()) };
        self.spawned.borrow_mut().push(id);
        ScopedJoinHandle {
            id,
            result,
            _scope: PhantomData,
        }
    }
}

/// Creates a scope for spawning borrowing threads; every thread still running when `f`
/// returns is joined (switch points) before `scope` returns. Only available inside an
/// execution.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    assert!(rt::in_execution(), "cmc_thread::thread::scope used outside cmc_thread::Checker::check; use std under cfg(not(cmc))");
    let location = Location::caller();
    let s = Scope {
        spawned: std::cell::RefCell::new(Vec::new()),
        _scope: PhantomData,
        _env: PhantomData,
    };
    let out = f(&s);
    for id in s.spawned.borrow().iter() {
        rt::schedule(Op::Join(*id), location);
    }
    out
}
