//! What the explorer asks of a model, with its state and action types hidden
//! ([`Explorable`]), and its implementation for every [`Model`]
//! ([`ModelExplorer`]). Nothing is kept between requests: a page walks its
//! path again from the initial state, so a URL names the same state in every
//! run and can be shared.

use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use cmc_model::{Encode, Fingerprint, Model, PropertyKind, StateView};
use cmc_search::{FieldChangeReport, ReplayFile};

use crate::path::TracePath;

/// One state on a path, and the action that led to it.
#[derive(Debug, Clone)]
pub struct StateStep {
    /// The action taken to get here (`None` for an initial state).
    pub action: Option<String>,
    /// The state's fingerprint (as `cmc` prints it everywhere).
    pub fingerprint: Fingerprint,
    /// The state as its model describes it.
    pub view: StateView,
    /// The invariants this state violates, and the step properties the
    /// step into it violates.
    pub violated: Vec<String>,
}

/// An action enabled at the last state of a walk, and what it changes.
#[derive(Debug, Clone)]
pub struct Successor {
    /// The action's text (as replay files name it).
    pub action: String,
    /// The fingerprint of the state it leads to.
    pub fingerprint: Fingerprint,
    /// The fields it changes, before and after.
    pub changes: Vec<FieldChangeReport>,
    /// The properties the step or the state it leads to violates.
    pub violates: Vec<String>,
}

/// A path walked from its initial state: every state on it, and the actions
/// enabled at its last state.
#[derive(Debug, Clone)]
pub struct Walk {
    /// The states, the initial one first.
    pub steps: Vec<StateStep>,
    /// The actions enabled at the last state, in the model's order (the
    /// index in this list is the next step's index in a [`TracePath`]).
    pub successors: Vec<Successor>,
    /// Whether the model calls the last state a legitimate end.
    pub terminal: bool,
    /// A fault of the code under the model (e.g. a core's error) that voids
    /// what the explorer shows; see [`Model::fault_text`].
    pub fault: Option<String>,
    /// More about the last state, as HTML (a World's nodes, network...).
    pub sections: Option<String>,
    /// The path as an SVG message sequence chart (a World's), or why it
    /// could not be drawn.
    pub chart: Option<Result<String, String>>,
}

/// The outcome of looking for a state by its fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A shortest path to the state.
    Path(TracePath),
    /// Not among the `explored` states visited within the limits;
    /// `complete`: those were all the reachable states.
    NotFound {
        /// States visited.
        explored: usize,
        /// Whether every reachable state was visited.
        complete: bool,
    },
}

/// How far a search by fingerprint may go.
#[derive(Debug, Clone, Copy)]
pub struct FindLimits {
    /// Most distinct states to visit.
    pub max_states: usize,
    /// When to give up.
    pub deadline: Instant,
}

/// A model as the explorer sees it.
pub trait Explorable: Send + Sync {
    /// The model's name and parameters, e.g. `two-phase RM=3`.
    fn title(&self) -> String;
    /// The initial states.
    fn initial_states(&self) -> Vec<StateStep>;
    /// A fault of the code under the model seen so far (see [`Model::fault_text`]).
    fn fault(&self) -> Option<String>;
    /// Walks `path`; `Err` says why it names no state (an initial state or
    /// an action index that does not exist).
    fn walk(&self, path: &TracePath) -> Result<Walk, String>;
    /// The texts of the actions `path` takes (its walk without the states'
    /// descriptions); `Err` as for [`walk`](Explorable::walk).
    fn action_texts(&self, path: &TracePath) -> Result<Vec<String>, String>;
    /// A shortest path to the state of `fingerprint`, by breadth-first
    /// search within `limits`.
    fn find(&self, fingerprint: Fingerprint, limits: FindLimits) -> Found;
    /// The path a replay file takes; `Err` names the line that does not fit.
    fn path_of_replay(&self, file: &ReplayFile) -> Result<TracePath, String>;
}

/// What a kind of model adds to the generic pages (see [`crate::world_view`]).
pub trait Extras<M: Model>: Send + Sync {
    /// HTML sections about `state`, every model text escaped.
    fn sections(&self, model: &M, state: &M::State) -> Option<String>;
    /// The SVG chart of `trace`, or why it cannot be drawn.
    fn chart(&self, model: &M, trace: &ReplayFile) -> Option<Result<String, String>>;
}

/// No extras: the generic pages only.
pub struct Plain;

impl<M: Model> Extras<M> for Plain {
    fn sections(&self, _: &M, _: &M::State) -> Option<String> {
        None
    }
    fn chart(&self, _: &M, _: &ReplayFile) -> Option<Result<String, String>> {
        None
    }
}

/// A [`Model`] behind [`Explorable`], with the extras `X` of its kind.
pub struct ModelExplorer<M, X> {
    model: M,
    extras: X,
}

impl<M: Model, X: Extras<M>> ModelExplorer<M, X> {
    /// Explores `model`, with `extras` on its pages.
    pub fn new(model: M, extras: X) -> ModelExplorer<M, X> {
        ModelExplorer { model, extras }
    }

    fn initial(&self) -> Vec<M::State> {
        let mut states = Vec::new();
        self.model.init_states(&mut states);
        states
    }

    /// The enabled actions of `state` and the states they lead to, in the
    /// model's order, each successor computed only when it is asked for.
    fn enabled<'a>(
        &'a self,
        state: &'a M::State,
    ) -> impl Iterator<Item = (M::Action, M::State)> + 'a {
        let mut actions = Vec::new();
        self.model.actions(state, &mut actions);
        actions.into_iter().filter_map(move |action| {
            let next = self.model.next_state(state, &action)?;
            Some((action, next))
        })
    }

    /// The initial state `path` starts from.
    fn initial_at(&self, path: &TracePath) -> Result<M::State, String> {
        let initial = self.initial();
        let count = initial.len();
        initial.into_iter().nth(path.init).ok_or_else(|| {
            format!(
                "initial state {} does not exist: the model has {count}",
                path.init
            )
        })
    }

    /// Step `number` (from 0) of a path: the enabled action `index` of
    /// `state`, and where it leads.
    fn step(
        &self,
        state: &M::State,
        number: usize,
        index: usize,
    ) -> Result<(M::Action, M::State), String> {
        self.enabled(state).nth(index).ok_or_else(|| {
            format!(
                "step {}: there is no enabled action {index} (the state has {})",
                number + 1,
                self.enabled(state).count()
            )
        })
    }

    /// The properties `state` (reached by `step`, if not initial) violates.
    fn violated(&self, step: Option<(&M::State, &M::Action)>, state: &M::State) -> Vec<String> {
        self.model
            .properties()
            .into_iter()
            .filter(|property| match (&property.kind, step) {
                (PropertyKind::Always(holds), _) => !holds(&self.model, state),
                (PropertyKind::Step(holds), Some((pre, action))) => {
                    !holds(&self.model, pre, action, state)
                }
                _ => false,
            })
            .map(|property| property.name)
            .collect()
    }

    fn state_step(&self, step: Option<(&M::State, &M::Action)>, state: &M::State) -> StateStep {
        StateStep {
            action: step.map(|(_, action)| self.model.format_action(action)),
            fingerprint: Fingerprint::of_bytes(&state.to_bytes()),
            view: self.model.describe_state(state),
            violated: self.violated(step, state),
        }
    }

    /// The replay file of the path whose actions are `actions`.
    fn trace_file(&self, init: usize, actions: Vec<String>) -> ReplayFile {
        ReplayFile {
            model: self.model.name(),
            params: self.model.params(),
            settings: Vec::new(),
            violates: None,
            init: (0, init),
            actions: actions.into_iter().map(|text| (0, text)).collect(),
            model_line: 0,
        }
    }
}

impl<M, X> Explorable for ModelExplorer<M, X>
where
    M: Model + Send,
    X: Extras<M>,
{
    fn title(&self) -> String {
        let mut title = self.model.name();
        for param in self.model.params() {
            title.push_str(&format!(" {}={}", param.name, param.value));
        }
        title
    }

    fn initial_states(&self) -> Vec<StateStep> {
        self.initial()
            .iter()
            .map(|state| self.state_step(None, state))
            .collect()
    }

    fn fault(&self) -> Option<String> {
        self.model.fault_text()
    }

    fn walk(&self, path: &TracePath) -> Result<Walk, String> {
        let mut state = self.initial_at(path)?;
        let mut steps = vec![self.state_step(None, &state)];
        for (number, &index) in path.steps.iter().enumerate() {
            let (action, next) = self.step(&state, number, index)?;
            steps.push(self.state_step(Some((&state, &action)), &next));
            state = next;
        }
        let here = &steps.last().expect("a walk has a state").view;
        let successors = self
            .enabled(&state)
            .map(|(action, next)| {
                let view = self.model.describe_state(&next);
                Successor {
                    action: self.model.format_action(&action),
                    fingerprint: Fingerprint::of_bytes(&next.to_bytes()),
                    changes: view
                        .changes_since(here)
                        .into_iter()
                        .map(|change| FieldChangeReport {
                            name: change.name,
                            before: change.before,
                            after: change.after,
                        })
                        .collect(),
                    violates: self.violated(Some((&state, &action)), &next),
                }
            })
            .collect();
        let actions = steps
            .iter()
            .filter_map(|step| step.action.clone())
            .collect();
        let chart = self
            .extras
            .chart(&self.model, &self.trace_file(path.init, actions));
        Ok(Walk {
            successors,
            terminal: self.model.is_terminal(&state),
            fault: self.model.fault_text(),
            sections: self.extras.sections(&self.model, &state),
            chart,
            steps,
        })
    }

    fn action_texts(&self, path: &TracePath) -> Result<Vec<String>, String> {
        let mut state = self.initial_at(path)?;
        let mut texts = Vec::with_capacity(path.steps.len());
        for (number, &index) in path.steps.iter().enumerate() {
            let (action, next) = self.step(&state, number, index)?;
            texts.push(self.model.format_action(&action));
            state = next;
        }
        Ok(texts)
    }

    fn find(&self, fingerprint: Fingerprint, limits: FindLimits) -> Found {
        // Parent links: (parent node, index of the initial state or action).
        let mut links: Vec<(Option<usize>, usize)> = Vec::new();
        let mut seen = HashSet::new();
        let mut queue = VecDeque::new();
        let path_to = |links: &[(Option<usize>, usize)], mut node: usize| {
            let mut steps = Vec::new();
            loop {
                match links[node] {
                    (Some(parent), index) => {
                        steps.push(index);
                        node = parent;
                    }
                    (None, init) => {
                        steps.reverse();
                        return TracePath { init, steps };
                    }
                }
            }
        };
        for (init, state) in self.initial().into_iter().enumerate() {
            let print = Fingerprint::of_bytes(&state.to_bytes());
            if seen.insert(print) {
                links.push((None, init));
                if print == fingerprint {
                    return Found::Path(path_to(&links, links.len() - 1));
                }
                queue.push_back((state, links.len() - 1));
            }
        }
        while let Some((state, node)) = queue.pop_front() {
            if seen.len() >= limits.max_states || Instant::now() >= limits.deadline {
                return Found::NotFound {
                    explored: seen.len(),
                    complete: false,
                };
            }
            for (index, (_, next)) in self.enabled(&state).enumerate() {
                let print = Fingerprint::of_bytes(&next.to_bytes());
                if seen.insert(print) {
                    links.push((Some(node), index));
                    if print == fingerprint {
                        return Found::Path(path_to(&links, links.len() - 1));
                    }
                    queue.push_back((next, links.len() - 1));
                }
            }
        }
        Found::NotFound {
            explored: seen.len(),
            complete: true,
        }
    }

    fn path_of_replay(&self, file: &ReplayFile) -> Result<TracePath, String> {
        let params = self.model.params();
        if file.model != self.model.name() || file.params != params {
            let show = |params: &[cmc_model::ModelParam]| {
                params
                    .iter()
                    .map(|p| format!(" {}={}", p.name, p.value))
                    .collect::<String>()
            };
            return Err(format!(
                "line {}: the file is a trace of {}{}, but this explorer shows {}",
                file.model_line,
                file.model,
                show(&file.params),
                self.title()
            ));
        }
        let (init_line, init) = file.init;
        let mut state = self
            .initial()
            .into_iter()
            .nth(init)
            .ok_or_else(|| format!("line {init_line}: initial state {init} does not exist"))?;
        let mut path = TracePath::at_initial(init);
        for (line, text) in &file.actions {
            let (index, (_, next)) = self
                .enabled(&state)
                .enumerate()
                .find(|(_, (action, _))| self.model.format_action(action) == *text)
                .ok_or_else(|| format!("line {line}: `{text}` is not enabled at this step"))?;
            path.steps.push(index);
            state = next;
            if path.steps.len() > crate::path::PATH_STEPS_MAX {
                return Err(format!(
                    "line {line}: the explorer follows at most {} steps",
                    crate::path::PATH_STEPS_MAX
                ));
            }
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use cmc_models::DieHard;

    use super::*;

    fn die_hard() -> ModelExplorer<DieHard, Plain> {
        ModelExplorer::new(DieHard::new(), Plain)
    }

    fn value<'a>(step: &'a StateStep, field: &str) -> &'a str {
        let (_, value) = step
            .view
            .fields
            .iter()
            .find(|(name, _)| name == field)
            .unwrap();
        value
    }

    fn limits(max_states: usize) -> FindLimits {
        FindLimits {
            max_states,
            deadline: Instant::now() + Duration::from_secs(10),
        }
    }

    #[test]
    fn a_walk_follows_enabled_actions_by_index() {
        let walk = die_hard()
            .walk(&TracePath::parse("0.1.5").unwrap())
            .unwrap();
        let actions: Vec<_> = walk.steps.iter().map(|s| s.action.clone()).collect();
        assert_eq!(
            actions,
            [None, Some("FillBigJug".into()), Some("BigToSmall".into())]
        );
        let last = walk.steps.last().unwrap();
        assert_eq!((value(last, "big"), value(last, "small")), ("2", "3"));
        assert_eq!(walk.successors.len(), 6);
        let empty_big = &walk.successors[3];
        assert_eq!(empty_big.action, "EmptyBigJug");
        assert_eq!(empty_big.changes.len(), 1);
        assert_eq!(empty_big.changes[0].before.as_deref(), Some("2"));
        assert_eq!(empty_big.changes[0].after.as_deref(), Some("0"));
        let next = die_hard()
            .walk(&TracePath::parse("0.1.5.3").unwrap())
            .unwrap();
        assert_eq!(
            next.steps.last().unwrap().fingerprint,
            empty_big.fingerprint
        );
    }

    #[test]
    fn a_path_to_no_state_is_an_error() {
        let explorer = die_hard();
        let missing_action = explorer.walk(&TracePath::parse("0.1.6").unwrap());
        assert!(missing_action
            .unwrap_err()
            .contains("step 2: there is no enabled action 6"));
        let missing_initial = explorer.walk(&TracePath::at_initial(1));
        assert!(missing_initial
            .unwrap_err()
            .contains("initial state 1 does not exist"));
    }

    #[test]
    fn a_search_by_fingerprint_says_whether_it_saw_every_state() {
        let explorer = die_hard();
        let nowhere = Fingerprint(7);
        // DieHard has 16 reachable states (TLC's count).
        assert_eq!(
            explorer.find(nowhere, limits(1000)),
            Found::NotFound {
                explored: 16,
                complete: true
            }
        );
        assert!(matches!(
            explorer.find(nowhere, limits(3)),
            Found::NotFound {
                complete: false,
                ..
            }
        ));
        let target = explorer.walk(&TracePath::parse("0.0.4").unwrap()).unwrap();
        let print = target.steps.last().unwrap().fingerprint;
        // Small 0, big 3: FillSmallJug then SmallToBig is a shortest way.
        assert_eq!(
            explorer.find(print, limits(1000)),
            Found::Path(TracePath::parse("0.0.4").unwrap())
        );
    }

    #[test]
    fn a_replay_file_becomes_a_path_only_for_its_own_model() {
        let explorer = die_hard();
        let text = "cmc-replay 2\nmodel die-hard\nparam INVARIANTS=TypeOK\ninit 0\n\
                    action FillBigJug\naction BigToSmall\nend\n";
        let file = ReplayFile::parse(text).unwrap();
        assert_eq!(
            explorer.path_of_replay(&file),
            Ok(TracePath::parse("0.1.5").unwrap())
        );
        let other = ReplayFile::parse(&text.replace("TypeOK", "TypeOK,NotSolved")).unwrap();
        assert!(explorer
            .path_of_replay(&other)
            .unwrap_err()
            .contains("line 2"));
        let disabled = ReplayFile::parse(&text.replace("BigToSmall", "Pour")).unwrap();
        assert!(explorer
            .path_of_replay(&disabled)
            .unwrap_err()
            .contains("`Pour` is not enabled"));
    }
}
