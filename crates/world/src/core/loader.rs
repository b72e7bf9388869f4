//! C cores: validating a descriptor and loading a shared library.
//!
//! Every way a library can be wrong (not loadable, no entry point, another ABI
//! version, no step function, an absurd state size) is a [`LoadError`] whose
//! text says what happened, where, and what to do.

use std::ffi::{c_char, c_void, CStr};
use std::path::Path;
use std::sync::Arc;

use crate::core::abi::{
    Config, CoreDescriptor, CoreError, EntryFn, Event, Outputs, ABI_VERSION, ENTRY_SYMBOL,
    STATE_MAX,
};
use crate::core::describe_table::{
    read_table as read_describe_table, DescribeEntryFn, DescribePayloadFn, Describers,
    DESCRIBE_SYMBOL,
};
use crate::core::ghost_table::{self, CGhost, GhostsEntryFn, GHOSTS_SYMBOL};
use crate::core::id_fields::{
    read_table as read_id_fields, IdFields, IdFieldsEntryFn, PermuteMessageFn, ID_FIELDS_SYMBOL,
};
use crate::core::property_table::{read_table, CProperty, PropertiesEntryFn, PROPERTIES_SYMBOL};
use crate::core::Core;
use crate::run::recorder::{recorded, Call};

/// Why a core could not be loaded; the text is the message for the user.
///
/// ```
/// use std::path::Path;
/// use cmc_world::CCore;
///
/// let missing = CCore::load(Path::new("./no-such-core.so")).err().expect("no such file");
/// assert!(missing.to_string().contains("no-such-core.so"), "{missing}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LoadError {}

/// Reads a table a library's entry point returned (its `what`: "property
/// table", "describe table"): not null, and built for this cmc's ABI
/// version, which `version` reads from it. Errors name `origin`.
///
/// # Safety
/// `table` is null or points to a `T` that stays valid while the library
/// is loaded.
pub(crate) unsafe fn read_versioned_table<T>(
    table: *const T,
    version: impl Fn(&T) -> u32,
    origin: &str,
    what: &str,
) -> Result<T, LoadError> {
    let bad = |why: String| LoadError(format!("{origin}: its {what} {why}"));
    if table.is_null() {
        return Err(bad("is a null pointer".into()));
    }
    // SAFETY: non-null and, by the caller's contract, a valid `T`.
    let table = unsafe { table.read_unaligned() };
    if version(&table) != crate::core::abi::ABI_VERSION {
        return Err(bad(format!(
            "was built for ABI version {}, but this cmc speaks version {}: \
             rebuild it against this cmc's include/cmc.h",
            version(&table),
            crate::core::abi::ABI_VERSION
        )));
    }
    Ok(table)
}

/// A C core: a validated descriptor, and the library that holds it (if loaded
/// at run time; kept open as long as the core lives).
///
/// # Example
///
/// A C core is checked as a Rust one is (`cores/reqack/reqack.c` with its
/// bug 1 compiled in, `cc -shared -DCMC_BUG=1`):
///
/// ```no_run
/// use std::path::Path;
/// use std::sync::Arc;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::{CCore, World, WorldSpec};
///
/// let core = CCore::load(Path::new("./libreqack_bug1.so"))?;
/// assert_eq!(core.origin(), "./libreqack_bug1.so");
/// let mut spec = WorldSpec::new(Arc::new(core), 2)?;
/// spec.set_all(&["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"])?;
/// let outcome = Checker::new(World::new(spec)).run();
/// assert!(matches!(outcome.verdict, Verdict::Violated { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct CCore {
    descriptor: CoreDescriptor,
    name: String,
    origin: String,
    properties: Vec<CProperty>,
    /// The ghost variables its library declares (`CMC_GHOSTS`).
    ghosts: Vec<CGhost>,
    /// Where its state and messages hold node ids (`CMC_ID_FIELDS`), and
    /// its hook for messages, if it declares them.
    id_fields: Option<(IdFields, Option<PermuteMessageFn>)>,
    /// Its describe functions for replies and operations (`CMC_DESCRIBE`).
    describers: Describers,
    _library: Option<Arc<libloading::Library>>,
}

// SAFETY: the descriptor holds a name pointer and function pointers into a
// library that stays loaded while the CCore lives; cores are pure functions of
// their arguments (the contract), so calling them from several threads is sound.
unsafe impl Send for CCore {}
// SAFETY: as for Send; nothing in a CCore is mutated after construction.
unsafe impl Sync for CCore {}

impl CCore {
    /// Loads the core in the shared library at `path`.
    pub fn load(path: &Path) -> Result<CCore, LoadError> {
        let shown = path.display();
        if !path.exists() {
            return Err(LoadError(format!("core library {shown} does not exist")));
        }
        // A bare file name would make dlopen search the system paths.
        let path = if path.is_relative() && path.parent() == Some(Path::new("")) {
            Path::new(".").join(path)
        } else {
            path.to_path_buf()
        };
        // SAFETY: loading a library runs its initialisers; a core has none that
        // matter (purity gate), and this is the documented way to load a core.
        let library = unsafe { libloading::Library::new(&path) }.map_err(|error| {
            LoadError(format!(
                "cannot load core library {shown}: {error}; build it with \
                 `cc -shared -fPIC -I include core.c -o libcore.so`"
            ))
        })?;
        // SAFETY: the symbol's type is fixed by include/cmc.h.
        let entry: EntryFn = unsafe {
            *library
                .get::<EntryFn>(ENTRY_SYMBOL.as_bytes())
                .map_err(|_| {
                    LoadError(format!(
                        "{shown} is not a cmc core: it does not export `{ENTRY_SYMBOL}` \
                         (define it as include/cmc.h describes)"
                    ))
                })?
        };
        // SAFETY: as above; the descriptor comes from the entry point and
        // the library is kept loaded by the CCore.
        // The entry point is core code: under a supervisor it is recorded
        // (and timed) like a step.
        let descriptor = recorded(
            Call::Load,
            || format!("the core {shown} (its `{ENTRY_SYMBOL}`)"),
            || unsafe { entry() },
        );
        let library = Arc::new(library);
        // SAFETY: as above.
        let mut core = unsafe {
            CCore::from_descriptor(descriptor, &shown.to_string(), Some(library.clone()))
        }?;
        core.properties = CCore::load_properties(&library, &shown.to_string())?;
        core.ghosts = CCore::load_ghosts(&library, &shown.to_string())?;
        core.id_fields = core.load_id_fields(&library, &shown.to_string())?;
        core.describers = CCore::load_describers(&library, &shown.to_string())?;
        Ok(core)
    }

    /// The describe functions `library` declares with `CMC_DESCRIBE`, if it
    /// exports [`DESCRIBE_SYMBOL`] (none otherwise).
    pub(crate) fn load_describers(
        library: &libloading::Library,
        shown: &str,
    ) -> Result<Describers, LoadError> {
        // SAFETY: the symbol's type is fixed by include/cmc.h.
        let Ok(entry) = (unsafe { library.get::<DescribeEntryFn>(DESCRIBE_SYMBOL.as_bytes()) })
        else {
            return Ok(Describers::default());
        };
        let entry: DescribeEntryFn = *entry;
        let table = recorded(
            Call::Load,
            || format!("the describe table of {shown} (its `{DESCRIBE_SYMBOL}`)"),
            // SAFETY: as for the core's entry point.
            || unsafe { entry() },
        );
        // SAFETY: the table comes from the entry point; the library stays loaded.
        unsafe { read_describe_table(table, shown) }
    }

    /// The core with the describe functions of `table` (as a library's
    /// `cmc_describe_entry` returns it), for tests of a core exported in
    /// this process.
    ///
    /// # Safety
    /// As [`read_describe_table`]'s: null or a static table.
    #[cfg(test)]
    pub(crate) unsafe fn with_describe_table(
        mut self,
        table: *const crate::core::describe_table::DescribeTable,
    ) -> Result<CCore, LoadError> {
        // SAFETY: the caller's contract.
        self.describers = unsafe { read_describe_table(table, "this process") }?;
        Ok(self)
    }

    /// `describe`'s text for `payload`, a reply or an operation (`what`).
    fn described_payload(
        &self,
        describe: DescribePayloadFn,
        config: &Config,
        payload: &[u8],
        what: &str,
    ) -> String {
        let what = || format!("{what} of node n{} (core `{}`)", config.node, self.name);
        // SAFETY: as in describe_message.
        CCore::described(what, |buf, cap| unsafe {
            describe(config, payload.as_ptr(), payload.len() as u32, buf, cap)
        })
    }

    /// The id fields `library` declares with `CMC_ID_FIELDS`, if it exports
    /// [`ID_FIELDS_SYMBOL`] (none otherwise), checked against the core's
    /// sizes.
    #[allow(clippy::type_complexity)]
    fn load_id_fields(
        &self,
        library: &libloading::Library,
        shown: &str,
    ) -> Result<Option<(IdFields, Option<PermuteMessageFn>)>, LoadError> {
        // SAFETY: the symbol's type is fixed by include/cmc.h.
        let Ok(entry) = (unsafe { library.get::<IdFieldsEntryFn>(ID_FIELDS_SYMBOL.as_bytes()) })
        else {
            return Ok(None);
        };
        let entry: IdFieldsEntryFn = *entry;
        let table = recorded(
            Call::Load,
            || format!("the id fields of {shown} (its `{ID_FIELDS_SYMBOL}`)"),
            // SAFETY: as for the core's entry point.
            || unsafe { entry() },
        );
        let sizes = (self.durable_size(), self.volatile_size());
        // SAFETY: the table comes from the entry point; the library stays loaded.
        unsafe { read_id_fields(table, shown, sizes) }.map(Some)
    }

    /// The id fields the core's library declares (`CMC_ID_FIELDS`), if any.
    pub fn id_fields(&self) -> Option<&IdFields> {
        self.id_fields.as_ref().map(|(fields, _)| fields)
    }

    /// The properties `library` declares with `CMC_PROPERTIES`, if it exports
    /// [`PROPERTIES_SYMBOL`] (none otherwise).
    pub(crate) fn load_properties(
        library: &Arc<libloading::Library>,
        shown: &str,
    ) -> Result<Vec<CProperty>, LoadError> {
        // SAFETY: the symbol's type is fixed by include/cmc.h.
        let Ok(entry) = (unsafe { library.get::<PropertiesEntryFn>(PROPERTIES_SYMBOL.as_bytes()) })
        else {
            return Ok(Vec::new());
        };
        let entry: PropertiesEntryFn = *entry;
        // The table's entry point is core code: recorded like the core's.
        let table = recorded(
            Call::Load,
            || format!("the properties of {shown} (its `{PROPERTIES_SYMBOL}`)"),
            // SAFETY: as for the core's entry point.
            || unsafe { entry() },
        );
        // SAFETY: the table comes from the entry point; the library stays loaded.
        unsafe { read_table(table, shown, Some(library.clone())) }
    }

    /// The properties the core's library declares (`CMC_PROPERTIES`).
    pub fn properties(&self) -> &[CProperty] {
        &self.properties
    }

    /// The ghost variables `library` declares with `CMC_GHOSTS`, if it
    /// exports [`GHOSTS_SYMBOL`] (none otherwise).
    pub(crate) fn load_ghosts(
        library: &Arc<libloading::Library>,
        shown: &str,
    ) -> Result<Vec<CGhost>, LoadError> {
        // SAFETY: the symbol's type is fixed by include/cmc.h.
        let Ok(entry) = (unsafe { library.get::<GhostsEntryFn>(GHOSTS_SYMBOL.as_bytes()) }) else {
            return Ok(Vec::new());
        };
        let entry: GhostsEntryFn = *entry;
        let table = recorded(
            Call::Load,
            || format!("the ghost variables of {shown} (its `{GHOSTS_SYMBOL}`)"),
            // SAFETY: as for the core's entry point.
            || unsafe { entry() },
        );
        // SAFETY: the table comes from the entry point; the library stays loaded.
        unsafe { ghost_table::read_table(table, shown, Some(library.clone())) }
    }

    /// The ghost variables the core's library declares (`CMC_GHOSTS`).
    pub fn ghosts(&self) -> &[CGhost] {
        &self.ghosts
    }

    /// Wraps the descriptor `descriptor` points to, after checking it; `origin`
    /// names where it came from in messages, `library` keeps it loaded.
    ///
    /// # Safety
    /// `descriptor` is null or what a core's `cmc_core_entry` returned: a
    /// pointer to a `cmc_core` whose pointers stay valid while `library` (or,
    /// for a linked core, the program) is loaded.
    pub unsafe fn from_descriptor(
        descriptor: *const CoreDescriptor,
        origin: &str,
        library: Option<Arc<libloading::Library>>,
    ) -> Result<CCore, LoadError> {
        if descriptor.is_null() {
            return Err(LoadError(format!(
                "{origin}: `{ENTRY_SYMBOL}` returned a null descriptor"
            )));
        }
        // SAFETY: non-null, and the entry point's contract is to return a
        // pointer to a static `cmc_core`; its version is checked before the rest.
        let version = unsafe { std::ptr::addr_of!((*descriptor).abi_version).read_unaligned() };
        if version != ABI_VERSION {
            return Err(LoadError(format!(
                "{origin} was built for cmc core ABI version {version}, but this cmc speaks \
                 version {ABI_VERSION}: rebuild the core against this cmc's include/cmc.h"
            )));
        }
        // SAFETY: as above; the version matches, so the layout is ours.
        let descriptor = unsafe { descriptor.read_unaligned() };
        if descriptor.step.is_none() {
            return Err(LoadError(format!(
                "{origin}: the core descriptor has no step function"
            )));
        }
        let (durable, volatile) = (
            descriptor.durable_size as usize,
            descriptor.volatile_size as usize,
        );
        if durable + volatile > STATE_MAX {
            return Err(LoadError(format!(
                "{origin} declares a state of {} bytes (durable {durable} + volatile {volatile}); \
                 the limit is {STATE_MAX}: keep core state small and fixed-size",
                durable + volatile
            )));
        }
        let name = if descriptor.name.is_null() {
            Path::new(origin)
                .file_stem()
                .map(|stem| stem.to_string_lossy().into_owned())
                .unwrap_or_else(|| origin.to_string())
        } else {
            // SAFETY: a non-null name is a NUL-terminated static string (cmc.h).
            unsafe { CStr::from_ptr(descriptor.name) }
                .to_string_lossy()
                .into_owned()
        };
        Ok(CCore {
            descriptor,
            name,
            origin: origin.to_string(),
            properties: Vec::new(),
            ghosts: Vec::new(),
            id_fields: None,
            describers: Describers::default(),
            _library: library,
        })
    }

    /// Where the core came from (library path or `(linked)`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The text one of the core's describe functions writes (`write` gets a
    /// buffer writable for `cap` + 1 bytes and `cap`); the call is core code,
    /// recorded as describing `what`.
    fn described(what: impl FnOnce() -> String, write: impl FnOnce(*mut c_char, usize)) -> String {
        recorded(Call::Describe, what, || {
            let mut buf = [0u8; 512];
            write(buf.as_mut_ptr().cast(), buf.len() - 1);
            let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len() - 1);
            String::from_utf8_lossy(&buf[..end]).into_owned()
        })
    }
}

impl Core for CCore {
    fn name(&self) -> &str {
        &self.name
    }

    fn durable_size(&self) -> usize {
        self.descriptor.durable_size as usize
    }

    fn volatile_size(&self) -> usize {
        self.descriptor.volatile_size as usize
    }

    fn step(
        &self,
        config: &Config,
        durable: &[u8],
        volatile: &mut [u8],
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        assert_eq!(
            durable.len(),
            self.durable_size(),
            "durable part of the wrong size"
        );
        assert_eq!(
            volatile.len(),
            self.volatile_size(),
            "volatile part of the wrong size"
        );
        let step = self.descriptor.step.expect("checked at load time");
        // SAFETY: the slices have the sizes the core declared; the other
        // pointers are to valid, initialised structs of the ABI's layout.
        let code = unsafe {
            step(
                config,
                durable.as_ptr().cast::<c_void>(),
                volatile.as_mut_ptr().cast::<c_void>(),
                event,
                out,
            )
        };
        match code {
            0 => Ok(()),
            code => Err(CoreError::Code(code)),
        }
    }

    fn describe_state(&self, config: &Config, durable: &[u8], volatile: &[u8]) -> Option<String> {
        let describe = self.descriptor.describe_state?;
        let what = || format!("the state of node n{} (core `{}`)", config.node, self.name);
        // SAFETY: as in step; the buffer is writable for `cap` + 1 bytes.
        Some(CCore::described(what, |buf, cap| unsafe {
            describe(
                config,
                durable.as_ptr().cast(),
                volatile.as_ptr().cast(),
                buf,
                cap,
            )
        }))
    }

    fn permute(
        &self,
        config: &Config,
        durable: &mut [u8],
        volatile: &mut [u8],
        perm: &[u32],
    ) -> bool {
        if self.id_fields.is_none() && self.descriptor.permute.is_none() {
            return false;
        }
        if let Some(fields) = self.id_fields() {
            fields.permute_state(durable, volatile, perm);
        }
        if let Some(permute) = self.descriptor.permute {
            // SAFETY: as in step: the parts have the sizes the core declared,
            // and `perm` has one entry per node (`config.nodes`). Called
            // within the step whose successor it renames, so under its record.
            unsafe {
                permute(
                    config,
                    durable.as_mut_ptr().cast(),
                    volatile.as_mut_ptr().cast(),
                    perm.as_ptr(),
                )
            };
        }
        true
    }

    /// The ids the id fields hold, when the core renames by its fields
    /// alone; every id when it has a `permute` hook (which may rename
    /// anything).
    fn node_ids(&self, _config: &Config, durable: &[u8], volatile: &[u8]) -> u64 {
        match (self.id_fields(), self.descriptor.permute) {
            (Some(fields), None) => fields.node_ids(durable, volatile),
            _ => u64::MAX,
        }
    }

    fn permute_message(&self, config: &Config, message: &mut [u8], perm: &[u32]) {
        let Some((fields, hook)) = &self.id_fields else {
            return;
        };
        fields.permute_message(message, perm);
        if let Some(permute) = hook {
            // SAFETY: `message` holds `len` bytes; `perm` one entry per node.
            unsafe {
                permute(
                    config,
                    message.as_mut_ptr(),
                    message.len() as u32,
                    perm.as_ptr(),
                )
            };
        }
    }

    fn describe_message(&self, config: &Config, message: &[u8]) -> Option<String> {
        let describe = self.descriptor.describe_message?;
        let what = || format!("a message of node n{} (core `{}`)", config.node, self.name);
        // SAFETY: as in describe_state.
        Some(CCore::described(what, |buf, cap| unsafe {
            describe(config, message.as_ptr(), message.len() as u32, buf, cap)
        }))
    }

    /// An empty text is none: the World's text is shown.
    fn describe_reply(&self, config: &Config, payload: &[u8]) -> Option<String> {
        let describe = self.describers.reply?;
        Some(self.described_payload(describe, config, payload, "a reply"))
            .filter(|text| !text.is_empty())
    }

    /// An empty text is none: the World's text (the workload's, or hex) is
    /// shown.
    fn describe_operation(&self, config: &Config, payload: &[u8]) -> Option<String> {
        let describe = self.describers.operation?;
        Some(self.described_payload(describe, config, payload, "a client operation"))
            .filter(|text| !text.is_empty())
    }
}
