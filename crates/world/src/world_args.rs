//! Building a World from command-line inputs: `--core PATH` (one or several),
//! `--nodes N`, `NAME=VALUE` parameters and `--check-determinism`.
//!
//! A C core is recorded in the World's parameters (and so in replay files
//! and checkpoints) by its absolute path, `core=/abs/libcore.so`, followed by
//! a digest of the library's bytes, `core_digest=xxh3-128:HEX`. Building a
//! World from recorded parameters refuses a library whose bytes changed.

use std::path::PathBuf;
use std::sync::Arc;

use cmc_model::ModelParam;

use crate::catalog::CoreCatalog;
use crate::core::ghost_table::CGhost;
use crate::core::input_file::read_regular_file;
use crate::core::loader::CCore;
use crate::core::property_table::CProperty;
use crate::core::Core;
use crate::example_cores;
use crate::heap::{c_adapter, HeapCore};
use crate::properties::c_ghosts::attach_ghosts;
use crate::properties::c_properties::attach;
use crate::system::spec::{WorldSpec, NODES_MAX};
use crate::system::{World, SELECT_PARAM};

/// The parameter that records a C core library's digest, after its `core=`.
pub const CORE_DIGEST_PARAM: &str = "core_digest";

/// What the command line says about the World to check; [`build_world`]
/// turns it into a World.
///
/// ```
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::{build_world, WorldArgs};
///
/// // cmc check --core rust:reqack-bug2 --nodes 2 requests=1 crashes=1 ...
/// let args = WorldArgs {
///     cores: vec!["rust:reqack-bug2".into()],
///     nodes: 2,
///     params: ["requests=1", "crashes=1", "restarts=1", "crash_nodes=1"]
///         .map(String::from).to_vec(),
///     check_determinism: false,
/// };
/// // The World comes with the known core's own properties.
/// let outcome = Checker::new(build_world(&args)?).workers(1).run();
/// assert!(matches!(&outcome.verdict,
///     Verdict::Violated { property, .. } if property == "AckedIsDurable"));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorldArgs {
    /// Each `--core`: a shared library path, or `rust:NAME` for a built-in Rust
    /// core (`rust:reqack`, `rust:reqack-bug1`, `rust:reqack-bug2`).
    pub cores: Vec<String>,
    /// `--nodes N`.
    pub nodes: usize,
    /// `NAME=VALUE` parameters (see [`crate::system::spec::param_help`]), and the
    /// `core_digest=` entries of recorded parameters (one per C core, in order).
    pub params: Vec<String>,
    /// `--check-determinism`.
    pub check_determinism: bool,
}

impl WorldArgs {
    /// The arguments a World was built with, from its [`cmc_model::Model::params`]
    /// (as a replay file records them): `core=` entries, `nodes=`, and the
    /// `NAME=VALUE` parameters. For `cmc replay FILE` of a World trace; an
    /// `Err` for a node count out of range.
    ///
    /// ```
    /// use cmc_model::Model;
    /// use cmc_world::{build_world, WorldArgs};
    ///
    /// let args = WorldArgs {
    ///     cores: vec!["rust:reqack".into()],
    ///     nodes: 2,
    ///     params: vec!["requests=1".into()],
    ///     ..WorldArgs::default()
    /// };
    /// // A replay file records a World's parameters: they give back its arguments.
    /// let recorded = build_world(&args)?.params();
    /// assert_eq!(WorldArgs::from_params(&recorded)?, args);
    /// # Ok::<(), String>(())
    /// ```
    pub fn from_params(params: &[ModelParam]) -> Result<WorldArgs, String> {
        let mut args = WorldArgs::default();
        for param in params {
            match param.name.as_str() {
                "core" => args.cores.push(param.value.clone()),
                "nodes" => args.nodes = node_count(&param.value)?,
                _ => args.params.push(format!("{}={}", param.name, param.value)),
            }
        }
        Ok(args)
    }
}

/// Parses a node count, `1..=NODES_MAX`.
fn node_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(nodes) if (1..=NODES_MAX).contains(&nodes) => Ok(nodes),
        _ => Err(format!("nodes={text}: a world has 1 to {NODES_MAX} nodes")),
    }
}

/// Largest core library read to compute its digest.
const CORE_LIBRARY_MAX_BYTES: u64 = 1 << 30;

/// The digest recorded for a core library's bytes.
fn digest(bytes: &[u8]) -> String {
    format!("xxh3-128:{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// A loaded core, and the parameters that record it.
struct Opened {
    core: Arc<dyn Core>,
    recorded: Vec<ModelParam>,
    /// Properties a C core's library declares (`CMC_PROPERTIES`).
    properties: Vec<CProperty>,
    /// Ghost variables a C core's library declares (`CMC_GHOSTS`).
    ghosts: Vec<CGhost>,
}

fn open_core(catalog: &CoreCatalog, name: &str) -> Result<Opened, String> {
    if let Some(builtin) = name.strip_prefix("rust:") {
        let core = catalog.rust_core(builtin).ok_or_else(|| {
            format!(
                "unknown built-in core `{name}`; built-in cores: {}",
                catalog.rust_core_names().join(", ")
            )
        })?;
        return Ok(Opened {
            core,
            recorded: vec![ModelParam::new("core", name)],
            properties: Vec::new(),
            ghosts: Vec::new(),
        });
    }
    let path = PathBuf::from(name);
    let bytes = read_regular_file(&path, "core library", CORE_LIBRARY_MAX_BYTES)?;
    let absolute =
        std::path::absolute(&path).map_err(|problem| format!("core library {name}: {problem}"))?;
    let recorded = vec![
        ModelParam::new("core", absolute.display().to_string()),
        ModelParam::new(CORE_DIGEST_PARAM, digest(&bytes)),
    ];
    // A library exporting `cmc_heap_core_entry` is a heap-state adapter.
    if let Some((adapter, properties, ghosts)) =
        c_adapter::load(&absolute).map_err(|e| e.to_string())?
    {
        return Ok(Opened {
            core: Arc::new(HeapCore::new(adapter)),
            recorded,
            properties,
            ghosts,
        });
    }
    let core = CCore::load(&absolute).map_err(|e| e.to_string())?;
    Ok(Opened {
        properties: core.properties().to_vec(),
        ghosts: core.ghosts().to_vec(),
        core: Arc::new(core),
        recorded,
    })
}

/// Splits the recorded `core_digest=` entries from the World parameters.
fn split_digests(params: &[String]) -> (Vec<String>, Vec<String>) {
    let mut digests = Vec::new();
    let mut rest = Vec::new();
    for param in params {
        match param.split_once('=') {
            Some((name, value)) if name.trim() == CORE_DIGEST_PARAM => {
                digests.push(value.trim().to_string())
            }
            _ => rest.push(param.clone()),
        }
    }
    (digests, rest)
}

/// Fails if recorded digests are given and a C core's library is not the one
/// they were recorded from.
fn check_digests(opened: &[Opened], recorded: &[String]) -> Result<(), String> {
    if recorded.is_empty() {
        return Ok(());
    }
    let now: Vec<(&str, &str)> = opened
        .iter()
        .filter_map(|core| match core.recorded.as_slice() {
            [path, digest] => Some((path.value.as_str(), digest.value.as_str())),
            _ => None,
        })
        .collect();
    if now.len() != recorded.len() {
        return Err(format!(
            "{} {CORE_DIGEST_PARAM} entries for {} core librar{}",
            recorded.len(),
            now.len(),
            if now.len() == 1 { "y" } else { "ies" }
        ));
    }
    for ((path, digest), expected) in now.iter().zip(recorded) {
        if digest != expected {
            return Err(format!(
                "the core library {path} has changed since it was recorded \
                 ({expected} then, {digest} now): rebuild it from the same source, \
                 or record the trace again"
            ));
        }
    }
    Ok(())
}

/// One core of a World's parameters: its `core=` entry (its index in the
/// list and its value) and the `core_digest=` right after it, if any.
struct RecordedCore<'a> {
    index: usize,
    path: &'a str,
    digest: Option<&'a str>,
}

/// The cores of a World's parameters, in order.
fn recorded_cores(params: &[ModelParam]) -> Vec<RecordedCore<'_>> {
    params
        .iter()
        .enumerate()
        .filter(|(_, param)| param.name == "core")
        .map(|(index, param)| RecordedCore {
            index,
            path: &param.value,
            digest: params
                .get(index + 1)
                .filter(|next| next.name == CORE_DIGEST_PARAM)
                .map(|next| next.value.as_str()),
        })
        .collect()
}

/// A trace's recorded World parameters (`recorded`, from a replay file)
/// made to name the core libraries of the World that replays it
/// (`current`, its [`cmc_model::Model::params`]), so that a trace recorded
/// with a library at one path replays with the same library at another.
///
/// A C core is matched by the digest of its library's bytes, never by its
/// path: where the recorded and current digests are equal, the recorded
/// path becomes the current one; where they differ, the libraries are not
/// the same and the answer is an `Err` that names both. Cores recorded
/// without a digest, built-in Rust cores and a different number of cores
/// are left as recorded (the replay then reports any difference).
///
/// ```
/// use cmc_model::ModelParam;
/// use cmc_world::world_args::relocate_cores;
///
/// let world = |path: &str, digest: &str| {
///     vec![
///         ModelParam::new("core", path),
///         ModelParam::new("core_digest", digest),
///         ModelParam::new("requests", "2"),
///     ]
/// };
/// let recorded = world("/home/a/libraft.so", "xxh3-128:11");
/// // The same bytes built elsewhere: the trace now names the new path.
/// let here = world("/ci/build/libraft.so", "xxh3-128:11");
/// assert_eq!(relocate_cores(&recorded, &here)?, here);
/// // Other bytes: refused, naming both libraries.
/// let other = world("/ci/build/libraft.so", "xxh3-128:22");
/// let refused = relocate_cores(&recorded, &other).unwrap_err();
/// assert!(refused.contains("/home/a/libraft.so") && refused.contains("xxh3-128:22"));
/// # Ok::<(), String>(())
/// ```
pub fn relocate_cores(
    recorded: &[ModelParam],
    current: &[ModelParam],
) -> Result<Vec<ModelParam>, String> {
    let mut relocated = recorded.to_vec();
    let (then, now) = (recorded_cores(recorded), recorded_cores(current));
    if then.len() != now.len() {
        return Ok(relocated);
    }
    for (then, now) in then.iter().zip(&now) {
        match (then.digest, now.digest) {
            (Some(expected), Some(digest)) if expected == digest => {
                relocated[then.index].value = now.path.to_string();
            }
            (Some(expected), Some(digest)) => {
                return Err(format!(
                    "the trace was recorded with the core library {} ({expected}), and the \
                     core library given is {} ({digest}): not the same library. Build it \
                     from the same sources with the same compiler, or record the trace again",
                    then.path, now.path
                ))
            }
            _ => {}
        }
    }
    Ok(relocated)
}

/// [`CoreCatalog::build_world`] with this crate's example cores only
/// ([`example_cores::catalog`]: `rust:reqack`); a front end passes its own catalog.
///
/// ```
/// use cmc_world::{build_world, WorldArgs};
///
/// let args = |params: &[&str]| WorldArgs {
///     cores: vec!["rust:reqack".into()],
///     nodes: 2,
///     params: params.iter().map(|p| p.to_string()).collect(),
///     ..WorldArgs::default()
/// };
/// assert!(build_world(&args(&["requests=2"])).is_ok());
/// let refused = build_world(&args(&["drops=lots"])).err().expect("refused");
/// assert!(refused.contains("drops"), "{refused}");
/// let no_core = build_world(&WorldArgs { nodes: 2, ..WorldArgs::default() });
/// assert!(no_core.err().expect("refused").contains("no core given"));
/// ```
pub fn build_world(args: &WorldArgs) -> Result<World, String> {
    example_cores::catalog().build_world(args)
}

impl CoreCatalog {
    /// Loads the cores (`rust:NAME` from this catalog) and builds the World:
    /// the World parameters of the protocol its cores run
    /// ([`CoreEntry::defaults`](crate::catalog::CoreEntry::defaults)) where
    /// `args` does not give them, then `args`'s; equipped as the protocol's
    /// entry says; with the C properties of its libraries; and, with
    /// `INVARIANTS=A,B`, only the properties so named (see
    /// [`World::select_properties`]). Every problem is an `Err` with the
    /// message for the user (the CLI exits with code 2).
    pub fn build_world(&self, args: &WorldArgs) -> Result<World, String> {
        if args.cores.is_empty() {
            return Err("no core given: pass --core ./libcore.so (or --core rust:reqack)".into());
        }
        let nodes = node_count(&args.nodes.to_string())?;
        let (digests, params) = split_digests(&args.params);
        let (selected, params) = split_selection(&params);
        let opened = args
            .cores
            .iter()
            .map(|name| open_core(self, name))
            .collect::<Result<Vec<_>, _>>()?;
        check_digests(&opened, &digests)?;
        let cores: Vec<Arc<dyn Core>> = opened.iter().map(|core| Arc::clone(&core.core)).collect();
        let c_properties = c_properties_of(&opened)?;
        let c_ghosts: Vec<CGhost> = each_library(&opened)
            .flat_map(|core| core.ghosts.iter().cloned())
            .collect();
        let protocol = self.protocol_of(&cores);
        let roles = if cores.len() == 1 {
            vec![0; nodes]
        } else if cores.len() == nodes {
            (0..nodes).collect()
        } else {
            // Placeholder roles; a `roles=` parameter must follow.
            vec![0; nodes]
        };
        let mut spec = WorldSpec::with_cores(cores, roles)?;
        spec.applied
            .extend(opened.into_iter().flat_map(|core| core.recorded));
        if let Some(entry) = protocol {
            for default in entry.default_params() {
                apply_default(&mut spec, entry.name(), default, &params)?;
            }
        }
        spec.set_all(&params)?;
        let many = spec.cores.len() > 1 && spec.cores.len() != nodes;
        if many && !params.iter().any(|p| p.starts_with("roles=")) {
            return Err(format!(
                "{} cores for {nodes} nodes: say which node runs which with roles=I,J,.. (core indexes from 0)",
                spec.cores.len(),
            ));
        }
        spec.check_determinism = args.check_determinism;
        let world = World::new(spec);
        let world = match protocol {
            Some(entry) => entry.equip_world(world),
            None => world,
        };
        let world = attach(world, &c_properties)?;
        let world = attach_ghosts(world, &c_ghosts)?;
        match selected {
            Some(names) => world.select_properties(&names),
            None => Ok(world),
        }
    }

    /// [`CoreCatalog::build_world`] behind the command line's model type. A
    /// core fault ends a supervised child (see [`crate::supervise`]);
    /// elsewhere it makes the search's verdict an error that names it.
    pub fn build_model(&self, args: &WorldArgs) -> Result<Box<dyn cmc_search::AnyModel>, String> {
        Ok(Box::new(self.build_world(args)?))
    }
}

/// Applies the registration default `default` of the protocol `protocol`
/// unless `given` (the command line's parameters) sets the same name; a
/// refused default names where it came from.
fn apply_default(
    spec: &mut WorldSpec,
    protocol: &str,
    default: &str,
    given: &[String],
) -> Result<(), String> {
    let (name, value) = default
        .split_once('=')
        .ok_or_else(|| format!("the default `{default}` of core `{protocol}` is not NAME=VALUE"))?;
    let (name, value) = (name.trim(), value.trim());
    let overridden = given
        .iter()
        .any(|param| param.split_once('=').is_some_and(|(n, _)| n.trim() == name));
    if overridden {
        return Ok(());
    }
    spec.set(name, value).map_err(|problem| {
        format!(
            "{problem} (a default of the core `{protocol}`'s registration: give {name}= \
             on the command line to override it)"
        )
    })
}

/// Splits an `INVARIANTS=A,B` entry from the World parameters: the names
/// it lists (`Some`, possibly empty, which selection refuses) and the rest.
fn split_selection(params: &[String]) -> (Option<Vec<String>>, Vec<String>) {
    let mut selected = None;
    let mut rest = Vec::new();
    for param in params {
        match param.split_once('=') {
            Some((name, value)) if name.trim() == SELECT_PARAM => {
                let names = value
                    .split(',')
                    .map(|name| name.trim().to_string())
                    .filter(|name| !name.is_empty());
                selected.get_or_insert_with(Vec::new).extend(names);
            }
            _ => rest.push(param.clone()),
        }
    }
    (selected, rest)
}

/// The C properties of the opened libraries, each library's once (a library
/// given twice declares the same properties); two libraries declaring the
/// same name are refused.
fn c_properties_of(opened: &[Opened]) -> Result<Vec<CProperty>, String> {
    let mut all: Vec<CProperty> = Vec::new();
    for core in each_library(opened) {
        for property in &core.properties {
            if all.iter().any(|p| p.name() == property.name()) {
                return Err(format!(
                    "two core libraries declare a property named `{}`: rename one",
                    property.name()
                ));
            }
            all.push(property.clone());
        }
    }
    Ok(all)
}

/// The opened cores, one per library (a library loaded for several cores
/// declares its properties and ghost variables once).
fn each_library(opened: &[Opened]) -> impl Iterator<Item = &Opened> {
    let mut seen: Vec<&str> = Vec::new();
    opened.iter().filter(move |core| {
        let path = core.recorded[0].value.as_str();
        let first = !seen.contains(&path);
        seen.push(path);
        first
    })
}

/// [`build_world`] behind the command line's model type, with this
/// crate's example cores (see [`CoreCatalog::build_model`]).
///
/// ```
/// use cmc_search::SearchOptions;
/// use cmc_world::{build_model, WorldArgs};
///
/// let args = WorldArgs {
///     cores: vec!["rust:reqack".into()],
///     nodes: 2,
///     params: vec!["requests=1".into()],
///     ..WorldArgs::default()
/// };
/// let model = build_model(&args)?;
/// assert_eq!(model.name(), "world(reqack)");
/// let report = model.check(&SearchOptions { workers: 1, ..SearchOptions::default() });
/// assert_eq!((report.verdict.as_str(), report.complete), ("pass", true));
/// # Ok::<(), String>(())
/// ```
pub fn build_model(args: &WorldArgs) -> Result<Box<dyn cmc_search::AnyModel>, String> {
    example_cores::catalog().build_model(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cores: &[&str], nodes: usize, params: &[&str]) -> WorldArgs {
        WorldArgs {
            cores: cores.iter().map(|c| c.to_string()).collect(),
            nodes,
            params: params.iter().map(|p| p.to_string()).collect(),
            check_determinism: false,
        }
    }

    #[test]
    fn a_refused_default_names_the_registration_it_came_from() {
        use crate::catalog::CoreEntry;
        let catalog = CoreCatalog::new().with(
            CoreEntry::new("reqack", example_cores::reqack::ReqAck::default)
                .defaults(&["clients=5"]),
        );
        let error = catalog
            .build_world(&args(&["rust:reqack"], 2, &[]))
            .err()
            .unwrap();
        assert!(
            error.contains("clients=5: node 5 does not exist")
                && error.contains("a default of the core `reqack`'s registration"),
            "{error}"
        );
        // Given on the command line, the default is left out.
        let world = catalog
            .build_world(&args(&["rust:reqack"], 2, &["clients=1"]))
            .unwrap();
        assert_eq!(world.spec().client_nodes, [1]);
    }

    #[test]
    fn node_counts_are_bounded_before_anything_is_allocated() {
        for nodes in [0, NODES_MAX + 1, usize::MAX, 1 << 40] {
            let error = build_world(&args(&["rust:reqack"], nodes, &[]))
                .err()
                .unwrap();
            assert!(
                error.contains(&format!("1 to {NODES_MAX} nodes")),
                "{nodes}: {error}"
            );
        }
        let huge = [ModelParam::new("nodes", "18446744073709551615")];
        assert!(WorldArgs::from_params(&huge)
            .unwrap_err()
            .contains(&format!("1 to {NODES_MAX}")));
        assert!(build_world(&args(&["rust:reqack"], NODES_MAX, &[])).is_ok());
    }

    #[test]
    fn non_regular_files_are_refused_without_opening_them() {
        let dir = std::env::temp_dir().join(format!("cmc-open-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let cases = [
            (fifo.to_str().unwrap().to_string(), "a FIFO"),
            ("/dev/zero".to_string(), "a device"),
            (dir.display().to_string(), "a directory"),
        ];
        for (path, is) in cases {
            let error = build_world(&args(&[&path], 2, &[])).err().unwrap();
            assert!(error.contains(is), "{path}: {error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
