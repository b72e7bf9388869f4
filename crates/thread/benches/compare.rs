//! cmc vs loom vs shuttle on the same programs. Run with
//! `cargo bench -p cmc-thread --bench compare [-- FILTER...]`; prints one markdown table.
//!
//! Every (program, tool) case runs in a child process (this binary re-executed with
//! `--case PROGRAM TOOL`), so a tool that aborts the process (loom's deadlock report is a
//! non-unwinding panic) or hangs is reported as such in its row instead of ending the run.

use std::io::Read;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::time::{Duration, Instant};

#[path = "../tests/targets/mod.rs"]
mod targets;

#[macro_use]
#[path = "../tests/structures/mod.rs"]
mod structures;

static RUNS: AtomicU64 = AtomicU64::new(0);

/// Counts one execution of a loom or shuttle run.
fn count_run() {
    RUNS.fetch_add(1, StdOrdering::Relaxed);
}

structures!(set_cmc, cmc_thread, super::count_run);
structures!(set_loom, loom, super::count_run);

/// The benchmark programs, written once against `$k::{thread, sync}`.
macro_rules! programs {
    ($m:ident, $k:ident) => {
        mod $m {
            use super::RUNS;
            use $k::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::SeqCst};
            use $k::sync::{Arc, Mutex};
            use $k::thread;

            fn count() {
                RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }

            pub fn lost_update() {
                count();
                let n = Arc::new(AtomicUsize::new(0));
                let hs: Vec<_> = (0..2)
                    .map(|_| {
                        let n = n.clone();
                        thread::spawn(move || {
                            let v = n.load(SeqCst);
                            n.store(v + 1, SeqCst);
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
                assert_eq!(n.load(SeqCst), 2, "lost update");
            }

            /// Index-based Treiber stack; `pop` reads head and next then stores (no CAS).
            pub fn treiber_racy_pop() {
                count();
                // Nodes 1 and 2 (0 = null); stack: head -> 2 -> 1.
                let next = Arc::new([
                    AtomicUsize::new(0),
                    AtomicUsize::new(0),
                    AtomicUsize::new(1),
                ]);
                let head = Arc::new(AtomicUsize::new(2));
                let pop = |head: &AtomicUsize, next: &[AtomicUsize; 3]| {
                    let h = head.load(SeqCst);
                    if h == 0 {
                        return 0;
                    }
                    let n = next[h].load(SeqCst);
                    head.store(n, SeqCst);
                    h
                };
                let (h2, n2) = (head.clone(), next.clone());
                let t = thread::spawn(move || pop(&h2, &n2));
                let a = pop(&head, &next);
                let b = t.join().unwrap();
                assert!(a != b || a == 0, "node {a} popped twice");
            }

            /// Writer stores 1 then 2; the reader fails if it sees 0 then 1 (needs 2 preemptions).
            pub fn two_preemptions() {
                count();
                let x = Arc::new(AtomicUsize::new(0));
                let (xw, xr) = (x.clone(), x.clone());
                let w = thread::spawn(move || {
                    xw.store(1, SeqCst);
                    xw.store(2, SeqCst);
                });
                let r = thread::spawn(move || {
                    let a = xr.load(SeqCst);
                    let b = xr.load(SeqCst);
                    assert!(!(a == 0 && b == 1), "reader saw 0 then 1");
                });
                w.join().unwrap();
                r.join().unwrap();
            }

            pub fn abba_deadlock() {
                count();
                let a = Arc::new(Mutex::new(0));
                let b = Arc::new(Mutex::new(0));
                let (a2, b2) = (a.clone(), b.clone());
                let t = thread::spawn(move || {
                    let _y = b2.lock().unwrap();
                    let _x = a2.lock().unwrap();
                });
                {
                    let _x = a.lock().unwrap();
                    let _y = b.lock().unwrap();
                }
                t.join().unwrap();
            }

            /// A queue whose size counter is updated after the lock is released: `size()` can
            /// be observed negative after a pop that succeeded (not linearizable).
            pub fn queue_size() {
                count();
                let q = Arc::new((Mutex::new(Vec::new()), AtomicIsize::new(0)));
                let q2 = q.clone();
                let t = thread::spawn(move || {
                    q2.0.lock().unwrap().push(1);
                    q2.1.fetch_add(1, SeqCst);
                });
                let popped = q.0.lock().unwrap().pop();
                if popped.is_some() {
                    q.1.fetch_sub(1, SeqCst);
                    assert!(q.1.load(SeqCst) >= 0, "size() returned a negative size");
                }
                t.join().unwrap();
            }

            /// PCT depth 1: use before initialisation (the initialising thread is slow).
            pub fn pct_depth1() {
                count();
                let ready = Arc::new(AtomicUsize::new(0));
                let r2 = ready.clone();
                let t = thread::spawn(move || {
                    for _ in 0..3 {
                        r2.load(SeqCst);
                    }
                    r2.store(1, SeqCst);
                });
                let seen = ready.load(SeqCst);
                t.join().unwrap();
                assert_eq!(seen, 1, "used before initialisation");
            }

            /// PCT depth 2: T2 must read y before T1 writes it, and x after T1 writes it.
            pub fn pct_depth2() {
                count();
                let x = Arc::new(AtomicUsize::new(0));
                let y = Arc::new(AtomicUsize::new(0));
                let (x1, y1, x2, y2) = (x.clone(), y.clone(), x.clone(), y.clone());
                let t1 = thread::spawn(move || {
                    for _ in 0..3 {
                        x1.load(SeqCst);
                    }
                    x1.store(1, SeqCst);
                    for _ in 0..3 {
                        x1.load(SeqCst);
                    }
                    y1.store(1, SeqCst);
                });
                let t2 = thread::spawn(move || {
                    let b = y2.load(SeqCst);
                    for _ in 0..3 {
                        y2.load(SeqCst);
                    }
                    let a = x2.load(SeqCst);
                    assert!(!(b == 0 && a == 1), "ordering bug: x written, y not yet");
                });
                t1.join().unwrap();
                t2.join().unwrap();
            }

            fn workers(threads: usize, ops: usize, rmw: bool) {
                count();
                let n = Arc::new(AtomicUsize::new(0));
                let hs: Vec<_> = (0..threads)
                    .map(|i| {
                        let n = n.clone();
                        thread::spawn(move || {
                            for _ in 0..ops {
                                if rmw {
                                    n.fetch_add(1, SeqCst);
                                } else {
                                    n.store(i, SeqCst);
                                    n.load(SeqCst);
                                }
                            }
                        })
                    })
                    .collect();
                for h in hs {
                    h.join().unwrap();
                }
            }

            /// A correct single-producer single-consumer ring of `N` slots (atomic slots,
            /// release/acquire indices): `values` pass through it; both sides yield while
            /// it is full / empty.
            fn spsc_ring<const N: usize>(values: usize) {
                use $k::sync::atomic::Ordering::{Acquire, Relaxed, Release};
                count();
                let slots: Arc<[AtomicUsize; N]> =
                    Arc::new(std::array::from_fn(|_| AtomicUsize::new(0)));
                let (head, tail) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
                let producer = {
                    let (slots, head, tail) = (slots.clone(), head.clone(), tail.clone());
                    thread::spawn(move || {
                        for v in 1..=values {
                            let t = tail.load(Relaxed);
                            while t - head.load(Acquire) == N {
                                thread::yield_now();
                            }
                            slots[t % N].store(v, Relaxed);
                            tail.store(t + 1, Release);
                        }
                    })
                };
                for v in 1..=values {
                    let h = head.load(Relaxed);
                    while tail.load(Acquire) == h {
                        thread::yield_now();
                    }
                    assert_eq!(slots[h % N].load(Relaxed), v, "ring lost a value");
                    head.store(h + 1, Release);
                }
                producer.join().unwrap();
            }

            mod seqlock {
                use $k::sync::atomic::fence;
                use $k::sync::atomic::AtomicUsize;
                use $k::sync::atomic::Ordering::{Acquire, Relaxed, Release};
                use $k::sync::Arc;
                use $k::thread;
                include!("../tests/programs/seqlock.rs");
            }

            pub fn seqlock_fenced() {
                count();
                seqlock::seqlock(true)
            }
            pub fn seqlock_unfenced() {
                count();
                seqlock::seqlock(false)
            }
            pub fn spsc_ring_1x2() {
                spsc_ring::<1>(2)
            }
            pub fn spsc_ring_2x3() {
                spsc_ring::<2>(3)
            }
            pub fn add_2x2() {
                workers(2, 2, true)
            }
            pub fn add_2x3() {
                workers(2, 3, true)
            }
            pub fn add_3x2() {
                workers(3, 2, true)
            }
            pub fn store_load_3x2() {
                workers(3, 1, false)
            }
            pub fn add_3x3() {
                workers(3, 3, true)
            }
        }
    };
}

programs!(p_cmc, cmc_thread);
programs!(p_loom, loom);
programs!(p_shuttle, shuttle);

/// A benchmark program in its three versions.
struct Program {
    name: String,
    cmc: fn(),
    loom: fn(),
    /// None for the lock-free structure set (shuttle has no tracked `UnsafeCell`).
    shuttle: Option<fn()>,
    /// Bug programs are run until the bug is found; count programs are explored exhaustively.
    bug: bool,
    /// The same bug as a cmc linearizability check (operations + sequential reference):
    /// `Err(executions)` when found, `Ok(executions)` when not.
    lincheck: Option<fn() -> Result<u64, u64>>,
}

fn lincheck_queue_size() -> Result<u64, u64> {
    match targets::sized_queue().check() {
        Ok(s) => Ok(s.executions),
        Err(f) => {
            eprintln!("--- cmc lincheck report ---\n{f}");
            Err(f.executions)
        }
    }
}

fn lincheck_treiber() -> Result<u64, u64> {
    match targets::treiber().check() {
        Ok(s) => Ok(s.executions),
        Err(f) => {
            eprintln!("--- cmc lincheck report ---\n{f}");
            Err(f.executions)
        }
    }
}

macro_rules! program {
    ($name:expr, $f:ident, $bug:expr) => {
        Program {
            name: $name.to_string(),
            cmc: p_cmc::$f,
            loom: p_loom::$f,
            shuttle: Some(p_shuttle::$f),
            bug: $bug,
            lincheck: None,
        }
    };
}

fn programs() -> Vec<Program> {
    let mut programs = vec![
        program!("lost update counter", lost_update, true),
        Program {
            lincheck: Some(lincheck_treiber),
            ..program!("Treiber stack racy pop", treiber_racy_pop, true)
        },
        program!("writer 1,2 / reader (2 preemptions)", two_preemptions, true),
        program!("ABBA deadlock", abba_deadlock, true),
        Program {
            lincheck: Some(lincheck_queue_size),
            ..program!("queue size() not linearizable", queue_size, true)
        },
        program!("PCT order violation (d=1)", pct_depth1, true),
        program!("PCT ordering bug (d=2)", pct_depth2, true),
        program!("exhaustive 2 x 2 fetch_add", add_2x2, false),
        program!("exhaustive 2 x 3 fetch_add", add_2x3, false),
        program!("exhaustive 3 x 2 fetch_add", add_3x2, false),
        program!("exhaustive 3 x 2 store/load", store_load_3x2, false),
        program!("exhaustive 3 x 3 fetch_add", add_3x3, false),
        program!(
            "seqlock, reader without acquire fence",
            seqlock_unfenced,
            true
        ),
        program!("exhaustive seqlock (correct)", seqlock_fenced, false),
        program!(
            "exhaustive SPSC ring 1 slot x 2 values",
            spsc_ring_1x2,
            false
        ),
        program!(
            "exhaustive SPSC ring 2 slots x 3 values",
            spsc_ring_2x3,
            false
        ),
    ];
    let set = set_cmc::programs().into_iter().zip(set_loom::programs());
    for (cmc, loom) in set {
        let version = |name: String, bug: bool, cmc: fn(), loom: fn()| Program {
            name,
            cmc,
            loom,
            shuttle: None,
            bug,
            lincheck: None,
        };
        let buggy = format!("{}, {}", cmc.structure, cmc.bug);
        programs.push(version(buggy, true, cmc.buggy, loom.buggy));
        let correct = format!("exhaustive {} (correct)", cmc.structure);
        programs.push(version(correct, false, cmc.correct, loom.correct));
    }
    programs
}

/// A tool configuration a program is run under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tool {
    CmcBounded,
    CmcDpor,
    /// DPOR with weak memory off (every access sequentially consistent).
    CmcDporSc,
    CmcPct,
    LoomBounded,
    LoomFull,
    ShuttlePct,
    ShuttleRandom,
    ShuttleDfs,
    CmcLincheck,
}

const BUG_TOOLS: [Tool; 6] = [
    Tool::CmcBounded,
    Tool::CmcDpor,
    Tool::CmcPct,
    Tool::LoomBounded,
    Tool::ShuttlePct,
    Tool::ShuttleRandom,
];
const COUNT_TOOLS: [Tool; 4] = [
    Tool::CmcDpor,
    Tool::CmcDporSc,
    Tool::LoomFull,
    Tool::ShuttleDfs,
];

/// The tools `p` runs under, in table order.
fn tools(p: &Program) -> Vec<Tool> {
    let mut tools = if p.bug {
        BUG_TOOLS.to_vec()
    } else {
        COUNT_TOOLS.to_vec()
    };
    if p.shuttle.is_none() {
        // The lock-free set: loom without a bound too, in place of shuttle.
        tools.retain(|t| !t.is_shuttle());
        if p.bug {
            tools.push(Tool::LoomFull);
        }
    }
    if p.lincheck.is_some() {
        tools.push(Tool::CmcLincheck);
    }
    tools
}

/// Wall-time cap of one loom run (loom's `max_duration`); the child is killed after
/// `CHILD_TIMEOUT` whatever the tool.
const LOOM_LIMIT: Duration = Duration::from_secs(30);
const CHILD_TIMEOUT: Duration = Duration::from_secs(90);
const BUDGET: usize = 100_000;
const SHUTTLE_DFS_CAP: usize = 1_000_000;

impl Tool {
    fn is_shuttle(self) -> bool {
        matches!(
            self,
            Tool::ShuttlePct | Tool::ShuttleRandom | Tool::ShuttleDfs
        )
    }

    fn label(self) -> String {
        match self {
            Tool::CmcBounded | Tool::CmcDpor | Tool::CmcPct => format!("cmc {}", cmc_mode(self)),
            Tool::CmcDporSc => format!("cmc {}, weak_memory(false)", cmc_mode(self)),
            Tool::LoomBounded => "loom (preemption bound 3)".into(),
            Tool::LoomFull => format!("loom (no bound, {} s cap)", LOOM_LIMIT.as_secs()),
            Tool::ShuttlePct => "shuttle check_pct depth 3".into(),
            Tool::ShuttleRandom => "shuttle check_random".into(),
            Tool::ShuttleDfs => format!("shuttle check_dfs (cap {SHUTTLE_DFS_CAP})"),
            Tool::CmcLincheck => "cmc lincheck (generated scenarios, 2 preemptions)".into(),
        }
    }
}

fn cmc_mode(tool: Tool) -> cmc_thread::Mode {
    match tool {
        Tool::CmcBounded => cmc_thread::Mode::Bounded { max_preemptions: 3 },
        Tool::CmcPct => cmc_thread::Mode::Pct { seed: 1, depth: 3 },
        _ => cmc_thread::Mode::Dpor,
    }
}

/// The result of one case, as the child prints it on one stdout line.
struct Outcome {
    found: String,
    schedules: u64,
    seconds: f64,
}

const OUTCOME_TAG: &str = "CASE-OUTCOME";
const PANIC_TAG: &str = "CASE-PANIC";

/// Runs one case in this process (the child side).
fn run_case(p: &Program, tool: Tool) -> Outcome {
    match tool {
        Tool::CmcBounded | Tool::CmcDpor | Tool::CmcPct | Tool::CmcDporSc => run_cmc(p, tool),
        Tool::LoomBounded => run_other(tool, || loom(Some(3), p.loom)),
        Tool::LoomFull => run_other(tool, || loom(None, p.loom)),
        Tool::ShuttlePct | Tool::ShuttleRandom | Tool::ShuttleDfs => {
            let f = p.shuttle.expect("only programs with a shuttle version");
            run_other(tool, || match tool {
                Tool::ShuttlePct => shuttle::check_pct(f, BUDGET, 3),
                Tool::ShuttleRandom => shuttle::check_random(f, BUDGET),
                _ => shuttle::check_dfs(f, Some(SHUTTLE_DFS_CAP)),
            })
        }
        Tool::CmcLincheck => {
            let start = Instant::now();
            let r = p.lincheck.expect("only programs with a lincheck version")();
            let (found, schedules) = match r {
                Err(n) => ("yes (minimised)".to_string(), n),
                Ok(n) => ("no".to_string(), n),
            };
            Outcome {
                found,
                schedules,
                seconds: start.elapsed().as_secs_f64(),
            }
        }
    }
}

fn run_cmc(p: &Program, tool: Tool) -> Outcome {
    let start = Instant::now();
    let r = cmc_thread::Checker::new()
        .mode(cmc_mode(tool))
        .weak_memory(tool != Tool::CmcDporSc)
        .max_executions(BUDGET as u64)
        .max_steps(1000)
        .check(p.cmc);
    let seconds = start.elapsed().as_secs_f64();
    match r {
        Ok(s) => Outcome {
            found: if s.complete {
                "no (complete)"
            } else {
                "no (budget)"
            }
            .into(),
            schedules: s.executions,
            seconds,
        },
        Err(f) => {
            eprintln!("--- cmc report for {} ({}) ---\n{f}", p.name, tool.label());
            Outcome {
                found: "yes".into(),
                schedules: f.executions,
                seconds,
            }
        }
    }
}

fn run_other(tool: Tool, check: impl FnOnce()) -> Outcome {
    RUNS.store(0, StdOrdering::Relaxed);
    let start = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(check));
    let seconds = start.elapsed().as_secs_f64();
    let found = match r {
        Err(_) => "yes".to_string(),
        Ok(()) if tool == Tool::LoomFull && seconds >= LOOM_LIMIT.as_secs_f64() => {
            format!("did not finish in {} s", LOOM_LIMIT.as_secs())
        }
        Ok(()) => "no".to_string(),
    };
    Outcome {
        found,
        schedules: RUNS.load(StdOrdering::Relaxed),
        seconds,
    }
}

fn loom(bound: Option<usize>, f: fn()) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = bound;
    b.max_duration = Some(LOOM_LIMIT);
    b.check(f);
}

/// Child side: runs case `args = [program, tool]` and prints its outcome line. A panic
/// hook prints the first panic with the schedule count so far, in case the tool aborts.
fn child(args: &[String]) {
    let index = |i: usize| args.get(i).and_then(|a| a.parse::<usize>().ok());
    let (Some(p), Some(t)) = (index(0), index(1)) else {
        eprintln!("usage: compare --case PROGRAM TOOL");
        std::process::exit(2);
    };
    let programs = programs();
    let tools = tools(&programs[p]);
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default()
            .replace('\n', " ");
        eprintln!("{PANIC_TAG}\t{}\t{msg}", RUNS.load(StdOrdering::Relaxed));
    }));
    let o = run_case(&programs[p], tools[t]);
    println!("{OUTCOME_TAG}\t{}\t{}\t{}", o.found, o.schedules, o.seconds);
}

/// Parent side: runs case `(p, t)` in a child process and turns a crash or hang into a row.
fn spawn_case(p: usize, t: usize) -> Outcome {
    let start = Instant::now();
    let exe = std::env::current_exe().expect("the bench binary's path");
    let mut c = match Command::new(exe)
        .args(["--case", &p.to_string(), &t.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                found: format!("could not start: {e}"),
                schedules: 0,
                seconds: 0.0,
            }
        }
    };
    let mut out = c.stdout.take().expect("piped stdout");
    let mut err = c.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let status = loop {
        match c.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() < CHILD_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = c.kill();
                let _ = c.wait();
                break None;
            }
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let stdout = out_reader.join().unwrap_or_default();
    let stderr = reader.join().unwrap_or_default();
    for line in stderr.lines().filter(|l| !l.starts_with(PANIC_TAG)) {
        eprintln!("{line}");
    }
    if let Some(o) = parse_outcome(&stdout) {
        return o;
    }
    let panic = stderr.lines().find_map(|l| {
        let mut f = l.strip_prefix(PANIC_TAG)?.trim_start().splitn(2, '\t');
        Some((f.next()?.parse::<u64>().ok()?, f.next()?.to_string()))
    });
    let how = match status {
        None => format!("killed after {} s", CHILD_TIMEOUT.as_secs()),
        Some(s) => crashed(s),
    };
    match panic {
        Some((schedules, msg)) => Outcome {
            found: format!("yes, then {how} ({})", short(&msg)),
            schedules,
            seconds,
        },
        None => Outcome {
            found: how,
            schedules: 0,
            seconds,
        },
    }
}

fn parse_outcome(stdout: &str) -> Option<Outcome> {
    let line = stdout.lines().find(|l| l.starts_with(OUTCOME_TAG))?;
    let f: Vec<&str> = line.split('\t').collect();
    Some(Outcome {
        found: f.get(1)?.to_string(),
        schedules: f.get(2)?.parse().ok()?,
        seconds: f.get(3)?.parse().ok()?,
    })
}

fn crashed(s: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = s.signal() {
            return format!("the process aborted (signal {sig})");
        }
    }
    format!("the process exited with {s}")
}

/// The first 60 characters of a panic message, without table-breaking pipes.
fn short(msg: &str) -> String {
    msg.chars().take(60).collect::<String>().replace('|', "/")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--case") {
        return child(&args[1..]);
    }
    // A program runs when its name contains one of the filters (all run without one).
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    println!("| program | tool | bug found? | schedules | wall s | schedules/s | schedules vs cmc first row |");
    println!("|---|---|---|---:|---:|---:|---:|");
    for (p, program) in programs().iter().enumerate() {
        if !filters.is_empty() && !filters.iter().any(|f| program.name.contains(f.as_str())) {
            continue;
        }
        let mut base = None;
        for (t, tool) in tools(program).iter().enumerate() {
            let o = spawn_case(p, t);
            let base = *base.get_or_insert(o.schedules.max(1));
            println!(
                "| {} | {} | {} | {} | {:.3} | {:.0} | {:.2}x |",
                program.name,
                tool.label(),
                o.found,
                o.schedules,
                o.seconds,
                o.schedules as f64 / o.seconds.max(1e-9),
                o.schedules as f64 / base as f64
            );
        }
    }
}
