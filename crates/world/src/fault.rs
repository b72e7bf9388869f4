//! Faults: a core that misbehaves inside a step. A fault is never a property
//! verdict; it stops the run with the step, the event and the pre-state.

use cmc_model::Fingerprint;

/// What went wrong inside a step.
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
    /// A fixed capacity of the World was reached; the text names it.
    Capacity(String),
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
            FaultKind::Capacity(_) => "CAPACITY REACHED",
        }
    }
}

/// A fault with where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// What went wrong.
    pub kind: FaultKind,
    /// The World action whose step failed (`INIT` for the initial starts).
    pub action: String,
    /// The node, core and event, as text (empty if unknown, e.g. after a crash).
    pub event: String,
    /// Canonical bytes of the World state the action was taken from (empty for `INIT`).
    pub pre_state: Vec<u8>,
}

impl Fault {
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
                "the core died with signal {signal} ({}) inside a step",
                signal_name(*signal)
            ),
            FaultKind::Hang(millis) => format!("a step did not return within {millis} ms"),
            FaultKind::Capacity(why) => why.clone(),
        };
        writeln!(f, "{}: {detail}", self.kind.headline())?;
        writeln!(f, "  action: {}", self.action)?;
        if !self.event.is_empty() {
            writeln!(f, "  event:  {}", self.event)?;
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
        _ => "signal",
    }
}
