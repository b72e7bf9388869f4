//! Properties written in C (`CMC_PROPERTIES` in `include/cmc.h`, read by
//! [`crate::core::property_table`]): the read-only view of a World state
//! their predicates read, and their conversion into [`Property`]s of the
//! [`World`].
//!
//! The view is built from a state through the explicit inspection path
//! ([`World::inspect`]); the environment never reaches this module, so a C
//! property never decides what is enabled. Each call is recorded like a step
//! ([`crate::run::recorder::Call::Property`]): a property that crashes, hangs or
//! exits is a core fault "while checking property NAME". The view is compared
//! after the call with what it was before: a property that wrote to it is a
//! memory fault, never a verdict.
//!
//! # Example
//!
//! The C side, compiled into the core's library (`cores/test/reqack_props.c`
//! is a complete one):
//!
//! ```c
//! #include "cmc.h"
//! #include "reqack.h"
//!
//! /* A node stores only requests that were issued. */
//! static int stored_only_issued(const cmc_world_view *w) {
//!     for (uint32_t n = 0; n < w->nodes; n++) {
//!         const struct reqack_durable *d = cmc_view_durable(w, n);
//!         if (w->issued < 32 && (d->stored >> w->issued) != 0) return 0;
//!     }
//!     return 1;
//! }
//!
//! CMC_PROPERTIES(CMC_INVARIANT("StoredOnlyIssued", stored_only_issued))
//! ```
//!
//! The Rust side, which [`crate::build_world`] does for `--core ./lib.so`
//! (it needs the compiled library, so it is not run here):
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//! use cmc_model::Model;
//! use cmc_search::{Checker, Verdict};
//! use cmc_world::properties::c_properties::attach;
//! use cmc_world::{CCore, World, WorldSpec};
//!
//! let core = CCore::load(Path::new("./libreqack_props.so"))?;
//! let properties = core.properties().to_vec();
//! let spec = WorldSpec::builder(Arc::new(core), 2).requests(1).build()?;
//! let world = attach(World::new(spec), &properties)?;
//! assert!(world.properties().iter().any(|p| p.name == "StoredOnlyIssued"));
//! // One property, evaluated on one state...
//! let mut init = Vec::new();
//! world.init_states(&mut init);
//! assert!(properties[0].holds(&world, &init[0]));
//! // ... and all of them, on every reachable state.
//! assert_eq!(Checker::new(world).workers(1).run().verdict, Verdict::Pass);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::RefCell;

use cmc_model::Property;

use crate::core::abi::{ABI_VERSION, PAYLOAD_MAX};
use crate::core::fault::{Fault, FaultKind};
use crate::core::ghost_table::CGhost;
use crate::core::property_table::{
    CProperty, CPropertyKind, GhostVarView, GhostView, NodeView, PacketView, Predicate, WorldView,
    WHY_MAX,
};
use crate::run::guard_pages::GuardedRegion;
use crate::run::recorder::{recorded, Call};
use crate::system::state::{GhostKind, WorldState};
use crate::World;

/// A World state laid out as a `cmc_world_view`, in memory kept from call
/// to call ([`VIEWS`]): a property may be checked on every state the search
/// finds, or every step it takes.
///
/// The view is built in scratch vectors, then copied, header first, into
/// a [`GuardedRegion`]: the only memory a predicate is handed is in a
/// mapping of its own with inaccessible regions of
/// [`GUARD`](crate::run::guard_pages::GUARD) bytes on both sides, so a write
/// past any of its arrays either changes the region (compared after each
/// call) or faults, and never reaches the checker's other memory.
#[derive(Default)]
struct OwnedView {
    bytes: Vec<u8>,
    nodes: Vec<NodeView>,
    net: Vec<PacketView>,
    ghost: Vec<GhostView>,
    cut: Vec<u8>,
    /// The ghost variables: each one's name (NUL-terminated) and bytes, in
    /// `ghost_blob` at the offsets the view's pointers hold until laid out.
    ghost_vars: Vec<GhostVarView>,
    ghost_blob: Vec<u8>,
    /// Where the view is handed to the predicate: the header at its start.
    region: Option<GuardedRegion>,
}

/// Alignment of each array in the region.
const VIEW_ALIGN: usize = 16;

/// What fills a view region's bytes that no array uses.
const VIEW_FILL: u8 = 0xcb;

impl OwnedView {
    /// Makes `self` the view of `state`, read through [`World::inspect`].
    fn fill(&mut self, world: &World, state: &WorldState) {
        let inspect = world.inspect(state);
        self.bytes.clear();
        self.nodes.clear();
        for node in 0..inspect.nodes() {
            let view = inspect.node(node);
            let env = view.env;
            // The pointers are set once the region's layout is known.
            self.nodes.push(NodeView {
                durable: std::ptr::null(),
                volatile_part: std::ptr::null(),
                durable_size: view.durable.len() as u32,
                volatile_size: view.volatile.len() as u32,
                crashed: env.crashed as u32,
                clock: env.clock,
                timers: env.timers,
                wakes: env.wakes,
                unflushed: env.persists.len() as u32,
                reserved: 0,
            });
            self.bytes.extend_from_slice(view.durable);
            self.bytes.extend_from_slice(view.volatile);
        }
        self.net.clear();
        // Each view's payload written in its place (see `Network::refs`).
        for packet in state.net.refs() {
            self.net.push(PacketView {
                src: packet.src as u32,
                dst: packet.dst as u32,
                len: packet.msg.len() as u32,
                count: packet.count as u32,
                surplus: packet.surplus as u32,
                reserved: 0,
                payload: [0; PAYLOAD_MAX],
            });
            let view = self.net.last_mut().expect("a view was pushed");
            view.payload[..packet.msg.len()].copy_from_slice(packet.msg);
        }
        self.ghost.clear();
        self.ghost
            .extend(inspect.ghost().iter().map(|entry| GhostView {
                kind: match entry.kind {
                    GhostKind::Invoke => 1,
                    GhostKind::Reply => 2,
                    GhostKind::LocalFail => 3,
                    GhostKind::Retry => 4,
                },
                request: entry.request,
                node: entry.node as u32,
                len: entry.payload.as_bytes().len() as u32,
                payload: *entry.payload.zero_padded(),
            }));
        let count = self.nodes.len();
        self.cut.clear();
        self.cut.resize(count * count, 0);
        let mut links_down = 0u64;
        for &(src, dst) in &state.cut_links {
            self.cut[src as usize * count + dst as usize] = 1;
            let (low, high) = (src.min(dst) as u32, src.max(dst) as u32);
            if high < 8 {
                links_down |= 1 << (low * 8 + high);
            }
        }
        self.ghost_vars.clear();
        self.ghost_blob.clear();
        for (name, bytes) in world.ghost_vars(state) {
            let name_at = self.ghost_blob.len();
            self.ghost_blob.extend_from_slice(name.as_bytes());
            self.ghost_blob.push(0);
            let bytes_at = self.ghost_blob.len();
            self.ghost_blob.extend_from_slice(bytes);
            self.ghost_vars.push(GhostVarView {
                name: std::ptr::without_provenance(name_at),
                bytes: std::ptr::without_provenance(bytes_at),
                size: bytes.len() as u32,
                reserved: 0,
            });
        }
        self.lay_out(WorldView {
            nodes: count as u32,
            packets: self.net.len() as u32,
            ghost_len: self.ghost.len() as u32,
            issued: state.issued as u32,
            links_down,
            node: std::ptr::null(),
            net: std::ptr::null(),
            ghost: std::ptr::null(),
            cut: std::ptr::null(),
            params: world.spec().core_params,
            ghost_vars: self.ghost_vars.len() as u32,
            reserved: 0,
            ghost_var: std::ptr::null(),
        });
    }

    /// Copies the header and the arrays into the region (a larger one if
    /// they do not fit), pointing the header and the node views at their
    /// places there.
    fn lay_out(&mut self, mut header: WorldView) {
        let sizes = [
            std::mem::size_of::<WorldView>(),
            std::mem::size_of_val(self.nodes.as_slice()),
            std::mem::size_of_val(self.net.as_slice()),
            std::mem::size_of_val(self.ghost.as_slice()),
            self.cut.len(),
            self.bytes.len(),
            std::mem::size_of_val(self.ghost_vars.as_slice()),
            self.ghost_blob.len(),
        ];
        let mut offsets = [0usize; 8];
        let mut end = 0usize;
        for (offset, size) in offsets.iter_mut().zip(sizes) {
            *offset = end.next_multiple_of(VIEW_ALIGN);
            end = *offset + size;
        }
        if self.region.as_ref().is_none_or(|region| region.len() < end) {
            let len = end.max(self.region.as_ref().map_or(0, |r| 2 * r.len()));
            self.region = Some(GuardedRegion::new(len, VIEW_FILL));
        }
        let base = self.region.as_ref().expect("a region was made").as_ptr();
        let at = |index: usize| base.wrapping_add(offsets[index]);
        let mut node_bytes = at(5);
        for node in &mut self.nodes {
            node.durable = node_bytes;
            node_bytes = node_bytes.wrapping_add(node.durable_size as usize);
            node.volatile_part = node_bytes;
            node_bytes = node_bytes.wrapping_add(node.volatile_size as usize);
        }
        header.node = at(1).cast();
        header.net = at(2).cast();
        header.ghost = at(3).cast();
        header.cut = at(4);
        header.ghost_var = at(6).cast();
        for var in &mut self.ghost_vars {
            var.name = at(7).wrapping_add(var.name.addr()).cast();
            var.bytes = at(7).wrapping_add(var.bytes.addr());
        }
        // SAFETY: each part fits at its offset inside the region (`end`
        // bytes at most), aligned to 16, at least each type's alignment;
        // the parts do not overlap, and nothing else refers to the region.
        unsafe {
            at(0).cast::<WorldView>().write(header);
            std::ptr::copy_nonoverlapping(self.nodes.as_ptr(), at(1).cast(), self.nodes.len());
            std::ptr::copy_nonoverlapping(self.net.as_ptr(), at(2).cast(), self.net.len());
            std::ptr::copy_nonoverlapping(self.ghost.as_ptr(), at(3).cast(), self.ghost.len());
            std::ptr::copy_nonoverlapping(self.cut.as_ptr(), at(4), self.cut.len());
            std::ptr::copy_nonoverlapping(self.bytes.as_ptr(), at(5), self.bytes.len());
            let vars = self.ghost_vars.len();
            std::ptr::copy_nonoverlapping(self.ghost_vars.as_ptr(), at(6).cast(), vars);
            let blob = self.ghost_blob.len();
            std::ptr::copy_nonoverlapping(self.ghost_blob.as_ptr(), at(7), blob);
        }
    }

    /// Every byte of the region the view is in: the same before and after
    /// a call unless the property wrote to it.
    fn memory(&self) -> &[u8] {
        self.region.as_ref().map_or(&[], GuardedRegion::bytes)
    }

    /// The view, once [`filled`](Self::fill).
    fn as_ptr(&self) -> *const WorldView {
        self.region
            .as_ref()
            .expect("a view is filled before it is read")
            .as_ptr()
            .cast()
    }
}

/// A view of a World state, with that state and the view's bytes as
/// filled, so that the next call on an equal state reuses it: a step
/// property is called for every successor of a state in a row, on the same
/// pre-state, and an invariant and a witness on the same new state.
#[derive(Default)]
struct ShownState {
    view: OwnedView,
    /// The World's [`World::id`] and the state the view shows.
    shows: Option<(u64, WorldState)>,
    /// The view's memory as filled ([`OwnedView::memory`]).
    filled: Vec<u8>,
}

impl ShownState {
    /// Makes the view show `state` of `world`, unless it shows it already
    /// (the World's states compare field by field, cheaper than a view is
    /// built).
    fn show(&mut self, world: &World, state: &WorldState) {
        if let Some((id, shown)) = &self.shows {
            if *id == world.id() && shown == state {
                return;
            }
        }
        self.fill_anew(world, state);
        match &mut self.shows {
            Some((id, shown)) => {
                *id = world.id();
                shown.clone_from(state);
            }
            None => self.shows = Some((world.id(), state.clone())),
        }
    }

    /// Makes the view show `state` of `world`, not remembered (a step's
    /// post-state is seldom met twice in a row).
    fn fill_anew(&mut self, world: &World, state: &WorldState) {
        self.shows = None;
        self.view.fill(world, state);
        self.filled.clear();
        self.filled.extend_from_slice(self.view.memory());
    }

    /// Whether the view holds the bytes it was filled with. A view found
    /// changed is forgotten.
    fn intact(&mut self) -> bool {
        let intact = self.view.memory() == self.filled.as_slice();
        if !intact {
            self.shows = None;
        }
        intact
    }
}

/// One thread's views of the states C properties were last called on.
#[derive(Default)]
struct ViewScratch {
    pre: ShownState,
    post: ShownState,
    /// The `cmc_why` a predicate that says why is handed (made at its first use).
    why: Option<WhyBuffer>,
}

/// A `cmc_why` in a mapping of its own, at the end of its region so that a
/// write past it faults (see [`GuardedRegion`]).
struct WhyBuffer {
    region: GuardedRegion,
}

impl WhyBuffer {
    fn new() -> WhyBuffer {
        WhyBuffer {
            region: GuardedRegion::new(WHY_MAX, 0),
        }
    }

    /// The `cmc_why`, emptied (its text is empty at each call).
    fn emptied(&mut self) -> *mut u8 {
        let at = self
            .region
            .as_ptr()
            .wrapping_add(self.region.len() - WHY_MAX);
        // SAFETY: the last WHY_MAX bytes of the region, mapped read-write.
        unsafe { at.write(0) };
        at
    }

    /// The text the predicate wrote: up to its first NUL, at most
    /// `WHY_MAX - 1` bytes.
    fn text(&self) -> String {
        let bytes = &self.region.bytes()[self.region.len() - WHY_MAX..];
        let text = &bytes[..WHY_MAX - 1];
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        String::from_utf8_lossy(&text[..end]).into_owned()
    }
}

thread_local! {
    /// This thread's [`ViewScratch`] (a C predicate calls no Rust: calls do
    /// not nest).
    static VIEWS: RefCell<ViewScratch> = RefCell::new(ViewScratch::default());
}

/// Calls `call`, a ghost variable's update, with views of `pre` and `post`
/// (a step of `world`), under the recorder as `what`; `None` when the call
/// wrote to the views (a memory fault of `world`, reported as happening
/// `doing`).
pub(crate) fn with_step_views<T>(
    world: &World,
    pre: &WorldState,
    post: &WorldState,
    what: &str,
    doing: &str,
    call: impl FnOnce(*const WorldView, *const WorldView) -> T,
) -> Option<T> {
    VIEWS.with_borrow_mut(|views| {
        views.pre.show(world, pre);
        views.post.fill_anew(world, post);
        let (first, second) = (views.pre.view.as_ptr(), views.post.view.as_ptr());
        let answer = recorded(Call::GhostUpdate, || what, || call(first, second));
        if !(views.pre.intact() & views.post.intact()) {
            world.report_outside_step(Fault::outside_step(
                FaultKind::Memory("it wrote to its read-only view of the World".into()),
                doing.to_string(),
            ));
            return None;
        }
        Some(answer)
    })
}

impl CProperty {
    /// Calls the predicate on `pre` (and `post` for an action property)
    /// under the recorder; a write to the views is reported as a fault of
    /// `world` (and the answer is then "holds": the verdict is void anyway).
    fn call(&self, world: &World, pre: &WorldState, post: Option<&WorldState>) -> bool {
        self.call_saying_why(world, pre, post).0
    }

    /// [`call`](Self::call), with the text a predicate that says why wrote
    /// when it failed (empty otherwise).
    fn call_saying_why(
        &self,
        world: &World,
        pre: &WorldState,
        post: Option<&WorldState>,
    ) -> (bool, String) {
        VIEWS.with_borrow_mut(|views| {
            let ViewScratch {
                pre: first,
                post: second,
                why,
            } = views;
            let why = why.get_or_insert_with(WhyBuffer::new);
            let says_why = matches!(
                self.predicate,
                Predicate::StateWhy(_) | Predicate::StepWhy(_)
            );
            let why_at = if says_why {
                why.emptied()
            } else {
                std::ptr::null_mut()
            };
            first.show(world, pre);
            if let Some(post) = post {
                second.fill_anew(world, post);
            }
            let what = || self.call_text.as_str();
            let answer = recorded(Call::Property, what, || match (self.predicate, post) {
                // SAFETY: the views point to live, initialised memory laid
                // out as cmc.h's `cmc_world_view`; the predicate's
                // signature is cmc.h's.
                (Predicate::State(f), _) => unsafe { f(first.view.as_ptr()) },
                // SAFETY: as above.
                (Predicate::Step(f), Some(_)) => unsafe {
                    f(first.view.as_ptr(), second.view.as_ptr())
                },
                // SAFETY: as above; `why_at` points to a writable `cmc_why`.
                (Predicate::StateWhy(f), _) => unsafe { f(first.view.as_ptr(), why_at) },
                // SAFETY: as above.
                (Predicate::StepWhy(f), Some(_)) => unsafe {
                    f(first.view.as_ptr(), second.view.as_ptr(), why_at)
                },
                (Predicate::Step(_) | Predicate::StepWhy(_), None) => {
                    unreachable!("a step predicate gets two states")
                }
            });
            let intact = first.intact() & (post.is_none() || second.intact());
            if !intact {
                world.report_outside_step(Fault::outside_step(
                    FaultKind::Memory(
                        "the property wrote to its read-only view of the World".into(),
                    ),
                    format!("while checking property {}", self.name),
                ));
                return (true, String::new());
            }
            let holds = answer != 0;
            let text = if says_why && !holds {
                why.text()
            } else {
                String::new()
            };
            (holds, text)
        })
    }

    /// Why the property fails on `pre` (and `post`), if its predicate says.
    fn why(&self, world: &World, pre: &WorldState, post: Option<&WorldState>) -> Option<String> {
        let (holds, text) = self.call_saying_why(world, pre, post);
        (!holds && !text.is_empty()).then_some(text)
    }

    /// Whether the state predicate holds (or is reached) in `state` of
    /// `world`. A predicate that writes to its view is a memory fault of
    /// `world` (see [`World::fault`]), and the answer is then `true`.
    ///
    /// Panics for an action property ([`CPropertyKind::Action`]), whose
    /// predicate takes a step's two states.
    pub fn holds(&self, world: &World, state: &WorldState) -> bool {
        self.call(world, state, None)
    }

    /// This property as a [`Property`] of the World; `None` for the
    /// quiescence goal (see [`attach`]).
    fn to_property(&self) -> Option<Property<World>> {
        let this = self.clone();
        Some(match self.kind {
            CPropertyKind::Invariant => {
                let explainer = self.clone();
                Property::always(self.name.clone(), move |world, state| {
                    this.holds(world, state)
                })
                .explained_by(move |world, state| explainer.why(world, state, None))
            }
            CPropertyKind::Witness => {
                Property::sometimes(self.name.clone(), move |world, state| {
                    this.holds(world, state)
                })
            }
            CPropertyKind::Action => {
                let explainer = self.clone();
                Property::step(self.name.clone(), move |world, pre, _, post| {
                    this.call(world, pre, Some(post))
                })
                .step_explained_by(move |world, pre, _, post| explainer.why(world, pre, Some(post)))
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
/// With any C property, the whole client history stays in a state's
/// identity (properties read it in order). See the module's example.
pub fn attach(world: World, properties: &[CProperty]) -> Result<World, String> {
    use cmc_model::Model;
    let taken: Vec<String> = world.properties().into_iter().map(|p| p.name).collect();
    let reserved = [crate::system::quiescence::QUIESCENCE, "deadlock"];
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
/// For the library of `cores/test/reqack_props.c`:
///
/// ```text
/// core reqack
///   library: ./libreqack_props.so
///   ABI version: 1
///   durable part: 8 bytes
///   volatile part: 16 bytes
///   properties:
///     invariant        StoredOnlyIssued
///     action           StoredGrows
///     witness          StoredAndReplied
/// ```
///
/// A heap-state adapter (`include/cmc_heap.h`) is described by what it
/// declares: its sizes, the events it takes, the checked library with the
/// libc calls cmc answers for it and those it imports undeclared (a call is
/// a fault), the descriptions it gives and its properties.
///
/// Anything but a regular file holding a valid core is refused with the
/// reason:
///
/// ```
/// use std::path::Path;
/// use cmc_world::properties::c_properties::describe_library;
///
/// let refused = describe_library(Path::new("/")).unwrap_err();
/// assert!(refused.contains("is a directory"), "{refused}");
/// ```
pub fn describe_library(path: &std::path::Path) -> Result<String, String> {
    crate::core::input_file::check_regular_file(path, "core library")?;
    if let Some((adapter, properties, ghosts)) =
        crate::heap::c_adapter::load(path).map_err(|e| e.to_string())?
    {
        let mut text = format!(
            "heap-state core {}\n  library: {}\n{}",
            crate::heap::HeapAdapter::name(&adapter),
            path.display(),
            adapter.declaration()
        );
        push_properties(&properties, &mut text);
        push_ghosts(&ghosts, &mut text);
        return Ok(text);
    }
    let core = crate::core::loader::CCore::load(path).map_err(|e| e.to_string())?;
    let mut text = format!(
        "core {}\n  library: {}\n  ABI version: {ABI_VERSION}\n  durable part: {} bytes\n  \
         volatile part: {} bytes\n",
        crate::Core::name(&core),
        core.origin(),
        crate::Core::durable_size(&core),
        crate::Core::volatile_size(&core),
    );
    push_properties(core.properties(), &mut text);
    push_ghosts(core.ghosts(), &mut text);
    Ok(text)
}

/// The `ghost variables:` lines of `cmc describe` (none without any).
fn push_ghosts(ghosts: &[CGhost], text: &mut String) {
    if ghosts.is_empty() {
        return;
    }
    text.push_str("  ghost variables:\n");
    for ghost in ghosts {
        let readers = match &ghost.read_by {
            Some(names) => format!("read by {}", names.join(", ")),
            None => "read by any property".into(),
        };
        let renamed = match ghost.rename {
            Some(_) => ", renamed under symmetry",
            None => "",
        };
        text.push_str(&format!(
            "    {:<16} {} bytes, {readers}{renamed}\n",
            ghost.name,
            ghost.size()
        ));
    }
}

/// The `properties:` lines of `cmc describe`, by kind.
fn push_properties(properties: &[CProperty], text: &mut String) {
    if properties.is_empty() {
        text.push_str("  properties: none declared (see CMC_PROPERTIES in include/cmc.h)\n");
        return;
    }
    text.push_str("  properties:\n");
    for kind in [
        CPropertyKind::Invariant,
        CPropertyKind::Action,
        CPropertyKind::Witness,
        CPropertyKind::QuiescenceGoal,
    ] {
        for property in properties.iter().filter(|p| p.kind == kind) {
            text.push_str(&format!("    {:<16} {}\n", kind.name(), property.name));
        }
    }
}
