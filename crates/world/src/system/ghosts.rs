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
//! What they rule out, with a clear error rather than a wrong count:
//! symmetry reduction (a renaming of the nodes would have to rename the
//! variables' bytes, which hold node ids and per-node entries the World
//! cannot see), partial-order reduction (an update reads every step,
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

/// One ghost variable: a name, an initial value (whose length is its
/// fixed size) and its update (see the module text).
#[derive(Clone)]
pub struct GhostVar {
    name: String,
    init: Vec<u8>,
    update: Arc<GhostUpdate>,
    describe: Option<Arc<GhostDescribe>>,
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
        })
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
        if self.symmetry.is_some() {
            return Err(format!(
                "ghost variable `{}`: symmetry reduction cannot rename the node ids a ghost \
                 variable may hold; leave out symmetric= (or the ghost variable)",
                var.name
            ));
        }
        self.ghosts.vars.push(var);
        Ok(self)
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
        // Taken out while the updates read `post`, then put back.
        let mut bytes = std::mem::take(post.ghost.vars_mut());
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
