//! A Rust core exported through the C ABI (`export_core!`) is the same core:
//! loaded through its `cmc_core_entry` descriptor, as `CCore::load` does for
//! a shared library, it reaches exactly the states of the Rust core run in
//! process, describes states and messages in the same words, and a panic or
//! an error in its step is a core error, never a crash or a success.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_search::{Checker, Verdict};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::core::export::{DescriptorCell, Exported, PANIC_CODE};
use cmc_world::core::fault::FaultKind;
use cmc_world::example_cores::reqack::{self, ReqAck};
use cmc_world::{CCore, Core, TypedCore, World, WorldSpec};

cmc_world::export_core!(ReqAck = ReqAck { bug: 0 });

/// The exported reqack, through its descriptor, as the loader sees it.
fn exported_reqack() -> CCore {
    // SAFETY: `cmc_core_entry` is the macro's, returning a static descriptor.
    unsafe { CCore::from_descriptor(cmc_core_entry(), "export_core!(ReqAck)", None) }
        .expect("the exported descriptor is valid")
}

fn world(core: Arc<dyn Core>, nodes: usize, params: &[&str]) -> World {
    let mut spec = WorldSpec::new(core, nodes).unwrap();
    spec.set_all(params).unwrap();
    World::new(spec).with_properties(reqack::properties())
}

/// Distinct states, generated states and depth of a passing check.
fn counts(core: Arc<dyn Core>, nodes: usize, params: &[&str]) -> (u64, u64, u64) {
    let checker = Checker::new(world(core, nodes, params)).workers(2);
    let outcome = checker.run();
    assert_eq!(checker.model().fault(), None, "{params:?}");
    assert_eq!(outcome.verdict, Verdict::Pass, "{params:?}");
    (
        outcome.stats.distinct_states,
        outcome.stats.states_generated,
        outcome.stats.depth,
    )
}

#[test]
fn the_exported_core_reaches_the_same_states_as_the_rust_core() {
    let configurations: [(usize, &[&str]); 2] = [
        (2, &["requests=2", "drops=1", "crashes=1", "restarts=1"]),
        (2, &["requests=2", "net=fifo", "dups=1", "ticks=1"]),
    ];
    for (nodes, params) in configurations {
        let in_process = counts(Arc::new(ReqAck::default()), nodes, params);
        let exported = counts(Arc::new(exported_reqack()), nodes, params);
        println!("{params:?}: in process {in_process:?}, exported {exported:?}");
        assert!(in_process.0 > 100, "a configuration worth comparing");
        assert_eq!(exported, in_process, "{params:?}");
    }
}

#[test]
fn the_descriptor_says_what_the_rust_core_says() {
    let exported = exported_reqack();
    let rust = ReqAck::default();
    assert_eq!(exported.name(), "reqack");
    assert_eq!(exported.durable_size(), Core::durable_size(&rust));
    assert_eq!(exported.volatile_size(), Core::volatile_size(&rust));
    assert_eq!(cmc_core_entry(), cmc_core_entry(), "one static descriptor");
    // A state after a client request, described by both.
    let config = Config {
        node: 0,
        nodes: 2,
        params: [0; 8],
    };
    let durable = vec![0u8; exported.durable_size()];
    let mut volatile = vec![0u8; exported.volatile_size()];
    let event = Event::new(EventKind::Client, 0, 0, &[], 0);
    let mut out = Outputs::default();
    Core::step(&rust, &config, &durable, &mut volatile, &event, &mut out).unwrap();
    let mut volatile_c = vec![0u8; exported.volatile_size()];
    let mut out_c = Outputs::default();
    exported
        .step(&config, &durable, &mut volatile_c, &event, &mut out_c)
        .unwrap();
    assert_eq!((volatile_c.as_slice(), out_c), (volatile.as_slice(), out));
    assert_eq!(
        exported.describe_state(&config, &durable, &volatile),
        Core::describe_state(&rust, &config, &durable, &volatile)
    );
    let sent = out.as_slice()[0].payload();
    assert_eq!(
        exported.describe_message(&config, sent),
        Core::describe_message(&rust, &config, sent)
    );
}

/// A core whose step panics on a client request and fails on a timer.
#[derive(Default)]
struct Faulty;

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C)]
struct Nothing {
    unused: u32,
}

impl TypedCore for Faulty {
    type Durable = Nothing;
    type Volatile = Nothing;

    fn name(&self) -> &str {
        "faulty"
    }

    fn step(
        &self,
        _: &Config,
        _: &Nothing,
        _: &mut Nothing,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Client) => panic!("request {} is too much", event.id),
            Some(EventKind::Start) => out.set_timer(0),
            Some(EventKind::Timer) => Err(CoreError::Code(0)),
            _ => Ok(()),
        }
    }
}

struct ExportedFaulty;

impl Exported for ExportedFaulty {
    type Core = Faulty;
    fn core() -> &'static Faulty {
        &Faulty
    }
}

static FAULTY: DescriptorCell = DescriptorCell::new();

#[test]
fn a_panic_or_an_error_in_an_exported_step_is_a_core_error() {
    // SAFETY: the descriptor is static and its functions are the export's.
    let core = unsafe { CCore::from_descriptor(FAULTY.entry::<ExportedFaulty>(), "faulty", None) }
        .unwrap();
    let config = Config {
        node: 0,
        nodes: 1,
        params: [0; 8],
    };
    let mut volatile = [0u8; 4];
    let mut run = |kind| {
        core.step(
            &config,
            &[0; 4],
            &mut volatile,
            &Event::new(kind, 0, 3, &[], 0),
            &mut Outputs::default(),
        )
    };
    assert_eq!(run(EventKind::Client), Err(CoreError::Code(PANIC_CODE)));
    assert_eq!(
        run(EventKind::Timer),
        Err(CoreError::Code(cmc_world::core::export::ERROR_CODE_ZERO)),
        "an error is never read as success"
    );
    // In a World: no verdict, a core error naming the step.
    for params in [&["requests=1"][..], &[][..]] {
        let core: Arc<dyn Core> = Arc::new(
            // SAFETY: as above.
            unsafe { CCore::from_descriptor(FAULTY.entry::<ExportedFaulty>(), "faulty", None) }
                .unwrap(),
        );
        let mut spec = WorldSpec::new(core, 1).unwrap();
        spec.set_all(params).unwrap();
        let checker = Checker::new(World::new(spec)).workers(1);
        let outcome = checker.run();
        assert!(
            matches!(outcome.verdict, Verdict::Error { .. }),
            "{params:?}: {:?}",
            outcome.verdict
        );
        let fault = checker.model().fault().expect("a fault");
        assert!(
            matches!(fault.kind, FaultKind::CoreError(_)),
            "{params:?}: {fault:?}"
        );
    }
}
