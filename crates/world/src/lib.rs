//! Cores and the World: the core contract, the environment, supervision and
//! reports (see `ARCHITECTURE.md`).
//!
//! The folders are layers; each imports only from the ones above it here:
//!
//! - [`core`]: the core contract: the C ABI ([`core::abi`], `include/cmc.h`),
//!   the Rust traits ([`Core`], [`TypedCore`]), loading C cores
//!   ([`core::loader`]), the purity gate, faults, helpers for Rust cores
//!   (typed messages, replies after a flush: [`core::helpers`]), and
//!   exporting a Rust core through the C ABI ([`export_core!`]).
//! - [`run`]: calling core code in this process: one step with its
//!   determinism gate, guarded buffers, the flight recorder, and the
//!   supervised child's side of its channel.
//! - [`world`]: the environment's semantics: spec, state, actions, the
//!   environment, quiescence, symmetry, workloads, and [`World`] as a
//!   [`cmc_model::Model`]. The environment sees core states only as bytes.
//! - [`properties`]: what is checked of a World: the client history's
//!   linearizability, properties written in C, and the one explicit path
//!   ([`world::inspect`]) by which they read core internals.
//! - [`supervise`]: the supervisor process, which runs the check in a child
//!   and gives the verdict; the explainer of a core fault.
//! - [`report`]: counterexamples replayed through the real cores, and
//!   message sequence charts (text and SVG).
//! - [`validate`]: a product's log of what its glue did, replayed through
//!   the same cores (`cmc validate`).
//! - [`open`]: a World built from command-line arguments; [`cores`]: the
//!   example cores.

pub mod core;
pub mod cores;
pub mod open;
pub mod properties;
pub mod report;
pub mod run;
pub mod supervise;
pub mod validate;
pub mod world;

pub use crate::core::fault::{Fault, FaultKind};
pub use crate::core::loader::{CCore, LoadError};
pub use crate::core::{Core, TypedCore};
pub use open::{build_model, build_world, WorldArgs};
pub use world::spec::{NetSemantics, WorldSpec};
pub use world::World;
