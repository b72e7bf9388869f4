//! Instrumented `std::thread`: `spawn`, `Builder` (name, stack size), `scope`,
//! `JoinHandle::join`, `park`/`park_timeout`/`unpark`, `yield_now`, `sleep` and `current`. Inside an execution threads are virtual (coroutines run one at
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
    name: Option<Arc<str>>,
    std: Option<std::thread::Thread>,
}

impl Thread {
    /// The thread's id.
    pub fn id(&self) -> ThreadId {
        self.id
    }

    /// The thread's name: the one given to [`Builder::name`] (none for the model's thread
    /// 0, as in loom).
    pub fn name(&self) -> Option<&str> {
        match &self.std {
            Some(t) => t.name(),
            None => self.name.as_deref(),
        }
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
            name: st.threads[me].name.clone(),
            std: None,
        }
    })
    .unwrap_or_else(|| Thread {
        id: ThreadId(usize::MAX),
        park: None,
        name: None,
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

/// Like [`park`], but returns after `timeout` at the latest. Under the checker it never
/// blocks: it takes the token if one is available, otherwise it times out (advancing
/// virtual time by `timeout`), so both outcomes are explored (a switch point).
#[track_caller]
pub fn park_timeout(timeout: std::time::Duration) {
    let location = Location::caller();
    let Some(obj) = rt::with(|st| st.threads[st.active].park) else {
        return std::thread::park_timeout(timeout);
    };
    rt::schedule(Op::ParkTimeout(obj), location);
    rt::with(|st| {
        let took = match st.state_mut(obj) {
            rt::ObjState::Park { token } => std::mem::replace(token, false),
            _ => false,
        };
        if !took {
            st.elapsed += timeout;
        }
        st.set_value(rt::Value::Bool(!took));
        st.note_access(obj, took);
    });
}

/// Puts the thread to sleep for `d`: under the checker, a yield point (switching away is
/// not a preemption) that advances the execution's virtual time by `d`.
#[track_caller]
pub fn sleep(d: std::time::Duration) {
    if rt::in_execution() {
        rt::schedule(Op::Sleep, Location::caller());
        rt::with(|st| st.elapsed += d);
    } else {
        std::thread::sleep(d)
    }
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
    Builder::new()
        .spawn_at(f, Location::caller())
        .expect("cmc: failed to spawn a thread")
}

/// Thread configuration with the API of `std::thread::Builder`: a name (returned by
/// [`Thread::name`]) and a stack size (the virtual thread's coroutine stack is at least
/// that big).
#[derive(Debug, Default)]
#[must_use]
pub struct Builder {
    name: Option<String>,
    stack_size: Option<usize>,
}

impl Builder {
    /// A builder with no name and the default stack size.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Names the thread.
    pub fn name(mut self, name: String) -> Self {
        self.name = Some(name);
        self
    }

    /// Sets the thread's stack size in bytes.
    pub fn stack_size(mut self, size: usize) -> Self {
        self.stack_size = Some(size);
        self
    }

    /// Spawns the configured thread (a switch point).
    #[track_caller]
    pub fn spawn<F, T>(self, f: F) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        self.spawn_at(f, Location::caller())
    }

    fn spawn_at<F, T>(
        self,
        f: F,
        location: &'static Location<'static>,
    ) -> std::io::Result<JoinHandle<T>>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        if !rt::in_execution() {
            let mut b = std::thread::Builder::new();
            if let Some(n) = self.name {
                b = b.name(n);
            }
            if let Some(s) = self.stack_size {
                b = b.stack_size(s);
            }
            let h = b.spawn(f)?;
            let thread = Thread {
                id: ThreadId(usize::MAX),
                park: None,
                name: None,
                std: Some(h.thread().clone()),
            };
            return Ok(JoinHandle {
                inner: Inner::Std(h),
                thread,
            });
        }
        Ok(self.spawn_virtual(f, location))
    }

    /// Spawns a virtual thread (inside an execution); `Send` is not needed there, since
    /// every virtual thread of an execution runs on the explorer's OS thread.
    fn spawn_virtual<F, T>(self, f: F, location: &'static Location<'static>) -> JoinHandle<T>
    where
        F: FnOnce() -> T + 'static,
        T: 'static,
    {
        // SAFETY: 'static closure and result.
        let (id, result) = unsafe { spawn_boxed(Box::new(f), self, location) };
        let (park, name) = rt::with(|st| (st.threads[id].park, st.threads[id].name.clone()))
            .expect("in an execution");
        JoinHandle {
            inner: Inner::Virtual { id, result },
            thread: Thread {
                id: ThreadId(id),
                park: Some(park),
                name,
                std: None,
            },
        }
    }

    /// Spawns the configured thread with a closure and result that need not be `Send`, as
    /// loom's `spawn` allows (a model may share an `Rc` between its threads): every virtual
    /// thread of an execution runs on the explorer's one OS thread. Inside an execution
    /// only: `None` outside one, where a real thread would be needed.
    #[track_caller]
    pub fn spawn_local<F, T>(self, f: F) -> Option<JoinHandle<T>>
    where
        F: FnOnce() -> T + 'static,
        T: 'static,
    {
        rt::in_execution().then(|| self.spawn_virtual(f, Location::caller()))
    }

    /// Spawns the configured thread in `scope` (a switch point).
    #[track_caller]
    pub fn spawn_scoped<'scope, F, T>(
        self,
        scope: &'scope Scope<'scope, '_>,
        f: F,
    ) -> std::io::Result<ScopedJoinHandle<'scope, T>>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        Ok(scope.spawn_with(self, f, Location::caller()))
    }
}

/// Spawns a virtual thread running `f`.
///
/// # Safety
/// The thread must be joined before `'a` ends (trivial for `'a = 'static`).
unsafe fn spawn_boxed<'a, T: 'a>(
    f: Box<dyn FnOnce() -> T + 'a>,
    config: Builder,
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
    let id = rt::with(|st| {
        let id = st.spawn(body, location)?;
        st.threads[id].name = config.name.map(Into::into);
        st.threads[id].stack_size = config.stack_size;
        Some(id)
    })
    .flatten();
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
        self.spawn_with(Builder::new(), f, Location::caller())
    }

    fn spawn_with<F, T>(
        &'scope self,
        config: Builder,
        f: F,
        location: &'static Location<'static>,
    ) -> ScopedJoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        // SAFETY: `scope` joins every thread spawned here before returning, so the closure
        // and its result never outlive 'scope (the same argument as std::thread::scope).
        let (id, result) = unsafe { spawn_boxed(Box::new(f), config, location) };
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

/// A thread-local key declared with [`thread_local!`](crate::thread_local): inside an
/// execution every virtual thread has its own value, initialised on its first access and
/// dropped when the thread finishes (its destructor may take steps); outside one it is the
/// std thread-local declared alongside.
pub struct LocalKey<T: 'static> {
    init: fn() -> T,
    std: &'static std::thread::LocalKey<T>,
}

impl<T: 'static> LocalKey<T> {
    #[doc(hidden)]
    pub const fn new(init: fn() -> T, std: &'static std::thread::LocalKey<T>) -> Self {
        LocalKey { init, std }
    }

    /// Runs `f` with the running thread's value (not a switch point).
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        let key = self as *const Self as usize;
        let find = |st: &mut rt::ExecState| {
            let me = st.active;
            st.locals
                .iter()
                .find(|(t, k, _)| *t == me && *k == key)
                .and_then(|(_, _, v)| v.downcast_ref::<T>())
                .map(|v| v as *const T)
        };
        let Some(found) = rt::with(find) else {
            return self.std.with(f);
        };
        let ptr = found.unwrap_or_else(|| {
            // Initialised outside the borrow: the initialiser may use the runtime.
            let value: Box<dyn std::any::Any> = Box::new((self.init)());
            rt::with(|st| {
                let me = st.active;
                st.locals.push((me, key, value));
                find(st).expect("just inserted")
            })
            .expect("in an execution")
        });
        // SAFETY: the value is boxed and stays in `locals` until its thread's closure
        // returned (so after `f`); only its own thread reaches it.
        f(unsafe { &*ptr })
    }
}

impl<T: 'static> LocalKey<T> {
    /// [`LocalKey::with`], as a `Result`: the value is reachable as long as its thread runs
    /// (a destructor of another thread-local of the same thread is not told apart).
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        Ok(self.with(f))
    }
}

/// The error of [`LocalKey::try_with`] (std's `AccessError` cannot be built outside std).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError;

impl std::fmt::Display for AccessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("already destroyed")
    }
}

impl std::error::Error for AccessError {}

impl<T: 'static> std::fmt::Debug for LocalKey<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocalKey { .. }")
    }
}

/// Declares thread-local statics with [`LocalKey`]: one value per virtual thread inside
/// an execution (std's `thread_local!` shares one among them, since they run on one OS
/// thread), std's thread-local outside.
#[macro_export]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident : $t:ty = $init:expr; $($rest:tt)*) => {
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init);
        $crate::thread_local!($($rest)*);
    };
    ($(#[$attr:meta])* $vis:vis static $name:ident : $t:ty = $init:expr) => {
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> = {
            fn init() -> $t {
                $init
            }
            ::std::thread_local!(static STD: $t = init());
            $crate::thread::LocalKey::new(init, &STD)
        };
    };
}
