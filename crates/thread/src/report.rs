//! Failure reports: what went wrong, the schedule and seed that replay it, and the
//! interleaving as a table with one column per thread (Lincheck style).

use crate::rt::{AtomicKind, Event, ExecState, Op, Stop, SwitchReason, ThreadId, Value};
use crate::schedule::Schedule;
use std::fmt;

/// One row of an interleaving: a step (or a label) in the column of its thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceRow {
    /// The thread's column.
    pub thread: ThreadId,
    /// The text of the cell.
    pub text: String,
}

/// A failed check.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What went wrong.
    pub stop: Stop,
    /// The schedule of the failing execution; replays it with `Checker::replay`.
    pub schedule: Schedule,
    /// The seed of the failing execution (randomized modes).
    pub seed: Option<u64>,
    /// Executions run until the failure, including the failing one.
    pub executions: u64,
    /// The exploration mode, as text.
    pub mode: String,
    /// Number of threads in the failing execution.
    pub threads: usize,
    /// The interleaving.
    pub rows: Vec<TraceRow>,
    /// Extra text shown before the interleaving (e.g. a scenario results table).
    pub preamble: Option<String>,
}

impl Failure {
    /// Builds a failure from the state the failing execution left.
    pub(crate) fn new(
        stop: Stop,
        st: &ExecState,
        executions: u64,
        mode: String,
        seed: Option<u64>,
    ) -> Self {
        Failure {
            stop,
            schedule: Schedule::of(&st.trace),
            seed,
            executions,
            mode,
            threads: st.threads.len(),
            rows: trace_rows(st),
            preamble: None,
        }
    }

    /// The one-line headline, e.g. `deadlock`.
    pub fn headline(&self) -> String {
        stop_headline(&self.stop)
    }
}

/// The one-line description of why an execution stopped, e.g. `deadlock: ...`.
pub fn stop_headline(stop: &Stop) -> String {
    match stop {
        Stop::Panic { thread, message } => format!("thread {thread} panicked: {message}"),
        Stop::Deadlock { .. } => "deadlock: every thread is blocked".to_string(),
        Stop::Livelock { .. } => "livelock: no thread can make progress".to_string(),
        Stop::StepLimit(n) => format!("an execution exceeded {n} steps (unbounded loop or livelock?)"),
        Stop::Schedule(why) => format!("the schedule cannot be replayed: {why}"),
        Stop::NonDeterminism { step, .. } => {
            format!("non-determinism found at step {step}: the same schedule took a different branch")
        }
        Stop::Stalled { thread, timeout } => format!(
            "thread {thread} ran for {timeout:?} without reaching a switch point: it is blocked or spinning \
             outside the checker (a std::sync primitive, a std atomic, sleep or I/O inside checked code?); \
             use the cmc_thread::shim types"
        ),
        Stop::DataRace { object, .. } => format!("data race on {object}"),
        Stop::UseAfterFree { object, .. } => format!("use after free: {object}"),
        Stop::Leak { allocations } => format!(
            "memory leak: {} Arc allocation(s) made in the execution outlived it",
            allocations.len()
        ),
        Stop::Uncontrolled(message) => message.clone(),
        Stop::OutOfMemory => "could not allocate a coroutine stack".to_string(),
        Stop::Redundant => "an execution was cut as redundant (a bug in cmc-thread; please report it)".to_string(),
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "cmc: {}", self.headline())?;
        match &self.stop {
            Stop::Deadlock { blocked, cycle } => {
                if let Some(cycle) = cycle {
                    let names: Vec<String> = cycle
                        .iter()
                        .chain(cycle.first())
                        .map(|t| format!("thread {t}"))
                        .collect();
                    writeln!(f, "  lock-wait cycle: {}", names.join(" -> "))?;
                }
                for (t, why) in blocked {
                    writeln!(f, "  thread {t} waits: {why}")?;
                }
            }
            Stop::DataRace { first, second, .. } => {
                writeln!(f, "  {first}")?;
                writeln!(f, "  {second}, with no happens-before between the two")?;
            }
            Stop::UseAfterFree { freed, used, .. } => {
                writeln!(f, "  {freed}")?;
                writeln!(f, "  {used}")?;
            }
            Stop::Leak { allocations } => {
                for a in allocations {
                    writeln!(f, "  {a}")?;
                }
            }
            Stop::Livelock { blocked } => {
                for (t, why) in blocked {
                    writeln!(f, "  thread {t}: {why}")?;
                }
            }
            Stop::NonDeterminism { first, second, .. } => {
                writeln!(f, "  Probably caused by code the checker does not control (a std atomic or static, time,")?;
                writeln!(
                    f,
                    "  randomness, thread-locals, HashMap iteration order, I/O)."
                )?;
                writeln!(f, "  first run:  {first}")?;
                writeln!(f, "  second run: {second}")?;
            }
            _ => {}
        }
        if let Some(p) = &self.preamble {
            writeln!(f)?;
            f.write_str(p)?;
        }
        if !self.rows.is_empty() {
            writeln!(f)?;
            writeln!(f, "= The following interleaving leads to the error =")?;
            f.write_str(&render_columns(&self.rows, self.threads))?;
        }
        writeln!(f, "schedule: {}", self.schedule)?;
        if let Some(seed) = self.seed {
            writeln!(f, "seed: {seed}")?;
        }
        writeln!(
            f,
            "found after {} executions ({}); replay with Checker::new().replay(\"{}\")",
            self.executions, self.mode, self.schedule
        )
    }
}

/// Short `file:line` of a location.
fn short_location(l: &std::panic::Location<'_>) -> String {
    let file = l.file().rsplit('/').next().unwrap_or(l.file());
    format!("{file}:{}", l.line())
}

/// Describes one event for a table cell, e.g. `fetch_add(AtomicUsize#1): 0 -> 1 at lib.rs:9`.
pub fn describe_op(st: &ExecState, e: &Event) -> String {
    let target = match e.op {
        Op::Spawn(t) => format!("spawn(thread {t})"),
        Op::Join(t) => format!("join(thread {t})"),
        op => match op.object() {
            Some(o) if o < st.objects.len() => format!("{}({})", op.name(), st.object_name(o)),
            _ => op.name().to_string(),
        },
    };
    let value = match (e.op.atomic(), e.value) {
        (_, Value::None) => String::new(),
        (Some((_, AtomicKind::Store)), v) if e.stale > 0 => format!(
            " <- {v} (placed {} slot(s) before the end of the modification order)",
            e.stale
        ),
        (Some((_, AtomicKind::Store)), v) => format!(" <- {v}"),
        (_, v) if e.stale > 0 => format!(": {v} (stale: {} newer store(s) not seen)", e.stale),
        (_, v) => format!(": {v}"),
    };
    match e.op {
        // A destructor has no caller location; the one recorded is inside cmc.
        Op::Atomic(_, AtomicKind::Count("drop")) => format!("{target}{value}"),
        _ => format!("{target}{value} at {}", short_location(e.location)),
    }
}

/// Describes one event with its thread, for messages.
pub fn describe_event(st: &ExecState, e: &Event) -> String {
    format!("thread {} {}", e.thread, describe_op(st, e))
}

pub(crate) fn trace_rows(st: &ExecState) -> Vec<TraceRow> {
    let mut rows = Vec::new();
    let mut notes = st.annotations.iter().peekable();
    let mut switches = st.switches.iter().peekable();
    for (i, e) in st.trace.iter().enumerate() {
        while let Some((_, t, text)) = notes.next_if(|(step, _, _)| *step <= i) {
            rows.push(TraceRow {
                thread: *t,
                text: text.clone(),
            });
        }
        while let Some(s) = switches.next_if(|s| s.step <= i) {
            rows.push(TraceRow {
                thread: s.thread,
                text: format!("switch (reason: {})", describe_switch(st, s.reason)),
            });
        }
        if e.op != Op::Start {
            rows.push(TraceRow {
                thread: e.thread,
                text: format!("  {}", describe_op(st, e)),
            });
        }
    }
    for (_, t, text) in notes {
        rows.push(TraceRow {
            thread: *t,
            text: text.clone(),
        });
    }
    rows
}

/// Why a thread was switched away from, e.g. `waiting for thread 1 to finish`.
fn describe_switch(st: &ExecState, reason: SwitchReason) -> String {
    let name = |o: usize| {
        if o < st.objects.len() {
            st.object_name(o)
        } else {
            format!("object #{o}")
        }
    };
    let held = |holder: Option<ThreadId>, verb: &str| match holder {
        Some(t) => format!(" {verb} thread {t}"),
        None => String::new(),
    };
    match reason {
        SwitchReason::Preempted => "preempted".to_string(),
        SwitchReason::Yielded(op) => op.name().to_string(),
        SwitchReason::Spinning(o) => {
            format!("spinning on {} until another thread writes it", name(o))
        }
        SwitchReason::Blocked { op, holder } => match op {
            Op::Join(t) => format!("waiting for thread {t} to finish"),
            Op::Lock(o) | Op::ReadLock(o) => {
                format!("waiting for {}{}", name(o), held(holder, "held by"))
            }
            Op::OnceEnter(o) => {
                format!(
                    "waiting for {}{}",
                    name(o),
                    held(holder, "being initialised by")
                )
            }
            Op::CondWake(o, _) => format!("waiting for a notify on {}", name(o)),
            Op::Send(o) => format!("waiting for room on {}", name(o)),
            Op::Recv(o) => format!("waiting for a message on {}", name(o)),
            Op::Park(_) => "waiting for an unpark".to_string(),
            Op::SendDone(o, _) => format!(
                "waiting for the receiver to take its message on {}",
                name(o)
            ),
            Op::BarrierLeave(o, _) => format!("waiting for the other threads at {}", name(o)),
            op => format!("waiting to {}", op.name()),
        },
    }
}

const CELL_MAX: usize = 64;

/// Renders rows as a table with one column per thread.
pub fn render_columns(rows: &[TraceRow], threads: usize) -> String {
    let threads = threads.max(rows.iter().map(|r| r.thread + 1).max().unwrap_or(0));
    let header: Vec<String> = (0..threads).map(|t| format!("Thread {t}")).collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = vec![String::new(); threads];
            cells[r.thread] = r.text.clone();
            cells
        })
        .collect();
    render_table(&header, &cells)
}

/// Renders a table with the given header and rows (each row has one cell per header column,
/// missing cells are empty); cells longer than 64 characters are cut.
pub fn render_table(header: &[String], rows: &[Vec<String>]) -> String {
    let cut = |c: &String| c.chars().take(CELL_MAX).collect::<String>();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(cut(c).chars().count());
        }
    }
    let total: usize = width.iter().map(|w| w + 3).sum::<usize>() + 1;
    let line = format!("|{}|\n", "-".repeat(total.saturating_sub(2)));
    let mut out = String::new();
    out.push_str(&line);
    out.push_str(&row_text(header, &width));
    out.push_str(&line);
    for r in rows {
        let cells: Vec<String> = (0..width.len())
            .map(|i| r.get(i).map(cut).unwrap_or_default())
            .collect();
        out.push_str(&row_text(&cells, &width));
    }
    out.push_str(&line);
    out
}

fn row_text(cells: &[String], width: &[usize]) -> String {
    let mut s = String::from("|");
    for (c, w) in cells.iter().zip(width) {
        let pad = w.saturating_sub(c.chars().count());
        s.push_str(&format!(" {c}{} |", " ".repeat(pad)));
    }
    s.push('\n');
    s
}
