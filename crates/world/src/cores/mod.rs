//! Example cores shipped with cmc.
//!
//! `reqack` exists twice with identical semantics and state layout: in Rust
//! ([`reqack::ReqAck`]) and in C (`cores/reqack/reqack.c`, linked at build time
//! as [`reqack_c`] and built as a shared library for run-time loading).

pub mod reqack;

use std::sync::Arc;

use cmc_model::Property;

use crate::core::Core;
use crate::loader::CCore;
use crate::spec::WorldSpec;
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

/// The properties of a known protocol, when every node of `spec` runs a core
/// of that name with that protocol's state layout (Rust or C alike).
pub fn properties_for(spec: &WorldSpec) -> Vec<Property<World>> {
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

extern "C" {
    /// The entry point of `cores/reqack/reqack.c`, compiled and linked by build.rs.
    #[link_name = "cmc_core_entry"]
    fn reqack_c_entry() -> *const crate::abi::CoreDescriptor;
}

/// The C `reqack` core, linked into this crate at build time.
pub fn reqack_c() -> CCore {
    // SAFETY: the entry point takes no arguments and returns a pointer to a
    // static descriptor of the linked program; `from_descriptor` validates it.
    unsafe { CCore::from_descriptor(reqack_c_entry(), "reqack.c (linked)", None) }
        .expect("the linked reqack.c core is valid")
}
