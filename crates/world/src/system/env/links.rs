//! Link faults: LINKS (a pair cut or healed, budget `partitions`), LINK one
//! way (`oneway_cuts`), ISOLATE a node (`isolations`) and SPLIT the nodes in
//! two groups (`splits`).

use cmc_model::{DecodeError, Decoder, Encode};

use crate::system::action::{Action, ChartStep, Family};
use crate::system::state::{Budget, WorldState};

use super::{spend, Env, Observer, StepFault, SPLIT_NODES_MAX};

/// A change of the links between nodes; it changes no node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkAction {
    /// LINKS: cut or heal both directions between `a < b` (budget
    /// `partitions`): a cut when both are up, else a heal.
    Pair {
        /// Lower node id.
        a: u8,
        /// Higher node id.
        b: u8,
        /// `true`: cut; `false`: heal.
        cut: bool,
    },
    /// LINK: cut or heal the direction `src -> dst` only (budget `oneway_cuts`).
    OneWay {
        /// Sending side.
        src: u8,
        /// Receiving side.
        dst: u8,
        /// `true`: cut; `false`: heal.
        cut: bool,
    },
    /// ISOLATE: cut every link to and from `node` (budget `isolations`).
    Isolate {
        /// The node.
        node: u8,
    },
    /// SPLIT: cut every link between the nodes of `group` (a bit per node,
    /// node 0 always in it) and the others (budget `splits`).
    Split {
        /// The group containing node 0.
        group: u64,
    },
}

/// `cut` or `heal`.
fn cut_or_heal(cut: bool) -> &'static str {
    if cut {
        "cut"
    } else {
        "heal"
    }
}

impl Family for LinkAction {
    const KINDS: &'static [(&'static str, Option<Budget>)] = &[
        ("PARTITION", Some(Budget::Partitions)),
        ("HEAL", Some(Budget::Partitions)),
        ("ONEWAY_CUT", Some(Budget::OneWayCuts)),
        ("ONEWAY_HEAL", Some(Budget::OneWayCuts)),
        ("ISOLATE", Some(Budget::Isolations)),
        ("SPLIT", Some(Budget::Splits)),
    ];

    fn kind(&self) -> (&'static str, bool) {
        let name = match self {
            LinkAction::Pair { cut: true, .. } => "PARTITION",
            LinkAction::Pair { cut: false, .. } => "HEAL",
            LinkAction::OneWay { cut: true, .. } => "ONEWAY_CUT",
            LinkAction::OneWay { cut: false, .. } => "ONEWAY_HEAL",
            LinkAction::Isolate { .. } => "ISOLATE",
            LinkAction::Split { .. } => "SPLIT",
        };
        (name, true)
    }

    fn changed_node(&self) -> Option<u8> {
        None
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            LinkAction::Pair { a, b, cut } => out.extend([7, a, b, u8::from(cut)]),
            LinkAction::OneWay { src, dst, cut } => out.extend([11, src, dst, u8::from(cut)]),
            LinkAction::Isolate { node } => out.extend([12, node]),
            LinkAction::Split { group } => {
                out.push(13);
                group.encode(out);
            }
        }
    }

    fn decode(tag: u8, decoder: &mut Decoder<'_>) -> Result<Option<Self>, DecodeError> {
        Ok(Some(match tag {
            7 => LinkAction::Pair {
                a: u8::decode(decoder)?,
                b: u8::decode(decoder)?,
                cut: bool::decode(decoder)?,
            },
            11 => LinkAction::OneWay {
                src: u8::decode(decoder)?,
                dst: u8::decode(decoder)?,
                cut: bool::decode(decoder)?,
            },
            12 => LinkAction::Isolate {
                node: u8::decode(decoder)?,
            },
            13 => LinkAction::Split {
                group: u64::decode(decoder)?,
            },
            _ => return Ok(None),
        }))
    }

    fn text(&self, env: &Env) -> String {
        match *self {
            LinkAction::Pair { a, b, cut } => format!("LINKS {} n{a}-n{b}", cut_or_heal(cut)),
            LinkAction::OneWay { src, dst, cut } => {
                format!("LINK {} n{src}->n{dst}", cut_or_heal(cut))
            }
            LinkAction::Isolate { node } => format!("ISOLATE n{node}"),
            LinkAction::Split { group } => {
                let (inside, outside): (Vec<u8>, Vec<u8>) =
                    (0..env.spec.nodes() as u8).partition(|node| group & (1 << node) != 0);
                let names = |nodes: Vec<u8>| {
                    let names: Vec<String> = nodes.iter().map(|n| format!("n{n}")).collect();
                    names.join(",")
                };
                format!("SPLIT {} | {}", names(inside), names(outside))
            }
        }
    }

    /// On the line of the lower node of a pair, the sending side of one
    /// direction, the isolated node, node 0 for a split.
    fn chart(&self, env: &Env) -> ChartStep {
        let (node, label) = match *self {
            LinkAction::Pair { a, .. } => (a, self.text(env)),
            LinkAction::OneWay { src, .. } => (src, self.text(env)),
            LinkAction::Isolate { node } => (node, "ISOLATE".into()),
            LinkAction::Split { .. } => (0, self.text(env)),
        };
        ChartStep::Local { node, label }
    }

    fn renamed(&self, _env: &Env, perm: &[u32]) -> Option<Self> {
        let to = |node: u8| perm[node as usize] as u8;
        Some(match *self {
            LinkAction::Pair { a, b, cut } => LinkAction::Pair {
                a: to(a).min(to(b)),
                b: to(a).max(to(b)),
                cut,
            },
            LinkAction::OneWay { src, dst, cut } => LinkAction::OneWay {
                src: to(src),
                dst: to(dst),
                cut,
            },
            LinkAction::Isolate { node } => LinkAction::Isolate { node: to(node) },
            LinkAction::Split { group } => {
                let all = (1u64 << perm.len()) - 1;
                let renamed = (0..perm.len())
                    .filter(|&node| group & (1 << node) != 0)
                    .fold(0, |renamed, node| renamed | 1 << perm[node]);
                // The group named is the side that holds node 0.
                let group = if renamed & 1 != 0 {
                    renamed
                } else {
                    all & !renamed
                };
                LinkAction::Split { group }
            }
        })
    }

    #[cfg(test)]
    fn examples() -> Vec<Self> {
        vec![
            LinkAction::Pair {
                a: 0,
                b: 2,
                cut: true,
            },
            LinkAction::Pair {
                a: 1,
                b: 2,
                cut: false,
            },
            LinkAction::OneWay {
                src: 2,
                dst: 0,
                cut: true,
            },
            LinkAction::OneWay {
                src: 0,
                dst: 1,
                cut: false,
            },
            LinkAction::Isolate { node: 3 },
            LinkAction::Split { group: 0b1011 },
        ]
    }
}

impl Env {
    /// The link faults enabled by their budgets: pairs, then one-way cuts,
    /// isolations and splits.
    #[inline]
    pub(super) fn link_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        if state.budget(Budget::Partitions) > 0 {
            let nodes = state.nodes.len() as u8;
            for a in 0..nodes {
                for b in a + 1..nodes {
                    out.push(Action::Link(LinkAction::Pair {
                        a,
                        b,
                        cut: state.pair_up(a, b),
                    }));
                }
            }
        }
        self.partition_actions(state, out);
    }

    /// The effect of a link fault: `Ok(false)` when it is not enabled.
    #[inline]
    pub(super) fn link_next(
        &self,
        state: &WorldState,
        action: &LinkAction,
        next: &mut WorldState,
        _observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        match *action {
            LinkAction::Pair { a, b, cut } => {
                if b as usize >= state.nodes.len() || a >= b || state.pair_up(a, b) != cut {
                    return Ok(false);
                }
                if !spend(next, Budget::Partitions) {
                    return Ok(false);
                }
                next.set_cut(a, b, cut);
                next.set_cut(b, a, cut);
            }
            LinkAction::OneWay { src, dst, cut } => {
                let nodes = state.nodes.len();
                if src == dst || src as usize >= nodes || dst as usize >= nodes {
                    return Ok(false);
                }
                if state.link_up(src, dst) != cut || !spend(next, Budget::OneWayCuts) {
                    return Ok(false);
                }
                next.set_cut(src, dst, cut);
            }
            LinkAction::Isolate { node } => {
                if node as usize >= state.nodes.len() {
                    return Ok(false);
                }
                if !cut_crossing(next, 1 << node) || !spend(next, Budget::Isolations) {
                    return Ok(false);
                }
            }
            LinkAction::Split { group } => {
                let nodes = state.nodes.len();
                let valid = nodes <= SPLIT_NODES_MAX
                    && group & 1 == 1
                    && group < (1 << nodes) - 1
                    && group >> nodes == 0;
                if !valid || !cut_crossing(next, group) || !spend(next, Budget::Splits) {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The one-way cuts and heals, isolations and splits enabled by their budgets.
    fn partition_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        let nodes = state.nodes.len() as u8;
        if state.budget(Budget::OneWayCuts) > 0 {
            for src in 0..nodes {
                for dst in (0..nodes).filter(|&dst| dst != src) {
                    let cut = state.link_up(src, dst);
                    out.push(Action::Link(LinkAction::OneWay { src, dst, cut }));
                }
            }
        }
        if state.budget(Budget::Isolations) > 0 {
            for node in 0..nodes {
                if crossing(nodes, 1 << node).any(|(src, dst)| state.link_up(src, dst)) {
                    out.push(Action::Link(LinkAction::Isolate { node }));
                }
            }
        }
        if state.budget(Budget::Splits) > 0 && nodes as usize <= SPLIT_NODES_MAX {
            for rest in 0..(1u64 << (nodes - 1)) - 1 {
                let group = 1 | rest << 1;
                if crossing(nodes, group).any(|(src, dst)| state.link_up(src, dst)) {
                    out.push(Action::Link(LinkAction::Split { group }));
                }
            }
        }
    }
}

/// The directions of links between the nodes of `group` (a bit per node)
/// and the other nodes of a World of `nodes` nodes.
fn crossing(nodes: u8, group: u64) -> impl Iterator<Item = (u8, u8)> {
    let inside = move |node: u8| group & (1 << node) != 0;
    (0..nodes).flat_map(move |a| {
        (0..nodes)
            .filter(move |&b| inside(a) && !inside(b))
            .flat_map(move |b| [(a, b), (b, a)])
    })
}

/// Cuts every direction between `group` and the other nodes; whether any was up.
fn cut_crossing(state: &mut WorldState, group: u64) -> bool {
    let nodes = state.nodes.len() as u8;
    let mut changed = false;
    for (src, dst) in crossing(nodes, group) {
        changed |= state.set_cut(src, dst, true);
    }
    changed
}
