//! `mycheck`: cmc's command line over this crate's model and core.

use cmc_cli::{Cli, CoreEntry, ModelEntry};
use rust_user::{ring::TokenRing, wal};

fn main() -> std::process::ExitCode {
    Cli::new("mycheck")
        .model(
            ModelEntry::new(
                "token-ring",
                "a token ring guarding a critical section",
                TokenRing::build,
            )
            .param("N", "3", "nodes on the ring (2 to 8)")
            .param(
                "BUG",
                "0",
                "1: a node also enters while its left neighbour holds the token",
            ),
        )
        .core(
            CoreEntry::with_bugs("wal", wal::BUGS, |bug| wal::Wal { bug })
                .summary("a write-ahead log that replies once a request is durable")
                .defaults(&wal::DEFAULTS)
                .equip(wal::equip),
        )
        .run()
}
