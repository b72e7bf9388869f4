//! The models the explorer can show: every bundled model and the World.

use cmc_models::{DieHard, PaxosCommit, TCommit, TwoPhase};
use cmc_search::AnyModel;
use cmc_world::World;

use crate::explorer::{Explorable, ModelExplorer, Plain};
use crate::world_view::WorldExtras;

/// `model` behind [`Explorable`]: a World with its nodes, network and
/// chart, a bundled model with its state's fields. `AnyModel` hides the
/// state type the explorer needs, so the model is taken back by its
/// concrete type; a model of another type is an error naming it.
pub fn explorable(model: Box<dyn AnyModel>) -> Result<Box<dyn Explorable>, String> {
    let name = model.name();
    let model = model.into_any();
    let model = match model.downcast::<World>() {
        Ok(world) => return Ok(Box::new(ModelExplorer::new(*world, WorldExtras))),
        Err(other) => other,
    };
    macro_rules! plain {
        ($model:expr, $($ty:ty),+) => {{
            let model = $model;
            $(
                let model = match model.downcast::<$ty>() {
                    Ok(model) => return Ok(Box::new(ModelExplorer::new(*model, Plain))),
                    Err(other) => other,
                };
            )+
            drop(model);
        }};
    }
    plain!(model, DieHard, TCommit, TwoPhase, PaxosCommit);
    Err(format!("the explorer does not know the model `{name}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_model_can_be_explored() {
        for entry in cmc_models::registry::bundled() {
            let model = entry.build(&[]).unwrap();
            let explorer =
                explorable(model).unwrap_or_else(|problem| panic!("{}: {problem}", entry.name));
            assert!(explorer.title().starts_with(entry.name));
            assert!(!explorer.initial_states().is_empty(), "{}", entry.name);
        }
    }
}
