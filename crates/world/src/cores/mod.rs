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

/// The built-in Rust core called `name`, if there is one.
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
#[derive(Debug, Clone, Copy)]
pub struct CoreCatalog {
    /// The Rust core called `name` (without the `rust:` prefix), if known.
    pub rust_core: fn(name: &str) -> Option<Arc<dyn Core>>,
    /// The names `rust_core` knows, for error messages.
    pub rust_core_names: fn() -> Vec<String>,
    /// The properties of the protocol `spec` runs, if the catalog knows it
    /// (empty otherwise).
    pub properties_for: fn(spec: &WorldSpec) -> Vec<Property<World>>,
}

static CATALOGS: std::sync::RwLock<Vec<CoreCatalog>> = std::sync::RwLock::new(Vec::new());

/// Makes `catalog`'s cores and properties known to [`crate::build_world`]
/// (call once at start-up, before building Worlds).
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

/// The Rust core `name` (without `rust:`) from this crate or a registered catalog.
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

/// The properties of a known protocol: this crate's examples, then the
/// registered catalogs.
pub fn properties_for(spec: &WorldSpec) -> Vec<Property<World>> {
    let own = example_properties_for(spec);
    if !own.is_empty() {
        return own;
    }
    catalogs()
        .iter()
        .map(|catalog| (catalog.properties_for)(spec))
        .find(|properties| !properties.is_empty())
        .unwrap_or_default()
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
/// `c-reqack`, for this repository's tests and examples).
#[cfg(feature = "c-reqack")]
pub fn reqack_c() -> crate::core::loader::CCore {
    // SAFETY: the entry point takes no arguments and returns a pointer to a
    // static descriptor of the linked program; `from_descriptor` validates it.
    unsafe {
        crate::core::loader::CCore::from_descriptor(reqack_c_entry(), "reqack.c (linked)", None)
    }
    .expect("the linked reqack.c core is valid")
}
