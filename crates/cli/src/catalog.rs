//! The front end as a library: a program registers its models and Rust
//! cores with [`Cli`] and gets every command of `cmc` for them.
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
//!         .core(CoreEntry::with_bugs("wal", 2, |bug| Wal { bug }))
//!         .run()
//! }
//! ```
//!
//! The registrations are the process's catalog while a command runs
//! ([`Cli::run`] installs them): `check` builds a model by name from it,
//! `replay` and `--resume` rebuild the model a file names, `--core rust:NAME`
//! and gate files' `rust = "NAME"` find cores in it, and the supervised
//! children of `check --core` and `gate` run this same executable, so they
//! know the same models and cores.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Once, RwLock};

use cmc_model::{Model, Property};
use cmc_models::params::Params;
use cmc_models::registry::ParamSpec;
use cmc_search::AnyModel;
use cmc_world::cores::{CoreCatalog, Equipped};
use cmc_world::{Core, World, WorldSpec};

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
    timely: Option<crate::distributed::RunModel>,
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

    /// How the timely engine runs this model, if its registration says.
    pub(crate) fn timely(&self) -> Option<crate::distributed::RunModel> {
        self.timely
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

/// Makes the core of planted bug `bug` (0: the correct core).
type MakeCore = dyn Fn(u32) -> Arc<dyn Core> + Send + Sync;
/// The properties a core's protocol must keep.
type CoreProperties = dyn Fn() -> Vec<Property<World>> + Send + Sync;

/// A Rust core a program registers, for `--core rust:NAME` and gate files'
/// `rust = "NAME"`: the correct core `rust:NAME` and, with planted bugs,
/// `rust:NAME-bug1` to `rust:NAME-bugN`; and the properties of its protocol,
/// checked in every World whose nodes all run it (in process, or the same
/// core exported as a shared library: recognised by its name and state sizes).
#[derive(Clone)]
pub struct CoreEntry {
    name: String,
    bugs: u32,
    make: Arc<MakeCore>,
    properties: Option<Arc<CoreProperties>>,
}

impl CoreEntry {
    /// The core `rust:NAME` (`name` with or without the `rust:` prefix).
    pub fn new<C, F>(name: &str, make: F) -> CoreEntry
    where
        C: Core + 'static,
        F: Fn() -> C + Send + Sync + 'static,
    {
        CoreEntry::with_bugs(name, 0, move |_| make())
    }

    /// The core `rust:NAME` (`make(0)`) and its planted bugs `rust:NAME-bugN`
    /// (`make(N)`, for N from 1 to `bugs`).
    pub fn with_bugs<C, F>(name: &str, bugs: u32, make: F) -> CoreEntry
    where
        C: Core + 'static,
        F: Fn(u32) -> C + Send + Sync + 'static,
    {
        CoreEntry {
            name: name.strip_prefix("rust:").unwrap_or(name).to_string(),
            bugs,
            make: Arc::new(move |bug| Arc::new(make(bug)) as Arc<dyn Core>),
            properties: None,
        }
    }

    /// The properties of the core's protocol (e.g. `Property::always` over
    /// `world.inspect(state)`), added to the World's built-in ones.
    pub fn properties<F>(mut self, properties: F) -> CoreEntry
    where
        F: Fn() -> Vec<Property<World>> + Send + Sync + 'static,
    {
        self.properties = Some(Arc::new(properties));
        self
    }

    /// Every name this entry answers to, without `rust:`.
    fn names(&self) -> Vec<String> {
        std::iter::once(self.name.clone())
            .chain((1..=self.bugs).map(|bug| format!("{}-bug{bug}", self.name)))
            .collect()
    }

    /// The variant called `name` (without `rust:`), if it is one of this entry's.
    fn variant(&self, name: &str) -> Option<Arc<dyn Core>> {
        let bug = match name.strip_prefix(self.name.as_str())? {
            "" => 0,
            rest => rest
                .strip_prefix("-bug")?
                .parse::<u32>()
                .ok()
                .filter(|bug| (1..=self.bugs).contains(bug) && *rest == format!("-bug{bug}"))?,
        };
        Some((self.make)(bug))
    }

    /// The protocol's properties when every node of `spec` runs this core
    /// (same name and state sizes as the correct core); `None` otherwise.
    fn properties_for(&self, spec: &WorldSpec) -> Option<Vec<Property<World>>> {
        let properties = self.properties.as_ref()?;
        let reference = (self.make)(0);
        spec.cores
            .iter()
            .all(|core| {
                core.name() == reference.name()
                    && core.durable_size() == reference.durable_size()
                    && core.volatile_size() == reference.volatile_size()
            })
            .then(|| properties())
    }

    /// The `list` line.
    fn list_line(&self) -> String {
        let bugs = match self.bugs {
            0 => String::new(),
            1 => format!("; planted bug rust:{}-bug1", self.name),
            n => format!("; planted bugs rust:{0}-bug1 to rust:{0}-bug{n}", self.name),
        };
        format!(
            "{:<14} Rust core (--core rust:{}){bugs}",
            format!("rust:{}", self.name),
            self.name
        )
    }
}

/// A program's command line: its name, models and Rust cores.
///
/// `run` gives it every command of `cmc` (`list`, `check` with its
/// strategies, progress, JSON, checkpoints and supervision, `replay`,
/// `gate`, `describe`, `purity`) over what it registered.
#[derive(Clone)]
pub struct Cli {
    catalog: Catalog,
}

/// What a running command line knows.
#[derive(Clone)]
pub(crate) struct Catalog {
    /// The program's name, in help, messages and hints (`mycheck replay FILE`).
    pub program: String,
    models: Vec<ModelEntry>,
    cores: Vec<CoreEntry>,
    /// Core catalogs of other crates (e.g. the reference protocols).
    core_catalogs: Vec<CoreCatalog>,
    /// The gate file `gate` runs when none is named.
    pub default_gate: Option<PathBuf>,
}

impl Cli {
    /// An empty command line for the program called `program`.
    pub fn new(program: &str) -> Cli {
        Cli {
            catalog: Catalog {
                program: program.to_string(),
                models: Vec::new(),
                cores: Vec::new(),
                core_catalogs: Vec::new(),
                default_gate: None,
            },
        }
    }

    /// The `cmc` command itself: [`Cli::new`]`("cmc")` [`with_bundled`](Cli::with_bundled).
    pub fn bundled() -> Cli {
        Cli::new("cmc").with_bundled()
    }

    /// Adds cmc's bundled models (`cmc-models`) and, with the
    /// `reference-cores` feature (on by default), the reference protocols'
    /// Rust cores (`cmc-protocols`) and their gate file as the default of `gate`.
    pub fn with_bundled(mut self) -> Cli {
        self.catalog.models.extend(
            cmc_models::registry::bundled()
                .into_iter()
                .map(ModelEntry::from),
        );
        #[cfg(feature = "reference-cores")]
        {
            self.catalog.core_catalogs.push(cmc_protocols::catalog());
            self.catalog.default_gate = Some(PathBuf::from(crate::gate::REFERENCE_GATE));
        }
        self
    }

    /// Registers a model.
    pub fn model(mut self, entry: ModelEntry) -> Cli {
        self.catalog.models.push(entry);
        self
    }

    /// Registers a Rust core.
    pub fn core(mut self, entry: CoreEntry) -> Cli {
        self.catalog.cores.push(entry);
        self
    }

    /// Registers another crate's catalog of cores and protocol properties.
    pub fn core_catalog(mut self, catalog: CoreCatalog) -> Cli {
        self.catalog.core_catalogs.push(catalog);
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
    /// process and returns the exit code (see [`crate::run`]). The
    /// registrations become the process's catalog; a wrong registration (an
    /// empty or repeated name, a core name another catalog already has) is
    /// exit 2 with the reason.
    pub fn run_args<I, T>(self, args: I) -> u8
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let program = self.catalog.program.clone();
        if let Err(problem) = self.catalog.validate() {
            eprintln!("{program}: error: {problem}");
            return crate::EXIT_USAGE;
        }
        install(self.catalog);
        crate::run_installed(&program, args)
    }
}

/// The catalog of the command line running in this process.
static CURRENT: RwLock<Option<Arc<Catalog>>> = RwLock::new(None);

/// Makes `catalog` the process's catalog, and the process's World cores
/// and properties come from it (see [`cmc_world::cores::register_catalog`]).
fn install(catalog: Catalog) {
    *CURRENT.write().unwrap_or_else(|poison| poison.into_inner()) = Some(Arc::new(catalog));
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        cmc_world::cores::register_catalog(CoreCatalog {
            rust_core: |name| current().rust_core(name),
            rust_core_names: || current().rust_core_names(),
            equip: |world| current().equip(world),
        })
    });
}

/// The process's catalog ([`Cli::bundled`]'s until a command line installs one).
pub(crate) fn current() -> Arc<Catalog> {
    if let Some(catalog) = CURRENT
        .read()
        .unwrap_or_else(|poison| poison.into_inner())
        .as_ref()
    {
        return Arc::clone(catalog);
    }
    Arc::new(Cli::bundled().catalog)
}

impl Catalog {
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

    /// Builds the model `entry` with `params`, holding it to
    /// [`ModelEntry`]'s contract.
    /// Builds `entry`'s model with `params` and binds the web explorer to it
    /// on `port`.
    pub fn explore(
        &self,
        entry: &ModelEntry,
        params: &[(String, String)],
        port: u16,
    ) -> Result<cmc_explore::Server, String> {
        match &entry.explore {
            Some(explore) => explore(params, port),
            None => cmc_explore::Server::bind(self.build(entry, params)?, port),
        }
    }

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

    /// One `list` line per model, then one per registered Rust core.
    pub fn list_lines(&self) -> Vec<String> {
        self.models
            .iter()
            .map(ModelEntry::list_line)
            .chain(self.cores.iter().map(CoreEntry::list_line))
            .collect()
    }

    fn rust_core(&self, name: &str) -> Option<Arc<dyn Core>> {
        self.cores
            .iter()
            .find_map(|entry| entry.variant(name))
            .or_else(|| {
                self.core_catalogs
                    .iter()
                    .find_map(|catalog| (catalog.rust_core)(name))
            })
    }

    fn rust_core_names(&self) -> Vec<String> {
        self.cores
            .iter()
            .flat_map(CoreEntry::names)
            .chain(
                self.core_catalogs
                    .iter()
                    .flat_map(|catalog| (catalog.rust_core_names)()),
            )
            .collect()
    }

    /// `world` with the properties of the protocol its nodes run: a
    /// registered core's, or else what the first core catalog that knows
    /// the protocol equips it with; unchanged if none does.
    fn equip(&self, world: World) -> Equipped {
        let registered = self
            .cores
            .iter()
            .find_map(|entry| entry.properties_for(world.spec()));
        if let Some(properties) = registered {
            return Equipped::Known(world.with_properties(properties));
        }
        let mut world = world;
        for catalog in &self.core_catalogs {
            match (catalog.equip)(world) {
                Equipped::Known(equipped) => return Equipped::Known(equipped),
                Equipped::Unknown(unchanged) => world = unchanged,
            }
        }
        Equipped::Unknown(world)
    }
    /// Fails on a name that cannot be typed on the command line or that is
    /// taken twice (models among models; cores among these cores, cmc-world's
    /// examples and the other catalogs).
    fn validate(&self) -> Result<(), String> {
        let mut models: Vec<&str> = Vec::new();
        for name in self.model_names() {
            check_name(name, "model")?;
            if models.contains(&name) {
                return Err(format!("two models are registered as `{name}`"));
            }
            models.push(name);
        }
        let mut cores: Vec<String> = cmc_world::cores::RUST_CORES
            .iter()
            .map(|name| name.to_string())
            .chain(
                self.core_catalogs
                    .iter()
                    .flat_map(|catalog| (catalog.rust_core_names)()),
            )
            .collect();
        for entry in &self.cores {
            check_name(&entry.name, "core")?;
            for name in entry.names() {
                if cores.contains(&name) {
                    return Err(format!(
                        "a core `rust:{name}` is registered twice (or is one of cmc's own)"
                    ));
                }
                cores.push(name);
            }
        }
        Ok(())
    }
}

/// Fails unless `name` is one word that cannot be read as an option or a
/// parameter.
fn check_name(name: &str, what: &str) -> Result<(), String> {
    if name.is_empty()
        || name.starts_with('-')
        || name.contains(|c: char| c.is_whitespace() || c.is_control() || c == '=')
    {
        return Err(format!(
            "a {what} is registered as `{name}`: a name is one word, without `=`, not starting with `-`"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn die_hard(params: &mut Params) -> Result<cmc_models::DieHard, String> {
        params.take_count("JUGS", 2, 2..=2)?;
        Ok(cmc_models::DieHard::new())
    }

    fn reqack(bug: u32) -> cmc_world::cores::reqack::ReqAck {
        cmc_world::cores::reqack::ReqAck { bug }
    }

    fn catalog(cli: Cli) -> Catalog {
        cli.catalog
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
        ];
        for (cli, why) in cases {
            let error = cli.catalog.validate().unwrap_err();
            assert!(error.contains(why), "{why}: {error}");
        }
        assert_eq!(Cli::bundled().catalog.validate(), Ok(()));
        let mine = Cli::new("t")
            .model(ModelEntry::new("die-hard", "", die_hard))
            .core(CoreEntry::with_bugs("mine", 2, reqack));
        assert_eq!(mine.catalog.validate(), Ok(()));
    }

    #[test]
    fn a_cores_properties_apply_when_every_node_runs_it() {
        let catalog = catalog(
            Cli::new("t").core(
                CoreEntry::with_bugs("mine", 1, reqack)
                    .properties(cmc_world::cores::reqack::properties),
            ),
        );
        // The names of the properties the catalog adds to a World of `cores`.
        let added = |cores: Vec<Arc<dyn Core>>| -> Vec<String> {
            let world = World::new(WorldSpec::with_cores(cores, vec![0, 1]).unwrap());
            let built_in = world.properties().len();
            let (Equipped::Known(world) | Equipped::Unknown(world)) = catalog.equip(world);
            let properties = world.properties();
            properties[built_in..]
                .iter()
                .map(|p| p.name.clone())
                .collect()
        };
        let mine = catalog.rust_core("mine-bug1").unwrap();
        assert_eq!(
            added(vec![Arc::clone(&mine), Arc::clone(&mine)]),
            ["AckedIsDurable"]
        );
        let other: Arc<dyn Core> = Arc::new(reqack(0));
        let smaller = {
            // Another core with the same name but another state layout.
            struct Other;
            impl cmc_world::TypedCore for Other {
                type Durable = u8;
                type Volatile = u8;
                fn name(&self) -> &str {
                    "reqack"
                }
                fn step(
                    &self,
                    _: &cmc_world::core::abi::Config,
                    _: &u8,
                    _: &mut u8,
                    _: &cmc_world::core::abi::Event,
                    _: &mut cmc_world::core::abi::Outputs,
                ) -> Result<(), cmc_world::core::abi::CoreError> {
                    Ok(())
                }
            }
            Arc::new(Other) as Arc<dyn Core>
        };
        assert_eq!(added(vec![mine, other]).len(), 1);
        assert!(added(vec![smaller, catalog.rust_core("mine").unwrap()]).is_empty());
    }
}
