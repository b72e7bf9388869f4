//! What a counterexample of a World tells its reader: the fault budgets
//! left, by name; the step at which an action property fails, marked in the
//! replay; why a client history is not linearizable; and replies and client
//! operations in the core's own words.

use std::sync::Arc;

use cmc_linearizability::specs::{Register, RegisterOp, RegisterRet};
use cmc_model::{Model, Property};
use cmc_search::{AnyModel, Checker, ReplayFile, SearchOptions, Verdict};
use cmc_world::example_cores::reqack::{ReqAck, REPLY_BUSY, REPLY_OK};
use cmc_world::properties::consistency::{linearizable, ClientHistory, ReplyMeaning};
use cmc_world::report::replay;
use cmc_world::system::action::{Action, CrashAction};
use cmc_world::system::state::WorldState;
use cmc_world::{World, WorldSpec};

/// Two reqack nodes with one request and one crash and restart to spend.
fn crashing_world() -> World {
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
    spec.set_all(&["requests=1", "crashes=1", "restarts=1"])
        .unwrap();
    World::new(spec)
}

#[test]
fn fault_budgets_are_shown_by_name() {
    let world = crashing_world();
    let mut init = Vec::new();
    world.init_states(&mut init);
    let crashed = world
        .next_state(&init[0], &Action::Crash(CrashAction::Crash { node: 0 }))
        .unwrap();
    let budgets = |state: &WorldState| {
        let view = world.describe_state(state);
        let (_, text) = view
            .fields
            .iter()
            .find(|(name, _)| name == "budgets")
            .unwrap()
            .clone();
        text
    };
    // Only the budgets this World gives, each by its parameter's name.
    assert_eq!(budgets(&init[0]), "{crashes: 1, restarts: 1}");
    assert_eq!(budgets(&crashed), "{crashes: 0, restarts: 1}");
    // A step's diff names the budget it spent, not the whole list.
    let changes = world
        .describe_state(&crashed)
        .changes_since(&world.describe_state(&init[0]));
    let spent = changes
        .iter()
        .find(|change| change.field == "budgets")
        .unwrap();
    assert_eq!(spent.name, "budgets[crashes]");
    assert_eq!(
        (spent.before.as_deref(), spent.after.as_deref()),
        (Some("1"), Some("0"))
    );
}

/// An action property that no crash may happen: it fails at the CRASH step.
fn no_crash() -> Property<World> {
    Property::step(
        "NoCrash",
        |_: &World, _: &WorldState, action: &Action, _: &WorldState| {
            !matches!(action, Action::Crash(CrashAction::Crash { .. }))
        },
    )
}

#[test]
fn a_violated_action_property_is_marked_at_its_step_in_the_replay() {
    let checker = Checker::new(crashing_world().with_property(no_crash())).workers(1);
    let outcome = checker.run();
    assert!(
        matches!(&outcome.verdict, Verdict::Violated { property, .. } if property == "NoCrash"),
        "{:?}",
        outcome.verdict
    );
    let trace = outcome.counterexample.unwrap();
    let file = ReplayFile::from_counterexample(checker.model(), &trace, Some("NoCrash"));
    let text = replay::run(&crashing_world().with_property(no_crash()), &file).unwrap();
    let (steps, _chart) = text.split_once("message sequence chart:").unwrap();
    let last = steps.rsplit("\nstep ").next().unwrap();
    assert!(last.contains("CRASH"), "{last}");
    assert!(last.contains("VIOLATED NoCrash (step)"), "{text}");
    // Only there.
    assert_eq!(steps.matches("VIOLATED").count(), 1, "{text}");
}

/// reqack as a register that each request writes (its id): an OK reply
/// acknowledges the write, and a BUSY reply read as a value returned
/// contradicts the register.
fn busy_is_a_result() -> ClientHistory<Register> {
    ClientHistory::new(
        Register,
        |request, _node| RegisterOp::Write(request.into()),
        |_: &RegisterOp, reply: &[u8]| {
            ReplyMeaning::Returned(match reply {
                [REPLY_OK] => RegisterRet::Ack,
                _ => RegisterRet::Value(reply[0].into()),
            })
        },
    )
}

#[test]
fn a_linearizability_failure_says_which_operations_cannot_be_ordered() {
    let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2)
        .requests(2)
        .build()
        .unwrap();
    for world in [
        World::new(spec.clone()).with_property(linearizable(busy_is_a_result())),
        cmc_world::properties::consistency::linearizable_summarised(
            World::new(spec.clone()),
            busy_is_a_result(),
        ),
    ] {
        let options = SearchOptions {
            workers: 1,
            ..SearchOptions::default()
        };
        let report = world.check(&options);
        assert_eq!(report.verdict, "violated");
        assert_eq!(report.property.as_deref(), Some("Linearizable"));
        let explanation = report.explanation.expect("the failure is explained");
        assert!(
            explanation.starts_with("No sequential order of these operations"),
            "{explanation}"
        );
        // The operation that got BUSY is named with the reply it got.
        assert!(
            explanation.contains(&format!("-> Value({REPLY_BUSY}) [steps")),
            "{explanation}"
        );
    }
}

/// reqack, describing its replies and the operations it is sent.
struct DescribedReqAck(ReqAck);

impl cmc_world::Core for DescribedReqAck {
    fn name(&self) -> &str {
        "described-reqack"
    }
    fn durable_size(&self) -> usize {
        cmc_world::Core::durable_size(&self.0)
    }
    fn volatile_size(&self) -> usize {
        cmc_world::Core::volatile_size(&self.0)
    }
    fn step(
        &self,
        config: &cmc_world::core::abi::Config,
        durable: &[u8],
        volatile: &mut [u8],
        event: &cmc_world::core::abi::Event,
        out: &mut cmc_world::core::abi::Outputs,
    ) -> Result<(), cmc_world::core::abi::CoreError> {
        cmc_world::Core::step(&self.0, config, durable, volatile, event, out)
    }
    fn describe_reply(&self, _: &cmc_world::core::abi::Config, reply: &[u8]) -> Option<String> {
        Some(match reply {
            [REPLY_OK] => "OK".into(),
            _ => "BUSY".into(),
        })
    }
    fn describe_operation(
        &self,
        _: &cmc_world::core::abi::Config,
        operation: &[u8],
    ) -> Option<String> {
        Some(format!("store(key={})", operation[1]))
    }
}

#[test]
fn replies_and_operations_are_shown_in_the_cores_words() {
    let mut spec = WorldSpec::new(Arc::new(DescribedReqAck(ReqAck::default())), 2).unwrap();
    spec.set_all(&["requests=1", "workload=put:2"]).unwrap();
    let no_reply = Property::always("NoReply", |world: &World, state: &WorldState| {
        world
            .inspect(state)
            .ghost()
            .iter()
            .all(|entry| entry.kind != cmc_world::system::state::GhostKind::Reply)
    });
    let checker = Checker::new(World::new(spec).with_property(no_reply)).workers(1);
    let trace = checker
        .run()
        .counterexample
        .expect("the client gets a reply");
    let world = checker.model();
    let view = world.describe_state(trace.last_state().unwrap());
    let (_, ghost) = view
        .fields
        .iter()
        .find(|(name, _)| name == "ghost")
        .unwrap();
    assert!(ghost.contains("invoke r0@n0 store(key="), "{ghost}");
    assert!(ghost.contains("reply r0@n0 OK"), "{ghost}");
}
