//! What a World is built from: the cores, which node runs which, the network
//! semantics, the fault budgets; and the `NAME=VALUE` parameters that set them.

use std::sync::Arc;

use cmc_model::ModelParam;

use crate::core::abi::PARAMS_MAX;
use crate::core::Core;
use crate::system::state::{Budget, BUDGETS};
pub use crate::system::workload::{Workload, WorkloadOp};

/// Most nodes a World may have (a SPLIT names its group as a 64-bit set).
pub const NODES_MAX: usize = 64;
/// Most client requests a run may issue (request ids are bytes).
pub const REQUESTS_MAX: u8 = 255;
/// Largest bound of the quiescence check (`quiescence=K`): the fair run from
/// every state keeps its steps, so the bound is also a memory bound.
pub const QUIESCENCE_STEPS_MAX: u32 = 100_000;

/// How the network treats messages (`net=`).
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::{NetSemantics, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// assert_eq!(spec.net, NetSemantics::Unordered);
/// spec.set("net", "dup")?;
/// assert_eq!(spec.net, NetSemantics::Duplicating);
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetSemantics {
    /// A multiset: each DELIVER consumes one copy, in any order.
    Unordered,
    /// A set: DELIVER does not consume, so every message may arrive any number of times.
    Duplicating,
    /// One FIFO queue per (src, dst) link: only the head can be delivered.
    Fifo,
}

/// A World's full configuration. Build with [`WorldSpec::new`], then adjust
/// the public fields or apply `NAME=VALUE` pairs with [`WorldSpec::set`]
/// (the command line's words), or use the typed [`WorldSpec::builder`].
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::state::Budget;
/// use cmc_world::WorldSpec;
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3)?;
/// spec.set_all(&["requests=2", "drops=1", "net=fifo"])?;
/// assert_eq!(spec.nodes(), 3);
/// assert_eq!(spec.requests, 2);
/// assert_eq!(spec.budgets[Budget::Drops as usize], 1);
/// // Every parameter applied is kept, to be written into replay files.
/// assert_eq!(spec.applied.len(), 3);
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone)]
pub struct WorldSpec {
    /// The distinct cores.
    pub cores: Vec<Arc<dyn Core>>,
    /// `roles[n]` is the index in `cores` of node `n`'s core; its length is the node count.
    pub roles: Vec<usize>,
    /// Network semantics.
    pub net: NetSemantics,
    /// Initial fault budgets, indexed by [`Budget`].
    pub budgets: [u8; BUDGETS],
    /// Client requests the environment issues in total.
    pub requests: u8,
    /// Nodes that client requests may be sent to.
    pub client_nodes: Vec<u8>,
    /// Nodes the environment may crash (budget permitting).
    pub crash_nodes: Vec<u8>,
    /// Parameters passed to every core in [`crate::core::abi::Config::params`].
    pub core_params: [u64; PARAMS_MAX],
    /// Run each step twice from a copy and report any difference.
    pub check_determinism: bool,
    /// Copies of one message (unordered network; FIFO: of one run of equal
    /// consecutive messages on a link) counted exactly; more are a surplus
    /// whose number is not tracked (see [`crate::system::env`]). At least 1. Keeps
    /// retransmission finite without losing a message.
    pub net_bound: u8,
    /// FIFO network: most runs of different messages queued on one link;
    /// a SEND that would start another is a capacity fault. At least 1.
    pub link_bound: u8,
    /// Bound of the quiescence check with the goal "every client replied"
    /// (`quiescence=K`; see [`crate::system::quiescence`]); `None`: no check.
    pub quiescence_steps: Option<u32>,
    /// Interchangeable nodes for symmetry reduction (`symmetry=1,2`; see
    /// [`crate::system::symmetry`]); empty (the default): off.
    pub symmetric_nodes: Vec<u8>,
    /// The drift bound (`skew=K`): the clocks of any two nodes never differ
    /// by more than K, a TICK that would break this is not enabled, and a
    /// crashed node's clock keeps running (see [`crate::system::env`]). `None` (the
    /// default): every clock advances freely, and only on live nodes.
    pub skew: Option<u8>,
    /// `NAME=VALUE` pairs applied so far, for replay files.
    pub applied: Vec<ModelParam>,
    /// The operations clients issue (`workload=put:2:2,get:2`); `None`: one
    /// operation with an empty payload.
    pub workload: Option<Workload>,
    /// LOCAL_FAIL is also enabled for a request that was replied to (a
    /// transaction that aborts locally after it was acknowledged).
    pub local_fail_after_reply: bool,
    /// Request `r` goes to `client_nodes[r % len]` only (`spread=1`),
    /// instead of to any client node.
    pub spread: bool,
}

pub use crate::system::state::BUDGET_NAMES;

/// Why a World specification was refused. Its text names the parameter
/// and what was expected (the `cmc` command prints it and exits 2).
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::spec::SpecError;
/// use cmc_world::WorldSpec;
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// assert_eq!(spec.set("drops", "many"), Err(SpecError::BadValue {
///     name: "drops".into(),
///     value: "many".into(),
///     why: "expected a count from 0 to 255".into(),
/// }));
/// assert!(matches!(spec.set("dorps", "1"), Err(SpecError::Unknown(_))));
/// assert!(matches!(WorldSpec::new(Arc::new(ReqAck::default()), 0),
///     Err(SpecError::NodeCount(0))));
/// # Ok::<(), SpecError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// A parameter word that is not `NAME=VALUE`.
    NotAPair(String),
    /// No World parameter has this name.
    Unknown(String),
    /// The parameter was given before.
    Repeated {
        /// The parameter.
        name: String,
        /// The refused value.
        value: String,
        /// The value it already has.
        earlier: String,
    },
    /// The value does not fit the parameter.
    BadValue {
        /// The parameter.
        name: String,
        /// The refused value.
        value: String,
        /// What was expected, or what is wrong with it.
        why: String,
    },
    /// A node count outside `1..=NODES_MAX`.
    NodeCount(usize),
    /// A node's role names no core.
    NoSuchCore {
        /// The role.
        role: usize,
        /// How many cores were given.
        cores: usize,
    },
    /// A client node outside the World.
    NoSuchClientNode {
        /// The node.
        node: u8,
        /// The World's node count.
        nodes: usize,
    },
    /// The symmetric nodes are not interchangeable.
    Symmetry(String),
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpecError::NotAPair(word) => write!(f, "`{word}` is not NAME=VALUE"),
            SpecError::Unknown(name) => write!(
                f,
                "unknown world parameter `{name}`; known parameters:\n{}",
                param_help()
            ),
            SpecError::Repeated {
                name,
                value,
                earlier,
            } => write!(
                f,
                "{name}={value}: {name} is already set (to {earlier}); give each parameter once"
            ),
            SpecError::BadValue { name, value, why } => write!(f, "{name}={value}: {why}"),
            SpecError::NodeCount(nodes) => {
                write!(f, "a world has 1 to {NODES_MAX} nodes, not {nodes}")
            }
            SpecError::NoSuchCore { role, cores } => write!(
                f,
                "role {role} names no core: {cores} core(s) were given (numbered from 0)"
            ),
            SpecError::NoSuchClientNode { node, nodes } => write!(
                f,
                "client node {node} does not exist in a {nodes}-node world"
            ),
            SpecError::Symmetry(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for SpecError {}

/// Callers that report errors as text keep using `?`.
impl From<SpecError> for String {
    fn from(error: SpecError) -> String {
        error.to_string()
    }
}

/// The parameters [`WorldSpec::set`] accepts, with their meaning (for
/// `--help` texts): [`SETTINGS_HELP`] with a line per fault budget after
/// the network's.
pub fn param_help() -> String {
    let budgets = BUDGET_NAMES.iter().map(|(name, _, allows)| {
        format!(
            "{:<25}budget of {allows} (default 0)\n",
            format!("{name}=K")
        )
    });
    let clients = SETTINGS_HELP
        .find("requests=K")
        .expect("the client settings");
    let (network, rest) = SETTINGS_HELP.split_at(clients);
    format!("{network}{}{rest}", budgets.collect::<String>())
}

/// The parameters [`WorldSpec::set`] accepts besides the fault budgets
/// ([`BUDGET_NAMES`]), with their meaning.
pub const SETTINGS_HELP: &str = "\
net=unordered|dup|fifo   network semantics (default unordered)
net_bound=K              copies of a message counted exactly; more are an untracked surplus (1 to 255, default 1)
link_bound=K             FIFO: runs of different messages queued per link; more is a capacity fault (1 to 255, default 2)
requests=K               client requests issued in total (0 to 255, default 0)
clients=0,2              nodes that receive client requests (default 0)
workload=put:2:2,get:2   client operations: a name and the domain size of each argument (payload: op index, args)
local_fail_after_reply=0|1   LOCAL_FAIL also after a reply (default 0)
spread=0|1               request r goes to the (r mod n)-th client node only, not to any of them (default 0)
crash_nodes=1,2          nodes the environment may crash (default all)
roles=0,1,1              core index of each node when several --core are given (one per node)
symmetry=off|1,2         interchangeable nodes: states are merged up to renaming them (default off)
skew=K                   clocks of any two nodes differ by at most K ticks; crashed nodes' clocks keep running (1 to 255, default: unbounded)
quiescence=K             with spent fault budgets, the fair schedule answers every client within K steps (1 to 100000)
cfg0=V .. cfg7=V         values passed to every core in config.params";

impl WorldSpec {
    /// `nodes` nodes all running `core`, an unordered network, no faults and no requests.
    pub fn new(core: Arc<dyn Core>, nodes: usize) -> Result<WorldSpec, SpecError> {
        WorldSpec::with_cores(vec![core], vec![0; nodes])
    }

    /// Nodes running `cores[roles[n]]`.
    pub fn with_cores(
        cores: Vec<Arc<dyn Core>>,
        roles: Vec<usize>,
    ) -> Result<WorldSpec, SpecError> {
        let mut spec = WorldSpec {
            cores,
            roles: Vec::new(),
            net: NetSemantics::Unordered,
            budgets: [0; BUDGETS],
            requests: 0,
            client_nodes: vec![0],
            crash_nodes: Vec::new(),
            core_params: [0; PARAMS_MAX],
            check_determinism: false,
            net_bound: 1,
            link_bound: 2,
            quiescence_steps: None,
            symmetric_nodes: Vec::new(),
            skew: None,
            applied: Vec::new(),
            workload: None,
            local_fail_after_reply: false,
            spread: false,
        };
        spec.set_roles(roles)?;
        spec.crash_nodes = (0..spec.nodes() as u8).collect();
        Ok(spec)
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.roles.len()
    }

    /// The nodes client request `request` may be sent to (see [`WorldSpec::spread`]).
    pub fn request_nodes(&self, request: u8) -> &[u8] {
        if self.spread && !self.client_nodes.is_empty() {
            let at = request as usize % self.client_nodes.len();
            &self.client_nodes[at..at + 1]
        } else {
            &self.client_nodes
        }
    }

    /// The core that node `node` runs.
    pub fn core_of(&self, node: usize) -> &dyn Core {
        &*self.cores[self.roles[node]]
    }

    fn set_roles(&mut self, roles: Vec<usize>) -> Result<(), SpecError> {
        if roles.is_empty() || roles.len() > NODES_MAX {
            return Err(SpecError::NodeCount(roles.len()));
        }
        if let Some(&role) = roles.iter().find(|role| **role >= self.cores.len()) {
            return Err(SpecError::NoSuchCore {
                role,
                cores: self.cores.len(),
            });
        }
        if let Some(&node) = self
            .client_nodes
            .iter()
            .find(|n| **n as usize >= roles.len())
        {
            return Err(SpecError::NoSuchClientNode {
                node,
                nodes: roles.len(),
            });
        }
        self.roles = roles;
        Ok(())
    }

    /// Sets the budget of `kind` (builder style).
    pub fn budget(mut self, kind: Budget, count: u8) -> WorldSpec {
        self.budgets[kind as usize] = count;
        self
    }

    /// Whether [`symmetric_nodes`](WorldSpec::symmetric_nodes) are really
    /// interchangeable as far as the World can tell: they exist, run one core
    /// that supports `permute`, and are alike in `clients` and `crash_nodes`
    /// (checked once every parameter is set, see
    /// [`WorldSpec::check_relations`]; [`crate::World::new`] checks again).
    pub fn check_symmetry(&self) -> Result<(), SpecError> {
        let Some(&first) = self.symmetric_nodes.first() else {
            return Ok(());
        };
        let spread_clients = self
            .symmetric_nodes
            .iter()
            .any(|node| self.client_nodes.contains(node));
        if self.spread && spread_clients {
            return Err(SpecError::Symmetry(
                "with spread=1 each client node gets its own requests: client nodes are not interchangeable".into(),
            ));
        }
        for &node in &self.symmetric_nodes {
            if node as usize >= self.nodes() {
                return Err(SpecError::Symmetry(format!(
                    "node {node} does not exist in a {}-node world",
                    self.nodes()
                )));
            }
            let alike = |set: &[u8]| set.contains(&node) == set.contains(&first);
            if self.roles[node as usize] != self.roles[first as usize]
                || !alike(&self.client_nodes)
                || !alike(&self.crash_nodes)
            {
                return Err(SpecError::Symmetry(format!(
                    "nodes {first} and {node} differ in core, clients or crash_nodes: not interchangeable"
                )));
            }
        }
        let core = self.core_of(first as usize);
        let config = crate::core::abi::Config {
            node: first as u32,
            nodes: self.nodes() as u32,
            params: self.core_params,
        };
        let mut durable = vec![0; core.durable_size()];
        let mut volatile = vec![0; core.volatile_size()];
        let identity: Vec<u32> = (0..self.nodes() as u32).collect();
        if !core.permute(&config, &mut durable, &mut volatile, &identity) {
            return Err(SpecError::Symmetry(format!(
                "core `{}` has no permute function",
                core.name()
            )));
        }
        Ok(())
    }

    /// Applies one `NAME=VALUE` parameter (see [`param_help`]); each may be
    /// given once.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SpecError> {
        if let Some(earlier) = self.applied.iter().find(|param| param.name == name) {
            return Err(SpecError::Repeated {
                name: name.into(),
                value: value.into(),
                earlier: earlier.value.clone(),
            });
        }
        let word = ParamValue { name, value };
        if let Some((_, kind, _)) = BUDGET_NAMES.iter().find(|(known, ..)| *known == name) {
            self.set_budget(*kind, &word)?;
        } else if name == "symmetry" {
            self.set_symmetric_nodes(&word)?;
        } else if name == "clients" || name == "crash_nodes" || name == "roles" {
            self.set_node_list(&word)?;
        } else if let Some(index) = name
            .strip_prefix("cfg")
            .and_then(|i| i.parse::<usize>().ok())
        {
            if index >= PARAMS_MAX {
                return Err(word.bad(format!("core parameters are cfg0 to cfg{}", PARAMS_MAX - 1)));
            }
            self.core_params[index] = value
                .parse()
                .map_err(|_| word.bad("expected an unsigned 64-bit number".into()))?;
        } else {
            self.set_setting(&word)?;
        }
        self.applied.push(ModelParam::new(name, value));
        Ok(())
    }

    /// A fault budget (`drops=K`, ...): a count, `splits` within the
    /// nodes a split can enumerate.
    fn set_budget(&mut self, kind: Budget, word: &ParamValue<'_>) -> Result<(), SpecError> {
        let budget = word.ranged(0, u8::MAX)?;
        let max = crate::system::env::SPLIT_NODES_MAX;
        if kind == Budget::Splits && budget > 0 && self.nodes() > max {
            return Err(word.bad(format!(
                "a split is explored in every way to cut the nodes in two: at most {max} nodes, not {}",
                self.nodes()
            )));
        }
        self.budgets[kind as usize] = budget;
        Ok(())
    }

    /// The network, bounds, time, liveness and client settings.
    fn set_setting(&mut self, word: &ParamValue<'_>) -> Result<(), SpecError> {
        let value = word.value;
        match word.name {
            "net" => {
                self.net = match value {
                    "unordered" => NetSemantics::Unordered,
                    "dup" | "duplicating" => NetSemantics::Duplicating,
                    "fifo" => NetSemantics::Fifo,
                    _ => return Err(word.bad("expected unordered, dup or fifo".into())),
                }
            }
            "net_bound" => self.net_bound = word.ranged(1, u8::MAX)?,
            "link_bound" => self.link_bound = word.ranged(1, u8::MAX)?,
            "skew" => self.skew = Some(word.ranged(1, u8::MAX)?),
            "quiescence" => {
                let steps = value
                    .parse::<u32>()
                    .ok()
                    .filter(|steps| (1..=QUIESCENCE_STEPS_MAX).contains(steps))
                    .ok_or_else(|| {
                        word.bad(format!(
                            "expected a number of steps from 1 to {QUIESCENCE_STEPS_MAX}"
                        ))
                    })?;
                self.quiescence_steps = Some(steps);
            }
            "requests" => self.requests = word.ranged(0, REQUESTS_MAX)?,
            "workload" => {
                self.workload = Some(Workload::parse(value).map_err(|why| word.bad(why))?)
            }
            "spread" => self.spread = word.flag()?,
            "local_fail_after_reply" => self.local_fail_after_reply = word.flag()?,
            name => return Err(SpecError::Unknown(name.into())),
        }
        Ok(())
    }

    /// `symmetry=off` or the node ids declared interchangeable.
    fn set_symmetric_nodes(&mut self, word: &ParamValue<'_>) -> Result<(), SpecError> {
        self.symmetric_nodes = match word.value {
            "off" => Vec::new(),
            value => value
                .split(',')
                .map(|node| node.trim().parse::<u8>())
                .collect::<Result<_, _>>()
                .map_err(|_| word.bad("expected off or node ids separated by commas".into()))?,
        };
        // Whether they are interchangeable is checked once every
        // parameter is set (`set_all`, `build`): `clients=`,
        // `crash_nodes=` or `roles=` may follow.
        if let Some(node) = self
            .symmetric_nodes
            .iter()
            .find(|n| **n as usize >= self.nodes())
        {
            let why = format!(
                "node {node} does not exist in a {}-node world",
                self.nodes()
            );
            self.symmetric_nodes.clear();
            return Err(word.bad(why));
        }
        Ok(())
    }

    /// `clients=`, `crash_nodes=` (node ids) or `roles=` (a core index per node).
    fn set_node_list(&mut self, word: &ParamValue<'_>) -> Result<(), SpecError> {
        let list = word.numbers()?;
        if word.name == "roles" {
            if list.len() != self.nodes() {
                return Err(word.bad(format!(
                    "{} role(s) for a {}-node world (--nodes): give one core index per node",
                    list.len(),
                    self.nodes()
                )));
            }
            return self.set_roles(list);
        }
        if let Some(node) = list.iter().find(|n| **n >= self.nodes()) {
            return Err(word.bad(format!(
                "node {node} does not exist in a {}-node world",
                self.nodes()
            )));
        }
        let list = list.into_iter().map(|n| n as u8).collect();
        if word.name == "clients" {
            self.client_nodes = list;
        } else {
            self.crash_nodes = list;
        }
        Ok(())
    }

    /// Applies `NAME=VALUE` strings in order, then checks the parameters
    /// that depend on each other (see [`WorldSpec::check_relations`]), so
    /// that their order does not matter.
    pub fn set_all<S: AsRef<str>>(&mut self, pairs: &[S]) -> Result<(), SpecError> {
        for pair in pairs {
            let pair = pair.as_ref();
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| SpecError::NotAPair(pair.into()))?;
            self.set(name.trim(), value.trim())?;
        }
        self.check_relations()
    }

    /// Checks what one parameter alone cannot: the `symmetry=` nodes
    /// against `clients=`, `crash_nodes=`, `roles=` and `spread=` (see
    /// [`WorldSpec::check_symmetry`]), reported as a bad `symmetry=` value.
    /// [`WorldSpec::set_all`] and the builder's `build` run it; a spec made
    /// with [`WorldSpec::set`] alone should be checked with it before
    /// [`World::new`](crate::World::new), which panics on such a spec.
    pub fn check_relations(&self) -> Result<(), SpecError> {
        self.check_symmetry().map_err(|why| {
            match self.applied.iter().find(|param| param.name == "symmetry") {
                Some(param) => SpecError::BadValue {
                    name: param.name.clone(),
                    value: param.value.clone(),
                    why: why.to_string(),
                },
                None => why,
            }
        })
    }
}

impl WorldSpec {
    /// A typed builder of a World of `nodes` nodes running `core`:
    /// `WorldSpec::builder(core, 3).requests(2).budget(Budget::Drops, 1).build()?`.
    /// Each setter goes through [`WorldSpec::set`], so the values are checked
    /// as on the command line and recorded for replay files.
    pub fn builder(core: Arc<dyn Core>, nodes: usize) -> WorldSpecBuilder {
        WorldSpecBuilder {
            spec: WorldSpec::new(core, nodes),
        }
    }
}

/// Builds a [`WorldSpec`] with typed setters (see [`WorldSpec::builder`]);
/// the first refused value is the error of [`WorldSpecBuilder::build`].
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::spec::SpecError;
/// use cmc_world::system::state::Budget;
/// use cmc_world::{NetSemantics, WorldSpec};
///
/// let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 3)
///     .requests(1)
///     .budget(Budget::Crashes, 1)
///     .crash_nodes(&[1, 2])
///     .net(NetSemantics::Fifo)
///     .build()?;
/// assert_eq!(spec.crash_nodes, [1, 2]);
/// assert_eq!(spec.net, NetSemantics::Fifo);
///
/// // Node 7 is not in a 3-node World: the first refused value is the error.
/// let refused = WorldSpec::builder(Arc::new(ReqAck::default()), 3)
///     .clients(&[7])
///     .requests(1)
///     .build();
/// assert!(matches!(refused, Err(SpecError::BadValue { name, .. }) if name == "clients"));
/// # Ok::<(), SpecError>(())
/// ```
pub struct WorldSpecBuilder {
    spec: Result<WorldSpec, SpecError>,
}

impl WorldSpecBuilder {
    /// Applies `name=value` if nothing was refused so far.
    pub fn param(mut self, name: &str, value: impl std::fmt::Display) -> WorldSpecBuilder {
        if let Ok(spec) = &mut self.spec {
            if let Err(error) = spec.set(name, &value.to_string()) {
                self.spec = Err(error);
            }
        }
        self
    }

    /// Network semantics (`net=`).
    pub fn net(self, net: NetSemantics) -> WorldSpecBuilder {
        let name = match net {
            NetSemantics::Unordered => "unordered",
            NetSemantics::Duplicating => "dup",
            NetSemantics::Fifo => "fifo",
        };
        self.param("net", name)
    }

    /// Copies of one message counted exactly (`net_bound=`).
    pub fn net_bound(self, bound: u8) -> WorldSpecBuilder {
        self.param("net_bound", bound)
    }

    /// Runs of different messages per FIFO link (`link_bound=`).
    pub fn link_bound(self, bound: u8) -> WorldSpecBuilder {
        self.param("link_bound", bound)
    }

    /// A fault budget (`drops=`, `crashes=`, ...).
    pub fn budget(self, kind: Budget, count: u8) -> WorldSpecBuilder {
        self.param(kind.name(), count)
    }

    /// Client requests issued in total (`requests=`).
    pub fn requests(self, requests: u8) -> WorldSpecBuilder {
        self.param("requests", requests)
    }

    /// Nodes that receive client requests (`clients=`).
    pub fn clients(self, nodes: &[u8]) -> WorldSpecBuilder {
        self.param("clients", node_list(nodes))
    }

    /// Nodes the environment may crash (`crash_nodes=`).
    pub fn crash_nodes(self, nodes: &[u8]) -> WorldSpecBuilder {
        self.param("crash_nodes", node_list(nodes))
    }

    /// Interchangeable nodes (`symmetry=`), checked against the other
    /// parameters by [`WorldSpecBuilder::build`].
    pub fn symmetry(self, nodes: &[u8]) -> WorldSpecBuilder {
        match nodes {
            [] => self.param("symmetry", "off"),
            _ => self.param("symmetry", node_list(nodes)),
        }
    }

    /// The quiescence bound (`quiescence=`).
    pub fn quiescence(self, steps: u32) -> WorldSpecBuilder {
        self.param("quiescence", steps)
    }

    /// The client workload (`workload=`).
    pub fn workload(self, workload: &Workload) -> WorldSpecBuilder {
        self.param("workload", workload)
    }

    /// Request `r` to the `r mod n`-th client node only (`spread=`).
    pub fn spread(self, on: bool) -> WorldSpecBuilder {
        self.param("spread", u8::from(on))
    }

    /// LOCAL_FAIL also after a reply (`local_fail_after_reply=`).
    pub fn local_fail_after_reply(self, on: bool) -> WorldSpecBuilder {
        self.param("local_fail_after_reply", u8::from(on))
    }

    /// Core parameter `index` (`cfgN=`).
    pub fn core_param(self, index: usize, value: u64) -> WorldSpecBuilder {
        self.param(&format!("cfg{index}"), value)
    }

    /// The specification, or the first refused value (parameters that
    /// depend on each other checked last, see [`WorldSpec::check_relations`]).
    pub fn build(self) -> Result<WorldSpec, SpecError> {
        let spec = self.spec?;
        spec.check_relations()?;
        Ok(spec)
    }
}

fn node_list(nodes: &[u8]) -> String {
    let list: Vec<String> = nodes.iter().map(u8::to_string).collect();
    list.join(",")
}

/// One `NAME=VALUE` parameter being applied, and how its value is read.
struct ParamValue<'a> {
    name: &'a str,
    value: &'a str,
}

impl ParamValue<'_> {
    /// The error for this parameter's value, saying why.
    fn bad(&self, why: String) -> SpecError {
        SpecError::BadValue {
            name: self.name.into(),
            value: self.value.into(),
            why,
        }
    }

    /// The value as a count from `min` to `max`.
    fn ranged(&self, min: u8, max: u8) -> Result<u8, SpecError> {
        self.value
            .parse::<u8>()
            .ok()
            .filter(|count| (min..=max).contains(count))
            .ok_or_else(|| self.bad(format!("expected a count from {min} to {max}")))
    }

    /// The value as numbers separated by commas.
    fn numbers(&self) -> Result<Vec<usize>, SpecError> {
        self.value
            .split(',')
            .map(|item| {
                item.trim()
                    .parse::<usize>()
                    .map_err(|_| self.bad("expected numbers separated by commas".into()))
            })
            .collect()
    }

    /// The value as a switch: `0`/`off` or `1`/`on`.
    fn flag(&self) -> Result<bool, SpecError> {
        match self.value {
            "0" | "off" => Ok(false),
            "1" | "on" => Ok(true),
            _ => Err(self.bad("expected 0 or 1".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::StepCore;

    /// A core that does nothing, its nodes interchangeable.
    fn idle() -> Arc<StepCore<u8>> {
        Arc::new(StepCore::idle("idle").symmetric())
    }

    #[test]
    fn params_are_parsed_and_bad_ones_explained() {
        let mut spec = WorldSpec::new(idle(), 3).unwrap();
        spec.set_all(&["net=fifo", "drops=2", "requests=1", "clients=0,2", "cfg1=7"])
            .unwrap();
        assert_eq!(spec.net, NetSemantics::Fifo);
        assert_eq!(spec.budgets[Budget::Drops as usize], 2);
        assert_eq!(spec.client_nodes, vec![0, 2]);
        assert_eq!(spec.core_params[1], 7);
        assert!(fresh()
            .set("clients", "5")
            .unwrap_err()
            .to_string()
            .contains("node 5"));
        assert!(spec
            .set("bogus", "1")
            .unwrap_err()
            .to_string()
            .contains("unknown world parameter"));
        assert!(spec
            .set("dups", "-1")
            .unwrap_err()
            .to_string()
            .contains("count"));
        assert!(spec
            .set("roles", "0,0,1")
            .unwrap_err()
            .to_string()
            .contains("role 1"));
        assert!(WorldSpec::new(idle(), NODES_MAX + 1).is_err());
    }

    fn fresh() -> WorldSpec {
        WorldSpec::new(idle(), 3).unwrap()
    }

    #[test]
    fn roles_must_name_every_node() {
        let error = fresh().set("roles", "0,0").unwrap_err().to_string();
        assert_eq!(
            error,
            "roles=0,0: 2 role(s) for a 3-node world (--nodes): give one core index per node"
        );
        let mut spec = fresh();
        spec.set_all(&["crash_nodes=1", "roles=0,0,0"]).unwrap();
        assert_eq!(spec.nodes(), 3);
        assert_eq!(spec.crash_nodes, vec![1], "roles= keeps crash_nodes");
    }

    #[test]
    fn a_parameter_given_twice_is_refused() {
        let error = fresh()
            .set_all(&["drops=1", "drops=2"])
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "drops=2: drops is already set (to 1); give each parameter once"
        );
        let mut spec = fresh();
        assert!(spec.set("drops", "x").is_err());
        spec.set("drops", "1")
            .expect("a refused value does not count as set");
    }

    #[test]
    fn spread_client_nodes_are_not_interchangeable() {
        for order in [
            ["clients=1,2", "spread=1", "symmetry=1,2"],
            ["symmetry=1,2", "clients=1,2", "spread=1"],
        ] {
            let error = fresh().set_all(&order).unwrap_err().to_string();
            assert!(error.starts_with("symmetry=1,2: with spread=1"), "{error}");
        }
    }

    /// Whether the symmetric nodes are interchangeable is checked once
    /// every parameter is set: in any order, and a later parameter that
    /// makes them differ is refused (it once reached `World::new`'s panic).
    #[test]
    fn symmetry_is_checked_against_every_parameter_in_any_order() {
        assert!(fresh()
            .set_all(&["symmetry=1,2", "crash_nodes=1,2"])
            .is_ok());
        assert!(fresh()
            .set_all(&["crash_nodes=1,2", "symmetry=1,2"])
            .is_ok());
        for order in [
            ["crash_nodes=1", "symmetry=1,2"],
            ["symmetry=1,2", "crash_nodes=1"],
        ] {
            let error = fresh().set_all(&order).unwrap_err().to_string();
            assert_eq!(
                error,
                "symmetry=1,2: nodes 1 and 2 differ in core, clients or crash_nodes: not interchangeable"
            );
        }
        let built = WorldSpec::builder(idle(), 3)
            .symmetry(&[1, 2])
            .param("clients", "1")
            .build();
        assert!(built.is_err(), "the builder checks too");
    }

    #[test]
    fn net_bound_is_at_least_one() {
        let error = fresh().set("net_bound", "0").unwrap_err().to_string();
        assert_eq!(error, "net_bound=0: expected a count from 1 to 255");
        let mut spec = fresh();
        spec.set("net_bound", "1").unwrap();
        assert_eq!(spec.net_bound, 1);
    }

    #[test]
    fn skew_is_a_positive_tick_count() {
        for value in ["0", "256", "x"] {
            let error = fresh().set("skew", value).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!("skew={value}: expected a count from 1 to 255")
            );
        }
        assert_eq!(fresh().skew, None, "unbounded by default");
        let mut spec = fresh();
        spec.set("skew", "2").unwrap();
        assert_eq!(spec.skew, Some(2));
    }

    #[test]
    fn requests_states_its_real_limit() {
        for value in ["256", "300", "-1"] {
            let error = fresh().set("requests", value).unwrap_err().to_string();
            assert_eq!(
                error,
                format!("requests={value}: expected a count from 0 to {REQUESTS_MAX}")
            );
        }
        let mut spec = fresh();
        spec.set("requests", "255").unwrap();
        assert_eq!(spec.requests, 255);
    }

    #[test]
    fn the_quiescence_bound_is_a_bounded_number_of_steps() {
        for value in ["0", "100001", "100000000", "4294967296", "x"] {
            let error = fresh().set("quiescence", value).unwrap_err().to_string();
            assert_eq!(
                error,
                format!("quiescence={value}: expected a number of steps from 1 to 100000")
            );
        }
        let mut spec = fresh();
        spec.set("quiescence", "100000").unwrap();
        assert_eq!(spec.quiescence_steps, Some(100_000));
    }
}
