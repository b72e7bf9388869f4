//! Controlled time: inside an execution [`Instant::now`] reads the execution's virtual
//! clock, which starts at zero and advances only by `thread::sleep` and by operations that
//! time out (`park_timeout`, `recv_timeout`, `Condvar::wait_timeout`), so a re-run of a
//! schedule reads the same times. [`SystemTime::now`] reads the same clock, starting at
//! [`VIRTUAL_START_SECS`] (2000-01-01T00:00:00Z). Outside an execution both are std's.

use crate::rt;
use std::ops::{Add, Sub};
pub use std::time::{Duration, SystemTimeError};

/// The wall-clock time at which every execution starts, in seconds after the Unix epoch
/// (2000-01-01T00:00:00Z), so that `SystemTime::now()` replays exactly.
pub const VIRTUAL_START_SECS: u64 = 946_684_800;

/// `std::time::UNIX_EPOCH`.
pub const UNIX_EPOCH: SystemTime = SystemTime(std::time::UNIX_EPOCH);

/// A wall-clock time with the API of `std::time::SystemTime`: inside an execution `now` is
/// [`VIRTUAL_START_SECS`] after the Unix epoch plus the execution's virtual time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SystemTime(std::time::SystemTime);

impl SystemTime {
    /// `std::time::UNIX_EPOCH`.
    pub const UNIX_EPOCH: SystemTime = UNIX_EPOCH;

    /// The current time: virtual inside an execution (not a switch point).
    pub fn now() -> Self {
        match rt::with(|st| st.elapsed) {
            Some(d) => UNIX_EPOCH + Duration::from_secs(VIRTUAL_START_SECS) + d,
            None => SystemTime(std::time::SystemTime::now()),
        }
    }

    /// Time from `earlier` to `self`; an error if `earlier` is later.
    pub fn duration_since(&self, earlier: SystemTime) -> Result<Duration, SystemTimeError> {
        self.0.duration_since(earlier.0)
    }

    /// Time since `self` (by `now`); an error if `self` is later.
    pub fn elapsed(&self) -> Result<Duration, SystemTimeError> {
        SystemTime::now().duration_since(*self)
    }

    /// `self + d`, if representable.
    pub fn checked_add(&self, d: Duration) -> Option<SystemTime> {
        self.0.checked_add(d).map(SystemTime)
    }

    /// `self - d`, if representable.
    pub fn checked_sub(&self, d: Duration) -> Option<SystemTime> {
        self.0.checked_sub(d).map(SystemTime)
    }

    /// The std value.
    pub fn into_std(self) -> std::time::SystemTime {
        self.0
    }
}

impl Add<Duration> for SystemTime {
    type Output = SystemTime;
    fn add(self, d: Duration) -> SystemTime {
        SystemTime(self.0 + d)
    }
}

impl Sub<Duration> for SystemTime {
    type Output = SystemTime;
    fn sub(self, d: Duration) -> SystemTime {
        SystemTime(self.0 - d)
    }
}

/// A point in time with the API of `std::time::Instant` (virtual inside an execution).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(Repr);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Repr {
    /// Virtual time since the start of the execution.
    Virtual(Duration),
    Real(std::time::Instant),
}

impl Instant {
    /// The current time: the execution's virtual clock inside one (not a switch point).
    pub fn now() -> Self {
        match rt::with(|st| st.elapsed) {
            Some(d) => Instant(Repr::Virtual(d)),
            None => Instant(Repr::Real(std::time::Instant::now())),
        }
    }

    /// Time from `earlier` to `self`, zero if `earlier` is later. Panics if one instant is
    /// virtual and the other real (taken inside and outside an execution).
    pub fn duration_since(&self, earlier: Instant) -> Duration {
        match (self.0, earlier.0) {
            (Repr::Virtual(a), Repr::Virtual(b)) => a.saturating_sub(b),
            (Repr::Real(a), Repr::Real(b)) => a.saturating_duration_since(b),
            _ => panic!(
                "cmc: an Instant taken inside a checked execution compared with one taken outside"
            ),
        }
    }

    /// Like `duration_since` (saturating).
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        self.duration_since(earlier)
    }

    /// Time since `self`.
    pub fn elapsed(&self) -> Duration {
        Instant::now().duration_since(*self)
    }

    /// `self + d`, if representable.
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        Some(Instant(match self.0 {
            Repr::Virtual(v) => Repr::Virtual(v.checked_add(d)?),
            Repr::Real(r) => Repr::Real(r.checked_add(d)?),
        }))
    }

    /// `self - d`, if representable.
    pub fn checked_sub(&self, d: Duration) -> Option<Instant> {
        Some(Instant(match self.0 {
            Repr::Virtual(v) => Repr::Virtual(v.checked_sub(d)?),
            Repr::Real(r) => Repr::Real(r.checked_sub(d)?),
        }))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        self.checked_add(d)
            .expect("overflow when adding a duration to an instant")
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, d: Duration) -> Instant {
        self.checked_sub(d)
            .expect("overflow when subtracting a duration from an instant")
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, other: Instant) -> Duration {
        self.duration_since(other)
    }
}
