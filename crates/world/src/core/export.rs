//! A Rust core exported through the C ABI, so that a `cdylib` of it loads
//! like a C core: `cmc check --core ./libmycore.so`.
//!
//! [`export_core!`](crate::export_core) emits the library's
//! `cmc_core_entry`, which returns a `cmc_core` descriptor (see
//! `include/cmc.h`) whose functions call the [`TypedCore`]:
//!
//! ```
//! // src/lib.rs of a crate with `crate-type = ["cdylib"]`
//! use cmc_world::core::abi::{Config, CoreError, Event, Outputs};
//! use cmc_world::TypedCore;
//!
//! #[derive(Default)]
//! struct MyCore;
//!
//! impl TypedCore for MyCore {
//!     type Durable = u32;
//!     type Volatile = u32;
//!     fn name(&self) -> &str { "mycore" }
//!     fn step(&self, _: &Config, _: &u32, _: &mut u32, _: &Event, _: &mut Outputs)
//!         -> Result<(), CoreError> { Ok(()) }
//! }
//!
//! cmc_world::export_core!(MyCore); // MyCore: TypedCore + Default
//! // or, with any expression of the type: export_core!(MyCore = MyCore::new(2))
//! # assert!(!cmc_core_entry().is_null());
//! ```
//!
//! The descriptor is built once, on the first call of `cmc_core_entry`,
//! which also builds the core. Contract of the exported functions:
//!
//! - `step` runs [`Core::step`] on the bytes the World passes (states are
//!   copied in and out, so they need no alignment) and returns 0 on success,
//!   the code of [`CoreError::Code`] (a code of 0 becomes [`ERROR_CODE_ZERO`]
//!   so that an error is never read as success), [`OUTPUTS_FULL_CODE`] for
//!   [`CoreError::OutputsFull`], and [`PANIC_CODE`] when the step panics (a
//!   panic never unwinds into C; its message goes to standard error).
//! - `describe_state` and `describe_message` write the core's text, or the
//!   World's hexadecimal text when the core has none, so traces through the
//!   library read as they do with the core in process. Text longer than the
//!   buffer is cut at a character boundary.
//! - `cmc_describe_entry` (the optional describe table, `CMC_DESCRIBE` in
//!   `include/cmc.h`) is emitted too: its functions write the core's
//!   [`Core::describe_reply`] and [`Core::describe_operation`] text, or an
//!   empty text where the core has none (the loader then shows the World's
//!   text), so replies and client operations read as in process.
//! - `permute` is left null: the C ABI has no `permute_message`, so a core
//!   whose messages carry node ids could not be renamed correctly. Symmetry
//!   reduction (`symmetry=`) needs the core in process (`--core rust:NAME`
//!   in a binary that registers it, see `cmc-cli`).

use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use crate::core::abi::{Config, CoreDescriptor, CoreError, Event, Outputs, ABI_VERSION};
use crate::core::describe_table::{DescribePayloadFn, DescribeTable};
use crate::core::{Core, TypedCore};

/// What an exported step returns when the core's step panicked (or a
/// library under an adapter failed: its text cannot cross the C ABI).
pub const PANIC_CODE: c_int = -101;
/// What an exported step returns for [`CoreError::OutputsFull`] (as
/// `cmc_emit` returns in C).
pub const OUTPUTS_FULL_CODE: c_int = -1;
/// What an exported step returns for `CoreError::Code(0)`, an error whose
/// code would read as success.
pub const ERROR_CODE_ZERO: c_int = -100;

/// The core an exported library serves; implemented by
/// [`export_core!`](crate::export_core) for a type of its own (not meant to
/// be implemented by hand: see the macro's example, and
/// [`DescriptorCell`]'s, which implements it as the macro does).
pub trait Exported: 'static {
    /// The core's type.
    type Core: TypedCore + 'static;
    /// The core, built on first use and kept for the life of the library.
    fn core() -> &'static Self::Core;
}

/// The descriptor of an exported core and the name it points to.
struct Built {
    descriptor: CoreDescriptor,
    _name: CString,
}

/// Where `cmc_core_entry` keeps its descriptor (one per exported library):
/// the `static` that [`export_core!`](crate::export_core) declares, built on
/// the first call of [`DescriptorCell::entry`] and never changed after.
///
/// What `export_core!(ReqAck)` expands to, in short:
///
/// ```
/// use cmc_world::core::export::{DescriptorCell, Exported};
/// use cmc_world::example_cores::reqack::ReqAck;
///
/// struct Mine;
/// impl Exported for Mine {
///     type Core = ReqAck;
///     fn core() -> &'static ReqAck { static CORE: ReqAck = ReqAck { bug: 0 }; &CORE }
/// }
/// static DESCRIPTOR: DescriptorCell = DescriptorCell::new();
/// let descriptor = DESCRIPTOR.entry::<Mine>();
/// assert!(!descriptor.is_null());
/// assert_eq!(DESCRIPTOR.entry::<Mine>(), descriptor, "built once");
/// // SAFETY: a non-null descriptor lives as long as the cell.
/// assert_eq!(unsafe { (*descriptor).durable_size }, 8);
/// ```
pub struct DescriptorCell(OnceLock<Option<Built>>);

// SAFETY: the descriptor holds a pointer to the `CString` stored beside it
// and function pointers; neither is mutated after the cell is initialised,
// and the cell lives in a static for the life of the library.
unsafe impl Sync for DescriptorCell {}

impl DescriptorCell {
    /// An empty cell, for a `static`.
    pub const fn new() -> DescriptorCell {
        DescriptorCell(OnceLock::new())
    }

    /// The descriptor of `E`'s core, built on the first call; null (which
    /// the loader refuses) when the core cannot be exported, with the reason
    /// on standard error: its constructor panicked, or its name holds a NUL byte.
    pub fn entry<E: Exported>(&'static self) -> *const CoreDescriptor {
        let built = self.0.get_or_init(|| {
            let core = catch_unwind(E::core).ok()?;
            let name = TypedCore::name(core);
            let Ok(c_name) = CString::new(name) else {
                eprintln!("cmc_core_entry: the core's name {name:?} holds a NUL byte");
                return None;
            };
            let size = |bytes: usize| u32::try_from(bytes).unwrap_or(u32::MAX);
            Some(Built {
                descriptor: CoreDescriptor {
                    abi_version: ABI_VERSION,
                    durable_size: size(Core::durable_size(core)),
                    volatile_size: size(Core::volatile_size(core)),
                    reserved: 0,
                    name: c_name.as_ptr(),
                    step: Some(step::<E>),
                    describe_state: Some(describe_state::<E>),
                    describe_message: Some(describe_message::<E>),
                    permute: None,
                },
                _name: c_name,
            })
        });
        built
            .as_ref()
            .map_or(std::ptr::null(), |built| &built.descriptor)
    }
}

impl Default for DescriptorCell {
    fn default() -> Self {
        DescriptorCell::new()
    }
}

/// The `len` bytes at `data` (a dangling pointer is fine for none).
///
/// # Safety
/// For `len > 0`, `data` points to `len` readable bytes that outlive `'a`.
unsafe fn bytes<'a>(data: *const c_void, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
}

/// The C step of `E`'s core (see the module's contract).
///
/// # Safety
/// The pointers are as `cmc_step_fn` documents: valid, with parts of the
/// core's declared sizes.
unsafe extern "C" fn step<E: Exported>(
    config: *const Config,
    durable: *const c_void,
    volatile: *mut c_void,
    event: *const Event,
    out: *mut Outputs,
) -> c_int {
    let core = E::core();
    let result = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract.
        let (config, event, out) = unsafe { (&*config, &*event, &mut *out) };
        // SAFETY: as above, the parts have the declared sizes.
        let durable = unsafe { bytes(durable, Core::durable_size(core)) };
        let volatile_size = Core::volatile_size(core);
        let volatile: &mut [u8] = if volatile_size == 0 {
            &mut []
        } else {
            // SAFETY: as above; the volatile part is writable.
            unsafe { std::slice::from_raw_parts_mut(volatile.cast::<u8>(), volatile_size) }
        };
        Core::step(core, config, durable, volatile, event, out)
    }));
    match result {
        Ok(Ok(())) => 0,
        Ok(Err(CoreError::Code(0))) => ERROR_CODE_ZERO,
        Ok(Err(CoreError::Code(code))) => code,
        Ok(Err(CoreError::OutputsFull)) => OUTPUTS_FULL_CODE,
        Ok(Err(CoreError::Library(_))) | Err(_) => PANIC_CODE,
    }
}

/// Writes the text `describe` gives (`panicked` if it panics) into `buf`,
/// as [`write_text`] does.
///
/// # Safety
/// `buf` is writable for `cap` bytes.
unsafe fn write_described(
    describe: impl FnOnce() -> String,
    panicked: &str,
    buf: *mut c_char,
    cap: usize,
) {
    let text = catch_unwind(AssertUnwindSafe(describe)).unwrap_or_else(|_| panicked.into());
    // SAFETY: the caller's contract.
    unsafe { write_text(&text, buf, cap) }
}

/// Copies `text` into `buf` as a NUL-terminated string of at most `cap`
/// bytes in all, cut at a character boundary.
///
/// # Safety
/// `buf` is writable for `cap` bytes.
unsafe fn write_text(text: &str, buf: *mut c_char, cap: usize) {
    if cap == 0 || buf.is_null() {
        return;
    }
    let mut len = text.len().min(cap - 1);
    while !text.is_char_boundary(len) {
        len -= 1;
    }
    // SAFETY: `len + 1 <= cap` bytes are written into `buf`.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), len);
        *buf.add(len) = 0;
    }
}

/// The C `describe_state` of `E`'s core: its text, or the World's.
///
/// # Safety
/// As `cmc_describe_state_fn` documents.
unsafe extern "C" fn describe_state<E: Exported>(
    config: *const Config,
    durable: *const c_void,
    volatile: *const c_void,
    buf: *mut c_char,
    cap: usize,
) {
    let core = E::core();
    let describe = || {
        // SAFETY: the caller's contract: parts of the declared sizes.
        let (durable, volatile) = unsafe {
            (
                bytes(durable, Core::durable_size(core)),
                bytes(volatile, Core::volatile_size(core)),
            )
        };
        // SAFETY: as above.
        Core::describe_state(core, unsafe { &*config }, durable, volatile)
            .unwrap_or_else(|| crate::core::hex::state_hex(durable, volatile))
    };
    // SAFETY: the caller's contract.
    unsafe { write_described(describe, "(describe_state panicked)", buf, cap) }
}

/// Writes into `buf` the text `describe` gives for the `len` bytes at
/// `payload` (`panicked` if it panics), as the C describers of a message,
/// a reply and an operation do.
///
/// # Safety
/// `config` is valid, `payload` points to `len` readable bytes and `buf` is
/// writable for `cap` bytes.
unsafe fn write_payload_text(
    config: *const Config,
    payload: *const u8,
    len: u32,
    (buf, cap): (*mut c_char, usize),
    describe: impl FnOnce(&Config, &[u8]) -> String,
    panicked: &str,
) {
    let text = || {
        // SAFETY: the caller's contract.
        let (config, payload) = unsafe { (&*config, bytes(payload.cast(), len as usize)) };
        describe(config, payload)
    };
    // SAFETY: the caller's contract.
    unsafe { write_described(text, panicked, buf, cap) }
}

/// The C `describe_message` of `E`'s core: its text, or the World's.
///
/// # Safety
/// As `cmc_describe_message_fn` documents.
unsafe extern "C" fn describe_message<E: Exported>(
    config: *const Config,
    message: *const u8,
    len: u32,
    buf: *mut c_char,
    cap: usize,
) {
    let describe = |config: &Config, message: &[u8]| {
        Core::describe_message(E::core(), config, message)
            .unwrap_or_else(|| crate::core::hex::hex(message))
    };
    // SAFETY: the caller's contract.
    unsafe {
        write_payload_text(
            config,
            message,
            len,
            (buf, cap),
            describe,
            "(describe_message panicked)",
        )
    }
}

/// The C `describe_reply` (`REPLY`) or `describe_operation` (not `REPLY`)
/// of `E`'s core: its text, or an empty one.
///
/// # Safety
/// As `cmc_describe_payload_fn` documents.
unsafe extern "C" fn describe_client_payload<E: Exported, const REPLY: bool>(
    config: *const Config,
    payload: *const u8,
    len: u32,
    buf: *mut c_char,
    cap: usize,
) {
    let describe = |config: &Config, payload: &[u8]| {
        let core = E::core();
        let text = if REPLY {
            Core::describe_reply(core, config, payload)
        } else {
            Core::describe_operation(core, config, payload)
        };
        text.unwrap_or_default()
    };
    let panicked = if REPLY {
        "(describe_reply panicked)"
    } else {
        "(describe_operation panicked)"
    };
    // SAFETY: the caller's contract.
    unsafe { write_payload_text(config, payload, len, (buf, cap), describe, panicked) }
}

/// The describe table of `E`'s core, which the library's
/// `cmc_describe_entry` (emitted by [`export_core!`](crate::export_core))
/// returns.
pub const fn describe_table<E: Exported>() -> DescribeTable {
    DescribeTable {
        abi_version: ABI_VERSION,
        reserved: 0,
        describe_reply: Some(describe_client_payload::<E, true> as DescribePayloadFn),
        describe_operation: Some(describe_client_payload::<E, false> as DescribePayloadFn),
    }
}

/// Exports a [`TypedCore`](crate::TypedCore) through the C ABI: emits the
/// `#[no_mangle] extern "C" fn cmc_core_entry()` of a `cdylib`, so that the
/// library loads with `cmc check --core ./libNAME.so` (see [`crate::core::export`]),
/// and its describe table's `cmc_describe_entry()`.
///
/// `export_core!(MyCore)` builds the core with `MyCore::default()`;
/// `export_core!(MyCore = expression)` with the expression (evaluated once,
/// on the first call of `cmc_core_entry`). One per library.
///
/// # Example
///
/// The exported entry point, read back as the loader reads a library's:
///
/// ```
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::{CCore, Core};
///
/// cmc_world::export_core!(ReqAck = ReqAck { bug: 0 });
///
/// // SAFETY: `cmc_core_entry` returns a descriptor of this program.
/// let core = unsafe { CCore::from_descriptor(cmc_core_entry(), "exported", None) }
///     .expect("a valid descriptor");
/// assert_eq!(Core::name(&core), "reqack");
/// assert_eq!(core.durable_size(), Core::durable_size(&ReqAck::default()));
/// ```
#[macro_export]
macro_rules! export_core {
    ($core:ty) => {
        $crate::export_core!($core = <$core as ::core::default::Default>::default());
    };
    ($core:ty = $value:expr) => {
        /// The exported core, built on first use.
        struct CmcExportedCore;
        impl $crate::core::export::Exported for CmcExportedCore {
            type Core = $core;
            fn core() -> &'static $core {
                static CORE: ::std::sync::OnceLock<$core> = ::std::sync::OnceLock::new();
                CORE.get_or_init(|| $value)
            }
        }
        /// The core's descriptor (`cmc_core_entry` of `include/cmc.h`).
        #[no_mangle]
        pub extern "C" fn cmc_core_entry() -> *const $crate::core::abi::CoreDescriptor {
            static DESCRIPTOR: $crate::core::export::DescriptorCell =
                $crate::core::export::DescriptorCell::new();
            DESCRIPTOR.entry::<CmcExportedCore>()
        }
        /// The core's describe table (`cmc_describe_entry` of `include/cmc.h`).
        #[no_mangle]
        pub extern "C" fn cmc_describe_entry() -> *const $crate::core::describe_table::DescribeTable
        {
            static TABLE: $crate::core::describe_table::DescribeTable =
                $crate::core::export::describe_table::<CmcExportedCore>();
            &TABLE
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::core::abi::Config;
    use crate::test_support::StepCore;
    use crate::{CCore, Core, TypedCore};

    /// A core that names its one reply and leaves operations to the World.
    fn named() -> StepCore<u8> {
        StepCore::idle("named").describing_replies(|payload| (payload == [1]).then(|| "OK".into()))
    }

    crate::export_core!(StepCore<u8> = named());

    #[test]
    fn an_exported_core_describes_replies_and_operations_as_in_process() {
        // SAFETY: both entry points are this program's, their tables static.
        let exported = unsafe {
            CCore::from_descriptor(cmc_core_entry(), "exported", None)
                .and_then(|core| core.with_describe_table(cmc_describe_entry()))
        }
        .expect("a valid descriptor and describe table");
        let config = Config {
            node: 0,
            nodes: 1,
            params: [0; 8],
        };
        for payload in [&[1u8][..], &[2], &[]] {
            assert_eq!(
                Core::describe_reply(&exported, &config, payload),
                TypedCore::describe_reply(&named(), &config, payload),
                "{payload:?}"
            );
            assert_eq!(Core::describe_operation(&exported, &config, payload), None);
        }
    }
}
