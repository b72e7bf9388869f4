//! Verdicts, and the minimal explanation of a failure.

use std::collections::BTreeMap;

use crate::history::{History, OpId, Operation};
use crate::search::{explainable, Consistency};
use crate::spec::SequentialSpec;

/// Why a history is not explainable, made as small as the search can.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// The partition (see [`SequentialSpec::partition`]) the failure is in.
    pub partition: Option<u64>,
    /// The history up to this step already fails (operations that returned
    /// later count as pending there). For linearizability it is the shortest
    /// such prefix; sequential consistency is not prefix-closed (a later write
    /// may explain an earlier read), so there it is the whole history.
    pub prefix_end: u64,
    /// The operation whose response ends that prefix: no explanation of the
    /// operations before it survives its result.
    pub failing: OpId,
    /// A set of operations that cannot be explained together, from which no
    /// operation can be dropped without the rest becoming explainable
    /// (ascending ids; it contains `failing`).
    pub conflict: Vec<OpId>,
}

impl Explanation {
    /// The conflict as text, one operation per line, e.g.
    /// `#3 client 1 Read -> Value(0) [steps 4..5]`.
    pub fn describe<Op: std::fmt::Debug, Ret: std::fmt::Debug>(
        &self,
        history: &History<Op, Ret>,
    ) -> String {
        let mut text = format!(
            "not explainable by step {} (operation #{}); conflicting operations:\n",
            self.prefix_end, self.failing
        );
        for &id in &self.conflict {
            let op = &history.operations()[id];
            let (ret, end) = match &op.response {
                Some(r) => (format!("{:?}", r.value), r.at.to_string()),
                None => ("(pending)".into(), "-".into()),
            };
            text += &format!(
                "  #{id} client {} {:?} -> {ret} [steps {}..{end}]\n",
                op.client, op.op, op.invoked_at
            );
        }
        text
    }
}

/// The result of [`check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Some allowed order explains the history.
    Ok,
    /// No allowed order does.
    Violated(Explanation),
}

impl Verdict {
    /// Whether the history is explainable.
    pub fn is_ok(&self) -> bool {
        *self == Verdict::Ok
    }

    /// The explanation of a violation.
    pub fn explanation(&self) -> Option<&Explanation> {
        match self {
            Verdict::Ok => None,
            Verdict::Violated(why) => Some(why),
        }
    }
}

/// Checks `history` against `spec` under `consistency`.
///
/// For [`Consistency::Linearizable`] and a spec that partitions every
/// operation, each partition is checked alone (linearizability is local).
pub fn check<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    consistency: Consistency,
) -> Verdict {
    for (partition, ids) in partitions(spec, history, consistency) {
        let ops: Vec<&Operation<S::Op, S::Ret>> =
            ids.iter().map(|&id| &history.operations()[id]).collect();
        if !explainable(spec, &ops, consistency) {
            return Verdict::Violated(explain(spec, history, &ids, partition, consistency));
        }
    }
    Verdict::Ok
}

/// The operation ids of each partition, in id order.
fn partitions<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    consistency: Consistency,
) -> Vec<(Option<u64>, Vec<OpId>)> {
    let all = || vec![(None, (0..history.len()).collect())];
    if consistency != Consistency::Linearizable {
        return all();
    }
    let mut by_key: BTreeMap<u64, Vec<OpId>> = BTreeMap::new();
    for (id, op) in history.operations().iter().enumerate() {
        match spec.partition(&op.op) {
            Some(key) => by_key.entry(key).or_default().push(id),
            None => return all(),
        }
    }
    by_key
        .into_iter()
        .map(|(key, ids)| (Some(key), ids))
        .collect()
}

/// The explanation for the operations `ids`, which are not explainable.
fn explain<S: SequentialSpec>(
    spec: &S,
    history: &History<S::Op, S::Ret>,
    ids: &[OpId],
    partition: Option<u64>,
    consistency: Consistency,
) -> Explanation {
    let fails = |end: u64, members: &[OpId]| {
        let ops: Vec<Operation<S::Op, S::Ret>> = members
            .iter()
            .map(|&id| &history.operations()[id])
            .filter(|op| op.invoked_at <= end)
            .map(|op| truncated(op, end))
            .collect();
        let refs: Vec<&Operation<S::Op, S::Ret>> = ops.iter().collect();
        !explainable(spec, &refs, consistency)
    };
    let mut responses: Vec<(u64, OpId)> = ids
        .iter()
        .filter_map(|&id| {
            history.operations()[id]
                .response
                .as_ref()
                .map(|r| (r.at, id))
        })
        .collect();
    responses.sort_unstable();
    let (prefix_end, failing) = match consistency {
        // Prefix-closed: the first failing response is found by bisection.
        Consistency::Linearizable => {
            let first = responses.partition_point(|&(at, _)| !fails(at, ids));
            responses[first]
        }
        Consistency::Sequential => *responses.last().expect("a failing history has a response"),
    };
    let mut conflict: Vec<OpId> = ids
        .iter()
        .copied()
        .filter(|&id| history.operations()[id].invoked_at <= prefix_end)
        .collect();
    // Drop operations one at a time until none can go (a removal may enable
    // an earlier one again, hence the loop to a fixed point).
    let mut shrunk = true;
    while shrunk {
        shrunk = false;
        for candidate in conflict.clone() {
            let without: Vec<OpId> = conflict
                .iter()
                .copied()
                .filter(|&id| id != candidate)
                .collect();
            if candidate != failing && fails(prefix_end, &without) {
                conflict = without;
                shrunk = true;
            }
        }
    }
    debug_assert!(fails(prefix_end, &conflict));
    Explanation {
        partition,
        prefix_end,
        failing,
        conflict,
    }
}

/// `op` as seen at step `end`: a response after `end` has not arrived yet.
fn truncated<Op: Clone, Ret: Clone>(op: &Operation<Op, Ret>, end: u64) -> Operation<Op, Ret> {
    let mut op = op.clone();
    if op.response.as_ref().is_some_and(|r| r.at > end) {
        op.response = None;
    }
    op
}
