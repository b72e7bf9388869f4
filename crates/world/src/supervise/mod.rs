//! Crash, hang and exit containment: the verdict comes only from a process
//! that never runs core code.
//!
//! The supervisor ([`supervise`]) runs the check in a child process, which
//! writes a flight recorder ([`crate::run::recorder`]) before every core call and
//! ends by sending one end-of-run [`Message`] over a private pipe, then
//! exiting at once. The supervisor takes the verdict from that message only:
//! a child that exits without it (whatever its exit code), dies by a signal,
//! or stays inside one core call longer than the timeout (it is then killed)
//! is a core fault, placed by the recorder in a step, in loading or in a
//! description. The child's standard output goes to the supervisor's standard
//! error, so a core's `printf` never mixes with the report.
//!
//! For a fault in a step, a second child, the explainer ([`explain`]), names
//! the step and its event in the cores' own words and finds a path to the
//! step's pre-state with a single-worker search whose only invariant is
//! "this is not the pre-state" (its counterexample is the path): for a fault
//! found by random walks, the same walks again (each is reproducible from
//! the seed and its number, so the walk that faulted reaches the pre-state
//! again, and no search of the whole space is needed); for any other fault,
//! a breadth-first search (a shortest path). The supervisor writes the path
//! as a replay file that ends with the faulting action, so `cmc replay`
//! (under gdb if need be) reproduces the step. The explainer's search stops
//! where the check's `--time-limit` ends (its time is what the check left)
//! and then says so. If the explainer fails too, the fault is still
//! reported, without that file.
//!
//! Every child gets `PR_SET_PDEATHSIG`: it never outlives the supervisor.
//!
//! # Example
//!
//! A program that checks a World of a C core the way `cmc check` does: the
//! same executable is the supervisor and, started again by it, the checking
//! child and the explainer. (It starts processes and loads a compiled
//! library, so it is not run here.)
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//! use std::time::Duration;
//! use cmc_search::{Checker, SearchOptions, Verdict};
//! use cmc_world::supervise::{self, child_from_env, finish, Role, Supervision};
//! use cmc_world::{CCore, World, WorldSpec};
//!
//! fn world() -> World {
//!     let core = CCore::load(Path::new("./libmycore.so")).expect("the core loads");
//!     World::new(WorldSpec::builder(Arc::new(core), 3).requests(2).build().expect("a valid spec"))
//! }
//!
//! match child_from_env().expect("a supervised child is set up") {
//!     // The child: its verdict reaches the supervisor only through `finish`.
//!     Some(Role::Check) => {
//!         let verdict = Checker::new(world()).workers(1).run().verdict;
//!         let code = if verdict == Verdict::Pass { 0 } else { 1 };
//!         finish(code, format!("{verdict:?}\n").as_bytes())
//!     }
//!     Some(Role::Explain) => supervise::explain(&world(), &SearchOptions::default()),
//!     // The supervisor: never runs core code.
//!     None => {
//!         let supervision = Supervision {
//!             call_timeout: Duration::from_secs(10),
//!             threads: 1,
//!             interrupt: None,
//!         };
//!         std::process::exit(supervise::check_supervised(&supervision, Path::new("fault.replay"), None))
//!     }
//! }
//! ```

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use cmc_model::{Encode, Fingerprint, Model, ModelParam, Property, StateView};
use cmc_search::{Checker, ProgressMode, ReplayFile, SearchOptions, Strategy, Verdict};

use crate::core::abi::Event;
use crate::core::fault::{Fault, FaultKind};
/// The supervised child's side: which role this process was started in,
/// and how a checking child hands its verdict to the supervisor.
pub use crate::run::child::{child_from_env, finish, Role};
use crate::run::child::{input_fd, send_and_exit, Message, Nonce, CHILD_ENV};
use crate::run::recorder::{Call, Recorder, SlotRecord, SLOTS_MAX};
use crate::system::action::Action;
use crate::system::state::WorldState;
use crate::World;

/// How a supervised child ended (see also [`supervise`]'s example, and
/// [`Role`]'s for a child that sends its message).
///
/// ```
/// use std::process::Command;
/// use std::time::Duration;
/// use cmc_world::supervise::{supervise, Ended, Supervision};
/// use cmc_world::FaultKind;
///
/// let supervision = Supervision { call_timeout: Duration::from_secs(5), threads: 1, interrupt: None };
/// let mut child = Command::new("sh");
/// child.args(["-c", "kill -9 $$"]);
/// let ended = supervise(child, "check", &supervision, &[])?;
/// assert!(matches!(ended, Ended::Died { kind: FaultKind::Signal(9), slot: None }), "{ended:?}");
/// # Ok::<(), String>(())
/// ```
#[derive(Debug)]
pub enum Ended {
    /// It sent its end-of-run message and exited cleanly.
    Message(Message),
    /// It died, hung or exited without its message: `kind` says how, `slot`
    /// the core call it was inside (`None`: outside any core call).
    Died {
        /// How it ended.
        kind: FaultKind,
        /// Where, from the flight recorder.
        slot: Option<SlotRecord>,
    },
    /// It died, hung or exited without its message, and the flight recorder
    /// that would say where was overwritten (core code wrote into it): the
    /// place is unknown.
    Unplaced {
        /// How it ended.
        kind: FaultKind,
        /// What of the recorder was found overwritten.
        damage: String,
    },
}

/// How a child that ended by `kind` died, with the core call the flight
/// recorder places it in, if the recorder is intact.
fn death(kind: FaultKind, recorder: &Recorder, slot: impl FnOnce() -> Option<SlotRecord>) -> Ended {
    match recorder.check_integrity() {
        Ok(()) => Ended::Died { kind, slot: slot() },
        Err(damage) => Ended::Unplaced { kind, damage },
    }
}

/// How to supervise a child (see also the module's example).
///
/// Once `interrupt` becomes true, the child is sent SIGTERM:
///
/// ```
/// use std::process::Command;
/// use std::sync::atomic::AtomicBool;
/// use std::time::Duration;
/// use cmc_world::supervise::{supervise, Ended, Supervision};
/// use cmc_world::FaultKind;
///
/// let interrupt = AtomicBool::new(true); // e.g. set by a Ctrl-C handler
/// let supervision =
///     Supervision { call_timeout: Duration::from_secs(5), threads: 1, interrupt: Some(&interrupt) };
/// let mut child = Command::new("sleep");
/// child.arg("60");
/// let ended = supervise(child, "check", &supervision, &[])?;
/// assert!(matches!(ended, Ended::Died { kind: FaultKind::Signal(15), .. }), "{ended:?}");
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Supervision<'a> {
    /// A core call that lasts longer is a hang (the child is killed).
    pub call_timeout: Duration,
    /// Threads of the child that may call cores (its search workers; a few
    /// more are added for its main thread).
    pub threads: usize,
    /// When this becomes true, the child is sent SIGTERM once (it then ends
    /// its search gracefully and reports).
    pub interrupt: Option<&'a AtomicBool>,
}

/// Runs `child` under supervision in the role `role` (`check` or `explain`,
/// read by [`child_from_env`]) and waits
/// for its end. `inherit` lists further descriptors the child must inherit.
/// `Err` only when the child cannot be started or watched; however it ends
/// is an [`Ended`]: its message, only if it sent one and then exited with
/// code 0; otherwise how it died, with the core call it was inside.
///
/// ```
/// use std::process::Command;
/// use std::time::Duration;
/// use cmc_world::supervise::{supervise, Ended, Supervision};
/// use cmc_world::FaultKind;
///
/// let supervision = Supervision { call_timeout: Duration::from_secs(5), threads: 1, interrupt: None };
/// // A child that exits, even with code 0, without its end-of-run message
/// // gives no verdict: it died.
/// let ended = supervise(Command::new("true"), "check", &supervision, &[])?;
/// assert!(matches!(ended, Ended::Died { kind: FaultKind::Exited(0), slot: None }), "{ended:?}");
/// # Ok::<(), String>(())
/// ```
pub fn supervise(
    mut child: Command,
    role: &str,
    supervision: &Supervision<'_>,
    inherit: &[RawFd],
) -> Result<Ended, String> {
    let Supervision {
        call_timeout,
        threads,
        interrupt,
    } = *supervision;
    let slots = threads.saturating_add(4).min(SLOTS_MAX);
    let recorder = Recorder::create(slots)
        .map_err(|e| format!("cannot create the flight recorder in memory: {e}"))?;
    let (reader, writer) = pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let mut passed = vec![writer.as_raw_fd(), recorder.raw_fd()];
    passed.extend_from_slice(inherit);
    let nonce = Nonce::fresh()?;
    let env = [role.to_string(), nonce.to_hex()]
        .into_iter()
        .chain(passed.iter().map(|fd| fd.to_string()))
        .collect::<Vec<_>>()
        .join(",");
    // SAFETY: getpid has no preconditions.
    let supervisor = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only makes
    // async-signal-safe system calls (fcntl, prctl, getppid, _exit).
    unsafe {
        child.pre_exec(move || {
            for fd in &passed {
                if libc::fcntl(*fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != supervisor {
                libc::_exit(111);
            }
            Ok(())
        });
    }
    let mut process = child
        .env(CHILD_ENV, env)
        .stdout(Stdio::from(std::io::stderr()))
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the checking process: {e}"))?;
    drop(writer);
    let mut reader = File::from(reader);
    let mut received = Vec::new();
    let mut forwarded = false;
    // Per slot: (calls completed, when that count was first seen inside a call).
    let mut seen: Vec<(u64, Instant)> = vec![(u64::MAX, Instant::now()); slots.min(SLOTS_MAX)];
    let status = loop {
        wait_readable(&reader, Duration::from_millis(20));
        drain(&mut reader, &mut received);
        if let Some(status) = process
            .try_wait()
            .map_err(|e| format!("waiting for the checking process: {e}"))?
        {
            break status;
        }
        if !forwarded && interrupt.is_some_and(|flag| flag.load(Ordering::SeqCst)) {
            forwarded = true;
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe { libc::kill(process.id() as libc::pid_t, libc::SIGTERM) };
        }
        let now = Instant::now();
        for record in recorder.read() {
            let Some(seen) = seen.get_mut(record.index) else {
                continue;
            };
            if record.call.is_none() || seen.0 != record.calls {
                *seen = (record.calls, now);
            } else if now - seen.1 > call_timeout {
                let _ = process.kill();
                let _ = process.wait();
                let kind = FaultKind::Hang(call_timeout.as_millis() as u64);
                // Read again now that nothing writes it.
                let again = recorder
                    .read()
                    .into_iter()
                    .find(|r| r.index == record.index);
                return Ok(death(kind, &recorder, || again));
            }
        }
    };
    drain(&mut reader, &mut received);
    let message = Message::decode_frame(&received, nonce);
    Ok(match (message, status.success()) {
        (Some(message), true) => Ended::Message(message),
        _ => death(death_kind(status), &recorder, || recorder.faulting_call()),
    })
}

fn death_kind(status: ExitStatus) -> FaultKind {
    match status.signal() {
        Some(signal) => FaultKind::Signal(signal),
        None => FaultKind::Exited(status.code().unwrap_or(-1)),
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn wait_readable(file: &File, timeout: Duration) {
    let mut poll = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut poll, 1, timeout.as_millis() as libc::c_int) };
}

/// Reads what is available on the non-blocking `file` (the writer may have
/// the pipe open still, through a process the core started).
fn drain(file: &mut File, into: &mut Vec<u8>) {
    let mut buffer = [0u8; 65536];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return,
            Ok(read) => into.extend_from_slice(&buffer[..read]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}
/// What the explainer is given: the step to explain, and how long its
/// search may take.
struct Question {
    pre_state: Vec<u8>,
    action: Vec<u8>,
    event: Option<(u32, Vec<u8>)>,
    /// What the check's `--time-limit` left, in milliseconds (`None`: no limit).
    time_left_ms: Option<u64>,
    /// The number of the random walk the step was part of, if any.
    walk: Option<u64>,
}

impl Question {
    fn to_bytes(&self) -> Vec<u8> {
        (
            self.pre_state.clone(),
            self.action.clone(),
            self.event.clone(),
            self.time_left_ms,
            self.walk,
        )
            .to_bytes()
    }

    fn from_bytes(bytes: &[u8]) -> Option<Question> {
        type Parts = (
            Vec<u8>,
            Vec<u8>,
            Option<(u32, Vec<u8>)>,
            Option<u64>,
            Option<u64>,
        );
        let (pre_state, action, event, time_left_ms, walk) = Parts::decode_exact(bytes).ok()?;
        Some(Question {
            pre_state,
            action,
            event,
            time_left_ms,
            walk,
        })
    }
}

/// The explainer's work, in a supervised child with the role
/// [`Role::Explain`]: names the step it was
/// given with `world` (built from the same arguments as the check) and finds
/// the path to it, by the search [`explainer_options`] makes of the check's
/// `check` options; never returns. Its answer goes to the supervisor only
/// (see the module's example).
pub fn explain(world: &World, check: &SearchOptions) -> ! {
    let answer = (|| {
        let fd = input_fd()?;
        let mut bytes = Vec::new();
        // SAFETY: the supervisor handed us this descriptor for our sole use.
        let mut input = unsafe { File::from_raw_fd(fd) };
        input.seek(std::io::SeekFrom::Start(0)).ok()?;
        input.read_to_end(&mut bytes).ok()?;
        Question::from_bytes(&bytes)
    })();
    let Some(question) = answer else {
        eprintln!("cmc: the explainer was given no step to explain");
        // SAFETY: _exit ends the process; nothing runs after it.
        unsafe { libc::_exit(2) }
    };
    let action = (!question.action.is_empty())
        .then(|| Action::decode_exact(&question.action).ok())
        .flatten();
    let action_text = match &action {
        Some(action) => world.format_action(action),
        None => "INIT".to_string(),
    };
    let event = question.event.as_ref().and_then(|(node, bytes)| {
        let event: Event = bytemuck::try_pod_read_unaligned(bytes).ok()?;
        let node = *node as usize;
        if node >= world.spec().nodes() {
            return None;
        }
        Some(format!(
            "{} (core `{}`)",
            world.format_event(node as u8, &event),
            world.spec().core_of(node).name()
        ))
    });
    let time_left = question.time_left_ms.map(Duration::from_millis);
    let options = explainer_options(check, time_left, question.walk);
    let replay =
        path_to(world, &question.pre_state, &action_text, &options).map(|file| file.to_text());
    send_and_exit(&Message::Explained {
        action: action_text,
        event: event.unwrap_or_default(),
        replay,
    })
}

/// The supervising side of `cmc check --core ...`, in one call: re-runs this
/// executable with the same arguments as a supervised child, writes the
/// report it sends to standard output and returns its exit code. A fault is
/// printed to standard error, with a replay file of the path to it written
/// to `replay_path` when it happened in a step, and the code is 2.
/// `supervision.interrupt` (set by SIGINT/SIGTERM) is forwarded to the child.
/// The explainer's search ends where `time_limit` (the check's
/// `--time-limit`), counted from this call, ends. See the module's example.
pub fn check_supervised(
    supervision: &Supervision<'_>,
    replay_path: &Path,
    time_limit: Option<Duration>,
) -> i32 {
    run_supervised(supervision, Some((replay_path, time_limit)))
}

/// The supervising side of a command that runs cores without searching
/// (`cmc validate`, `cmc corpus`): re-runs this executable with the same
/// arguments as a supervised child (whose role is
/// [`Role::Check`]: it runs the command and
/// [`finish`]es with its output), writes that
/// output to standard output and returns its exit code. A core that
/// crashes, hangs, exits or breaks its memory contract is printed to
/// standard error as a fault with the call it was in, and the code is 2.
pub fn command_supervised(supervision: &Supervision<'_>) -> i32 {
    run_supervised(supervision, None)
}

/// [`check_supervised`] with its replay path and time limit, or with
/// neither [`command_supervised`] (no explainer: the child's arguments are
/// not a search's).
fn run_supervised(
    supervision: &Supervision<'_>,
    explained_to: Option<(&Path, Option<Duration>)>,
) -> i32 {
    let started = Instant::now();
    let replay_path = explained_to.map(|(path, _)| path);
    // What the check's time limit leaves the explainer, once the check ended.
    let time_left_ms = || {
        let limit = explained_to.and_then(|(_, limit)| limit)?;
        Some(limit.saturating_sub(started.elapsed()).as_millis() as u64)
    };
    let rerun = || -> Result<Command, String> {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find this executable to supervise it: {e}"))?;
        let mut child = Command::new(exe);
        child.args(std::env::args_os().skip(1));
        Ok(child)
    };
    let ended = rerun().and_then(|child| supervise(child, "check", supervision, &[]));
    let (fault, question) = match ended {
        Err(problem) => {
            eprintln!("cmc: error: {problem}");
            return 2;
        }
        Ok(Ended::Message(Message::Report { code, stdout })) => {
            let mut out = std::io::stdout().lock();
            if out.write_all(&stdout).and_then(|()| out.flush()).is_err() {
                return 2;
            }
            return code;
        }
        Ok(Ended::Message(Message::Fault {
            fault,
            action,
            walk,
        })) => {
            // A fault outside any step (e.g. in a property) has no step to replay.
            let question = (fault.in_step() && replay_path.is_some()).then(|| Question {
                pre_state: fault.pre_state.clone(),
                action,
                event: None,
                time_left_ms: None,
                walk,
            });
            (fault, question)
        }
        Ok(Ended::Message(other)) => {
            eprintln!("cmc: error: the checking process sent an unexpected message: {other:?}");
            return 2;
        }
        Ok(Ended::Died { kind, .. } | Ended::Unplaced { kind, .. })
            if stopped_by_interrupt(supervision, &kind) =>
        {
            println!(
                "The search was interrupted: the checking process was stopped ({}) before \
                 it reported; nothing was concluded.",
                match kind {
                    FaultKind::Signal(signal) => format!("signal {signal}"),
                    other => format!("{other:?}"),
                }
            );
            return INTERRUPTED;
        }
        Ok(Ended::Died { kind, slot }) => {
            let (fault, question) = fault_of_death(kind, slot);
            (fault, question.filter(|_| replay_path.is_some()))
        }
        Ok(Ended::Unplaced { kind, damage }) => (unplaced(kind, &damage), None),
    };
    let mut fault = fault;
    let explained = question
        .map(|question| explain_fault(rerun, &mut fault, question, time_left_ms, supervision));
    if let Some(Ok(Explanation { action, event, .. })) = &explained {
        // A death is known only by the recorder's raw action; the explainer names it.
        if fault.action.starts_with('?') {
            fault.action = action.clone();
        }
        if fault.event.is_empty() {
            fault.event = event.clone();
        }
    }
    eprint!("{fault}");
    match explained {
        None => {}
        Some(Err(problem))
        | Some(Ok(Explanation {
            replay: Err(problem),
            ..
        })) => {
            eprintln!("  no replay file: {problem}")
        }
        Some(Ok(Explanation {
            replay: Ok(text),
            walk,
            ..
        })) => {
            let replay_path = replay_path.expect("only a check's fault is explained");
            let steps = ReplayFile::parse(&text).map_or(0, |file| file.actions.len());
            match std::fs::write(replay_path, text) {
                Ok(()) => eprintln!(
                    "  trace: {steps} step(s) to the faulting step{found}, written to {path}\n  \
                     reproduce: cmc replay {path} (under gdb: gdb --args cmc replay {path})",
                    path = replay_path.display(),
                    found = walk.map_or_else(String::new, |walk| format!(
                        " (random walk {walk}, taken again alone)"
                    )),
                ),
                Err(e) => eprintln!(
                    "  cannot write the replay file {}: {e}",
                    replay_path.display()
                ),
            }
        }
    }
    2
}

/// The fault a child that ended as `ended` stands for, placed by the flight
/// recorder (for a supervisor that serves rather than checks, such as
/// `cmc explore`); `None` when it sent a message other than a fault.
pub fn fault_of(ended: Ended) -> Option<Fault> {
    match ended {
        Ended::Message(Message::Fault { fault, .. }) => Some(fault),
        Ended::Message(_) => None,
        Ended::Died { kind, slot } => Some(fault_of_death(kind, slot).0),
        Ended::Unplaced { kind, damage } => Some(unplaced(kind, &damage)),
    }
}

/// The exit code of an interrupted run.
const INTERRUPTED: i32 = 3;

/// Whether a child that ended by `kind` was stopped by the stop signal this
/// supervisor was given (and forwarded), or that reached the child with it
/// (a signal to the whole process group, as `timeout` and a terminal send):
/// the checker's own stop, never the core's fault.
fn stopped_by_interrupt(supervision: &Supervision<'_>, kind: &FaultKind) -> bool {
    let interrupted = supervision
        .interrupt
        .is_some_and(|flag| flag.load(Ordering::SeqCst));
    interrupted
        && matches!(
            kind,
            FaultKind::Signal(libc::SIGTERM | libc::SIGINT | libc::SIGHUP)
        )
}

/// The fault of a child that died where the damaged flight recorder cannot say.
fn unplaced(kind: FaultKind, damage: &str) -> Fault {
    Fault::outside_step(
        kind,
        format!(
            "at an unknown place: the flight recorder shared with the checking process was \
             overwritten ({damage}), so it cannot say where (a wild write of core code?)"
        ),
    )
}

/// The fault a death stands for, and the step to explain if it was in one.
fn fault_of_death(kind: FaultKind, slot: Option<SlotRecord>) -> (Fault, Option<Question>) {
    match slot {
        Some(slot) if slot.call == Some(Call::Step) => {
            let decoded = (!slot.action.is_empty())
                .then(|| Action::decode_exact(&slot.action).ok())
                .flatten();
            let action = match &decoded {
                Some(action) => format!("?{action:?}"),
                None => "INIT".to_string(),
            };
            let question = Question {
                pre_state: slot.pre_state.clone(),
                action: decoded.as_ref().map(Encode::to_bytes).unwrap_or_default(),
                event: slot
                    .event
                    .map(|(node, event)| (node, bytemuck::bytes_of(&event).to_vec())),
                time_left_ms: None,
                walk: slot.walk,
            };
            // Dead in a call nested in the step (a ghost variable's
            // update): that call is the place, not the step's last event.
            let event = match slot.nested {
                Some(call) => doing(call, &slot.text),
                None => String::new(),
            };
            let fault = Fault {
                kind,
                action,
                event,
                pre_state: slot.pre_state,
            };
            (fault, Some(question))
        }
        Some(slot) => {
            let context = doing(slot.call.unwrap_or(Call::Describe), &slot.text);
            (Fault::outside_step(kind, context), None)
        }
        None => (
            Fault::outside_step(
                kind,
                "outside any core call (the checking process ended without its report)",
            ),
            None,
        ),
    }
}

/// What a process was doing inside a core call of kind `call` about `text`
/// (e.g. `while loading ./libcore.so`).
fn doing(call: Call, text: &str) -> String {
    match call {
        Call::Load => format!("while loading {text}"),
        Call::Property => format!("while checking {text}"),
        Call::GlueStep => format!("while replaying {text}"),
        Call::GhostUpdate => format!("in {text}"),
        Call::Step | Call::Describe => format!("while describing {text}"),
    }
}

/// What the explainer answered.
enum Explained {
    /// The step asked about: its action and event as text, and the replay
    /// file's text or why there is none.
    Named {
        action: String,
        event: String,
        replay: Result<String, String>,
    },
    /// Another step faulted first on the explainer's way (its search is
    /// deterministic: one worker, the check's walks in their order): that
    /// fault, and the question that explains it.
    FirstFault { fault: Fault, question: Question },
}

/// The explainer's answer about the fault reported.
struct Explanation {
    /// The faulting action as text.
    action: String,
    /// The faulting event as text (empty if unknown).
    event: String,
    /// The replay file's text, or why there is none.
    replay: Result<String, String>,
    /// The random walk taken again to find the path, if one was.
    walk: Option<u64>,
}

/// Asks the explainer about `question` (see [`ask_explainer`]). When
/// another step faults first on its way, that fault is the one reported:
/// it is the first in the explainer's deterministic order, so a second
/// asking, about it, reaches its pre-state before any other fault.
fn explain_fault(
    rerun: impl Fn() -> Result<Command, String>,
    fault: &mut Fault,
    question: Question,
    time_left_ms: impl Fn() -> Option<u64>,
    supervision: &Supervision<'_>,
) -> Result<Explanation, String> {
    let mut question = question;
    for _ in 0..2 {
        let asked = Question {
            time_left_ms: time_left_ms(),
            ..question
        };
        match ask_explainer(rerun()?, &asked, supervision)? {
            Explained::Named {
                action,
                event,
                replay,
            } => {
                return Ok(Explanation {
                    action,
                    event,
                    replay,
                    walk: question.walk,
                })
            }
            Explained::FirstFault {
                fault: first,
                question: next,
            } => {
                eprintln!(
                    "cmc: the search for the path to the fault met another faulting step first; \
                     that one, the first on the search's deterministic way, is reported"
                );
                *fault = first;
                question = next;
            }
        }
    }
    Err(
        "the core faulted again at another step while the path to the first one was searched: \
         it is not deterministic"
            .into(),
    )
}

/// Runs the explainer on `question`: the action and event as text, and the
/// replay file's text or why there is none. The check's stop signal stops
/// the explainer too, and its search for the path is then said to be
/// interrupted, never a failure of the core.
fn ask_explainer(
    child: Command,
    question: &Question,
    check: &Supervision<'_>,
) -> Result<Explained, String> {
    let input = Recorder::shared_file(&question.to_bytes())
        .map_err(|e| format!("cannot hand the step to the explainer: {e}"))?;
    let supervision = Supervision {
        call_timeout: check.call_timeout,
        threads: 1,
        interrupt: check.interrupt,
    };
    match supervise(child, "explain", &supervision, &[input.as_raw_fd()])? {
        Ended::Died { kind, .. } | Ended::Unplaced { kind, .. }
            if stopped_by_interrupt(&supervision, &kind) =>
        {
            Err("the search for the path to the step was interrupted before it finished".into())
        }
        Ended::Message(Message::Explained {
            action,
            event,
            replay,
        }) => Ok(Explained::Named {
            action,
            event,
            replay,
        }),
        Ended::Message(Message::Fault {
            fault,
            action,
            walk,
        }) if fault.in_step() => {
            let question = Question {
                pre_state: fault.pre_state.clone(),
                action,
                event: None,
                time_left_ms: None,
                walk,
            };
            Ok(Explained::FirstFault { fault, question })
        }
        Ended::Message(Message::Fault { fault, .. }) => Err(format!(
            "a fault happened again while searching for the path to the step:\n{fault}"
        )),
        Ended::Message(other) => Err(format!("the explainer answered {other:?}")),
        Ended::Died { kind, slot } => match fault_of_death(kind, slot) {
            (fault, Some(question)) => Ok(Explained::FirstFault { fault, question }),
            (fault, None) => Err(format!(
                "the core failed again while the path to the step was searched:\n{fault}"
            )),
        },
        Ended::Unplaced { kind, damage } => Err(format!(
            "the core failed again while the path to the step was searched:\n{}",
            unplaced(kind, &damage)
        )),
    }
}

/// The World with one invariant: "this state is not the target".
struct Reach<'a> {
    world: &'a World,
    target: Fingerprint,
}

impl Model for Reach<'_> {
    type State = WorldState;
    type Action = Action;

    fn name(&self) -> String {
        self.world.name()
    }
    fn params(&self) -> Vec<ModelParam> {
        self.world.params()
    }
    fn init_states(&self, out: &mut Vec<WorldState>) {
        self.world.init_states(out)
    }
    fn actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        self.world.actions(state, out)
    }
    fn next_state(&self, state: &WorldState, action: &Action) -> Option<WorldState> {
        self.world.next_state(state, action)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always(
            "NotFaultPreState",
            |reach: &Reach, state: &WorldState| {
                Fingerprint::of_bytes(&state.to_bytes()) != reach.target
            },
        )]
    }
    fn format_action(&self, action: &Action) -> String {
        self.world.format_action(action)
    }
    // A walk draws its fault mix and weights by kind: the same as the check's.
    fn action_kind(&self, action: &Action) -> cmc_model::ActionKind {
        self.world.action_kind(action)
    }
    fn action_kinds(&self) -> Vec<cmc_model::ActionKind> {
        self.world.action_kinds()
    }
    fn is_terminal(&self, state: &WorldState) -> bool {
        self.world.is_terminal(state)
    }
    fn describe_state(&self, state: &WorldState) -> StateView {
        self.world.describe_state(state)
    }
}

/// The search that finds the path to a step that faulted in a check run
/// with `check`, on one worker, stopped at `time_left`. Random walks
/// (`--simulate`, and walks from a bounded search's frontier) are run again
/// as the check ran them, with the same seed, walk numbers, lengths, mixes
/// and starts: each walk draws the same choices, so the walk that faulted
/// reaches its pre-state again, and no search of the whole space is needed;
/// when the fault names its walk (`walk`, see [`cmc_search::current_walk`]),
/// that walk alone is run. A fault of a complete search is found again by
/// breadth-first search (a shortest path, among states that search
/// expanded before the fault).
pub fn explainer_options(
    check: &SearchOptions,
    time_left: Option<Duration>,
    walk: Option<u64>,
) -> SearchOptions {
    let walks = matches!(check.strategy, Strategy::Simulate(_))
        || (check.strategy == Strategy::Bfs && check.frontier_walks.is_some());
    let search = if walks {
        SearchOptions {
            only_walk: walk,
            ..check.clone()
        }
    } else {
        SearchOptions {
            strategy: Strategy::Bfs,
            frontier_walks: None,
            walks_from: None,
            ..check.clone()
        }
    };
    SearchOptions {
        workers: 1,
        check_deadlock: false,
        check_determinism: false,
        progress: ProgressMode::Off,
        checkpoint: None,
        interrupt: None,
        time_limit: time_left,
        reduction: false,
        max_states: None,
        ..search
    }
}

/// A replay file of a path from the initial state to `fault`'s pre-state,
/// followed by the faulting action, found by the search `options` describe
/// (made by [`explainer_options`] from the faulting run's: the same walks
/// again, or a single-worker BFS, a shortest path, which expands only
/// states a BFS run expanded before the fault). `world` must be built like
/// the faulting run's. `Err` when the pre-state is not reached again (the
/// core is not deterministic), the search faults again, or it reaches its
/// time limit first (the message says so).
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::Checker;
/// use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
/// use cmc_world::supervise::{explainer_options, path_to_fault};
/// use cmc_world::{TypedCore, World, WorldSpec};
///
/// /// Fails on its second client request.
/// struct SecondFails;
/// impl TypedCore for SecondFails {
///     type Durable = u32;
///     type Volatile = u32;
///     fn name(&self) -> &str { "second-fails" }
///     fn step(&self, _: &Config, _: &u32, seen: &mut u32, event: &Event, out: &mut Outputs)
///         -> Result<(), CoreError> {
///         if event.kind() != Some(EventKind::Client) { return Ok(()); }
///         *seen += 1;
///         if *seen == 2 { return Err(CoreError::Code(7)); }
///         out.reply(event.id, &[])
///     }
/// }
///
/// let world = || World::new(WorldSpec::builder(Arc::new(SecondFails), 1).requests(2).build().unwrap());
/// let checker = Checker::new(world()).workers(1);
/// checker.run();
/// let fault = checker.model().fault().expect("the second request fails");
/// let options = explainer_options(checker.search_options(), None, None);
/// let file = path_to_fault(&world(), &fault, &options)?;
/// let actions: Vec<&str> = file.actions.iter().map(|(_, action)| action.as_str()).collect();
/// assert_eq!(actions, ["CLIENT r0 -> n0", "CLIENT r1 -> n0"]);
/// # Ok::<(), String>(())
/// ```
pub fn path_to_fault(
    world: &World,
    fault: &Fault,
    options: &SearchOptions,
) -> Result<ReplayFile, String> {
    path_to(world, &fault.pre_state, &fault.action, options)
}

/// A replay file of a path to `pre_state` found by the search `options`
/// describe ([`explainer_options`]), followed by `action`.
fn path_to(
    world: &World,
    pre_state: &[u8],
    action: &str,
    options: &SearchOptions,
) -> Result<ReplayFile, String> {
    let mut file = if action == "INIT" {
        ReplayFile {
            model: world.name(),
            params: world.params(),
            settings: Vec::new(),
            violates: None,
            init: (0, 0),
            actions: Vec::new(),
            model_line: 0,
        }
    } else if pre_state.is_empty() {
        return Err("the step's pre-state was too large to record".into());
    } else {
        let target = Fingerprint::of_bytes(pre_state);
        let reach = Reach { world, target };
        let outcome = Checker::new(reach).options(options.clone()).run();
        if let Some(again) = world.fault() {
            return Err(format!(
                "a fault happened again while searching for its path:\n{again}"
            ));
        }
        match (&outcome.verdict, &outcome.counterexample) {
            (Verdict::Violated { .. }, Some(path)) => {
                ReplayFile::from_counterexample(&Reach { world, target }, path, None)
            }
            (Verdict::TimeLimit { .. }, _) => {
                return Err(format!(
                    "the search for the path to the step reached the check's --time-limit \
                     ({:.1} s were left of it) before it found the step",
                    options.time_limit.unwrap_or_default().as_secs_f64()
                ))
            }
            _ => {
                return Err(format!(
                    "the faulting step's pre-state ({target}) was not reached again: the run is \
                     not reproducible (is the core deterministic? try --check-determinism)"
                ))
            }
        }
    };
    if action != "INIT" {
        file.actions.push((0, action.to_string()));
    }
    Ok(file)
}
