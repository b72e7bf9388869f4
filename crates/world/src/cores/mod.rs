//! Example cores shipped with cmc.
//!
//! `reqack` exists twice with identical semantics and state layout: in Rust
//! ([`reqack::ReqAck`]) and in C (`cores/reqack/reqack.c`, linked at build time
//! as [`reqack_c`] and built as a shared library for run-time loading).

pub mod reqack;

use crate::loader::CCore;

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
