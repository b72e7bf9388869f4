//! The core ABI: Rust mirrors of the types in `include/cmc.h`.
//!
//! Rust cores and C cores see exactly the same event and output layouts, so a
//! step is the same bytes in and out whichever language the core is written in.
//! The layouts are `#[repr(C)]` and checked against the header's sizes by tests.

use std::ffi::{c_char, c_int, c_void};

use bytemuck::{Pod, Zeroable};

/// Version of the ABI (`CMC_ABI_VERSION`); a core built for another one is refused.
pub const ABI_VERSION: u32 = 1;
/// Bytes of payload an event or output carries (`CMC_PAYLOAD_MAX`).
pub const PAYLOAD_MAX: usize = 64;
/// Outputs one step may emit (`CMC_OUTPUTS_MAX`).
pub const OUTPUTS_MAX: usize = 16;
/// Configuration parameters per node (`CMC_PARAMS_MAX`).
pub const PARAMS_MAX: usize = 8;
/// Timer ids and wake ids are below this (`CMC_TIMERS_MAX`).
pub const TIMERS_MAX: u32 = 32;
/// Largest state, durable plus volatile, a core may declare (`CMC_STATE_MAX`).
pub const STATE_MAX: usize = 65536;
/// The symbol a C core exports (`CMC_ENTRY_SYMBOL`).
pub const ENTRY_SYMBOL: &str = "cmc_core_entry";

/// Declares an ABI kind enum from one table of variants, ABI numbers and
/// trace names, with `from_raw` (number to kind) and `name` (kind to trace
/// name) derived from that same table.
macro_rules! abi_kind {
    (
        $(#[$meta:meta])*
        pub enum $kind:ident, example $example:literal {
            $( $(#[$doc:meta])* $variant:ident = $raw:literal, $text:literal; )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u32)]
        pub enum $kind {
            $( $(#[$doc])* $variant = $raw, )*
        }

        impl $kind {
            /// The kind with ABI number `raw`, if any.
            pub fn from_raw(raw: u32) -> Option<$kind> {
                match raw {
                    $( $raw => Some($kind::$variant), )*
                    _ => None,
                }
            }

            #[doc = concat!("Upper-case name used in traces, e.g. `", $example, "`.")]
            pub fn name(self) -> &'static str {
                match self {
                    $( $kind::$variant => $text, )*
                }
            }
        }
    };
}

abi_kind! {
    /// What happened to a node (`enum cmc_event_kind`).
    ///
    /// ```
    /// use cmc_world::core::abi::{Event, EventKind};
    ///
    /// let recv = Event::new(EventKind::Recv, 2, 0, b"hi", 0);
    /// assert_eq!(recv.kind(), Some(EventKind::Recv));
    /// assert_eq!(EventKind::from_raw(recv.kind), Some(EventKind::Recv));
    /// assert_eq!(EventKind::Recv.name(), "RECV");
    /// assert_eq!(EventKind::from_raw(9), None, "9 is no event kind");
    /// ```
    pub enum EventKind, example "RECV" {
        /// First start or restart; the durable part holds what was flushed.
        Start = 1, "START";
        /// A message arrived from `src`.
        Recv = 2, "RECV";
        /// Armed timer `id` fired.
        Timer = 3, "TIMER";
        /// The oldest persist (offset `id`, bytes `payload`) is now durable.
        Flushed = 4, "FLUSHED";
        /// Client request `id` arrived.
        Client = 5, "CLIENT";
        /// Client request `id` failed locally.
        LocalFail = 6, "LOCAL_FAIL";
        /// Pending wake-up `id` ran.
        Wake = 7, "WAKE";
        /// The node's clock advanced.
        Tick = 8, "TICK";
        /// Random choice `id` was made: its value (below the `k` asked for) is `payload[0]`.
        Choice = 10, "CHOICE";
    }
}

abi_kind! {
    /// What a node asks of the environment (`enum cmc_output_kind`).
    ///
    /// ```
    /// use cmc_world::core::abi::{timer_deadline, OutputKind, Outputs};
    ///
    /// let mut out = Outputs::default();
    /// out.send(1, b"ping")?;
    /// out.set_timer_at(0, 500)?;
    /// let kinds: Vec<_> = out.as_slice().iter().map(|o| OutputKind::from_raw(o.kind)).collect();
    /// assert_eq!(kinds, [Some(OutputKind::Send), Some(OutputKind::SetTimerAt)]);
    /// assert_eq!(OutputKind::SetTimerAt.name(), "SET_TIMER_AT");
    /// assert_eq!(timer_deadline(&out.as_slice()[1]), Some(500));
    /// assert_eq!(timer_deadline(&out.as_slice()[0]), None, "a SEND has no deadline");
    /// # Ok::<(), cmc_world::core::abi::CoreError>(())
    /// ```
    pub enum OutputKind, example "SEND" {
        /// Send the payload to node `dst`.
        Send = 1, "SEND";
        /// Arm timer `id`.
        SetTimer = 2, "SET_TIMER";
        /// Disarm timer `id`.
        CancelTimer = 3, "CANCEL_TIMER";
        /// Write the payload at durable offset `id` once flushed.
        Persist = 4, "PERSIST";
        /// Schedule wake-up `id`.
        Wake = 5, "WAKE";
        /// Reply the payload to client request `id`.
        Reply = 6, "REPLY";
        /// Arm timer `id` with a deadline on the node's clock (the payload, a
        /// little-endian `u64`, see [`Outputs::set_timer_at`]): it fires only
        /// once the clock has reached the deadline.
        SetTimerAt = 7, "SET_TIMER_AT";
        /// Ask for random choice `id` among `payload[0]` values (1 to 255),
        /// answered later by a [`EventKind::Choice`] event.
        Choose = 8, "CHOOSE";
    }
}

/// A node's configuration (`cmc_config`), constant for its lifetime.
///
/// ```
/// use cmc_world::core::abi::{Config, PARAMS_MAX};
///
/// // Node 1 of 3, with user parameter CFG0 = 5 (e.g. a retry budget).
/// let mut params = [0; PARAMS_MAX];
/// params[0] = 5;
/// let config = Config { node: 1, nodes: 3, params };
/// let peers: Vec<u32> = (0..config.nodes).filter(|&n| n != config.node).collect();
/// assert_eq!(peers, [0, 2]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Config {
    /// This node's id, `0..nodes`.
    pub node: u32,
    /// Number of nodes in the world.
    pub nodes: u32,
    /// User parameters (`CFG0`..`CFG7`), zero unless set.
    pub params: [u64; PARAMS_MAX],
}

/// One event delivered to a step (`cmc_event`); payload bytes past `len` are zero.
///
/// ```
/// use cmc_world::core::abi::{Event, EventKind};
///
/// // Node 2's message `hi`, received when the node's clock reads 10.
/// let event = Event::new(EventKind::Recv, 2, 0, b"hi", 10);
/// assert_eq!(event.kind(), Some(EventKind::Recv));
/// assert_eq!((event.src, event.clock), (2, 10));
/// assert_eq!(event.payload(), b"hi");
/// assert!(event.payload[2..].iter().all(|&byte| byte == 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Event {
    /// An [`EventKind`] number.
    pub kind: u32,
    /// `Recv`: the sending node.
    pub src: u32,
    /// Timer, request or wake id, or persist offset.
    pub id: u32,
    /// Payload length, at most [`PAYLOAD_MAX`].
    pub len: u32,
    /// The node's clock.
    pub clock: u64,
    /// Payload bytes.
    pub payload: [u8; PAYLOAD_MAX],
}

impl Event {
    /// An event of `kind` with the given fields; `payload` longer than
    /// [`PAYLOAD_MAX`] is a caller bug (the World never builds one).
    pub fn new(kind: EventKind, src: u32, id: u32, payload: &[u8], clock: u64) -> Event {
        assert!(payload.len() <= PAYLOAD_MAX, "event payload too long");
        Event {
            kind: kind as u32,
            src,
            id,
            len: payload.len() as u32,
            clock,
            payload: zero_padded(payload),
        }
    }

    /// The event's kind (the World only delivers valid kinds).
    pub fn kind(&self) -> Option<EventKind> {
        EventKind::from_raw(self.kind)
    }

    /// The meaningful payload bytes.
    pub fn payload(&self) -> &[u8] {
        meaningful(&self.payload, self.len)
    }
}

/// `payload` (at most [`PAYLOAD_MAX`] bytes, checked by the callers) in a
/// payload field, the bytes after it zero.
pub(crate) fn zero_padded(payload: &[u8]) -> [u8; PAYLOAD_MAX] {
    let mut field = [0; PAYLOAD_MAX];
    field[..payload.len()].copy_from_slice(payload);
    field
}

/// The first `len` bytes of a payload field (clamped to [`PAYLOAD_MAX`]).
fn meaningful(field: &[u8; PAYLOAD_MAX], len: u32) -> &[u8] {
    &field[..(len as usize).min(PAYLOAD_MAX)]
}

/// One output of a step (`cmc_output`), as [`Outputs`]' emit helpers write it.
///
/// ```
/// use cmc_world::core::abi::{CoreError, OutputKind, Outputs};
///
/// let mut out = Outputs::default();
/// out.reply(4, b"ok")?;
/// let output = out.as_slice()[0];
/// assert_eq!(OutputKind::from_raw(output.kind), Some(OutputKind::Reply));
/// assert_eq!((output.id, output.payload()), (4, &b"ok"[..]));
/// # Ok::<(), CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Output {
    /// An [`OutputKind`] number.
    pub kind: u32,
    /// `Send`: the destination node.
    pub dst: u32,
    /// Timer, wake or request id, or persist offset.
    pub id: u32,
    /// Payload length, at most [`PAYLOAD_MAX`].
    pub len: u32,
    /// Payload bytes.
    pub payload: [u8; PAYLOAD_MAX],
}

impl Output {
    /// The meaningful payload bytes (clamped to [`PAYLOAD_MAX`]).
    pub fn payload(&self) -> &[u8] {
        meaningful(&self.payload, self.len)
    }
}

/// The outputs of one step, in order (`cmc_outputs`).
///
/// ```
/// use cmc_world::core::abi::{CoreError, OutputKind, Outputs};
///
/// let mut out = Outputs::default();
/// out.persist(0, &7u32.to_le_bytes())?;
/// out.send(1, b"data")?;
/// out.set_timer(0)?;
/// let kinds: Vec<_> = out.as_slice().iter().map(|o| OutputKind::from_raw(o.kind)).collect();
/// assert_eq!(kinds, [Some(OutputKind::Persist), Some(OutputKind::Send),
///                    Some(OutputKind::SetTimer)]);
/// assert_eq!(out.refused(), 0, "nothing was refused");
/// # Ok::<(), CoreError>(())
/// ```
///
/// Rust code reaches the outputs through the emit helpers and
/// [`Outputs::as_slice`] only: the items past the count, which hold what
/// earlier steps wrote, are out of its reach, so a core written in Rust
/// cannot read outputs it did not write (C code can, and runs on a guarded
/// buffer filled before each step, see `run::guard_pages`):
///
/// ```compile_fail
/// use cmc_world::core::abi::Outputs;
///
/// let out = Outputs::default();
/// let earlier = out.items[3]; // private: not even a core's own past outputs
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Outputs {
    /// Number of valid entries in `items`.
    pub(crate) count: u32,
    /// Outputs the emit helpers refused (beyond [`OUTPUTS_MAX`] or with a
    /// payload over [`PAYLOAD_MAX`]); nonzero stops the run with a capacity
    /// fault even if the core ignored the error.
    pub(crate) reserved: u32,
    /// The outputs; entries past `count` are ignored.
    pub(crate) items: [Output; OUTPUTS_MAX],
}

impl Default for Outputs {
    fn default() -> Self {
        Outputs::zeroed()
    }
}

/// A step error: a core returned nonzero, or asked for something impossible.
///
/// ```
/// use cmc_world::core::abi::{CoreError, Outputs, PAYLOAD_MAX};
///
/// // A payload over PAYLOAD_MAX is refused, and the refusal is counted.
/// let mut out = Outputs::default();
/// assert_eq!(out.send(1, &[0; PAYLOAD_MAX + 1]), Err(CoreError::OutputsFull));
/// assert_eq!(out.refused(), 1);
/// // A core's own error code, as a report shows it.
/// assert_eq!(CoreError::Code(3).to_string(), "the step returned error code 3");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// The core's step returned this nonzero code.
    Code(i32),
    /// The step emitted more than [`OUTPUTS_MAX`] outputs or a payload over [`PAYLOAD_MAX`].
    OutputsFull,
    /// A failure the checker describes in words: a Rust core that panicked,
    /// or a library under an adapter that failed (a panic, a replay that did
    /// not reproduce its view, equal views that behaved differently: module
    /// `heap`); the text says what and where.
    Library(String),
}

impl std::fmt::Display for CoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreError::Code(code) => write!(f, "the step returned error code {code}"),
            CoreError::OutputsFull => write!(
                f,
                "the step emitted more than {OUTPUTS_MAX} outputs or a payload over {PAYLOAD_MAX} bytes"
            ),
            CoreError::Library(text) => write!(f, "{text}"),
        }
    }
}

impl Outputs {
    /// Empties the outputs: no outputs, no refusals, and every byte of the
    /// items `fill` (a core must not read an item it did not write; the
    /// determinism gate fills them with a different byte each run).
    pub(crate) fn empty(&mut self, fill: u8) {
        bytemuck::bytes_of_mut(&mut self.items).fill(fill);
        self.clear();
    }

    /// No outputs and no refusals; the items are left as they are.
    pub(crate) fn clear(&mut self) {
        self.count = 0;
        self.reserved = 0;
    }

    /// How many outputs the emit helpers refused (beyond [`OUTPUTS_MAX`]
    /// or with a payload over [`PAYLOAD_MAX`]): nonzero stops the run with
    /// a capacity fault even if the core ignored the error.
    pub fn refused(&self) -> u32 {
        self.reserved
    }

    /// The valid outputs (clamped to [`OUTPUTS_MAX`]).
    pub fn as_slice(&self) -> &[Output] {
        &self.items[..(self.count as usize).min(OUTPUTS_MAX)]
    }

    /// Appends an output, as `cmc_emit` does in C.
    pub fn emit(
        &mut self,
        kind: OutputKind,
        dst: u32,
        id: u32,
        payload: &[u8],
    ) -> Result<(), CoreError> {
        let index = self.count as usize;
        if index >= OUTPUTS_MAX || payload.len() > PAYLOAD_MAX {
            self.reserved = self.reserved.saturating_add(1);
            return Err(CoreError::OutputsFull);
        }
        self.items[index] = Output {
            kind: kind as u32,
            dst,
            id,
            len: payload.len() as u32,
            payload: zero_padded(payload),
        };
        self.count += 1;
        Ok(())
    }

    /// Sends `message` to node `dst`.
    pub fn send(&mut self, dst: u32, message: &[u8]) -> Result<(), CoreError> {
        self.emit(OutputKind::Send, dst, 0, message)
    }

    /// Arms timer `id`.
    pub fn set_timer(&mut self, id: u32) -> Result<(), CoreError> {
        self.emit(OutputKind::SetTimer, 0, id, &[])
    }

    /// Disarms timer `id`.
    pub fn cancel_timer(&mut self, id: u32) -> Result<(), CoreError> {
        self.emit(OutputKind::CancelTimer, 0, id, &[])
    }

    /// Writes `bytes` at durable offset `offset` once the environment flushes it.
    pub fn persist(&mut self, offset: u32, bytes: &[u8]) -> Result<(), CoreError> {
        self.emit(OutputKind::Persist, 0, offset, bytes)
    }

    /// Persists the whole record `record` (a plain-old-data struct, e.g. the
    /// core's durable part) at durable offset `offset`.
    pub fn persist_record<T: Pod>(&mut self, offset: u32, record: &T) -> Result<(), CoreError> {
        self.persist(offset, bytemuck::bytes_of(record))
    }

    /// Schedules wake-up `id`.
    pub fn wake(&mut self, id: u32) -> Result<(), CoreError> {
        self.emit(OutputKind::Wake, 0, id, &[])
    }

    /// Replies `bytes` to client request `request`.
    pub fn reply(&mut self, request: u32, bytes: &[u8]) -> Result<(), CoreError> {
        self.emit(OutputKind::Reply, 0, request, bytes)
    }

    /// Asks for random choice `id` among `k` values (1 to 255): a later
    /// `CHOICE` event with this id carries the value, `0..k`, in `payload[0]`.
    /// Asking again for a pending id replaces its `k`.
    pub fn choose(&mut self, id: u32, k: u8) -> Result<(), CoreError> {
        self.emit(OutputKind::Choose, 0, id, &[k])
    }
    /// Arms timer `id` to fire once the node's clock has reached `deadline`
    /// (`cmc_set_timer_at` in C): the payload is the deadline as 8
    /// little-endian bytes. Re-arming replaces the earlier deadline.
    pub fn set_timer_at(&mut self, id: u32, deadline: u64) -> Result<(), CoreError> {
        self.emit(OutputKind::SetTimerAt, 0, id, &deadline.to_le_bytes())
    }
}

/// The deadline a [`OutputKind::SetTimerAt`] output carries, or `None` if
/// its payload is not the 8 bytes [`Outputs::set_timer_at`] writes.
pub fn timer_deadline(output: &Output) -> Option<u64> {
    Some(u64::from_le_bytes(output.payload().try_into().ok()?))
}

/// `cmc_step_fn`: the step of a core through the C ABI, as a loaded
/// library's [`CoreDescriptor::step`] (0 for success, else the core's error code).
///
/// ```
/// use cmc_world::core::abi::{Config, Event, EventKind, OutputKind, Outputs, StepFn};
/// use cmc_world::example_cores::reqack::{Durable, ReqAck, Volatile};
///
/// cmc_world::export_core!(ReqAck = ReqAck { bug: 0 });
/// // SAFETY: `cmc_core_entry` returns a valid descriptor of this program.
/// let step: StepFn = unsafe { (*cmc_core_entry()).step }.expect("a step");
/// let config = Config { node: 0, nodes: 2, params: [0; 8] };
/// let (durable, mut volatile) = (Durable::default(), Volatile::default());
/// let (request, mut out) = (Event::new(EventKind::Client, 0, 0, &[], 0), Outputs::default());
/// // SAFETY: the parts have the core's declared sizes.
/// let code = unsafe {
///     step(&config, (&durable as *const Durable).cast(),
///          (&mut volatile as *mut Volatile).cast(), &request, &mut out)
/// };
/// assert_eq!(code, 0);
/// assert_eq!(out.as_slice()[0].kind, OutputKind::Persist as u32, "the sender persists first");
/// ```
pub type StepFn = unsafe extern "C" fn(
    config: *const Config,
    durable: *const c_void,
    volatile: *mut c_void,
    event: *const Event,
    out: *mut Outputs,
) -> c_int;
/// `cmc_describe_state_fn`: writes a node's state as NUL-terminated text
/// into `buf` (at most `cap` bytes in all).
///
/// ```
/// use std::ffi::CStr;
/// use cmc_world::core::abi::{Config, DescribeStateFn};
/// use cmc_world::example_cores::reqack::{Durable, ReqAck, Volatile};
///
/// cmc_world::export_core!(ReqAck = ReqAck { bug: 0 });
/// // SAFETY: `cmc_core_entry` returns a valid descriptor of this program.
/// let describe: DescribeStateFn = unsafe { (*cmc_core_entry()).describe_state }.unwrap();
/// let config = Config { node: 1, nodes: 2, params: [0; 8] };
/// let (durable, volatile) = (Durable { pending: 0, stored: 1 }, Volatile::default());
/// let mut buf = [0; 64];
/// // SAFETY: the parts have the core's declared sizes; `buf` holds 64 bytes.
/// unsafe { describe(&config, (&durable as *const Durable).cast(),
///                   (&volatile as *const Volatile).cast(), buf.as_mut_ptr(), buf.len()) };
/// let text = unsafe { CStr::from_ptr(buf.as_ptr()) };
/// assert_eq!(text.to_str(), Ok("receiver stored=0x1 flushing=0x0"));
/// ```
pub type DescribeStateFn = unsafe extern "C" fn(
    config: *const Config,
    durable: *const c_void,
    volatile: *const c_void,
    buf: *mut c_char,
    cap: usize,
);
/// `cmc_describe_message_fn`: writes a message as NUL-terminated text into
/// `buf` (at most `cap` bytes in all, cut if longer).
///
/// ```
/// use std::ffi::CStr;
/// use cmc_world::core::abi::{Config, DescribeMessageFn};
/// use cmc_world::core::helpers::Message;
/// use cmc_world::example_cores::reqack::{Msg, ReqAck, MSG_DATA};
///
/// cmc_world::export_core!(ReqAck = ReqAck { bug: 0 });
/// // SAFETY: `cmc_core_entry` returns a valid descriptor of this program.
/// let describe: DescribeMessageFn = unsafe { (*cmc_core_entry()).describe_message }.unwrap();
/// let config = Config { node: 0, nodes: 2, params: [0; 8] };
/// let message = Msg { kind: MSG_DATA, request: 2 }.encode();
/// let mut buf = [0; 6]; // room for 5 characters and the NUL
/// // SAFETY: `message` and `buf` hold the lengths passed.
/// unsafe { describe(&config, message.as_ptr(), 8, buf.as_mut_ptr(), buf.len()) };
/// assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str(), Ok("DATA("));
/// ```
pub type DescribeMessageFn = unsafe extern "C" fn(
    config: *const Config,
    message: *const u8,
    len: u32,
    buf: *mut c_char,
    cap: usize,
);
/// `cmc_permute_fn` (optional, for symmetry reduction): renames the node
/// ids a state holds by `perm` (`perm[old] = new`), after the fields the
/// library declares with `CMC_ID_FIELDS` are renamed
/// ([`crate::core::id_fields`]).
/// [`export_core!`](crate::export_core) leaves it null.
///
/// ```
/// use std::ffi::c_void;
/// use cmc_world::core::abi::{Config, PermuteFn};
///
/// /// A state whose volatile part is one node id (the leader's).
/// unsafe extern "C" fn rename_leader(_: *const Config, _: *mut c_void,
///                                    volatile: *mut c_void, perm: *const u32) {
///     let leader = volatile.cast::<u32>();
///     unsafe { *leader = *perm.add(*leader as usize) };
/// }
/// let permute: PermuteFn = rename_leader;
/// let (config, mut leader) = (Config { node: 0, nodes: 3, params: [0; 8] }, 2u32);
/// let swap_0_and_2 = [2, 1, 0];
/// unsafe { permute(&config, std::ptr::null_mut(), (&mut leader as *mut u32).cast(),
///                  swap_0_and_2.as_ptr()) };
/// assert_eq!(leader, 0);
/// ```
pub type PermuteFn = unsafe extern "C" fn(
    config: *const Config,
    durable: *mut c_void,
    volatile: *mut c_void,
    perm: *const u32,
);

/// The descriptor a C core exports (`cmc_core`); a Rust core exports one
/// with [`export_core!`](crate::export_core).
///
/// ```
/// use cmc_world::core::abi::{CoreDescriptor, ABI_VERSION};
/// use cmc_world::example_cores::reqack::{Durable, ReqAck, Volatile};
///
/// cmc_world::export_core!(ReqAck = ReqAck { bug: 0 });
/// // SAFETY: `cmc_core_entry` returns a valid descriptor of this program.
/// let descriptor: &CoreDescriptor = unsafe { &*cmc_core_entry() };
/// assert_eq!(descriptor.abi_version, ABI_VERSION);
/// assert_eq!(descriptor.durable_size as usize, size_of::<Durable>());
/// assert_eq!(descriptor.volatile_size as usize, size_of::<Volatile>());
/// assert!(descriptor.step.is_some() && descriptor.permute.is_none());
/// ```
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct CoreDescriptor {
    /// Must equal [`ABI_VERSION`].
    pub abi_version: u32,
    /// Bytes of the durable part.
    pub durable_size: u32,
    /// Bytes of the volatile part.
    pub volatile_size: u32,
    /// Zero.
    pub reserved: u32,
    /// NUL-terminated short name, or null.
    pub name: *const c_char,
    /// The step function (null is refused at load time).
    pub step: Option<StepFn>,
    /// Optional state description.
    pub describe_state: Option<DescribeStateFn>,
    /// Optional message description.
    pub describe_message: Option<DescribeMessageFn>,
    /// Optional node renaming (see [`PermuteFn`]).
    pub permute: Option<PermuteFn>,
}

/// `cmc_core_entry`: the function a core library exports, which the loader
/// calls for the library's [`CoreDescriptor`] (null: the library has no core).
///
/// ```
/// use std::ffi::CStr;
/// use cmc_world::core::abi::EntryFn;
/// use cmc_world::example_cores::reqack::ReqAck;
///
/// cmc_world::export_core!(ReqAck = ReqAck { bug: 0 });
/// let entry: EntryFn = cmc_core_entry;
/// // SAFETY: `entry` returns a valid descriptor, whose name is a C string.
/// let name = unsafe { CStr::from_ptr((*entry()).name) };
/// assert_eq!(name.to_str(), Ok("reqack"));
/// ```
pub type EntryFn = unsafe extern "C" fn() -> *const CoreDescriptor;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_header() {
        // Offsets and sizes as a C compiler lays out include/cmc.h on LP64.
        assert_eq!(std::mem::size_of::<Config>(), 72);
        assert_eq!(std::mem::size_of::<Event>(), 24 + PAYLOAD_MAX);
        assert_eq!(std::mem::size_of::<Output>(), 16 + PAYLOAD_MAX);
        assert_eq!(
            std::mem::size_of::<Outputs>(),
            8 + OUTPUTS_MAX * (16 + PAYLOAD_MAX)
        );
        assert_eq!(std::mem::size_of::<CoreDescriptor>(), 16 + 5 * 8);
    }

    #[test]
    fn emit_refuses_overflow() {
        let mut out = Outputs::default();
        for _ in 0..OUTPUTS_MAX {
            out.wake(1).unwrap();
        }
        assert_eq!(out.wake(1), Err(CoreError::OutputsFull));
        assert_eq!(out.reserved, 1, "a refused output is counted");
        assert_eq!(
            Outputs::default().send(0, &[0; PAYLOAD_MAX + 1]),
            Err(CoreError::OutputsFull)
        );
    }
}
