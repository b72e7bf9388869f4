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
//!
//! # The history in a state's identity
//!
//! By default the whole ghost history, in order, is part of a World state's
//! identity: two runs that reach the same nodes and network but answered
//! requests in another order are two states. The order between requests can
//! leave the identity when nothing that decides a verdict reads it:
//!
//! - [`linearizable_summarised`] checks linearizability on a summary that
//!   stands for the order: the set of linearization configurations of the
//!   history ([`cmc_linearizability::Linearizations`]). Two histories with
//!   the same configurations and the same entries per request have the same
//!   verdict on every continuation (the argument is in the linearizability
//!   crate's README), so states that differ only in the order are merged;
//! - [`World::with_history_per_request`] drops the order without a summary,
//!   for Worlds whose properties read the replies as a set.
//!
//! The environment (open requests, retries, local failures), the built-in
//! properties (`AtMostOneReply`, `ReplyToInvoked`) and quiescence read each
//! request's own entries only. What needs the order keeps the whole history:
//! [`linearizable`] and [`sequentially_consistent`] (which panic on a World
//! that summarises it), and C properties (attaching them switches the World
//! back, [`World::with_full_history`]). Counterexamples are rebuilt by
//! replaying their steps, so their states hold the whole history in order.

use std::sync::Arc;

use cmc_linearizability::{
    check, Consistency, History, Linearizations, Operation, Response, SequentialSpec, Verdict,
};
use cmc_model::{Encode, Property};

use crate::system::state::{GhostEntry, GhostKind, WorldState};
use crate::system::HistorySummary;
use crate::World;

/// What a reply to a request means, as the user's decoder says (see the
/// example on [`ClientHistory`]).
///
/// A decoder for `reqack`'s replies: OK means the delivery took effect,
/// BUSY that it was refused.
///
/// ```
/// use cmc_world::example_cores::reqack::{REPLY_BUSY, REPLY_OK};
/// use cmc_world::properties::consistency::ReplyMeaning;
///
/// let meaning = |reply: &[u8]| match reply {
///     [REPLY_BUSY] => ReplyMeaning::Refused,
///     _ => ReplyMeaning::Returned(reply == [REPLY_OK]),
/// };
/// assert_eq!(meaning(&[REPLY_OK]), ReplyMeaning::Returned(true));
/// assert_eq!(meaning(&[REPLY_BUSY]), ReplyMeaning::Refused);
/// ```
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
/// use cmc_world::example_cores::reqack::{ReqAck, REPLY_BUSY, REPLY_OK};
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
    /// the invocation recorded (see [`crate::system::workload`]). A retried request
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
    ///
    /// The state must hold its ghost in order: one made by steps (every
    /// counterexample's), or any state of a World that keeps the whole
    /// history in its identity (see the module text).
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

    /// The text explaining why `state`'s history fails, or `None` if it
    /// does not: the smallest set of operations that cannot be ordered, and
    /// why (the order they would need, and the replies that rule it out).
    pub fn explain(&self, state: &WorldState, consistency: Consistency) -> Option<String> {
        let history = self.history(state);
        let verdict = check(&self.spec, &history, consistency);
        let why = verdict.explanation()?;
        let order = match consistency {
            Consistency::Linearizable => {
                "each taking effect between its invocation and its reply (one that was \
                 answered before another was invoked comes first)"
            }
            Consistency::Sequential => "keeping each client's own order",
        };
        Some(format!(
            "No sequential order of these operations, {order}, gives each of them the reply it \
             got (steps count the client history's events):\n{}",
            why.describe(&history)
        ))
    }
}

impl<S> ClientHistory<S>
where
    S: SequentialSpec + Send + Sync + 'static,
{
    /// An `always` property named `name`: the history of every reachable
    /// state satisfies `consistency`.
    ///
    /// It reads the whole history: the property panics on a state of a
    /// World that keeps only a summary of it (see the module text).
    ///
    /// A report of its violation explains it: which operations cannot be
    /// ordered together, and the replies they got.
    pub fn property(self, name: &str, consistency: Consistency) -> Property<World> {
        let name_text = name.to_string();
        let history = Arc::new(self);
        let explainer = Arc::clone(&history);
        Property::always(name, move |_: &World, state: &WorldState| {
            assert!(
                state.ghost.summary().is_none(),
                "{name_text} reads the order of the client history, which this World \
                 leaves out of its states (use linearizable_summarised, or with_full_history)"
            );
            history.check(state, consistency).is_ok()
        })
        .explained_by(move |_: &World, state: &WorldState| explainer.explain(state, consistency))
    }
}

/// No summary: the order between requests is simply dropped.
struct PerRequest;

impl HistorySummary for PerRequest {
    fn initial(&self) -> Vec<u8> {
        Vec::new()
    }

    fn advance(&self, _: &[GhostEntry], _: usize, _: &mut Vec<u8>) {}
}

/// The linearizations of the history (see [`linearizable_summarised`]).
struct LinearizationSummary<S: SequentialSpec> {
    history: ClientHistory<S>,
}

impl<S> LinearizationSummary<S>
where
    S: SequentialSpec,
    S::State: Encode + Ord,
    S::Op: Encode + Ord,
    S::Ret: Encode + Ord,
{
    /// The operation of `request` and the position of its `Invoke` entry
    /// among `earlier`, if there is one.
    fn operation(&self, earlier: &[GhostEntry], request: u32) -> Option<(S::Op, usize)> {
        let at = earlier
            .iter()
            .position(|e| e.kind == GhostKind::Invoke && e.request == request)?;
        let invoke = &earlier[at];
        let op = (self.history.op_of)(request, invoke.node, invoke.payload.as_bytes());
        Some((op, at))
    }

    /// The configurations `summary` holds.
    fn decode(summary: &[u8]) -> Linearizations<S> {
        Linearizations::decode_exact(summary)
            .expect("a linearization summary the World wrote itself")
    }
}

impl<S> HistorySummary for LinearizationSummary<S>
where
    S: SequentialSpec + Send + Sync,
    S::State: Encode + Ord,
    S::Op: Encode + Ord,
    S::Ret: Encode + Ord,
{
    fn initial(&self) -> Vec<u8> {
        Linearizations::new(&self.history.spec).to_bytes()
    }

    /// As [`ClientHistory::history`] reads the ghost: an `Invoke` is an
    /// operation; the first `Reply` after it is its response, or withdraws
    /// it when refused; every other entry leaves the history as it is.
    fn advance(&self, ghost: &[GhostEntry], from: usize, summary: &mut Vec<u8>) {
        let spec = &self.history.spec;
        let mut lin: Option<Linearizations<S>> = None;
        for (at, entry) in ghost.iter().enumerate().skip(from) {
            let lin = lin.get_or_insert_with(|| Self::decode(summary));
            match entry.kind {
                GhostKind::Invoke => {
                    let op =
                        (self.history.op_of)(entry.request, entry.node, entry.payload.as_bytes());
                    lin.invoke(entry.request, op);
                }
                GhostKind::Reply => {
                    let Some((op, invoked)) = self.operation(&ghost[..at], entry.request) else {
                        continue;
                    };
                    let answered_before = ghost[invoked..at]
                        .iter()
                        .any(|e| e.kind == GhostKind::Reply && e.request == entry.request);
                    if answered_before {
                        continue;
                    }
                    match (self.history.ret_of)(&op, entry.payload.as_bytes()) {
                        ReplyMeaning::Returned(ret) => lin.respond(spec, entry.request, &ret),
                        ReplyMeaning::Refused => lin.withdraw(spec, entry.request),
                    }
                }
                GhostKind::LocalFail | GhostKind::Retry => {}
            }
        }
        if let Some(lin) = lin {
            summary.clear();
            lin.encode(summary);
        }
    }
}

/// `world` with `Linearizable` (as [`linearizable`]) checked on a summary of
/// the client history that replaces its order in the states' identity: the
/// set of linearization configurations (see the module text). The verdicts
/// and the shortest counterexamples are those of [`linearizable`]; fewer
/// states are explored. [`World::with_full_history`] turns the summary off
/// (the property then reads the whole history).
///
/// Panics if `world` already summarises its history.
pub fn linearizable_summarised<S>(world: World, history: ClientHistory<S>) -> World
where
    S: SequentialSpec + Send + Sync + 'static,
    S::State: Encode + Ord,
    S::Op: Encode + Ord,
    S::Ret: Encode + Ord,
{
    assert!(
        world.history_summary.is_none(),
        "the World already summarises its client history"
    );
    let own = Arc::new(LinearizationSummary { history });
    let summary: Arc<dyn HistorySummary> = own.clone();
    // A counterexample's states hold their history in order (see `Ghost`).
    let explainer = Arc::clone(&own);
    let property = Property::always("Linearizable", move |world: &World, state: &WorldState| {
        // Off after `with_full_history`: the states then hold no summary.
        let mine = world
            .history_summary
            .as_ref()
            .is_some_and(|installed| std::ptr::addr_eq(Arc::as_ptr(installed), Arc::as_ptr(&own)));
        match state.ghost.summary() {
            Some(bytes) if mine => Linearizations::<S>::encoded_is_linearizable(bytes)
                .expect("a linearization summary the World wrote itself"),
            _ => own.history.check(state, Consistency::Linearizable).is_ok(),
        }
    })
    .explained_by(move |_: &World, state: &WorldState| {
        explainer.history.explain(state, Consistency::Linearizable)
    });
    let mut world = world;
    world.history_summary = Some(summary);
    world.with_history_property(property)
}

impl World {
    /// The order between client requests leaves the states' identity, with
    /// no summary in its place: sound only when every property reads the
    /// ghost history per request (the replies as a set, as the built-in
    /// properties and quiescence do; not [`linearizable`]). States that
    /// differ only in that order are merged.
    ///
    /// Panics if the World already summarises its history.
    pub fn with_history_per_request(mut self) -> World {
        assert!(
            self.history_summary.is_none(),
            "the World already summarises its client history"
        );
        self.history_summary = Some(Arc::new(PerRequest));
        self
    }

    /// The whole client history, in order, is part of every state's identity
    /// again (the default; C properties need it, and tests compare the two).
    pub fn with_full_history(mut self) -> World {
        self.history_summary = None;
        self
    }

    /// Brings `state`'s summary up to date with its ghost entries from
    /// `from` on (an initial state gets the summary of the empty history
    /// first); nothing in full mode.
    pub(crate) fn summarise(&self, from: usize, state: &mut WorldState) {
        let Some(summary) = &self.history_summary else {
            return;
        };
        // Taken out while `advance` reads the entries, then put back.
        let mut bytes = (state.ghost.summary_mut().take()).unwrap_or_else(|| summary.initial());
        summary.advance(&state.ghost, from, &mut bytes);
        *state.ghost.summary_mut() = Some(bytes);
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
