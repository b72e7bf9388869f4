//! The gate file: which cores the planted-bug gate checks, under which
//! configurations, and what it must find.
//!
//! A gate file is TOML. Each `[[core]]` table is one configuration of one
//! core: its control (the correct core) and its planted bugs, each a
//! `[[core.bug]]` table. Relative paths and build commands are taken from the
//! gate file's folder.
//!
//! ```toml
//! timeout = 300            # seconds per variant (default 600); a core may set its own
//!
//! [[core]]
//! name = "two_phase"       # label of the configuration, unique in the file
//! # How to get the core, exactly one of:
//! build = "cc -shared -fPIC -Iinclude -DCMC_BUG={bug} two_phase.c -o {library}"
//! # library = "build/libtwo_phase_bug{bug}.so"    (a prebuilt shared library)
//! # rust = "paxos"                                 (built-in core rust:paxos, rust:paxos-bugN)
//! nodes = 3
//! params = ["requests=1", "crashes=1", "restarts=1"]   # World parameters
//! deadlock = false         # report hangs as violations (default true)
//! max_depth = 40           # the control's depth bound (default: exhaustive)
//! reduction = true         # breadth-first searches use --reduction, which the
//!                          # run must report on (default false)
//! # control = false        (no control: see below)
//!
//! [[core.bug]]
//! bug = 1                  # {bug} in build / library; rust:NAME-bugN
//! summary = "replies before the flush"
//! expect = "NoCommitReplyBeforeFlush"   # the property that must catch it
//! max_depth = 30           # deepest counterexample accepted (the search's bound)
//! max_states = 1000000     # most distinct states the search may explore
//! # build / library / rust may be given here too, for this bug only.
//! # How to search for it (default: breadth-first to max_depth), one of:
//! # search = { strategy = "dfs" }                       (depth-first to max_depth)
//! # search = { strategy = "walks", walks = 100000, walk_length = 60, seed = 7, swarm = true }
//! #   (swarm_kinds = true: each walk weighs every action kind, see `cmc check --swarm-kinds`)
//! # search = { strategy = "frontier-walks", depth = 12, walk_length = 40, rounds = 4, seed = 7 }
//! # search = { strategy = "walks-from", trace = "prefix.cmc-trace", walks = 1000, walk_length = 40, seed = 7 }
//! ```
//!
//! `params` are World parameters (`NAME=VALUE`) only: the gate chooses the
//! search's options itself, so that a control is judged on a search it
//! knows the bounds of. A control is always searched breadth-first, and
//! passes only when that search was complete, or cut only by its own
//! `max_depth`. A bug's `search` names how the bug is found: random walks
//! (`walks`: `walks` walks of at most `walk_length` steps from `seed`,
//! `swarm` to draw fault densities per walk), walks from the frontier of a
//! breadth-first search to `depth` (`rounds` walks from each of its states),
//! or walks from the end of a replay file (`trace`, relative to the gate
//! file); a bug caught only by walks is gated by walks, with its seed pinned.
//!
//! A library checked unchanged has no fixed build to serve as a control: a
//! configuration under which the library's own bug shows sets `control =
//! false`, and only its `[[core.bug]]` tables are run (they build the same
//! library; `{bug}` is theirs to ignore). The gate's controls are then
//! other configurations, without the bug's preconditions.
//!
//! In `build` and `library`, `{bug}` is the variant's bug number (0 for the
//! control); in `build`, `{library}` is the path the command must write the
//! shared library to (the gate chooses it, under the evidence folder).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

/// Seconds a variant may run when the file does not say.
pub const DEFAULT_TIMEOUT_SECS: f64 = 600.0;
/// Longest timeout a gate file may set: a week, in seconds.
pub const MAX_TIMEOUT_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// How to get one variant of a core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A shell command (run with `sh -c` in the gate file's folder) that
    /// writes the shared library to `library`.
    Build { command: String, library: PathBuf },
    /// A prebuilt shared library.
    Library(PathBuf),
    /// A Rust core built into `cmc`, as `--core` spells it (`rust:paxos-bug2`).
    Rust(String),
}

impl Source {
    /// The `--core` argument that loads this variant.
    pub fn core_arg(&self) -> String {
        match self {
            Source::Build { library, .. } | Source::Library(library) => {
                library.display().to_string()
            }
            Source::Rust(name) => name.clone(),
        }
    }
}

/// One run of the gate: the control or a planted bug of one configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// The configuration's name (`[[core]] name`).
    pub core: String,
    /// `control` or `bugN`.
    pub variant: String,
    /// The property that must catch it (`None`: the control, which must pass).
    pub expect: Option<String>,
    /// What the bug does, if the file says.
    pub summary: Option<String>,
    /// How to get the core.
    pub source: Source,
    /// World nodes.
    pub nodes: usize,
    /// World parameters (`NAME=VALUE`).
    pub params: Vec<String>,
    /// Whether a hang is a violation.
    pub deadlock: bool,
    /// The search's depth bound (`None`: exhaustive).
    pub max_depth: Option<u64>,
    /// Most distinct states accepted (`None`: no budget).
    pub max_states: Option<u64>,
    /// Wall-clock limit of the variant: its build and its check.
    pub timeout: Duration,
    /// How the variant is searched (a control: always breadth-first).
    pub search: Search,
    /// Whether its breadth-first search reduces (`reduction = true` on its
    /// core): the run must then report the reduction on.
    pub reduction: bool,
}

/// How a variant is searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Search {
    /// Breadth-first, to the variant's `max_depth` if it has one.
    Bfs,
    /// Depth-first, to the variant's `max_depth`.
    Dfs,
    /// Random walks from the initial states, or from the last state of
    /// `from` (a replay file) when it is given.
    Walks {
        walks: u64,
        walk_length: u64,
        seed: u64,
        swarm: bool,
        swarm_kinds: bool,
        from: Option<PathBuf>,
    },
    /// Breadth-first to `depth`, then `rounds` random walks of at most
    /// `walk_length` steps from each state of its last level.
    FrontierWalks {
        depth: u64,
        walk_length: u64,
        rounds: u64,
        seed: u64,
        swarm: bool,
        swarm_kinds: bool,
    },
}

impl Search {
    /// The `cmc check` options of this search of a variant whose depth
    /// bound is `max_depth`.
    pub fn check_args(&self, max_depth: Option<u64>) -> Vec<String> {
        let depth = |depth: Option<u64>| {
            depth
                .map(|depth| vec!["--max-depth".to_string(), depth.to_string()])
                .unwrap_or_default()
        };
        let swarm = |swarm: bool, kinds: bool| {
            [swarm.then_some("--swarm"), kinds.then_some("--swarm-kinds")]
                .into_iter()
                .flatten()
                .map(str::to_string)
        };
        match self {
            Search::Bfs => depth(max_depth),
            Search::Dfs => [vec!["--dfs".to_string()], depth(max_depth)].concat(),
            Search::Walks {
                walks,
                walk_length,
                seed,
                swarm: walk_swarm,
                swarm_kinds,
                from,
            } => {
                let mut args = vec![
                    "--simulate".to_string(),
                    "--walks".into(),
                    walks.to_string(),
                    "--walk-length".into(),
                    walk_length.to_string(),
                    "--seed".into(),
                    seed.to_string(),
                ];
                args.extend(swarm(*walk_swarm, *swarm_kinds));
                if let Some(from) = from {
                    args.extend(["--walks-from".into(), from.display().to_string()]);
                }
                args
            }
            Search::FrontierWalks {
                depth: bfs_depth,
                walk_length,
                rounds,
                seed,
                swarm: walk_swarm,
                swarm_kinds,
            } => {
                let mut args = depth(Some(*bfs_depth));
                args.extend([
                    "--frontier-walks".into(),
                    walk_length.to_string(),
                    "--frontier-rounds".into(),
                    rounds.to_string(),
                    "--seed".into(),
                    seed.to_string(),
                ]);
                args.extend(swarm(*walk_swarm, *swarm_kinds));
                args
            }
        }
    }
}

/// A parsed gate file: its variants in order, controls first in each configuration.
#[derive(Debug, Clone)]
pub struct GateFile {
    /// The folder relative paths and build commands are taken from.
    pub dir: PathBuf,
    /// Every run of the gate.
    pub variants: Vec<Variant>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    timeout: Option<f64>,
    #[serde(default)]
    core: Vec<RawCore>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCore {
    name: Spanned<String>,
    build: Option<String>,
    library: Option<String>,
    rust: Option<String>,
    nodes: usize,
    #[serde(default)]
    params: Vec<String>,
    #[serde(default = "yes")]
    deadlock: bool,
    max_depth: Option<u64>,
    max_states: Option<u64>,
    timeout: Option<f64>,
    #[serde(default = "yes")]
    control: bool,
    #[serde(default)]
    reduction: bool,
    #[serde(default)]
    bug: Vec<RawBug>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBug {
    bug: Spanned<u32>,
    summary: Option<String>,
    expect: String,
    max_depth: u64,
    max_states: u64,
    build: Option<String>,
    library: Option<String>,
    rust: Option<String>,
    search: Option<RawSearch>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSearch {
    strategy: String,
    walks: Option<u64>,
    walk_length: Option<u64>,
    seed: Option<u64>,
    #[serde(default)]
    swarm: bool,
    #[serde(default)]
    swarm_kinds: bool,
    depth: Option<u64>,
    rounds: Option<u64>,
    trace: Option<String>,
}

impl RawSearch {
    /// The search this table names; `dir` is the gate file's folder.
    fn resolve(&self, dir: &Path) -> Result<Search, String> {
        let allowed: &[&str] = match self.strategy.as_str() {
            "bfs" | "dfs" => &[],
            "walks" => &["walks", "walk_length", "seed", "swarm", "swarm_kinds"],
            "frontier-walks" => &["depth", "walk_length", "rounds", "seed", "swarm", "swarm_kinds"],
            "walks-from" => &["trace", "walks", "walk_length", "seed", "swarm", "swarm_kinds"],
            other => {
                return Err(format!(
                    "search: unknown strategy `{other}` (bfs, dfs, walks, frontier-walks or walks-from)"
                ))
            }
        };
        let given = [
            ("walks", self.walks.is_some()),
            ("walk_length", self.walk_length.is_some()),
            ("seed", self.seed.is_some()),
            ("swarm", self.swarm),
            ("swarm_kinds", self.swarm_kinds),
            ("depth", self.depth.is_some()),
            ("rounds", self.rounds.is_some()),
            ("trace", self.trace.is_some()),
        ];
        if let Some((key, _)) = given
            .iter()
            .find(|(key, given)| *given && !allowed.contains(key))
        {
            return Err(format!(
                "search: `{key}` does not go with strategy `{}`",
                self.strategy
            ));
        }
        let positive = |key: &str, value: Option<u64>| match value {
            Some(0) => Err(format!("search: {key} must be at least 1")),
            Some(value) => Ok(value),
            None => Err(format!(
                "search: strategy `{}` needs `{key}`",
                self.strategy
            )),
        };
        // A pinned seed: a walk that finds the bug today finds it tomorrow.
        let seed = || {
            self.seed.ok_or_else(|| {
                format!(
                    "search: strategy `{}` needs `seed` (pinned, so the walks are the same every run)",
                    self.strategy
                )
            })
        };
        Ok(match self.strategy.as_str() {
            "bfs" => Search::Bfs,
            "dfs" => Search::Dfs,
            "frontier-walks" => Search::FrontierWalks {
                depth: positive("depth", self.depth)?,
                walk_length: positive("walk_length", self.walk_length)?,
                rounds: self.rounds.map_or(Ok(1), |r| positive("rounds", Some(r)))?,
                seed: seed()?,
                swarm: self.swarm,
                swarm_kinds: self.swarm_kinds,
            },
            _ => Search::Walks {
                walks: positive("walks", self.walks)?,
                walk_length: positive("walk_length", self.walk_length)?,
                seed: seed()?,
                swarm: self.swarm,
                swarm_kinds: self.swarm_kinds,
                from: match &self.trace {
                    Some(trace) => Some(dir.join(trace)),
                    None if self.strategy == "walks-from" => {
                        return Err("search: strategy `walks-from` needs `trace`".into())
                    }
                    None => None,
                },
            },
        })
    }
}

/// Whether `param` is a World parameter, `NAME=VALUE` with a name of
/// letters, digits and `_` (not a command-line option such as
/// `--max-states=5`, which would change the search the gate judges).
fn world_param(param: &str) -> bool {
    param.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The `build`, `library` and `rust` keys of a core or a bug.
#[derive(Debug, Default)]
struct RawSource {
    build: Option<String>,
    library: Option<String>,
    rust: Option<String>,
}

fn yes() -> bool {
    true
}

impl GateFile {
    /// Reads and checks the gate file at `path`; `evidence` is where build
    /// commands write their libraries (both made absolute from the current
    /// folder). Errors name the file and the line.
    pub fn load(path: &Path, evidence: &Path) -> Result<GateFile, String> {
        let text = crate::inputs::read_text_input(path, "gate file")?;
        let dir = absolute(path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        GateFile::parse(&text, &dir, &absolute(evidence))
            .map_err(|problem| format!("{}: {problem}", path.display()))
    }

    /// Parses gate-file `text` whose relative paths are taken from `dir`
    /// (absolute, as is `evidence`).
    pub fn parse(text: &str, dir: &Path, evidence: &Path) -> Result<GateFile, String> {
        let raw: RawFile = toml::from_str(text).map_err(|error| error.to_string())?;
        let default_timeout = seconds(raw.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS), "timeout")?;
        if raw.core.is_empty() {
            return Err("no [[core]] table: the gate has nothing to check".into());
        }
        let at = |span: std::ops::Range<usize>| line_of(text, span.start);
        let mut variants = Vec::new();
        for (index, core) in raw.core.iter().enumerate() {
            let name = core.name.get_ref();
            let in_core = |problem: String| {
                format!("line {}: core `{name}`: {problem}", at(core.name.span()))
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(in_core(
                    "the name must be letters, digits, `-`, `_` or `.` (it names evidence files)"
                        .into(),
                ));
            }
            if raw.core[..index]
                .iter()
                .any(|other| other.name.get_ref() == name)
            {
                return Err(in_core("a second [[core]] with this name".into()));
            }
            if core.nodes == 0 {
                return Err(in_core("nodes must be at least 1".into()));
            }
            if let Some(param) = core.params.iter().find(|param| !world_param(param)) {
                return Err(in_core(format!(
                    "params are World parameters (NAME=VALUE, e.g. \"requests=2\"); `{param}` is not one (the gate chooses the search's options itself)"
                )));
            }
            if core.max_depth == Some(0) {
                return Err(in_core(
                    "max_depth must be at least 1 (initial states are depth 1)".into(),
                ));
            }
            let timeout = match core.timeout {
                Some(secs) => seconds(secs, "timeout").map_err(in_core)?,
                None => default_timeout,
            };
            let core_source = RawSource::of(&core.build, &core.library, &core.rust);
            let variant =
                |label: String, bug: u32, source: &RawSource| -> Result<Variant, String> {
                    let source = source
                        .or(&core_source)
                        .resolve(bug, &label, name, dir, evidence)?;
                    Ok(Variant {
                        core: name.clone(),
                        variant: label,
                        expect: None,
                        summary: None,
                        source,
                        nodes: core.nodes,
                        params: core.params.clone(),
                        deadlock: core.deadlock,
                        max_depth: core.max_depth,
                        max_states: core.max_states,
                        timeout,
                        search: Search::Bfs,
                        reduction: core.reduction,
                    })
                };
            if core.control {
                variants
                    .push(variant("control".into(), 0, &RawSource::default()).map_err(in_core)?);
            } else if core.bug.is_empty() {
                return Err(in_core(
                    "control = false and no [[core.bug]]: the configuration checks nothing".into(),
                ));
            }
            for (bug_index, bug) in core.bug.iter().enumerate() {
                let number = *bug.bug.get_ref();
                let in_bug = |problem: String| {
                    format!(
                        "line {}: core `{name}`, bug {number}: {problem}",
                        at(bug.bug.span())
                    )
                };
                if number == 0 {
                    return Err(in_bug("bug numbers start at 1 (0 is the control)".into()));
                }
                if core.bug[..bug_index]
                    .iter()
                    .any(|other| *other.bug.get_ref() == number)
                {
                    return Err(in_bug("listed twice".into()));
                }
                if bug.max_depth == 0 {
                    return Err(in_bug("max_depth must be at least 1".into()));
                }
                let mut planted = variant(
                    format!("bug{number}"),
                    number,
                    &RawSource::of(&bug.build, &bug.library, &bug.rust),
                )
                .map_err(in_bug)?;
                planted.expect = Some(bug.expect.clone());
                planted.summary = bug.summary.clone();
                planted.max_depth = Some(bug.max_depth);
                planted.max_states = Some(bug.max_states);
                if let Some(search) = &bug.search {
                    planted.search = search.resolve(dir).map_err(in_bug)?;
                }
                variants.push(planted);
            }
        }
        Ok(GateFile {
            dir: dir.to_path_buf(),
            variants,
        })
    }
}

impl RawSource {
    fn of(build: &Option<String>, library: &Option<String>, rust: &Option<String>) -> RawSource {
        RawSource {
            build: build.clone(),
            library: library.clone(),
            rust: rust.clone(),
        }
    }

    fn given(&self) -> usize {
        [&self.build, &self.library, &self.rust]
            .iter()
            .filter(|field| field.is_some())
            .count()
    }

    /// This source if it names one, else `fallback`.
    fn or<'a>(&'a self, fallback: &'a RawSource) -> &'a RawSource {
        if self.given() > 0 {
            self
        } else {
            fallback
        }
    }

    fn resolve(
        &self,
        bug: u32,
        label: &str,
        core: &str,
        dir: &Path,
        evidence: &Path,
    ) -> Result<Source, String> {
        if self.given() != 1 {
            return Err("give exactly one of build, library or rust".into());
        }
        let bug_text = bug.to_string();
        if let Some(command) = &self.build {
            if !command.contains("{library}") {
                return Err("the build command must write {library} (e.g. `-o {library}`)".into());
            }
            let library = evidence.join("build").join(format!("lib{core}-{label}.so"));
            let command = command
                .replace("{bug}", &bug_text)
                .replace("{library}", &shell_quote(&library.display().to_string()));
            return Ok(Source::Build { command, library });
        }
        if let Some(library) = &self.library {
            return Ok(Source::Library(
                dir.join(library.replace("{bug}", &bug_text)),
            ));
        }
        let name = self.rust.as_deref().unwrap_or_default();
        let name = name.strip_prefix("rust:").unwrap_or(name);
        if name.is_empty() {
            return Err("rust names a built-in core, e.g. rust = \"paxos\"".into());
        }
        Ok(Source::Rust(match bug {
            0 => format!("rust:{name}"),
            bug => format!("rust:{name}-bug{bug}"),
        }))
    }
}

fn seconds(value: f64, key: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .ok()
        .filter(|duration| !duration.is_zero() && duration.as_secs_f64() <= MAX_TIMEOUT_SECS)
        .ok_or_else(|| {
            format!("{key} must be a positive number of seconds, at most {MAX_TIMEOUT_SECS}")
        })
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `text` as one word for `sh`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<GateFile, String> {
        GateFile::parse(text, Path::new("/gates"), Path::new("/evidence"))
    }

    #[test]
    fn a_core_gives_a_control_and_one_variant_per_bug() {
        let file = parse(
            r#"
            timeout = 30
            [[core]]
            name = "pax"
            rust = "rust:paxos"
            nodes = 5
            params = ["crashes=1"]
            deadlock = false
            max_depth = 16
            [[core.bug]]
            bug = 2
            expect = "PromiseDurable"
            max_depth = 30
            max_states = 1000
            "#,
        )
        .unwrap();
        let [control, bug] = &file.variants[..] else {
            panic!("{:?}", file.variants)
        };
        assert_eq!(control.source, Source::Rust("rust:paxos".into()));
        assert_eq!(
            (control.max_depth, control.expect.as_deref()),
            (Some(16), None)
        );
        assert_eq!(bug.source, Source::Rust("rust:paxos-bug2".into()));
        assert_eq!(bug.variant, "bug2");
        assert_eq!(bug.expect.as_deref(), Some("PromiseDurable"));
        assert_eq!((bug.max_depth, bug.max_states), (Some(30), Some(1000)));
        assert_eq!(bug.params, ["crashes=1"]);
        assert!(!bug.deadlock);
        assert_eq!(bug.timeout, Duration::from_secs(30));
    }

    #[test]
    fn build_commands_get_the_bug_and_the_output_path() {
        let file = parse(
            r#"
            [[core]]
            name = "c"
            build = "cc -DCMC_BUG={bug} core.c -o {library}"
            nodes = 2
            [[core.bug]]
            bug = 3
            expect = "P"
            max_depth = 9
            max_states = 9
            [[core.bug]]
            bug = 4
            library = "prebuilt/lib{bug}.so"
            expect = "P"
            max_depth = 9
            max_states = 9
            "#,
        )
        .unwrap();
        match &file.variants[1].source {
            Source::Build { command, library } => {
                assert_eq!(library, Path::new("/evidence/build/libc-bug3.so"));
                assert_eq!(
                    command,
                    "cc -DCMC_BUG=3 core.c -o '/evidence/build/libc-bug3.so'"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            file.variants[2].source,
            Source::Library("/gates/prebuilt/lib4.so".into())
        );
        assert_eq!(
            file.variants[0].timeout,
            Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS)
        );
    }

    #[test]
    fn mistakes_are_reported_with_their_line() {
        let cases = [
            ("[[core]]\nname = \"a\"\nnodes = \"three\"\nrust = \"x\"\n", "line 3"),
            ("[[core]]\nname = \"a\"\nnodes = 2\n", "exactly one of build, library or rust"),
            ("[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\nlibrary = \"y\"\n", "line 2"),
            ("[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\ncolour = 1\n", "colour"),
            (
                "[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\n[[core.bug]]\nbug = 0\nexpect = \"P\"\nmax_depth = 1\nmax_states = 1\n",
                "line 6",
            ),
            ("[[core]]\nname = \"a\"\nnodes = 2\nbuild = \"cc x.c\"\n", "{library}"),
            ("timeout = -1\n[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\n", "timeout"),
            (
                "timeout = 1e19\n[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\n",
                "timeout must be a positive number of seconds, at most",
            ),
            ("", "no [[core]]"),
            (
                "[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\nsearch = { strategy = \"dfs\" }\n",
                "search",
            ),
        ];
        for (text, expected) in cases {
            let error = parse(text).unwrap_err();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_configuration_of_an_unchanged_library_may_run_its_bugs_without_a_control() {
        let file = parse(
            r#"
            [[core]]
            name = "lib"
            build = "cc lib.c -o {library}"
            nodes = 3
            control = false
            [[core.bug]]
            bug = 1
            expect = "P"
            max_depth = 9
            max_states = 9
            "#,
        )
        .unwrap();
        let [only] = &file.variants[..] else {
            panic!("{:?}", file.variants)
        };
        assert_eq!(only.variant, "bug1");
        let error = parse("[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\ncontrol = false\n")
            .unwrap_err();
        assert!(
            error.contains("line 2") && error.contains("checks nothing"),
            "{error}"
        );
    }

    #[test]
    fn params_are_world_parameters_only() {
        for option in ["--max-states=5", "--max-depth=2", "-x=1", "requests", "=2"] {
            let text = format!(
                "[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\nparams = [\"requests=1\", \"{option}\"]\n"
            );
            let error = parse(&text).unwrap_err();
            assert!(
                error.contains("line 2")
                    && error.contains("World parameters")
                    && error.contains(option),
                "{option}: {error}"
            );
        }
        let file = parse(
            "[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\nparams = [\"crash_nodes=0,1\", \"CFG0=3\"]\n",
        )
        .unwrap();
        assert_eq!(file.variants[0].params, ["crash_nodes=0,1", "CFG0=3"]);
    }

    fn bug_searched_by(search: &str) -> Result<Variant, String> {
        parse(&format!(
            "[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\nmax_depth = 5\n\
             [[core.bug]]\nbug = 1\nexpect = \"P\"\nmax_depth = 40\nmax_states = 9\nsearch = {search}\n"
        ))
        .map(|file| file.variants[1].clone())
    }

    #[test]
    fn a_bug_names_its_search_and_the_gate_passes_it_on() {
        let args = |search: &str| {
            let bug = bug_searched_by(search).unwrap();
            bug.search.check_args(bug.max_depth).join(" ")
        };
        assert_eq!(args("{ strategy = \"bfs\" }"), "--max-depth 40");
        assert_eq!(args("{ strategy = \"dfs\" }"), "--dfs --max-depth 40");
        assert_eq!(
            args("{ strategy = \"walks\", walks = 500, walk_length = 60, seed = 7, swarm = true }"),
            "--simulate --walks 500 --walk-length 60 --seed 7 --swarm"
        );
        assert_eq!(
            args("{ strategy = \"walks\", walks = 5, walk_length = 6, seed = 7, swarm_kinds = true }"),
            "--simulate --walks 5 --walk-length 6 --seed 7 --swarm-kinds"
        );
        assert_eq!(
            args("{ strategy = \"frontier-walks\", depth = 12, walk_length = 30, rounds = 4, seed = 3 }"),
            "--max-depth 12 --frontier-walks 30 --frontier-rounds 4 --seed 3"
        );
        assert_eq!(
            args("{ strategy = \"walks-from\", trace = \"p.cmc-trace\", walks = 9, walk_length = 5, seed = 1 }"),
            "--simulate --walks 9 --walk-length 5 --seed 1 --walks-from /gates/p.cmc-trace"
        );
        // The control of the same core is searched breadth-first, to its own depth.
        let file = parse(
            "[[core]]\nname = \"a\"\nnodes = 2\nrust = \"x\"\nmax_depth = 5\n\
             [[core.bug]]\nbug = 1\nexpect = \"P\"\nmax_depth = 40\nmax_states = 9\nsearch = { strategy = \"dfs\" }\n",
        )
        .unwrap();
        let control = &file.variants[0];
        assert_eq!(
            control.search.check_args(control.max_depth).join(" "),
            "--max-depth 5"
        );
    }

    #[test]
    fn a_search_missing_what_it_needs_is_refused() {
        for (search, expected) in [
            (
                "{ strategy = \"walks\", walks = 5, walk_length = 6 }",
                "needs `seed`",
            ),
            (
                "{ strategy = \"walks\", walk_length = 6, seed = 1 }",
                "needs `walks`",
            ),
            (
                "{ strategy = \"walks\", walks = 0, walk_length = 6, seed = 1 }",
                "at least 1",
            ),
            (
                "{ strategy = \"walks-from\", walks = 5, walk_length = 6, seed = 1 }",
                "needs `trace`",
            ),
            (
                "{ strategy = \"dfs\", seed = 1 }",
                "`seed` does not go with",
            ),
            ("{ strategy = \"sideways\" }", "unknown strategy"),
            ("{ strategy = \"dfs\", colour = 1 }", "colour"),
        ] {
            let error = bug_searched_by(search).unwrap_err();
            assert!(error.contains(expected), "{search}: {error}");
            assert!(
                error.contains("bug 1") || error.contains("colour"),
                "{search}: {error}"
            );
        }
    }
}
