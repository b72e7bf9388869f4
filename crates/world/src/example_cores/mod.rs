//! Example cores shipped with cmc, and their [`catalog`].
//!
//! `reqack` exists twice with identical semantics and state layout: in Rust
//! ([`reqack::ReqAck`]) and in C (`cores/reqack/reqack.c`, linked at build time
//! as `reqack_c` with the `c-reqack` feature, and built as a shared library
//! for run-time loading).

pub mod reqack;

use crate::catalog::{CoreCatalog, CoreEntry};

/// This crate's example cores as a catalog: `rust:reqack` and its planted
/// bugs `rust:reqack-bug1` to `rust:reqack-bug3`, with the protocol's
/// property `AckedIsDurable` for every World whose nodes all run `reqack`
/// (the Rust core, or its C twin with the same state layout).
///
/// ```
/// use cmc_world::example_cores;
///
/// let catalog = example_cores::catalog();
/// assert_eq!(catalog.rust_core_names(), ["reqack", "reqack-bug1", "reqack-bug2", "reqack-bug3"]);
/// let core = catalog.rust_core("reqack-bug2").unwrap();
/// assert_eq!(core.name(), "reqack");
/// assert!(catalog.rust_core("paxos").is_none());
/// ```
pub fn catalog() -> CoreCatalog {
    CoreCatalog::new().with(
        CoreEntry::with_bugs("reqack", 3, |bug| reqack::ReqAck { bug })
            .summary("request/acknowledge with retransmission (cmc-world's example)")
            .properties(reqack::properties),
    )
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
/// use cmc_world::example_cores::{reqack::ReqAck, reqack_c};
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
