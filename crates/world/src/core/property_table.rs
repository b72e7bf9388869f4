//! The property table a C core library may export (`CMC_PROPERTIES` in
//! `include/cmc.h`): its layout, the read-only view of the World its
//! predicates take (`cmc_world_view`), and [`read_table`], which checks it
//! and turns it into [`CProperty`] values. Evaluating them on World states is
//! [`crate::properties::c_properties`]'s job.

use std::ffi::{c_char, c_int, CStr};
use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use crate::core::abi::{PARAMS_MAX, PAYLOAD_MAX};
use crate::core::loader::{read_versioned_table, LoadError};

/// The symbol of the optional property table (`CMC_PROPERTIES_SYMBOL`).
pub const PROPERTIES_SYMBOL: &str = "cmc_properties_entry";
/// Most properties one table may declare.
pub const PROPERTIES_MAX: u32 = 1024;

/// `cmc_node_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct NodeView {
    pub(crate) durable: *const u8,
    pub(crate) volatile_part: *const u8,
    pub(crate) durable_size: u32,
    pub(crate) volatile_size: u32,
    pub(crate) crashed: u32,
    pub(crate) clock: u32,
    pub(crate) timers: u32,
    pub(crate) wakes: u32,
    pub(crate) unflushed: u32,
    pub(crate) reserved: u32,
}

/// `cmc_packet_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct PacketView {
    pub(crate) src: u32,
    pub(crate) dst: u32,
    pub(crate) len: u32,
    pub(crate) count: u32,
    pub(crate) surplus: u32,
    pub(crate) reserved: u32,
    pub(crate) payload: [u8; PAYLOAD_MAX],
}

/// `cmc_ghost_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(crate) struct GhostView {
    pub(crate) kind: u32,
    pub(crate) request: u32,
    pub(crate) node: u32,
    pub(crate) len: u32,
    pub(crate) payload: [u8; PAYLOAD_MAX],
}

/// `cmc_world_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorldView {
    pub(crate) nodes: u32,
    pub(crate) packets: u32,
    pub(crate) ghost_len: u32,
    pub(crate) issued: u32,
    pub(crate) links_down: u64,
    pub(crate) node: *const NodeView,
    pub(crate) net: *const PacketView,
    pub(crate) ghost: *const GhostView,
    pub(crate) cut: *const u8,
    pub(crate) params: [u64; PARAMS_MAX],
    pub(crate) ghost_vars: u32,
    pub(crate) reserved: u32,
    pub(crate) ghost_var: *const GhostVarView,
}

/// `cmc_ghost_var_view`: one ghost variable, by name.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct GhostVarView {
    pub(crate) name: *const c_char,
    pub(crate) bytes: *const u8,
    pub(crate) size: u32,
    pub(crate) reserved: u32,
}

pub(crate) type StateFn = unsafe extern "C" fn(*const WorldView) -> c_int;
pub(crate) type StepFn = unsafe extern "C" fn(*const WorldView, *const WorldView) -> c_int;
/// `cmc_state_why_fn`: a [`StateFn`] that also fills a `cmc_why`.
pub(crate) type StateWhyFn = unsafe extern "C" fn(*const WorldView, *mut u8) -> c_int;
/// `cmc_step_why_fn`: a [`StepFn`] that also fills a `cmc_why`.
pub(crate) type StepWhyFn =
    unsafe extern "C" fn(*const WorldView, *const WorldView, *mut u8) -> c_int;

/// `CMC_WHY_MAX`: the size of a `cmc_why` (its text, NUL included).
pub(crate) const WHY_MAX: usize = 512;

/// `CMC_PROP_WHY`: added to a property's kind, its predicate takes a
/// `cmc_why` (see [`StateWhyFn`], [`StepWhyFn`]).
const WHY_FLAG: u32 = 0x100;

/// `cmc_property`.
#[repr(C)]
pub(crate) struct PropertyRecord {
    pub(crate) kind: u32,
    pub(crate) reserved: u32,
    pub(crate) name: *const c_char,
    pub(crate) state: Option<StateFn>,
    pub(crate) step: Option<StepFn>,
}

/// `cmc_property_table`: what a library's `cmc_properties_entry` returns.
/// Opaque to Rust code: C libraries define it with `CMC_PROPERTIES` (see
/// `include/cmc.h`), and [`read_table`] checks and reads it (see
/// [`PropertiesEntryFn`]'s example).
#[repr(C)]
pub struct PropertyTable {
    pub(crate) abi_version: u32,
    pub(crate) count: u32,
    pub(crate) items: *const PropertyRecord,
}

/// The type of the exported `cmc_properties_entry` ([`PROPERTIES_SYMBOL`]),
/// which the loader looks up next to the core's entry point; a library
/// without it declares no properties.
///
/// ```
/// use cmc_world::core::property_table::{read_table, PropertiesEntryFn, PropertyTable};
///
/// extern "C" fn no_table() -> *const PropertyTable { std::ptr::null() }
/// let entry: PropertiesEntryFn = no_table;
/// // SAFETY: `entry` returns null, which `read_table` allows (and refuses).
/// let refused = unsafe { read_table(entry(), "libx.so", None) }.unwrap_err();
/// assert_eq!(refused.to_string(), "libx.so: its property table is a null pointer");
/// ```
pub type PropertiesEntryFn = unsafe extern "C" fn() -> *const PropertyTable;

/// What a C property states (`enum cmc_property_kind`): how the World
/// checks it (see [`crate::properties::c_properties::attach`]).
///
/// ```
/// use cmc_world::core::property_table::CPropertyKind;
///
/// // `cmc describe` lists a library's properties under these names.
/// assert_eq!(CPropertyKind::Invariant.name(), "invariant");
/// assert_eq!(CPropertyKind::QuiescenceGoal.name(), "quiescence goal");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CPropertyKind {
    /// `CMC_INVARIANT`: holds in every reachable state.
    Invariant,
    /// `CMC_ACTION_PROP`: holds for every step, from the pre- to the post-World.
    Action,
    /// `CMC_WITNESS`: some reachable state satisfies it.
    Witness,
    /// `CMC_QUIESCENCE_GOAL`: the goal the fair schedule must reach (`quiescence=STEPS`).
    QuiescenceGoal,
}

impl CPropertyKind {
    fn from_raw(raw: u32) -> Option<CPropertyKind> {
        Some(match raw {
            1 => CPropertyKind::Invariant,
            2 => CPropertyKind::Action,
            3 => CPropertyKind::Witness,
            4 => CPropertyKind::QuiescenceGoal,
            _ => return None,
        })
    }

    /// Lower-case name, as `cmc describe` prints it.
    pub fn name(self) -> &'static str {
        match self {
            CPropertyKind::Invariant => "invariant",
            CPropertyKind::Action => "action",
            CPropertyKind::Witness => "witness",
            CPropertyKind::QuiescenceGoal => "quiescence goal",
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Predicate {
    StateWhy(StateWhyFn),
    StepWhy(StepWhyFn),
    State(StateFn),
    Step(StepFn),
}

/// One property a C library declares, read from its table when the library
/// is loaded ([`crate::CCore::properties`]); it keeps the library loaded.
/// Its predicate is a pure function of a read-only view of the World: the
/// World evaluates it with [`CProperty::holds`], never to decide what is
/// enabled.
///
/// # Example
///
/// The properties of a library built from `cores/reqack/reqack.c` and
/// `cores/test/reqack_props.c` (a compiled C library, so not run here):
///
/// ```no_run
/// use std::path::Path;
/// use cmc_world::core::property_table::CPropertyKind;
/// use cmc_world::CCore;
///
/// let core = CCore::load(Path::new("./libreqack_props.so"))?;
/// let declared: Vec<(CPropertyKind, &str)> =
///     core.properties().iter().map(|p| (p.kind(), p.name())).collect();
/// assert_eq!(declared, [
///     (CPropertyKind::Invariant, "StoredOnlyIssued"),
///     (CPropertyKind::Action, "StoredGrows"),
///     (CPropertyKind::Witness, "StoredAndReplied"),
/// ]);
/// # Ok::<(), cmc_world::LoadError>(())
/// ```
#[derive(Clone)]
pub struct CProperty {
    pub(crate) kind: CPropertyKind,
    pub(crate) name: String,
    /// What the flight recorder says while the predicate runs: `property NAME`.
    pub(crate) call_text: String,
    pub(crate) predicate: Predicate,
    pub(crate) _library: Option<Arc<libloading::Library>>,
}

// SAFETY: the predicate is a function pointer into a library kept loaded by
// `_library` (or linked into the program); properties are pure functions of
// their (read-only) argument by contract, so any thread may call them.
unsafe impl Send for CProperty {}
// SAFETY: as for Send; nothing is mutated after construction.
unsafe impl Sync for CProperty {}

impl std::fmt::Debug for CProperty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind.name(), self.name)
    }
}

impl CProperty {
    /// What the property states.
    pub fn kind(&self) -> CPropertyKind {
        self.kind
    }

    /// Its name, as reports use it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Validates the table `table` points to (from `origin`, for messages) and
/// reads its properties, in the table's order. Refused, with a message that
/// names `origin`: a null table, another ABI version, more than
/// [`PROPERTIES_MAX`] entries, an entry without a name or predicate or of an
/// unknown kind, an empty or repeated name, more than one quiescence goal.
///
/// ```
/// use cmc_world::core::property_table::{read_table, PropertyTable};
///
/// // SAFETY: a null table is allowed (and refused).
/// let refused = unsafe { read_table(std::ptr::null::<PropertyTable>(), "libx.so", None) };
/// let error = refused.unwrap_err().to_string();
/// assert_eq!(error, "libx.so: its property table is a null pointer");
/// ```
///
/// # Safety
/// `table` is null or what a library's `cmc_properties_entry` returned, with
/// pointers that stay valid while `library` is loaded.
pub unsafe fn read_table(
    table: *const PropertyTable,
    origin: &str,
    library: Option<Arc<libloading::Library>>,
) -> Result<Vec<CProperty>, LoadError> {
    let bad = |why: String| LoadError(format!("{origin}: its property table {why}"));
    // SAFETY: by contract, null or a static `cmc_property_table`.
    let table =
        unsafe { read_versioned_table(table, |t| t.abi_version, origin, "property table") }?;
    if table.count > PROPERTIES_MAX {
        return Err(bad(format!(
            "declares {} properties; the limit is {PROPERTIES_MAX}",
            table.count
        )));
    }
    if table.count > 0 && table.items.is_null() {
        return Err(bad("has a null list of properties".into()));
    }
    let mut properties: Vec<CProperty> = Vec::new();
    for index in 0..table.count as usize {
        // SAFETY: `items` holds `count` records (the table's contract).
        let record = unsafe { table.items.add(index).read_unaligned() };
        if record.name.is_null() {
            return Err(bad(format!("entry {index} has no name")));
        }
        // SAFETY: a non-null name is a NUL-terminated static string.
        let name = unsafe { CStr::from_ptr(record.name) }
            .to_string_lossy()
            .into_owned();
        let says_why = record.kind & WHY_FLAG != 0;
        let kind = CPropertyKind::from_raw(record.kind & !WHY_FLAG).ok_or_else(|| {
            bad(format!(
                "entry `{name}` has an unknown kind {}",
                record.kind
            ))
        })?;
        let predicate = match (kind, record.state, record.step) {
            // SAFETY (both): CMC_ACTION_PROP_WHY and CMC_INVARIANT_WHY store
            // a function of the _why type, cast to the plain one; it is
            // called as what it is.
            (CPropertyKind::Action, _, Some(step)) if says_why => {
                Predicate::StepWhy(unsafe { std::mem::transmute::<StepFn, StepWhyFn>(step) })
            }
            (CPropertyKind::Invariant, Some(state), _) if says_why => {
                Predicate::StateWhy(unsafe { std::mem::transmute::<StateFn, StateWhyFn>(state) })
            }
            _ if says_why => Err(bad(format!(
                "entry `{name}` ({}) cannot say why: only invariants and action properties do",
                kind.name()
            )))?,
            (CPropertyKind::Action, _, Some(step)) => Predicate::Step(step),
            (CPropertyKind::Action, _, None) => {
                None.ok_or_else(|| bad(format!("entry `{name}` (action) has no step predicate")))?
            }
            (_, Some(state), _) => Predicate::State(state),
            (_, None, _) => Err(bad(format!(
                "entry `{name}` ({}) has no state predicate",
                kind.name()
            )))?,
        };
        if name.trim().is_empty() || properties.iter().any(|p| p.name == name) {
            return Err(bad(format!("declares an empty or repeated name `{name}`")));
        }
        let goals = properties
            .iter()
            .filter(|p| p.kind == CPropertyKind::QuiescenceGoal)
            .count();
        if kind == CPropertyKind::QuiescenceGoal && goals > 0 {
            return Err(bad("declares more than one quiescence goal".into()));
        }
        properties.push(CProperty {
            kind,
            call_text: format!("property {name}"),
            name,
            predicate,
            _library: library.clone(),
        });
    }
    Ok(properties)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_header() {
        // Sizes of cmc.h's structs on a 64-bit target.
        assert_eq!(std::mem::size_of::<NodeView>(), 48);
        assert_eq!(std::mem::size_of::<PacketView>(), 24 + PAYLOAD_MAX);
        assert_eq!(std::mem::size_of::<GhostView>(), 16 + PAYLOAD_MAX);
        assert_eq!(std::mem::size_of::<WorldView>(), 72 + 8 * PARAMS_MAX);
        assert_eq!(std::mem::size_of::<GhostVarView>(), 24);
        assert_eq!(std::mem::size_of::<PropertyRecord>(), 32);
        assert_eq!(std::mem::size_of::<PropertyTable>(), 16);
    }
}
