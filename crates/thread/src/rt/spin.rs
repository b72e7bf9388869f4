//! Spin-loop detection: a thread that keeps re-reading locations nobody writes is not making
//! progress, so it is disabled until one of those locations is written (a forced switch).

use super::op::ObjId;

/// Spin bookkeeping of one thread.
#[derive(Debug, Default)]
pub struct SpinState {
    /// Locations read since this thread's last write, with the version seen.
    reads: Vec<(ObjId, u64)>,
    /// Consecutive reads that re-read an unchanged location.
    streak: u32,
    /// Whether the thread is disabled until one of `reads` is written.
    blocked: bool,
    /// Whether the thread was found spinning when no other thread could run and was let run
    /// on (see [`SpinState::confirm`]): it is not disabled again before it makes progress.
    confirmed: bool,
}

impl SpinState {
    /// Records a read of `obj` at `version`; returns true when the streak reached `limit`
    /// re-reads per location read since the last progress (about `limit` iterations of a
    /// loop over those locations: a loop whose last iteration re-reads every location of
    /// the one before and then leaves is not blocked) and the thread becomes blocked.
    pub fn on_read(&mut self, obj: ObjId, version: u64, limit: u32) -> bool {
        match self.reads.iter_mut().find(|(o, _)| *o == obj) {
            Some((_, v)) if *v == version => self.streak += 1,
            Some(_) => {
                self.reads.clear();
                self.reads.push((obj, version));
                self.streak = 0;
            }
            None => self.reads.push((obj, version)),
        }
        if !self.confirmed && self.streak >= limit * self.reads.len() as u32 {
            self.blocked = true;
        }
        self.blocked
    }

    /// Records that this thread wrote something: it made progress.
    pub fn on_own_write(&mut self) {
        self.reset();
    }

    /// Records that another thread wrote `obj`: if this thread read it since its last
    /// progress, what its loop reads may have changed, so its streak starts again (and it is
    /// unblocked if it was spinning).
    pub fn on_foreign_write(&mut self, obj: ObjId) {
        if self.reads.iter().any(|(o, _)| *o == obj) {
            self.reset();
        }
    }

    /// Whether the thread is disabled for spinning.
    pub fn blocked(&self) -> bool {
        self.blocked
    }

    /// Lets a blocked thread run on although nothing it read has changed (nothing else can
    /// run): a loop that ends by itself, or straight-line code re-reading a location, then
    /// goes on; a real spin keeps the thread running until the step bound.
    pub fn confirm(&mut self) {
        self.blocked = false;
        self.confirmed = true;
    }

    /// Whether the thread was let run on after spinning and has made no progress since.
    pub fn confirmed(&self) -> bool {
        self.confirmed
    }

    /// The locations the thread is spinning on.
    pub fn locations(&self) -> impl Iterator<Item = ObjId> + '_ {
        self.reads.iter().map(|(o, _)| *o)
    }

    fn reset(&mut self) {
        self.reads.clear();
        self.streak = 0;
        self.blocked = false;
        self.confirmed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_limit_and_unblocks_on_write() {
        let mut s = SpinState::default();
        assert!(!s.on_read(3, 0, 2));
        assert!(!s.on_read(3, 0, 2));
        assert!(s.on_read(3, 0, 2));
        s.on_foreign_write(4);
        assert!(s.blocked());
        s.on_foreign_write(3);
        assert!(!s.blocked());
    }

    #[test]
    fn a_confirmed_thread_is_not_blocked_again_until_it_progresses() {
        let mut s = SpinState::default();
        s.on_read(3, 0, 1);
        assert!(s.on_read(3, 0, 1));
        s.confirm();
        assert!(!s.on_read(3, 0, 1) && !s.on_read(3, 0, 1) && s.confirmed());
        s.on_own_write();
        s.on_read(3, 0, 1);
        assert!(s.on_read(3, 0, 1) && !s.confirmed());
    }

    #[test]
    fn changed_value_is_progress() {
        let mut s = SpinState::default();
        s.on_read(1, 0, 2);
        s.on_read(1, 0, 2);
        assert!(!s.on_read(1, 1, 2));
        assert!(!s.on_read(1, 1, 2));
    }
}
