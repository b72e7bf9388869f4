//! The supervised child's side of its channel to the supervisor
//! ([`crate::supervise`]): the end-of-run [`Message`] and its framing, the
//! role the child was started for, and the ways a child ends ([`finish`],
//! or `report_fault` on a fault).

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use cmc_model::{Decoder, Encode};

use crate::core::fault::{Fault, FaultKind};
use crate::run::recorder::Recorder;
/// The environment variable that tells a child it is supervised:
/// `ROLE,NONCE,CHANNEL_FD,RECORDER_FD[,INPUT_FD]` (the nonce in hex).
pub const CHILD_ENV: &str = "CMC_SUPERVISED_CHILD";

const FRAME_MAGIC: &[u8; 8] = b"CMCEND02";

/// Bytes of a run's nonce.
const NONCE_LEN: usize = 16;

/// A random value drawn by the supervisor for one child, which must open
/// its end-of-run frame: bytes that reach the channel by accident (a stray
/// write of an old frame, another run's report) are never taken for the
/// child's message. It is no secret from the child's own code, so it does
/// not stop a core written to forge a frame (see `docs/guarantees.md`, "The
/// boundary").
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Nonce([u8; NONCE_LEN]);

impl Nonce {
    /// A fresh nonce from the system's random source.
    pub(crate) fn fresh() -> Result<Nonce, String> {
        let mut bytes = [0u8; NONCE_LEN];
        let mut filled = 0;
        while filled < NONCE_LEN {
            // SAFETY: writing at most the bytes left in `bytes`.
            let got = unsafe {
                libc::getrandom(bytes[filled..].as_mut_ptr().cast(), NONCE_LEN - filled, 0)
            };
            match got {
                n if n > 0 => filled += n as usize,
                _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
                _ => {
                    return Err(format!(
                        "cannot draw a random nonce: {}",
                        std::io::Error::last_os_error()
                    ))
                }
            }
        }
        Ok(Nonce(bytes))
    }

    /// The nonce as hex, for the child's environment.
    pub(crate) fn to_hex(self) -> String {
        crate::core::hex::hex(&self.0)
    }

    fn from_hex(text: &str) -> Option<Nonce> {
        if text.len() != 2 * NONCE_LEN {
            return None;
        }
        let mut bytes = [0u8; NONCE_LEN];
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * index..2 * index + 2)?, 16).ok()?;
        }
        Some(Nonce(bytes))
    }
}

/// What a supervised child sends as its last act: [`finish`] sends a
/// [`Message::Report`]. See [`Role`]'s example, in which the supervisor
/// receives one.
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
        /// The number of the random walk the step was part of, if any.
        walk: Option<u64>,
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
    /// The frame that carries `self` from a child given `nonce`.
    fn encode_frame(&self, nonce: Nonce) -> Vec<u8> {
        let mut payload = Vec::new();
        match self {
            Message::Report { code, stdout } => (0u8, *code, stdout.clone()).encode(&mut payload),
            Message::Fault {
                fault,
                action,
                walk,
            } => {
                1u8.encode(&mut payload);
                encode_fault(fault, &mut payload);
                action.encode(&mut payload);
                walk.encode(&mut payload);
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
        frame.extend_from_slice(&nonce.0);
        (payload.len() as u64).encode(&mut frame);
        frame.extend_from_slice(&payload);
        frame
    }

    /// The one message `bytes` hold, if they hold exactly one well-formed
    /// frame opened by `nonce`.
    pub(crate) fn decode_frame(bytes: &[u8], nonce: Nonce) -> Option<Message> {
        let rest = bytes.strip_prefix(FRAME_MAGIC)?.strip_prefix(&nonce.0)?;
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
                walk: Option::decode(&mut decoder).ok()?,
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

/// What a supervised child is to do.
///
/// This doctest's program supervises itself: started again by
/// [`supervise`](crate::supervise::supervise) in the role `check`, it
/// finishes with its report, which the supervisor receives.
///
/// ```
/// use std::process::Command;
/// use std::time::Duration;
/// use cmc_world::run::child::{child_from_env, finish, Message, Role};
/// use cmc_world::supervise::{supervise, Ended, Supervision};
///
/// if let Some(Role::Check) = child_from_env()? {
///     finish(3, b"a verdict\n"); // the child: never returns
/// }
/// let supervision = Supervision { call_timeout: Duration::from_secs(5), threads: 1, interrupt: None };
/// let this_program = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
/// let ended = supervise(this_program, "check", &supervision, &[])?;
/// let Ended::Message(Message::Report { code, stdout }) = ended else { panic!("{ended:?}") };
/// assert_eq!((code, stdout.as_slice()), (3, &b"a verdict\n"[..]));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug)]
pub enum Role {
    /// Run the check and [`finish`] with its report.
    Check,
    /// [`explain`](crate::supervise::explain) a fault.
    Explain,
}

struct ChildSide {
    channel: Mutex<File>,
    nonce: Nonce,
    input: Option<RawFd>,
}

static CHILD: OnceLock<ChildSide> = OnceLock::new();

/// The descriptor the supervisor handed this child beyond its channel and
/// flight recorder (the explainer's question, the explorer's listening
/// socket: [`supervise`](crate::supervise::supervise)'s `inherit`), if any.
pub fn input_fd() -> Option<RawFd> {
    CHILD.get()?.input
}

/// In a process started by [`supervise`](crate::supervise::supervise): installs its flight recorder and
/// end-of-run channel, and says what it is to do; `None` when this process
/// is not supervised.
///
/// ```
/// use cmc_world::run::child::{child_from_env, is_child};
///
/// // A process its supervisor did not start has no role.
/// assert!(child_from_env()?.is_none());
/// assert!(!is_child());
/// # Ok::<(), String>(())
/// ```
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
    let nonce = parts.next().and_then(Nonce::from_hex).ok_or_else(bad)?;
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
            nonce,
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
        if let Some(recorder) = crate::run::recorder::installed() {
            recorder.mark_culprit();
        }
        // The handler was reset: the faulting instruction runs again and
        // kills the process with the same signal (abort raises it again).
    }
    extern "C" fn on_exit() {
        if let Some(recorder) = crate::run::recorder::installed() {
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

/// Set by [`keep_faults_in_process`].
static FAULTS_KEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes a World of this supervised child keep a fault it detects itself
/// (an error code, a bad output, a memory violation) as it does outside
/// supervision, to be shown (`cmc explore`), instead of ending the child
/// with it. Crashes, hangs and exits are still the supervisor's.
pub fn keep_faults_in_process() {
    FAULTS_KEPT.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Whether a fault a World detects ends this process (a supervised child
/// that did not [keep faults in process](keep_faults_in_process)).
pub(crate) fn ends_at_fault() -> bool {
    is_child() && !FAULTS_KEPT.load(std::sync::atomic::Ordering::SeqCst)
}

/// Sends `message` to the supervisor and ends the process at once (no exit
/// handlers or destructors run: a core's cannot change anything now).
pub(crate) fn send_and_exit(message: &Message) -> ! {
    let side = CHILD.get().expect("only a supervised child sends messages");
    // Held until the process ends: the first message is the only one.
    let mut channel = side.channel.lock().unwrap_or_else(|e| e.into_inner());
    let frame = message.encode_frame(side.nonce);
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

/// Ends a supervised child at `fault`, in the step of the encoded `action`
/// (empty for the initial starts).
pub(crate) fn report_fault(fault: &Fault, action: &[u8]) -> ! {
    send_and_exit(&Message::Fault {
        fault: fault.clone(),
        action: action.to_vec(),
        walk: cmc_search::current_walk(),
    })
}
