//! The search for a sequential order that explains a history: Wing and
//! Gong's backtracking over minimal operations, with Lowe's memoisation of
//! every (linearized set, spec state) pair already explored.

use std::collections::HashSet;

use crate::history::Operation;
use crate::spec::SequentialSpec;

/// Which orders may explain a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Consistency {
    /// Orders that respect real time: if `a` returned before `b` was invoked,
    /// `a` comes first.
    Linearizable,
    /// Orders that respect each client's program order only.
    Sequential,
}

/// A set of operation indices.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Bits(Box<[u64]>);

impl Bits {
    fn new(len: usize) -> Bits {
        Bits(vec![0; len.div_ceil(64)].into_boxed_slice())
    }
    fn has(&self, index: usize) -> bool {
        self.0[index / 64] & (1 << (index % 64)) != 0
    }
    fn with(&self, index: usize) -> Bits {
        let mut bits = self.clone();
        bits.0[index / 64] |= 1 << (index % 64);
        bits
    }
}

/// Whether some order of `ops` allowed by `consistency` is a legal run of
/// `spec` in which every completed operation takes effect with its recorded
/// result, and each pending one takes effect (with any result) or not at all.
pub(crate) fn explainable<S: SequentialSpec>(
    spec: &S,
    ops: &[&Operation<S::Op, S::Ret>],
    consistency: Consistency,
) -> bool {
    let mut ops = ops.to_vec();
    ops.sort_by_key(|op| op.invoked_at);
    let previous_of_client: Vec<Option<usize>> = (0..ops.len())
        .map(|index| {
            (0..index)
                .rev()
                .find(|&j| ops[j].client == ops[index].client)
        })
        .collect();
    let completed = ops.iter().filter(|op| op.response.is_some()).count();
    let mut stack = vec![(Bits::new(ops.len()), spec.init(), completed)];
    let mut seen: HashSet<(Bits, S::State)> = HashSet::new();
    while let Some((done, state, completed_left)) = stack.pop() {
        if completed_left == 0 {
            return true;
        }
        // Real time: only operations invoked before the first response of an
        // operation not yet linearized may come next (Lowe's minimal ops).
        let horizon = (0..ops.len())
            .filter(|&i| !done.has(i))
            .map(|i| ops[i].returned_at())
            .min()
            .unwrap_or(u64::MAX);
        for (index, op) in ops.iter().enumerate() {
            let eligible = !done.has(index)
                && match consistency {
                    Consistency::Linearizable => op.invoked_at < horizon,
                    Consistency::Sequential => {
                        previous_of_client[index].is_none_or(|p| done.has(p))
                    }
                };
            if !eligible {
                continue;
            }
            let (next, ret) = spec.apply(&state, &op.op);
            if op.response.as_ref().is_some_and(|r| r.value != ret) {
                continue;
            }
            let next_done = done.with(index);
            let left = completed_left - usize::from(op.response.is_some());
            if seen.insert((next_done.clone(), next.clone())) {
                stack.push((next_done, next, left));
            }
        }
    }
    false
}
