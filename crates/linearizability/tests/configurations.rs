//! `Linearizations`, the event-by-event check, against the whole-history
//! search on random histories of every bundled spec: the same verdict on
//! every prefix, and two histories it merges (same bytes) have the same
//! verdict on every continuation tried.

use std::collections::BTreeMap;

use cmc_linearizability::specs::{
    KvMap, KvOp, KvRet, Queue, QueueOp, QueueRet, Register, RegisterOp, RegisterRet,
};
use cmc_linearizability::{
    check, Consistency, History, Linearizations, OpKey, Operation, Response, SequentialSpec,
};
use cmc_model::Encode;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// One event of a history: operations are named by key.
#[derive(Clone, Debug)]
enum Event<Op, Ret> {
    Invoke(OpKey, Op),
    Respond(OpKey, Ret),
    /// The operation was refused: it never took effect and leaves the history.
    Withdraw(OpKey),
}

/// A history of `S` as its events.
type Events<S> = Vec<Event<<S as SequentialSpec>::Op, <S as SequentialSpec>::Ret>>;

/// Draws operations and results for one spec.
trait Draw: SequentialSpec {
    fn op(&self, rng: &mut Pcg64) -> Self::Op;
    fn ret(&self, op: &Self::Op, rng: &mut Pcg64) -> Self::Ret;
}

impl Draw for Register {
    fn op(&self, rng: &mut Pcg64) -> RegisterOp {
        match rng.gen_range(0..3) {
            0 => RegisterOp::Read,
            _ => RegisterOp::Write(rng.gen_range(1..3)),
        }
    }
    fn ret(&self, op: &RegisterOp, rng: &mut Pcg64) -> RegisterRet {
        match op {
            RegisterOp::Read => RegisterRet::Value(rng.gen_range(0..3)),
            RegisterOp::Write(_) => RegisterRet::Ack,
        }
    }
}

impl Draw for KvMap {
    fn op(&self, rng: &mut Pcg64) -> KvOp {
        let key = rng.gen_range(0..2);
        match rng.gen_range(0..2) {
            0 => KvOp::Get(key),
            _ => KvOp::Put(key, rng.gen_range(1..3)),
        }
    }
    fn ret(&self, op: &KvOp, rng: &mut Pcg64) -> KvRet {
        match op {
            KvOp::Get(_) => KvRet::Value(rng.gen_range(0..3u64).checked_sub(1)),
            KvOp::Put(..) => KvRet::Ack,
        }
    }
}

impl Draw for Queue {
    fn op(&self, rng: &mut Pcg64) -> QueueOp {
        match rng.gen_range(0..2) {
            0 => QueueOp::Dequeue,
            _ => QueueOp::Enqueue(rng.gen_range(1..3)),
        }
    }
    fn ret(&self, op: &QueueOp, rng: &mut Pcg64) -> QueueRet {
        match op {
            QueueOp::Dequeue => QueueRet::Value(rng.gen_range(0..3u64).checked_sub(1)),
            QueueOp::Enqueue(_) => QueueRet::Ack,
        }
    }
}

/// `len` random events after `prefix` (whose pending operations they may
/// answer); new operations get keys from `first_key` on.
fn random_events<S: Draw>(
    spec: &S,
    rng: &mut Pcg64,
    prefix: &[Event<S::Op, S::Ret>],
    first_key: OpKey,
    len: usize,
) -> Vec<Event<S::Op, S::Ret>> {
    let mut pending: BTreeMap<OpKey, S::Op> = BTreeMap::new();
    for event in prefix {
        match event {
            Event::Invoke(key, op) => drop(pending.insert(*key, op.clone())),
            Event::Respond(key, _) | Event::Withdraw(key) => drop(pending.remove(key)),
        }
    }
    let mut next_key = first_key;
    let mut events = Vec::new();
    for _ in 0..len {
        let answer = !pending.is_empty() && rng.gen_bool(0.5);
        if answer {
            let key = *pending.keys().nth(rng.gen_range(0..pending.len())).unwrap();
            let op = pending.remove(&key).unwrap();
            events.push(if rng.gen_bool(0.1) {
                Event::Withdraw(key)
            } else {
                Event::Respond(key, spec.ret(&op, rng))
            });
        } else {
            let op = spec.op(rng);
            pending.insert(next_key, op.clone());
            events.push(Event::Invoke(next_key, op));
            next_key += 1;
        }
    }
    events
}

/// The history of `events`: event `i` happens at step `i`; a withdrawn
/// operation is left out.
fn history_of<S: SequentialSpec>(events: &[Event<S::Op, S::Ret>]) -> History<S::Op, S::Ret> {
    let mut history = History::new();
    for (at, event) in events.iter().enumerate() {
        let Event::Invoke(key, op) = event else {
            continue;
        };
        let answer = events[at..]
            .iter()
            .enumerate()
            .find_map(|(offset, later)| match later {
                Event::Respond(k, ret) if k == key => Some(Some((at + offset, ret.clone()))),
                Event::Withdraw(k) if k == key => Some(None),
                _ => None,
            });
        let response = match answer {
            Some(None) => continue,
            Some(Some((at, value))) => Some(Response {
                at: at as u64,
                value,
            }),
            None => None,
        };
        history.push(Operation {
            client: *key,
            op: op.clone(),
            invoked_at: at as u64,
            response,
        });
    }
    history
}

/// `events` fed to `Linearizations` one at a time.
fn fed<S: SequentialSpec>(spec: &S, events: &[Event<S::Op, S::Ret>]) -> Linearizations<S>
where
    S::State: Ord,
    S::Op: Ord,
    S::Ret: Ord,
{
    let mut lin = Linearizations::new(spec);
    for event in events {
        feed(spec, &mut lin, event);
    }
    lin
}

fn feed<S: SequentialSpec>(spec: &S, lin: &mut Linearizations<S>, event: &Event<S::Op, S::Ret>)
where
    S::State: Ord,
    S::Op: Ord,
    S::Ret: Ord,
{
    match event {
        Event::Invoke(key, op) => lin.invoke(*key, op.clone()),
        Event::Respond(key, ret) => lin.respond(spec, *key, ret),
        Event::Withdraw(key) => lin.withdraw(spec, *key),
    }
}

fn linearizable<S: SequentialSpec>(spec: &S, events: &[Event<S::Op, S::Ret>]) -> bool {
    check(spec, &history_of::<S>(events), Consistency::Linearizable).is_ok()
}

/// Every prefix of `histories` random histories: the same verdict both ways;
/// returns how many prefixes were not linearizable (so a run that never
/// meets a violation is noticed).
fn same_verdicts_on_every_prefix<S: Draw>(spec: &S, seed: u64, histories: usize) -> usize
where
    S::State: Ord,
    S::Op: Ord,
    S::Ret: Ord,
{
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut violations = 0;
    for _ in 0..histories {
        let len = rng.gen_range(1..10);
        let events = random_events(spec, &mut rng, &[], 0, len);
        let mut lin = Linearizations::new(spec);
        for end in 1..=events.len() {
            feed(spec, &mut lin, &events[end - 1]);
            let expected = linearizable(spec, &events[..end]);
            assert_eq!(
                lin.is_linearizable(),
                expected,
                "{:?}\nconfigurations {lin:?}",
                &events[..end]
            );
            violations += usize::from(!expected);
        }
    }
    violations
}

#[test]
fn every_prefix_gets_the_whole_history_verdict() {
    for (name, violations) in [
        (
            "register",
            same_verdicts_on_every_prefix(&Register, 1, 1500),
        ),
        ("kv", same_verdicts_on_every_prefix(&KvMap, 2, 1500)),
        ("queue", same_verdicts_on_every_prefix(&Queue, 3, 1500)),
    ] {
        assert!(violations > 100, "{name}: only {violations} violations met");
    }
}

/// Random histories grouped by their `Linearizations` bytes; within a group,
/// random continuations must get the same whole-history verdict for every
/// member. Returns how many groups of several histories were compared, so
/// the caller sees merges happened.
fn merged_histories_have_the_same_futures<S: Draw>(spec: &S, seed: u64) -> usize
where
    S::State: Encode + Ord,
    S::Op: Encode + Ord,
    S::Ret: Encode + Ord,
{
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut groups: BTreeMap<Vec<u8>, Vec<Events<S>>> = BTreeMap::new();
    let histories = 3000;
    for _ in 0..histories {
        let len = rng.gen_range(2..7);
        let events = random_events(spec, &mut rng, &[], 0, len);
        let lin = fed(spec, &events);
        if lin.is_linearizable() {
            groups.entry(lin.to_bytes()).or_default().push(events);
        }
    }
    let merged: Vec<_> = groups
        .values()
        .filter(|members| members.len() > 1)
        .collect();
    for members in &merged {
        for _ in 0..8 {
            let len = rng.gen_range(1..5);
            let continuation = random_events(spec, &mut rng, &members[0], 1000, len);
            let verdicts: Vec<bool> = members
                .iter()
                .map(|history| {
                    linearizable(spec, &[history.clone(), continuation.clone()].concat())
                })
                .collect();
            assert!(
                verdicts.iter().all(|&v| v == verdicts[0]),
                "merged histories {members:?} disagree after {continuation:?}: {verdicts:?}"
            );
        }
    }
    merged.len()
}

#[test]
fn histories_with_the_same_configurations_have_the_same_futures() {
    for (name, merged) in [
        (
            "register",
            merged_histories_have_the_same_futures(&Register, 4),
        ),
        ("kv", merged_histories_have_the_same_futures(&KvMap, 5)),
        ("queue", merged_histories_have_the_same_futures(&Queue, 6)),
    ] {
        assert!(
            merged > 50,
            "{name}: only {merged} groups of merged histories"
        );
    }
}

#[test]
fn a_pending_write_that_a_read_saw_is_not_merged_with_one_it_did_not() {
    use Event::{Invoke, Respond};
    use RegisterOp::{Read, Write};
    // Both: write(1) pending. In `seen`, a read returned 1, so the write has
    // taken effect; in `unseen` nothing did.
    let seen = [
        Invoke(0, Write(1)),
        Invoke(1, Read),
        Respond(1, RegisterRet::Value(1)),
    ];
    let unseen = [
        Invoke(0, Write(1)),
        Invoke(1, Read),
        Respond(1, RegisterRet::Value(0)),
    ];
    let (a, b) = (fed(&Register, &seen), fed(&Register, &unseen));
    assert!(a.is_linearizable() && b.is_linearizable());
    assert_ne!(a.to_bytes(), b.to_bytes());
    // The continuation that tells them apart: a later read of 0.
    let later = [Invoke(2, Read), Respond(2, RegisterRet::Value(0))];
    assert!(!linearizable(&Register, &[&seen[..], &later].concat()));
    assert!(linearizable(&Register, &[&unseen[..], &later].concat()));
}

#[test]
fn the_bytes_decode_to_the_same_configurations() {
    let mut rng = Pcg64::seed_from_u64(7);
    for _ in 0..200 {
        let events = random_events(&Queue, &mut rng, &[], 0, 6);
        let lin = fed(&Queue, &events);
        let bytes = lin.to_bytes();
        let back = Linearizations::<Queue>::decode_exact(&bytes).unwrap();
        assert_eq!(back, lin);
        assert_eq!(
            Linearizations::<Queue>::encoded_is_linearizable(&bytes),
            Ok(lin.is_linearizable())
        );
    }
}
