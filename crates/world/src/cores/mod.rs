//! Example cores shipped with cmc.
//!
//! `reqack` exists twice with identical semantics and state layout: in Rust
//! ([`reqack::ReqAck`]) and in C (`cores/reqack/reqack.c`, linked at build time
//! as `reqack_c` with the `c-reqack` feature, and built as a shared library
//! for run-time loading).

pub mod reqack;

use std::sync::Arc;

use cmc_model::Property;

use crate::core::Core;
use crate::world::spec::WorldSpec;
use crate::World;

/// Names of the built-in Rust cores (`--core rust:NAME`).
pub const RUST_CORES: &[&str] = &["reqack", "reqack-bug1", "reqack-bug2", "reqack-bug3"];

/// The built-in Rust core called `name` (one of [`RUST_CORES`]), if there
/// is one; registered catalogs are not searched (see [`any_rust_core`]).
///
/// ```
/// use cmc_world::cores::{rust_core, RUST_CORES};
///
/// assert!(RUST_CORES.iter().all(|name| rust_core(name).is_some()));
/// assert_eq!(rust_core("reqack-bug2").map(|core| core.name().to_string()), Some("reqack".into()));
/// assert!(rust_core("paxos").is_none());
/// ```
pub fn rust_core(name: &str) -> Option<Arc<dyn Core>> {
    let bug = match name {
        "reqack" => 0,
        "reqack-bug1" => 1,
        "reqack-bug2" => 2,
        "reqack-bug3" => 3,
        _ => return None,
    };
    Some(Arc::new(reqack::ReqAck { bug }))
}

/// Cores and protocol properties that a front end knows beyond this crate's
/// own examples (e.g. the reference protocols of `cmc-protocols`), so that
/// `--core rust:NAME` and replay files of those cores work.
///
/// # Example
///
/// A front end that knows one more core, `echo`, which answers each client
/// request, with one property of its own:
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Property;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
/// use cmc_world::cores::{self, CoreCatalog, Equipped};
/// use cmc_world::world::state::WorldState;
/// use cmc_world::{build_world, Core, TypedCore, World, WorldArgs};
///
/// struct Echo;
/// impl TypedCore for Echo {
///     type Durable = u32;
///     type Volatile = u32;
///     fn name(&self) -> &str { "echo" }
///     fn step(&self, _: &Config, _: &u32, _: &mut u32, event: &Event, out: &mut Outputs)
///         -> Result<(), CoreError> {
///         match event.kind() {
///             Some(EventKind::Client) => out.reply(event.id, b"echo"),
///             _ => Ok(()),
///         }
///     }
/// }
///
/// cores::register_catalog(CoreCatalog {
///     rust_core: |name| (name == "echo").then(|| Arc::new(Echo) as Arc<dyn Core>),
///     rust_core_names: || vec!["echo".to_string()],
///     equip: |world| match world.spec().cores.iter().all(|core| core.name() == "echo") {
///         true => Equipped::Known(world.with_property(Property::sometimes(
///             "Echoed",
///             |world: &World, state: &WorldState| {
///                 world.inspect(state).replies_with(b"echo").next().is_some()
///             },
///         ))),
///         false => Equipped::Unknown(world),
///     },
/// });
/// assert!(cores::any_rust_core_names().contains(&"echo".to_string()));
///
/// // `--core rust:echo` now works, and the World checks the catalog's property.
/// let args = WorldArgs {
///     cores: vec!["rust:echo".into()],
///     nodes: 1,
///     params: vec!["requests=1".into()],
///     ..WorldArgs::default()
/// };
/// let outcome = Checker::new(build_world(&args)?).workers(1).run();
/// assert_eq!(outcome.verdict, Verdict::Pass, "the witness Echoed is reached");
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct CoreCatalog {
    /// The Rust core called `name` (without the `rust:` prefix), if known.
    pub rust_core: fn(name: &str) -> Option<Arc<dyn Core>>,
    /// The names `rust_core` knows, for error messages.
    pub rust_core_names: fn() -> Vec<String>,
    /// `world` with the properties of the protocol its nodes run, and
    /// whatever they need (such as a summary of the client history in the
    /// states' identity), if the catalog knows that protocol; `world`
    /// unchanged otherwise.
    pub equip: fn(world: World) -> Equipped,
}

/// A World a [`CoreCatalog`] was asked to equip, handed back.
pub enum Equipped {
    /// With the properties of a protocol the catalog knows.
    Known(World),
    /// Unchanged: the catalog does not know the protocol its nodes run.
    Unknown(World),
}

static CATALOGS: std::sync::RwLock<Vec<CoreCatalog>> = std::sync::RwLock::new(Vec::new());

/// Makes `catalog`'s cores and properties known to [`crate::build_world`]
/// (call once at start-up, before building Worlds); for the whole process,
/// after this crate's own cores and earlier catalogs (see [`CoreCatalog`]'s
/// example).
pub fn register_catalog(catalog: CoreCatalog) {
    CATALOGS
        .write()
        .unwrap_or_else(|poison| poison.into_inner())
        .push(catalog);
}

fn catalogs() -> Vec<CoreCatalog> {
    CATALOGS
        .read()
        .unwrap_or_else(|poison| poison.into_inner())
        .clone()
}

/// The Rust core `name` (without `rust:`) from this crate or a registered
/// catalog, this crate's first, then the catalogs in the order registered.
pub fn any_rust_core(name: &str) -> Option<Arc<dyn Core>> {
    rust_core(name).or_else(|| {
        catalogs()
            .iter()
            .find_map(|catalog| (catalog.rust_core)(name))
    })
}

/// Every Rust core name [`any_rust_core`] knows.
pub fn any_rust_core_names() -> Vec<String> {
    RUST_CORES
        .iter()
        .map(|name| name.to_string())
        .chain(
            catalogs()
                .iter()
                .flat_map(|catalog| (catalog.rust_core_names)()),
        )
        .collect()
}

/// `world` with the properties of a known protocol its nodes run: this
/// crate's examples', or else those of the first registered catalog that
/// knows its cores ([`CoreCatalog::equip`]); unchanged if none does.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::cores::{equip, reqack::ReqAck};
/// use cmc_world::{World, WorldSpec};
///
/// let spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
/// let equipped = equip(World::new(spec));
/// assert!(equipped.properties().iter().any(|p| p.name == "AckedIsDurable"));
/// ```
pub fn equip(world: World) -> World {
    let own = example_properties_for(world.spec());
    if !own.is_empty() {
        return world.with_properties(own);
    }
    let mut world = world;
    for catalog in catalogs() {
        match (catalog.equip)(world) {
            Equipped::Known(equipped) => return equipped,
            Equipped::Unknown(unchanged) => world = unchanged,
        }
    }
    world
}

/// The properties of this crate's example protocol, when every node of
/// `spec` runs a core of that name with its state layout (Rust or C alike).
fn example_properties_for(spec: &WorldSpec) -> Vec<Property<World>> {
    let reqack_layout = |core: &Arc<dyn Core>| {
        core.name() == "reqack"
            && core.durable_size() == std::mem::size_of::<reqack::Durable>()
            && core.volatile_size() == std::mem::size_of::<reqack::Volatile>()
    };
    if spec.cores.iter().all(reqack_layout) {
        reqack::properties()
    } else {
        Vec::new()
    }
}

#[cfg(feature = "c-reqack")]
extern "C" {
    /// The entry point of `cores/reqack/reqack.c`, compiled and linked by build.rs.
    #[link_name = "cmc_core_entry"]
    fn reqack_c_entry() -> *const crate::core::abi::CoreDescriptor;
}

/// The C `reqack` core, linked into this crate at build time (feature
/// `c-reqack`, for this repository's tests and examples). Its semantics and
/// state layout are the Rust [`reqack::ReqAck`]'s:
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::Checker;
/// use cmc_world::cores::{reqack::ReqAck, reqack_c};
/// use cmc_world::{Core, World, WorldSpec};
///
/// let states = |core: Arc<dyn Core>| {
///     let spec = WorldSpec::builder(core, 2).requests(1).param("drops", 1).build().unwrap();
///     Checker::new(World::new(spec)).workers(1).run().stats.distinct_states
/// };
/// let c = states(Arc::new(reqack_c()));
/// assert!(c > 10);
/// assert_eq!(c, states(Arc::new(ReqAck::default())));
/// ```
#[cfg(feature = "c-reqack")]
pub fn reqack_c() -> crate::core::loader::CCore {
    // SAFETY: the entry point takes no arguments and returns a pointer to a
    // static descriptor of the linked program; `from_descriptor` validates it.
    unsafe {
        crate::core::loader::CCore::from_descriptor(reqack_c_entry(), "reqack.c (linked)", None)
    }
    .expect("the linked reqack.c core is valid")
}
