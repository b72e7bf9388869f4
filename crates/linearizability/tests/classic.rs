//! Known linearizable and non-linearizable histories.

use cmc_linearizability::specs::{
    KvMap, KvOp, KvRet, Queue, QueueOp, QueueRet, Register, RegisterOp, RegisterRet,
};
use cmc_linearizability::{check, Consistency, History};

const LIN: Consistency = Consistency::Linearizable;
const SEQ: Consistency = Consistency::Sequential;

#[test]
fn stale_read_after_completed_write_is_not_linearizable() {
    let mut h = History::new();
    let w = h.invoke(0, RegisterOp::Write(1));
    h.respond(w, RegisterRet::Ack);
    let r = h.invoke(1, RegisterOp::Read);
    h.respond(r, RegisterRet::Value(0));
    let verdict = check(&Register, &h, LIN);
    let why = verdict.explanation().expect("stale read");
    assert_eq!((why.failing, why.conflict.clone()), (r, vec![w, r]));
    assert_eq!(why.prefix_end, 3);
    assert!(why.describe(&h).contains("#1 client 1 Read -> Value(0)"));
    // Without real time, the read may come first.
    assert!(check(&Register, &h, SEQ).is_ok());
}

#[test]
fn concurrent_read_may_see_either_value() {
    for seen in [0, 1] {
        let mut h = History::new();
        let w = h.invoke(0, RegisterOp::Write(1));
        let r = h.invoke(1, RegisterOp::Read);
        h.respond(r, RegisterRet::Value(seen));
        h.respond(w, RegisterRet::Ack);
        assert!(check(&Register, &h, LIN).is_ok(), "read of {seen}");
    }
}

#[test]
fn pending_write_may_or_may_not_take_effect() {
    for seen in [[0, 1], [1, 1], [0, 0]] {
        let mut h = History::new();
        h.invoke(0, RegisterOp::Write(1)); // never returns
        for value in seen {
            let r = h.invoke(1, RegisterOp::Read);
            h.respond(r, RegisterRet::Value(value));
        }
        assert!(check(&Register, &h, LIN).is_ok(), "reads {seen:?}");
    }
    // But once seen, it cannot be unseen.
    let mut h = History::new();
    h.invoke(0, RegisterOp::Write(1));
    let first = h.invoke(1, RegisterOp::Read);
    h.respond(first, RegisterRet::Value(1));
    let second = h.invoke(1, RegisterOp::Read);
    h.respond(second, RegisterRet::Value(0));
    let why = check(&Register, &h, LIN)
        .explanation()
        .cloned()
        .expect("unseen");
    // Minimal sets that contain the failing read: the pending write is not
    // needed, since a read of 1 alone needs an explanation too.
    assert_eq!((why.failing, why.conflict), (second, vec![first, second]));
    // The read of a value no one wrote fails even with one read.
    assert!(check(&Register, &h, SEQ).explanation().is_some());
}

#[test]
fn queue_dequeuing_in_the_wrong_order_is_not_linearizable() {
    let mut h = History::new();
    let one = h.invoke(0, QueueOp::Enqueue(1));
    h.respond(one, QueueRet::Ack);
    let two = h.invoke(0, QueueOp::Enqueue(2));
    h.respond(two, QueueRet::Ack);
    let noise = h.invoke(2, QueueOp::Enqueue(3));
    let deq = h.invoke(1, QueueOp::Dequeue);
    h.respond(deq, QueueRet::Value(Some(2)));
    h.respond(noise, QueueRet::Ack);
    let why = check(&Queue, &h, LIN).explanation().cloned().expect("FIFO");
    assert_eq!((why.failing, why.prefix_end), (deq, 6));
    // A dequeue of 2 with nothing dequeued before needs the enqueue of 2 to
    // come first, and then 1 is ahead of it: in a minimal conflict, the
    // enqueues are implied (the dequeue alone is already unexplainable).
    assert_eq!(why.conflict, vec![deq]);
    // Once 1 is gone, 2 is the right answer.
    let mut h2 = h.clone();
    let first = h2.invoke(3, QueueOp::Dequeue);
    h2.respond(first, QueueRet::Value(Some(1)));
    assert!(check(&Queue, &h2, LIN).explanation().is_some());
    let mut fixed = History::new();
    for op in [
        QueueOp::Enqueue(1),
        QueueOp::Enqueue(2),
        QueueOp::Dequeue,
        QueueOp::Dequeue,
    ] {
        let id = fixed.invoke(0, op);
        let ret = match (op, id) {
            (QueueOp::Dequeue, 2) => QueueRet::Value(Some(1)),
            (QueueOp::Dequeue, _) => QueueRet::Value(Some(2)),
            _ => QueueRet::Ack,
        };
        fixed.respond(id, ret);
    }
    assert!(check(&Queue, &fixed, LIN).is_ok());
    // Program order of client 0 alone forces 1 before 2: not SC either.
    assert!(check(&Queue, &h, SEQ).explanation().is_some());
    // With overlapping enqueues, either order is fine.
    let mut h = History::new();
    let one = h.invoke(0, QueueOp::Enqueue(1));
    let two = h.invoke(1, QueueOp::Enqueue(2));
    h.respond(one, QueueRet::Ack);
    h.respond(two, QueueRet::Ack);
    let deq = h.invoke(2, QueueOp::Dequeue);
    h.respond(deq, QueueRet::Value(Some(2)));
    assert!(check(&Queue, &h, LIN).is_ok());
}

#[test]
fn shortest_failing_prefix_is_reported() {
    let mut h = History::new();
    let w = h.invoke(0, RegisterOp::Write(5));
    h.respond(w, RegisterRet::Ack);
    let bad = h.invoke(1, RegisterOp::Read);
    h.respond(bad, RegisterRet::Value(7));
    for _ in 0..10 {
        let r = h.invoke(2, RegisterOp::Read);
        h.respond(r, RegisterRet::Value(5));
    }
    let why = check(&Register, &h, LIN).explanation().cloned().expect("7");
    assert_eq!((why.failing, why.prefix_end), (bad, 3));
    assert_eq!(why.conflict, vec![bad]);
}

#[test]
fn map_is_checked_per_key() {
    let mut h = History::new();
    let mut ops = Vec::new();
    // 40 keys, each with overlapping puts and gets: one partition at a time
    // keeps this fast; a single search over 160 operations would not be.
    for key in 0..40u64 {
        let a = h.invoke(0, KvOp::Put(key, 1));
        let b = h.invoke(1, KvOp::Put(key, 2));
        let g = h.invoke(2, KvOp::Get(key));
        ops.push((a, b, g));
    }
    for (key, &(a, b, g)) in ops.iter().enumerate() {
        h.respond(a, KvRet::Ack);
        h.respond(b, KvRet::Ack);
        let seen = if key == 17 { Some(3) } else { Some(2) };
        h.respond(g, KvRet::Value(seen));
    }
    let why = check(&KvMap, &h, LIN)
        .explanation()
        .cloned()
        .expect("key 17");
    assert_eq!(why.partition, Some(17));
    assert_eq!(why.conflict, vec![ops[17].2]);
    let get = h.invoke(3, KvOp::Get(99));
    h.respond(get, KvRet::Value(None));
    assert_eq!(
        check(&KvMap, &h, LIN).explanation().unwrap().partition,
        Some(17)
    );
}
