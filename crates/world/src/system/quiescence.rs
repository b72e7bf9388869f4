//! Bounded liveness: from a state, a fair schedule must reach a goal within a bound.
//!
//! From every reachable state whose fault budgets are spent (drops, dups,
//! crashes, restarts, partitions, local failures, one-way cuts, isolations,
//! splits, retries: ticks are time, not a fault), the fair schedule must
//! reach a goal within a bound of steps.
//! Progress is judged once the faults are over: the fair schedule first
//! heals every cut link (both directions: one-way cuts, isolations and
//! splits included) and restarts every crashed node (without spending
//! budgets; these steps count towards the bound). It then runs in rounds:
//! each round takes the fair actions enabled at
//! its start (DELIVER of every message, FLUSH, WAKE, a pending random
//! CHOICE (with the first value that is still enabled), CLIENT, FIRE of every
//! armed timer, and TICK of every node when the World has a tick budget, the
//! clock then being free) and runs each that is still enabled, in that order.
//! Every action enabled for a whole round is therefore taken within it: no
//! message, timer or wake-up is starved.
//!
//! The fair run is computed outside the state space (it is part of the
//! property, not of the search), so a failure's counterexample is the path
//! to the state; [`World::fair_run`] gives the run that made no progress.

use std::fmt;
use std::sync::Arc;

use cmc_model::{Model, Property};

use crate::system::action::{Action, CrashAction, LinkAction, NetAction, Surplus};
use crate::system::spec::NetSemantics;
use crate::system::state::{Budget, WorldState};
use crate::World;

/// A goal the fair schedule must reach, e.g. [`every_client_replied`].
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::quiescence::{every_client_replied, Goal};
/// use cmc_world::system::state::WorldState;
/// use cmc_world::{World, WorldSpec};
///
/// let world = World::new(WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(1).build()?);
/// let mut states = Vec::new();
/// world.init_states(&mut states);
/// let replied: Goal = Arc::new(every_client_replied);
/// let nothing_issued: Goal = Arc::new(|world: &World, state: &WorldState| world.inspect(state).issued() == 0);
/// assert!(!replied(&world, &states[0]), "the request is not even issued");
/// assert!(nothing_issued(&world, &states[0]));
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
pub type Goal = Arc<dyn Fn(&World, &WorldState) -> bool + Send + Sync>;

/// The name of the quiescence property.
pub const QUIESCENCE: &str = "Quiescence";

/// The quiescence obligation of a World.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::quiescence::{every_client_replied, QUIESCENCE};
/// use cmc_world::{World, WorldSpec};
///
/// // Bug 3 never retransmits a dropped DATA.
/// let spec = WorldSpec::builder(Arc::new(ReqAck { bug: 3 }), 2).requests(1).param("drops", 1).build()?;
/// let world = World::new(spec).with_quiescence(20, "every client replied", every_client_replied);
/// let checker = Checker::new(world).workers(1);
/// let outcome = checker.run();
/// assert!(matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == QUIESCENCE));
/// // From the counterexample's last state, the fair run fires the timer
/// // until the bound: it is not stuck, and never answers the client.
/// let trace = outcome.counterexample.expect("a path to the state");
/// let run = checker.model().fair_run(trace.last_state().unwrap()).expect("faults are spent");
/// assert!(!run.reached && !run.stuck, "{run}");
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone)]
pub struct Quiescence {
    /// Most fair steps from a state to its goal.
    pub steps_max: u32,
    /// The goal's name, for reports.
    pub goal_name: String,
    /// The goal.
    pub goal: Goal,
}

/// The goal "every client request was issued and answered (a reply or a
/// local failure) or lost with its node" (see [`answered`]).
pub fn every_client_replied(world: &World, state: &WorldState) -> bool {
    state.issued == world.spec().requests
        && (0..state.issued as u32).all(|request| answered(state, request))
}

/// Whether the client of `request` got an answer: a reply, a local failure,
/// or the crash of the node it was sent to while it was open (the client
/// saw its connection break: a request lost with its node is not owed a
/// reply; [`crate::World::explain_unanswered`] names such requests).
pub fn answered(state: &WorldState, request: u32) -> bool {
    lost_in_crash(state, request)
        || state
            .ghost
            .iter()
            .any(|entry| entry.request == request && entry.kind.is_answer())
}

/// Whether `request` was open at its node when that node crashed (and
/// was not retried since).
pub fn lost_in_crash(state: &WorldState, request: u32) -> bool {
    u8::try_from(request).is_ok_and(|request| state.lost_in_crash.binary_search(&request).is_ok())
}

/// Whether every fault budget of `state` is spent (ticks are not a fault).
pub fn faults_spent(state: &WorldState) -> bool {
    state
        .budgets
        .iter()
        .enumerate()
        .all(|(kind, &left)| kind == Budget::Ticks as usize || left == 0)
}

/// A fair run from a state: the actions taken, and whether the goal was reached.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["requests=1", "quiescence=20"])?;
/// let world = World::new(spec);
/// let mut init = Vec::new();
/// world.init_states(&mut init);
/// // No fault budget to spend: the fair run from the start issues the
/// // request and runs the protocol until the client has its reply.
/// let run = world.fair_run(&init[0]).expect("quiescence is checked");
/// assert!(run.reached && !run.stuck, "{run}");
/// assert_eq!(run.actions[0], "CLIENT r0 -> n0");
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone, Debug)]
pub struct FairRun {
    /// The goal's name.
    pub goal_name: String,
    /// The actions taken, as text.
    pub actions: Vec<String>,
    /// Whether the goal held at the end.
    pub reached: bool,
    /// Whether the run stopped because no fair action was enabled.
    pub stuck: bool,
    /// The state the run ended in.
    pub end: WorldState,
}

impl fmt::Display for FairRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match (self.reached, self.stuck) {
            (true, _) => "reached",
            (false, true) => "did not reach (no fair action left)",
            (false, false) => "did not reach (step bound hit)",
        };
        writeln!(
            f,
            "fair run of {} step(s) {how} goal `{}`:",
            self.actions.len(),
            self.goal_name
        )?;
        for (step, action) in self.actions.iter().enumerate() {
            writeln!(f, "  {:>3}. {action}", step + 1)?;
        }
        Ok(())
    }
}

/// `action` for `state`, in which earlier steps of the round may have moved
/// its message: where the same message now is on its link (in a FIFO
/// network, only if it is the link's head). `None` if it is gone.
fn relocated(state: &WorldState, action: &Action, fifo: bool) -> Option<Action> {
    let Some(&net) = action.net() else {
        return Some(*action);
    };
    let NetAction { src, dst, msg, .. } = net;
    let link_head = state
        .net
        .iter()
        .position(|p| (p.src, p.dst) == (src, dst))?;
    let (index, packet) = state
        .net
        .iter()
        .enumerate()
        .skip(link_head)
        .find(|(_, p)| (p.src, p.dst, p.msg) == (src, dst, msg))?;
    if fifo && index != link_head {
        return None;
    }
    Some(Action::Net(NetAction {
        index: index as u16,
        surplus: if packet.surplus {
            Surplus::Ends
        } else {
            Surplus::None
        },
        ..net
    }))
}

impl World {
    /// Adds the quiescence property (builder style): from every reachable
    /// state with spent fault budgets, the fair schedule reaches `goal`
    /// within `steps_max` steps.
    pub fn with_quiescence(
        mut self,
        steps_max: u32,
        goal_name: &str,
        goal: impl Fn(&World, &WorldState) -> bool + Send + Sync + 'static,
    ) -> World {
        self.quiescence = Some(Quiescence {
            steps_max,
            goal_name: goal_name.into(),
            goal: Arc::new(goal),
        });
        self.with_property(Property::always(QUIESCENCE, |world: &World, state| {
            world.fair_run(state).is_none_or(|run| run.reached)
        }))
    }

    /// The fair run from `state` if the quiescence check applies there (a
    /// quiescence obligation is set and the fault budgets are spent).
    pub fn fair_run(&self, state: &WorldState) -> Option<FairRun> {
        let quiescence = self.quiescence.as_ref()?;
        if !faults_spent(state) {
            return None;
        }
        let mut taken = Vec::new();
        let mut current = self.end_faults(state.clone(), &mut taken);
        let free_time = self.spec().budgets[Budget::Ticks as usize] > 0;
        let mut actions = Vec::new();
        let steps_max = quiescence.steps_max as usize;
        let fifo = self.spec().net == NetSemantics::Fifo;
        loop {
            if (quiescence.goal)(self, &current) {
                return Some(self.fair_end(quiescence, taken, true, false, current));
            }
            if free_time {
                current.budgets[Budget::Ticks as usize] = u8::MAX;
            }
            actions.clear();
            self.actions(&current, &mut actions);
            actions.retain(|action| action.fair_rank().is_some());
            actions.sort_by_key(Action::fair_rank);
            let mut progressed = false;
            for action in &actions {
                if taken.len() >= steps_max {
                    return Some(self.fair_end(quiescence, taken, false, false, current));
                }
                let Some(action) = relocated(&current, action, fifo) else {
                    continue;
                };
                if let Some(next) = self.next_state(&current, &action) {
                    taken.push(self.format_action(&action));
                    current = next;
                    progressed = true;
                }
            }
            if !progressed {
                let reached = (quiescence.goal)(self, &current);
                return Some(self.fair_end(quiescence, taken, reached, true, current));
            }
        }
    }

    /// `state` after the faults end: every cut link healed, then every
    /// crashed node restarted (with its START step), each step recorded in
    /// `taken`. No budget is spent: those of the result are as in `state`.
    fn end_faults(&self, state: WorldState, taken: &mut Vec<String>) -> WorldState {
        let nodes = state.nodes.len() as u8;
        let heals = (0..nodes)
            .flat_map(|a| (a + 1..nodes).map(move |b| (a, b)))
            .filter(|&(a, b)| !state.pair_up(a, b))
            .map(|(a, b)| Action::Link(LinkAction::Pair { a, b, cut: false }));
        let restarts = (0..nodes)
            .filter(|&node| state.nodes[node as usize].crashed)
            .map(|node| Action::Crash(CrashAction::Restart { node }));
        let repairs: Vec<Action> = heals.chain(restarts).collect();
        let budgets = state.budgets;
        let mut current = state;
        current.budgets[Budget::Partitions as usize] = u8::MAX;
        current.budgets[Budget::Restarts as usize] = u8::MAX;
        for action in repairs {
            if let Some(next) = self.next_state(&current, &action) {
                taken.push(self.format_action(&action));
                current = next;
            }
        }
        current.budgets = budgets;
        current
    }

    fn fair_end(
        &self,
        quiescence: &Quiescence,
        actions: Vec<String>,
        reached: bool,
        stuck: bool,
        end: WorldState,
    ) -> FairRun {
        FairRun {
            goal_name: quiescence.goal_name.clone(),
            actions,
            reached,
            stuck,
            end,
        }
    }
}
