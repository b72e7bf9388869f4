//! Checks `reqack` in Rust and in C under the same environment and prints the
//! distinct-state counts, then a planted bug's counterexample replayed through
//! the C core.
//!
//! `cargo run -p cmc-world --release --example reqack`

use std::sync::Arc;

use cmc_search::{Checker, ReplayFile};
use cmc_world::example_cores::{reqack, reqack_c};
use cmc_world::report::replay;
use cmc_world::{Core, World, WorldSpec};

fn world(core: Arc<dyn Core>) -> World {
    let mut spec = WorldSpec::new(core, 2).expect("2 nodes are allowed");
    spec.set_all(&[
        "requests=2",
        "drops=1",
        "crashes=1",
        "restarts=1",
        "crash_nodes=1",
    ])
    .expect("known parameters");
    World::new(spec).with_properties(reqack::properties())
}

fn main() {
    for (language, core) in [
        ("rust", Arc::new(reqack::ReqAck::default()) as Arc<dyn Core>),
        ("c", Arc::new(reqack_c())),
    ] {
        let outcome = Checker::new(world(core)).workers(2).run();
        println!(
            "{language:>4}: {:?}, {} distinct states, depth {}",
            outcome.verdict, outcome.stats.distinct_states, outcome.stats.depth
        );
    }
    let checker = Checker::new(world(Arc::new(reqack::ReqAck { bug: 2 }))).workers(1);
    let outcome = checker.run();
    println!("bug 2: {:?}", outcome.verdict);
    if let Some(counterexample) = outcome.counterexample {
        let file = ReplayFile::from_counterexample(checker.model(), &counterexample, None);
        match replay::run(checker.model(), &file) {
            Ok(text) => println!("{text}"),
            Err(problem) => eprintln!("replay failed: {problem}"),
        }
    }
}
