//! The ghost-variable table a C library may export (`CMC_GHOSTS` in
//! `include/cmc.h`): its layout and [`read_table`], which checks it and
//! turns it into [`CGhost`] values. Making them ghost variables of a World
//! is [`crate::properties::c_ghosts`]'s job.

use std::ffi::{c_char, c_int, CStr};
use std::sync::Arc;

use crate::core::loader::{read_versioned_table, LoadError};
use crate::core::property_table::WorldView;
use crate::system::ghosts::GHOST_VARS_MAX;

/// The symbol of the optional ghost-variable table (`CMC_GHOSTS_SYMBOL`).
pub const GHOSTS_SYMBOL: &str = "cmc_ghosts_entry";

/// `cmc_action_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct ActionView {
    pub(crate) kind: *const c_char,
    pub(crate) text: *const c_char,
    pub(crate) node: u32,
    pub(crate) fault: u32,
}

/// `CMC_NO_NODE`: the action changes no node's state.
pub(crate) const NO_NODE: u32 = u32::MAX;

/// `cmc_ghost_update_fn`.
pub(crate) type UpdateFn =
    unsafe extern "C" fn(*const WorldView, *const ActionView, *const WorldView, *mut u8) -> c_int;
/// `cmc_ghost_rename_fn`.
pub(crate) type RenameFn = unsafe extern "C" fn(*mut u8, u32, *const u32, u32);

/// `cmc_ghost`.
#[repr(C)]
pub(crate) struct GhostRecord {
    name: *const c_char,
    size: u32,
    reserved: u32,
    init: *const u8,
    update: Option<UpdateFn>,
    read_by: *const c_char,
    rename: Option<RenameFn>,
}

/// `cmc_ghost_table`: what a library's `cmc_ghosts_entry` returns. Opaque
/// to Rust code: C libraries define it with `CMC_GHOSTS`.
#[repr(C)]
pub struct GhostTable {
    abi_version: u32,
    count: u32,
    items: *const GhostRecord,
}

/// The type of the exported `cmc_ghosts_entry` ([`GHOSTS_SYMBOL`]).
pub type GhostsEntryFn = unsafe extern "C" fn() -> *const GhostTable;

/// One ghost variable a C library declares, read from its table when the
/// library is loaded; it keeps the library loaded.
#[derive(Clone)]
pub struct CGhost {
    pub(crate) name: String,
    pub(crate) init: Vec<u8>,
    /// The properties that read it (`None`: any may).
    pub(crate) read_by: Option<Vec<String>>,
    pub(crate) update: UpdateFn,
    pub(crate) rename: Option<RenameFn>,
    pub(crate) _library: Option<Arc<libloading::Library>>,
}

// SAFETY: the functions are pointers into a library kept loaded by
// `_library`; an update and a rename are pure functions of their arguments
// by contract, so any thread may call them.
unsafe impl Send for CGhost {}
// SAFETY: as for Send; nothing is mutated after construction.
unsafe impl Sync for CGhost {}

impl std::fmt::Debug for CGhost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ghost variable {} ({} bytes)",
            self.name,
            self.init.len()
        )
    }
}

impl CGhost {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.init.len()
    }
}

/// Validates the table `table` points to (from `origin`, for messages) and
/// reads its variables, in order. Refused, with a message that names
/// `origin`: a null table, another ABI version, an entry without a name or
/// an update, an empty or repeated name, a size of 0, more than
/// [`GHOST_VARS_MAX`] bytes in all.
///
/// ```
/// use cmc_world::core::ghost_table::{read_table, GhostTable};
///
/// // SAFETY: a null table is allowed (and refused).
/// let refused = unsafe { read_table(std::ptr::null::<GhostTable>(), "libx.so", None) };
/// let error = refused.unwrap_err().to_string();
/// assert_eq!(error, "libx.so: its ghost-variable table is a null pointer");
/// ```
///
/// # Safety
/// `table` is null or what a library's `cmc_ghosts_entry` returned, with
/// pointers that stay valid while `library` is loaded.
pub unsafe fn read_table(
    table: *const GhostTable,
    origin: &str,
    library: Option<Arc<libloading::Library>>,
) -> Result<Vec<CGhost>, LoadError> {
    let bad = |why: String| LoadError(format!("{origin}: its ghost-variable table {why}"));
    // SAFETY: by contract, null or a static `cmc_ghost_table`.
    let table =
        unsafe { read_versioned_table(table, |t| t.abi_version, origin, "ghost-variable table") }?;
    if table.count > 0 && table.items.is_null() {
        return Err(bad("has a null list of variables".into()));
    }
    let mut ghosts: Vec<CGhost> = Vec::new();
    let mut total = 0usize;
    for index in 0..table.count as usize {
        // SAFETY: `items` holds `count` records (the table's contract).
        let record = unsafe { table.items.add(index).read_unaligned() };
        // SAFETY: a non-null name is a NUL-terminated static string.
        let name = unsafe { text(record.name) }
            .ok_or_else(|| bad(format!("entry {index} has no name")))?;
        if name.trim().is_empty() || ghosts.iter().any(|g| g.name == name) {
            return Err(bad(format!("declares an empty or repeated name `{name}`")));
        }
        let size = record.size as usize;
        total += size;
        if size == 0 || total > GHOST_VARS_MAX {
            return Err(bad(format!(
                "declares `{name}` of {size} bytes: a ghost variable has 1 byte or more, and \
                 all of them together at most {GHOST_VARS_MAX} (CMC_GHOST_VARS_MAX)"
            )));
        }
        let update = record
            .update
            .ok_or_else(|| bad(format!("entry `{name}` has no update function")))?;
        let init = match record.init.is_null() {
            true => vec![0; size],
            // SAFETY: a non-null init holds `size` bytes (cmc.h's contract).
            false => unsafe { std::slice::from_raw_parts(record.init, size) }.to_vec(),
        };
        // SAFETY: as for the name.
        let read_by = unsafe { text(record.read_by) }
            .filter(|list| !list.trim().is_empty())
            .map(|list| list.split(',').map(|n| n.trim().to_string()).collect());
        ghosts.push(CGhost {
            name,
            init,
            read_by,
            update,
            rename: record.rename,
            _library: library.clone(),
        });
    }
    Ok(ghosts)
}

/// The NUL-terminated string at `pointer`, if not null.
///
/// # Safety
/// `pointer` is null or a NUL-terminated string.
unsafe fn text(pointer: *const c_char) -> Option<String> {
    // SAFETY: the caller's contract.
    (!pointer.is_null()).then(|| {
        unsafe { CStr::from_ptr(pointer) }
            .to_string_lossy()
            .into_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_header() {
        // Sizes of cmc.h's structs on a 64-bit target.
        assert_eq!(std::mem::size_of::<ActionView>(), 24);
        assert_eq!(std::mem::size_of::<GhostRecord>(), 48);
        assert_eq!(std::mem::size_of::<GhostTable>(), 16);
    }
}
