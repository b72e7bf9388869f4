//! Symmetry reduction over reqack's interchangeable receivers: the same
//! verdicts and shortest counterexample lengths with it on and off, on fewer
//! states; the reduction factor is printed (`--nocapture`).

use std::sync::Arc;

use cmc_search::{Checker, Verdict};
use cmc_world::example_cores::reqack::{self, ReqAck};
use cmc_world::{World, WorldSpec};

fn run(bug: u32, params: &[&str], symmetry: bool) -> (Verdict, u64, usize) {
    let mut spec = WorldSpec::new(Arc::new(ReqAck { bug }), 3).unwrap();
    spec.set_all(params).unwrap();
    spec.set("symmetry", if symmetry { "1,2" } else { "off" })
        .unwrap();
    let world = World::new(spec).with_properties(reqack::properties());
    // The planted bugs are safety violations; a crashed sender with three
    // nodes also hangs, found first, which would hide them.
    let checker = Checker::new(world).workers(1).check_deadlock(bug == 0);
    let outcome = checker.run();
    assert!(checker.model().fault().is_none());
    let length = outcome
        .counterexample
        .as_ref()
        .map_or(0, |trace| trace.len());
    (outcome.verdict, outcome.stats.distinct_states, length)
}

const CRASH_RECEIVERS: &[&str] = &["requests=1", "crashes=1", "restarts=1", "crash_nodes=1,2"];

#[test]
fn same_verdicts_with_and_without_symmetry() {
    let cases: [(u32, &[&str], Option<&str>); 4] = [
        (
            0,
            &[
                "requests=2",
                "dups=1",
                "crashes=1",
                "restarts=1",
                "crash_nodes=1,2",
            ],
            None,
        ),
        (0, &["requests=2", "drops=1", "net=fifo"], None),
        (
            1,
            &["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"],
            Some("AtMostOneReply"),
        ),
        (2, CRASH_RECEIVERS, Some("AckedIsDurable")),
    ];
    for (bug, params, expected) in cases {
        let (off, off_states, off_length) = run(bug, params, false);
        let (on, on_states, on_length) = run(bug, params, true);
        match expected {
            None => assert_eq!(off, Verdict::Pass, "bug {bug} {params:?}"),
            Some(name) => assert!(
                matches!(&off, Verdict::Violated { property, .. } if property == name),
                "bug {bug}: {off:?}"
            ),
        }
        assert_eq!(off, on, "bug {bug} {params:?}");
        assert_eq!(off_length, on_length, "shortest counterexamples, bug {bug}");
        println!(
            "bug {bug} {params:?}: {off_states} distinct states off, {on_states} on, reduction {:.2}x",
            off_states as f64 / on_states as f64
        );
        if expected.is_none() {
            assert!(
                on_states * 3 < off_states * 2,
                "symmetry must reduce a passing run"
            );
        }
    }
}

/// The C reqack (`cores/reqack/reqack.c`, which declares its sender's
/// `acked` with `CMC_ID_FIELDS`) gives the verdicts of the Rust one with
/// symmetry on and off, on fewer states.
#[test]
fn the_c_reqack_gets_the_same_verdicts_with_and_without_symmetry() {
    let cases: [(&str, &[&str], Option<&str>); 3] = [
        ("libreqack.so", &["requests=2", "drops=1"], None),
        (
            "libreqack_bug1.so",
            &["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"],
            Some("AtMostOneReply"),
        ),
        ("libreqack_bug2.so", CRASH_RECEIVERS, Some("AckedIsDurable")),
    ];
    for (library, params, expected) in cases {
        let run = |symmetry: bool| {
            let core = cmc_world::CCore::load(&common::fixture(library)).unwrap();
            let mut spec = WorldSpec::new(Arc::new(core), 3).unwrap();
            spec.set_all(params).unwrap();
            spec.set("symmetry", if symmetry { "1,2" } else { "off" })
                .unwrap();
            let world = World::new(spec).with_properties(reqack::properties());
            let checker = Checker::new(world).workers(1).check_deadlock(false);
            let outcome = checker.run();
            assert_eq!(checker.model().fault(), None, "{library}");
            let length = outcome.counterexample.as_ref().map(|trace| trace.len());
            (outcome.verdict, length, outcome.stats.distinct_states)
        };
        let (off, off_length, off_states) = run(false);
        let (on, on_length, on_states) = run(true);
        match expected {
            None => assert_eq!(off, Verdict::Pass, "{library}"),
            Some(name) => assert!(
                matches!(&off, Verdict::Violated { property, .. } if property == name),
                "{library}: {off:?}"
            ),
        }
        assert_eq!((off, off_length), (on, on_length), "{library}");
        println!("{library} {params:?}: {off_states} states without symmetry, {on_states} with");
        if expected.is_none() {
            assert!(
                on_states * 3 < off_states * 2,
                "{on_states} vs {off_states}"
            );
        }
    }
}

/// Witnesses and quiescence give the same verdicts with symmetry as
/// without: a witness reached (a receiver stored the request) and one never
/// reached (a receiver stored request 5) alike, and reqack's missed
/// retransmission (bug 3), which only quiescence catches, is caught with the
/// same counterexample length.
#[test]
fn witnesses_and_quiescence_give_the_same_verdicts_with_and_without_symmetry() {
    use cmc_model::Property;
    use cmc_world::example_cores::reqack::Durable;
    use cmc_world::system::state::WorldState;

    let stored = |request: u32| {
        move |world: &World, state: &WorldState| {
            let inspect = world.inspect(state);
            (1..3).any(|node| {
                let durable = inspect.node(node).durable_as::<Durable>();
                durable.is_some_and(|d| d.stored & (1 << request) != 0)
            })
        }
    };
    for (bug, witness, params) in [
        (0, 0, &["requests=1", "drops=1"][..]),
        (0, 5, &["requests=1", "drops=1"][..]),
        (3, 0, &["requests=1", "drops=1", "quiescence=20"][..]),
    ] {
        let run = |symmetry: bool| {
            let mut spec = WorldSpec::new(Arc::new(ReqAck { bug }), 3).unwrap();
            spec.set_all(params).unwrap();
            spec.set("symmetry", if symmetry { "1,2" } else { "off" })
                .unwrap();
            spec.check_determinism = true;
            let world = World::new(spec)
                .with_properties(reqack::properties())
                .with_property(Property::sometimes("ReceiverStored", stored(witness)));
            let checker = Checker::new(world).workers(1).check_determinism(true);
            let outcome = checker.run();
            assert_eq!(checker.model().fault(), None);
            let length = outcome.counterexample.as_ref().map(|trace| trace.len());
            (outcome.verdict, length)
        };
        let off = run(false);
        assert_eq!(off, run(true), "bug {bug}, witness r{witness}, {params:?}");
        let expected = match (bug, witness) {
            (3, _) => "violated",
            (_, 5) => "vacuous",
            _ => "pass",
        };
        assert_eq!(off.0.as_str(), expected, "bug {bug}, witness r{witness}");
    }
}

#[test]
fn symmetry_refuses_nodes_that_differ() {
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
    let why = spec
        .set_all(&["crash_nodes=1", "symmetry=1,2"])
        .unwrap_err()
        .to_string();
    assert!(why.contains("not interchangeable"), "{why}");
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
    assert!(spec
        .set("symmetry", "1,7")
        .unwrap_err()
        .to_string()
        .contains("node 7"));
}

/// Cores built to break or stress symmetry, and the checks they run under.
mod cores {
    use cmc_model::Property;
    use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
    use cmc_world::system::state::WorldState;
    use cmc_world::{TypedCore, World};

    /// Each node answers a client request when its timer fires; node
    /// `double` answers twice. Nodes are not alike, whatever `permute`
    /// says.
    pub struct LateReply {
        pub double: u32,
    }

    impl TypedCore for LateReply {
        type Durable = u32;
        /// The open request plus one (0: none).
        type Volatile = u32;
        fn name(&self) -> &str {
            "late-reply"
        }
        fn step(
            &self,
            config: &Config,
            _: &u32,
            open: &mut u32,
            event: &Event,
            out: &mut Outputs,
        ) -> Result<(), CoreError> {
            match event.kind() {
                Some(EventKind::Client) => {
                    *open = event.id + 1;
                    out.set_timer(0)?;
                }
                Some(EventKind::Timer) if *open > 0 => {
                    out.reply(*open - 1, &[])?;
                    if config.node == self.double {
                        out.reply(*open - 1, &[])?;
                    }
                    *open = 0;
                }
                _ => {}
            }
            Ok(())
        }
        /// Claims the nodes interchangeable: no ids in the state.
        fn permute(&self, _: &Config, _: &mut u32, _: &mut u32, _: &[u32]) -> bool {
            true
        }
    }

    /// A term per node that goes up by one on each timer, to 2; a node
    /// also persists the id of the node it votes for: itself, once its
    /// term reaches 1 (a durable node id, renamed by `permute`).
    pub struct Terms;

    /// Term then the vote (node id plus one, 0: none), as flushed.
    #[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
    #[repr(C)]
    pub struct Durable {
        pub voted_for: u32,
    }

    impl TypedCore for Terms {
        type Durable = Durable;
        /// The term.
        type Volatile = u32;
        fn name(&self) -> &str {
            "terms"
        }
        fn step(
            &self,
            config: &Config,
            _: &Durable,
            term: &mut u32,
            event: &Event,
            out: &mut Outputs,
        ) -> Result<(), CoreError> {
            match event.kind() {
                Some(EventKind::Start) => out.set_timer(0)?,
                Some(EventKind::Timer) if *term < 2 => {
                    *term += 1;
                    if *term == 1 {
                        let vote = Durable {
                            voted_for: config.node + 1,
                        };
                        out.persist_record(0, &vote)?;
                    }
                    out.set_timer(0)?;
                }
                _ => {}
            }
            Ok(())
        }
        fn permute(&self, _: &Config, d: &mut Durable, _: &mut u32, perm: &[u32]) -> bool {
            if d.voted_for > 0 {
                d.voted_for = perm[d.voted_for as usize - 1] + 1;
            }
            true
        }
        fn node_ids(&self, _: &Config, d: &Durable, _: &u32) -> u64 {
            match d.voted_for {
                0 => 0,
                vote => 1 << (vote - 1),
            }
        }
    }

    /// A node's term never goes down: an action property comparing each
    /// node before and after a step.
    pub fn term_monotonic() -> Property<World> {
        Property::step(
            "TermMonotonic",
            |world: &World, pre: &WorldState, _, post: &WorldState| {
                let (before, after) = (world.inspect(pre), world.inspect(post));
                (0..before.nodes()).all(|node| {
                    before.node(node).volatile_as::<u32>() <= after.node(node).volatile_as::<u32>()
                })
            },
        )
    }

    /// A node votes only for itself: its flushed vote and every vote it
    /// has pending name it.
    pub fn votes_for_itself() -> Property<World> {
        Property::always("VotesForItself", |world: &World, state: &WorldState| {
            let inspect = world.inspect(state);
            (0..inspect.nodes()).all(|node| {
                let view = inspect.node(node);
                let pending = view
                    .env
                    .persists
                    .iter()
                    .map(|p| p.bytes.as_bytes()[0] as u32);
                let flushed = view.durable_as::<Durable>().map_or(0, |d| d.voted_for);
                std::iter::once(flushed)
                    .chain(pending)
                    .all(|vote| vote == 0 || vote == node as u32 + 1)
            })
        })
    }
}

/// The verdict of a check of `core` on 3 nodes with `params`, symmetry of
/// nodes 1 and 2 on or off.
fn check_core(
    core: impl cmc_world::Core + 'static,
    params: &[&str],
    symmetry: bool,
    determinism: bool,
    properties: Vec<cmc_model::Property<World>>,
) -> (Verdict, Option<cmc_world::Fault>, u64) {
    let mut spec = WorldSpec::new(Arc::new(core), 3).unwrap();
    spec.set_all(params).unwrap();
    spec.set("symmetry", if symmetry { "1,2" } else { "off" })
        .unwrap();
    spec.check_determinism = determinism;
    let world = World::new(spec).with_properties(properties);
    let checker = Checker::new(world)
        .workers(1)
        .check_deadlock(false)
        .check_determinism(determinism);
    let outcome = checker.run();
    (
        outcome.verdict,
        checker.model().fault(),
        outcome.stats.distinct_states,
    )
}

/// Nodes 1 and 2 are declared interchangeable, but node 2 answers twice:
/// without symmetry the double reply is found; with it, the run is never a
/// pass: the check that each step commutes with renaming the nodes refuses
/// the symmetry, naming the nodes and the step (with and without
/// `check-determinism`: a small World is checked whole).
#[test]
fn a_symmetry_that_is_not_one_is_refused_not_passed() {
    let params = ["clients=1,2", "requests=1"];
    for double in [1, 2] {
        let (off, _, _) = check_core(cores::LateReply { double }, &params, false, false, vec![]);
        assert!(
            matches!(&off, Verdict::Violated { property, .. } if property == "AtMostOneReply"),
            "node {double} answers twice: {off:?}"
        );
        for determinism in [false, true] {
            let core = cores::LateReply { double };
            let (on, fault, _) = check_core(core, &params, true, determinism, vec![]);
            let fault = fault.unwrap_or_else(|| panic!("node {double}: {on:?}, no fault"));
            assert!(matches!(on, Verdict::Error { .. }), "{on:?}");
            assert_eq!(fault.kind.headline(), "NOT A SYMMETRY");
            let text = fault.to_string();
            assert!(
                text.contains("symmetry=1,2: nodes n1, n2")
                    && text.contains("FIRE n")
                    && text.contains("action: "),
                "{text}"
            );
        }
    }
}

/// A step property compares each node before and after the step: under
/// symmetry it is handed the successor under the pre-state's names, not
/// the canonical form the search stores, so a term that never goes down is
/// not seen to go down when the canonical form swaps the nodes.
#[test]
fn a_step_property_sees_both_states_under_the_same_names() {
    for symmetry in [false, true] {
        for determinism in [false, true] {
            let properties = vec![cores::term_monotonic()];
            let (verdict, fault, states) =
                check_core(cores::Terms, &[], symmetry, determinism, properties);
            assert_eq!(fault, None);
            assert_eq!(
                verdict,
                Verdict::Pass,
                "symmetry={symmetry} check-determinism={determinism}: {states} states"
            );
        }
    }
}

/// A pending persist holding a node id is renamed with its node: a vote
/// for itself stays a vote for itself, pending or flushed, whatever the
/// canonical form renames; with symmetry the same verdict on fewer states.
#[test]
fn a_pending_persist_is_renamed_with_its_node() {
    let run = |symmetry| {
        let properties = vec![cores::votes_for_itself(), cores::term_monotonic()];
        check_core(cores::Terms, &[], symmetry, true, properties)
    };
    let (off, off_fault, off_states) = run(false);
    let (on, on_fault, on_states) = run(true);
    assert_eq!((off_fault, on_fault), (None, None));
    assert_eq!((&off, &on), (&Verdict::Pass, &Verdict::Pass));
    assert!(on_states < off_states, "{on_states} < {off_states}");
}

mod common;

/// `cores/test/votes.c` checked on 3 interchangeable nodes: a C core that
/// declares its node ids (a durable vote, a bit set of votes, an array by
/// node, an id in messages) with `CMC_ID_FIELDS`.
mod c_votes {
    use super::*;
    use cmc_model::Property;
    use cmc_world::system::state::WorldState;
    use cmc_world::CCore;

    /// Node `n`'s volatile part: the votes it got, and whom it heard.
    fn volatile(world: &World, state: &WorldState, node: usize) -> (u32, Vec<u8>) {
        let view = world.inspect(state).node(node);
        let votes = u32::from_le_bytes(view.volatile[..4].try_into().unwrap());
        (votes, view.volatile[4..].to_vec())
    }

    /// A vote comes from a node that heard the candidate's request.
    fn votes_are_heard() -> Property<World> {
        Property::always("VotesAreHeard", |world: &World, state: &WorldState| {
            (0..3).all(|candidate| {
                let (votes, _) = volatile(world, state, candidate);
                (0..3).all(|voter| {
                    votes & (1 << voter) == 0 || volatile(world, state, voter).1[candidate] == 1
                })
            })
        })
    }

    /// The votes a node got never go away (a step property).
    fn votes_grow() -> Property<World> {
        Property::step(
            "VotesGrow",
            |world: &World, pre: &WorldState, _, post: &WorldState| {
                (0..3).all(|node| {
                    let (before, after) =
                        (volatile(world, pre, node).0, volatile(world, post, node).0);
                    before & !after == 0
                })
            },
        )
    }

    /// The outcome of checking `library` with symmetry of all 3 nodes on
    /// or off.
    pub fn check(library: &str, symmetry: bool) -> (Verdict, Option<cmc_world::Fault>, u64) {
        let core = CCore::load(&common::fixture(library)).unwrap();
        assert!(
            core.id_fields().is_some(),
            "{library} declares its id fields"
        );
        let mut spec = WorldSpec::new(Arc::new(core), 3).unwrap();
        spec.set("clients", "0,1,2").unwrap();
        spec.set("symmetry", if symmetry { "0,1,2" } else { "off" })
            .unwrap();
        spec.check_determinism = true;
        let properties = vec![cores::votes_for_itself(), votes_are_heard(), votes_grow()];
        let world = World::new(spec).with_properties(properties);
        let checker = Checker::new(world)
            .workers(1)
            .check_deadlock(false)
            .check_determinism(true);
        let outcome = checker.run();
        (
            outcome.verdict,
            checker.model().fault(),
            outcome.stats.distinct_states,
        )
    }
}

/// A C core that declares where it holds node ids gets the same verdicts
/// with symmetry as without, on fewer states: the control passes and the
/// planted bug is caught by the same property.
#[test]
fn a_c_core_declaring_its_id_fields_gets_the_same_verdicts_on_fewer_states() {
    for (library, expected) in [
        ("libvotes.so", None),
        ("libvotes_bug1.so", Some("VotesAreHeard")),
    ] {
        let (off, off_fault, off_states) = c_votes::check(library, false);
        let (on, on_fault, on_states) = c_votes::check(library, true);
        assert_eq!((&off_fault, &on_fault), (&None, &None), "{library}");
        match expected {
            None => assert_eq!(off, Verdict::Pass, "{library}"),
            Some(name) => assert!(
                matches!(&off, Verdict::Violated { property, .. } if property == name),
                "{library}: {off:?}"
            ),
        }
        assert_eq!(off, on, "{library}");
        println!("{library}: {off_states} states without symmetry, {on_states} with");
        if expected.is_none() {
            assert!(on_states * 3 < off_states, "{on_states} vs {off_states}");
        }
    }
}

/// A declaration that misses ids (those in messages, or an array by node)
/// is refused as NOT A SYMMETRY, never a pass.
#[test]
fn a_c_core_whose_declaration_misses_ids_is_refused() {
    for library in ["libvotes_forget_message.so", "libvotes_forget_index.so"] {
        let (verdict, fault, _) = c_votes::check(library, true);
        let fault = fault.unwrap_or_else(|| panic!("{library}: {verdict:?}"));
        assert_eq!(
            fault.kind.headline(),
            "NOT A SYMMETRY",
            "{library}: {fault}"
        );
        assert!(matches!(verdict, Verdict::Error { .. }), "{library}");
    }
}
