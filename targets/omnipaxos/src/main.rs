//! `omnipaxos-check`: cmc's command line over the omnipaxos adapter, e.g.
//! `omnipaxos-check check --core rust:omnipaxos-0.2.1 --nodes 3 requests=2 ticks=4`.

use cmc_cli::{Cli, CoreEntry};
use cmc_target_omnipaxos::{core, properties, OmniPaxosAdapter};
use cmc_world::heap::HeapAdapter;

fn main() -> std::process::ExitCode {
    Cli::new("omnipaxos-check")
        .core(CoreEntry::new(OmniPaxosAdapter.name(), core).properties(properties))
        .run()
}
