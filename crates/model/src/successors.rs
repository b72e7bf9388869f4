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
/// (whole successors, encoded with [`Encode::encode`]). Every model has it
/// (the methods are provided, and no model overrides them); they are the
/// three of [`FastSuccessors`] the search calls, with the same contracts.
pub trait Successors: Model {
    /// See [`FastSuccessors::next_state_partial_into`].
    #[inline]
    fn next_state_partial_into(
        &self,
        state: &Self::State,
        action: &Self::Action,
        out: &mut Self::State,
    ) -> bool {
        match self.fast_successors() {
            Some(fast) => fast.next_state_partial_into(state, action, out),
            None => match self.next_state(state, action) {
                Some(next) => {
                    *out = next;
                    true
                }
                None => false,
            },
        }
    }

    /// See [`FastSuccessors::complete_successor`].
    #[inline]
    fn complete_successor(&self, state: &Self::State, next: &mut Self::State) {
        if let Some(fast) = self.fast_successors() {
            fast.complete_successor(state, next);
        }
    }

    /// See [`FastSuccessors::encode_successor`].
    #[inline]
    fn encode_successor(
        &self,
        parent: &Self::State,
        parent_bytes: &[u8],
        next: &Self::State,
        out: &mut Vec<u8>,
    ) {
        match self.fast_successors() {
            Some(fast) => fast.encode_successor(parent, parent_bytes, next, out),
            None => next.encode(out),
        }
    }
}

impl<M: Model> Successors for M {}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter that steps by one up to 3. A `fast` one has successors of
    /// its own, which leave `out` partial (its old value) until completed,
    /// and encode as the parent's bytes plus one: what the search must then
    /// call.
    struct Counter {
        fast: bool,
    }

    impl Model for Counter {
        type State = u32;
        type Action = ();
        fn name(&self) -> String {
            "counter".into()
        }
        fn init_states(&self, out: &mut Vec<u32>) {
            out.push(0);
        }
        fn actions(&self, _: &u32, out: &mut Vec<()>) {
            out.push(());
        }
        fn next_state(&self, state: &u32, _: &()) -> Option<u32> {
            (*state < 3).then_some(state + 1)
        }
        fn fast_successors(&self) -> Option<&DynFastSuccessors<'_, Self>> {
            self.fast.then_some(self as &DynFastSuccessors<'_, Self>)
        }
    }

    impl FastSuccessors for Counter {
        type State = u32;
        type Action = ();
        fn next_state_into(&self, state: &u32, _: &(), out: &mut u32) -> bool {
            *out = state + 1;
            *state < 3
        }
        fn next_state_partial_into(&self, state: &u32, _: &(), _: &mut u32) -> bool {
            *state < 3
        }
        fn complete_successor(&self, state: &u32, next: &mut u32) {
            *next = state + 1;
        }
        fn encode_successor(&self, _: &u32, parent_bytes: &[u8], _: &u32, out: &mut Vec<u8>) {
            let parent = u32::from_le_bytes(parent_bytes.try_into().expect("a u32"));
            out.extend_from_slice(&(parent + 1).to_le_bytes());
        }
    }

    /// The successor of `state` as the search makes it: partial, encoded
    /// from the parent's bytes, then completed.
    fn search_step<M: Model<State = u32, Action = ()>>(model: &M, state: u32) -> (u32, Vec<u8>) {
        let mut next = 7;
        assert!(Successors::next_state_partial_into(
            model,
            &state,
            &(),
            &mut next
        ));
        let mut bytes = Vec::new();
        model.encode_successor(&state, &state.to_bytes(), &next, &mut bytes);
        let partial = next;
        model.complete_successor(&state, &mut next);
        assert_eq!(bytes, next.to_bytes(), "the encoding is the successor's");
        (partial, bytes)
    }

    #[test]
    fn a_model_without_fast_successors_gets_whole_ones_from_next_state() {
        let plain = Counter { fast: false };
        assert_eq!(search_step(&plain, 1), (2, 2u32.to_bytes()));
        let mut out = 7;
        assert!(!Successors::next_state_partial_into(
            &plain,
            &3,
            &(),
            &mut out
        ));
    }

    #[test]
    fn a_model_with_fast_successors_has_the_search_use_them() {
        // Left partial (7, the buffer's old value): the model's own hook ran.
        let fast = Counter { fast: true };
        assert_eq!(search_step(&fast, 1), (7, 2u32.to_bytes()));
    }
}
