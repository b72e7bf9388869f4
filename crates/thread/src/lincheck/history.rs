//! Histories of completed operations and the linearizability check (Wing & Gong's search
//! with Lowe's memoisation of visited (linearized set, sequential state) pairs).

use super::Spec;
use std::collections::HashSet;

/// Most operations a history may have (linearized sets are `u64` masks).
pub const MAX_OPS: usize = 64;

/// One completed operation of a history.
#[derive(Clone, Debug)]
pub struct Record<Op, Ret> {
    /// The virtual thread that ran it (0: init and post parts).
    pub thread: usize,
    /// The operation.
    pub op: Op,
    /// What it returned.
    pub ret: Ret,
    /// Steps executed before it was invoked.
    pub invoked: usize,
    /// Steps executed when it returned.
    pub returned: usize,
}

impl<Op, Ret> Record<Op, Ret> {
    /// Whether `self` returned before `other` was invoked (real-time order).
    fn precedes(&self, other: &Self) -> bool {
        self.returned <= other.invoked
    }
}

/// Whether `history` (at most [`MAX_OPS`] operations) is linearizable with respect to the
/// sequential reference starting in state `init`: some total order that respects real-time
/// order gives every operation the result it returned.
pub fn linearizable<S: Spec>(init: &S, history: &[Record<S::Op, S::Ret>]) -> bool {
    assert!(
        history.len() <= MAX_OPS,
        "cmc: a history has more than {MAX_OPS} operations"
    );
    let before: Vec<u64> = history
        .iter()
        .map(|h| {
            history
                .iter()
                .enumerate()
                .filter(|(_, g)| g.precedes(h))
                .fold(0, |m, (j, _)| m | 1 << j)
        })
        .collect();
    let mut search = Search {
        history,
        before: &before,
        failed: HashSet::new(),
    };
    search.from(0, init.clone())
}

struct Search<'a, S: Spec> {
    history: &'a [Record<S::Op, S::Ret>],
    /// For each operation, the operations that precede it in real time.
    before: &'a [u64],
    /// Pairs (linearized set, state) from which no linearization exists.
    failed: HashSet<(u64, S)>,
}

impl<S: Spec> Search<'_, S> {
    fn from(&mut self, done: u64, state: S) -> bool {
        if done.count_ones() as usize == self.history.len() {
            return true;
        }
        for (i, h) in self.history.iter().enumerate() {
            if done & (1 << i) != 0 || self.before[i] & !done != 0 {
                continue;
            }
            let mut next = state.clone();
            if next.apply(&h.op) != h.ret {
                continue;
            }
            let key = (done | 1 << i, next);
            if self.failed.contains(&key) {
                continue;
            }
            if self.from(key.0, key.1.clone()) {
                return true;
            }
            self.failed.insert(key);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A register: `Some(v)` writes, `None` reads.
    #[derive(Clone, PartialEq, Eq, Hash, Default)]
    struct Reg(u8);
    impl Spec for Reg {
        type Op = Option<u8>;
        type Ret = u8;
        fn apply(&mut self, op: &Option<u8>) -> u8 {
            if let Some(v) = op {
                self.0 = *v;
            }
            self.0
        }
    }

    fn rec(
        thread: usize,
        op: Option<u8>,
        ret: u8,
        invoked: usize,
        returned: usize,
    ) -> Record<Option<u8>, u8> {
        Record {
            thread,
            op,
            ret,
            invoked,
            returned,
        }
    }

    #[test]
    fn overlapping_operations_may_take_either_order() {
        // write(1) overlaps read() -> 0: linearizable (read first).
        let h = [rec(1, Some(1), 1, 0, 4), rec(2, None, 0, 1, 3)];
        assert!(linearizable(&Reg(0), &h));
    }

    #[test]
    fn real_time_order_is_respected() {
        // write(1) returned before read() was invoked, yet read saw 0: not linearizable.
        let h = [rec(1, Some(1), 1, 0, 2), rec(2, None, 0, 3, 4)];
        assert!(!linearizable(&Reg(0), &h));
    }
}
