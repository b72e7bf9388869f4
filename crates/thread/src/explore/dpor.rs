//! Exhaustive exploration with dynamic partial-order reduction (Flanagan & Godefroid 2005,
//! persistent backtrack sets and sleep sets), by re-execution.
//!
//! Sleep sets: after thread `p` was explored from a state, `p` sleeps in the later branches
//! of that state and their descendants until a step dependent with `p`'s announced
//! operation runs (`dependent_now`: [`Op::dependent`] refined for count drops); a sleeping
//! thread is never chosen. An execution
//! where every enabled thread sleeps is cut (its continuations were all explored) and
//! counted as an execution.
//!
//! Dependency relation: two operations of different threads are dependent iff they touch a
//! common object and at least one of them may write it. Atomic loads and failed
//! `compare_exchange`/`try_lock` are reads; `Arc` clones and drops are commuting updates
//! of the count (independent of each other, dependent with reads and writes of it), except
//! the drop that frees the value (executed: recorded as `1 -> 0`; announced: unless the
//! count is at least 2 now), which is a write (sleep sets use the same refined relation); every other atomic operation is a write, and
//! every operation on a lock, condvar, once, channel or park token is a
//! write of that object (conservative: more dependencies only mean more exploration). An
//! announced (not yet executed) read-modify-write always counts as a write. Spawn orders the
//! parent before the child and join orders the child's last step before the joiner
//! (happens-before, tracked with vector clocks); `Start`, `Spawn`, `Join` and `yield_now`
//! touch no object. At every state the announced operation of every unfinished thread
//! (enabled or blocked) is checked for a race with the latest dependent step that does not
//! happen before it, and the backtrack set there is extended as in the paper, so each
//! Mazurkiewicz trace of a terminating program is explored at least once.
//!
//! Bounded DPOR ([`Dpor::bounded`], bounded partial-order reduction after Coons, Musuvathi
//! and McKinley, OOPSLA 2013): every node records the preemptions of the schedule before
//! it, and a backtrack choice that would exceed the bound is dropped. Dropping it alone
//! loses behaviours the bounded mode reaches: a race whose reversal at its own node costs
//! a preemption may be reversible for free earlier, where the schedule switched threads
//! anyway. So every reversal is also scheduled at the latest node before the race where
//! the chosen thread changed (running the racing thread there costs no more than that
//! switch did). Preemptions are counted as in the bounded mode (a switch away from a
//! thread at a yield point, blocked or finished is free). Two reductions of unbounded DPOR
//! are left out, since each relies on a reordering the bound may forbid: sleep sets (a
//! sleeping thread's continuations were explored from an earlier branch, possibly cut by
//! the bound there) and, unless asked for (`Mode::BoundedDpor::weak_reduction`), the
//! weak-memory choice restriction of [`Dpor::choose_stale`] (reading past a store stands
//! for running the load before it); every read and modification-order choice is explored,
//! as in the bounded mode. Without the compensating backtrack points, or with sleep sets,
//! `tests/weak_dpor.rs` and `tests/modes.rs` find outcomes the bounded mode reaches and
//! this search misses, at bound 0 already.

use super::strategy::{
    check_replay, check_replay_end, is_preemption, ReadChoice, Recorded, Strategy,
};
use crate::rt::{
    Access, AtomicKind, Event, ExecState, ObjId, ObjState, Op, Scheduler, Stop, ThreadId, Value,
    MAX_THREADS,
};

type Clock = [u32; MAX_THREADS];

struct Node {
    enabled: u64,
    /// Threads asleep at this state.
    sleep: u64,
    backtrack: u64,
    done: u64,
    chosen: ThreadId,
    /// Which store the chosen thread's step reads (weak memory); every read choice is
    /// explored before another thread.
    read: ReadChoice,
    /// Steps each thread had taken before this node.
    counts: Clock,
    recorded: Recorded,
    /// Preemptions in the schedule before this node's choice (bounded DPOR).
    preemptions: u32,
    /// Enabled threads whose choice here is a preemption.
    preempting: u64,
    /// The latest node at or before this one whose chosen thread differs from its
    /// parent's (0 if none): where the schedule switched threads anyway.
    last_switch: usize,
}

impl Node {
    /// Preemptions in the schedule up to and including this node's choice of `t`.
    fn preemptions_with(&self, t: ThreadId) -> u32 {
        self.preemptions + (self.preempting >> t & 1) as u32
    }
}

#[derive(Default, Clone)]
struct ObjClocks {
    /// Indices of steps accessing the object, with the access kind.
    accesses: Vec<(usize, Access)>,
    last_write: Option<usize>,
    /// Reads and commuting updates since the last write, with their access kind.
    since_write: Vec<(usize, Access)>,
}

/// The DPOR strategy.
pub struct Dpor {
    /// The preemption bound of bounded DPOR (`None`: unbounded).
    bound: Option<u32>,
    /// Whether weak-memory choices are restricted to those passing over stores that
    /// happen before the step (always when unbounded; see [`Dpor::choose_stale`]).
    reduce_choices: bool,
    nodes: Vec<Node>,
    started: bool,
    replayed: usize,
    recorded: Vec<Recorded>,
    // Happens-before state of the current execution, rebuilt on every run.
    processed: usize,
    thread_clocks: Vec<Clock>,
    event_clocks: Vec<Clock>,
    objects: Vec<ObjClocks>,
}

impl Default for Dpor {
    fn default() -> Self {
        Self::new()
    }
}

/// How executed step `e` accessed `obj`: failed attempts only read; the count drop that
/// freed the value writes.
fn access_of(e: &Event, obj: ObjId) -> Access {
    let declared =
        e.op.accesses()
            .iter()
            .flatten()
            .find(|(o, _)| *o == obj)
            .map_or(Access::Read, |(_, a)| *a);
    match e.value {
        Value::Failed(_) | Value::Busy => Access::Read,
        Value::Update(_, 0) if declared == Access::Commute => Access::Write,
        _ => declared,
    }
}

/// How an announced operation will access `obj`: a count drop writes unless the count is
/// known to be at least 2 now (it will not free the value, and a drop executed just before
/// it, from a count of at least 3, did not either).
fn announced_access(st: &ExecState, op: &Op, obj: ObjId, declared: Access) -> Access {
    match (op, &st.objects[obj].state) {
        (Op::Atomic(_, AtomicKind::Count("drop")), ObjState::RefCount(n)) if *n >= 2 => {
            Access::Commute
        }
        (Op::Atomic(_, AtomicKind::Count("drop")), _) => Access::Write,
        _ => declared,
    }
}

/// Whether announced operation `op` and executed step `ran` (of another thread) may fail
/// to commute in the current state: [`Op::dependent`] with the accesses refined by
/// [`access_of`] and [`announced_access`].
fn dependent_now(st: &ExecState, op: &Op, ran: &Event) -> bool {
    op.accesses().iter().flatten().any(|&(o, declared)| {
        let a = announced_access(st, op, o, declared);
        ran.op
            .accesses()
            .iter()
            .flatten()
            .any(|&(p, _)| o == p && a.conflicts(access_of(ran, p)))
    })
}

/// The `last_switch` of the last node of `nodes`, given its parent's.
fn last_switch(nodes: &[Node]) -> usize {
    match nodes {
        [.., parent, node] if parent.chosen == node.chosen => parent.last_switch,
        [] | [_] => 0,
        _ => nodes.len() - 1,
    }
}

fn join(a: &mut Clock, b: &Clock) {
    for (x, y) in a.iter_mut().zip(b.iter()) {
        *x = (*x).max(*y);
    }
}

impl Dpor {
    /// A DPOR exploration from scratch.
    pub fn new() -> Self {
        Dpor {
            bound: None,
            reduce_choices: true,
            nodes: Vec::new(),
            started: false,
            replayed: 0,
            recorded: Vec::new(),
            processed: 0,
            thread_clocks: Vec::new(),
            event_clocks: Vec::new(),
            objects: Vec::new(),
        }
    }

    /// Bounded DPOR: only schedules with at most `bound` preemptions (see the module docs),
    /// with the weak-memory choices restricted as unbounded DPOR does if `reduce_choices`.
    pub fn bounded(bound: u32, reduce_choices: bool) -> Self {
        Dpor {
            bound: Some(bound),
            reduce_choices,
            ..Self::new()
        }
    }

    /// Whether choosing `t` at `node` keeps the schedule within the preemption bound.
    fn within_bound(&self, node: &Node, t: ThreadId) -> bool {
        self.bound.is_none_or(|b| node.preemptions_with(t) <= b)
    }

    fn reset_clocks(&mut self) {
        self.processed = 0;
        self.thread_clocks.clear();
        self.event_clocks.clear();
        self.objects.clear();
    }

    /// Updates vector clocks with the steps executed since the last call.
    fn process(&mut self, st: &ExecState) {
        while self.thread_clocks.len() < st.threads.len() {
            self.thread_clocks.push([0; MAX_THREADS]);
        }
        if self.objects.len() < st.objects.len() {
            self.objects.resize(st.objects.len(), ObjClocks::default());
        }
        while self.processed < st.trace.len() {
            let j = self.processed;
            let e = st.trace[j];
            let t = e.thread;
            let mut c = self.thread_clocks[t];
            c[t] += 1;
            if let Op::Join(target) = e.op {
                let other = self.thread_clocks[target];
                join(&mut c, &other);
            }
            for (obj, _) in e.op.accesses().iter().flatten() {
                let o = &self.objects[*obj];
                if let Some(w) = o.last_write {
                    join(&mut c, &self.event_clocks[w]);
                }
                let a = access_of(&e, *obj);
                for &(r, b) in &o.since_write {
                    if a.conflicts(b) {
                        join(&mut c, &self.event_clocks[r]);
                    }
                }
            }
            for (obj, _) in e.op.accesses().iter().flatten() {
                let a = access_of(&e, *obj);
                let o = &mut self.objects[*obj];
                o.accesses.push((j, a));
                if a == Access::Write {
                    o.last_write = Some(j);
                    o.since_write.clear();
                } else {
                    o.since_write.push((j, a));
                }
            }
            self.thread_clocks[t] = c;
            self.event_clocks.push(c);
            if let Op::Spawn(child) = e.op {
                while self.thread_clocks.len() <= child {
                    self.thread_clocks.push([0; MAX_THREADS]);
                }
                self.thread_clocks[child] = c;
                self.thread_clocks[child][child] = 0;
            }
            self.processed += 1;
        }
    }

    fn happens_before(&self, i: usize, thread_of_i: ThreadId, p: ThreadId) -> bool {
        self.event_clocks[i][thread_of_i] <= self.thread_clocks[p][thread_of_i]
    }

    /// Race detection for the announced operations of all unfinished threads.
    fn analyse(&mut self, st: &ExecState) {
        for p in 0..st.threads.len() {
            let Some((op, _)) = st.threads[p].pending else {
                continue;
            };
            for (obj, declared) in op.accesses().iter().flatten() {
                let Some(len) = self.objects.get(*obj).map(|o| o.accesses.len()) else {
                    continue;
                };
                let acc = announced_access(st, &op, *obj, *declared);
                // A freeing drop conflicts only in the order it has now: moved before another
                // drop it would commute, hiding older races, so it races with all of them.
                let every = *declared == Access::Commute && acc == Access::Write;
                for k in (0..len).rev() {
                    let (i, a) = self.objects[*obj].accesses[k];
                    let ti = st.trace[i].thread;
                    if ti == p || !a.conflicts(acc) {
                        continue;
                    }
                    if self.happens_before(i, ti, p) {
                        if a == Access::Write {
                            break;
                        }
                        continue;
                    }
                    self.add_backtrack(i, p);
                    if !every {
                        break;
                    }
                }
            }
        }
    }

    /// The sleep set of the new state at `depth`: the threads asleep at or already explored
    /// from the previous state whose announced operation is independent of the step taken.
    fn sleep_set(&self, st: &ExecState, depth: usize) -> u64 {
        let Some(parent) = depth.checked_sub(1).and_then(|d| self.nodes.get(d)) else {
            return 0;
        };
        let ran = st.trace[depth - 1];
        let mut candidates = (parent.sleep | parent.done) & !(1 << parent.chosen);
        let mut sleep = 0;
        while candidates != 0 {
            let t = candidates.trailing_zeros() as usize;
            candidates &= !(1 << t);
            if let Some((op, _)) = st.threads[t].pending {
                if !dependent_now(st, &op, &ran) {
                    sleep |= 1 << t;
                }
            }
        }
        sleep
    }

    /// Schedules the reversal of a race between step `i` and `p`'s announced operation:
    /// `p` at node `i` if it is enabled and awake there, otherwise an awake thread whose
    /// later steps happen before `p`'s operation, otherwise every awake enabled thread (a
    /// sleeping `p` does not make the reversal redundant when what `p` does after `i`
    /// depends on threads that had not run yet). Bounded, a choice over the bound is
    /// dropped, and the same reversal is also scheduled at the latest node before `i` where
    /// the schedule switched threads: running `p` there costs no more preemptions than the
    /// switch already did, so a reversal the bound forbids at `i` is still tried.
    fn add_backtrack(&mut self, i: usize, p: ThreadId) {
        self.backtrack_at(i, p);
        if self.bound.is_some() && i > 0 {
            let j = self.nodes.get(i - 1).map_or(0, |n| n.last_switch);
            self.backtrack_at(j, p);
        }
    }

    fn backtrack_at(&mut self, i: usize, p: ThreadId) {
        let cp = self.thread_clocks[p];
        let Some(node) = self.nodes.get(i) else {
            return;
        };
        let mut fits = 0u64;
        for t in 0..MAX_THREADS {
            if self.within_bound(node, t) {
                fits |= 1 << t;
            }
        }
        let node = &mut self.nodes[i];
        let awake = node.enabled & !node.sleep & fits;
        if awake & (1 << p) != 0 {
            node.backtrack |= 1 << p;
            return;
        }
        let mut e = 0u64;
        for (q, (known, before)) in cp.iter().zip(node.counts.iter()).enumerate() {
            if awake & (1 << q) != 0 && known > before {
                e |= 1 << q;
            }
        }
        if e == 0 {
            node.backtrack |= awake;
        } else if e & node.backtrack == 0 {
            node.backtrack |= 1 << e.trailing_zeros();
        }
    }
}

impl Strategy for Dpor {
    fn next_execution(&mut self) -> bool {
        self.reset_clocks();
        if !self.started {
            self.started = true;
            return true;
        }
        while let Some(node) = self.nodes.last_mut() {
            if node.read.advance() {
                node.recorded.event = None;
                self.replayed = self.nodes.len() - 1;
                self.recorded.truncate(self.replayed);
                return true;
            }
            let todo = node.backtrack & !node.done & !node.sleep;
            if todo != 0 {
                let t = todo.trailing_zeros() as usize;
                node.chosen = t;
                node.read = ReadChoice::default();
                node.done |= 1 << t;
                node.recorded.event = None;
                let last = last_switch(&self.nodes);
                self.nodes.last_mut().expect("non-empty").last_switch = last;
                self.replayed = self.nodes.len() - 1;
                self.recorded.truncate(self.replayed);
                return true;
            }
            self.nodes.pop();
        }
        false
    }

    fn finish_execution(&mut self, st: &ExecState) -> Option<Stop> {
        self.process(st);
        self.analyse(st);
        for (node, e) in self.nodes.iter_mut().zip(st.trace.iter()) {
            node.recorded.event = Some(*e);
        }
        self.recorded = self.nodes.iter().map(|n| n.recorded).collect();
        check_replay_end(st, self.replayed.min(self.nodes.len()))
    }
}

impl Scheduler for Dpor {
    fn choose(&mut self, st: &ExecState, enabled: u64) -> Result<ThreadId, Stop> {
        let depth = st.trace.len();
        if depth <= self.replayed {
            check_replay(st, enabled, &self.recorded)?;
        }
        self.process(st);
        if depth < self.nodes.len() {
            self.analyse(st);
            let chosen = self.nodes[depth].chosen;
            if enabled & (1 << chosen) == 0 {
                return Err(Stop::NonDeterminism {
                    step: depth,
                    first: format!("thread {chosen} could run"),
                    second: format!("thread {chosen} is not enabled"),
                });
            }
            return Ok(chosen);
        }
        // Sleep sets assume an explored branch covers its reorderings, which a bound can cut.
        let sleep = if self.bound.is_some() {
            0
        } else {
            self.sleep_set(st, depth)
        };
        let awake = enabled & !sleep;
        if awake == 0 {
            self.analyse(st);
            return Err(Stop::Redundant);
        }
        let current = st.active;
        let chosen = if awake & (1 << current) != 0 {
            current
        } else {
            awake.trailing_zeros() as usize
        };
        let mut counts = [0; MAX_THREADS];
        for (q, c) in self.thread_clocks.iter().enumerate() {
            counts[q] = c[q];
        }
        let mut preempting = 0u64;
        for t in 0..MAX_THREADS {
            if enabled & (1 << t) != 0 && is_preemption(st, enabled, current, t) {
                preempting |= 1 << t;
            }
        }
        let preemptions = self
            .nodes
            .last()
            .map_or(0, |n| n.preemptions_with(n.chosen));
        self.nodes.push(Node {
            enabled,
            sleep,
            backtrack: 1 << chosen,
            done: 1 << chosen,
            chosen,
            read: ReadChoice::default(),
            counts,
            recorded: Recorded {
                enabled,
                event: None,
            },
            preemptions,
            preempting,
            last_switch: 0,
        });
        let last = last_switch(&self.nodes);
        self.nodes.last_mut().expect("just pushed").last_switch = last;
        self.analyse(st);
        Ok(chosen)
    }

    /// Unbounded, only the choices whose passed-over stores all happen before the chosen
    /// thread's step ([`ExecState::choices_passing_over`]). Reading a store older than one
    /// that does not (or going before it in modification order) gives an execution DPOR
    /// also reaches with the step moved before that store, since a load and a store of one
    /// atomic are dependent: that order is explored as a race reversal, so the choice
    /// here would repeat it. Bounded, every choice unless asked otherwise: the reversal
    /// may exceed the bound.
    fn choose_stale(&mut self, st: &ExecState, options: u32) -> Result<u32, Stop> {
        let depth = st.trace.len();
        let Some(t) = self.nodes.get(depth).map(|n| n.chosen) else {
            return Ok(0);
        };
        if !self.reduce_choices {
            return self.nodes[depth].read.choose(depth, options);
        }
        let usable = st.choices_passing_over(t, options, |i| {
            i < self.event_clocks.len() && self.happens_before(i, st.trace[i].thread, t)
        });
        self.nodes[depth].read.choose(depth, usable)
    }
}
