//! Runs one execution: creates a coroutine per virtual thread and, at every switch point,
//! asks a [`Scheduler`] which enabled thread performs its announced operation next.

use super::execution::{ExecState, SpawnFn, VThread};
use super::op::ThreadId;
use super::overflow::{self, Running};
use super::{install_panic_hook, next_epoch, take_last_panic, uncontrolled, Context, CURRENT};
use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe, Location};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Chooses the thread that runs next.
pub trait Scheduler {
    /// Picks one thread of the non-empty `enabled` mask, given the execution so far (whose
    /// `active` thread is the one that just reached a switch point). An error aborts the
    /// execution (replay when the schedule does not fit, or a detected non-determinism).
    fn choose(&mut self, st: &ExecState, enabled: u64) -> Result<ThreadId, Stop>;

    /// Called right after [`Scheduler::choose`] picked a thread whose step may read one of
    /// `options` stores (weak memory; 1 otherwise): how many stores back from the latest it
    /// reads, below `options`.
    fn choose_stale(&mut self, st: &ExecState, options: u32) -> Result<u32, Stop>;
}

/// Why an execution stopped early (an execution that completes has no `Stop`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A user thread panicked.
    Panic {
        /// The thread.
        thread: ThreadId,
        /// The panic message and location.
        message: String,
    },
    /// No thread can run and at least one is blocked on a primitive.
    Deadlock {
        /// Each blocked thread with what it waits for.
        blocked: Vec<(ThreadId, String)>,
        /// Threads each waiting for the next, if there is a cycle.
        cycle: Option<Vec<ThreadId>>,
    },
    /// No thread can run and some are spinning on locations nobody will write.
    Livelock {
        /// Each stuck thread with what it spins on or waits for.
        blocked: Vec<(ThreadId, String)>,
    },
    /// The execution exceeded the step bound.
    StepLimit(usize),
    /// The scheduler could not continue (e.g. a replayed schedule does not fit).
    Schedule(String),
    /// Re-running a schedule took a different branch than the first run.
    NonDeterminism {
        /// The step where the runs diverged.
        step: usize,
        /// What the first run did there.
        first: String,
        /// What the second run did there.
        second: String,
    },
    /// No step happened for `timeout`: `thread` is blocked or spinning outside the checker.
    Stalled {
        /// The thread that ran last.
        thread: ThreadId,
        /// The stall timeout.
        timeout: std::time::Duration,
    },
    /// Two accesses to a tracked cell, one a write, with no happens-before between them.
    DataRace {
        /// The cell, e.g. `UnsafeCell#3`.
        object: String,
        /// The earlier access: thread, kind and call site.
        first: String,
        /// The access that raced with it.
        second: String,
    },
    /// An instrumented object was used after the block holding it was freed with
    /// `cmc_thread::alloc::dealloc` (or a block was freed twice).
    UseAfterFree {
        /// The object, e.g. `UnsafeCell#3`.
        object: String,
        /// Who freed the block, and where.
        freed: String,
        /// Who used the object (or freed the block again), and where.
        used: String,
    },
    /// `Arc` allocations made during the execution were still alive when it ended.
    Leak {
        /// Each leaked allocation: where it was created and its strong count.
        allocations: Vec<String>,
    },
    /// Something the checker does not control: a thread it did not start (touching an object
    /// of the execution, or still running after it), or I/O through `cmc_thread::{fs, net}`.
    Uncontrolled(String),
    /// A coroutine stack could not be allocated.
    OutOfMemory,
    /// Not a failure: the strategy cut an execution whose continuations are all covered by
    /// executions already explored (DPOR sleep sets). Never reported to the user.
    Redundant,
}

/// Shared with the stall detector: steps taken so far and the thread that ran last.
#[derive(Clone, Default)]
pub struct Progress {
    /// Total steps over all executions.
    pub steps: Arc<AtomicU64>,
    /// The thread chosen at the latest step.
    pub last_thread: Arc<AtomicUsize>,
}

type Co = Coroutine<(), (), (), DefaultStack>;

/// Runs executions one after another, reusing coroutine stacks.
pub struct Driver {
    ctx: Box<Context>,
    coroutines: Vec<Option<Co>>,
    /// Per coroutine: its stack's bounds, for the stack-overflow report.
    bounds: Vec<Running>,
    stacks: Vec<DefaultStack>,
    stack_size: usize,
    max_steps: usize,
    progress: Arc<AtomicU64>,
    last_thread: Arc<AtomicUsize>,
    detect_leaks: bool,
    random_seed: u64,
    weak_memory: bool,
    yield_refreshes: bool,
    confirm_spins: bool,
    os_threads: super::os_threads::OsThreadWatch,
}

impl Driver {
    /// A driver with the given coroutine stack size, step bound per execution, spin limit, and
    /// and a [`Progress`] updated at every step (watched by the stall detector).
    pub fn new(stack_size: usize, max_steps: usize, spin_limit: u32, progress: &Progress) -> Self {
        install_panic_hook();
        overflow::install();
        Driver {
            ctx: Box::new(Context {
                state: RefCell::new(ExecState::new(0, spin_limit)),
            }),
            coroutines: Vec::new(),
            bounds: Vec::new(),
            stacks: Vec::new(),
            stack_size,
            max_steps,
            progress: progress.steps.clone(),
            last_thread: progress.last_thread.clone(),
            detect_leaks: true,
            random_seed: 0,
            weak_memory: false,
            yield_refreshes: false,
            confirm_spins: false,
            os_threads: super::os_threads::OsThreadWatch::new(),
        }
    }

    /// Whether loads may read older stores as the weak memory model allows (see `weak.rs`).
    pub fn weak_memory(&mut self, on: bool) {
        self.weak_memory = on;
    }

    /// Whether a thread that yields no longer reads the replaced stores it saw before (see
    /// `Checker::yield_refreshes`).
    pub fn yield_refreshes(&mut self, on: bool) {
        self.yield_refreshes = on;
    }

    /// Whether threads found spinning when no other thread can run are let run on (see
    /// `Checker::confirm_spins`) instead of being reported as a livelock at once.
    pub fn confirm_spins(&mut self, on: bool) {
        self.confirm_spins = on;
    }

    /// The seed of every execution's random generator (`crate::random`).
    pub fn random_seed(&mut self, seed: u64) {
        self.random_seed = seed;
    }

    /// Whether an execution that completes with `Arc` allocations it made still alive is
    /// reported as a leak (default: yes).
    pub fn detect_leaks(&mut self, on: bool) {
        self.detect_leaks = on;
    }

    /// The state left by the last execution (trace, objects, annotations).
    pub fn state(&self) -> std::cell::Ref<'_, ExecState> {
        self.ctx.state.borrow()
    }

    /// Runs `model` once as thread 0 under `sched`. Returns `None` when every thread finished.
    pub fn run(
        &mut self,
        model: &Arc<dyn Fn() + Send + Sync>,
        sched: &mut dyn Scheduler,
    ) -> Option<Stop> {
        let spin_limit = self.ctx.state.borrow().spin_limit;
        let epoch = next_epoch();
        *self.ctx.state.borrow_mut() = ExecState::new(epoch, spin_limit);
        self.ctx.state.borrow_mut().random = crate::rng::Rng::new(self.random_seed);
        self.ctx.state.borrow_mut().weak =
            super::weak::WeakMemory::new(self.weak_memory, self.yield_refreshes);
        CURRENT.with(|c| c.set(&*self.ctx as *const Context));
        uncontrolled::enter(epoch);
        let stop = self.run_inner(model, sched);
        let stop =
            uncontrolled::take(epoch).map_or(stop, |message| Some(Stop::Uncontrolled(message)));
        self.teardown();
        let stop = match stop {
            None => self.os_threads.check().map(Stop::Uncontrolled),
            stop => stop,
        };
        uncontrolled::leave(epoch);
        CURRENT.with(|c| c.set(std::ptr::null()));
        stop
    }

    fn run_inner(
        &mut self,
        model: &Arc<dyn Fn() + Send + Sync>,
        sched: &mut dyn Scheduler,
    ) -> Option<Stop> {
        let root = model.clone();
        let root_fn: SpawnFn = Box::new(move || root());
        self.ctx
            .state
            .borrow_mut()
            .add_thread(None, Location::caller());
        self.ctx.state.borrow_mut().spawn_queue.push(root_fn);
        loop {
            if let Some(stop) = self.start_spawned() {
                return Some(stop);
            }
            let choice = {
                let st = self.ctx.state.borrow();
                if let Some(message) = uncontrolled::take(st.epoch) {
                    return Some(Stop::Uncontrolled(message));
                }
                if let Some(stop) = st.failure.clone() {
                    return Some(stop);
                }
                if let Some((thread, message)) = st.panic.clone() {
                    return Some(Stop::Panic { thread, message });
                }
                if st.all_finished() {
                    let leaks = if self.detect_leaks {
                        st.leaks()
                    } else {
                        Vec::new()
                    };
                    return (!leaks.is_empty()).then_some(Stop::Leak { allocations: leaks });
                }
                if st.trace.len() >= self.max_steps {
                    // A thread let run on after spinning that is still spinning: a livelock.
                    if st.threads.iter().any(|t| !t.finished && t.spin.confirmed()) {
                        return Some(stuck(&st));
                    }
                    return Some(Stop::StepLimit(self.max_steps));
                }
                let enabled = st.enabled_mask();
                let spinning = |t: &VThread| !t.finished && t.spin.blocked();
                if enabled == 0 && self.confirm_spins && st.threads.iter().any(spinning) {
                    drop(st);
                    let mut st = self.ctx.state.borrow_mut();
                    for t in st.threads.iter_mut().filter(|t| spinning(t)) {
                        t.spin.confirm();
                    }
                    continue;
                }
                if enabled == 0 {
                    return Some(stuck(&st));
                }
                let t = match sched.choose(&st, enabled) {
                    Ok(t) if t < 64 && enabled & (1 << t) != 0 => t,
                    Ok(t) => {
                        return Some(Stop::Schedule(format!(
                            "thread {t} is not enabled at step {}",
                            st.trace.len()
                        )))
                    }
                    Err(stop) => return Some(stop),
                };
                let options = st.read_options(t);
                match sched.choose_stale(&st, options) {
                    Ok(stale) if stale < options => (t, enabled, stale),
                    Ok(stale) => {
                        return Some(Stop::Schedule(format!(
                        "step {} reads {stale} stores back, but thread {t} can only read {} back",
                        st.trace.len(),
                        options - 1
                    )))
                    }
                    Err(stop) => return Some(stop),
                }
            };
            let (choice, enabled, stale) = choice;
            {
                let mut st = self.ctx.state.borrow_mut();
                st.note_switch(choice, enabled);
                st.weak.stale = stale;
                st.begin_step(choice);
            }
            self.progress
                .store(self.progress.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            self.last_thread.store(choice, Ordering::Relaxed);
            let co = self.coroutines[choice]
                .as_mut()
                .expect("an enabled thread has a coroutine");
            overflow::set_running(Some(self.bounds[choice]));
            let result = co.resume(());
            overflow::set_running(None);
            if let CoroutineResult::Return(()) = result {
                let co = self.coroutines[choice].take().expect("coroutine present");
                self.stacks.push(co.into_stack());
            }
        }
    }

    /// Gives a coroutine to every thread spawned since the last step.
    fn start_spawned(&mut self) -> Option<Stop> {
        let queued: Vec<SpawnFn> = std::mem::take(&mut self.ctx.state.borrow_mut().spawn_queue);
        for f in queued {
            let tid = self.coroutines.len();
            let asked = self.ctx.state.borrow().threads[tid].stack_size;
            // A stack bigger than the pool's is allocated for the thread and then pooled
            // (every pooled stack is at least `stack_size`).
            let stack = match (asked.filter(|&n| n > self.stack_size), self.stacks.pop()) {
                (None, Some(s)) => s,
                (asked, popped) => {
                    self.stacks.extend(popped);
                    match DefaultStack::new(asked.unwrap_or(self.stack_size)) {
                        Ok(s) => s,
                        Err(_) => return Some(Stop::OutOfMemory),
                    }
                }
            };
            let ctx: *const Context = &*self.ctx;
            let (limit, base) = (stack.limit().get(), stack.base().get());
            self.bounds.push(Running {
                limit,
                size: base - limit,
                thread: tid,
            });
            let co = Coroutine::with_stack(stack, move |y: &Yielder<(), ()>, ()| {
                // SAFETY: the context outlives every coroutine (see `current`).
                let ctx = unsafe { &*ctx };
                ctx.state.borrow_mut().threads[tid].yielder = y as *const _;
                let mut result = catch_unwind(AssertUnwindSafe(f));
                // The thread's thread-local values die with it, as in std; their
                // destructors may still take steps.
                let locals = ctx.state.borrow_mut().take_locals(tid);
                let dropped = catch_unwind(AssertUnwindSafe(move || drop(locals)));
                if result.is_ok() {
                    result = dropped;
                }
                // The last thread to finish drops the values of the execution's statics.
                let statics = ctx.state.borrow_mut().take_once_values_if_last(tid);
                let dropped = catch_unwind(AssertUnwindSafe(move || drop(statics)));
                if result.is_ok() {
                    result = dropped;
                }
                let mut st = ctx.state.borrow_mut();
                st.threads[tid].finished = true;
                st.threads[tid].pending = None;
                if result.is_err() && st.panic.is_none() {
                    let message = take_last_panic().unwrap_or_else(|| "panic".to_string());
                    st.panic = Some((tid, message));
                }
            });
            self.coroutines.push(Some(co));
        }
        None
    }

    /// Abandons the threads that have not finished and recycles every stack. A thread stopped
    /// in the middle of its code (after a failure, or cut by the strategy) is not unwound:
    /// unwinding it from a switch point would run destructors on state that real code never
    /// sees (a lock another suspended thread holds, a structure half updated), and a panic
    /// of one of them during the unwinding would abort the process. loom leaves a failed
    /// model's threads the same way. Nothing of an abandoned thread runs again: its stack is
    /// reset without running the destructors of its frames (or of its closure, for a thread
    /// not started), and what they own is leaked, with its thread-local values and the
    /// values of the execution's statics (their destructors could reach the abandoned
    /// frames).
    fn teardown(&mut self) {
        {
            let mut st = self.ctx.state.borrow_mut();
            if !st.all_finished() {
                std::mem::forget(std::mem::take(&mut st.once_values));
                std::mem::forget(std::mem::take(&mut st.locals));
                std::mem::forget(std::mem::take(&mut st.spawn_queue));
            }
        }
        for mut co in self.coroutines.drain(..).flatten() {
            if !co.done() {
                // SAFETY: the frames on the stack (or the closure of a thread not started)
                // are leaked, never used again: the driver never resumes the coroutine, and
                // the values it owns stay allocated (leaked) with every pointer into its
                // stack.
                unsafe { co.force_reset() };
            }
            self.stacks.push(co.into_stack());
        }
        self.bounds.clear();
    }
}

fn stuck(st: &ExecState) -> Stop {
    let blocked: Vec<(ThreadId, String)> = (0..st.threads.len())
        .filter(|&t| !st.threads[t].finished)
        .map(|t| (t, st.describe_wait(t)))
        .collect();
    if st
        .threads
        .iter()
        .any(|t| !t.finished && (t.spin.blocked() || t.spin.confirmed()))
    {
        Stop::Livelock { blocked }
    } else {
        Stop::Deadlock {
            blocked,
            cycle: st.wait_cycle(),
        }
    }
}
