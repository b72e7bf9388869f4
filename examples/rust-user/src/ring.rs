//! A token ring: `N` nodes pass one token around, and a node enters its
//! critical section only while it holds the token. Invariant:
//! `MutualExclusion` (at most one node in its critical section).
//!
//! Planted bug `BUG=1`: a node also enters while its left neighbour holds
//! the token (it acts on a stale view of the ring), so two nodes can be in
//! their critical sections at once.

use cmc_cli::Params;
use cmc_model::{Encode, Model, ModelParam, Property};

/// Most nodes on the ring (one bit each in [`Ring::critical`]).
pub const NODES_MAX: usize = 8;

/// The ring's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Encode)]
pub struct Ring {
    /// The node holding the token.
    pub token: u8,
    /// The nodes in their critical sections, one bit per node.
    pub critical: u8,
}

/// What a node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Node enters its critical section.
    Enter(u8),
    /// Node leaves its critical section.
    Exit(u8),
    /// Node passes the token to its right neighbour.
    Pass(u8),
}

/// The token ring of `nodes` nodes, with planted bug `bug` (0: none).
#[derive(Clone, Debug)]
pub struct TokenRing {
    nodes: u8,
    bug: u8,
}

impl TokenRing {
    /// The ring of `nodes` nodes (2 to [`NODES_MAX`]), planted bug `bug` (0 or 1).
    pub fn new(nodes: u8, bug: u8) -> TokenRing {
        TokenRing { nodes, bug }
    }

    /// The ring the parameters `N` and `BUG` describe.
    pub fn build(params: &mut Params) -> Result<TokenRing, String> {
        let nodes = params.take_count("N", 3, 2..=NODES_MAX)?;
        let bug = params.take_count("BUG", 0, 0..=1)?;
        Ok(TokenRing::new(nodes as u8, bug as u8))
    }

    /// Whether node `node` may enter its critical section in `ring`.
    fn may_enter(&self, ring: &Ring, node: u8) -> bool {
        let left = (node + self.nodes - 1) % self.nodes;
        ring.token == node || (self.bug == 1 && ring.token == left)
    }
}

impl Model for TokenRing {
    type State = Ring;
    type Action = Step;

    fn name(&self) -> String {
        "token-ring".into()
    }

    fn params(&self) -> Vec<ModelParam> {
        vec![
            ModelParam::new("N", self.nodes.to_string()),
            ModelParam::new("BUG", self.bug.to_string()),
        ]
    }

    fn init_states(&self, out: &mut Vec<Ring>) {
        out.push(Ring {
            token: 0,
            critical: 0,
        });
    }

    fn actions(&self, _ring: &Ring, out: &mut Vec<Step>) {
        for node in 0..self.nodes {
            out.extend([Step::Enter(node), Step::Exit(node), Step::Pass(node)]);
        }
    }

    fn next_state(&self, ring: &Ring, step: &Step) -> Option<Ring> {
        let inside = |node: u8| ring.critical & (1 << node) != 0;
        match *step {
            Step::Enter(node) if !inside(node) && self.may_enter(ring, node) => Some(Ring {
                critical: ring.critical | 1 << node,
                ..ring.clone()
            }),
            Step::Exit(node) if inside(node) => Some(Ring {
                critical: ring.critical & !(1 << node),
                ..ring.clone()
            }),
            Step::Pass(node) if ring.token == node && !inside(node) => Some(Ring {
                token: (node + 1) % self.nodes,
                ..ring.clone()
            }),
            _ => None,
        }
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always(
            "MutualExclusion",
            |_: &TokenRing, ring: &Ring| ring.critical.count_ones() <= 1,
        )]
    }

    fn format_action(&self, step: &Step) -> String {
        match step {
            Step::Enter(node) => format!("Enter(n{node})"),
            Step::Exit(node) => format!("Exit(n{node})"),
            Step::Pass(node) => format!("Pass(n{node})"),
        }
    }
}
