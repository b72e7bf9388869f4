//! `cmc corpus DIR`: re-runs every pinned failing trace of a seed corpus.
//!
//! `DIR/corpus.toml` lists the pins:
//!
//! ```toml
//! [[pin]]
//! trace = "paxos-bug4.cmc-trace"    # a replay file in DIR, with its `violates` line
//! fixed = ["core=rust:paxos"]       # the parameters that make the fixed build
//! ```
//!
//! Each pin's trace is replayed on the build it names (its own parameters,
//! e.g. `core=rust:paxos-bug4`) and must still violate its property, else the
//! pin is STALE: it no longer guards anything. It is then replayed on the
//! fixed build (its parameters with `fixed`'s replacing those of the same
//! name; a C core's recorded digest is dropped when `fixed` names another
//! `core=`) and must not violate it, else it is a REGRESSION; a fixed build on
//! which the trace cannot be followed (an action it names is not enabled)
//! passes: the fix removed that path. A file in DIR that no pin names is
//! listed, so that nothing is silently left out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cmc_model::ModelParam;
use cmc_search::{ReplayError, ReplayFile, Report};
use serde::Deserialize;

use crate::args::CorpusArgs;
use crate::catalog::Catalog;
use crate::status::Status;
use crate::supervised::run_supervised;

/// The manifest's name inside a corpus directory.
pub const MANIFEST: &str = "corpus.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    #[serde(default)]
    pin: Vec<Pin>,
}

/// One pinned trace.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Pin {
    /// The replay file, relative to the corpus directory.
    trace: PathBuf,
    /// `NAME=VALUE` parameters that turn the buggy build into the fixed one.
    fixed: Vec<String>,
}

/// What became of one pin.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PinVerdict {
    /// Still fails on the buggy build, and not on the fixed one.
    Reproduces,
    /// No longer fails on the buggy build.
    Stale,
    /// Still fails on the fixed build.
    Regression,
}

impl PinVerdict {
    fn word(&self) -> &'static str {
        match self {
            PinVerdict::Reproduces => "REPRODUCES",
            PinVerdict::Stale => "STALE",
            PinVerdict::Regression => "REGRESSION",
        }
    }
}

/// Runs the corpus in `args.dir`, in a supervised child (a core that
/// crashes, hangs or exits while a trace is replayed is a named fault,
/// exit 2).
pub fn command(args: CorpusArgs, catalog: &Catalog) -> Result<Status, String> {
    run_supervised(&catalog.program, args.step_timeout, |out| {
        run_corpus(&args.dir, catalog, out)
    })
}

/// Runs the corpus in `dir`, appending its lines to `out`.
fn run_corpus(dir: &Path, catalog: &Catalog, out: &mut String) -> Result<Status, String> {
    use std::fmt::Write;
    let manifest_path = dir.join(MANIFEST);
    let text = crate::inputs::read_text_input(&manifest_path, "corpus manifest")?;
    let manifest: Manifest = toml::from_str(&text)
        .map_err(|problem| format!("{}: {problem}", manifest_path.display()))?;
    if manifest.pin.is_empty() {
        return Err(format!(
            "{}: no [[pin]]: an empty corpus checks nothing",
            manifest_path.display()
        ));
    }
    let (mut stale, mut regressed) = (0usize, 0usize);
    let _ = writeln!(
        out,
        "corpus {}: {} pinned trace{}",
        dir.display(),
        manifest.pin.len(),
        if manifest.pin.len() == 1 { "" } else { "s" }
    );
    for pin in &manifest.pin {
        let (verdict, detail) = run_pin(dir, catalog, pin)?;
        match verdict {
            PinVerdict::Reproduces => {}
            PinVerdict::Stale => stale += 1,
            PinVerdict::Regression => regressed += 1,
        }
        let _ = writeln!(out, "{} {}: {detail}", verdict.word(), pin.trace.display());
    }
    let pinned: BTreeSet<PathBuf> = manifest.pin.iter().map(|p| dir.join(&p.trace)).collect();
    for unpinned in unpinned_traces(dir, &pinned)? {
        let _ = writeln!(
            out,
            "note: {} is in the corpus directory but no [[pin]] names it: it is not checked",
            unpinned.display()
        );
    }
    if stale + regressed == 0 {
        let _ = writeln!(
            out,
            "corpus: every pin reproduces on its buggy build and passes on its fixed one"
        );
        return Ok(Status::Pass);
    }
    let _ = writeln!(out, "corpus: {stale} pin(s) stale, {regressed} regressed");
    // A regression is a property failing on a fixed build: it outranks a pin
    // that no longer guards anything.
    Ok(if regressed > 0 {
        Status::Fail
    } else {
        Status::Stale
    })
}

/// The `.cmc-trace` files of `dir` that `pinned` leaves out.
fn unpinned_traces(dir: &Path, pinned: &BTreeSet<PathBuf>) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|problem| format!("cannot list {}: {problem}", dir.display()))?;
    let mut unpinned: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "cmc-trace"))
        .filter(|path| !pinned.contains(path))
        .collect();
    unpinned.sort();
    Ok(unpinned)
}

/// Replays one pin on its buggy and its fixed build.
fn run_pin(dir: &Path, catalog: &Catalog, pin: &Pin) -> Result<(PinVerdict, String), String> {
    let path = dir.join(&pin.trace);
    let in_pin = |problem: String| format!("{}: {problem}", path.display());
    let text = crate::inputs::read_replay_file(&path)?;
    let file = ReplayFile::parse(&text).map_err(|e| in_pin(e.to_string()))?;
    let property = file
        .violates
        .clone()
        .ok_or_else(|| in_pin("a pinned trace needs its `violates` line".into()))?;
    let origin = origin(&file);
    match replay(catalog, &file).map_err(in_pin)? {
        Ok(report) if report.property.as_deref() == Some(property.as_str()) => {}
        Ok(report) => {
            let what = match &report.property {
                Some(other) => format!("violates {other} instead of {property}"),
                None => format!("replays to its end without violating {property}"),
            };
            return Ok((
                PinVerdict::Stale,
                format!("{what} on its buggy build{origin}: it no longer guards anything"),
            ));
        }
        Err(diverged) => {
            return Ok((
                PinVerdict::Stale,
                format!(
                    "no longer replays on its buggy build{origin} ({diverged}): it no longer guards anything"
                ),
            ))
        }
    }
    let fixed_file = ReplayFile {
        params: with_overrides(&file.params, &pin.fixed).map_err(in_pin)?,
        ..file.clone()
    };
    let fixed = pin.fixed.join(" ");
    Ok(match replay(catalog, &fixed_file).map_err(in_pin)? {
        Ok(report) if report.property.as_deref() == Some(property.as_str()) => (
            PinVerdict::Regression,
            format!("still violates {property} on the fixed build ({fixed})"),
        ),
        Ok(_) => (
            PinVerdict::Reproduces,
            format!(
                "violates {property} ({} states{origin}); the fixed build ({fixed}) replays it without the violation",
                file.actions.len() + 1
            ),
        ),
        Err(diverged) => (
            PinVerdict::Reproduces,
            format!(
                "violates {property} ({} states{origin}); the fixed build ({fixed}) leaves the trace ({})",
                file.actions.len() + 1,
                diverged.line.map_or("at its start".to_string(), |line| format!("at line {line}"))
            ),
        ),
    })
}

/// `; seed=S walk=N` for a trace found by a random walk, else nothing.
fn origin(file: &ReplayFile) -> String {
    let wanted: Vec<&str> = file
        .settings
        .iter()
        .map(String::as_str)
        .filter(|s| s.starts_with("seed=") || s.starts_with("walk="))
        .collect();
    if wanted.is_empty() {
        String::new()
    } else {
        format!("; {}", wanted.join(" "))
    }
}

/// `params` with every parameter named in `overrides` (`NAME=VALUE`) given
/// that value; a name the trace does not have is an error.
///
/// A C core is recorded with the digest of its library (`core_digest=`),
/// which names the buggy build's bytes: when `overrides` replace a `core=`
/// and give no `core_digest=` of their own, the recorded digests are left
/// out, so the fixed library is loaded as it is now.
fn with_overrides(params: &[ModelParam], overrides: &[String]) -> Result<Vec<ModelParam>, String> {
    let mut params = params.to_vec();
    let named = |wanted: &str| {
        overrides
            .iter()
            .any(|word| word.split_once('=').is_some_and(|(name, _)| name == wanted))
    };
    if named("core") && !named(cmc_world::world_args::CORE_DIGEST_PARAM) {
        params.retain(|param| param.name != cmc_world::world_args::CORE_DIGEST_PARAM);
    }
    for word in overrides {
        let (name, value) = word
            .split_once('=')
            .ok_or_else(|| format!("fixed: expected NAME=VALUE, found `{word}`"))?;
        let mut found = false;
        for param in params.iter_mut().filter(|p| p.name == name) {
            param.value = value.to_string();
            found = true;
        }
        if !found {
            return Err(format!(
                "fixed: the trace has no parameter `{name}` to replace"
            ));
        }
    }
    Ok(params)
}

/// Replays `file` on the model its parameters name: `Ok(Err)` when the
/// trace cannot be followed there, `Err` when the model cannot be built.
fn replay(catalog: &Catalog, file: &ReplayFile) -> Result<Result<Report, ReplayError>, String> {
    let model = catalog.model_of_trace(file)?;
    Ok(model.replay(file))
}
