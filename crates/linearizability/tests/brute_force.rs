//! The search against a brute-force enumeration of all orders, on random
//! small histories of every bundled spec.

use cmc_linearizability::specs::{
    KvMap, KvOp, KvRet, Queue, QueueOp, QueueRet, Register, RegisterOp, RegisterRet,
};
use cmc_linearizability::{check, Consistency, History, Operation, SequentialSpec};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Whether `b` must come after `a` in an order allowed by `consistency`.
fn must_follow<Op, Ret>(
    a: &Operation<Op, Ret>,
    b: &Operation<Op, Ret>,
    consistency: Consistency,
) -> bool {
    match consistency {
        Consistency::Linearizable => a.response.as_ref().is_some_and(|r| r.at < b.invoked_at),
        Consistency::Sequential => a.client == b.client && a.invoked_at < b.invoked_at,
    }
}

/// Tries every sequence of distinct operations that respects the order.
fn brute_force<S: SequentialSpec>(
    spec: &S,
    ops: &[Operation<S::Op, S::Ret>],
    consistency: Consistency,
) -> bool {
    fn extend<S: SequentialSpec>(
        spec: &S,
        ops: &[Operation<S::Op, S::Ret>],
        consistency: Consistency,
        used: &mut Vec<bool>,
        state: &S::State,
    ) -> bool {
        let all_completed = ops
            .iter()
            .zip(used.iter())
            .all(|(op, &used)| used || op.response.is_none());
        if all_completed {
            return true;
        }
        for next in 0..ops.len() {
            let ready = !used[next]
                && (0..ops.len()).all(|before| {
                    used[before] || !must_follow(&ops[before], &ops[next], consistency)
                });
            if !ready {
                continue;
            }
            let (after, ret) = spec.apply(state, &ops[next].op);
            if ops[next].response.as_ref().is_some_and(|r| r.value != ret) {
                continue;
            }
            used[next] = true;
            let found = extend(spec, ops, consistency, used, &after);
            used[next] = false;
            if found {
                return true;
            }
        }
        false
    }
    extend(
        spec,
        ops,
        consistency,
        &mut vec![false; ops.len()],
        &spec.init(),
    )
}

/// A random history of up to six operations by up to three clients, with
/// random (often wrong) results drawn by `op_and_ret`.
fn random_history<Op, Ret>(
    rng: &mut Pcg64,
    op_and_ret: &impl Fn(&mut Pcg64) -> (Op, Ret),
) -> History<Op, Ret> {
    let mut history = History::new();
    let clients = rng.gen_range(1..=3);
    let mut open: Vec<Option<(usize, Ret)>> = (0..clients).map(|_| None).collect();
    let mut invoked = 0;
    let total = rng.gen_range(1..=6);
    for _ in 0..20 {
        let client = rng.gen_range(0..clients);
        match open[client].take() {
            Some((id, ret)) => history.respond(id, ret),
            None if invoked < total => {
                let (op, ret) = op_and_ret(rng);
                open[client] = Some((history.invoke(client as u32, op), ret));
                invoked += 1;
            }
            None => {}
        }
    }
    history
}

fn agree<S: SequentialSpec>(spec: &S, op_and_ret: impl Fn(&mut Pcg64) -> (S::Op, S::Ret)) {
    let mut rng = Pcg64::seed_from_u64(7);
    let mut failures = [0; 2];
    for round in 0..1500 {
        let history = random_history(&mut rng, &op_and_ret);
        for (slot, consistency) in [Consistency::Linearizable, Consistency::Sequential]
            .into_iter()
            .enumerate()
        {
            let expected = brute_force(spec, history.operations(), consistency);
            let verdict = check(spec, &history, consistency);
            assert_eq!(
                verdict.is_ok(),
                expected,
                "round {round} {consistency:?}: {history:?}"
            );
            if let Some(why) = verdict.explanation() {
                failures[slot] += 1;
                let sub = |ids: &[usize]| -> Vec<Operation<S::Op, S::Ret>> {
                    ids.iter()
                        .map(|&id| {
                            let mut op = history.operations()[id].clone();
                            if op.response.as_ref().is_some_and(|r| r.at > why.prefix_end) {
                                op.response = None;
                            }
                            op
                        })
                        .collect()
                };
                assert!(!brute_force(spec, &sub(&why.conflict), consistency));
                for dropped in &why.conflict {
                    let rest: Vec<usize> = why
                        .conflict
                        .iter()
                        .copied()
                        .filter(|id| id != dropped)
                        .collect();
                    let minimal =
                        *dropped == why.failing || brute_force(spec, &sub(&rest), consistency);
                    assert!(
                        minimal,
                        "round {round}: conflict {:?} is not minimal",
                        why.conflict
                    );
                }
            }
        }
    }
    // The generator must exercise both verdicts.
    assert!(
        failures.iter().all(|&f| f > 100 && f < 1400),
        "{failures:?}"
    );
}

#[test]
fn register_agrees_with_brute_force() {
    agree(&Register, |rng| {
        let value = rng.gen_range(0..3);
        if rng.gen_bool(0.5) {
            (RegisterOp::Write(value), RegisterRet::Ack)
        } else {
            (RegisterOp::Read, RegisterRet::Value(value))
        }
    });
}

#[test]
fn queue_agrees_with_brute_force() {
    agree(&Queue, |rng| {
        let value = rng.gen_range(1..3);
        if rng.gen_bool(0.5) {
            (QueueOp::Enqueue(value), QueueRet::Ack)
        } else {
            (
                QueueOp::Dequeue,
                QueueRet::Value((value < 2).then_some(rng.gen_range(1..3))),
            )
        }
    });
}

#[test]
fn map_agrees_with_brute_force() {
    agree(&KvMap, |rng| {
        let key = rng.gen_range(0..2);
        let value = rng.gen_range(1..3);
        if rng.gen_bool(0.5) {
            (KvOp::Put(key, value), KvRet::Ack)
        } else {
            (
                KvOp::Get(key),
                KvRet::Value((value < 2).then_some(rng.gen_range(1..3))),
            )
        }
    });
}
