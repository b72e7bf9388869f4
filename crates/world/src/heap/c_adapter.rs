//! A heap-state adapter written in C (`include/cmc_heap.h`), loaded from a
//! shared library as a [`HeapAdapter`].
//!
//! The library exports `cmc_heap_core_entry`, returning a `cmc_heap_core`
//! descriptor (start, step, view, destroy over an opaque node object) and,
//! optionally, C properties (`CMC_PROPERTIES`) that read the nodes' views as
//! their volatile parts and a describe table (`CMC_DESCRIBE`) for the
//! replies and client operations of its traces, as a `cmc_core`'s. [`load`] checks the descriptor as the loader checks
//! a `cmc_core`'s: every way it can be wrong is a [`LoadError`] saying what
//! to do. The checked library's calls to libc for time and randomness are
//! redirected to cmc's answers by [`super::libc_calls`].

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::sync::Arc;

use crate::core::abi::{
    Config, CoreError, DescribeMessageFn, DescribeStateFn, Event, Outputs, STATE_MAX,
};
use crate::core::describe_table::{DescribePayloadFn, Describers};
use crate::core::ghost_table::CGhost;
use crate::core::loader::{CCore, LoadError};
use crate::core::property_table::CProperty;
use crate::heap::libc_calls::{self, Answers};
use crate::heap::HeapAdapter;
use crate::run::recorder::{recorded, Call};

/// `CMC_HEAP_ABI_VERSION`.
pub const HEAP_ABI_VERSION: u32 = 1;
/// `CMC_HEAP_ENTRY_SYMBOL`.
pub const HEAP_ENTRY_SYMBOL: &str = "cmc_heap_core_entry";

type StartFn = unsafe extern "C" fn(
    config: *const Config,
    durable: *const c_void,
    out: *mut Outputs,
) -> *mut c_void;
type StepFn = unsafe extern "C" fn(
    node: *mut c_void,
    config: *const Config,
    event: *const Event,
    out: *mut Outputs,
) -> c_int;
type ViewFn =
    unsafe extern "C" fn(node: *const c_void, config: *const Config, view: *mut c_void) -> c_int;
type DestroyFn = unsafe extern "C" fn(node: *mut c_void);
type HeapEntryFn = unsafe extern "C" fn() -> *const HeapDescriptor;

/// `cmc_heap_core`, as the library lays it out.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct HeapDescriptor {
    abi_version: u32,
    durable_size: u32,
    view_size: u32,
    libc_calls: u32,
    name: *const c_char,
    library: *const c_char,
    libc_random: u64,
    libc_tick_ns: u64,
    start: Option<StartFn>,
    step: Option<StepFn>,
    view: Option<ViewFn>,
    destroy: Option<DestroyFn>,
    describe_state: Option<DescribeStateFn>,
    describe_message: Option<DescribeMessageFn>,
}

/// A C heap-state adapter: its checked descriptor, kept loaded.
pub struct CHeapAdapter {
    descriptor: HeapDescriptor,
    start: StartFn,
    step: StepFn,
    view: ViewFn,
    destroy: DestroyFn,
    name: String,
    /// The functions of the library's describe table (`CMC_DESCRIBE`), if any.
    describers: Describers,
    answers: Answers,
    /// The checked library and its calls that reach cmc, if the adapter names one.
    checked: Option<(String, libc_calls::Redirected)>,
    _library: Arc<libloading::Library>,
}

// SAFETY: the descriptor holds pointers into a library that stays loaded
// while the adapter lives; its functions are called on node objects that
// live within one call of one thread (HeapAdapter's contract).
unsafe impl Send for CHeapAdapter {}
// SAFETY: as for Send; nothing in the adapter is mutated after loading.
unsafe impl Sync for CHeapAdapter {}

/// A node object of a C adapter, destroyed when dropped.
pub struct CNode {
    node: *mut c_void,
    destroy: DestroyFn,
}

impl Drop for CNode {
    fn drop(&mut self) {
        // SAFETY: `node` came from the adapter's start and is destroyed once.
        unsafe { (self.destroy)(self.node) }
    }
}

/// A loaded heap-state adapter with its library's C properties and ghost
/// variables.
pub type Loaded = (CHeapAdapter, Vec<CProperty>, Vec<CGhost>);

/// The heap-state adapter in the library at `path` with its C properties
/// and ghost variables, or `None` when the library does not export [`HEAP_ENTRY_SYMBOL`] (it may
/// be a `cmc_core`).
pub fn load(path: &Path) -> Result<Option<Loaded>, LoadError> {
    let shown = path.display().to_string();
    // SAFETY: loading runs the library's initialisers, as for any core.
    let library = unsafe { libloading::Library::new(path) }
        .map_err(|error| LoadError(format!("cannot load core library {shown}: {error}")))?;
    // SAFETY: the symbol's type is fixed by include/cmc_heap.h.
    let entry: HeapEntryFn =
        match unsafe { library.get::<HeapEntryFn>(HEAP_ENTRY_SYMBOL.as_bytes()) } {
            Ok(entry) => *entry,
            Err(_) => return Ok(None),
        };
    let descriptor = recorded(
        Call::Load,
        || format!("the heap-state adapter {shown} (its `{HEAP_ENTRY_SYMBOL}`)"),
        // SAFETY: as above.
        || unsafe { entry() },
    );
    let library = Arc::new(library);
    // SAFETY: the descriptor comes from the entry point; the library stays loaded.
    let mut adapter =
        unsafe { CHeapAdapter::from_descriptor(descriptor, &shown, library.clone()) }?;
    adapter.describers = CCore::load_describers(&library, &shown)?;
    let properties = CCore::load_properties(&library, &shown)?;
    let ghosts = CCore::load_ghosts(&library, &shown)?;
    Ok(Some((adapter, properties, ghosts)))
}

impl CHeapAdapter {
    /// Wraps the descriptor after checking it, and redirects the checked
    /// library's libc calls.
    ///
    /// # Safety
    /// `descriptor` is null or what an adapter's `cmc_heap_core_entry`
    /// returned, valid while `library` is loaded.
    unsafe fn from_descriptor(
        descriptor: *const HeapDescriptor,
        origin: &str,
        library: Arc<libloading::Library>,
    ) -> Result<CHeapAdapter, LoadError> {
        let bad = |why: &str| {
            LoadError(format!(
                "{origin}: the heap-state adapter's descriptor {why}"
            ))
        };
        if descriptor.is_null() {
            return Err(bad("is a null pointer"));
        }
        // SAFETY: non-null; the version is read before the rest of the layout.
        let version = unsafe { std::ptr::addr_of!((*descriptor).abi_version).read_unaligned() };
        if version != HEAP_ABI_VERSION {
            return Err(LoadError(format!(
                "{origin} was built for cmc heap ABI version {version}, but this cmc speaks \
                 version {HEAP_ABI_VERSION}: rebuild it against this cmc's include/cmc_heap.h"
            )));
        }
        // SAFETY: the version matches, so the layout is ours.
        let descriptor = unsafe { descriptor.read_unaligned() };
        let (Some(start), Some(step), Some(view), Some(destroy)) = (
            descriptor.start,
            descriptor.step,
            descriptor.view,
            descriptor.destroy,
        ) else {
            return Err(bad(
                "lacks one of start, step, view and destroy (all are required)",
            ));
        };
        let size = descriptor.durable_size as usize + descriptor.view_size as usize;
        if size > STATE_MAX {
            return Err(bad(&format!(
                "declares {size} bytes of durable part and view; the limit is {STATE_MAX}"
            )));
        }
        if descriptor.libc_calls & !libc_calls::ALL != 0 {
            return Err(bad(&format!(
                "declares unknown libc calls (bits {:#x})",
                descriptor.libc_calls & !libc_calls::ALL
            )));
        }
        let name = text(descriptor.name).unwrap_or_else(|| {
            Path::new(origin)
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_else(|| origin.to_string())
        });
        let answers = Answers {
            declared: descriptor.libc_calls,
            random: descriptor.libc_random,
            tick_ns: descriptor.libc_tick_ns,
        };
        let checked = match text(descriptor.library) {
            Some(soname) => {
                let redirected = libc_calls::redirect(&soname)
                    .map_err(|why| LoadError(format!("{origin}: {why}")))?;
                Some((soname, redirected))
            }
            None => None,
        };
        Ok(CHeapAdapter {
            descriptor,
            start,
            step,
            view,
            destroy,
            name,
            describers: Describers::default(),
            answers,
            checked,
            _library: library,
        })
    }

    /// What the adapter declares, as `cmc describe` prints it (one indented
    /// line each): ABI version, sizes, the events it takes, the checked
    /// library and how each of its libc calls for time and randomness is
    /// answered, and the descriptions it gives.
    pub fn declaration(&self) -> String {
        let d = &self.descriptor;
        let list = |names: Vec<&str>| match names.is_empty() {
            true => "none".to_string(),
            false => names.join(", "),
        };
        let mut text = format!(
            "  heap ABI version: {HEAP_ABI_VERSION}\n  \
             durable part: {} bytes (the library's storage, written by PERSIST)\n  \
             view: {} bytes (the node's volatile part: what a state holds of the node)\n  \
             events: START creates the node from its flushed durable part (start); \
             every other event is a step (step)\n",
            d.durable_size, d.view_size
        );
        let declared = list(libc_calls::names(d.libc_calls));
        match &self.checked {
            None => text.push_str("  checked library: none named (no libc call is redirected)\n"),
            Some((soname, redirected)) => {
                let undeclared = list(libc_calls::names(redirected.calls & !d.libc_calls));
                text.push_str(&format!(
                    "  checked library: {soname} ({})\n  \
                     libc calls declared (answered by cmc): {declared}\n  \
                     libc calls it imports undeclared (a call is a fault): {undeclared}\n",
                    redirected.path
                ));
            }
        }
        if d.libc_calls & (libc_calls::TIME | libc_calls::CLOCK_GETTIME | libc_calls::GETTIMEOFDAY)
            != 0
        {
            text.push_str(&format!(
                "  clock: the node's, {} ns per TICK\n",
                d.libc_tick_ns
            ));
        }
        if d.libc_calls & (libc_calls::RAND | libc_calls::RANDOM | libc_calls::GETRANDOM) != 0 {
            text.push_str(&format!("  random value: {}\n", d.libc_random));
        }
        let describes: Vec<&str> = [
            d.describe_state.map(|_| "states"),
            d.describe_message.map(|_| "messages"),
            self.describers.reply.map(|_| "replies"),
            self.describers.operation.map(|_| "client operations"),
        ]
        .into_iter()
        .flatten()
        .collect();
        text.push_str(&format!("  describes: {}\n", list(describes)));
        text
    }

    /// Runs a call into the adapter with cmc answering the library's libc
    /// calls from `clock`; an undeclared call is a fault naming it.
    fn call<T>(&self, clock: u64, call: impl FnOnce() -> T) -> Result<T, CoreError> {
        libc_calls::answering(&self.answers, clock, call).map_err(CoreError::Library)
    }
}

/// A NUL-terminated static string of the descriptor, if not null.
fn text(pointer: *const c_char) -> Option<String> {
    // SAFETY: a non-null name is a NUL-terminated static string (cmc_heap.h).
    (!pointer.is_null()).then(|| {
        unsafe { CStr::from_ptr(pointer) }
            .to_string_lossy()
            .into_owned()
    })
}

fn code(what: &str, code: c_int) -> Result<(), CoreError> {
    match code {
        0 => Ok(()),
        code => Err(CoreError::Library(format!(
            "the adapter's {what} returned error code {code}"
        ))),
    }
}

impl HeapAdapter for CHeapAdapter {
    type Node = CNode;

    fn name(&self) -> &str {
        &self.name
    }

    fn durable_size(&self) -> usize {
        self.descriptor.durable_size as usize
    }

    fn view_size(&self) -> usize {
        self.descriptor.view_size as usize
    }

    fn start(
        &self,
        config: &Config,
        durable: &[u8],
        out: &mut Outputs,
    ) -> Result<CNode, CoreError> {
        assert_eq!(
            durable.len(),
            self.durable_size(),
            "durable part of the wrong size"
        );
        // SAFETY: the durable part has the declared size; the other pointers
        // are valid structs of the ABI's layout.
        let node = self.call(0, || unsafe {
            (self.start)(config, durable.as_ptr().cast(), out)
        })?;
        if node.is_null() {
            return Err(CoreError::Library(
                "the adapter's start returned no node (NULL)".into(),
            ));
        }
        Ok(CNode {
            node,
            destroy: self.destroy,
        })
    }

    fn step(
        &self,
        node: &mut CNode,
        config: &Config,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        // SAFETY: `node` is a live node of this adapter; the rest as in start.
        let result = self.call(event.clock, || unsafe {
            (self.step)(node.node, config, event, out)
        })?;
        code("step", result)
    }

    fn view(&self, node: &CNode, config: &Config, view: &mut [u8]) -> Result<(), CoreError> {
        assert_eq!(view.len(), self.view_size(), "view of the wrong size");
        // SAFETY: the view has the declared size; `node` is live.
        let result = self.call(0, || unsafe {
            (self.view)(node.node, config, view.as_mut_ptr().cast())
        })?;
        code("view", result)
    }

    fn describe_state(&self, config: &Config, durable: &[u8], view: &[u8]) -> Option<String> {
        let describe = self.descriptor.describe_state?;
        Some(describe_text(|buf, cap| {
            // SAFETY: the parts have the declared sizes; the buffer holds cap + 1 bytes.
            unsafe {
                describe(
                    config,
                    durable.as_ptr().cast(),
                    view.as_ptr().cast(),
                    buf,
                    cap,
                )
            }
        }))
    }

    fn describe_message(&self, config: &Config, message: &[u8]) -> Option<String> {
        let describe = self.descriptor.describe_message?;
        Some(describe_text(|buf, cap| {
            // SAFETY: as in describe_state.
            unsafe { describe(config, message.as_ptr(), message.len() as u32, buf, cap) }
        }))
    }

    /// An empty text is none: the World's text is shown.
    fn describe_reply(&self, config: &Config, payload: &[u8]) -> Option<String> {
        described_payload(self.describers.reply?, config, payload)
    }

    /// An empty text is none: the World's text (the workload's, or hex) is
    /// shown.
    fn describe_operation(&self, config: &Config, payload: &[u8]) -> Option<String> {
        described_payload(self.describers.operation?, config, payload)
    }
}

/// What `describe` writes for `payload` (a reply or a client operation),
/// `None` when it writes nothing.
fn described_payload(
    describe: DescribePayloadFn,
    config: &Config,
    payload: &[u8],
) -> Option<String> {
    let text = describe_text(|buf, cap| {
        // SAFETY: the payload's bytes are valid for its length; the buffer
        // holds cap + 1 bytes.
        unsafe { describe(config, payload.as_ptr(), payload.len() as u32, buf, cap) }
    });
    (!text.is_empty()).then_some(text)
}

/// The text a describe function writes into a buffer of `cap` + 1 bytes.
fn describe_text(write: impl FnOnce(*mut c_char, usize)) -> String {
    recorded(
        Call::Describe,
        || String::from("a heap-state adapter's description"),
        || {
            let mut buf = [0u8; 512];
            write(buf.as_mut_ptr().cast(), buf.len() - 1);
            let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len() - 1);
            String::from_utf8_lossy(&buf[..end]).into_owned()
        },
    )
}
