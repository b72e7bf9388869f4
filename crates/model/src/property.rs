//! Properties: what must hold on every state or step, and what must be reached.

use std::fmt;
use std::sync::Arc;

use crate::Model;

/// A predicate over one state.
pub type StatePredicate<M> = Arc<dyn Fn(&M, &<M as Model>::State) -> bool + Send + Sync>;

/// A predicate over one step: pre-state, action, post-state.
pub type StepPredicate<M> = Arc<
    dyn Fn(&M, &<M as Model>::State, &<M as Model>::Action, &<M as Model>::State) -> bool
        + Send
        + Sync,
>;

/// Why a state fails an invariant, in words (`None`: nothing to add).
pub type StateExplainer<M> = Arc<dyn Fn(&M, &<M as Model>::State) -> Option<String> + Send + Sync>;

/// Why a step fails an action property, in words (`None`: nothing to add).
pub type StepExplainer<M> = Arc<
    dyn Fn(&M, &<M as Model>::State, &<M as Model>::Action, &<M as Model>::State) -> Option<String>
        + Send
        + Sync,
>;

/// Why a state or a step fails a property, in words.
pub enum Explainer<M: Model> {
    /// Given the state that fails an invariant.
    State(StateExplainer<M>),
    /// Given the step (pre-state, action, post-state) that fails an action
    /// property.
    Step(StepExplainer<M>),
}

impl<M: Model> Clone for Explainer<M> {
    fn clone(&self) -> Self {
        match self {
            Explainer::State(f) => Explainer::State(f.clone()),
            Explainer::Step(f) => Explainer::Step(f.clone()),
        }
    }
}

/// What kind of obligation a [`Property`] states.
pub enum PropertyKind<M: Model> {
    /// Must hold in every reachable state (an invariant).
    Always(StatePredicate<M>),
    /// Must hold in at least one reachable state; a complete search that never
    /// reaches such a state fails as vacuous.
    Sometimes(StatePredicate<M>),
    /// Must hold for every step `(pre, action, post)` taken by the search.
    Step(StepPredicate<M>),
}

impl<M: Model> Clone for PropertyKind<M> {
    fn clone(&self) -> Self {
        match self {
            PropertyKind::Always(f) => PropertyKind::Always(f.clone()),
            PropertyKind::Sometimes(f) => PropertyKind::Sometimes(f.clone()),
            PropertyKind::Step(f) => PropertyKind::Step(f.clone()),
        }
    }
}

/// A named property of a model.
pub struct Property<M: Model> {
    /// The name reports and replay files use, e.g. `TCConsistent`.
    pub name: String,
    /// The obligation.
    pub kind: PropertyKind<M>,
    /// Why a state or step fails it, for a report (see
    /// [`Property::explained_by`]).
    pub explain: Option<Explainer<M>>,
}

impl<M: Model> Clone for Property<M> {
    fn clone(&self) -> Self {
        Property {
            name: self.name.clone(),
            kind: self.kind.clone(),
            explain: self.explain.clone(),
        }
    }
}

impl<M: Model> fmt::Debug for Property<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            PropertyKind::Always(_) => "always",
            PropertyKind::Sometimes(_) => "sometimes",
            PropertyKind::Step(_) => "step",
        };
        write!(f, "{kind} {}", self.name)
    }
}

impl<M: Model> Property<M> {
    /// An invariant: `holds` must be true in every reachable state.
    pub fn always(
        name: impl Into<String>,
        holds: impl Fn(&M, &M::State) -> bool + Send + Sync + 'static,
    ) -> Property<M> {
        Property {
            name: name.into(),
            kind: PropertyKind::Always(Arc::new(holds)),
            explain: None,
        }
    }

    /// A witness: `reached` must be true in at least one reachable state.
    pub fn sometimes(
        name: impl Into<String>,
        reached: impl Fn(&M, &M::State) -> bool + Send + Sync + 'static,
    ) -> Property<M> {
        Property {
            name: name.into(),
            kind: PropertyKind::Sometimes(Arc::new(reached)),
            explain: None,
        }
    }

    /// An action property: `holds(pre, action, post)` must be true for every step.
    pub fn step(
        name: impl Into<String>,
        holds: impl Fn(&M, &M::State, &M::Action, &M::State) -> bool + Send + Sync + 'static,
    ) -> Property<M> {
        Property {
            name: name.into(),
            kind: PropertyKind::Step(Arc::new(holds)),
            explain: None,
        }
    }

    /// This invariant, with `explain` saying why a state fails it: a report
    /// of its violation shows the text (the `explanation` of a JSON
    /// report) after the trace. Asked only of a state that fails it.
    pub fn explained_by(
        mut self,
        explain: impl Fn(&M, &M::State) -> Option<String> + Send + Sync + 'static,
    ) -> Property<M> {
        self.explain = Some(Explainer::State(Arc::new(explain)));
        self
    }

    /// This action property, with `explain` saying why a step
    /// `(pre, action, post)` fails it (see
    /// [`explained_by`](Self::explained_by)).
    pub fn step_explained_by(
        mut self,
        explain: impl Fn(&M, &M::State, &M::Action, &M::State) -> Option<String> + Send + Sync + 'static,
    ) -> Property<M> {
        self.explain = Some(Explainer::Step(Arc::new(explain)));
        self
    }

    /// `"always"`, `"sometimes"` or `"step"`.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            PropertyKind::Always(_) => "always",
            PropertyKind::Sometimes(_) => "sometimes",
            PropertyKind::Step(_) => "step",
        }
    }
}
