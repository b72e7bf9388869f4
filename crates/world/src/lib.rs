//! Cores and the World: the core contract, the environment, supervision and reports (see `ARCHITECTURE.md`).
//!
//! - [`abi`] and [`core`]: the core contract, in C (`include/cmc.h`) and Rust;
//!   [`core_helpers`]: typed messages and after-flush replies for Rust cores.
//! - [`loader`]: C cores, linked at build time or loaded from a shared library.
//! - [`spec`], [`state`], [`action`], [`env`]: the World's configuration, state,
//!   actions and environment. The environment sees core states only as bytes.
//! - [`world`]: the World as a [`cmc_model::Model`]; [`inspect`]: the separate,
//!   explicit path by which properties read core internals.
//! - [`step`]: running one step, with the determinism gate.
//! - [`properties`]: linearizability and sequential consistency of the
//!   client history.
//! - [`c_properties`]: properties written in C (`CMC_PROPERTIES`), read
//!   through the same explicit path.
//! - [`quiescence`]: bounded liveness (the fair schedule reaches a goal).
//! - [`symmetry`]: symmetry reduction over interchangeable nodes.
//! - [`purity`]: the purity gate for C object files.
//! - [`recorder`] and [`supervise`]: crash, hang and exit containment (the
//!   verdict comes only from a process that never runs core code); private
//!   `guarded`: every step's buffers between canaries and guard pages.
//! - [`replay`]: counterexamples through the real cores, and message sequence charts.
//! - [`glue_log`] and [`validate`]: a product's log of what its glue did,
//!   replayed through the same cores (`cmc validate`).
//! - [`cores`]: the example cores.
//! - [`export`]: a Rust core exported through the C ABI ([`export_core!`]).

pub mod abi;
pub mod action;
pub mod c_properties;
pub mod chart;
pub mod chart_svg;
pub mod core;
pub mod core_helpers;
pub mod cores;
pub mod env;
pub mod export;
pub mod fault;
pub mod glue_log;
mod guarded;
pub mod inspect;
pub mod loader;
pub mod open;
pub mod properties;
pub mod purity;
pub mod quiescence;
pub mod recorder;
pub mod recycle;
pub mod replay;
pub mod spec;
pub mod state;
pub mod step;
pub mod supervise;
pub mod symmetry;
pub mod validate;
pub mod workload;
pub mod world;

pub use crate::core::{Core, TypedCore};
pub use fault::{Fault, FaultKind};
pub use loader::{CCore, LoadError};
pub use open::{build_model, build_world, WorldArgs};
pub use spec::{NetSemantics, WorldSpec};
pub use world::World;
