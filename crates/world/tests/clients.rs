//! Clients: operations from a declared workload (the core sees the
//! operation as CLIENT's payload, the ghost history records it), clients
//! that time out and retry (`retries`), and LOCAL_FAIL after a reply
//! (`local_fail_after_reply=1`).

mod common;

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::{Model, Property};
use cmc_search::{Checker, Outcome, Verdict};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::system::spec::{SpecError, Workload};
use cmc_world::system::state::{Budget, GhostKind, WorldState};
use cmc_world::{TypedCore, World, WorldSpec};

#[derive(Clone, Copy, Default, Pod, Zeroable)]
#[repr(C)]
struct Words {
    a: u32,
    b: u32,
}

type Behaviour = fn(&Config, &Words, &mut Words, &Event, &mut Outputs) -> Result<(), CoreError>;

struct Scripted(Behaviour);

impl TypedCore for Scripted {
    type Durable = Words;
    type Volatile = Words;

    fn name(&self) -> &str {
        "scripted"
    }

    fn step(
        &self,
        config: &Config,
        durable: &Words,
        volatile: &mut Words,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        (self.0)(config, durable, volatile, event, out)
    }
}

fn violated(outcome: &Outcome<World>) -> Option<&str> {
    match &outcome.verdict {
        Verdict::Violated { property, .. } => Some(property),
        _ => None,
    }
}

/// Replies to each request with the operation it received.
fn echo(
    _: &Config,
    _: &Words,
    _: &mut Words,
    event: &Event,
    out: &mut Outputs,
) -> Result<(), CoreError> {
    if event.kind() == Some(EventKind::Client) {
        out.reply(event.id, event.payload())?;
    }
    Ok(())
}

/// Every reply carries the operation of its invocation.
fn echoes_its_operation() -> Property<World> {
    Property::always("EchoesItsOperation", |world: &World, state: &WorldState| {
        let history = world.inspect(state).ghost();
        history
            .iter()
            .filter(|e| e.kind == GhostKind::Reply)
            .all(|reply| {
                history.iter().any(|e| {
                    e.kind == GhostKind::Invoke
                        && e.request == reply.request
                        && e.payload == reply.payload
                })
            })
    })
}

#[test]
fn every_operation_of_the_workload_is_issued_and_seen_by_the_core() {
    // put:2:2,get:2 is 4 + 2 = 6 operations. The echo core answers at once,
    // so a state is the sequence of operations issued so far:
    // 1 + 6 + 6 * 6 = 43 states for two requests.
    let workload = Workload::parse("put:2:2,get:2").unwrap();
    assert_eq!(workload.operations().len(), 6);
    for (requests, expected) in [(1u8, 7u64), (2, 43)] {
        let spec = WorldSpec::builder(Arc::new(Scripted(echo)), 1)
            .requests(requests)
            .workload(&workload)
            .build()
            .unwrap();
        let checker =
            Checker::new(World::new(spec).with_property(echoes_its_operation())).workers(1);
        let outcome = checker.run();
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert_eq!(
            outcome.stats.distinct_states, expected,
            "{requests} request(s)"
        );
    }
    let spec = WorldSpec::builder(Arc::new(Scripted(echo)), 1)
        .requests(1)
        .workload(&workload)
        .build()
        .unwrap();
    let world = World::new(spec);
    let initial = common::initial_state(&world);
    let texts = common::action_texts(&world, &initial);
    assert_eq!(
        texts,
        [
            "CLIENT r0 -> n0 put(0,0)",
            "CLIENT r0 -> n0 put(0,1)",
            "CLIENT r0 -> n0 put(1,0)",
            "CLIENT r0 -> n0 put(1,1)",
            "CLIENT r0 -> n0 get(0)",
            "CLIENT r0 -> n0 get(1)"
        ]
    );
    let put_1_0 = common::action_named(&world, &initial, "CLIENT r0 -> n0 put(1,0)");
    let put = world.next_state(&initial, &put_1_0).unwrap();
    assert_eq!(
        world.inspect(&put).ghost()[0].payload.as_bytes(),
        [0, 1, 0],
        "the invocation records the operation"
    );
}

/// Never answers: only the client's moves change the state.
fn silent(
    _: &Config,
    _: &Words,
    _: &mut Words,
    _: &Event,
    _: &mut Outputs,
) -> Result<(), CoreError> {
    Ok(())
}

#[test]
fn a_retry_goes_to_any_client_node_and_is_recorded() {
    // Two client nodes, a silent core, two retries: a state is the list of
    // nodes the request went to (invocation, then each retry):
    // 1 + 2 + 4 + 8 = 15 states.
    let spec = WorldSpec::builder(Arc::new(Scripted(silent)), 2)
        .requests(1)
        .clients(&[0, 1])
        .budget(Budget::Retries, 2)
        .build()
        .unwrap();
    let checker = Checker::new(World::new(spec))
        .workers(1)
        .check_deadlock(false);
    let outcome = checker.run();
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert_eq!(outcome.stats.distinct_states, 15);
}

/// n0 forwards each request to n1 and replies when n1 acknowledges it.
/// Correct: a request is answered once, however many acknowledgements
/// come (a bit per answered request in `a`). With the bug, every
/// acknowledgement is answered: a retried request gets two replies.
fn forward(
    config: &Config,
    v: &mut Words,
    event: &Event,
    out: &mut Outputs,
    bug: bool,
) -> Result<(), CoreError> {
    match (config.node, event.kind()) {
        (0, Some(EventKind::Client)) => out.send(1, &[event.id as u8])?,
        (1, Some(EventKind::Recv)) => out.send(0, event.payload())?,
        (0, Some(EventKind::Recv)) => {
            let request = event.payload[0] as u32;
            if bug || v.a & (1 << request) == 0 {
                v.a |= 1 << request;
                out.reply(request, &[1])?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn forwarding(bug: bool, retries: u8) -> Checker<World> {
    let behaviour: Behaviour = if bug {
        |c, _, v, e, o| forward(c, v, e, o, true)
    } else {
        |c, _, v, e, o| forward(c, v, e, o, false)
    };
    let spec = WorldSpec::builder(Arc::new(Scripted(behaviour)), 2)
        .requests(1)
        .budget(Budget::Retries, retries)
        .build()
        .unwrap();
    Checker::new(World::new(spec)).workers(1)
}

#[test]
fn a_core_that_answers_a_retried_request_twice_is_caught_only_with_retries() {
    assert_eq!(
        forwarding(true, 0).run().verdict,
        Verdict::Pass,
        "no retry, no second ack"
    );
    assert_eq!(forwarding(false, 1).run().verdict, Verdict::Pass);
    let checker = forwarding(true, 1);
    let outcome = checker.run();
    assert_eq!(violated(&outcome), Some("AtMostOneReply"));
    let texts: Vec<String> = outcome
        .counterexample
        .as_ref()
        .unwrap()
        .steps
        .iter()
        .filter_map(|s| s.action.as_ref())
        .map(|a| checker.model().format_action(a))
        .collect();
    assert!(texts.contains(&"RETRY r0 -> n0".to_string()), "{texts:?}");
}

/// A transaction: CLIENT persists the request's bit in `a`, the flush
/// acknowledges it, LOCAL_FAIL rolls it back. Correct: a transaction
/// already acknowledged (bit in volatile `b`) is not rolled back.
fn transact(
    _: &Config,
    durable: &Words,
    v: &mut Words,
    event: &Event,
    out: &mut Outputs,
    bug: bool,
) -> Result<(), CoreError> {
    let bit = 1u32 << (event.id & 31);
    match event.kind() {
        Some(EventKind::Client) => {
            v.a |= bit;
            out.persist(0, &(durable.a | bit).to_le_bytes())?;
        }
        Some(EventKind::Flushed) => {
            let pending = v.a;
            for request in (0..32).filter(|r| pending & (1 << r) != 0 && durable.a & (1 << r) != 0)
            {
                v.a &= !(1 << request);
                v.b |= 1 << request;
                out.reply(request, &[1])?;
            }
        }
        Some(EventKind::LocalFail) if bug || v.b & bit == 0 => {
            v.a &= !bit;
            out.persist(0, &(durable.a & !bit).to_le_bytes())?;
        }
        _ => {}
    }
    Ok(())
}

/// Every acknowledged transaction is durable once its node has flushed.
fn acked_is_durable() -> Property<World> {
    Property::always("AckedIsDurable", |world: &World, state: &WorldState| {
        let node = world.inspect(state).node(0);
        let durable = node.durable_as::<Words>().unwrap();
        !node.env.persists.is_empty()
            || world
                .inspect(state)
                .ghost()
                .iter()
                .filter(|e| e.kind == GhostKind::Reply)
                .all(|reply| durable.a & (1 << reply.request) != 0)
    })
}

fn transactions(bug: bool, after_reply: bool) -> Checker<World> {
    let behaviour: Behaviour = if bug {
        |c, d, v, e, o| transact(c, d, v, e, o, true)
    } else {
        |c, d, v, e, o| transact(c, d, v, e, o, false)
    };
    let spec = WorldSpec::builder(Arc::new(Scripted(behaviour)), 1)
        .requests(1)
        .budget(Budget::LocalFails, 1)
        .local_fail_after_reply(after_reply)
        .build()
        .unwrap();
    Checker::new(World::new(spec).with_property(acked_is_durable())).workers(1)
}

#[test]
fn local_fail_after_a_reply_is_offered_only_when_asked() {
    // The echo core answers at once: init, answered; with the option also
    // answered-then-failed (3 states), without it LOCAL_FAIL never finds
    // the request open (2 states).
    for (after_reply, expected) in [(false, 2u64), (true, 3)] {
        let spec = WorldSpec::builder(Arc::new(Scripted(echo)), 1)
            .requests(1)
            .budget(Budget::LocalFails, 1)
            .local_fail_after_reply(after_reply)
            .build()
            .unwrap();
        let outcome = Checker::new(World::new(spec)).workers(1).run();
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert_eq!(outcome.stats.distinct_states, expected);
    }
}

#[test]
fn a_rollback_after_the_acknowledgement_is_caught_only_with_late_local_fails() {
    assert_eq!(transactions(true, false).run().verdict, Verdict::Pass);
    assert_eq!(transactions(false, true).run().verdict, Verdict::Pass);
    let checker = transactions(true, true);
    let outcome = checker.run();
    assert_eq!(violated(&outcome), Some("AckedIsDurable"));
}

#[test]
fn the_typed_builder_refuses_what_the_strings_refuse() {
    let error = WorldSpec::builder(Arc::new(Scripted(echo)), 2)
        .clients(&[0, 5])
        .requests(1)
        .build()
        .err()
        .unwrap();
    assert!(
        matches!(&error, SpecError::BadValue { name, .. } if name == "clients"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "clients=0,5: node 5 does not exist in a 2-node world"
    );
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(boxed.to_string().contains("node 5"));
    let error = WorldSpec::builder(Arc::new(Scripted(echo)), 65)
        .build()
        .err()
        .unwrap();
    assert_eq!(error, SpecError::NodeCount(65));
    let spec = WorldSpec::builder(Arc::new(Scripted(echo)), 12)
        .requests(40)
        .build()
        .unwrap();
    assert_eq!((spec.nodes(), spec.requests), (12, 40));
    let mut spec = WorldSpec::new(Arc::new(Scripted(echo)), 13).unwrap();
    let error = spec.set("splits", "1").unwrap_err();
    assert!(error.to_string().contains("at most 12 nodes"), "{error}");
}

/// A key-value store at one node: `put:2:2` stores, `get:2` reads. With the
/// bug, a read of key 1 returns key 0's value.
fn kv(
    _: &Config,
    _: &Words,
    v: &mut Words,
    event: &Event,
    out: &mut Outputs,
    bug: bool,
) -> Result<(), CoreError> {
    if event.kind() != Some(EventKind::Client) {
        return Ok(());
    }
    // Each key's value + 1 (0: absent) in one byte of `a`.
    let slot = |key: u8| 8 * key as u32;
    match *event.payload() {
        [0, key, value] => {
            v.a = (v.a & !(0xff << slot(key))) | (value as u32 + 1) << slot(key);
            out.reply(event.id, &[])?;
        }
        [1, key] => {
            let read = if bug { 0 } else { key };
            out.reply(event.id, &[(v.a >> slot(read)) as u8])?;
        }
        _ => return Err(CoreError::Code(1)),
    }
    Ok(())
}

fn kv_checker(bug: bool) -> Checker<World> {
    use cmc_linearizability::specs::{KvMap, KvOp, KvRet};
    use cmc_world::properties::consistency::{self, ClientHistory, ReplyMeaning};
    let behaviour: Behaviour = if bug {
        |c, d, v, e, o| kv(c, d, v, e, o, true)
    } else {
        |c, d, v, e, o| kv(c, d, v, e, o, false)
    };
    let history = ClientHistory::with_operations(
        KvMap,
        |_, _, operation| match *operation {
            [0, key, value] => KvOp::Put(key as u64, value as u64),
            [_, key, ..] => KvOp::Get(key as u64),
            _ => KvOp::Get(u64::MAX),
        },
        |op, reply| match op {
            KvOp::Put(..) => ReplyMeaning::Returned(KvRet::Ack),
            KvOp::Get(_) => {
                ReplyMeaning::Returned(KvRet::Value(reply[0].checked_sub(1).map(u64::from)))
            }
        },
    );
    let spec = WorldSpec::builder(Arc::new(Scripted(behaviour)), 1)
        .requests(2)
        .workload(&Workload::parse("put:2:2,get:2").unwrap())
        .build()
        .unwrap();
    Checker::new(World::new(spec).with_property(consistency::linearizable(history))).workers(1)
}

#[test]
fn a_workload_drives_a_linearizability_check() {
    assert_eq!(kv_checker(false).run().verdict, Verdict::Pass);
    let checker = kv_checker(true);
    let outcome = checker.run();
    assert_eq!(violated(&outcome), Some("Linearizable"));
}

#[test]
fn spread_requests_go_to_one_node_each_in_turn() {
    // Three requests, clients n0 and n1, the echo core: any node per
    // request gives 1 + 2 + 4 + 8 = 15 states; spread sends r0, r1, r2 to
    // n0, n1, n0 only: 1 + 1 + 1 + 1 = 4.
    for (spread, expected) in [(false, 15u64), (true, 4)] {
        let spec = WorldSpec::builder(Arc::new(Scripted(echo)), 2)
            .requests(3)
            .clients(&[0, 1])
            .spread(spread)
            .build()
            .unwrap();
        let checker = Checker::new(World::new(spec)).workers(1);
        let outcome = checker.run();
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert_eq!(outcome.stats.distinct_states, expected, "spread={spread}");
    }
}
