//! The core contract in Rust.
//!
//! [`Core`] is what the World runs: a step over opaque state bytes. Rust cores
//! usually implement [`TypedCore`] instead, over plain-old-data structs, and get
//! [`Core`] for free; C cores are wrapped by [`crate::core::loader::CCore`].

pub mod abi;
pub mod describe_table;
pub mod export;
pub mod fault;
pub mod ghost_table;
pub mod helpers;
pub(crate) mod hex;
pub mod id_fields;
pub use cmc_store::input_file;
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
/// use cmc_world::example_cores::reqack::{ReqAck, OFFSET_PENDING};
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
    /// then every step runs on guarded copies (module `guard_pages`). `true`
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
    /// The core's own text for the payload of a reply it gives a client
    /// (e.g. `OK`, `value=3`), if it has one; traces show hex otherwise.
    fn describe_reply(&self, _config: &Config, _payload: &[u8]) -> Option<String> {
        None
    }
    /// The core's own text for the payload of a client operation it
    /// receives (a `CLIENT` event's, e.g. `put(k=1, v=0)`), if it has one;
    /// traces show the workload's text, or hex, otherwise.
    fn describe_operation(&self, _config: &Config, _payload: &[u8]) -> Option<String> {
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
    /// The node ids one node's state holds, as a set of bits (see
    /// [`helpers::node_bit`]), for symmetry: [`Core::permute`] by a `perm`
    /// that fixes every id in the set must leave the state unchanged, and
    /// the World then skips it. The default holds every id: `permute`
    /// always runs. A set that misses an id is an error of the search when
    /// it is seen: the World permutes the skipped nodes of a sample of the
    /// states anyway (of every state with `check-determinism`) and compares
    /// them.
    fn node_ids(&self, _config: &Config, _durable: &[u8], _volatile: &[u8]) -> u64 {
        u64::MAX
    }
    /// Renames node ids inside a message by `perm[old] = new`. The default
    /// leaves it unchanged: right for messages that carry no node ids.
    fn permute_message(&self, _config: &Config, _message: &mut [u8], _perm: &[u32]) {}
    /// Whether the node of `config` may ever SEND to node `dst`: what
    /// partial-order reduction knows of who can reach whom. The World
    /// holds a core to it: a SEND it does not allow is a bad output (a
    /// fault). The default allows every node.
    fn may_send(&self, _config: &Config, _dst: u32) -> bool {
        true
    }
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
    /// As [`Core::describe_reply`].
    fn describe_reply(&self, _config: &Config, _payload: &[u8]) -> Option<String> {
        None
    }
    /// As [`Core::describe_operation`].
    fn describe_operation(&self, _config: &Config, _payload: &[u8]) -> Option<String> {
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
    /// As [`Core::node_ids`], over the typed parts.
    fn node_ids(
        &self,
        _config: &Config,
        _durable: &Self::Durable,
        _volatile: &Self::Volatile,
    ) -> u64 {
        u64::MAX
    }
    /// As [`Core::permute_message`].
    fn permute_message(&self, _config: &Config, _message: &mut [u8], _perm: &[u32]) {}
    /// As [`Core::may_send`].
    fn may_send(&self, _config: &Config, _dst: u32) -> bool {
        true
    }
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
        with_typed(durable, |durable| {
            with_typed_mut(volatile, |volatile| {
                TypedCore::step(self, config, durable, volatile, event, out)
            })
        })
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

    fn describe_reply(&self, config: &Config, payload: &[u8]) -> Option<String> {
        TypedCore::describe_reply(self, config, payload)
    }

    fn describe_operation(&self, config: &Config, payload: &[u8]) -> Option<String> {
        TypedCore::describe_operation(self, config, payload)
    }

    fn permute(
        &self,
        config: &Config,
        durable: &mut [u8],
        volatile: &mut [u8],
        perm: &[u32],
    ) -> bool {
        with_typed_mut(durable, |d| {
            with_typed_mut(volatile, |v| TypedCore::permute(self, config, d, v, perm))
        })
    }

    fn node_ids(&self, config: &Config, durable: &[u8], volatile: &[u8]) -> u64 {
        with_typed(durable, |durable| {
            with_typed(volatile, |volatile| {
                TypedCore::node_ids(self, config, durable, volatile)
            })
        })
    }

    fn permute_message(&self, config: &Config, message: &mut [u8], perm: &[u32]) {
        TypedCore::permute_message(self, config, message, perm)
    }

    fn may_send(&self, config: &Config, dst: u32) -> bool {
        TypedCore::may_send(self, config, dst)
    }
}

/// Calls `f` with `bytes` as a `T`: in place when they are aligned for it
/// (as a state's memory usually is), else on an aligned copy.
fn with_typed<T: Pod, R>(bytes: &[u8], f: impl FnOnce(&T) -> R) -> R {
    match bytemuck::try_from_bytes::<T>(bytes) {
        Ok(typed) => f(typed),
        Err(_) => with_copy(bytes, f),
    }
}

/// As [`with_typed`], on an aligned copy: out of line, being rare.
#[cold]
#[inline(never)]
fn with_copy<T: Pod, R>(bytes: &[u8], f: impl FnOnce(&T) -> R) -> R {
    f(&bytemuck::pod_read_unaligned(bytes))
}

/// As [`with_typed`], for a change: an aligned copy is copied back.
fn with_typed_mut<T: Pod, R>(bytes: &mut [u8], f: impl FnOnce(&mut T) -> R) -> R {
    match bytemuck::try_from_bytes_mut::<T>(bytes) {
        Ok(typed) => f(typed),
        Err(_) => with_copy_mut(bytes, f),
    }
}

/// As [`with_typed_mut`], on an aligned copy, copied back: out of line,
/// being rare.
#[cold]
#[inline(never)]
fn with_copy_mut<T: Pod, R>(bytes: &mut [u8], f: impl FnOnce(&mut T) -> R) -> R {
    let mut typed: T = bytemuck::pod_read_unaligned(bytes);
    let result = f(&mut typed);
    bytes.copy_from_slice(bytemuck::bytes_of(&typed));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::abi::EventKind;

    /// Adds the event's id to a counter, and its durable value to another.
    struct Counter;

    impl TypedCore for Counter {
        type Durable = u32;
        type Volatile = [u64; 2];
        fn name(&self) -> &str {
            "counter"
        }
        fn step(
            &self,
            _: &Config,
            durable: &u32,
            volatile: &mut [u64; 2],
            event: &Event,
            _: &mut Outputs,
        ) -> Result<(), CoreError> {
            volatile[0] += event.id as u64;
            volatile[1] += *durable as u64;
            Ok(())
        }
        fn permute(&self, _: &Config, d: &mut u32, v: &mut [u64; 2], _: &[u32]) -> bool {
            *d += 1;
            v.swap(0, 1);
            true
        }
    }

    /// A typed core gets the same state in place (aligned bytes) and
    /// through copies (bytes at an odd address).
    #[test]
    fn a_typed_core_steps_and_permutes_aligned_and_unaligned_bytes_alike() {
        let config = Config {
            node: 0,
            nodes: 1,
            params: [0; crate::core::abi::PARAMS_MAX],
        };
        let event = Event::new(EventKind::Client, 0, 5, &[], 0);
        let mut memory = [0u64; 4];
        let bytes: &mut [u8] = bytemuck::bytes_of_mut(&mut memory);
        // At 4 both parts are aligned (in place); at 1 neither is (copies).
        for start in [4, 1] {
            let state = &mut bytes[8 + start..8 + start + 20];
            state.fill(0);
            state[..4].copy_from_slice(&7u32.to_ne_bytes());
            let (durable, volatile) = state.split_at_mut(4);
            Core::step(
                &Counter,
                &config,
                durable,
                volatile,
                &event,
                &mut Outputs::default(),
            )
            .unwrap();
            assert!(Core::permute(&Counter, &config, durable, volatile, &[0]));
            let volatile: [u64; 2] = bytemuck::pod_read_unaligned(volatile);
            assert_eq!(volatile, [7, 5], "start {start}");
            assert_eq!(durable, 8u32.to_ne_bytes(), "start {start}");
        }
    }
}
