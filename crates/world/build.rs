//! With the `c-reqack` feature, compiles the example C core
//! `cores/reqack/reqack.c` of cmc's source tree and links it into this crate
//! ([`example_cores::reqack_c`](src/example_cores/mod.rs), the build-time path of a C core).
//! The feature is for this repository's own tests and examples (the crate's
//! dev-dependency on itself turns it on); without it (the default, for every
//! user of the crate) this script does nothing, so no C compiler is needed
//! and `cc` is not even built.
//! The C fixtures the tests load are compiled by the tests themselves
//! (`tests/common/mod.rs`).

#[cfg(feature = "c-reqack")]
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "c-reqack")]
    compile_reqack();
}

/// Compiles and links the example C core (`cc` is a build dependency of the
/// feature only), with `-Wall -Wextra -Werror` as the tests' C fixtures.
#[cfg(feature = "c-reqack")]
fn compile_reqack() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (include, reqack) = (root.join("include"), root.join("cores/reqack"));
    println!("cargo:rerun-if-changed={}", include.display());
    println!("cargo:rerun-if-changed={}", reqack.display());
    cc::Build::new()
        .file(reqack.join("reqack.c"))
        .include(&include)
        .include(&reqack)
        .flag_if_supported("-std=c11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .compile("cmc_reqack");
}
