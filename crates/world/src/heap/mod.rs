//! Heap-state cores: a library whose node state lives in heap objects,
//! checked without changing a line of it.
//!
//! A [`HeapAdapter`] says how a node of the library is created from its
//! flushed durable bytes, how a World event drives it and what its canonical
//! *view* is (fixed-size bytes from the library's public getters, like TLC's
//! `VIEW`). [`HeapCore`] makes any adapter a [`crate::Core`]: the World
//! stores the view as the node's volatile part, and each step rebuilds the
//! library object by replaying the node's [`journal`] (its events since its
//! last start), checks that the replay reproduces the view, then delivers
//! the new event. ARCHITECTURE.md ("Heap-state cores") says why.
//!
//! The view is an abstraction the adapter answers for: two histories that
//! reach equal views are one state. That is checked, not assumed: a second
//! history reaching a view is kept as its alternative, and a sample of the
//! steps from that view (every one under the determinism gate) replays both
//! and compares what they do.
//!
//! # Example
//!
//! A library whose node keeps every request it saw in a `Vec` (heap state,
//! no fixed size) and answers with how many it holds. The adapter's view is
//! the count, which is all that decides what the node does next.
//!
//! ```
//! use std::sync::Arc;
//! use cmc_search::{Checker, Verdict};
//! use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
//! use cmc_world::heap::{HeapAdapter, HeapCore};
//! use cmc_world::{World, WorldSpec};
//!
//! /// The "library": a growing log on the heap.
//! struct Log { entries: Vec<u32> }
//!
//! struct LogAdapter;
//! impl HeapAdapter for LogAdapter {
//!     type Node = Log;
//!     fn name(&self) -> &str { "log" }
//!     fn durable_size(&self) -> usize { 0 }
//!     fn view_size(&self) -> usize { 4 }
//!     fn start(&self, _: &Config, _: &[u8], _: &mut Outputs) -> Result<Log, CoreError> {
//!         Ok(Log { entries: Vec::new() })
//!     }
//!     fn step(&self, log: &mut Log, _: &Config, event: &Event, out: &mut Outputs)
//!         -> Result<(), CoreError> {
//!         if event.kind() == Some(EventKind::Client) {
//!             log.entries.push(event.id);
//!             out.reply(event.id, &(log.entries.len() as u32).to_le_bytes())?;
//!         }
//!         Ok(())
//!     }
//!     fn view(&self, log: &Log, _: &Config, view: &mut [u8]) -> Result<(), CoreError> {
//!         view.copy_from_slice(&(log.entries.len() as u32).to_le_bytes());
//!         Ok(())
//!     }
//! }
//!
//! let core = Arc::new(HeapCore::new(LogAdapter));
//! let spec = WorldSpec::builder(core, 1).requests(2).build()?;
//! let outcome = Checker::new(World::new(spec)).workers(1).run();
//! assert_eq!(outcome.verdict, Verdict::Pass);
//! assert!(outcome.stats.complete);
//! # Ok::<(), cmc_world::system::spec::SpecError>(())
//! ```

pub mod c_adapter;
mod heap_core;
pub mod journal;
pub mod libc_calls;

pub use heap_core::HeapCore;

use crate::core::abi::{Config, CoreError, Event, Outputs};

/// How a library's node is created, driven and viewed.
///
/// Contract: given the same durable bytes and the same events, `start` and
/// `step` produce the same outputs and the same view (the library draws no
/// randomness, time or I/O that the adapter does not answer from the
/// event); `view` writes every part of the node that decides what it does
/// next, canonically (equal nodes, equal bytes). A node object lives only
/// within one step of the World: it is never shared between threads, and
/// dropping it must release what it holds.
pub trait HeapAdapter: Send + Sync {
    /// The library's node object.
    type Node;
    /// Short name, e.g. `omnipaxos`.
    fn name(&self) -> &str;
    /// Bytes of the durable part: the library's storage in the adapter's
    /// fixed layout, written through PERSIST outputs.
    fn durable_size(&self) -> usize;
    /// Bytes of the view (the node's volatile part as the World stores it).
    fn view_size(&self) -> usize;
    /// A node started (first start or restart) from its flushed durable
    /// bytes: the World's START event.
    fn start(
        &self,
        config: &Config,
        durable: &[u8],
        out: &mut Outputs,
    ) -> Result<Self::Node, CoreError>;
    /// One World event other than START delivered to the node.
    fn step(
        &self,
        node: &mut Self::Node,
        config: &Config,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError>;
    /// Writes the node's canonical view into `view` (`view_size` bytes,
    /// zeroed beforehand).
    fn view(&self, node: &Self::Node, config: &Config, view: &mut [u8]) -> Result<(), CoreError>;
    /// Whether the library is native code that may write outside the
    /// World's buffers (then every step runs on guarded copies). `true`
    /// unless the adapter and the library are safe Rust.
    fn needs_memory_guards(&self) -> bool {
        true
    }
    /// The adapter's own text for a node, from its durable bytes and view.
    fn describe_state(&self, _config: &Config, _durable: &[u8], _view: &[u8]) -> Option<String> {
        None
    }
    /// The adapter's own text for a message the library sends.
    fn describe_message(&self, _config: &Config, _message: &[u8]) -> Option<String> {
        None
    }
    /// The adapter's own text for the payload of a reply the library gives
    /// (as [`crate::Core::describe_reply`]).
    fn describe_reply(&self, _config: &Config, _payload: &[u8]) -> Option<String> {
        None
    }
    /// The adapter's own text for the payload of a client operation the
    /// library receives (as [`crate::Core::describe_operation`]).
    fn describe_operation(&self, _config: &Config, _payload: &[u8]) -> Option<String> {
        None
    }
}

/// `digest` with `event` folded in: for an adapter whose library hides part
/// of its state from every getter, a digest of the node's events since its
/// start, kept in the view, makes the view exact. Such a view merges only
/// identical histories (since the node's last start), so it gives up most
/// of what a view saves: keep it to the part of the events the getters
/// cannot show.
pub fn fold_event(digest: u64, event: &Event) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    hasher.update(&digest.to_le_bytes());
    hasher.update(&[event.kind as u8, event.src as u8]);
    hasher.update(&event.id.to_le_bytes());
    hasher.update(event.payload());
    hasher.digest()
}
