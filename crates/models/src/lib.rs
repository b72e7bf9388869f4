//! The bundled models of cmc: Rust ports of public TLA+ specifications from
//! `tlaplus/Examples`, used to calibrate the checker against TLC (see
//! `docs/calibration.md`): a port must give TLC's exact distinct-state counts and
//! depths, and its shortest counterexample lengths.
//!
//! One module per specification; each implements the spec's variables,
//! actions and constants as a [`cmc_model::Model`] with a compact, canonical
//! state (bit sets and packed fields, no heap) and allocation-free successors.
//! [`rm`] holds the resource-manager idioms the three commit protocols share;
//! [`registry`] lists the models by name for the command line.

pub mod die_hard;
pub mod params;
pub mod paxos_commit;
pub mod registry;
pub mod rm;
pub mod tcommit;
pub mod two_phase;

#[cfg(test)]
mod testing;

pub use die_hard::{DieHard, DieHardInvariant};
pub use paxos_commit::{PaxosCommit, PaxosCommitConstants, PaxosCommitInvariant};
pub use tcommit::{TCommit, TCommitInvariant};
pub use two_phase::{TwoPhase, TwoPhaseInvariant};
