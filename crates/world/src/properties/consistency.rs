//! Properties over the ghost history of client requests and replies:
//! linearizability and sequential consistency against a user's sequential
//! specification ([`cmc_linearizability`]).
//!
//! Each client request of the World is one operation of its own client
//! (requests are issued without waiting for one another, so they may
//! overlap). Its invocation step is the position of its `Invoke` entry in the
//! ghost history, its response step that of its first `Reply` entry. A
//! request failed locally (`LOCAL_FAIL`) or not yet answered is pending: it may
//! have taken effect or not.

use std::sync::Arc;

use cmc_linearizability::{
    check, Consistency, History, Operation, Response, SequentialSpec, Verdict,
};
use cmc_model::Property;

use crate::world::state::{GhostKind, WorldState};
use crate::World;

/// What a reply to a request means, as the user's decoder says (see the
/// example on [`ClientHistory`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ReplyMeaning<Ret> {
    /// The operation took effect and returned this value.
    Returned(Ret),
    /// The operation was refused and certainly did not take effect (e.g. a
    /// BUSY reply): it is left out of the history.
    Refused,
}

type OpOf<S> = dyn Fn(u32, u8, &[u8]) -> <S as SequentialSpec>::Op + Send + Sync;
type RetOf<S> = dyn Fn(&<S as SequentialSpec>::Op, &[u8]) -> ReplyMeaning<<S as SequentialSpec>::Ret>
    + Send
    + Sync;

/// Turns a World's ghost history into a [`History`] of `S` operations.
///
/// # Example
///
/// `reqack` as a sequential object whose every delivery answers OK; a BUSY
/// reply is a refusal (the request did not take effect). Decoded so, the
/// core is linearizable; read as a result, BUSY contradicts the object.
///
/// ```
/// use std::sync::Arc;
/// use cmc_linearizability::SequentialSpec;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::cores::reqack::{ReqAck, REPLY_BUSY, REPLY_OK};
/// use cmc_world::properties::consistency::{linearizable, ClientHistory, ReplyMeaning};
/// use cmc_world::{World, WorldSpec};
///
/// struct Deliver;
/// impl SequentialSpec for Deliver {
///     type State = ();
///     type Op = u32; // the request id
///     type Ret = u8; // the reply byte
///     fn init(&self) {}
///     fn apply(&self, _: &(), _: &u32) -> ((), u8) { ((), REPLY_OK) }
/// }
///
/// let check = |busy: ReplyMeaning<u8>| {
///     let history = ClientHistory::new(Deliver, |request, _node| request,
///         move |_: &u32, reply: &[u8]| match reply {
///             [REPLY_BUSY] => busy.clone(),
///             [other] => ReplyMeaning::Returned(*other),
///             _ => panic!("reqack replies one byte"),
///         });
///     let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(2).build().unwrap();
///     let world = World::new(spec).with_property(linearizable(history));
///     Checker::new(world).workers(1).run().verdict
/// };
/// assert_eq!(check(ReplyMeaning::Refused), Verdict::Pass);
/// assert!(matches!(check(ReplyMeaning::Returned(REPLY_BUSY)),
///     Verdict::Violated { property, .. } if property == "Linearizable"));
/// ```
pub struct ClientHistory<S: SequentialSpec> {
    spec: S,
    op_of: Arc<OpOf<S>>,
    ret_of: Arc<RetOf<S>>,
}

impl<S: SequentialSpec> Clone for ClientHistory<S>
where
    S: Clone,
{
    fn clone(&self) -> Self {
        ClientHistory {
            spec: self.spec.clone(),
            op_of: self.op_of.clone(),
            ret_of: self.ret_of.clone(),
        }
    }
}

impl<S: SequentialSpec> ClientHistory<S> {
    /// A decoder: `op_of(request, node)` is the operation client request
    /// `request` (sent to `node`) performs, and `ret_of(op, reply_bytes)`
    /// what a reply to it means. Both must be pure functions.
    pub fn new(
        spec: S,
        op_of: impl Fn(u32, u8) -> S::Op + Send + Sync + 'static,
        ret_of: impl Fn(&S::Op, &[u8]) -> ReplyMeaning<S::Ret> + Send + Sync + 'static,
    ) -> Self {
        ClientHistory::with_operations(
            spec,
            move |request, node, _operation: &[u8]| op_of(request, node),
            ret_of,
        )
    }

    /// As [`ClientHistory::new`], for a World with a workload:
    /// `op_of(request, node, operation)` also gets the operation's bytes
    /// the invocation recorded (see [`crate::world::workload`]). A retried request
    /// stays one operation, invoked at its first invocation.
    pub fn with_operations(
        spec: S,
        op_of: impl Fn(u32, u8, &[u8]) -> S::Op + Send + Sync + 'static,
        ret_of: impl Fn(&S::Op, &[u8]) -> ReplyMeaning<S::Ret> + Send + Sync + 'static,
    ) -> Self {
        ClientHistory {
            spec,
            op_of: Arc::new(op_of),
            ret_of: Arc::new(ret_of),
        }
    }

    /// The history of `state`'s ghost; operation ids follow invocation order.
    pub fn history(&self, state: &WorldState) -> History<S::Op, S::Ret> {
        let mut history = History::new();
        for (at, entry) in state.ghost.iter().enumerate() {
            if entry.kind != GhostKind::Invoke {
                continue;
            }
            let op = (self.op_of)(entry.request, entry.node, entry.payload.as_bytes());
            let answer = state.ghost[at..].iter().enumerate().find(|(_, later)| {
                later.kind == GhostKind::Reply && later.request == entry.request
            });
            let response = match answer {
                None => None,
                Some((offset, reply)) => match (self.ret_of)(&op, reply.payload.as_bytes()) {
                    ReplyMeaning::Refused => continue,
                    ReplyMeaning::Returned(value) => Some(Response {
                        at: (at + offset) as u64,
                        value,
                    }),
                },
            };
            history.push(Operation {
                client: entry.request,
                op,
                invoked_at: at as u64,
                response,
            });
        }
        history
    }

    /// The verdict on `state`'s history.
    pub fn check(&self, state: &WorldState, consistency: Consistency) -> Verdict {
        check(&self.spec, &self.history(state), consistency)
    }

    /// The text explaining why `state`'s history fails, or `None` if it does not.
    pub fn explain(&self, state: &WorldState, consistency: Consistency) -> Option<String> {
        let history = self.history(state);
        check(&self.spec, &history, consistency)
            .explanation()
            .map(|why| why.describe(&history))
    }
}

impl<S> ClientHistory<S>
where
    S: SequentialSpec + Send + Sync + 'static,
{
    /// An `always` property named `name`: the history of every reachable
    /// state satisfies `consistency`.
    pub fn property(self, name: &str, consistency: Consistency) -> Property<World> {
        Property::always(name, move |_: &World, state: &WorldState| {
            self.check(state, consistency).is_ok()
        })
    }
}

/// `Linearizable`: every reachable state's client history is linearizable
/// with respect to `history`'s spec. See the example on [`ClientHistory`].
pub fn linearizable<S>(history: ClientHistory<S>) -> Property<World>
where
    S: SequentialSpec + Send + Sync + 'static,
{
    history.property("Linearizable", Consistency::Linearizable)
}

/// `SequentiallyConsistent`: every reachable state's client history is
/// sequentially consistent with respect to `history`'s spec.
pub fn sequentially_consistent<S>(history: ClientHistory<S>) -> Property<World>
where
    S: SequentialSpec + Send + Sync + 'static,
{
    history.property("SequentiallyConsistent", Consistency::Sequential)
}
