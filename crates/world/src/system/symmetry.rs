//! Symmetry reduction: interchangeable nodes (off by default).
//!
//! With `symmetry=1,2` (nodes that run the same core, are all client nodes
//! or none, and all crashable or none), every state the World produces is
//! replaced by its canonical form: the least encoding over every renaming of
//! those nodes among themselves. Renaming moves each node's record, renames
//! node ids inside core states and messages (through the core's `permute`
//! and `permute_message`; its `node_ids` lets a state whose ids a renaming
//! fixes go unrenamed), and renames the environment's own ids: message
//! endpoints, cut links and the ghost history's nodes. Sound when the core's
//! behaviour does not depend on which of the interchangeable ids it has.
//!
//! ```
//! use std::sync::Arc;
//! use cmc_search::Checker;
//! use cmc_world::example_cores::reqack::ReqAck;
//! use cmc_world::{World, WorldSpec};
//!
//! // Three nodes: the sender and two interchangeable receivers.
//! let spec = |symmetric: &[u8]| {
//!     WorldSpec::builder(Arc::new(ReqAck::default()), 3)
//!         .requests(1).param("drops", 1).symmetry(symmetric).build().unwrap()
//! };
//! let states = |spec| Checker::new(World::new(spec)).workers(1).run().stats.distinct_states;
//! let (full, reduced) = (states(spec(&[])), states(spec(&[1, 2])));
//! assert!(reduced < full, "{reduced} < {full}");
//! ```

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;

use cmc_model::Encode;

use crate::core::helpers::node_bit;
use crate::system::env::Env;
use crate::system::spec::{NetSemantics, WorldSpec};
use crate::system::state::RenameScratch;
use crate::system::state::{NodeState, Payload, Persist, WorldState};

/// Renames the bytes of a World's ghost variables (all of them, in order)
/// by `perm[old] = new`, in place (see
/// [`GhostVar::renamed_by`](crate::system::ghosts::GhostVar::renamed_by)).
pub(crate) type RenameVars<'a> = &'a (dyn Fn(&mut [u8], &[u32]) + 'a);

/// The renamings of a World's interchangeable nodes.
pub(crate) struct Symmetry {
    /// Every permutation of the node ids (`perm[old] = new`) that moves only
    /// interchangeable nodes, identity included.
    perms: Vec<Vec<u32>>,
    /// `inverses[i]` is the inverse of `perms[i]` (`inverse[new] = old`).
    inverses: Vec<Vec<u32>>,
    /// `moved[i]` is the set of ids `perms[i]` moves, as bits ([`node_bit`]).
    moved: Vec<u64>,
}

impl Symmetry {
    /// The renamings for `spec`, or `None` when symmetry is off.
    pub(crate) fn new(spec: &WorldSpec) -> Option<Symmetry> {
        let members = &spec.symmetric_nodes;
        if members.len() < 2 {
            return None;
        }
        let mut perms = Vec::new();
        let mut order: Vec<u8> = members.clone();
        permutations(&mut order, 0, &mut |order| {
            let mut perm: Vec<u32> = (0..spec.nodes() as u32).collect();
            for (from, to) in members.iter().zip(order.iter()) {
                perm[*from as usize] = *to as u32;
            }
            perms.push(perm);
        });
        let inverses = perms
            .iter()
            .map(|perm| {
                let mut inverse = vec![0; perm.len()];
                for (old, &new) in perm.iter().enumerate() {
                    inverse[new as usize] = old as u32;
                }
                inverse
            })
            .collect();
        let moved = perms
            .iter()
            .map(|perm| {
                let ids = perm.iter().enumerate().map(|(old, &new)| (old as u32, new));
                ids.filter(|(old, new)| old != new)
                    .fold(0, |moved, (old, _)| moved | node_bit(old))
            })
            .collect();
        Some(Symmetry {
            perms,
            inverses,
            moved,
        })
    }

    /// How many renamings there are (the identity, index 0, included).
    pub(crate) fn len(&self) -> usize {
        self.perms.len()
    }

    /// Renaming `index` (`perm[old] = new`).
    pub(crate) fn perm(&self, index: usize) -> &[u32] {
        &self.perms[index]
    }

    /// The inverse of renaming `index`.
    pub(crate) fn inverse(&self, index: usize) -> &[u32] {
        &self.inverses[index]
    }

    /// Replaces `state` by its canonical form: its least renaming, ordered
    /// node by node, then by the environment's encoding (the tests'
    /// `state_order` spells the order out on whole states). Renamings are
    /// made in this thread's reused buffers: no allocation once warm.
    ///
    /// Renaming changes a node's core state only (besides moving the node),
    /// and leaves it as it is when it moves none of the ids the state holds
    /// ([`Core::node_ids`](crate::Core::node_ids), asked once per node):
    /// then it is not copied. So a renaming is tried as its renamed cores alone, built position by
    /// position and compared with the least's, the rest of each node being
    /// read where it is. A renaming is dropped at the first node that makes
    /// it greater than the least so far (most are dropped after a node or
    /// two); if it becomes the least, its cores are kept, and those it had
    /// not built yet are built only when a later renaming reaches them or
    /// the least is final. Its environment (the network, cut links and
    /// history renamed) is encoded only when its nodes tie with the least's,
    /// in two pieces, the network's first and the rest's only if the first
    /// does not decide, and the least's pieces are kept for all the ties
    /// they meet. The least's nodes are finally moved into place, not
    /// copied, and `state`'s environment renamed in place.
    pub(crate) fn canonicalise(&self, env: &Env, vars: RenameVars<'_>, state: &mut WorldState) {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            // While renamings are tried, `state` holds only its environment.
            let original = std::mem::take(&mut state.nodes);
            let renamer = Renamer {
                env,
                vars,
                check_skips: cfg!(debug_assertions) || env.spec.check_determinism || sampled(),
            };
            match self.least_renaming(&renamer, state, &original, scratch) {
                Least::Itself => {
                    state.nodes = original;
                    state.set_renaming(0);
                }
                Least::Renaming { index, built } => {
                    self.install(&renamer, state, original, (index, built), scratch)
                }
            }
        })
    }

    /// The least renaming of the state whose environment is `state` and
    /// whose nodes are `original`, with the renamed cores of its first
    /// `built` positions in `scratch.best_cores` (see
    /// [`canonicalise`](Self::canonicalise) for the order and the search).
    fn least_renaming(
        &self,
        renamer: &Renamer<'_>,
        state: &WorldState,
        original: &[NodeState],
        scratch: &mut Scratch,
    ) -> Least {
        let Scratch {
            cores,
            best_cores,
            node_ids,
            environments,
            ..
        } = scratch;
        let count = original.len();
        cores.resize_with(count, RenamedCore::default);
        best_cores.resize_with(count, RenamedCore::default);
        node_ids.clear();
        node_ids.resize(count, None);
        // The least renaming so far (`None`: `state` itself), and how
        // many of its renamed cores `best_cores` holds (from position 0).
        let mut best: Option<usize> = None;
        let mut best_built = 0;
        environments.least.forget();
        let renamings = self.perms.iter().zip(&self.inverses).enumerate();
        for (index, (perm, inverse)) in renamings.skip(1) {
            let moved = self.moved[index];
            let mut order = Ordering::Equal;
            let mut at = 0;
            while order == Ordering::Equal && at < count {
                let old = inverse[at] as usize;
                let node = &original[old];
                rename_core(
                    renamer,
                    node,
                    old,
                    perm,
                    moved,
                    &mut node_ids[old],
                    &mut cores[at],
                );
                let least = match best {
                    Some(least) => {
                        let least_old = self.inverses[least][at] as usize;
                        let least_node = &original[least_old];
                        if at == best_built {
                            let (least_perm, least_moved) = (&self.perms[least], self.moved[least]);
                            let ids = &mut node_ids[least_old];
                            let out = &mut best_cores[at];
                            rename_core(
                                renamer,
                                least_node,
                                least_old,
                                least_perm,
                                least_moved,
                                ids,
                                out,
                            );
                            best_built += 1;
                        }
                        best_cores[at].of(least_node)
                    }
                    None => {
                        let node = &original[at];
                        (node.core.as_slice(), node.persists.as_slice(), node)
                    }
                };
                order = renamed_order(cores[at].of(node), least);
                at += 1;
            }
            match order {
                Ordering::Greater => continue,
                Ordering::Less => {
                    std::mem::swap(cores, best_cores);
                    best = Some(index);
                    best_built = at;
                    environments.least.forget();
                    continue;
                }
                // Every core of both is built.
                Ordering::Equal => {}
            }
            let least = best.map(|least| &*self.perms[least]);
            if environments.order(renamer.env, renamer.vars, state, perm, least) == Ordering::Less {
                std::mem::swap(cores, best_cores);
                environments.promote();
                best = Some(index);
            }
        }
        match best {
            None => Least::Itself,
            Some(index) => Least::Renaming {
                index,
                built: best_built,
            },
        }
    }

    /// Makes `state` (its environment, its nodes taken out as `original`)
    /// its renaming `least.0`, of which `scratch.best_cores` holds the
    /// renamed cores of the first `least.1` positions: builds the others,
    /// renames the environment in place and moves the nodes into their new
    /// places with their renamed cores (the scratch keeps the cores they
    /// had, and `original`'s memory).
    fn install(
        &self,
        renamer: &Renamer<'_>,
        state: &mut WorldState,
        mut original: Vec<NodeState>,
        (least, built): (usize, usize),
        scratch: &mut Scratch,
    ) {
        let Scratch {
            best_cores,
            node_ids,
            nodes,
            environments,
            ..
        } = scratch;
        let (perm, inverse) = (&self.perms[least], &self.inverses[least]);
        for at in built..original.len() {
            let old = inverse[at] as usize;
            let (node, ids, out) = (&original[old], &mut node_ids[old], &mut best_cores[at]);
            rename_core(renamer, node, old, perm, self.moved[least], ids, out);
        }
        rename_environment(
            renamer.env,
            renamer.vars,
            state,
            perm,
            &mut environments.net,
        );
        state.forget_lineage();
        state.set_renaming(least as u16);
        nodes.clear();
        for (&old, core) in inverse.iter().zip(best_cores.iter_mut()) {
            let mut node = std::mem::take(&mut original[old as usize]);
            if !core.unchanged {
                std::mem::swap(&mut node.core, &mut core.bytes);
                std::mem::swap(&mut node.persists, &mut core.persists);
            }
            nodes.push(node);
        }
        state.nodes = std::mem::replace(nodes, original);
    }
}

/// The least renaming of a state, as [`Symmetry::least_renaming`] finds it.
enum Least {
    /// The state itself (the identity): no renaming is less.
    Itself,
    /// Renaming `index`, whose first `built` renamed cores are built.
    Renaming { index: usize, built: usize },
}

/// A node as renamed: its core state, its pending persists and the node
/// that holds the rest of its fields (a renamed node is the node it renames
/// with its core and persists renamed).
type RenamedNode<'a> = (&'a [u8], &'a [Persist], &'a NodeState);

/// The order on nodes that the canonical form is least in: their fields in
/// declaration order.
///
/// The canonical form is the least renaming in the order on states that
/// compares their nodes in turn by `renamed_order`, then the encodings of
/// the rest of the state ([`WorldState::encode_environment`]).
///
/// The same node with the same core (both left unrenamed) is equal to
/// itself without a comparison.
fn renamed_order(
    (core, persists, node): RenamedNode<'_>,
    (other_core, other_persists, other): RenamedNode<'_>,
) -> Ordering {
    if std::ptr::eq(node, other) && std::ptr::eq(core, other_core) {
        return Ordering::Equal;
    }
    let (_, scalars, _, deadlines, choices) = node.fields();
    let (_, other_scalars, _, other_deadlines, other_choices) = other.fields();
    let rest = (scalars, persists, deadlines, choices);
    let other_rest = (
        other_scalars,
        other_persists,
        other_deadlines,
        other_choices,
    );
    (core, rest).cmp(&(other_core, other_rest))
}

/// A node's core state and pending persists renamed.
#[derive(Default)]
struct RenamedCore {
    /// The renamed state, unless `unchanged`.
    bytes: Vec<u8>,
    /// The renamed persists, unless `unchanged`.
    persists: Vec<Persist>,
    /// Whether renaming left the state as it was (then it was not copied).
    unchanged: bool,
}

impl RenamedCore {
    /// The renamed node, `node` being the node it renames.
    fn of<'a>(&'a self, node: &'a NodeState) -> RenamedNode<'a> {
        match self.unchanged {
            true => (&node.core, &node.persists, node),
            false => (&self.bytes, &self.persists, node),
        }
    }
}

/// Writes in `out` the core state of node `node` (whose id is `old`)
/// renamed by `perm`, which moves the ids `moved` (as bits). `ids` caches
/// the ids the state holds ([`Core::node_ids`](crate::Core::node_ids)):
/// when `perm` moves none of them, the state is left as it is, uncopied.
///
/// Inline: it is called for every node of every renaming tried, and most
/// calls only test the cached ids.
#[inline(always)]
fn rename_core(
    renamer: &Renamer<'_>,
    node: &NodeState,
    old: usize,
    perm: &[u32],
    moved: u64,
    ids: &mut Option<u64>,
    out: &mut RenamedCore,
) {
    let env = renamer.env;
    let ids = match *ids {
        Some(ids) => ids,
        None => *ids.insert(node_ids(env, node, old)),
    };
    out.unchanged = ids & moved == 0;
    if out.unchanged && renamer.check_skips {
        check_node_ids(env, node, old, perm);
    }
    if !out.unchanged {
        copy_and_permute(env, node, old, perm, &mut out.bytes);
        rename_persists(renamer, node, old, perm, out);
    }
}

/// How the nodes of one state are renamed.
struct Renamer<'a> {
    env: &'a Env,
    /// Renames the ghost variables' bytes.
    vars: RenameVars<'a>,
    /// Whether every node a renaming skips is checked ([`check_node_ids`]):
    /// with `check-determinism`, in debug builds, and otherwise for one
    /// state canonicalised in [`NODE_IDS_SAMPLE`].
    check_skips: bool,
}

/// The skipped nodes of one state canonicalised in this many are checked in
/// a run without `check-determinism` (each thread counts its own), for a
/// fraction of a percent of the search: a core whose `node_ids` misses ids
/// in a share of the states is caught by any long search; one wrong in a
/// few states only may escape the sample (`check-determinism` checks every
/// state).
const NODE_IDS_SAMPLE: u32 = 256;

thread_local! {
    /// States canonicalised by this thread, for [`sampled`].
    static CANONICALISED: Cell<u32> = const { Cell::new(0) };
}

/// Whether the state being canonicalised is one of the sample whose skipped
/// nodes are checked.
fn sampled() -> bool {
    CANONICALISED.with(|canonicalised| {
        let count = canonicalised.get().wrapping_add(1);
        canonicalised.set(count);
        count.is_multiple_of(NODE_IDS_SAMPLE)
    })
}

/// Checks (when the [`Renamer`] says so) that `perm`,
/// which moves none of the ids node `old`'s core says its state holds,
/// indeed leaves the state unchanged; a core whose `node_ids` misses an id
/// would otherwise make a wrong canonical form, and states be lost.
///
/// # Panics
///
/// If `permute` changes the state: the search reports the panic's message
/// as an error of the model.
#[cold]
#[inline(never)]
fn check_node_ids(env: &Env, node: &NodeState, old: usize, perm: &[u32]) {
    let mut renamed = node.core.clone();
    permute_core(env, old, &mut renamed, perm);
    assert!(
        renamed == node.core,
        "core {} of node {old}: permute renamed node ids that its node_ids does not \
         report (renaming {perm:?}); node_ids must hold every id permute renames",
        env.spec.core_of(old).name()
    );
}

/// The ids node `node`'s (whose id is `old`) core state holds: every id
/// when it has pending persists (they are renamed with the state, see
/// [`rename_persists`]).
#[inline(never)]
fn node_ids(env: &Env, node: &NodeState, old: usize) -> u64 {
    if !node.persists.is_empty() {
        return u64::MAX;
    }
    let kind = env.spec.core_of(old);
    let (durable, volatile) = node.core.split_at(kind.durable_size());
    kind.node_ids(&env.configs[old], durable, volatile)
}

/// Writes in `out` the core state of node `node` (whose id is `old`)
/// renamed by `perm`.
#[inline(never)]
fn copy_and_permute(env: &Env, node: &NodeState, old: usize, perm: &[u32], out: &mut Vec<u8>) {
    out.clone_from(&node.core);
    permute_core(env, old, out, perm);
}

/// Writes in `out.persists` the pending persists of node `node` (whose id
/// is `old`) renamed by `perm`, `out.bytes` holding its core state renamed.
///
/// A persist is bytes bound for the durable part, so it is renamed as the
/// durable part it will make: the durable part with it and every older
/// persist written is renamed by the core's `permute`, and the persist's
/// bytes are read back at its offset. That is exact when `permute` renames
/// each byte range on its own (ids in place, as a descriptor of id fields
/// does); a `permute` that moves bytes across a persist's bounds (sorting
/// by id) cannot rename a pending persist, which is checked (when the
/// [`Renamer`] checks): the renamed persists written in order over the
/// renamed durable part must give the renamed durable part with them all.
///
/// # Panics
///
/// If that check fails: the search reports it as an error of the model.
fn rename_persists(
    renamer: &Renamer<'_>,
    node: &NodeState,
    old: usize,
    perm: &[u32],
    out: &mut RenamedCore,
) {
    out.persists.clear();
    if node.persists.is_empty() {
        return;
    }
    let env = renamer.env;
    PERSIST_SCRATCH.with_borrow_mut(|(written, renamed)| {
        written.clone_from(&node.core);
        for persist in &node.persists {
            write_persist(written, persist);
            renamed.clone_from(written);
            permute_core(env, old, renamed, perm);
            let range =
                persist.offset as usize..persist.offset as usize + persist.bytes.as_bytes().len();
            let bytes = Payload::new(&renamed[range]).expect("as long as the persist");
            out.persists.push(Persist {
                offset: persist.offset,
                bytes,
            });
        }
        if renamer.check_skips {
            written.clone_from(&out.bytes);
            for persist in &out.persists {
                write_persist(written, persist);
            }
            let durable = env.spec.core_of(old).durable_size();
            assert!(
                written[..durable] == renamed[..durable],
                "core {} of node {old}: its permute moves bytes across the bounds of a pending \
                 persist (renaming {perm:?}), so the persist cannot be renamed with its node; \
                 rename node ids in place (a descriptor of id fields does)",
                env.spec.core_of(old).name()
            );
        }
    });
}

/// Writes `persist` into `core` (durable part first), as a flush does.
fn write_persist(core: &mut [u8], persist: &Persist) {
    let at = persist.offset as usize;
    core[at..at + persist.bytes.as_bytes().len()].copy_from_slice(persist.bytes.as_bytes());
}

thread_local! {
    /// A core state with persists written, and the same renamed.
    static PERSIST_SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Renames node ids inside node `old`'s core state `core` by `perm`.
fn permute_core(env: &Env, old: usize, core: &mut [u8], perm: &[u32]) {
    let kind = env.spec.core_of(old);
    let (durable, volatile) = core.split_at_mut(kind.durable_size());
    let supported = kind.permute(&env.configs[old], durable, volatile, perm);
    assert!(
        supported,
        "symmetry was accepted for a core without permute"
    );
}

/// One thread's buffers for [`Symmetry::canonicalise`]. The environments
/// are states without nodes.
#[derive(Default)]
struct Scratch {
    /// The renamed cores of the renaming being tried, by position.
    cores: Vec<RenamedCore>,
    /// The renamed cores of the least renaming so far (when not the state
    /// itself), by position: those built so far.
    best_cores: Vec<RenamedCore>,
    /// The ids each node's core state holds, by node, once asked.
    node_ids: Vec<Option<u64>>,
    /// The least renaming's nodes while they are moved into place.
    nodes: Vec<NodeState>,
    /// The encodings of environments that break ties.
    environments: Environments,
}

/// The encodings of the environments of the renaming tried and of the least
/// so far, when their nodes tie, with the buffers they are built in.
#[derive(Default)]
struct Environments {
    /// The renaming tried's.
    tried: EnvironmentBytes,
    /// The least renaming's.
    least: EnvironmentBytes,
    /// Where a network is renamed.
    net: RenameScratch,
    /// Renamed cut links.
    cut_links: Vec<(u8, u8)>,
    /// Renamed ghost variables' bytes.
    renamed_vars: Vec<u8>,
}

impl Environments {
    /// The order of the environments of `state` renamed by `perm` (tried)
    /// and by `least` (`None`: `state`'s own), as the order of their
    /// encodings; the pieces of the least's it builds are kept (see
    /// [`EnvironmentBytes::forget`]).
    fn order(
        &mut self,
        env: &Env,
        vars: RenameVars<'_>,
        state: &WorldState,
        perm: &[u32],
        least: Option<&[u32]>,
    ) -> Ordering {
        let Environments {
            tried,
            least: least_bytes,
            net,
            cut_links,
            renamed_vars,
        } = self;
        tried.forget();
        tried.build_net(env, state, Some(perm), net);
        least_bytes.build_net(env, state, least, net);
        let common = tried.net.len().min(least_bytes.net.len());
        let order = tried.net[..common].cmp(&least_bytes.net[..common]);
        if order.is_ne() {
            return order;
        }
        let mut scratch = (cut_links, renamed_vars, vars);
        tried.build_rest(state, Some(perm), &mut scratch);
        least_bytes.build_rest(state, least, &mut scratch);
        let (mine, theirs) = (&*tried, &*least_bytes);
        if mine.net.len() == theirs.net.len() {
            mine.rest.cmp(&theirs.rest)
        } else {
            // One network's encoding is a prefix of the other's.
            let mine = mine.net.iter().chain(&mine.rest);
            mine.cmp(theirs.net.iter().chain(&theirs.rest))
        }
    }

    /// Makes the renaming last given to [`Environments::order`] the least.
    fn promote(&mut self) {
        std::mem::swap(&mut self.tried, &mut self.least);
    }
}

/// The encoding of a renamed environment ([`WorldState::encode_environment`])
/// in two pieces, each built when first needed: the network's, then the
/// rest's.
#[derive(Default)]
struct EnvironmentBytes {
    /// The network's encoding (when `net_built`).
    net: Vec<u8>,
    /// The rest's encoding (when `rest_built`).
    rest: Vec<u8>,
    /// Whether `net` is built.
    net_built: bool,
    /// Whether `rest` is built.
    rest_built: bool,
}

impl EnvironmentBytes {
    /// Drops the pieces built: they were another renaming's.
    fn forget(&mut self) {
        self.net_built = false;
        self.rest_built = false;
    }

    /// Builds the network's piece, if not built, for `state` renamed by
    /// `perm` (`None`: not renamed), renaming in `net`.
    fn build_net(
        &mut self,
        env: &Env,
        state: &WorldState,
        perm: Option<&[u32]>,
        net: &mut RenameScratch,
    ) {
        if std::mem::replace(&mut self.net_built, true) {
            return;
        }
        self.net.clear();
        match perm {
            None => state.net.encode(&mut self.net),
            Some(perm) => {
                let fifo = env.spec.net == NetSemantics::Fifo;
                let rename = packet_renamer(env, perm);
                state.net.encode_renamed(fifo, rename, net, &mut self.net);
            }
        }
    }

    /// Builds the rest's piece, if not built, for `state` renamed by `perm`
    /// (`None`: not renamed), renaming the cut links and the ghost
    /// variables (with the renamer it holds) in `scratch`.
    fn build_rest(
        &mut self,
        state: &WorldState,
        perm: Option<&[u32]>,
        scratch: &mut (&mut Vec<(u8, u8)>, &mut Vec<u8>, RenameVars<'_>),
    ) {
        if std::mem::replace(&mut self.rest_built, true) {
            return;
        }
        self.rest.clear();
        let (cut_links, vars, rename_vars) = scratch;
        match perm {
            None => state.encode_environment_after_net(
                &state.cut_links,
                |node| node,
                state.ghost.vars(),
                &mut self.rest,
            ),
            Some(perm) => {
                cut_links.clone_from(&state.cut_links);
                rename_cut_links(cut_links, perm);
                vars.clear();
                vars.extend_from_slice(state.ghost.vars());
                if !vars.is_empty() {
                    rename_vars(vars, perm);
                }
                let to = |node: u8| perm[node as usize] as u8;
                state.encode_environment_after_net(cut_links, to, vars, &mut self.rest);
            }
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Calls `visit` with every ordering of `items[at..]` (Heap-style swaps).
fn permutations(items: &mut Vec<u8>, at: usize, visit: &mut impl FnMut(&[u8])) {
    if at == items.len() {
        visit(items);
        return;
    }
    for i in at..items.len() {
        items.swap(at, i);
        permutations(items, at + 1, visit);
        items.swap(at, i);
    }
}

/// `state` with node `n` renamed `perm[n]` everywhere (each node moved,
/// with its core state and pending persists renamed; the environment
/// renamed), made whole and not canonicalised. Every node is renamed, and
/// a `permute` that cannot rename a persist is caught (see
/// [`rename_persists`]).
pub(crate) fn renamed(
    env: &Env,
    vars: RenameVars<'_>,
    state: &WorldState,
    perm: &[u32],
) -> WorldState {
    let mut renamed = state.clone();
    rename_environment(env, vars, &mut renamed, perm, &mut RenameScratch::default());
    let renamer = Renamer {
        env,
        vars,
        check_skips: true,
    };
    let mut nodes: Vec<Option<NodeState>> = vec![None; state.nodes.len()];
    for (old, node) in state.nodes.iter().enumerate() {
        let mut out = RenamedCore::default();
        copy_and_permute(env, node, old, perm, &mut out.bytes);
        rename_persists(&renamer, node, old, perm, &mut out);
        let mut node = node.clone();
        node.core = out.bytes;
        node.persists = out.persists;
        nodes[perm[old] as usize] = Some(node);
    }
    renamed.nodes = nodes
        .into_iter()
        .map(|node| node.expect("a permutation"))
        .collect();
    renamed.forget_lineage();
    renamed
}

/// Renames node `n` to `perm[n]` in the environment of `state` (every field
/// but the nodes, which are left alone): message endpoints and the ids in
/// messages, cut links, the ghost history's nodes and the ghost variables
/// (by `vars`).
fn rename_environment(
    env: &Env,
    vars: RenameVars<'_>,
    state: &mut WorldState,
    perm: &[u32],
    net: &mut RenameScratch,
) {
    let fifo = env.spec.net == NetSemantics::Fifo;
    state.net.rename(fifo, packet_renamer(env, perm), net);
    rename_cut_links(&mut state.cut_links, perm);
    for entry in &mut state.ghost {
        entry.node = perm[entry.node as usize] as u8;
    }
    if !state.ghost.vars().is_empty() {
        vars(state.ghost.vars_mut(), perm);
    }
}

/// Renames node `n` to `perm[n]` in a packet, given as its source,
/// destination and payload: its endpoints and the ids in its message (by
/// its sender's core).
fn packet_renamer<'a>(
    env: &'a Env,
    perm: &'a [u32],
) -> impl FnMut(&mut u8, &mut u8, &mut [u8]) + 'a {
    let to = |node: u8| perm[node as usize] as u8;
    move |src, dst, msg| {
        let (core, config) = (env.spec.core_of(*src as usize), &env.configs[*src as usize]);
        core.permute_message(config, msg, perm);
        *src = to(*src);
        *dst = to(*dst);
    }
}

/// Renames node `n` to `perm[n]` in the cut links `cut_links`, and sorts
/// them again.
fn rename_cut_links(cut_links: &mut [(u8, u8)], perm: &[u32]) {
    let to = |node: u8| perm[node as usize] as u8;
    for link in cut_links.iter_mut() {
        *link = (to(link.0), to(link.1));
    }
    cut_links.sort_unstable();
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use cmc_model::{Encode, Model};

    use super::*;
    use crate::example_cores::reqack::ReqAck;
    use crate::World;

    /// The order the canonical form is least in, on whole states.
    fn state_order(state: &WorldState, other: &WorldState) -> Ordering {
        let nodes = state.nodes.iter().zip(&other.nodes);
        let environment = |state: &WorldState| {
            let mut bytes = Vec::new();
            state.encode_environment(&mut bytes);
            bytes
        };
        nodes
            .map(|(a, b)| renamed_order((&a.core, &a.persists, a), (&b.core, &b.persists, b)))
            .find(|order| order.is_ne())
            .unwrap_or(Ordering::Equal)
            .then_with(|| environment(state).cmp(&environment(other)))
    }

    /// Every state a World reaches, by breadth-first search (without
    /// deduplicating stuttering steps: the worlds are small).
    fn reachable(world: &World) -> Vec<WorldState> {
        let mut states = Vec::new();
        world.init_states(&mut states);
        let mut seen: HashSet<Vec<u8>> = states.iter().map(Encode::to_bytes).collect();
        let mut at = 0;
        while let Some(state) = states.get(at).cloned() {
            at += 1;
            let mut actions = Vec::new();
            world.actions(&state, &mut actions);
            for action in &actions {
                if let Some(next) = world.next_state(&state, action) {
                    if seen.insert(next.to_bytes()) {
                        states.push(next);
                    }
                }
            }
        }
        states
    }

    /// Every renaming of every reachable state canonicalises to the least
    /// renaming, found by building and comparing them all: the pruned,
    /// lazy search of `canonicalise` is exact.
    #[test]
    fn symmetry_is_off_without_two_interchangeable_nodes() {
        let spec = |symmetric: &[u8]| {
            WorldSpec::builder(Arc::new(ReqAck::default()), 3)
                .symmetry(symmetric)
                .build()
                .unwrap()
        };
        assert!(Symmetry::new(&spec(&[])).is_none(), "off by default");
        let on = Symmetry::new(&spec(&[1, 2])).expect("two receivers interchange");
        assert_eq!(on.len(), 2, "the identity and the swap");
    }

    #[test]
    fn the_canonical_form_is_the_least_of_every_renaming() {
        let worlds: [&[&str]; 3] = [
            &[
                "requests=1",
                "dups=1",
                "crashes=1",
                "restarts=1",
                "crash_nodes=1,2,3",
            ],
            &["requests=1", "drops=1", "net=fifo", "partitions=1"],
            &["requests=1", "oneway_cuts=1", "isolations=1"],
        ];
        for params in worlds {
            let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 4).unwrap();
            spec.set_all(params).unwrap();
            spec.set("symmetry", "1,2,3").unwrap();
            let world = World::new(spec);
            let symmetry = world.symmetry.as_ref().expect("symmetry is on");
            let states = reachable(&world);
            assert!(states.len() > 100, "{params:?}: {} states", states.len());
            let mut tried = 0;
            for state in &states {
                let all: Vec<WorldState> = symmetry
                    .perms
                    .iter()
                    .map(|perm| renamed(&world.env, &|v, p| world.rename_ghosts(v, p), state, perm))
                    .collect();
                let least = all
                    .iter()
                    .min_by(|a, b| state_order(a, b))
                    .expect("the identity");
                assert_eq!(least, state, "{params:?}: a reached state is canonical");
                for member in all {
                    let mut canonical = member;
                    symmetry.canonicalise(
                        &world.env,
                        &|v, p| world.rename_ghosts(v, p),
                        &mut canonical,
                    );
                    assert_eq!(&canonical, state, "{params:?}");
                    tried += 1;
                }
            }
            assert!(tried >= states.len() * 6);
        }
    }
    /// A core whose `node_ids` misses an id its `permute` renames: the
    /// sender of reqack, which holds its receivers' ids, claiming none.
    struct ForgetfulSender(ReqAck);

    impl crate::Core for ForgetfulSender {
        fn name(&self) -> &str {
            "forgetful"
        }
        fn durable_size(&self) -> usize {
            crate::Core::durable_size(&self.0)
        }
        fn volatile_size(&self) -> usize {
            crate::Core::volatile_size(&self.0)
        }
        fn step(
            &self,
            config: &crate::core::abi::Config,
            durable: &[u8],
            volatile: &mut [u8],
            event: &crate::core::abi::Event,
            out: &mut crate::core::abi::Outputs,
        ) -> Result<(), crate::core::abi::CoreError> {
            crate::Core::step(&self.0, config, durable, volatile, event, out)
        }
        fn permute(
            &self,
            config: &crate::core::abi::Config,
            durable: &mut [u8],
            volatile: &mut [u8],
            perm: &[u32],
        ) -> bool {
            crate::Core::permute(&self.0, config, durable, volatile, perm)
        }
        fn node_ids(&self, _: &crate::core::abi::Config, _: &[u8], _: &[u8]) -> u64 {
            0
        }
    }

    /// With `check-determinism`, a `node_ids` that misses an id stops the
    /// search with an error naming the core, instead of a canonical form
    /// that loses states.
    #[test]
    fn a_core_whose_node_ids_miss_an_id_is_an_error_under_check_determinism() {
        assert_forgetful_sender_is_an_error(true);
    }

    /// Without it too: the sample of skipped nodes that is checked in every
    /// run catches it (the test runs in release builds, where only the
    /// sample is checked), unless the check that steps commute with
    /// renaming (`symmetry_check`) catches the wrong canonical form first.
    #[test]
    fn a_core_whose_node_ids_miss_an_id_is_an_error_in_a_plain_run() {
        assert_forgetful_sender_is_an_error(false);
    }

    fn assert_forgetful_sender_is_an_error(check_determinism: bool) {
        use cmc_search::{Checker, Verdict};

        let mut spec = WorldSpec::new(Arc::new(ForgetfulSender(ReqAck::default())), 3).unwrap();
        spec.set_all(&["requests=1", "symmetry=1,2"]).unwrap();
        spec.check_determinism = check_determinism;
        let outcome = Checker::new(World::new(spec)).workers(1).run();
        match &outcome.verdict {
            Verdict::Error { message } => {
                let named = message.contains("node_ids") || message.contains("NOT A SYMMETRY");
                assert!(message.contains("forgetful") && named, "{message}")
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }
}
