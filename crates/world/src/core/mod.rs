//! The core contract in Rust.
//!
//! [`Core`] is what the World runs: a step over opaque state bytes. Rust cores
//! usually implement [`TypedCore`] instead, over plain-old-data structs, and get
//! [`Core`] for free; C cores are wrapped by [`crate::core::loader::CCore`].

pub mod abi;
pub mod export;
pub mod fault;
pub mod helpers;
pub mod hex;
pub mod input_file;
pub mod loader;
pub mod property_table;
pub mod purity;

use bytemuck::Pod;

use crate::core::abi::{Config, CoreError, Event, Outputs};

/// A deterministic step function over a fixed-size, pointer-free state.
///
/// Contract: `step` depends only on its arguments (no clock, randomness,
/// globals or I/O), leaves `durable` untouched (changes go through PERSIST
/// outputs) and keeps `volatile` canonical (equal states have equal bytes).
/// The World passes slices of exactly [`durable_size`](Core::durable_size)
/// and [`volatile_size`](Core::volatile_size) bytes and an empty `out`.
///
/// # Example
///
/// One step of the bundled `reqack` core, called as the World calls it:
///
/// ```
/// use cmc_world::core::abi::{Config, Event, EventKind, OutputKind, Outputs};
/// use cmc_world::cores::reqack::{ReqAck, OFFSET_PENDING};
/// use cmc_world::Core;
///
/// let core: &dyn Core = &ReqAck::default();
/// let config = Config { node: 0, nodes: 2, params: [0; 8] };
/// let durable = vec![0; core.durable_size()];
/// let mut volatile = vec![0; core.volatile_size()];
/// let mut out = Outputs::default();
/// let request = Event::new(EventKind::Client, 0, 0, &[], 0);
/// core.step(&config, &durable, &mut volatile, &request, &mut out)?;
/// // The sender first makes the request durable, and does nothing else.
/// let [persist] = out.as_slice() else { panic!("one output") };
/// assert_eq!(OutputKind::from_raw(persist.kind), Some(OutputKind::Persist));
/// assert_eq!((persist.id, persist.payload()), (OFFSET_PENDING, &1u32.to_le_bytes()[..]));
/// # Ok::<(), cmc_world::core::abi::CoreError>(())
/// ```
pub trait Core: Send + Sync {
    /// Short name, e.g. `reqack`.
    fn name(&self) -> &str;
    /// Bytes of the durable part.
    fn durable_size(&self) -> usize;
    /// Bytes of the volatile part.
    fn volatile_size(&self) -> usize;
    /// Whether a step may break the memory contract (write outside its
    /// buffers, or into the durable part, the event or the configuration):
    /// then every step runs on guarded copies (module `guarded`). `true`
    /// unless the step is safe Rust over the slices it is given, which
    /// cannot, as every [`TypedCore`] is: those run on the state in place.
    fn needs_memory_guards(&self) -> bool {
        true
    }
    /// Handles one event.
    fn step(
        &self,
        config: &Config,
        durable: &[u8],
        volatile: &mut [u8],
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError>;
    /// The core's own text for a state, if it has one.
    fn describe_state(
        &self,
        _config: &Config,
        _durable: &[u8],
        _volatile: &[u8],
    ) -> Option<String> {
        None
    }
    /// The core's own text for a message it sends, if it has one.
    fn describe_message(&self, _config: &Config, _message: &[u8]) -> Option<String> {
        None
    }
    /// Renames node ids inside one node's state (`config` is that node's
    /// configuration before renaming) by `perm[old] = new`, keeping it
    /// canonical (re-sort what is sorted by node id). Returns `false` if the
    /// core does not support symmetry (the default); then it must leave the
    /// state untouched.
    fn permute(
        &self,
        _config: &Config,
        _durable: &mut [u8],
        _volatile: &mut [u8],
        _perm: &[u32],
    ) -> bool {
        false
    }
    /// Renames node ids inside a message by `perm[old] = new`. The default
    /// leaves it unchanged: right for messages that carry no node ids.
    fn permute_message(&self, _config: &Config, _message: &mut [u8], _perm: &[u32]) {}
}

/// A Rust core over plain-old-data state structs (no padding, no pointers:
/// `bytemuck::Pod`), whose bytes are the canonical encoding.
///
/// Every `TypedCore` is a [`Core`]; the state structs are copied in and out of
/// the World's byte buffers, so they need no particular alignment there.
///
/// # Example
///
/// A one-node core that answers each client request with a count, and a
/// buggy variant that answers twice; the World checks both.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
/// use cmc_world::{TypedCore, World, WorldSpec};
///
/// struct Counter { twice: bool }
///
/// impl TypedCore for Counter {
///     type Durable = u32; // unused here
///     type Volatile = u32; // requests answered
///     fn name(&self) -> &str { "counter" }
///     fn step(&self, _: &Config, _: &u32, answered: &mut u32, event: &Event,
///             out: &mut Outputs) -> Result<(), CoreError> {
///         if event.kind() == Some(EventKind::Client) {
///             *answered += 1;
///             out.reply(event.id, &answered.to_le_bytes())?;
///             if self.twice { out.reply(event.id, &[])?; }
///         }
///         Ok(())
///     }
/// }
///
/// let check = |core: Counter| {
///     let spec = WorldSpec::builder(Arc::new(core), 1).requests(2).build().unwrap();
///     Checker::new(World::new(spec)).workers(1).run().verdict
/// };
/// assert_eq!(check(Counter { twice: false }), Verdict::Pass);
/// assert!(matches!(check(Counter { twice: true }),
///     Verdict::Violated { property, .. } if property == "AtMostOneReply"));
/// ```
pub trait TypedCore: Send + Sync {
    /// The durable part.
    type Durable: Pod;
    /// The volatile part.
    type Volatile: Pod;
    /// Short name, e.g. `reqack`.
    fn name(&self) -> &str;
    /// Handles one event; `durable` is read-only, as in [`Core::step`].
    fn step(
        &self,
        config: &Config,
        durable: &Self::Durable,
        volatile: &mut Self::Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError>;
    /// The core's own text for a state.
    fn describe_state(
        &self,
        _config: &Config,
        _durable: &Self::Durable,
        _volatile: &Self::Volatile,
    ) -> Option<String> {
        None
    }
    /// The core's own text for a message.
    fn describe_message(&self, _config: &Config, _message: &[u8]) -> Option<String> {
        None
    }
    /// As [`Core::permute`], over the typed parts.
    fn permute(
        &self,
        _config: &Config,
        _durable: &mut Self::Durable,
        _volatile: &mut Self::Volatile,
        _perm: &[u32],
    ) -> bool {
        false
    }
    /// As [`Core::permute_message`].
    fn permute_message(&self, _config: &Config, _message: &mut [u8], _perm: &[u32]) {}
}

impl<T: TypedCore> Core for T {
    fn name(&self) -> &str {
        TypedCore::name(self)
    }

    fn durable_size(&self) -> usize {
        std::mem::size_of::<T::Durable>()
    }

    fn volatile_size(&self) -> usize {
        std::mem::size_of::<T::Volatile>()
    }

    /// A typed core's step gets typed references and cannot write outside them.
    fn needs_memory_guards(&self) -> bool {
        false
    }

    fn step(
        &self,
        config: &Config,
        durable: &[u8],
        volatile: &mut [u8],
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let durable: T::Durable = bytemuck::pod_read_unaligned(durable);
        let mut state: T::Volatile = bytemuck::pod_read_unaligned(volatile);
        let result = TypedCore::step(self, config, &durable, &mut state, event, out);
        volatile.copy_from_slice(bytemuck::bytes_of(&state));
        result
    }

    fn describe_state(&self, config: &Config, durable: &[u8], volatile: &[u8]) -> Option<String> {
        TypedCore::describe_state(
            self,
            config,
            &bytemuck::pod_read_unaligned(durable),
            &bytemuck::pod_read_unaligned(volatile),
        )
    }

    fn describe_message(&self, config: &Config, message: &[u8]) -> Option<String> {
        TypedCore::describe_message(self, config, message)
    }

    fn permute(
        &self,
        config: &Config,
        durable: &mut [u8],
        volatile: &mut [u8],
        perm: &[u32],
    ) -> bool {
        let mut d: T::Durable = bytemuck::pod_read_unaligned(durable);
        let mut v: T::Volatile = bytemuck::pod_read_unaligned(volatile);
        let supported = TypedCore::permute(self, config, &mut d, &mut v, perm);
        durable.copy_from_slice(bytemuck::bytes_of(&d));
        volatile.copy_from_slice(bytemuck::bytes_of(&v));
        supported
    }

    fn permute_message(&self, config: &Config, message: &mut [u8], perm: &[u32]) {
        TypedCore::permute_message(self, config, message, perm)
    }
}
