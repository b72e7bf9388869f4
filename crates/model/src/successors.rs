//! How the search makes a model's successors: in memory it keeps from state
//! to state, possibly partial, and encoded from the parent's bytes.
//!
//! A model written by hand needs none of this: [`Model::next_state`] is
//! enough, and the search's defaults build on it. A model whose states are
//! costly to build (the World) implements [`FastSuccessors`] and names it
//! from [`Model`]; the search reaches either through [`Successors`], which
//! every model has.

use crate::{Encode, Model};

/// A model's own ways of making successors, faster than
/// [`Model::next_state`]: written over a buffer the search keeps, left
/// partial until needed, and encoded by copying what the parent's bytes
/// already hold. Every method must agree with the model's `next_state` and
/// its states' [`Encode`]: the search checks the encodings under its
/// determinism gate.
pub trait FastSuccessors: Sync {
    /// The model's state.
    type State: Encode;
    /// The model's action.
    type Action;

    /// [`Model::next_state`] written over `out`: `true` and the successor
    /// in `out` if the action is enabled, `false` (and `out` unspecified)
    /// if not. The search calls it with successor buffers it keeps from
    /// state to state, so a model whose states own heap memory reuses
    /// `out`'s instead of allocating.
    fn next_state_into(
        &self,
        state: &Self::State,
        action: &Self::Action,
        out: &mut Self::State,
    ) -> bool;

    /// [`next_state_into`](Self::next_state_into) that may leave `out`
    /// *partial*: the parts of the successor that equal `state`'s may be
    /// left as `out` held them, to be copied only if the successor is
    /// needed whole. Until [`complete_successor`](Self::complete_successor)
    /// is called with the same `state`, `out` may be read only by
    /// [`encode_successor`](Self::encode_successor) and `complete_successor`
    /// (and written again only by a model method). The breadth-first search
    /// calls it and completes only the successors it checks (new states,
    /// and every successor when there are step properties): most successors
    /// are states found before, for which only the encoding is needed. The
    /// default makes the successor whole.
    fn next_state_partial_into(
        &self,
        state: &Self::State,
        action: &Self::Action,
        out: &mut Self::State,
    ) -> bool {
        self.next_state_into(state, action, out)
    }

    /// Makes `next`, a successor of `state` by
    /// [`next_state_partial_into`](Self::next_state_partial_into), whole:
    /// what [`next_state_into`](Self::next_state_into) would have made.
    /// Nothing for a successor already whole, which is what the default
    /// assumes.
    fn complete_successor(&self, state: &Self::State, next: &mut Self::State) {
        let _ = (state, next);
    }

    /// Appends the canonical encoding of `next`, a successor of `parent`
    /// (by [`next_state_into`](Self::next_state_into) or
    /// [`next_state_partial_into`](Self::next_state_partial_into)), to
    /// `out`: exactly the bytes `next.encode(out)` appends, which is what
    /// the default does. The search calls it with `parent` decoded from
    /// `parent_bytes` and not changed since, so a model may copy the parts
    /// of `next` that equal `parent`'s from `parent_bytes` instead of
    /// encoding them again.
    fn encode_successor(
        &self,
        parent: &Self::State,
        parent_bytes: &[u8],
        next: &Self::State,
        out: &mut Vec<u8>,
    ) {
        let _ = (parent, parent_bytes);
        next.encode(out);
    }
}

/// The model's [`FastSuccessors`] as a trait object, as
/// [`Model::fast_successors`] names it.
pub type DynFastSuccessors<'a, M> =
    dyn FastSuccessors<State = <M as Model>::State, Action = <M as Model>::Action> + 'a;

/// How the search makes the successors of any model: through the model's
/// [`FastSuccessors`] when it has them, else from [`Model::next_state`]
/// (whole successors, encoded with [`Encode::encode`]). Every model has it;
/// the methods are those of [`FastSuccessors`], with the same contracts.
pub trait Successors: Model {
    /// See [`FastSuccessors::next_state_into`].
    fn next_state_into(
        &self,
        state: &Self::State,
        action: &Self::Action,
        out: &mut Self::State,
    ) -> bool;

    /// See [`FastSuccessors::next_state_partial_into`].
    fn next_state_partial_into(
        &self,
        state: &Self::State,
        action: &Self::Action,
        out: &mut Self::State,
    ) -> bool;

    /// See [`FastSuccessors::complete_successor`].
    fn complete_successor(&self, state: &Self::State, next: &mut Self::State);

    /// See [`FastSuccessors::encode_successor`].
    fn encode_successor(
        &self,
        parent: &Self::State,
        parent_bytes: &[u8],
        next: &Self::State,
        out: &mut Vec<u8>,
    );
}

impl<M: Model> Successors for M {
    #[inline]
    fn next_state_into(&self, state: &M::State, action: &M::Action, out: &mut M::State) -> bool {
        match self.fast_successors() {
            Some(fast) => fast.next_state_into(state, action, out),
            None => match self.next_state(state, action) {
                Some(next) => {
                    *out = next;
                    true
                }
                None => false,
            },
        }
    }

    #[inline]
    fn next_state_partial_into(
        &self,
        state: &M::State,
        action: &M::Action,
        out: &mut M::State,
    ) -> bool {
        match self.fast_successors() {
            Some(fast) => fast.next_state_partial_into(state, action, out),
            None => Successors::next_state_into(self, state, action, out),
        }
    }

    #[inline]
    fn complete_successor(&self, state: &M::State, next: &mut M::State) {
        if let Some(fast) = self.fast_successors() {
            fast.complete_successor(state, next);
        }
    }

    #[inline]
    fn encode_successor(
        &self,
        parent: &M::State,
        parent_bytes: &[u8],
        next: &M::State,
        out: &mut Vec<u8>,
    ) {
        match self.fast_successors() {
            Some(fast) => fast.encode_successor(parent, parent_bytes, next, out),
            None => next.encode(out),
        }
    }
}
