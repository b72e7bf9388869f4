//! `DieHard` (tlaplus/Examples, `specifications/DieHard/DieHard.tla`): measure
//! 4 gallons with a 3-gallon and a 5-gallon jug.
//!
//! Variables `big` and `small` (gallons in each jug); the six actions of
//! `Next`. Invariants: `TypeOK` (the default) and `NotSolved` (`big # 4`),
//! whose shortest counterexample is the puzzle's solution.

use cmc_model::{Encode, Model, ModelParam, Property, StateView};

use crate::params::choices_param;

/// Capacity of the small jug, in gallons.
const SMALL_CAPACITY_GALLONS: u8 = 3;
/// Capacity of the big jug, in gallons.
const BIG_CAPACITY_GALLONS: u8 = 5;

/// The jugs' contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Encode)]
pub struct Jugs {
    /// Gallons in the 5-gallon jug.
    pub big: u8,
    /// Gallons in the 3-gallon jug.
    pub small: u8,
}

/// The actions of `Next`, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DieHardAction {
    /// `FillSmallJug`.
    FillSmallJug,
    /// `FillBigJug`.
    FillBigJug,
    /// `EmptySmallJug`.
    EmptySmallJug,
    /// `EmptyBigJug`.
    EmptyBigJug,
    /// `SmallToBig`: pour until the big jug is full or the small one empty.
    SmallToBig,
    /// `BigToSmall`: pour until the small jug is full or the big one empty.
    BigToSmall,
}

impl DieHardAction {
    const ALL: [DieHardAction; 6] = [
        DieHardAction::FillSmallJug,
        DieHardAction::FillBigJug,
        DieHardAction::EmptySmallJug,
        DieHardAction::EmptyBigJug,
        DieHardAction::SmallToBig,
        DieHardAction::BigToSmall,
    ];
}

/// The invariants DieHard defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DieHardInvariant {
    /// `TypeOK`: `small \in 0..3 /\ big \in 0..5`.
    TypeOk,
    /// `NotSolved`: `big # 4` (violated by every solution).
    NotSolved,
}

impl DieHardInvariant {
    /// Spec names, as the `INVARIANTS` parameter takes them.
    pub const NAMES: [(&'static str, DieHardInvariant); 2] = [
        ("TypeOK", DieHardInvariant::TypeOk),
        ("NotSolved", DieHardInvariant::NotSolved),
    ];
}

/// The DieHard model, checking the invariants it was built with.
#[derive(Clone, Debug)]
pub struct DieHard {
    invariants: Vec<DieHardInvariant>,
}

impl DieHard {
    /// DieHard checking `TypeOK` only (the passing configuration).
    pub fn new() -> DieHard {
        DieHard::with_invariants(&[DieHardInvariant::TypeOk])
    }

    /// DieHard checking exactly `invariants`.
    pub fn with_invariants(invariants: &[DieHardInvariant]) -> DieHard {
        DieHard {
            invariants: invariants.to_vec(),
        }
    }

    /// `TypeOK`.
    pub fn type_ok(jugs: &Jugs) -> bool {
        jugs.small <= SMALL_CAPACITY_GALLONS && jugs.big <= BIG_CAPACITY_GALLONS
    }

    /// `NotSolved`.
    pub fn not_solved(jugs: &Jugs) -> bool {
        jugs.big != 4
    }
}

impl Default for DieHard {
    fn default() -> DieHard {
        DieHard::new()
    }
}

impl Model for DieHard {
    type State = Jugs;
    type Action = DieHardAction;

    fn name(&self) -> String {
        "die-hard".into()
    }

    fn params(&self) -> Vec<ModelParam> {
        vec![choices_param(
            "INVARIANTS",
            &self.invariants,
            &DieHardInvariant::NAMES,
        )]
    }

    fn init_states(&self, out: &mut Vec<Jugs>) {
        out.push(Jugs { big: 0, small: 0 });
    }

    fn actions(&self, _jugs: &Jugs, out: &mut Vec<DieHardAction>) {
        out.extend_from_slice(&DieHardAction::ALL);
    }

    fn next_state(&self, jugs: &Jugs, action: &DieHardAction) -> Option<Jugs> {
        let Jugs { big, small } = *jugs;
        Some(match action {
            DieHardAction::FillSmallJug => Jugs {
                big,
                small: SMALL_CAPACITY_GALLONS,
            },
            DieHardAction::FillBigJug => Jugs {
                big: BIG_CAPACITY_GALLONS,
                small,
            },
            DieHardAction::EmptySmallJug => Jugs { big, small: 0 },
            DieHardAction::EmptyBigJug => Jugs { big: 0, small },
            DieHardAction::SmallToBig => {
                let big_after = (big + small).min(BIG_CAPACITY_GALLONS);
                Jugs {
                    big: big_after,
                    small: small - (big_after - big),
                }
            }
            DieHardAction::BigToSmall => {
                let small_after = (big + small).min(SMALL_CAPACITY_GALLONS);
                Jugs {
                    big: big - (small_after - small),
                    small: small_after,
                }
            }
        })
    }

    fn properties(&self) -> Vec<Property<DieHard>> {
        self.invariants
            .iter()
            .map(|invariant| match invariant {
                DieHardInvariant::TypeOk => {
                    Property::always("TypeOK", |_: &DieHard, jugs: &Jugs| DieHard::type_ok(jugs))
                }
                DieHardInvariant::NotSolved => {
                    Property::always("NotSolved", |_: &DieHard, jugs: &Jugs| {
                        DieHard::not_solved(jugs)
                    })
                }
            })
            .collect()
    }

    fn describe_state(&self, jugs: &Jugs) -> StateView {
        StateView::new()
            .field("big", jugs.big)
            .field("small", jugs.small)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_invariants_hold, explore};

    #[test]
    fn reaches_every_tlc_state_and_keeps_type_ok() {
        let model = DieHard::new();
        let reachable = explore(&model, 100);
        assert_eq!((reachable.distinct(), reachable.depth()), (16, 8));
        assert!(reachable.stuck.is_empty(), "every action is always enabled");
        assert_invariants_hold(&model, &reachable);
    }

    #[test]
    fn shortest_solution_has_seven_states() {
        let model = DieHard::with_invariants(&DieHardInvariant::NAMES.map(|(_, i)| i));
        let reachable = explore(&model, 100);
        assert_eq!(reachable.shortest_violation(&model, "NotSolved"), Some(7));
        assert_eq!(reachable.shortest_violation(&model, "TypeOK"), None);
    }

    #[test]
    fn pouring_conserves_water_and_respects_capacities() {
        let model = DieHard::new();
        let jugs = Jugs { big: 4, small: 2 };
        let after = model.next_state(&jugs, &DieHardAction::SmallToBig).unwrap();
        assert_eq!(after, Jugs { big: 5, small: 1 });
        let after = model.next_state(&jugs, &DieHardAction::BigToSmall).unwrap();
        assert_eq!(after, Jugs { big: 3, small: 3 });
        let jugs = Jugs { big: 1, small: 1 };
        let after = model.next_state(&jugs, &DieHardAction::BigToSmall).unwrap();
        assert_eq!(after, Jugs { big: 0, small: 2 });
    }
}
