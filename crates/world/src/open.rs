//! Building a World from command-line inputs: `--core PATH` (one or several),
//! `--nodes N`, `NAME=VALUE` parameters and `--check-determinism`.

use std::path::PathBuf;
use std::sync::Arc;

use cmc_model::ModelParam;

use crate::core::Core;
use crate::cores;
use crate::loader::CCore;
use crate::spec::WorldSpec;
use crate::world::World;

/// What the command line says about the World to check.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorldArgs {
    /// Each `--core`: a shared library path, or `rust:NAME` for a built-in Rust
    /// core (`rust:reqack`, `rust:reqack-bug1`, `rust:reqack-bug2`).
    pub cores: Vec<String>,
    /// `--nodes N`.
    pub nodes: usize,
    /// `NAME=VALUE` parameters (see [`crate::spec::PARAM_HELP`]).
    pub params: Vec<String>,
    /// `--check-determinism`.
    pub check_determinism: bool,
}

impl WorldArgs {
    /// The arguments a World was built with, from its [`cmc_model::Model::params`]
    /// (as a replay file records them): `core=` entries, `nodes=`, and the
    /// `NAME=VALUE` parameters. For `cmc replay FILE` of a World trace.
    pub fn from_params(params: &[ModelParam]) -> Result<WorldArgs, String> {
        let mut args = WorldArgs::default();
        for param in params {
            match param.name.as_str() {
                "core" => args.cores.push(param.value.clone()),
                "nodes" => {
                    args.nodes = param
                        .value
                        .parse()
                        .map_err(|_| format!("nodes={}: expected a number", param.value))?
                }
                _ => args.params.push(format!("{}={}", param.name, param.value)),
            }
        }
        Ok(args)
    }
}

fn open_core(name: &str) -> Result<Arc<dyn Core>, String> {
    match name.strip_prefix("rust:") {
        Some(builtin) => cores::any_rust_core(builtin).ok_or_else(|| {
            format!(
                "unknown built-in core `{name}`; built-in cores: {}",
                cores::any_rust_core_names().join(", ")
            )
        }),
        None => Ok(Arc::new(
            CCore::load(&PathBuf::from(name)).map_err(|e| e.to_string())?,
        )),
    }
}

/// Loads the cores and builds the World, with the properties of known cores
/// (see [`cores::properties_for`]). Every problem is an `Err` with the message
/// for the user (the CLI exits with code 2).
pub fn build_world(args: &WorldArgs) -> Result<World, String> {
    if args.cores.is_empty() {
        return Err("no core given: pass --core ./libcore.so (or --core rust:reqack)".into());
    }
    let cores = args
        .cores
        .iter()
        .map(|name| open_core(name))
        .collect::<Result<Vec<_>, _>>()?;
    let roles = if cores.len() == 1 {
        vec![0; args.nodes]
    } else if cores.len() == args.nodes {
        (0..args.nodes).collect()
    } else {
        // Placeholder roles; a `roles=` parameter must follow.
        vec![0; args.nodes]
    };
    let mut spec = WorldSpec::with_cores(cores, roles)?;
    spec.applied
        .extend(args.cores.iter().map(|core| ModelParam::new("core", core)));
    spec.set_all(&args.params)?;
    let many = spec.cores.len() > 1 && spec.cores.len() != args.nodes;
    if many && !args.params.iter().any(|p| p.starts_with("roles=")) {
        return Err(format!(
            "{} cores for {} nodes: say which node runs which with roles=I,J,.. (core indexes from 0)",
            spec.cores.len(),
            args.nodes
        ));
    }
    spec.check_determinism = args.check_determinism;
    let properties = cores::properties_for(&spec);
    Ok(properties
        .into_iter()
        .fold(World::new(spec), World::with_property))
}

/// [`build_world`] behind the command line's model type. A core fault ends
/// a supervised child (see [`crate::supervise`]); elsewhere it makes the
/// search's verdict an error that names it.
pub fn build_model(args: &WorldArgs) -> Result<Box<dyn cmc_search::AnyModel>, String> {
    Ok(Box::new(build_world(args)?))
}
