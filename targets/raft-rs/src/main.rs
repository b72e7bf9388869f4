//! `raft-rs-check`: cmc's command line over the raft-rs adapter, e.g.
//! `raft-rs-check check --core rust:raft-rs-0.7.0 --nodes 3 requests=1 ticks=2`.
//! `rust:raft-rs-0.7.0-bug1` is the adapter with raft 0.5.0's sync mistake.

use cmc_cli::{Cli, CoreEntry};
use cmc_target_raft_rs::{core, properties, RaftAdapter};

fn main() -> std::process::ExitCode {
    Cli::new("raft-rs-check")
        .core(
            CoreEntry::with_bugs("raft-rs-0.7.0", 1, |bug| {
                core(RaftAdapter {
                    sync_ignores_entries: bug == 1,
                })
            })
            .properties(properties),
        )
        .run()
}
