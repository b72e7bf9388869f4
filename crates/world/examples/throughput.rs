//! Distinct states per second of the World on reqack, 3 nodes, the
//! configuration of `tests/agreement.rs` (817,268 distinct states with the
//! default `net_bound=1`).
//!
//! `cargo run -p cmc-world --release --example throughput [workers]`

use std::sync::Arc;
use std::time::Instant;

use cmc_search::{Checker, Verdict};
use cmc_world::example_cores::reqack::{self, ReqAck};
use cmc_world::{World, WorldSpec};

fn main() {
    let workers = std::env::args()
        .nth(1)
        .map_or(1, |arg| arg.parse().expect("workers: a number"));
    let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).expect("3 nodes");
    spec.set_all(&[
        "requests=2",
        "dups=1",
        "crashes=1",
        "restarts=1",
        "crash_nodes=1",
    ])
    .expect("known parameters");
    let world = World::new(spec).with_properties(reqack::properties());
    let started = Instant::now();
    let outcome = Checker::new(world).workers(workers).run();
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(outcome.verdict, Verdict::Pass);
    let distinct = outcome.stats.distinct_states;
    println!(
        "{distinct} distinct states in {seconds:.2} s with {workers} worker(s): {:.0} distinct states/s",
        distinct as f64 / seconds
    );
}
