//! The model layer of cmc (layer 1 and 3 of `DESIGN.md`).
//!
//! A [`Model`] is a transition system: initial states, the actions enabled in a
//! state, the state an action leads to, and the [`Property`]s that must hold.
//! Every state has a canonical byte encoding ([`Encode`]); its 128-bit
//! [`Fingerprint`] is computed from those bytes only, so it is the same in
//! every run, every process and for every worker count.
//!
//! The search layer (`cmc-search`) explores any `Model`; nothing here knows how.

mod encode;
mod fingerprint;
mod model;
pub mod property;
mod view;

pub use encode::{DecodeError, Decoder, Encode};
pub use fingerprint::Fingerprint;
pub use model::{Model, ModelParam};
pub use property::{Property, PropertyKind};
pub use view::StateView;
