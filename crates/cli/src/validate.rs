//! `cmc validate LOG --core lib.so`: a product's glue log replayed through
//! the same cores (see `cmc_world::validate`).

use cmc_world::core::input_file::read_regular_file;
use cmc_world::validate::glue_log;
use cmc_world::validate::{validate, Options};
use cmc_world::WorldArgs;

use crate::args::ValidateArgs;
use crate::catalog::Catalog;
use crate::status::Status;
use crate::supervised::run_supervised;

/// Largest glue log read.
const GLUE_LOG_MAX_BYTES: u64 = 1 << 30;

/// Runs the command in a supervised child (a core that crashes, hangs or
/// exits is a named fault, exit 2): `Pass` for a valid log, `Fail` with
/// the first bad record, `Err` for a log or core that cannot be read.
pub fn command(args: ValidateArgs, catalog: &Catalog) -> Result<Status, String> {
    run_supervised(&catalog.program, args.step_timeout, |out| {
        validate_log(args, catalog, out)
    })
}

/// Validates the log, appending the verdict's lines to `out`.
fn validate_log(args: ValidateArgs, catalog: &Catalog, out: &mut String) -> Result<Status, String> {
    use std::fmt::Write;
    let bytes = read_regular_file(&args.log, "glue log", GLUE_LOG_MAX_BYTES)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("glue log {}: not UTF-8 text", args.log.display()))?;
    let records = glue_log::parse(&text)
        .map_err(|problem| format!("glue log {}: {problem}", args.log.display()))?;
    let world = catalog.cores.build_world(&WorldArgs {
        cores: args.cores,
        nodes: args.nodes,
        params: args.words,
        check_determinism: false,
    })?;
    let options = Options {
        allow_duplicates: args.allow_duplicates,
    };
    let log = args.log.display();
    match validate(world.spec(), &records, options) {
        Ok(summary) => {
            let _ = writeln!(
                out,
                "glue log {log}: valid. {} events replayed through the cores, {} outputs \
                 carried out as the steps returned them, {} crash(es); at the end {} message(s) \
                 in flight and {} persist(s) unflushed.",
                summary.events,
                summary.outputs,
                summary.crashes,
                summary.in_flight,
                summary.unflushed
            );
            Ok(Status::Pass)
        }
        Err(mismatch) => {
            let line = text.lines().nth(mismatch.line - 1).unwrap_or_default();
            let _ = writeln!(
                out,
                "glue log {log}: INVALID at line {}: {}",
                mismatch.line, mismatch.message
            );
            let _ = writeln!(out, "  {}: {}", mismatch.line, line.trim());
            Ok(Status::Fail)
        }
    }
}
