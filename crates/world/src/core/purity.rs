//! The purity gate: a C core's object file may reference only allowlisted
//! symbols and may not define writable globals.
//!
//! Read from the file's symbol table with the `object` crate (what `nm -u`
//! shows), so it works on the `.o` or `.so` that the product links.
//!
//! # Example
//!
//! A program that prints, reads files and starts threads is no core: this
//! doctest's own executable fails the gate.
//!
//! ```
//! use cmc_world::core::purity::{self, Offence};
//!
//! let exe = std::env::current_exe()?;
//! let report = purity::check(&exe)?;
//! assert!(!report.is_pure());
//! assert!(report.offences.contains(&Offence::Undefined("write".into())), "{report}");
//! assert!(report.to_string().starts_with("IMPURE: "), "{report}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

/// Symbols a core may reference: memory and string helpers, `snprintf` for
/// `describe`, and compiler/linker support symbols.
pub const ALLOWLIST: &[&str] = &[
    "memcpy",
    "memmove",
    "memset",
    "memcmp",
    "strlen",
    "snprintf",
    "__memcpy_chk",
    "__memmove_chk",
    "__memset_chk",
    "__snprintf_chk",
    "__stack_chk_fail",
    "__stack_chk_guard",
    "_GLOBAL_OFFSET_TABLE_",
    "__cxa_finalize",
    "_ITM_deregisterTMCloneTable",
    "_ITM_registerTMCloneTable",
    "__gmon_start__",
];

/// Why a symbol breaks purity (see also the module's example).
///
/// ```
/// use cmc_world::core::purity::{Offence, PurityReport};
///
/// let offences = vec![Offence::Undefined("time".into()), Offence::WritableGlobal("count".into())];
/// let report = PurityReport { path: "core.o".into(), offences };
/// let text = report.to_string();
/// assert!(text.contains("time: undefined symbol outside the allowlist"), "{text}");
/// assert!(text.contains("count: writable global or static"), "{text}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offence {
    /// The object calls or reads a symbol outside [`ALLOWLIST`].
    Undefined(String),
    /// The object defines a writable global or static (state outside the core state).
    WritableGlobal(String),
}

/// The result of checking one file; its `Display` is what `cmc purity`
/// prints: `PURE: ...`, or `IMPURE: ...` with one line per offence and what
/// to do about it (see also the module's example).
///
/// ```
/// use cmc_world::core::purity::{Offence, PurityReport};
///
/// let pure = PurityReport { path: "core.o".into(), offences: Vec::new() };
/// assert!(pure.is_pure());
/// assert_eq!(pure.to_string(), "PURE: core.o references only allowlisted symbols\n");
/// let impure = PurityReport { offences: vec![Offence::Undefined("rand".into())], ..pure };
/// assert!(!impure.is_pure());
/// assert!(impure.to_string().starts_with("IMPURE: core.o"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurityReport {
    /// The file checked.
    pub path: String,
    /// Offending symbols, sorted; empty when the file is pure.
    pub offences: Vec<Offence>,
}

impl PurityReport {
    /// Whether the file passed.
    pub fn is_pure(&self) -> bool {
        self.offences.is_empty()
    }
}

impl std::fmt::Display for PurityReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_pure() {
            return writeln!(f, "PURE: {} references only allowlisted symbols", self.path);
        }
        writeln!(f, "IMPURE: {} breaks the core purity rules:", self.path)?;
        for offence in &self.offences {
            match offence {
                Offence::Undefined(name) => writeln!(
                    f,
                    "  {name}: undefined symbol outside the allowlist (a core reads no clock, \
                     randomness or I/O; pass them in as events)"
                )?,
                Offence::WritableGlobal(name) => writeln!(
                    f,
                    "  {name}: writable global or static (keep all state in the core state)"
                )?,
            }
        }
        writeln!(f, "  allowed: {}", ALLOWLIST.join(", "))
    }
}

/// Largest object file read.
const OBJECT_MAX_BYTES: u64 = 1 << 30;

/// Checks the object file or shared library at `path` (a regular file: a
/// FIFO, device or directory is refused without being opened). `Err` when
/// the file cannot be read or is no object file; otherwise the report,
/// whose offences are sorted and without repeats.
///
/// ```
/// use std::path::Path;
/// use cmc_world::core::purity;
///
/// let refused = purity::check(Path::new("/dev/zero")).unwrap_err();
/// assert!(refused.contains("a device"), "{refused}");
/// ```
pub fn check(path: &Path) -> Result<PurityReport, String> {
    let bytes = crate::core::input_file::read_regular_file(path, "object file", OBJECT_MAX_BYTES)?;
    let file = object::File::parse(&*bytes)
        .map_err(|e| format!("{} is not an object file cmc can read: {e}", path.display()))?;
    let mut offences = Vec::new();
    let symbols = file.symbols().chain(file.dynamic_symbols());
    for symbol in symbols {
        let Ok(name) = symbol.name() else { continue };
        if name.is_empty()
            || symbol.kind() == SymbolKind::File
            || symbol.kind() == SymbolKind::Section
        {
            continue;
        }
        // Versioned dynamic names look like `memcpy@GLIBC_2.14`.
        let base = name.split('@').next().unwrap_or(name);
        if symbol.is_undefined() {
            if !ALLOWLIST.contains(&base) {
                offences.push(Offence::Undefined(base.to_string()));
            }
            continue;
        }
        let writable = symbol
            .section_index()
            .and_then(|index| file.section_by_index(index).ok())
            .is_some_and(|section| {
                matches!(
                    section.kind(),
                    SectionKind::Data | SectionKind::UninitializedData
                ) && !section.name().is_ok_and(|n| n.starts_with(".data.rel.ro"))
            });
        // Allowlisted names include linker-made tables such as the GOT, which
        // a shared library defines in a writable section.
        let compiler_owned = ALLOWLIST.contains(&base)
            || base.starts_with("__")
            || base.starts_with("_ITM")
            || base == "completed.0";
        if writable && symbol.kind() == SymbolKind::Data && !compiler_owned {
            offences.push(Offence::WritableGlobal(base.to_string()));
        }
    }
    offences.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    offences.dedup();
    Ok(PurityReport {
        path: path.display().to_string(),
        offences,
    })
}
