//! Ghost (history) variables: bytes a property module keeps in every World
//! state, updated from each step, as TLA+ history variables are.
//!
//! A property over one state sees what the nodes hold now; some properties
//! need what happened before, which a node may have forgotten ("a vote is
//! never granted twice in a term" must remember a vote across the crash
//! that erased it). A ghost variable declares a name, a fixed size and an
//! initial value, and an update that the World calls on every step with
//! the pre-state, the action and the post-state (read through
//! [`World::inspect`], as properties read them) and the variable's bytes
//! to change in place. Properties then read them with
//! [`Inspect::ghost_var`](crate::system::inspect::Inspect::ghost_var).
//!
//! The bytes are part of the state: its encoding (after the client
//! history, see [`crate::system::state::Ghost`]), its fingerprint, its
//! comparison, checkpoints and replay files, so two histories that differ
//! only in a ghost variable are two states; the state space grows by as
//! many distinct values as the variables reach.
//!
//! A variable may name the properties that read it
//! ([`GhostVar::read_by`]): a World whose `INVARIANTS=` selection leaves
//! all of them out drops it (it would only multiply states), and a
//! property that reads a dropped variable anyway is a fault of the run.
//!
//! What they rule out, with a clear error rather than a wrong count:
//! symmetry reduction unless each variable says how its bytes are renamed
//! ([`GhostVar::renamed_by`]: they may hold node ids and per-node entries
//! the World cannot see), partial-order reduction (an update reads every step,
//! so no step is invisible to the properties) and sleep sets (an update may
//! tell apart the two orders of steps that otherwise commute).
//!
//! ```
//! use std::sync::Arc;
//! use cmc_model::{Model, Property};
//! use cmc_search::{Checker, Verdict};
//! use cmc_world::example_cores::reqack::ReqAck;
//! use cmc_world::system::action::{Action, CrashAction};
//! use cmc_world::system::ghosts::GhostVar;
//! use cmc_world::{World, WorldSpec};
//!
//! // How many times node 1 crashed: a count no node's state keeps.
//! let crashes = GhostVar::new("Crashes1", vec![0], |_, _, action, _, bytes| {
//!     if matches!(action, Action::Crash(CrashAction::Crash { node: 1 })) {
//!         bytes[0] += 1;
//!     }
//! })?;
//! let at_most_once = Property::always("N1CrashesOnce", |world: &World, state| {
//!     world.inspect(state).ghost_var("Crashes1") <= Some(&[1][..])
//! });
//! let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
//! spec.set_all(&["requests=1", "crashes=2", "restarts=1"])?;
//! let world = World::new(spec).with_ghost(crashes)?.with_property(at_most_once);
//! let outcome = Checker::new(world).workers(1).run();
//! assert!(matches!(&outcome.verdict,
//!     Verdict::Violated { property, .. } if property == "N1CrashesOnce"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Range;
use std::sync::Arc;

use crate::core::hex::hex;
use crate::system::action::Action;
use crate::system::state::WorldState;
use crate::World;

/// Most bytes of all of a World's ghost variables together.
pub const GHOST_VARS_MAX: usize = 4096;

/// A ghost variable's update: given the World, the pre-state, the action
/// and the post-state (whose ghost variables still hold the pre-state's
/// values), it changes the variable's bytes in place. It must be a
/// function of what it is given (the search calls it once per step, in any
/// order, from any thread).
pub type GhostUpdate = dyn Fn(&World, &WorldState, &Action, &WorldState, &mut [u8]) + Send + Sync;

/// A ghost variable's text in descriptions of states (traces, `replay`).
pub type GhostDescribe = dyn Fn(&World, &[u8]) -> String + Send + Sync;

/// A ghost variable's renaming for symmetry: renames the node ids its bytes
/// hold by `perm[old] = new`, in place, keeping them canonical (equal
/// variables, equal bytes).
pub type GhostRename = dyn Fn(&mut [u8], &[u32]) + Send + Sync;

/// One ghost variable: a name, an initial value (whose length is its
/// fixed size) and its update (see the module text).
#[derive(Clone)]
pub struct GhostVar {
    name: String,
    init: Vec<u8>,
    update: Arc<GhostUpdate>,
    describe: Option<Arc<GhostDescribe>>,
    read_by: Option<Vec<String>>,
    rename: Option<Arc<GhostRename>>,
}

impl GhostVar {
    /// A variable `name` of `init.len()` bytes, `init` in the initial
    /// state, changed by `update` on every step. An empty `init` or one
    /// longer than [`GHOST_VARS_MAX`] is an error.
    pub fn new(
        name: impl Into<String>,
        init: Vec<u8>,
        update: impl Fn(&World, &WorldState, &Action, &WorldState, &mut [u8]) + Send + Sync + 'static,
    ) -> Result<GhostVar, String> {
        let name = name.into();
        if init.is_empty() || init.len() > GHOST_VARS_MAX {
            return Err(format!(
                "ghost variable `{name}`: its size is {} bytes, not 1 to {GHOST_VARS_MAX}",
                init.len()
            ));
        }
        Ok(GhostVar {
            name,
            init,
            update: Arc::new(update),
            describe: None,
            read_by: None,
            rename: None,
        })
    }

    /// Names the properties that read the variable (builder style): a World
    /// whose `INVARIANTS=` selection keeps none of them drops it. Without
    /// this, any property may read it and it is never dropped.
    pub fn read_by<S: Into<String>>(mut self, properties: impl IntoIterator<Item = S>) -> GhostVar {
        self.read_by = Some(properties.into_iter().map(Into::into).collect());
        self
    }

    /// Renames the node ids the variable holds with `rename` (builder
    /// style): what lets a World with symmetry reduction keep it. `rename`
    /// gets the bytes and `perm` (`perm[old] = new`, one entry per node).
    pub fn renamed_by(
        mut self,
        rename: impl Fn(&mut [u8], &[u32]) + Send + Sync + 'static,
    ) -> GhostVar {
        self.rename = Some(Arc::new(rename));
        self
    }

    /// Describes the variable's bytes with `describe` in traces (its hex
    /// bytes otherwise; builder style).
    pub fn describe_with(
        mut self,
        describe: impl Fn(&World, &[u8]) -> String + Send + Sync + 'static,
    ) -> GhostVar {
        self.describe = Some(Arc::new(describe));
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.init.len()
    }
}

/// A World's ghost variables, laid out one after another in declaration
/// order in [`Ghost::vars`](crate::system::state::Ghost::vars).
#[derive(Clone, Default)]
pub(crate) struct Ghosts {
    vars: Vec<GhostVar>,
    /// The variables a property selection dropped, by name.
    dropped: Vec<String>,
}

impl Ghosts {
    /// Whether no variable is declared.
    pub(crate) fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// The declared variables' names, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.iter().map(GhostVar::name)
    }

    /// Each variable with where its bytes are.
    fn laid_out(&self) -> impl Iterator<Item = (&GhostVar, Range<usize>)> {
        let mut start = 0;
        self.vars.iter().map(move |var| {
            let range = start..start + var.size();
            start = range.end;
            (var, range)
        })
    }

    /// Where the bytes of the variable `name` are.
    pub(crate) fn range(&self, name: &str) -> Option<Range<usize>> {
        self.laid_out()
            .find(|(var, _)| var.name == name)
            .map(|(_, range)| range)
    }

    /// Every variable's initial bytes, in order.
    fn initial(&self) -> impl Iterator<Item = u8> + '_ {
        self.vars.iter().flat_map(|var| var.init.iter().copied())
    }
}

impl World {
    /// Declares the ghost variable `var` (builder style). Refused: a name
    /// declared already, more than [`GHOST_VARS_MAX`] bytes in all, and a
    /// World with symmetry reduction (see the module text).
    pub fn with_ghost(mut self, var: GhostVar) -> Result<World, String> {
        if self.ghosts.names().any(|name| name == var.name) {
            return Err(format!("ghost variable `{}` is declared twice", var.name));
        }
        let total = self.ghosts.initial().count() + var.size();
        if total > GHOST_VARS_MAX {
            return Err(format!(
                "ghost variable `{}`: the ghost variables would take {total} bytes, more than {GHOST_VARS_MAX}",
                var.name
            ));
        }
        if self.symmetry.is_some() && var.rename.is_none() {
            return Err(format!(
                "ghost variable `{}`: symmetry reduction cannot rename the node ids a ghost \
                 variable may hold unless it says how (GhostVar::renamed_by, or a rename hook \
                 in C: CMC_GHOST_RENAMED); leave out symmetry= or give it one",
                var.name
            ));
        }
        self.ghosts.vars.push(var);
        Ok(self)
    }

    /// Refuses a ghost variable that names as its reader a property the
    /// World does not have.
    pub(crate) fn check_ghost_readers(&self) -> Result<(), String> {
        let properties: Vec<&str> = self.properties.iter().map(|p| p.name.as_str()).collect();
        for var in &self.ghosts.vars {
            let unknown =
                (var.read_by.iter().flatten()).find(|name| !properties.contains(&name.as_str()));
            if let Some(unknown) = unknown {
                return Err(format!(
                    "ghost variable `{}` is read by `{unknown}`, which is no property of this \
                     World; its properties are {}",
                    var.name,
                    properties.join(", ")
                ));
            }
        }
        Ok(())
    }

    /// Drops the ghost variables that name their readers when `selected`
    /// (the properties an `INVARIANTS=` selection keeps) holds none of
    /// them. Refused: a variable naming a reader the World does not have.
    pub(crate) fn drop_unread_ghosts(&mut self, selected: &[String]) -> Result<(), String> {
        self.check_ghost_readers()?;
        let (kept, dropped) = std::mem::take(&mut self.ghosts.vars)
            .into_iter()
            .partition(|var| match &var.read_by {
                Some(readers) => readers.iter().any(|name| selected.contains(name)),
                None => true,
            });
        self.ghosts.vars = kept;
        let dropped: Vec<GhostVar> = dropped;
        self.ghosts
            .dropped
            .extend(dropped.into_iter().map(|var| var.name));
        Ok(())
    }

    /// Whether `name` is a ghost variable a property selection dropped.
    pub(crate) fn ghost_dropped(&self, name: &str) -> bool {
        self.ghosts.dropped.iter().any(|dropped| dropped == name)
    }

    /// Each ghost variable of `state`, by name, with its bytes.
    pub(crate) fn ghost_vars<'a>(
        &'a self,
        state: &'a WorldState,
    ) -> impl Iterator<Item = (&'a str, &'a [u8])> {
        let vars = state.ghost.vars();
        self.ghosts
            .laid_out()
            .map(move |(var, range)| (var.name(), vars.get(range).unwrap_or(&[])))
    }

    /// Renames the ghost variables' bytes in `vars` (all of them, in
    /// order) by `perm`, each with its renaming: under symmetry,
    /// [`World::with_ghost`] refuses a variable without one.
    pub(crate) fn rename_ghosts(&self, vars: &mut [u8], perm: &[u32]) {
        for (var, range) in self.ghosts.laid_out() {
            if let (Some(rename), Some(bytes)) = (&var.rename, vars.get_mut(range)) {
                rename(bytes, perm);
            }
        }
    }

    /// Sets the ghost variables of `state`, an initial state, to their
    /// initial values.
    pub(crate) fn init_ghosts(&self, state: &mut WorldState) {
        let vars = state.ghost.vars_mut();
        vars.clear();
        vars.extend(self.ghosts.initial());
    }

    /// Updates the ghost variables of `post`, the successor of `pre` by
    /// `action`, whole, whose ghost variables are `pre`'s.
    pub(crate) fn update_ghosts(&self, pre: &WorldState, action: &Action, post: &mut WorldState) {
        if self.ghosts.is_empty() {
            return;
        }
        // Updated in a copy: the updates read `post` with the pre-state's values.
        let mut bytes = post.ghost.vars().to_vec();
        for (var, range) in self.ghosts.laid_out() {
            (var.update)(self, pre, action, post, &mut bytes[range]);
        }
        *post.ghost.vars_mut() = bytes;
    }

    /// Each ghost variable of `state` by name, with its text (its
    /// description, or its hex bytes).
    pub(crate) fn describe_ghosts(&self, state: &WorldState) -> Vec<(String, String)> {
        let vars = state.ghost.vars();
        self.ghosts
            .laid_out()
            .map(|(var, range)| {
                let bytes = vars.get(range).unwrap_or(&[]);
                let text = match &var.describe {
                    Some(describe) => describe(self, bytes),
                    None => hex(bytes),
                };
                (format!("ghost.{}", var.name), text)
            })
            .collect()
    }
}
