//! The one lookup table of a running command line: [`Catalog`], what the
//! program registered with [`crate::Cli`] (its models, and its cores as a
//! [`CoreCatalog`]), passed by value to every command that finds a model
//! or a core by name: `check` builds a model by name from it, `replay` and
//! `--resume` rebuild the model a file names, `--core rust:NAME` and gate
//! files' `rust = "NAME"` find cores in it, and the supervised children of
//! `check --core` and `gate` run this same executable, so they know the
//! same models and cores.

use std::path::PathBuf;
use std::sync::Arc;

use cmc_model::{Model, ModelParam};
use cmc_models::params::Params;
use cmc_models::registry::ParamSpec;
use cmc_search::{AnyModel, ReplayFile};
use cmc_world::catalog::{check_name, CoreCatalog};
use cmc_world::{Core, WorldArgs};

use crate::distributed::RunModel;
// Without the `explore` feature, the same names refuse to serve.
#[cfg(not(feature = "explore"))]
use crate::without_explore as cmc_explore;

/// Builds a model from its `NAME=VALUE` parameters.
type BuildModel = dyn Fn(&[(String, String)]) -> Result<Box<dyn AnyModel>, String> + Send + Sync;
/// Builds a model and binds the web explorer to it on a port: the explorer
/// needs the model's concrete type, which only its registration knows.
type ExploreModel =
    dyn Fn(&[(String, String)], u16) -> Result<cmc_explore::Server, String> + Send + Sync;

/// A model a program registers: its name (`cmc check NAME`), a one-line
/// summary and its parameters (for `list`), and its constructor.
///
/// Contract of the constructor: the model's [`Model::name`] is the entry's
/// name, and its [`Model::params`] name every parameter it reads (they are
/// recorded in replay files and checkpoints, and the model is rebuilt from
/// them); a check refuses a model that breaks either rule (exit 2).
#[derive(Clone)]
pub struct ModelEntry {
    name: String,
    summary: String,
    params: Vec<ParamSpec>,
    build: Arc<BuildModel>,
    /// `None` for the bundled models, which the explorer knows by type.
    explore: Option<Arc<ExploreModel>>,
    /// Runs the model on the timely engine (which needs its concrete type);
    /// `None` for the bundled models, which it knows by type.
    timely: Option<RunModel>,
}

impl ModelEntry {
    /// A model called `name`, built by `build` from the parameters given on
    /// the command line (read them with [`Params::take_count`] and
    /// [`Params::take_choices`]; a parameter `build` did not read is refused).
    pub fn new<M, F>(name: &str, summary: &str, build: F) -> ModelEntry
    where
        M: Model + Send + 'static,
        F: Fn(&mut Params<'_>) -> Result<M, String> + Send + Sync + 'static,
    {
        let build = Arc::new(move |given: &[(String, String)]| {
            let mut params = Params::new(given);
            let model = build(&mut params)?;
            params.finish()?;
            Ok::<M, String>(model)
        });
        let explore = Arc::clone(&build);
        ModelEntry {
            name: name.to_string(),
            summary: summary.to_string(),
            params: Vec::new(),
            build: Arc::new(move |given: &[(String, String)]| {
                Ok(Box::new(build(given)?) as Box<dyn AnyModel>)
            }),
            explore: Some(Arc::new(move |given: &[(String, String)], port| {
                cmc_explore::Server::bind_model(explore(given)?, port)
            })),
            timely: Some(crate::distributed::run_model::<M>),
        }
    }

    /// Documents a parameter for `list`: its name, its default as text, and
    /// what it means (which values it takes).
    pub fn param(
        mut self,
        name: &'static str,
        default: &'static str,
        meaning: &'static str,
    ) -> Self {
        self.params.push(ParamSpec {
            name,
            default,
            meaning,
        });
        self
    }

    /// The model's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `list` line: name, summary and parameters.
    fn list_line(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|param| format!("{}={} ({})", param.name, param.default, param.meaning))
            .collect();
        format!(
            "{:<14} {}{}{}",
            self.name,
            self.summary,
            if params.is_empty() { "" } else { "; params: " },
            params.join(", ")
        )
    }
}

impl From<cmc_models::registry::ModelEntry> for ModelEntry {
    fn from(entry: cmc_models::registry::ModelEntry) -> ModelEntry {
        let build = entry.build;
        ModelEntry {
            name: entry.name.to_string(),
            summary: entry.summary.to_string(),
            params: entry.params,
            build: Arc::new(build),
            explore: None,
            timely: None,
        }
    }
}

/// What a running command line knows: the program's name, its models and
/// cores, and its default gate file.
#[derive(Clone)]
pub(crate) struct Catalog {
    /// The program's name, in help, messages and hints (`mycheck replay FILE`).
    pub program: String,
    /// The registered models.
    pub models: Vec<ModelEntry>,
    /// The registered cores (cmc-world's example `reqack` first).
    pub cores: CoreCatalog,
    /// The gate file `gate` runs when none is named.
    pub default_gate: Option<PathBuf>,
}

impl Catalog {
    /// A catalog of `program` with cmc-world's example cores only.
    pub fn new(program: &str) -> Catalog {
        Catalog {
            program: program.to_string(),
            models: Vec::new(),
            cores: cmc_world::example_cores::catalog(),
            default_gate: None,
        }
    }

    /// The registered model called `name`.
    pub fn model(&self, name: &str) -> Option<&ModelEntry> {
        self.models.iter().find(|entry| entry.name == name)
    }

    /// The names of the registered models.
    pub fn model_names(&self) -> Vec<&str> {
        self.models
            .iter()
            .map(|entry| entry.name.as_str())
            .collect()
    }

    /// Builds the model `name` with `params`.
    pub fn build_named(
        &self,
        name: &str,
        params: &[(String, String)],
    ) -> Result<Box<dyn AnyModel>, String> {
        let entry = self.model(name).ok_or_else(|| self.unknown_model(name))?;
        self.build(entry, params)
            .map_err(|problem| format!("model `{name}`: {problem}"))
    }

    /// Builds the model `name` with `params` and binds the web explorer to
    /// it on `port` (a program's own models too: their registration knows
    /// their type).
    pub fn explore(
        &self,
        name: &str,
        params: &[(String, String)],
        port: u16,
    ) -> Result<cmc_explore::Server, String> {
        let entry = self.model(name).ok_or_else(|| self.unknown_model(name))?;
        let bound = match &entry.explore {
            Some(explore) => explore(params, port),
            None => self
                .build(entry, params)
                .and_then(|model| cmc_explore::Server::bind(model, port)),
        };
        bound.map_err(|problem| format!("model `{name}`: {problem}"))
    }

    fn unknown_model(&self, name: &str) -> String {
        format!(
            "unknown model `{name}`; the models of {} are: {} (see `{} list`)",
            self.program,
            self.model_names().join(", "),
            self.program
        )
    }

    /// Builds the model `entry` with `params`, holding it to
    /// [`ModelEntry`]'s contract.
    pub fn build(
        &self,
        entry: &ModelEntry,
        params: &[(String, String)],
    ) -> Result<Box<dyn AnyModel>, String> {
        let model = (entry.build)(params)?;
        if model.name() != entry.name {
            return Err(format!(
                "the model registered as `{}` calls itself `{}` (Model::name): they must be \
                 the same, or its replay files and checkpoints could not find it",
                entry.name,
                model.name()
            ));
        }
        let recorded = model.params();
        if let Some((missing, _)) = params
            .iter()
            .find(|(name, _)| !recorded.iter().any(|param| &param.name == name))
        {
            return Err(format!(
                "the model `{}` was given {missing}= but does not report it in Model::params, \
                 so its replay files and checkpoints would rebuild it without it",
                entry.name
            ));
        }
        Ok(model)
    }

    /// The model a recorded name and parameters stand for (a replay file's,
    /// a checkpoint's): a World of the cores they name, or a registered model.
    pub fn model_of_params(
        &self,
        name: &str,
        params: &[(String, String)],
        check_determinism: bool,
    ) -> Result<Box<dyn AnyModel>, String> {
        match world_args_of(params)? {
            Some(mut world) => {
                world.check_determinism = check_determinism;
                self.cores.build_model(&world)
            }
            None => self.build_named(name, params),
        }
    }

    /// The model of the replay file `file`: a World of its cores (with the
    /// determinism check if the trace was recorded with it), or a model.
    pub fn model_of_trace(&self, file: &ReplayFile) -> Result<Box<dyn AnyModel>, String> {
        let check_determinism = file.settings.iter().any(|s| s == "check-determinism");
        self.model_of_params(&file.model, &trace_params(file), check_determinism)
    }

    /// How the timely engine runs the registered model `name`, if its
    /// registration says.
    pub fn timely(&self, name: &str) -> Option<RunModel> {
        self.model(name).and_then(|entry| entry.timely)
    }

    /// One `list` line per model, then one per registered core.
    pub fn list_lines(&self) -> Vec<String> {
        self.models
            .iter()
            .map(ModelEntry::list_line)
            .chain(
                self.cores
                    .entries()
                    .iter()
                    .map(|entry| format!("{:<14} {}", entry.label(), entry.describe())),
            )
            .collect()
    }

    /// What `describe rust:NAME` prints: the Rust core's name and state
    /// sizes, and what its registration says (summary, planted bugs,
    /// default World parameters).
    pub fn describe_core(&self, name: &str) -> Result<String, String> {
        let core = self.cores.rust_core(name).ok_or_else(|| {
            format!(
                "unknown core `rust:{name}`; the Rust cores of {} are: {}",
                self.program,
                self.cores.rust_core_names().join(", ")
            )
        })?;
        let text = format!(
            "core {}\n  rust:{name}\n  durable part: {} bytes\n  volatile part: {} bytes\n",
            core.name(),
            core.durable_size(),
            core.volatile_size()
        );
        Ok(text + &self.registration_of(core))
    }

    /// The lines `describe` adds for a core the program registered (its
    /// entry runs `core`); empty for another.
    pub fn registration_of(&self, core: Arc<dyn Core>) -> String {
        let Some(entry) = self.cores.protocol_of(&[core]) else {
            return String::new();
        };
        let defaults = match entry.default_params() {
            [] => "none".to_string(),
            params => params.join(" "),
        };
        format!(
            "  registered as: {}: {}\n  default World parameters: {defaults}\n",
            entry.label(),
            entry.describe()
        )
    }

    /// Fails on a name that cannot be typed on the command line or that is
    /// taken twice (models among models; cores among all the cores).
    pub fn validate(&self) -> Result<(), String> {
        let mut models: Vec<&str> = Vec::new();
        for name in self.model_names() {
            check_name(name, "model")?;
            if models.contains(&name) {
                return Err(format!("two models are registered as `{name}`"));
            }
            models.push(name);
        }
        self.cores.validate()
    }
}

/// The parameters of a replay file, as pairs.
pub fn trace_params(file: &ReplayFile) -> Vec<(String, String)> {
    file.params
        .iter()
        .map(|p| (p.name.clone(), p.value.clone()))
        .collect()
}

/// The World arguments recorded parameters stand for, if they are a
/// World's (they name cores). The World's name is implied by them.
pub fn world_args_of(params: &[(String, String)]) -> Result<Option<WorldArgs>, String> {
    if !params.iter().any(|(param, _)| param == "core") {
        return Ok(None);
    }
    let params: Vec<ModelParam> = params
        .iter()
        .map(|(param, value)| ModelParam::new(param, value))
        .collect();
    WorldArgs::from_params(&params).map(Some)
}

/// Splits `NAME=VALUE` words into pairs; a word without `=` is an error.
pub fn parse_params(words: &[String]) -> Result<Vec<(String, String)>, String> {
    words
        .iter()
        .map(|word| match word.split_once('=') {
            Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
            _ => Err(format!(
                "model parameter `{word}` is not of the form NAME=VALUE (e.g. RM=5)"
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Cli;
    use cmc_world::catalog::CoreEntry;
    use cmc_world::test_support::StepCore;
    use cmc_world::{World, WorldSpec};

    fn die_hard(params: &mut Params) -> Result<cmc_models::DieHard, String> {
        params.take_count("JUGS", 2, 2..=2)?;
        Ok(cmc_models::DieHard::new())
    }

    fn reqack(bug: u32) -> cmc_world::example_cores::reqack::ReqAck {
        cmc_world::example_cores::reqack::ReqAck { bug }
    }

    fn catalog(cli: Cli) -> Catalog {
        cli.catalog().clone()
    }

    #[test]
    fn core_variants_are_found_by_their_exact_names() {
        let entry = CoreEntry::with_bugs("rust:reqack", 2, reqack);
        assert_eq!(entry.names(), ["reqack", "reqack-bug1", "reqack-bug2"]);
        for name in ["reqack", "reqack-bug1", "reqack-bug2"] {
            assert!(entry.variant(name).is_some(), "{name}");
        }
        for name in [
            "reqack-bug0",
            "reqack-bug3",
            "reqack-bug01",
            "reqack-bugx",
            "reqackx",
            "req",
        ] {
            assert!(entry.variant(name).is_none(), "{name}");
        }
    }

    #[test]
    fn a_model_that_breaks_the_contract_is_refused() {
        // DieHard calls itself `die-hard` and does not record JUGS.
        let catalog = catalog(Cli::new("t").model(ModelEntry::new("jugs", "", die_hard)));
        let entry = catalog.model("jugs").unwrap();
        let error = catalog.build(entry, &[]).err().unwrap();
        assert!(error.contains("calls itself `die-hard`"), "{error}");
        let catalog = catalog_named_die_hard();
        let entry = catalog.model("die-hard").unwrap();
        assert!(catalog.build(entry, &[]).is_ok());
        let given = [("JUGS".to_string(), "2".to_string())];
        let error = catalog.build(entry, &given).err().unwrap();
        assert!(error.contains("JUGS= but does not report it"), "{error}");
        let given = [("JUG".to_string(), "2".to_string())];
        let error = catalog.build(entry, &given).err().unwrap();
        assert!(error.contains("there is no parameter JUG"), "{error}");
    }

    fn catalog_named_die_hard() -> Catalog {
        catalog(Cli::new("t").model(ModelEntry::new("die-hard", "", die_hard)))
    }

    #[test]
    fn registrations_with_bad_or_taken_names_are_refused() {
        let cases = [
            (
                Cli::new("t").model(ModelEntry::new("a b", "", die_hard)),
                "one word",
            ),
            (
                Cli::new("t").model(ModelEntry::new("-a", "", die_hard)),
                "one word",
            ),
            (
                Cli::new("t").model(ModelEntry::new("N=3", "", die_hard)),
                "one word",
            ),
            (
                Cli::new("t")
                    .model(ModelEntry::new("m", "", die_hard))
                    .model(ModelEntry::new("m", "", die_hard)),
                "two models",
            ),
            (
                Cli::new("t").core(CoreEntry::with_bugs("reqack", 0, reqack)),
                "one of cmc's own",
            ),
            (
                Cli::new("t")
                    .core(CoreEntry::with_bugs("mine", 1, reqack))
                    .core(CoreEntry::new("mine-bug1", || reqack(0))),
                "rust:mine-bug1` is registered twice",
            ),
            (
                Cli::bundled().core(CoreEntry::new("paxos", || reqack(0))),
                "registered twice",
            ),
            (
                Cli::new("t").core(CoreEntry::new("", || reqack(0))),
                "one word",
            ),
            (
                Cli::new("t").core(CoreEntry::new("mine", || reqack(0)).defaults(&["requests"])),
                "defaults are NAME=VALUE",
            ),
        ];
        for (cli, why) in cases {
            let error = catalog(cli).validate().unwrap_err();
            assert!(error.contains(why), "{why}: {error}");
        }
        assert_eq!(catalog(Cli::bundled()).validate(), Ok(()));
        let mine = Cli::new("t")
            .model(ModelEntry::new("die-hard", "", die_hard))
            .core(CoreEntry::with_bugs("mine", 2, reqack));
        assert_eq!(catalog(mine).validate(), Ok(()));
    }

    #[test]
    fn a_cores_properties_apply_when_every_node_runs_it() {
        let catalog = catalog(
            Cli::new("t").core(
                CoreEntry::with_bugs("mine", 1, reqack)
                    .properties(cmc_world::example_cores::reqack::properties),
            ),
        );
        // The names of the properties the catalog adds to a World of `cores`.
        let added = |cores: Vec<Arc<dyn Core>>| -> Vec<String> {
            let world = World::new(WorldSpec::with_cores(cores, vec![0, 1]).unwrap());
            let built_in = world.properties().len();
            let world = catalog.cores.equip(world);
            let properties = world.properties();
            properties[built_in..]
                .iter()
                .map(|p| p.name.clone())
                .collect()
        };
        let mine = catalog.cores.rust_core("mine-bug1").unwrap();
        assert_eq!(
            added(vec![Arc::clone(&mine), Arc::clone(&mine)]),
            ["AckedIsDurable"]
        );
        let other: Arc<dyn Core> = Arc::new(reqack(0));
        // Another core with the same name but another state layout.
        let smaller: Arc<dyn Core> = Arc::new(StepCore::<u8>::idle("reqack"));
        assert_eq!(added(vec![mine, other]).len(), 1);
        assert!(added(vec![smaller, catalog.cores.rust_core("mine").unwrap()]).is_empty());
    }
}
