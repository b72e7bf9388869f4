//! Room for inserts, shared out among the workers of one pass, so that a
//! burst of new states never fills the visited set between two pauses.

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots a worker takes from the shared room at a time (fewer contended
/// updates than one per state).
const CLAIM_BLOCK: u64 = 4096;

/// Room for inserts the visited set must make before refused work can go on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wanted {
    /// What must fit for the work to go on (the largest claim refused).
    pub least: u64,
    /// What should fit so that the work goes on without pausing again: the
    /// least plus a block for every worker (so that it still fits when the
    /// others have taken their blocks first).
    pub preferred: u64,
}

impl Wanted {
    /// Exactly `inserts`, no more preferred.
    pub fn exactly(inserts: u64) -> Wanted {
        Wanted {
            least: inserts,
            preferred: inserts,
        }
    }
}

/// The inserts the visited set can take until its owner makes room
/// ([`VisitedSet::insert_room`](crate::VisitedSet::insert_room) at the
/// start of a pass), shared out among workers through [`WorkerRoom`]s.
///
/// Every insert is covered by a claim, so the sum of inserts in a pass never
/// exceeds the room. A claim that does not fit is refused and remembered in
/// [`wanted`](Self::wanted), for the owner to make that much room.
#[derive(Debug)]
pub struct InsertRoom {
    left: AtomicU64,
    /// The largest claim refused.
    refused: AtomicU64,
    /// Number of [`WorkerRoom`]s handed out.
    workers: AtomicU64,
}

impl InsertRoom {
    /// Room for `slots` inserts.
    pub fn new(slots: u64) -> InsertRoom {
        InsertRoom {
            left: AtomicU64::new(slots),
            refused: AtomicU64::new(0),
            workers: AtomicU64::new(0),
        }
    }

    /// Takes `slots` if that many are left.
    fn take(&self, slots: u64) -> bool {
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(slots)
            })
            .is_ok()
    }

    /// The room the owner must make before the refused work can go on:
    /// none if no claim was refused, else at least the largest refused
    /// claim (a room that holds it lets the first worker to claim it go on,
    /// whatever the others hold), preferably that plus a block for every
    /// worker.
    pub fn wanted(&self) -> Wanted {
        match self.refused.load(Ordering::Relaxed) {
            0 => Wanted::default(),
            refused => Wanted {
                least: refused,
                preferred: refused + CLAIM_BLOCK * self.workers.load(Ordering::Relaxed),
            },
        }
    }

    /// A worker's share, initially empty.
    pub fn worker(&self) -> WorkerRoom<'_> {
        self.workers.fetch_add(1, Ordering::Relaxed);
        WorkerRoom {
            shared: self,
            held: 0,
            claimed: 0,
        }
    }
}

/// One worker's share of an [`InsertRoom`].
#[derive(Debug)]
pub struct WorkerRoom<'a> {
    shared: &'a InsertRoom,
    /// Slots taken from the shared room and not yet claimed.
    held: u64,
    /// Slots of the last claim not yet settled.
    claimed: u64,
}

impl WorkerRoom<'_> {
    /// Claims room for up to `inserts` new fingerprints (a batch about to be
    /// inserted); `false` if the shared room cannot cover them, in which case
    /// nothing of the batch may be inserted.
    pub fn claim(&mut self, inserts: u64) -> bool {
        if inserts > self.held {
            let missing = inserts - self.held;
            let taken = [missing.max(CLAIM_BLOCK), missing]
                .into_iter()
                .find(|&slots| self.shared.take(slots));
            match taken {
                Some(slots) => self.held += slots,
                None => {
                    self.shared.refused.fetch_max(inserts, Ordering::Relaxed);
                    return false;
                }
            }
        }
        self.held -= inserts;
        self.claimed = inserts;
        true
    }

    /// Settles the last claim: `inserted` of its slots were used (the rest
    /// were duplicates), the others are held for later claims.
    pub fn settle(&mut self, inserted: u64) {
        debug_assert!(inserted <= self.claimed, "a claim covers every insert");
        self.held += self.claimed.saturating_sub(inserted);
        self.claimed = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_never_exceed_the_room() {
        let room = InsertRoom::new(10_000);
        let mut first = room.worker();
        let mut second = room.worker();
        assert!(first.claim(3));
        first.settle(1);
        assert!(second.claim(5000));
        second.settle(5000);
        // first holds 4095 of its block, 904 are left shared: 4999 at most.
        assert!(!first.claim(5000));
        let wanted = Wanted {
            least: 5000,
            preferred: 5000 + 2 * CLAIM_BLOCK,
        };
        assert_eq!(room.wanted(), wanted);
        assert!(first.claim(4999));
        first.settle(4999);
        assert!(!second.claim(1));
        assert_eq!(room.wanted(), wanted);
    }

    #[test]
    fn unused_claims_are_kept_for_later() {
        let room = InsertRoom::new(100);
        let mut worker = room.worker();
        for _ in 0..1000 {
            assert!(worker.claim(50));
            worker.settle(0);
        }
        assert_eq!(room.wanted(), Wanted::default());
    }
}
