//! Running the `cmc` binary from the integration tests.

#![allow(dead_code)] // each test file uses the part it needs

use std::path::Path;
use std::process::{Command, Output};

/// Runs `cmc args` in `dir` to completion.
pub fn cmc(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cmc"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the cmc binary runs")
}

/// Standard output and standard error as text.
pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
