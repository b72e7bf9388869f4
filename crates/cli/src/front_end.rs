//! The front end as a library: a program registers its models and cores
//! with [`Cli`] and gets every command of `cmc` for them.
//!
//! ```no_run
//! # use cmc_cli::{Cli, CoreEntry, ModelEntry};
//! # fn build_ring(_: &mut cmc_cli::Params) -> Result<cmc_models::DieHard, String> { todo!() }
//! # #[derive(Default)] struct Wal { bug: u32 }
//! # impl cmc_world::TypedCore for Wal {
//! #     type Durable = u32; type Volatile = u32;
//! #     fn name(&self) -> &str { "wal" }
//! #     fn step(&self, _: &cmc_world::core::abi::Config, _: &u32, _: &mut u32, _: &cmc_world::core::abi::Event,
//! #             _: &mut cmc_world::core::abi::Outputs) -> Result<(), cmc_world::core::abi::CoreError> { Ok(()) }
//! # }
//! fn main() -> std::process::ExitCode {
//!     Cli::new("mycheck")
//!         .model(ModelEntry::new("ring", "a token ring", build_ring).param("N", "3", "nodes"))
//!         .core(CoreEntry::with_bugs("wal", 2, |bug| Wal { bug }).defaults(&["requests=2"]))
//!         .run()
//! }
//! ```
//!
//! [`Cli::run`] hands what was registered, as one [`Catalog`] value, to the
//! command it runs.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use cmc_world::catalog::{CoreCatalog, CoreEntry};

use crate::catalog::{Catalog, ModelEntry};
use crate::status::{EXIT_PASS, EXIT_USAGE};

/// A program's command line: its name, models and cores.
///
/// `run` gives it every command of `cmc` (`list`, `check` with its
/// strategies, progress, JSON, checkpoints and supervision, `replay`,
/// `gate`, `describe`, `purity`) over what it registered.
#[derive(Clone)]
pub struct Cli {
    catalog: Catalog,
}

/// The gate file `cmc gate` runs when none is named: the reference cores'
/// gate in this source tree, if it is there.
#[cfg(feature = "reference-cores")]
const REFERENCE_GATE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../protocols/gate.toml");

impl Cli {
    /// An empty command line for the program called `program` (it knows
    /// cmc-world's example core `rust:reqack`).
    pub fn new(program: &str) -> Cli {
        Cli {
            catalog: Catalog::new(program),
        }
    }

    /// The `cmc` command itself: [`Cli::new`]`("cmc")` [`with_bundled`](Cli::with_bundled).
    pub fn bundled() -> Cli {
        Cli::new("cmc").with_bundled()
    }

    /// Adds cmc's bundled models (`cmc-models`) and, with the
    /// `reference-cores` feature (on by default), the reference protocols'
    /// cores (`cmc-protocols`) and their gate file as the default of `gate`.
    pub fn with_bundled(mut self) -> Cli {
        self.catalog.models.extend(
            cmc_models::registry::bundled()
                .into_iter()
                .map(ModelEntry::from),
        );
        #[cfg(feature = "reference-cores")]
        {
            self = self.core_catalog(cmc_protocols::catalog());
            self.catalog.default_gate = Some(PathBuf::from(REFERENCE_GATE));
        }
        self
    }

    /// Registers a model.
    pub fn model(mut self, entry: ModelEntry) -> Cli {
        self.catalog.models.push(entry);
        self
    }

    /// Registers a core: a Rust core with its planted bugs, its default
    /// World parameters and what equips a World of it (see [`CoreEntry`]).
    pub fn core(mut self, entry: CoreEntry) -> Cli {
        self.catalog.cores = self.catalog.cores.with(entry);
        self
    }

    /// Registers every core of another crate's catalog.
    pub fn core_catalog(mut self, catalog: CoreCatalog) -> Cli {
        self.catalog.cores = self.catalog.cores.merged(catalog);
        self
    }

    /// The gate file `gate` runs when none is named (paths in it are taken
    /// from its folder).
    pub fn default_gate(mut self, file: impl Into<PathBuf>) -> Cli {
        self.catalog.default_gate = Some(file.into());
        self
    }

    /// Runs the process's command line ([`std::env::args_os`]) and returns
    /// its exit code: the whole `main` of a front end. A closed standard
    /// output (`... | head`) ends the program quietly, as other Unix tools do.
    pub fn run(self) -> ExitCode {
        // SAFETY: restoring the default disposition of SIGPIPE before any
        // thread is started has no other effect.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
        ExitCode::from(self.run_args(std::env::args_os()))
    }

    /// Runs the command line `args` (the program's name first) in this
    /// process and returns the exit code (see [`crate::run`]). A wrong
    /// registration (an empty or repeated name, a core name another
    /// catalog already has) is exit 2 with the reason.
    pub fn run_args<I, T>(self, args: I) -> u8
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let catalog = self.catalog;
        let program = catalog.program.clone();
        if let Err(problem) = catalog.validate() {
            eprintln!("{program}: error: {problem}");
            return EXIT_USAGE;
        }
        let command = crate::args::Cli::command()
            .name(program.clone())
            .bin_name(program.clone())
            .mut_subcommand("check", |check| match core_defaults_help(&catalog) {
                Some(help) => check.after_help(help),
                None => check,
            });
        let parsed = command
            .try_get_matches_from(args)
            .and_then(|matches| crate::args::Cli::from_arg_matches(&matches));
        let cli = match parsed {
            Ok(cli) => cli,
            Err(error) if error.kind() == clap::error::ErrorKind::ValueValidation => {
                // A number out of range: one line, like every other bad input.
                let text = error.to_string();
                let line = text.lines().next().unwrap_or_default();
                eprintln!("{program}: error: {}", line.trim_start_matches("error: "));
                return EXIT_USAGE;
            }
            Err(error) if error.use_stderr() => {
                // Through `eprint!` (not `Error::print`), so that a test running
                // `run` in-process captures it like every other message.
                eprint!("{}", error.render());
                return EXIT_USAGE;
            }
            Err(help) => {
                print!("{}", help.render());
                return EXIT_PASS;
            }
        };
        match crate::commands::run(cli, &catalog) {
            Ok(status) => status.exit_code(),
            Err(message) => {
                eprintln!("{program}: error: {message}");
                EXIT_USAGE
            }
        }
    }

    #[cfg(test)]
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }
}

/// The lines `check --help` ends with: the World parameters registered
/// cores run with unless the command line says otherwise.
fn core_defaults_help(catalog: &Catalog) -> Option<String> {
    let lines: Vec<String> = catalog
        .cores
        .entries()
        .iter()
        .filter(|entry| !entry.default_params().is_empty())
        .map(|entry| format!("  {}: {}", entry.name(), entry.default_params().join(" ")))
        .collect();
    (!lines.is_empty()).then(|| {
        format!(
            "World parameters of registered cores, used unless given on the command line:\n{}",
            lines.join("\n")
        )
    })
}
