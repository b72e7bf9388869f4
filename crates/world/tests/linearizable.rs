//! Linearizability of the client history, on a tiny replicated register:
//! node 0 holds the value; node 1 forwards requests to it and relays the
//! answers. The planted bug answers reads at node 1 from a local copy that is
//! never refreshed: a stale read after a completed write.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_linearizability::specs::{Register, RegisterOp, RegisterRet};
use cmc_linearizability::Consistency;
use cmc_search::{Checker, Verdict};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::properties::consistency::{self, ClientHistory, ReplyMeaning};
use cmc_world::{TypedCore, World, WorldSpec};

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct Nothing {
    unused: u32,
}

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct Value {
    value: u32,
}

/// Request `r` writes `r + 1` when `r` is even and reads when it is odd.
fn op_of(request: u32, _node: u8) -> RegisterOp {
    if request.is_multiple_of(2) {
        RegisterOp::Write(request as u64 + 1)
    } else {
        RegisterOp::Read
    }
}

fn ret_of(op: &RegisterOp, reply: &[u8]) -> ReplyMeaning<RegisterRet> {
    ReplyMeaning::Returned(match op {
        RegisterOp::Write(_) => RegisterRet::Ack,
        RegisterOp::Read => RegisterRet::Value(reply[0] as u64),
    })
}

struct Forwarding {
    stale_reads: bool,
}

impl TypedCore for Forwarding {
    type Durable = Nothing;
    type Volatile = Value;

    fn name(&self) -> &str {
        "forwarding"
    }

    fn step(
        &self,
        config: &Config,
        _: &Nothing,
        v: &mut Value,
        ev: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let apply = |v: &mut Value, request: u32| {
            if let RegisterOp::Write(value) = op_of(request, 0) {
                v.value = value as u32;
            }
            v.value as u8
        };
        match (ev.kind(), config.node) {
            (Some(EventKind::Client), 0) => out.reply(ev.id, &[apply(v, ev.id)]),
            (Some(EventKind::Client), _) if self.stale_reads && !ev.id.is_multiple_of(2) => {
                out.reply(ev.id, &[v.value as u8])
            }
            (Some(EventKind::Client), _) => out.send(0, &[ev.id as u8]),
            (Some(EventKind::Recv), 0) => {
                let request = ev.payload()[0];
                let value = apply(v, request as u32);
                out.send(ev.src, &[request, value])
            }
            (Some(EventKind::Recv), _) => out.reply(ev.payload()[0] as u32, &[ev.payload()[1]]),
            _ => Ok(()),
        }
    }
}

fn check(stale_reads: bool, consistency: Consistency) -> (Verdict, Option<String>) {
    let mut spec = WorldSpec::new(Arc::new(Forwarding { stale_reads }), 2).unwrap();
    spec.set_all(&["requests=3", "clients=0,1"]).unwrap();
    let history = ClientHistory::new(Register, op_of, ret_of);
    let property = match consistency {
        Consistency::Linearizable => consistency::linearizable(history.clone()),
        Consistency::Sequential => consistency::sequentially_consistent(history.clone()),
    };
    let checker = Checker::new(World::new(spec).with_property(property)).workers(1);
    let outcome = checker.run();
    assert!(checker.model().fault().is_none());
    let explanation = outcome
        .counterexample
        .as_ref()
        .and_then(|trace| trace.last_state())
        .and_then(|state| history.explain(state, consistency));
    (outcome.verdict, explanation)
}

#[test]
fn forwarding_register_is_linearizable() {
    let (verdict, _) = check(false, Consistency::Linearizable);
    assert_eq!(verdict, Verdict::Pass);
}

#[test]
fn stale_read_is_caught_with_its_explanation() {
    let (verdict, explanation) = check(true, Consistency::Linearizable);
    assert!(
        matches!(&verdict, Verdict::Violated { property, .. } if property == "Linearizable"),
        "{verdict:?}"
    );
    let explanation = explanation.expect("the last state fails");
    assert!(explanation.contains("Write(1) -> Ack"), "{explanation}");
    assert!(explanation.contains("Read -> Value(0)"), "{explanation}");
}

#[test]
fn stale_read_is_sequentially_consistent() {
    // Reads of 0 can always be ordered first when real time does not count.
    let (verdict, _) = check(true, Consistency::Sequential);
    assert_eq!(verdict, Verdict::Pass);
}
