//! How a command ended, and the exit code that says so: 0 every property
//! holds, 1 a property failed (a violation, or a witness never reached), 2
//! bad usage, bad input, a faulty core, or a search that could not be
//! completed (one that reached its `--time-limit` included), 3 interrupted,
//! 4 stale (a trace no longer violates the property it records).

/// Exit code: every property holds.
pub const EXIT_PASS: u8 = 0;
/// Exit code: a property failed.
pub const EXIT_FAIL: u8 = 1;
/// Exit code: bad usage or bad input.
pub const EXIT_USAGE: u8 = 2;
/// Exit code: the search could not be completed (it reached its time limit).
pub const EXIT_INCOMPLETE: u8 = 2;
/// Exit code: the search was interrupted.
pub const EXIT_INTERRUPTED: u8 = 3;
/// Exit code: a trace that records a violation no longer shows it (`cmc
/// replay`; a STALE pin of `cmc corpus`): what it guarded is gone.
pub const EXIT_STALE: u8 = 4;

/// How a command ended, short of bad usage or input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Every property held.
    Pass,
    /// A property failed.
    Fail,
    /// The search was interrupted (and checkpointed, if asked).
    Interrupted,
    /// The search reached its time limit before it ended (and was
    /// checkpointed, if asked).
    TimeLimit,
    /// A trace no longer violates the property it records.
    Stale,
    /// A supervised child decided the exit code itself.
    Exit(i32),
}

impl Status {
    /// The exit code of a command that ended so.
    pub fn exit_code(self) -> u8 {
        match self {
            Status::Pass => EXIT_PASS,
            Status::Fail => EXIT_FAIL,
            Status::Interrupted => EXIT_INTERRUPTED,
            Status::TimeLimit => EXIT_INCOMPLETE,
            Status::Stale => EXIT_STALE,
            Status::Exit(code) => u8::try_from(code).unwrap_or(EXIT_USAGE),
        }
    }

    /// `Pass` when `passed`, else `Fail`.
    pub fn of(passed: bool) -> Status {
        if passed {
            Status::Pass
        } else {
            Status::Fail
        }
    }
}
