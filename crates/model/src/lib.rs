//! The model layer of cmc: what a model is, how its states are encoded and fingerprinted (see `ARCHITECTURE.md`).
//!
//! A [`Model`] is a transition system: initial states, the actions enabled in a
//! state, the state an action leads to, and the [`Property`]s that must hold.
//! Every state has a canonical byte encoding ([`Encode`], usually
//! `#[derive(Encode)]`); its 128-bit [`Fingerprint`] is computed from those
//! bytes only, so it is the same in every run, every process and for every
//! worker count.
//!
//! The search layer (`cmc-search`) explores any `Model`; nothing here knows how.

// `#[derive(Encode)]` names the trait as `::cmc_model::Encode`, which inside
// this crate needs the crate to be known by its own name.
extern crate self as cmc_model;

mod debug_tree;
mod encode;
mod fingerprint;
mod model;
pub mod property;
mod sleep;
mod successors;
mod view;

/// Derives [`Encode`](trait@Encode): see the trait's documentation.
pub use cmc_derive::Encode;
pub use encode::{check_round_trip, DecodeError, Decoder, Encode, RoundTripFailure};
pub use fingerprint::Fingerprint;
pub use model::{param_pairs, ActionKind, Model, ModelParam};
pub use property::{Explainer, Property, PropertyKind};
pub use sleep::SleepKey;
pub use successors::{DynFastSuccessors, FastSuccessors, Successors};
pub use view::StateView;
