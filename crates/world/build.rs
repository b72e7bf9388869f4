//! Compiles the C example core and links it into this crate (the build-time
//! path), and builds the shared libraries and objects the tests load.

use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let include = root.join("include");
    let cores = root.join("cores");
    println!("cargo:rerun-if-changed={}", include.display());
    println!("cargo:rerun-if-changed={}", cores.display());

    cc::Build::new()
        .file(cores.join("reqack/reqack.c"))
        .include(&include)
        .include(cores.join("reqack"))
        .flag_if_supported("-std=c11")
        .warnings(true)
        .compile("cmc_reqack");

    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let compiler = cc::Build::new().get_compiler();
    let build = |source: &str, output: &str, flags: &[&str]| {
        let mut command = compiler.to_command();
        command
            .arg(format!("-I{}", include.display()))
            .arg(format!("-I{}", cores.join("reqack").display()))
            .arg("-fPIC")
            .args(flags)
            .arg(cores.join(source))
            .arg("-o")
            .arg(out.join(output));
        let status = command.status().unwrap_or_else(|error| {
            panic!("cannot run the C compiler {:?}: {error}", compiler.path())
        });
        assert!(status.success(), "compiling {source} failed: {command:?}");
    };
    build("reqack/reqack.c", "libreqack.so", &["-O2", "-shared"]);
    build("reqack/reqack.c", "reqack.o", &["-O2", "-c"]);
    // The product links that same reqack.o, unchanged.
    let reqack_o = out.join("reqack.o").display().to_string();
    build("product/reqack_udp.c", "reqack_udp", &["-O2", &reqack_o]);
    for bug in 1..=2 {
        build(
            "reqack/reqack.c",
            &format!("libreqack_bug{bug}.so"),
            &["-O2", "-shared", &format!("-DCMC_BUG={bug}")],
        );
    }
    for (flag, name) in [
        ("NO_ENTRY", "no_entry"),
        ("WRONG_ABI", "wrong_abi"),
        ("HUGE_STATE", "huge_state"),
        ("NO_STEP", "no_step"),
    ] {
        let define = format!("-D{flag}");
        build(
            "test/bad_descriptor.c",
            &format!("lib{name}.so"),
            &["-O2", "-shared", &define],
        );
    }
    for (flag, name, opt) in [
        ("ERROR_CODE", "error_code", "-O2"),
        ("NONDET_STATIC", "nondet_static", "-O2"),
        ("NONDET_UNINIT", "nondet_uninit", "-O0"),
        ("SEGV", "segv", "-O0"),
        ("HANG", "hang", "-O0"),
    ] {
        let define = format!("-D{flag}");
        build(
            "test/misbehave.c",
            &format!("lib{name}.so"),
            &[opt, "-shared", &define],
        );
    }
    build(
        "test/misbehave.c",
        "calls_time.o",
        &["-O2", "-c", "-DCALLS_TIME"],
    );
    build(
        "test/misbehave.c",
        "nondet_static.o",
        &["-O2", "-c", "-DNONDET_STATIC"],
    );
    println!("cargo:rustc-env=CMC_TEST_CORES={}", out.display());
}
