//! Faults: a core that misbehaves inside a step (or while it is loaded or
//! describes something). A fault is never a property verdict; it stops the
//! run with the step, the event and the pre-state.

use cmc_model::Fingerprint;

/// What went wrong inside a step.
///
/// ```
/// use cmc_world::FaultKind;
///
/// let kind = FaultKind::Hang(5000);
/// assert_eq!(kind.headline(), "CORE HUNG");
/// // The supervised child sends a kind to the supervisor as a tag and a text.
/// let (tag, text) = kind.to_parts();
/// assert_eq!(FaultKind::from_parts(tag, text), Some(kind));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultKind {
    /// The core returned an error code or overflowed its outputs.
    CoreError(String),
    /// The same step run twice from a copy gave different results.
    NonDeterminism(String),
    /// The core emitted an output the environment cannot carry out.
    BadOutput(String),
    /// The process died with this signal inside the step (see `supervise`).
    Signal(i32),
    /// The step did not return within this many milliseconds (see `supervise`).
    Hang(u64),
    /// The process ended with this exit code, without its report (see `supervise`).
    Exited(i32),
    /// The step wrote outside the memory it was given, or into its read-only
    /// durable part, event or configuration; the text says where.
    Memory(String),
    /// A fixed capacity of the World was reached; the text names it, the
    /// node and what would have exceeded it.
    Capacity(String),
    /// The nodes declared interchangeable (`symmetry=`) do not behave
    /// alike: a step and its renamed image lead to states that are not
    /// renamings of each other; the text names the nodes and the step.
    NotSymmetric(String),
}

impl FaultKind {
    /// Upper-case headline, e.g. `NON-DETERMINISM`.
    pub fn headline(&self) -> &'static str {
        match self {
            FaultKind::CoreError(_) => "CORE ERROR",
            FaultKind::NonDeterminism(_) => "NON-DETERMINISM",
            FaultKind::BadOutput(_) => "BAD OUTPUT",
            FaultKind::Signal(_) => "CORE CRASHED",
            FaultKind::Hang(_) => "CORE HUNG",
            FaultKind::Exited(_) => "CORE EXITED",
            FaultKind::Memory(_) => "CORE MEMORY VIOLATION",
            FaultKind::Capacity(_) => "CAPACITY REACHED",
            FaultKind::NotSymmetric(_) => "NOT A SYMMETRY",
        }
    }
}

impl FaultKind {
    /// A tag and a text that [`from_parts`](Self::from_parts) turns back into the kind.
    pub fn to_parts(&self) -> (u8, String) {
        match self {
            FaultKind::CoreError(why) => (0, why.clone()),
            FaultKind::NonDeterminism(why) => (1, why.clone()),
            FaultKind::BadOutput(why) => (2, why.clone()),
            FaultKind::Signal(signal) => (3, signal.to_string()),
            FaultKind::Hang(millis) => (4, millis.to_string()),
            FaultKind::Exited(code) => (5, code.to_string()),
            FaultKind::Memory(why) => (6, why.clone()),
            FaultKind::Capacity(why) => (7, why.clone()),
            FaultKind::NotSymmetric(why) => (8, why.clone()),
        }
    }

    /// The kind [`to_parts`](Self::to_parts) gave `tag` and `text` for.
    pub fn from_parts(tag: u8, text: String) -> Option<FaultKind> {
        Some(match tag {
            0 => FaultKind::CoreError(text),
            1 => FaultKind::NonDeterminism(text),
            2 => FaultKind::BadOutput(text),
            3 => FaultKind::Signal(text.parse().ok()?),
            4 => FaultKind::Hang(text.parse().ok()?),
            5 => FaultKind::Exited(text.parse().ok()?),
            6 => FaultKind::Memory(text),
            7 => FaultKind::Capacity(text),
            8 => FaultKind::NotSymmetric(text),
            _ => return None,
        })
    }
}

/// A fault with where it happened.
///
/// # Example
///
/// A core that returns an error code: the World records the fault and the
/// verdict is not a pass.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
/// use cmc_world::{FaultKind, TypedCore, World, WorldSpec};
///
/// struct Refuses;
/// impl TypedCore for Refuses {
///     type Durable = u32;
///     type Volatile = u32;
///     fn name(&self) -> &str { "refuses" }
///     fn step(&self, _: &Config, _: &u32, _: &mut u32, event: &Event,
///             _: &mut Outputs) -> Result<(), CoreError> {
///         match event.kind() {
///             Some(EventKind::Client) => Err(CoreError::Code(7)),
///             _ => Ok(()),
///         }
///     }
/// }
///
/// let spec = WorldSpec::builder(Arc::new(Refuses), 1).requests(1).build()?;
/// let checker = Checker::new(World::new(spec)).workers(1);
/// let outcome = checker.run();
/// assert!(matches!(outcome.verdict, Verdict::Error { .. }), "{:?}", outcome.verdict);
/// let fault = checker.model().fault().expect("the step failed");
/// assert!(matches!(fault.kind, FaultKind::CoreError(_)));
/// assert_eq!(fault.kind.headline(), "CORE ERROR");
/// assert!(fault.in_step() && fault.action.starts_with("CLIENT"), "{fault}");
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The World action whose step failed (`INIT` for the initial starts;
    /// empty for a fault outside any step, which `event` then describes).
    pub action: String,
    /// The node, core and event, as text (empty if unknown); outside a step,
    /// what the process was doing, e.g. `while loading the core ./libx.so`.
    pub event: String,
    /// Canonical bytes of the World state the action was taken from (empty for `INIT`).
    pub pre_state: Vec<u8>,
}

impl Fault {
    /// A fault outside any step: `context` says what the process was doing.
    pub(crate) fn outside_step(kind: FaultKind, context: impl Into<String>) -> Fault {
        Fault {
            kind,
            action: String::new(),
            event: context.into(),
            pre_state: Vec::new(),
        }
    }

    /// Whether the fault happened inside a step (or the initial starts).
    pub fn in_step(&self) -> bool {
        !self.action.is_empty()
    }

    fn place(&self) -> &'static str {
        if self.in_step() {
            "inside a step"
        } else {
            "outside any step"
        }
    }

    /// The fingerprint of the pre-state, as the search computes it.
    pub fn pre_state_fingerprint(&self) -> Fingerprint {
        Fingerprint::of_bytes(&self.pre_state)
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let detail = match &self.kind {
            FaultKind::CoreError(why) => why.clone(),
            FaultKind::NonDeterminism(why) => {
                format!("the same step run twice from a copy gave different results: {why}")
            }
            FaultKind::BadOutput(why) => why.clone(),
            FaultKind::Signal(signal) => format!(
                "the core died with signal {signal} ({}) {}",
                signal_name(*signal),
                self.place()
            ),
            FaultKind::Hang(millis) => {
                format!(
                    "the core did not return within {millis} ms {}",
                    self.place()
                )
            }
            FaultKind::Exited(code) => format!(
                "the core ended the checking process with exit code {code} {}; \
                 the verdict is void (a core must never exit)",
                self.place()
            ),
            FaultKind::Memory(why) | FaultKind::Capacity(why) | FaultKind::NotSymmetric(why) => {
                why.clone()
            }
        };
        writeln!(f, "{}: {detail}", self.kind.headline())?;
        if self.action.is_empty() {
            writeln!(f, "  {}", self.event)?;
        } else {
            writeln!(f, "  action: {}", self.action)?;
            if !self.event.is_empty() {
                writeln!(f, "  event:  {}", self.event)?;
            }
        }
        if !self.pre_state.is_empty() {
            writeln!(
                f,
                "  pre-state fingerprint: {}",
                self.pre_state_fingerprint()
            )?;
        }
        Ok(())
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGABRT => "SIGABRT",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        _ => "signal",
    }
}
