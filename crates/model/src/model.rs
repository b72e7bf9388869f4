//! The transition-system interface every checked system implements.

use std::borrow::Cow;
use std::fmt::Debug;

use crate::{DynFastSuccessors, Encode, Property, SleepKey, StateView};

/// One `NAME=VALUE` parameter a model instance was built with.
///
/// Parameters are recorded in replay files, so that a trace is only ever
/// replayed against the same instance that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelParam {
    /// Parameter name, e.g. `RM`.
    pub name: String,
    /// Parameter value as the user wrote it, e.g. `5`.
    pub value: String,
}

impl ModelParam {
    /// A parameter named `name` with the value `value`.
    pub fn new(name: impl Into<String>, value: impl ToString) -> ModelParam {
        ModelParam {
            name: name.into(),
            value: value.to_string(),
        }
    }
}

/// `params` as (name, value) pairs: the form reports, checkpoints and replay
/// headers record them in.
pub fn param_pairs(params: Vec<ModelParam>) -> Vec<(String, String)> {
    params
        .into_iter()
        .map(|param| (param.name, param.value))
        .collect()
}

/// What kind of step an action is: its name in coverage reports, and
/// whether it is a fault the environment injects (a drop, a crash, ...), whose
/// frequency a swarm simulation draws per walk.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ActionKind {
    /// The kind's name, e.g. `DELIVER` or `TMCommit`.
    pub name: Cow<'static, str>,
    /// Whether the action is an injected fault.
    pub fault: bool,
}

impl ActionKind {
    /// A kind that is part of the system's own behaviour.
    pub fn normal(name: impl Into<Cow<'static, str>>) -> ActionKind {
        ActionKind {
            name: name.into(),
            fault: false,
        }
    }

    /// A kind that is an injected fault.
    pub fn fault(name: impl Into<Cow<'static, str>>) -> ActionKind {
        ActionKind {
            name: name.into(),
            fault: true,
        }
    }

    /// The kind named by the first word of an action's text (letters,
    /// digits and `_`), e.g. `RMPrepare` for `RMPrepare(1)`; the whole text
    /// when it starts with none of them.
    pub fn of_text(text: &str) -> ActionKind {
        let end = text
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(text.len());
        let name = if end == 0 { text } else { &text[..end] };
        ActionKind::normal(name.to_string())
    }
}

/// A transition system: initial states, enabled actions, successor states and
/// the properties to check.
///
/// Contract (the search relies on it; the determinism gate checks it):
/// - every method is a pure function of its arguments: the same state gives the
///   same actions in the same order and the same successors;
/// - [`actions`](Model::actions) lists candidate actions; an action for which
///   [`next_state`](Model::next_state) returns `None` is not enabled;
/// - [`format_action`](Model::format_action) gives distinct text to distinct
///   actions of one state, since replay files name actions by that text.
///
/// A state with no enabled action is a deadlock, unless
/// [`is_terminal`](Model::is_terminal) says it is a legitimate end.
///
/// How the search makes successors faster than `next_state` (in memory it
/// keeps, partial, encoded from the parent's bytes) is not part of this
/// trait: a model that needs it (the World, `docs/speed.md`) implements
/// [`FastSuccessors`](crate::FastSuccessors); a model written by hand never
/// needs to.
pub trait Model: Sync {
    /// A state of the system; its [`Encode`] bytes are its identity.
    type State: Encode + Clone + Debug + Send + Sync;
    /// A step of the system.
    type Action: Clone + Debug + Send + Sync;

    /// The model's name, as `cmc list` shows it and replay files record it.
    fn name(&self) -> String;

    /// The parameters of this instance (recorded in replay files).
    fn params(&self) -> Vec<ModelParam> {
        Vec::new()
    }

    /// Appends the initial states to `out`.
    fn init_states(&self, out: &mut Vec<Self::State>);

    /// Appends the candidate actions of `state` to `out`, in a deterministic order.
    fn actions(&self, state: &Self::State, out: &mut Vec<Self::Action>);

    /// The state that `action` leads to from `state`, or `None` if the action
    /// is not enabled there.
    fn next_state(&self, state: &Self::State, action: &Self::Action) -> Option<Self::State>;

    #[doc(hidden)]
    /// The model's own ways of making successors (see
    /// [`FastSuccessors`](crate::FastSuccessors)), which the search then
    /// uses instead of [`next_state`](Model::next_state); `None` (the
    /// default) for a model that has none.
    fn fast_successors(&self) -> Option<&DynFastSuccessors<'_, Self>> {
        None
    }

    /// Whether this instance can name persistent sets for partial-order
    /// reduction ([`persistent_set`](Model::persistent_set)): `Ok(())`, or
    /// `Err` with the reason it cannot, which a report shows. By default a
    /// model declares no independence between its actions and cannot.
    fn reduction_support(&self) -> Result<(), String> {
        Err("the model declares no independence between its actions".into())
    }

    /// A persistent set of `state`'s enabled steps, for partial-order
    /// reduction: `steps` are the enabled actions of `state`, each with its
    /// successor (partial, as
    /// [`next_state_partial_into`](crate::Successors::next_state_partial_into) made it);
    /// the positions of the set are written to `out` and `true` returned,
    /// or `false` to explore every step. Called only when
    /// [`reduction_support`](Model::reduction_support) is `Ok`.
    ///
    /// Contract, for a set P returned: P is not empty and not every step;
    /// (persistent) along every path from `state` made of actions outside
    /// P, each action is independent of each action of P (they commute,
    /// and neither enables nor disables the other); (invisible) no action
    /// of P changes anything a property reads. The search adds the cycle
    /// proviso. The default names no set.
    fn persistent_set(
        &self,
        state: &Self::State,
        steps: &[(&Self::Action, &Self::State)],
        out: &mut Vec<usize>,
    ) -> bool {
        let _ = (state, steps, out);
        false
    }

    /// Whether this instance names its steps for sleep sets
    /// ([`sleep_key`](Model::sleep_key)): `Ok(())`, or `Err` with the reason
    /// it cannot, which a report shows. By default a model cannot.
    fn sleep_support(&self) -> Result<(), String> {
        Err("the model declares no independence between its actions".into())
    }

    /// For sleep sets: the key of `action` in `state`, from the action
    /// alone (its successor is not computed yet), or `None` if the step may
    /// depend on every other one; it says the step may feed every agent and
    /// touch the shared part (what the step does is known once it is taken,
    /// see [`taken_key`](Model::taken_key)). Called only when
    /// [`sleep_support`](Model::sleep_support) is `Ok`.
    ///
    /// Contract, for two enabled actions `a` and `b` of a state whose keys
    /// are [independent](SleepKey::independent) and which each
    /// [commute](Model::taken_key) there: `b` is enabled after `a`, with
    /// the same key, and `a` then `b` reaches the state `b` then `a` does;
    /// an action whose key is `k` in a state has key `k` and commutes (or
    /// not) alike in every state reached from it by steps independent of it.
    fn sleep_key(&self, state: &Self::State, action: &Self::Action) -> Option<SleepKey> {
        let _ = (state, action);
        None
    }

    /// For sleep sets: the key of the step `action` from `state` to `next`
    /// (partial, as
    /// [`next_state_partial_into`](crate::Successors::next_state_partial_into)
    /// made it), completed from `key` (its [`sleep_key`](Model::sleep_key))
    /// with what the step did: whom it fed and whether it touched the shared
    /// part ([`SleepKey::feeds`], [`SleepKey::shared`]), or `None` if it may
    /// depend on every other step (the default).
    fn taken_key(
        &self,
        state: &Self::State,
        action: &Self::Action,
        next: &Self::State,
        key: SleepKey,
    ) -> Option<SleepKey> {
        let _ = (state, action, next, key);
        None
    }

    /// A view of `state` coarser than its encoding (what a search that
    /// expands one state per view, `cmc_search::Strategy::ViewBfs`, keys
    /// its visited set by), written to `out`: a model leaves out what it
    /// holds to matter least to its bugs (the World: messages in flight).
    /// Returns `false` (the default) when the model declares none.
    fn coarse_view(&self, state: &Self::State, out: &mut Vec<u8>) -> bool {
        let _ = (state, out);
        false
    }

    /// The properties to check on every reachable state or step.
    fn properties(&self) -> Vec<Property<Self>>
    where
        Self: Sized,
    {
        Vec::new()
    }

    /// Whether `state` is a legitimate final state, so that having no enabled
    /// action there is not reported as a deadlock.
    fn is_terminal(&self, _state: &Self::State) -> bool {
        false
    }

    /// Human-readable text of an action; also its name in replay files.
    fn format_action(&self, action: &Self::Action) -> String {
        format!("{action:?}")
    }

    /// The kind of `action`, for coverage and swarm simulation. By default
    /// the first word of [`format_action`](Model::format_action)'s text, not
    /// a fault.
    fn action_kind(&self, action: &Self::Action) -> ActionKind {
        ActionKind::of_text(&self.format_action(action))
    }

    /// The kinds of action this instance can take, when the model knows them
    /// (empty by default): coverage names those never taken, and warns about
    /// every fault kind listed (a fault with a budget) that never occurred.
    fn action_kinds(&self) -> Vec<ActionKind> {
        Vec::new()
    }

    /// Text that explains why `property` fails in `state`, the last state of
    /// a counterexample (e.g. the fair run that did not make progress, or the
    /// operations that cannot be linearized); `None` when the trace says it all.
    fn explain_violation(&self, _property: &str, _state: &Self::State) -> Option<String> {
        None
    }

    /// A fault of the code under the model (e.g. a core that returned an
    /// error or crashed) that voids the search's verdict: the search then
    /// ends with an error carrying this text (where, which step and event,
    /// which state) instead of a pass or a violation. `None` by default.
    fn fault_text(&self) -> Option<String> {
        None
    }

    /// The state as named fields, for counterexamples and per-step diffs.
    fn describe_state(&self, state: &Self::State) -> StateView {
        StateView::from_debug(state)
    }
}
