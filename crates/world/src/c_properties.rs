//! Properties written in C (`CMC_PROPERTIES` in `include/cmc.h`): the table a
//! core library exports, the read-only view of the World its predicates
//! read, and their conversion into [`Property`]s of the [`World`].
//!
//! The view is built from a state through the explicit inspection path
//! ([`World::inspect`]); the environment never reaches this module, so a C
//! property never decides what is enabled. Each call is recorded like a step
//! ([`crate::recorder::Call::Property`]): a property that crashes, hangs or
//! exits is a core fault "while checking property NAME". The view is compared
//! after the call with what it was before: a property that wrote to it is a
//! memory fault, never a verdict.

use std::ffi::{c_char, c_int, CStr};
use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::Property;

use crate::abi::{ABI_VERSION, PAYLOAD_MAX};
use crate::fault::{Fault, FaultKind};
use crate::loader::LoadError;
use crate::recorder::{recorded, Call};
use crate::state::{GhostKind, WorldState};
use crate::World;

/// The symbol of the optional property table (`CMC_PROPERTIES_SYMBOL`).
pub const PROPERTIES_SYMBOL: &str = "cmc_properties_entry";
/// Most properties one table may declare.
pub const PROPERTIES_MAX: u32 = 1024;

/// `cmc_node_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct NodeView {
    durable: *const u8,
    volatile_part: *const u8,
    durable_size: u32,
    volatile_size: u32,
    crashed: u32,
    clock: u32,
    timers: u32,
    wakes: u32,
    unflushed: u32,
    reserved: u32,
}

/// `cmc_packet_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct PacketView {
    src: u32,
    dst: u32,
    len: u32,
    count: u32,
    surplus: u32,
    reserved: u32,
    payload: [u8; PAYLOAD_MAX],
}

/// `cmc_ghost_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct GhostView {
    kind: u32,
    request: u32,
    node: u32,
    len: u32,
    payload: [u8; PAYLOAD_MAX],
}

/// `cmc_world_view`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct WorldView {
    nodes: u32,
    packets: u32,
    ghost_len: u32,
    issued: u32,
    links_down: u64,
    node: *const NodeView,
    net: *const PacketView,
    ghost: *const GhostView,
    cut: *const u8,
}

type StateFn = unsafe extern "C" fn(*const WorldView) -> c_int;
type StepFn = unsafe extern "C" fn(*const WorldView, *const WorldView) -> c_int;

/// `cmc_property`.
#[repr(C)]
struct PropertyRecord {
    kind: u32,
    reserved: u32,
    name: *const c_char,
    state: Option<StateFn>,
    step: Option<StepFn>,
}

/// `cmc_property_table`.
#[repr(C)]
pub struct PropertyTable {
    abi_version: u32,
    count: u32,
    items: *const PropertyRecord,
}

/// The type of the exported `cmc_properties_entry`.
pub type PropertiesEntryFn = unsafe extern "C" fn() -> *const PropertyTable;

/// What a C property states (`enum cmc_property_kind`).
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
enum Predicate {
    State(StateFn),
    Step(StepFn),
}

/// One property a C library declares; it keeps the library loaded.
#[derive(Clone)]
pub struct CProperty {
    kind: CPropertyKind,
    name: String,
    predicate: Predicate,
    _library: Option<Arc<libloading::Library>>,
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

/// Validates the table `table` points to (from `origin`, for messages).
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
    if table.is_null() {
        return Err(bad("is a null pointer".into()));
    }
    // SAFETY: non-null and, by contract, a static `cmc_property_table`.
    let table = unsafe { table.read_unaligned() };
    if table.abi_version != ABI_VERSION {
        return Err(bad(format!(
            "was built for ABI version {}, but this cmc speaks version {ABI_VERSION}: \
             rebuild it against this cmc's include/cmc.h",
            table.abi_version
        )));
    }
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
        let kind = CPropertyKind::from_raw(record.kind).ok_or_else(|| {
            bad(format!(
                "entry `{name}` has an unknown kind {}",
                record.kind
            ))
        })?;
        let predicate = match (kind, record.state, record.step) {
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
            name,
            predicate,
            _library: library.clone(),
        });
    }
    Ok(properties)
}

/// A World state laid out as a `cmc_world_view`, owning its memory.
struct OwnedView {
    bytes: Vec<u8>,
    nodes: Vec<NodeView>,
    net: Vec<PacketView>,
    ghost: Vec<GhostView>,
    cut: Vec<u8>,
    header: Box<WorldView>,
}

impl OwnedView {
    /// The view of `state`, read through [`World::inspect`].
    fn new(world: &World, state: &WorldState) -> OwnedView {
        let inspect = world.inspect(state);
        let mut bytes = Vec::new();
        let mut spans = Vec::new();
        for node in 0..inspect.nodes() {
            let view = inspect.node(node);
            spans.push((bytes.len(), view.durable.len(), view.volatile.len()));
            bytes.extend_from_slice(view.durable);
            bytes.extend_from_slice(view.volatile);
        }
        let base = bytes.as_ptr();
        let nodes = spans
            .iter()
            .enumerate()
            .map(|(node, &(at, durable, volatile))| {
                let env = inspect.node(node).env;
                NodeView {
                    // SAFETY: `at + durable + volatile <= bytes.len()`.
                    durable: unsafe { base.add(at) },
                    // SAFETY: as above.
                    volatile_part: unsafe { base.add(at + durable) },
                    durable_size: durable as u32,
                    volatile_size: volatile as u32,
                    crashed: env.crashed as u32,
                    clock: env.clock,
                    timers: env.timers,
                    wakes: env.wakes,
                    unflushed: env.persists.len() as u32,
                    reserved: 0,
                }
            })
            .collect::<Vec<_>>();
        let net = state
            .net
            .iter()
            .map(|packet| PacketView {
                src: packet.src as u32,
                dst: packet.dst as u32,
                len: packet.msg.as_bytes().len() as u32,
                count: packet.count as u32,
                surplus: packet.surplus as u32,
                reserved: 0,
                payload: padded(packet.msg.as_bytes()),
            })
            .collect::<Vec<_>>();
        let ghost = inspect
            .ghost()
            .iter()
            .map(|entry| GhostView {
                kind: match entry.kind {
                    GhostKind::Invoke => 1,
                    GhostKind::Reply => 2,
                    GhostKind::LocalFail => 3,
                    GhostKind::Retry => 4,
                },
                request: entry.request,
                node: entry.node as u32,
                len: entry.payload.as_bytes().len() as u32,
                payload: padded(entry.payload.as_bytes()),
            })
            .collect::<Vec<_>>();
        let count = nodes.len();
        let mut cut = vec![0u8; count * count];
        let mut links_down = 0u64;
        for &(src, dst) in &state.cut_links {
            cut[src as usize * count + dst as usize] = 1;
            let (low, high) = (src.min(dst) as u32, src.max(dst) as u32);
            if high < 8 {
                links_down |= 1 << (low * 8 + high);
            }
        }
        let header = Box::new(WorldView {
            nodes: count as u32,
            packets: net.len() as u32,
            ghost_len: ghost.len() as u32,
            issued: state.issued as u32,
            links_down,
            node: nodes.as_ptr(),
            net: net.as_ptr(),
            ghost: ghost.as_ptr(),
            cut: cut.as_ptr(),
        });
        OwnedView {
            bytes,
            nodes,
            net,
            ghost,
            cut,
            header,
        }
    }

    /// Every byte the view exposes, pointers included: equal before and
    /// after a call unless the property wrote to its view.
    fn snapshot(&self) -> Vec<u8> {
        let mut out = self.bytes.clone();
        for node in &self.nodes {
            // SAFETY: NodeView is repr(C) plain data with no padding (two
            // pointers, then eight u32), readable as bytes.
            out.extend_from_slice(unsafe {
                std::slice::from_raw_parts(
                    (node as *const NodeView).cast::<u8>(),
                    std::mem::size_of::<NodeView>(),
                )
            });
        }
        out.extend_from_slice(bytemuck::cast_slice(&self.net));
        out.extend_from_slice(bytemuck::cast_slice(&self.ghost));
        out.extend_from_slice(&self.cut);
        let header: &WorldView = &self.header;
        // SAFETY: WorldView is repr(C) with no padding (four u32, a u64, four pointers).
        out.extend_from_slice(unsafe {
            std::slice::from_raw_parts(
                (header as *const WorldView).cast::<u8>(),
                std::mem::size_of::<WorldView>(),
            )
        });
        out
    }

    fn as_ptr(&self) -> *const WorldView {
        &*self.header
    }
}

fn padded(bytes: &[u8]) -> [u8; PAYLOAD_MAX] {
    let mut out = [0; PAYLOAD_MAX];
    out[..bytes.len()].copy_from_slice(bytes);
    out
}

impl CProperty {
    /// Calls the predicate on `pre` (and `post` for an action property)
    /// under the recorder; a write to the views is reported as a fault of
    /// `world` (and the answer is then "holds": the verdict is void anyway).
    fn call(&self, world: &World, pre: &WorldState, post: Option<&WorldState>) -> bool {
        let first = OwnedView::new(world, pre);
        let second = post.map(|post| OwnedView::new(world, post));
        let before = (first.snapshot(), second.as_ref().map(OwnedView::snapshot));
        let what = || format!("property {}", self.name);
        let answer = recorded(Call::Property, what, || match (self.predicate, &second) {
            // SAFETY: the views point to live, initialised memory laid out
            // as cmc.h's `cmc_world_view`; the predicate's signature is cmc.h's.
            (Predicate::State(f), _) => unsafe { f(first.as_ptr()) },
            // SAFETY: as above.
            (Predicate::Step(f), Some(post)) => unsafe { f(first.as_ptr(), post.as_ptr()) },
            (Predicate::Step(_), None) => unreachable!("a step predicate gets two states"),
        });
        let after = (first.snapshot(), second.as_ref().map(OwnedView::snapshot));
        if before != after {
            world.report_outside_step(Fault::outside_step(
                FaultKind::Memory("the property wrote to its read-only view of the World".into()),
                format!("while checking property {}", self.name),
            ));
            return true;
        }
        answer != 0
    }

    /// Whether the state predicate holds (or is reached) in `state`.
    pub fn holds(&self, world: &World, state: &WorldState) -> bool {
        self.call(world, state, None)
    }

    /// This property as a [`Property`] of the World; `None` for the
    /// quiescence goal (see [`attach`]).
    fn to_property(&self) -> Option<Property<World>> {
        let this = self.clone();
        Some(match self.kind {
            CPropertyKind::Invariant => Property::always(self.name.clone(), move |world, state| {
                this.holds(world, state)
            }),
            CPropertyKind::Witness => {
                Property::sometimes(self.name.clone(), move |world, state| {
                    this.holds(world, state)
                })
            }
            CPropertyKind::Action => {
                Property::step(self.name.clone(), move |world, pre, _, post| {
                    this.call(world, pre, Some(post))
                })
            }
            CPropertyKind::QuiescenceGoal => return None,
        })
    }
}

/// `world` with the C properties `properties`: invariants, action properties
/// and witnesses become World properties; a quiescence goal replaces the
/// default goal when the World checks quiescence (`quiescence=STEPS`).
/// A C property named like one the World already has (`AtMostOneReply`,
/// `Quiescence`, `deadlock`, ...) is refused: reports name properties.
pub fn attach(world: World, properties: &[CProperty]) -> Result<World, String> {
    use cmc_model::Model;
    let taken: Vec<String> = world.properties().into_iter().map(|p| p.name).collect();
    let reserved = [crate::quiescence::QUIESCENCE, "deadlock"];
    if let Some(clash) = properties.iter().find(|p| {
        p.kind != CPropertyKind::QuiescenceGoal
            && (taken.contains(&p.name) || reserved.contains(&p.name.as_str()))
    }) {
        return Err(format!(
            "the core library declares a property named `{}`, which cmc already checks: \
             rename it",
            clash.name
        ));
    }
    // C properties read the ghost history in order: it stays in the identity.
    let world = if properties.is_empty() {
        world
    } else {
        world.with_full_history()
    };
    let mut world = properties
        .iter()
        .filter_map(CProperty::to_property)
        .fold(world, World::with_property);
    if let Some(goal) = properties
        .iter()
        .find(|p| p.kind == CPropertyKind::QuiescenceGoal)
    {
        let this = goal.clone();
        world.set_quiescence_goal(goal.name(), move |world, state| this.holds(world, state));
    }
    Ok(world)
}

/// What `cmc describe` prints about the core library at `path`: its name,
/// ABI version, state sizes and the properties it declares, by kind. Loading
/// the library runs its entry points in this process (as `cmc replay` does).
pub fn describe_library(path: &std::path::Path) -> Result<String, String> {
    crate::open::check_regular_file(path, "core library")?;
    let core = crate::loader::CCore::load(path).map_err(|e| e.to_string())?;
    let mut text = format!(
        "core {}\n  library: {}\n  ABI version: {ABI_VERSION}\n  durable part: {} bytes\n  \
         volatile part: {} bytes\n",
        crate::Core::name(&core),
        core.origin(),
        crate::Core::durable_size(&core),
        crate::Core::volatile_size(&core),
    );
    if core.properties().is_empty() {
        text.push_str("  properties: none declared (see CMC_PROPERTIES in include/cmc.h)\n");
        return Ok(text);
    }
    text.push_str("  properties:\n");
    for kind in [
        CPropertyKind::Invariant,
        CPropertyKind::Action,
        CPropertyKind::Witness,
        CPropertyKind::QuiescenceGoal,
    ] {
        for property in core.properties().iter().filter(|p| p.kind == kind) {
            text.push_str(&format!("    {:<16} {}\n", kind.name(), property.name));
        }
    }
    Ok(text)
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
        assert_eq!(std::mem::size_of::<WorldView>(), 56);
        assert_eq!(std::mem::size_of::<PropertyRecord>(), 32);
        assert_eq!(std::mem::size_of::<PropertyTable>(), 16);
    }
}
