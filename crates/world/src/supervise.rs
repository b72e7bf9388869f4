//! Crash, hang and exit containment: the verdict comes only from a process
//! that never runs core code.
//!
//! The supervisor ([`supervise`]) runs the check in a child process, which
//! writes a flight recorder ([`crate::recorder`]) before every core call and
//! ends by sending one end-of-run [`Message`] over a private pipe, then
//! exiting at once. The supervisor takes the verdict from that message only:
//! a child that exits without it (whatever its exit code), dies by a signal,
//! or stays inside one core call longer than the timeout (it is then killed)
//! is a core fault, placed by the recorder in a step, in loading or in a
//! description. The child's standard output goes to the supervisor's standard
//! error, so a core's `printf` never mixes with the report.
//!
//! For a fault in a step, a second child, the explainer ([`explain`]), names
//! the step and its event in the cores' own words and finds a shortest path
//! to the step's pre-state, with a single-worker BFS whose only invariant is
//! "this is not the pre-state" (its counterexample is the path); the
//! supervisor writes it as a replay file that ends with the faulting action,
//! so `cmc replay` (under gdb if need be) reproduces the step. If the
//! explainer fails too, the fault is still reported, without that file.
//!
//! Every child gets `PR_SET_PDEATHSIG`: it never outlives the supervisor.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use cmc_model::{Decoder, Encode, Fingerprint, Model, ModelParam, Property, StateView};
use cmc_search::{Checker, ReplayFile, Verdict};

use crate::abi::Event;
use crate::action::Action;
use crate::fault::{Fault, FaultKind};
use crate::recorder::{Call, Recorder, SlotRecord, SLOTS_MAX};
use crate::state::WorldState;
use crate::World;

/// The environment variable that tells a child it is supervised:
/// `ROLE,CHANNEL_FD,RECORDER_FD[,INPUT_FD]`.
pub const CHILD_ENV: &str = "CMC_SUPERVISED_CHILD";

const FRAME_MAGIC: &[u8; 8] = b"CMCEND01";

/// What a supervised child sends as its last act.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// The run ended: the exit code and what goes to standard output.
    Report {
        /// The exit code the supervisor must use.
        code: i32,
        /// The bytes the supervisor must write to its standard output.
        stdout: Vec<u8>,
    },
    /// The child stopped at a fault it detected itself (an error code,
    /// non-determinism, a bad output, a memory violation).
    Fault {
        /// The fault, with the action and event as text.
        fault: Fault,
        /// The encoded action (empty for the initial starts).
        action: Vec<u8>,
    },
    /// The explainer's answer.
    Explained {
        /// The faulting action as text (`INIT` for the initial starts).
        action: String,
        /// The faulting event as text (empty if unknown).
        event: String,
        /// The replay file's text, or why there is none.
        replay: Result<String, String>,
    },
}

impl Message {
    fn encode_frame(&self) -> Vec<u8> {
        let mut payload = Vec::new();
        match self {
            Message::Report { code, stdout } => (0u8, *code, stdout.clone()).encode(&mut payload),
            Message::Fault { fault, action } => {
                1u8.encode(&mut payload);
                encode_fault(fault, &mut payload);
                action.encode(&mut payload);
            }
            Message::Explained {
                action,
                event,
                replay,
            } => {
                let (ok, text) = match replay {
                    Ok(text) => (true, text),
                    Err(text) => (false, text),
                };
                (2u8, action.clone(), event.clone(), (ok, text.clone())).encode(&mut payload)
            }
        }
        let mut frame = FRAME_MAGIC.to_vec();
        (payload.len() as u64).encode(&mut frame);
        frame.extend_from_slice(&payload);
        frame
    }

    /// The one message `bytes` hold, if they hold exactly one well-formed frame.
    fn decode_frame(bytes: &[u8]) -> Option<Message> {
        let rest = bytes.strip_prefix(FRAME_MAGIC)?;
        let mut decoder = Decoder::new(rest);
        let len = u64::decode(&mut decoder).ok()? as usize;
        let payload = decoder.take(len).ok()?;
        decoder.finish().ok()?;
        let mut decoder = Decoder::new(payload);
        let message = match u8::decode(&mut decoder).ok()? {
            0 => {
                let (code, stdout) = <(i32, Vec<u8>)>::decode(&mut decoder).ok()?;
                Message::Report { code, stdout }
            }
            1 => Message::Fault {
                fault: decode_fault(&mut decoder)?,
                action: Vec::decode(&mut decoder).ok()?,
            },
            2 => {
                let (action, event, (ok, text)) =
                    <(String, String, (bool, String))>::decode(&mut decoder).ok()?;
                Message::Explained {
                    action,
                    event,
                    replay: if ok { Ok(text) } else { Err(text) },
                }
            }
            _ => return None,
        };
        decoder.finish().ok()?;
        Some(message)
    }
}

fn encode_fault(fault: &Fault, out: &mut Vec<u8>) {
    let (tag, detail) = fault.kind.to_parts();
    (tag, detail, fault.action.clone(), fault.event.clone()).encode(out);
    fault.pre_state.encode(out);
}

fn decode_fault(decoder: &mut Decoder<'_>) -> Option<Fault> {
    let (tag, detail, action, event) = <(u8, String, String, String)>::decode(decoder).ok()?;
    Some(Fault {
        kind: FaultKind::from_parts(tag, detail)?,
        action,
        event,
        pre_state: Vec::decode(decoder).ok()?,
    })
}

/// How a supervised child ended.
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
}

/// How to supervise a child.
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

/// Runs `child` under supervision in the role `role` and waits for its end.
/// `inherit` lists further descriptors the child must inherit.
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
    let env = std::iter::once(role.to_string())
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
                return Ok(Ended::Died {
                    kind: FaultKind::Hang(call_timeout.as_millis() as u64),
                    slot: Some(record),
                });
            }
        }
    };
    drain(&mut reader, &mut received);
    let message = Message::decode_frame(&received);
    Ok(match (message, status.success()) {
        (Some(message), true) => Ended::Message(message),
        _ => Ended::Died {
            kind: death_kind(status),
            slot: recorder.faulting_call(),
        },
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

/// What a supervised child is to do.
#[derive(Debug)]
pub enum Role {
    /// Run the check and [`finish`] with its report.
    Check,
    /// [`explain`] a fault.
    Explain,
}

struct ChildSide {
    channel: Mutex<File>,
    input: Option<RawFd>,
}

static CHILD: OnceLock<ChildSide> = OnceLock::new();

/// In a process started by [`supervise`]: installs its flight recorder and
/// end-of-run channel, and says what it is to do; `None` when this process
/// is not supervised.
pub fn child_from_env() -> Result<Option<Role>, String> {
    let Some(value) = std::env::var_os(CHILD_ENV) else {
        return Ok(None);
    };
    let bad = || format!("{CHILD_ENV} is set, but not by a cmc supervisor");
    let value = value.to_str().ok_or_else(bad)?.to_string();
    let mut parts = value.split(',');
    let role = match parts.next() {
        Some("check") => Role::Check,
        Some("explain") => Role::Explain,
        _ => return Err(bad()),
    };
    let fds: Vec<RawFd> = parts
        .map(|part| part.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let (&channel, &recorder) = fds.first().zip(fds.get(1)).ok_or_else(bad)?;
    // SAFETY: F_GETFD only tests that the descriptor is open.
    if unsafe { libc::fcntl(channel, libc::F_GETFD) } < 0 {
        return Err(bad());
    }
    let recorder = Recorder::open(recorder).map_err(|e| format!("flight recorder: {e}"))?;
    Recorder::install(recorder)?;
    name_the_culprit_on_death();
    // SAFETY: the supervisor handed us this descriptor for our sole use.
    let channel = unsafe { File::from_raw_fd(channel) };
    // SAFETY: as above; the channel is ours alone, so others must not inherit it.
    unsafe { libc::fcntl(channel.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) };
    CHILD
        .set(ChildSide {
            channel: Mutex::new(channel),
            input: fds.get(2).copied(),
        })
        .map_err(|_| "the supervised child is set up already".to_string())?;
    Ok(Some(role))
}

/// Makes the thread that crashes the process (by a fault signal) or calls
/// `exit` mark itself in the recorder first, so that the supervisor blames
/// its core call and not another worker's.
fn name_the_culprit_on_death() {
    extern "C" fn on_signal(_: libc::c_int) {
        if let Some(recorder) = crate::recorder::installed() {
            recorder.mark_culprit();
        }
        // The handler was reset: the faulting instruction runs again and
        // kills the process with the same signal (abort raises it again).
    }
    extern "C" fn on_exit() {
        if let Some(recorder) = crate::recorder::installed() {
            recorder.mark_culprit();
        }
    }
    // SAFETY: the handlers only do async-signal-safe work (a thread-local
    // read and an atomic store); sigaction is given a zeroed, filled struct.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESETHAND | libc::SA_NODEFER;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in [
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGILL,
            libc::SIGFPE,
            libc::SIGABRT,
        ] {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
        libc::atexit(on_exit);
    }
}

/// Whether this process is a supervised child (see [`child_from_env`]).
pub fn is_child() -> bool {
    CHILD.get().is_some()
}

/// Sends `message` to the supervisor and ends the process at once (no exit
/// handlers or destructors run: a core's cannot change anything now).
fn send_and_exit(message: &Message) -> ! {
    let side = CHILD.get().expect("only a supervised child sends messages");
    // Held until the process ends: the first message is the only one.
    let mut channel = side.channel.lock().unwrap_or_else(|e| e.into_inner());
    let frame = message.encode_frame();
    let mut written = 0;
    while written < frame.len() {
        match channel.write(&frame[written..]) {
            Ok(n) => written += n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process; nothing runs after it.
    unsafe { libc::_exit(0) }
}

/// Ends a supervised child with its report: the exit code and the bytes for
/// standard output.
pub fn finish(code: i32, stdout: &[u8]) -> ! {
    send_and_exit(&Message::Report {
        code,
        stdout: stdout.to_vec(),
    })
}

/// Ends a supervised child at `fault` (in the step of `action`).
pub(crate) fn report_fault(fault: &Fault, action: Option<&Action>) -> ! {
    send_and_exit(&Message::Fault {
        fault: fault.clone(),
        action: action.map(Encode::to_bytes).unwrap_or_default(),
    })
}

/// Set while cores run in this process outside any supervisor (`cmc replay`).
static CORES_RUNNING: AtomicBool = AtomicBool::new(false);

extern "C" fn exit_while_cores_run() {
    if CORES_RUNNING.load(Ordering::SeqCst) {
        eprintln!(
            "CORE EXITED: a core ended the process while it ran in it; \
             nothing printed before this line is a verdict"
        );
        // SAFETY: _exit ends the process; nothing runs after it.
        unsafe { libc::_exit(2) }
    }
}

/// While it lives, a core that calls `exit` (with any code) in this process
/// ends it with exit code 2 and a `CORE EXITED` line instead: for runs of
/// cores outside a supervisor, such as `cmc replay` (kept in-process so that
/// gdb sees the core). `_exit` and signals are not caught.
pub struct ExitGuard(());

impl ExitGuard {
    /// Arms the guard.
    pub fn new() -> ExitGuard {
        static REGISTERED: OnceLock<()> = OnceLock::new();
        REGISTERED.get_or_init(|| {
            // SAFETY: registering a handler that only reads an atomic,
            // writes to stderr and calls _exit.
            unsafe { libc::atexit(exit_while_cores_run) };
        });
        CORES_RUNNING.store(true, Ordering::SeqCst);
        ExitGuard(())
    }
}

impl Default for ExitGuard {
    fn default() -> Self {
        ExitGuard::new()
    }
}

impl Drop for ExitGuard {
    fn drop(&mut self) {
        CORES_RUNNING.store(false, Ordering::SeqCst);
    }
}

/// What the explainer is given: the step to explain.
struct Question {
    pre_state: Vec<u8>,
    action: Vec<u8>,
    event: Option<(u32, Vec<u8>)>,
}

impl Question {
    fn to_bytes(&self) -> Vec<u8> {
        (
            self.pre_state.clone(),
            self.action.clone(),
            self.event.clone(),
        )
            .to_bytes()
    }

    fn from_bytes(bytes: &[u8]) -> Option<Question> {
        let (pre_state, action, event) =
            <(Vec<u8>, Vec<u8>, Option<(u32, Vec<u8>)>)>::decode_exact(bytes).ok()?;
        Some(Question {
            pre_state,
            action,
            event,
        })
    }
}

/// The explainer's work, in a supervised child with the role
/// [`Role::Explain`]: names the step it was given with `world` (built from
/// the same arguments as the check) and finds the path to it; never returns.
pub fn explain(world: &World) -> ! {
    let answer = (|| {
        let fd = CHILD.get()?.input?;
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
    let replay = path_to(world, &question.pre_state, &action_text).map(|file| file.to_text());
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
pub fn check_supervised(supervision: &Supervision<'_>, replay_path: &Path) -> i32 {
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
        Ok(Ended::Message(Message::Fault { fault, action })) => {
            // A fault outside any step (e.g. in a property) has no step to replay.
            let question = fault.in_step().then(|| Question {
                pre_state: fault.pre_state.clone(),
                action,
                event: None,
            });
            (fault, question)
        }
        Ok(Ended::Message(other)) => {
            eprintln!("cmc: error: the checking process sent an unexpected message: {other:?}");
            return 2;
        }
        Ok(Ended::Died { kind, slot }) => fault_of_death(kind, slot),
    };
    let explained = question.map(|question| {
        rerun().and_then(|child| ask_explainer(child, &question, supervision.call_timeout))
    });
    let mut fault = fault;
    if let Some(Ok((action, event, _))) = &explained {
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
        Some(Err(problem)) | Some(Ok((_, _, Err(problem)))) => {
            eprintln!("  no replay file: {problem}")
        }
        Some(Ok((_, _, Ok(text)))) => {
            let steps = ReplayFile::parse(&text).map_or(0, |file| file.actions.len());
            match std::fs::write(replay_path, text) {
                Ok(()) => eprintln!(
                    "  trace: {steps} step(s) to the faulting step, written to {path}\n  \
                     reproduce: cmc replay {path} (under gdb: gdb --args cmc replay {path})",
                    path = replay_path.display()
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

/// The fault a death stands for, and the step to explain if it was in one.
fn fault_of_death(kind: FaultKind, slot: Option<SlotRecord>) -> (Fault, Option<Question>) {
    match slot {
        Some(slot) if slot.call == Some(Call::Step) => {
            let action = match &slot.action {
                Some(action) => format!("?{action:?}"),
                None => "INIT".to_string(),
            };
            let question = Question {
                pre_state: slot.pre_state.clone(),
                action: slot
                    .action
                    .as_ref()
                    .map(Encode::to_bytes)
                    .unwrap_or_default(),
                event: slot
                    .event
                    .map(|(node, event)| (node, bytemuck::bytes_of(&event).to_vec())),
            };
            let fault = Fault {
                kind,
                action,
                event: String::new(),
                pre_state: slot.pre_state,
            };
            (fault, Some(question))
        }
        Some(slot) => {
            let context = match slot.call {
                Some(Call::Load) => format!("while loading {}", slot.text),
                Some(Call::Property) => format!("while checking {}", slot.text),
                _ => format!("while describing {}", slot.text),
            };
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

/// Runs the explainer on `question`: the action and event as text, and the
/// replay file's text or why there is none.
fn ask_explainer(
    child: Command,
    question: &Question,
    call_timeout: Duration,
) -> Result<(String, String, Result<String, String>), String> {
    let input = Recorder::shared_file(&question.to_bytes())
        .map_err(|e| format!("cannot hand the step to the explainer: {e}"))?;
    let supervision = Supervision {
        call_timeout,
        threads: 1,
        interrupt: None,
    };
    match supervise(child, "explain", &supervision, &[input.as_raw_fd()])? {
        Ended::Message(Message::Explained {
            action,
            event,
            replay,
        }) => Ok((action, event, replay)),
        Ended::Message(Message::Fault { fault, .. }) => Err(format!(
            "a fault happened again while searching for the path to the step:\n{fault}"
        )),
        Ended::Message(other) => Err(format!("the explainer answered {other:?}")),
        Ended::Died { kind, slot } => Err(format!(
            "the core failed again while the path to the step was searched:\n{}",
            fault_of_death(kind, slot).0
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
    fn describe_state(&self, state: &WorldState) -> StateView {
        self.world.describe_state(state)
    }
}

/// A replay file of a shortest path from the initial state to `fault`'s
/// pre-state, followed by the faulting action. `world` must be built like the
/// faulting run's; the search runs single-worker BFS, which expands only
/// states a BFS run expanded before the fault.
pub fn path_to_fault(world: &World, fault: &Fault) -> Result<ReplayFile, String> {
    path_to(world, &fault.pre_state, &fault.action)
}

fn path_to(world: &World, pre_state: &[u8], action: &str) -> Result<ReplayFile, String> {
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
        let outcome = Checker::new(reach).workers(1).check_deadlock(false).run();
        if let Some(again) = world.fault() {
            return Err(format!(
                "a fault happened again while searching for its path:\n{again}"
            ));
        }
        match (&outcome.verdict, &outcome.counterexample) {
            (Verdict::Violated { .. }, Some(path)) => {
                ReplayFile::from_counterexample(&Reach { world, target }, path, None)
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
