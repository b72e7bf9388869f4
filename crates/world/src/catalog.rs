//! The cores a program knows, as a value: [`CoreCatalog`], a list of
//! [`CoreEntry`] registrations. An entry says everything a protocol's
//! registration can say: its Rust core and planted bugs (`--core
//! rust:NAME`, `rust:NAME-bugN`), the World parameters it runs with unless
//! the command line says otherwise, and what a World of its nodes is
//! equipped with (its properties, and what they need, such as a summary of
//! the client history).
//!
//! A World is built from command-line words by [`CoreCatalog::build_world`]
//! (`crate::world_args`); the catalog is passed to it, never looked up in a
//! process-wide table. [`crate::example_cores::catalog`] is this crate's example
//! (`reqack`); a front end adds its own entries and other crates' catalogs.
//!
//! # Example
//!
//! A front end that knows one more core, `echo`, which answers each client
//! request; a World of echo nodes has two requests unless told otherwise,
//! and a witness property:
//!
//! ```
//! use cmc_model::Property;
//! use cmc_search::{Checker, Verdict};
//! use cmc_world::catalog::{CoreCatalog, CoreEntry};
//! use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
//! use cmc_world::system::state::WorldState;
//! use cmc_world::{example_cores, TypedCore, World, WorldArgs};
//!
//! struct Echo;
//! impl TypedCore for Echo {
//!     type Durable = u32;
//!     type Volatile = u32;
//!     fn name(&self) -> &str { "echo" }
//!     fn step(&self, _: &Config, _: &u32, _: &mut u32, event: &Event, out: &mut Outputs)
//!         -> Result<(), CoreError> {
//!         match event.kind() {
//!             Some(EventKind::Client) => out.reply(event.id, b"echo"),
//!             _ => Ok(()),
//!         }
//!     }
//! }
//!
//! let catalog = example_cores::catalog().with(
//!     CoreEntry::new("echo", || Echo)
//!         .defaults(&["requests=2"])
//!         .properties(|| vec![Property::sometimes("Echoed", |world: &World, state: &WorldState| {
//!             world.inspect(state).replies_with(b"echo").next().is_some()
//!         })]),
//! );
//! assert!(catalog.rust_core_names().contains(&"echo".to_string()));
//!
//! // `--core rust:echo --nodes 1`: two requests, and the entry's property.
//! let args = WorldArgs { cores: vec!["rust:echo".into()], nodes: 1, ..WorldArgs::default() };
//! let world = catalog.build_world(&args)?;
//! assert_eq!(world.spec().requests, 2);
//! assert_eq!(Checker::new(world).workers(1).run().verdict, Verdict::Pass);
//! // The command line overrides a default.
//! let args = WorldArgs { params: vec!["requests=1".into()], ..args };
//! assert_eq!(catalog.build_world(&args)?.spec().requests, 1);
//! # Ok::<(), String>(())
//! ```

use std::sync::Arc;

use cmc_model::Property;

use crate::core::Core;
use crate::World;

/// Makes the core of planted bug `bug` (0: the correct core).
type MakeCore = dyn Fn(u32) -> Arc<dyn Core> + Send + Sync;
/// Equips a World of the entry's nodes (properties and what they need).
type Equip = dyn Fn(World) -> World + Send + Sync;

/// One protocol a program knows: its Rust core (with planted bugs) or, for
/// a protocol whose cores come as C libraries, only its core name; the
/// World parameters it runs with by default; and what a World whose nodes
/// all run it is equipped with.
///
/// A World *runs* an entry when every core it was given has the entry's
/// name and, for an entry with a Rust core, that core's state sizes: the
/// Rust core in process, or the same core exported as a shared library.
#[derive(Clone)]
pub struct CoreEntry {
    name: String,
    bugs: u32,
    make: Option<Arc<MakeCore>>,
    equip: Vec<Arc<Equip>>,
    defaults: Vec<String>,
    summary: String,
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
        CoreEntry::shared(name, bugs, move |bug| Arc::new(make(bug)) as Arc<dyn Core>)
    }

    /// [`CoreEntry::with_bugs`] for constructors that return the core
    /// already shared (`Arc<dyn Core>`).
    pub fn shared<F>(name: &str, bugs: u32, make: F) -> CoreEntry
    where
        F: Fn(u32) -> Arc<dyn Core> + Send + Sync + 'static,
    {
        CoreEntry {
            make: Some(Arc::new(make)),
            bugs,
            ..CoreEntry::library(name)
        }
    }

    /// A protocol whose cores are shared libraries (C, or Rust exported
    /// with [`crate::export_core!`]) that call themselves `name`: no
    /// `rust:` core, recognised by the core's name alone.
    pub fn library(name: &str) -> CoreEntry {
        CoreEntry {
            name: name.strip_prefix("rust:").unwrap_or(name).to_string(),
            bugs: 0,
            make: None,
            equip: Vec::new(),
            defaults: Vec::new(),
            summary: String::new(),
        }
    }

    /// One line saying what the protocol is (for `list` and `describe`).
    pub fn summary(mut self, summary: &str) -> CoreEntry {
        self.summary = summary.to_string();
        self
    }

    /// The properties of the protocol (e.g. `Property::always` over
    /// `world.inspect(state)`), added to the World's built-in ones.
    pub fn properties<F>(self, properties: F) -> CoreEntry
    where
        F: Fn() -> Vec<Property<World>> + Send + Sync + 'static,
    {
        self.equip(move |world| world.with_properties(properties()))
    }

    /// What a World of the protocol's nodes needs besides properties, e.g.
    /// `|world| consistency::linearizable_summarised(world, history())`:
    /// applied in the order given, with [`CoreEntry::properties`].
    pub fn equip<F>(mut self, equip: F) -> CoreEntry
    where
        F: Fn(World) -> World + Send + Sync + 'static,
    {
        self.equip.push(Arc::new(equip));
        self
    }

    /// World parameters (`NAME=VALUE`, e.g. `workload=put:2,get`,
    /// `clients=0,2`) a World of the protocol's nodes runs with unless the
    /// command line gives the same parameter. They are recorded in replay
    /// files and checkpoints like the command line's.
    pub fn defaults<S: AsRef<str>>(mut self, params: &[S]) -> CoreEntry {
        self.defaults
            .extend(params.iter().map(|param| param.as_ref().to_string()));
        self
    }

    /// The entry's name, without `rust:`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its default World parameters, as given to [`CoreEntry::defaults`].
    pub fn default_params(&self) -> &[String] {
        &self.defaults
    }

    /// Every name of a Rust core this entry answers to, without `rust:`
    /// (none for a [`CoreEntry::library`]).
    pub fn names(&self) -> Vec<String> {
        if self.make.is_none() {
            return Vec::new();
        }
        std::iter::once(self.name.clone())
            .chain((1..=self.bugs).map(|bug| format!("{}-bug{bug}", self.name)))
            .collect()
    }

    /// The variant called `name` (without `rust:`), if it is one of this entry's.
    pub fn variant(&self, name: &str) -> Option<Arc<dyn Core>> {
        let make = self.make.as_ref()?;
        let bug = match name.strip_prefix(self.name.as_str())? {
            "" => 0,
            rest => rest
                .strip_prefix("-bug")?
                .parse::<u32>()
                .ok()
                .filter(|bug| (1..=self.bugs).contains(bug) && *rest == format!("-bug{bug}"))?,
        };
        Some(make(bug))
    }

    /// Whether every one of `cores` runs this protocol: its name and, for
    /// an entry with a Rust core, that core's state sizes.
    pub fn runs(&self, cores: &[Arc<dyn Core>]) -> bool {
        let reference = self.make.as_ref().map(|make| make(0));
        !cores.is_empty()
            && cores.iter().all(|core| {
                core.name() == self.name
                    && reference.as_ref().is_none_or(|r| {
                        r.durable_size() == core.durable_size()
                            && r.volatile_size() == core.volatile_size()
                    })
            })
    }

    /// `world` equipped as the registration says.
    pub fn equip_world(&self, world: World) -> World {
        self.equip.iter().fold(world, |world, equip| equip(world))
    }

    /// How `list` and `describe` name the entry: `rust:NAME`, or the core
    /// name of a [`CoreEntry::library`].
    pub fn label(&self) -> String {
        match &self.make {
            Some(_) => format!("rust:{}", self.name),
            None => self.name.clone(),
        }
    }

    /// What `list` and `describe` say about the entry: what it is, its
    /// summary, planted bugs and default World parameters.
    pub fn describe(&self) -> String {
        let mut text = match &self.make {
            Some(_) => format!("Rust core (--core rust:{})", self.name),
            None => format!("properties of core libraries called `{}`", self.name),
        };
        if !self.summary.is_empty() {
            text.push_str(&format!(": {}", self.summary));
        }
        match self.bugs {
            0 => {}
            1 => text.push_str(&format!("; planted bug rust:{}-bug1", self.name)),
            n => text.push_str(&format!(
                "; planted bugs rust:{0}-bug1 to rust:{0}-bug{n}",
                self.name
            )),
        }
        if !self.defaults.is_empty() {
            text.push_str(&format!("; defaults: {}", self.defaults.join(" ")));
        }
        text
    }
}

/// The cores a program knows: a list of [`CoreEntry`], passed by value to
/// what builds Worlds ([`CoreCatalog::build_world`]).
#[derive(Clone, Default)]
pub struct CoreCatalog {
    entries: Vec<CoreEntry>,
}

impl CoreCatalog {
    /// An empty catalog.
    pub fn new() -> CoreCatalog {
        CoreCatalog::default()
    }

    /// This catalog with `entry` added (builder style).
    pub fn with(mut self, entry: CoreEntry) -> CoreCatalog {
        self.entries.push(entry);
        self
    }

    /// This catalog with every entry of `other` added after its own.
    pub fn merged(mut self, other: CoreCatalog) -> CoreCatalog {
        self.entries.extend(other.entries);
        self
    }

    /// The entries, in the order added.
    pub fn entries(&self) -> &[CoreEntry] {
        &self.entries
    }

    /// The Rust core called `name` (without `rust:`), if an entry has it.
    pub fn rust_core(&self, name: &str) -> Option<Arc<dyn Core>> {
        self.entries.iter().find_map(|entry| entry.variant(name))
    }

    /// Every Rust core name the catalog knows, without `rust:`.
    pub fn rust_core_names(&self) -> Vec<String> {
        self.entries.iter().flat_map(CoreEntry::names).collect()
    }

    /// The entry every one of `cores` runs (the first, if several do).
    pub fn protocol_of(&self, cores: &[Arc<dyn Core>]) -> Option<&CoreEntry> {
        self.entries.iter().find(|entry| entry.runs(cores))
    }

    /// `world` equipped by the entry its cores run; unchanged if none.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use cmc_model::Model;
    /// use cmc_world::example_cores::{self, reqack::ReqAck};
    /// use cmc_world::{World, WorldSpec};
    ///
    /// let spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
    /// let equipped = example_cores::catalog().equip(World::new(spec));
    /// assert!(equipped.properties().iter().any(|p| p.name == "AckedIsDurable"));
    /// ```
    pub fn equip(&self, world: World) -> World {
        match self.protocol_of(&world.spec().cores) {
            Some(entry) => entry.equip_world(world),
            None => world,
        }
    }

    /// Fails on an entry whose name cannot be typed on the command line,
    /// a Rust core name two entries answer to, or a default that is not
    /// `NAME=VALUE`.
    pub fn validate(&self) -> Result<(), String> {
        let mut taken: Vec<String> = Vec::new();
        for entry in &self.entries {
            check_name(&entry.name, "core")?;
            for name in entry.names() {
                if taken.contains(&name) {
                    return Err(format!(
                        "a core `rust:{name}` is registered twice (or is one of cmc's own)"
                    ));
                }
                taken.push(name);
            }
            if let Some(bad) = entry.defaults.iter().find(|param| {
                param
                    .split_once('=')
                    .is_none_or(|(name, _)| name.trim().is_empty())
            }) {
                return Err(format!(
                    "the core `{}` is registered with the default `{bad}`: defaults are NAME=VALUE",
                    entry.name
                ));
            }
        }
        Ok(())
    }
}

/// Fails unless `name` is one word that cannot be read as an option or a
/// parameter (`what` names the kind of registration in the message).
pub fn check_name(name: &str, what: &str) -> Result<(), String> {
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
