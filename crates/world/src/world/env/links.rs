//! Link faults: LINKS (a pair cut or healed, budget `partitions`), LINK one
//! way (`oneway_cuts`), ISOLATE a node (`isolations`) and SPLIT the nodes in
//! two groups (`splits`).

use crate::world::action::Action;
use crate::world::state::{Budget, WorldState};

use super::{spend, Env, Observer, StepFault, SPLIT_NODES_MAX};

impl Env {
    /// The link faults enabled by their budgets: pairs, then one-way cuts,
    /// isolations and splits.
    #[inline]
    pub(super) fn link_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        if state.budget(Budget::Partitions) > 0 {
            let nodes = state.nodes.len() as u8;
            for a in 0..nodes {
                for b in a + 1..nodes {
                    out.push(Action::Links {
                        a,
                        b,
                        cut: state.pair_up(a, b),
                    });
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
        action: &Action,
        next: &mut WorldState,
        _observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        match *action {
            Action::Links { a, b, cut } => {
                if b as usize >= state.nodes.len() || a >= b || state.pair_up(a, b) != cut {
                    return Ok(false);
                }
                if !spend(next, Budget::Partitions) {
                    return Ok(false);
                }
                next.set_cut(a, b, cut);
                next.set_cut(b, a, cut);
            }
            Action::OneWay { src, dst, cut } => {
                let nodes = state.nodes.len();
                if src == dst || src as usize >= nodes || dst as usize >= nodes {
                    return Ok(false);
                }
                if state.link_up(src, dst) != cut || !spend(next, Budget::OneWayCuts) {
                    return Ok(false);
                }
                next.set_cut(src, dst, cut);
            }
            Action::Isolate { node } => {
                if node as usize >= state.nodes.len() {
                    return Ok(false);
                }
                if !cut_crossing(next, 1 << node) || !spend(next, Budget::Isolations) {
                    return Ok(false);
                }
            }
            Action::Split { group } => {
                let nodes = state.nodes.len();
                let valid = nodes <= SPLIT_NODES_MAX
                    && group & 1 == 1
                    && group < (1 << nodes) - 1
                    && group >> nodes == 0;
                if !valid || !cut_crossing(next, group) || !spend(next, Budget::Splits) {
                    return Ok(false);
                }
            }
            _ => unreachable!("dispatched to the wrong family: {action:?}"),
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
                    out.push(Action::OneWay { src, dst, cut });
                }
            }
        }
        if state.budget(Budget::Isolations) > 0 {
            for node in 0..nodes {
                if crossing(nodes, 1 << node).any(|(src, dst)| state.link_up(src, dst)) {
                    out.push(Action::Isolate { node });
                }
            }
        }
        if state.budget(Budget::Splits) > 0 && nodes as usize <= SPLIT_NODES_MAX {
            for rest in 0..(1u64 << (nodes - 1)) - 1 {
                let group = 1 | rest << 1;
                if crossing(nodes, group).any(|(src, dst)| state.link_up(src, dst)) {
                    out.push(Action::Split { group });
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
