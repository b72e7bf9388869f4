//! Controlled time: inside an execution [`Instant::now`] reads the execution's virtual
//! clock, which starts at zero and advances only by `thread::sleep` and by operations that
//! time out (`park_timeout`, `recv_timeout`, `Condvar::wait_timeout`), so a re-run of a
//! schedule reads the same times. Outside an execution it is `std::time::Instant`.

use crate::rt;
use std::ops::{Add, Sub};
pub use std::time::Duration;

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
