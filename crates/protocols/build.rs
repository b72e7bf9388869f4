//! Builds the C cores as shared libraries, one per planted-bug variant
//! (`lib<core>.so` is the control, `lib<core>_bug<N>.so` has `-DCMC_BUG=N`),
//! plus the control's object file for the purity gate. The directory is
//! passed to the crate as `CMC_PROTOCOLS_LIBS`.

use std::path::{Path, PathBuf};

/// The C cores: source name and the planted bugs it carries.
const C_CORES: &[(&str, u32)] = &[("two_phase", 4)];

fn main() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    // `c/cmc.h` is the repository's `include/cmc.h` (a symbolic link, which
    // `cargo package` turns into a copy), so the crate builds from its own files.
    let sources = crate_dir.join("c");
    println!("cargo:rerun-if-changed={}", sources.display());
    println!("cargo:rerun-if-changed={}", sources.join("cmc.h").display());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let compiler = cc::Build::new().get_compiler();
    let build = |source: &Path, output: &Path, flags: &[String]| {
        let mut command = compiler.to_command();
        command
            .arg(format!("-I{}", sources.display()))
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-fPIC"])
            .args(flags)
            .arg(source)
            .arg("-o")
            .arg(output);
        let status = command.status().unwrap_or_else(|error| {
            panic!("cannot run the C compiler {:?}: {error}", compiler.path())
        });
        assert!(
            status.success(),
            "compiling {} failed: {command:?}",
            source.display()
        );
    };
    for (core, bugs) in C_CORES {
        let source = sources.join(format!("{core}.c"));
        build(&source, &out.join(format!("{core}.o")), &["-c".into()]);
        build(
            &source,
            &out.join(format!("lib{core}.so")),
            &["-shared".into()],
        );
        for bug in 1..=*bugs {
            build(
                &source,
                &out.join(format!("lib{core}_bug{bug}.so")),
                &["-shared".into(), format!("-DCMC_BUG={bug}")],
            );
        }
    }
    println!("cargo:rustc-env=CMC_PROTOCOLS_LIBS={}", out.display());
}
