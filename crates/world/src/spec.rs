//! What a World is built from: the cores, which node runs which, the network
//! semantics, the fault budgets; and the `NAME=VALUE` parameters that set them.

use std::sync::Arc;

use cmc_model::ModelParam;

use crate::abi::PARAMS_MAX;
use crate::core::Core;
use crate::state::{Budget, BUDGETS};

/// Most nodes a World may have (links are a 64-bit pair set).
pub const NODES_MAX: usize = 8;
/// Most client requests a run may issue.
pub const REQUESTS_MAX: u8 = 32;
/// Largest bound of the quiescence check (`quiescence=K`): the fair run from
/// every state keeps its steps, so the bound is also a memory bound.
pub const QUIESCENCE_STEPS_MAX: u32 = 100_000;

/// How the network treats messages.
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
/// the public fields or apply `NAME=VALUE` pairs with [`WorldSpec::set`].
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
    /// Parameters passed to every core in [`crate::abi::Config::params`].
    pub core_params: [u64; PARAMS_MAX],
    /// Run each step twice from a copy and report any difference.
    pub check_determinism: bool,
    /// Copies of one message (unordered network; FIFO: of one run of equal
    /// consecutive messages on a link) counted exactly; more are a surplus
    /// whose number is not tracked (see [`crate::env`]). At least 1. Keeps
    /// retransmission finite without losing a message.
    pub net_bound: u8,
    /// FIFO network: most runs of different messages queued on one link;
    /// a SEND that would start another is a capacity fault. At least 1.
    pub link_bound: u8,
    /// Bound of the quiescence check with the goal "every client replied"
    /// (`quiescence=K`; see [`crate::quiescence`]); `None`: no check.
    pub quiescence_steps: Option<u32>,
    /// Interchangeable nodes for symmetry reduction (`symmetry=1,2`; see
    /// [`crate::symmetry`]); empty (the default): off.
    pub symmetric_nodes: Vec<u8>,
    /// The drift bound (`skew=K`): the clocks of any two nodes never differ
    /// by more than K, a TICK that would break this is not enabled, and a
    /// crashed node's clock keeps running (see [`crate::env`]). `None` (the
    /// default): every clock advances freely, and only on live nodes.
    pub skew: Option<u8>,
    /// `NAME=VALUE` pairs applied so far, for replay files.
    pub applied: Vec<ModelParam>,
}

/// The parameter name of each fault budget (`drops=K`...), in [`Budget`] order.
pub const BUDGET_NAMES: [(&str, Budget); BUDGETS] = [
    ("drops", Budget::Drops),
    ("dups", Budget::Dups),
    ("crashes", Budget::Crashes),
    ("restarts", Budget::Restarts),
    ("partitions", Budget::Partitions),
    ("ticks", Budget::Ticks),
    ("local_fails", Budget::LocalFails),
];

/// The parameters [`WorldSpec::set`] accepts, with their meaning (for `--help` texts).
pub const PARAM_HELP: &str = "\
net=unordered|dup|fifo   network semantics (default unordered)
net_bound=K              copies of a message counted exactly; more are an untracked surplus (1 to 255, default 1)
link_bound=K             FIFO: runs of different messages queued per link; more is a capacity fault (1 to 255, default 2)
drops=K dups=K crashes=K restarts=K partitions=K ticks=K local_fails=K   fault budgets (default 0)
requests=K               client requests issued in total (0 to 32, default 0)
clients=0,2              nodes that receive client requests (default 0)
crash_nodes=1,2          nodes the environment may crash (default all)
roles=0,1,1              core index of each node when several --core are given (one per node)
symmetry=off|1,2         interchangeable nodes: states are merged up to renaming them (default off)
skew=K                   clocks of any two nodes differ by at most K ticks; crashed nodes' clocks keep running (1 to 255, default: unbounded)
quiescence=K             with spent fault budgets, the fair schedule answers every client within K steps (1 to 100000)
cfg0=V .. cfg7=V         values passed to every core in config.params";

impl WorldSpec {
    /// `nodes` nodes all running `core`, an unordered network, no faults and no requests.
    pub fn new(core: Arc<dyn Core>, nodes: usize) -> Result<WorldSpec, String> {
        WorldSpec::with_cores(vec![core], vec![0; nodes])
    }

    /// Nodes running `cores[roles[n]]`.
    pub fn with_cores(cores: Vec<Arc<dyn Core>>, roles: Vec<usize>) -> Result<WorldSpec, String> {
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
        };
        spec.set_roles(roles)?;
        spec.crash_nodes = (0..spec.nodes() as u8).collect();
        Ok(spec)
    }

    /// The number of nodes.
    pub fn nodes(&self) -> usize {
        self.roles.len()
    }

    /// The core that node `node` runs.
    pub fn core_of(&self, node: usize) -> &dyn Core {
        &*self.cores[self.roles[node]]
    }

    fn set_roles(&mut self, roles: Vec<usize>) -> Result<(), String> {
        if roles.is_empty() || roles.len() > NODES_MAX {
            return Err(format!(
                "a world has 1 to {NODES_MAX} nodes, not {}",
                roles.len()
            ));
        }
        if let Some(bad) = roles.iter().find(|role| **role >= self.cores.len()) {
            return Err(format!(
                "role {bad} names no core: {} core(s) were given (numbered from 0)",
                self.cores.len()
            ));
        }
        if let Some(node) = self
            .client_nodes
            .iter()
            .find(|n| **n as usize >= roles.len())
        {
            return Err(format!(
                "client node {node} does not exist in a {}-node world",
                roles.len()
            ));
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
    /// (set those before `symmetry`; [`crate::World::new`] checks again).
    pub fn check_symmetry(&self) -> Result<(), String> {
        let Some(&first) = self.symmetric_nodes.first() else {
            return Ok(());
        };
        for &node in &self.symmetric_nodes {
            if node as usize >= self.nodes() {
                return Err(format!(
                    "node {node} does not exist in a {}-node world",
                    self.nodes()
                ));
            }
            let alike = |set: &[u8]| set.contains(&node) == set.contains(&first);
            if self.roles[node as usize] != self.roles[first as usize]
                || !alike(&self.client_nodes)
                || !alike(&self.crash_nodes)
            {
                return Err(format!(
                    "nodes {first} and {node} differ in core, clients or crash_nodes: not interchangeable"
                ));
            }
        }
        let core = self.core_of(first as usize);
        let config = crate::abi::Config {
            node: first as u32,
            nodes: self.nodes() as u32,
            params: self.core_params,
        };
        let mut durable = vec![0; core.durable_size()];
        let mut volatile = vec![0; core.volatile_size()];
        let identity: Vec<u32> = (0..self.nodes() as u32).collect();
        if !core.permute(&config, &mut durable, &mut volatile, &identity) {
            return Err(format!("core `{}` has no permute function", core.name()));
        }
        Ok(())
    }

    /// Applies one `NAME=VALUE` parameter (see [`PARAM_HELP`]); each may be
    /// given once.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        if let Some(earlier) = self.applied.iter().find(|param| param.name == name) {
            return Err(format!(
                "{name}={value}: {name} is already set (to {}); give each parameter once",
                earlier.value
            ));
        }
        let ranged = |min: u8, max: u8| -> Result<u8, String> {
            value
                .parse::<u8>()
                .ok()
                .filter(|count| (min..=max).contains(count))
                .ok_or_else(|| format!("{name}={value}: expected a count from {min} to {max}"))
        };
        let count = || ranged(0, u8::MAX);
        let nodes = || -> Result<Vec<usize>, String> {
            value
                .split(',')
                .map(|item| {
                    item.trim().parse::<usize>().map_err(|_| {
                        format!("{name}={value}: expected numbers separated by commas")
                    })
                })
                .collect()
        };
        if let Some((_, kind)) = BUDGET_NAMES.iter().find(|(known, _)| *known == name) {
            self.budgets[*kind as usize] = count()?;
        } else if name == "net" {
            self.net = match value {
                "unordered" => NetSemantics::Unordered,
                "dup" | "duplicating" => NetSemantics::Duplicating,
                "fifo" => NetSemantics::Fifo,
                _ => return Err(format!("net={value}: expected unordered, dup or fifo")),
            };
        } else if name == "net_bound" {
            self.net_bound = ranged(1, u8::MAX)?;
        } else if name == "link_bound" {
            self.link_bound = ranged(1, u8::MAX)?;
        } else if name == "skew" {
            self.skew = Some(ranged(1, u8::MAX)?);
        } else if name == "symmetry" {
            self.symmetric_nodes = match value {
                "off" => Vec::new(),
                _ => value
                    .split(',')
                    .map(|node| node.trim().parse::<u8>())
                    .collect::<Result<_, _>>()
                    .map_err(|_| {
                        format!("{name}={value}: expected off or node ids separated by commas")
                    })?,
            };
            self.check_symmetry()
                .map_err(|why| format!("{name}={value}: {why}"))?;
        } else if name == "quiescence" {
            let steps = value
                .parse::<u32>()
                .ok()
                .filter(|steps| (1..=QUIESCENCE_STEPS_MAX).contains(steps))
                .ok_or_else(|| {
                    format!(
                        "{name}={value}: expected a number of steps from 1 to {QUIESCENCE_STEPS_MAX}"
                    )
                })?;
            self.quiescence_steps = Some(steps);
        } else if name == "requests" {
            self.requests = ranged(0, REQUESTS_MAX)?;
        } else if name == "clients" || name == "crash_nodes" {
            let list = nodes()?;
            if let Some(bad) = list.iter().find(|n| **n >= self.nodes()) {
                return Err(format!(
                    "{name}={value}: node {bad} does not exist in a {}-node world",
                    self.nodes()
                ));
            }
            let list = list.into_iter().map(|n| n as u8).collect();
            if name == "clients" {
                self.client_nodes = list;
            } else {
                self.crash_nodes = list;
            }
        } else if name == "roles" {
            let roles = nodes()?;
            if roles.len() != self.nodes() {
                return Err(format!(
                    "{name}={value}: {} role(s) for a {}-node world (--nodes): give one core index per node",
                    roles.len(),
                    self.nodes()
                ));
            }
            self.set_roles(roles)?;
        } else if let Some(index) = name
            .strip_prefix("cfg")
            .and_then(|i| i.parse::<usize>().ok())
        {
            if index >= PARAMS_MAX {
                return Err(format!(
                    "{name}: core parameters are cfg0 to cfg{}",
                    PARAMS_MAX - 1
                ));
            }
            self.core_params[index] = value
                .parse()
                .map_err(|_| format!("{name}={value}: expected an unsigned 64-bit number"))?;
        } else {
            return Err(format!(
                "unknown world parameter `{name}`; known parameters:\n{PARAM_HELP}"
            ));
        }
        self.applied.push(ModelParam::new(name, value));
        Ok(())
    }

    /// Applies `NAME=VALUE` strings in order.
    pub fn set_all<S: AsRef<str>>(&mut self, pairs: &[S]) -> Result<(), String> {
        for pair in pairs {
            let pair = pair.as_ref();
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{pair}` is not NAME=VALUE"))?;
            self.set(name.trim(), value.trim())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cores::reqack::ReqAck;

    #[test]
    fn params_are_parsed_and_bad_ones_explained() {
        let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
        spec.set_all(&["net=fifo", "drops=2", "requests=1", "clients=0,2", "cfg1=7"])
            .unwrap();
        assert_eq!(spec.net, NetSemantics::Fifo);
        assert_eq!(spec.budgets[Budget::Drops as usize], 2);
        assert_eq!(spec.client_nodes, vec![0, 2]);
        assert_eq!(spec.core_params[1], 7);
        assert!(fresh().set("clients", "5").unwrap_err().contains("node 5"));
        assert!(spec
            .set("bogus", "1")
            .unwrap_err()
            .contains("unknown world parameter"));
        assert!(spec.set("dups", "-1").unwrap_err().contains("count"));
        assert!(spec.set("roles", "0,0,1").unwrap_err().contains("role 1"));
        assert!(WorldSpec::new(Arc::new(ReqAck::default()), 9).is_err());
    }

    fn fresh() -> WorldSpec {
        WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap()
    }

    #[test]
    fn roles_must_name_every_node() {
        let error = fresh().set("roles", "0,0").unwrap_err();
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
        let error = fresh().set_all(&["drops=1", "drops=2"]).unwrap_err();
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
    fn net_bound_is_at_least_one() {
        let error = fresh().set("net_bound", "0").unwrap_err();
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
                error,
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
        for value in ["33", "255", "300", "-1"] {
            let error = fresh().set("requests", value).unwrap_err();
            assert_eq!(
                error,
                format!("requests={value}: expected a count from 0 to {REQUESTS_MAX}")
            );
        }
        let mut spec = fresh();
        spec.set("requests", "32").unwrap();
        assert_eq!(spec.requests, 32);
    }

    #[test]
    fn the_quiescence_bound_is_a_bounded_number_of_steps() {
        for value in ["0", "100001", "100000000", "4294967296", "x"] {
            let error = fresh().set("quiescence", value).unwrap_err();
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
