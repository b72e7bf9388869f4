//! Cores and the World: the core contract, the environment, supervision and
//! reports (see `ARCHITECTURE.md`).
//!
//! # A first World test
//!
//! A World test has four parts: a **core**, the protocol code of a node (a
//! deterministic step function over its state bytes); a **spec**, the World
//! it runs in (how many nodes, how many client requests, which faults the
//! environment may inject, each within a budget); a **check**, a search of
//! every interleaving the spec allows; and the **verdict**, with a shortest
//! counterexample when a property is violated.
//!
//! Below, node 0 forwards each client request to node 1, which acknowledges
//! it, and node 0 replies to the client on the acknowledgement. The network
//! may duplicate one message (`dups=1`): a duplicated acknowledgement makes
//! the naive core reply twice, which the World's built-in property
//! `AtMostOneReply` catches. A core that remembers what it answered passes.
//!
//! ```
//! use std::sync::Arc;
//! use cmc_model::Model;
//! use cmc_search::{Checker, Verdict};
//! use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
//! use cmc_world::{TypedCore, World, WorldSpec};
//!
//! // 1. The core. Its state is plain old data: here one volatile word, a
//! //    bit per request answered (so at most 32 requests).
//! struct Forward { remember: bool }
//!
//! impl TypedCore for Forward {
//!     type Durable = u32; // unused: nothing survives a crash here
//!     type Volatile = u32;
//!     fn name(&self) -> &str { "forward" }
//!     fn step(&self, config: &Config, _: &u32, answered: &mut u32, event: &Event,
//!             out: &mut Outputs) -> Result<(), CoreError> {
//!         match (config.node, event.kind()) {
//!             // Node 0 sends request `id` to node 1, which sends it back.
//!             (0, Some(EventKind::Client)) => out.send(1, &event.id.to_le_bytes()),
//!             (1, Some(EventKind::Recv)) => out.send(0, event.payload()),
//!             // The acknowledgement: node 0 replies to the client.
//!             (0, Some(EventKind::Recv)) => {
//!                 let bytes = event.payload().try_into().map_err(|_| CoreError::Code(1))?;
//!                 let request = u32::from_le_bytes(bytes);
//!                 if self.remember && *answered & 1 << request != 0 {
//!                     return Ok(());
//!                 }
//!                 *answered |= 1 << request;
//!                 out.reply(request, b"ok")
//!             }
//!             _ => Ok(()),
//!         }
//!     }
//! }
//!
//! // 2. The spec: two nodes running the core, one client request (sent to
//! //    node 0), and a network that may duplicate one message.
//! let spec = |core| WorldSpec::builder(Arc::new(core), 2).requests(1).param("dups", 1).build();
//!
//! // 3. The check: a breadth-first search of every reachable World state.
//! let checker = Checker::new(World::new(spec(Forward { remember: false })?)).workers(1);
//! let outcome = checker.run();
//!
//! // 4. The verdict, and the shortest path to the violation.
//! assert!(matches!(&outcome.verdict,
//!     Verdict::Violated { property, .. } if property == "AtMostOneReply"));
//! let trace = outcome.counterexample.expect("a violation comes with its path");
//! let actions: Vec<String> = trace.steps.iter()
//!     .filter_map(|step| step.action.as_ref())
//!     .map(|action| checker.model().format_action(action))
//!     .collect();
//! assert_eq!(actions, [
//!     "CLIENT r0 -> n0",
//!     "DELIVER n0->n1 #0 00000000",  // a message the core gives no text for: its bytes
//!     "DUP n1->n0 #0 00000000",
//!     "DELIVER n1->n0 #0 00000000",
//!     "DELIVER n1->n0 #0 00000000",  // the second reply
//! ]);
//!
//! // The fixed core passes: every reachable state was explored.
//! let fixed = Checker::new(World::new(spec(Forward { remember: true })?)).workers(1).run();
//! assert_eq!(fixed.verdict, Verdict::Pass);
//! assert!(fixed.stats.complete);
//! # Ok::<(), cmc_world::system::spec::SpecError>(())
//! ```
//!
//! From there:
//!
//! - **More faults and clients**: every `NAME=VALUE` parameter of
//!   [`WorldSpec::set`] (crashes, restarts, drops, link cuts, clocks,
//!   workloads...) is listed in [`system::spec::param_help`].
//! - **Your own properties**: [`World::with_property`] adds a
//!   [`cmc_model::Property`] that reads core states through
//!   [`World::inspect`]; [`properties::consistency`] checks the client history
//!   against a sequential specification (linearizability); a C core may
//!   declare properties in C ([`properties::c_properties`]).
//! - **Liveness**: `quiescence=STEPS` checks that a fair schedule answers
//!   every client once the faults are over ([`system::quiescence`]).
//! - **A core in C**: [`CCore::load`] loads a shared library built against
//!   `include/cmc.h`; [`export_core!`] exports a Rust core the same way. A
//!   core that may crash or hang is checked in a supervised child
//!   ([`supervise`]); [`build_world`] builds a World from command-line words.
//! - **Reading a counterexample**: [`report::replay`] runs it again through
//!   the cores and prints each step in the cores' own words, with a message
//!   sequence chart ([`report::chart`]).
//!
//! # Layers
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
//! - [`heap`]: heap-state cores: a library whose node lives in heap
//!   objects, driven through an adapter and rebuilt by replaying its
//!   journal at each step.
//! - [`system`]: the environment's semantics: spec, state, actions, the
//!   environment, quiescence, symmetry, workloads, and [`World`] as a
//!   [`cmc_model::Model`]. The environment sees core states only as bytes.
//! - [`properties`]: what is checked of a World: the client history's
//!   linearizability, properties written in C, and the one explicit path
//!   ([`system::inspect`]) by which they read core internals.
//! - [`supervise`]: the supervisor process, which runs the check in a child
//!   and gives the verdict; the explainer of a core fault.
//! - [`report`]: counterexamples replayed through the real cores, and
//!   message sequence charts (text and SVG).
//! - [`validate`]: a product's log of what its glue did, replayed through
//!   the same cores (`cmc validate`).
//! - [`world_args`]: a World built from command-line arguments, with the cores
//!   of a [`catalog`] (what a program registers: Rust cores, their default
//!   World parameters and what equips a World of them); [`example_cores`]: the
//!   example cores.

pub mod catalog;
pub mod core;
pub mod example_cores;
pub mod heap;
pub mod properties;
pub mod report;
pub mod run;
pub mod supervise;
pub mod system;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod validate;
pub mod world_args;

pub use crate::core::fault::{Fault, FaultKind};
pub use crate::core::loader::{CCore, LoadError};
pub use crate::core::{Core, TypedCore};
pub use system::spec::{NetSemantics, WorldSpec};
pub use system::World;
pub use world_args::{build_model, build_world, WorldArgs};
