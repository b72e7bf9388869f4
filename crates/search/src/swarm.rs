//! Swarm testing for random walks: each walk draws its own density for every
//! fault kind (the probability, per step, of injecting that fault when one
//! is enabled), so that a campaign mixes walks with no crash and many drops,
//! walks with crashes only, and so on, instead of choosing uniformly among
//! enabled actions (where faults crowd out the protocol's own steps).

use std::borrow::Cow;

use rand::Rng;
use rand_pcg::Pcg64;

/// Chance that a walk leaves a fault kind out altogether.
const OMIT_CHANCE: f64 = 1.0 / 3.0;
/// A kind that is in has a density `2^-u`, `u` uniform in this range: from
/// 1/64 to 1/2 per step, spread evenly on a log scale.
const DENSITY_EXPONENTS: std::ops::Range<f64> = 1.0..6.0;

/// One walk's fault densities, drawn from its generator.
#[derive(Debug, Default)]
pub(crate) struct FaultMix {
    densities: Vec<(Cow<'static, str>, f64)>,
}

impl FaultMix {
    /// Draws a density for each of `kinds`, in order, from `rng`; kinds met
    /// later ([`density`](Self::density)) are drawn when first met.
    pub fn draw(kinds: impl IntoIterator<Item = Cow<'static, str>>, rng: &mut Pcg64) -> FaultMix {
        let mut mix = FaultMix::default();
        for kind in kinds {
            mix.density(&kind, rng);
        }
        mix
    }

    /// The density of fault kind `kind`, drawn now if not drawn yet.
    pub fn density(&mut self, kind: &str, rng: &mut Pcg64) -> f64 {
        if let Some((_, density)) = self.densities.iter().find(|(name, _)| name == kind) {
            return *density;
        }
        let density = if rng.gen_bool(OMIT_CHANCE) {
            0.0
        } else {
            (-rng.gen_range(DENSITY_EXPONENTS)).exp2()
        };
        self.densities.push((Cow::Owned(kind.to_string()), density));
        density
    }

    /// Picks the index of the candidate to try among `kinds` (each
    /// candidate's kind name and whether it is a fault): for each fault kind
    /// present, in order of first appearance, with its density one of that
    /// kind; else one of the other candidates; else (only faults remain) one
    /// of the faults whose density is not zero. `None`: only faults this walk
    /// leaves out remain.
    pub fn choose(&mut self, kinds: &[(&str, bool)], rng: &mut Pcg64) -> Option<usize> {
        let pick = |rng: &mut Pcg64, wanted: &dyn Fn(usize) -> bool| -> Option<usize> {
            let count = (0..kinds.len()).filter(|&i| wanted(i)).count();
            if count == 0 {
                return None;
            }
            let nth = rng.gen_range(0..count);
            (0..kinds.len()).filter(|&i| wanted(i)).nth(nth)
        };
        for (at, &(kind, fault)) in kinds.iter().enumerate() {
            let first = kinds[..at].iter().all(|&(other, _)| other != kind);
            if fault && first {
                let density = self.density(kind, rng);
                if density > 0.0 && rng.gen_bool(density) {
                    return pick(rng, &|i| kinds[i].0 == kind);
                }
            }
        }
        if let Some(normal) = pick(rng, &|i| !kinds[i].1) {
            return Some(normal);
        }
        let allowed: Vec<bool> = kinds
            .iter()
            .map(|&(kind, _)| self.density(kind, rng) > 0.0)
            .collect();
        pick(rng, &|i| allowed[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn densities_are_drawn_once_per_kind_and_some_kinds_are_left_out() {
        let mut omitted = 0;
        for seed in 0..300u64 {
            let mut rng = Pcg64::seed_from_u64(seed);
            let mut mix = FaultMix::draw([Cow::Borrowed("DROP")], &mut rng);
            let density = mix.density("DROP", &mut rng);
            assert_eq!(mix.density("DROP", &mut rng), density);
            assert!(density == 0.0 || (1.0 / 64.0..=0.5).contains(&density));
            omitted += usize::from(density == 0.0);
        }
        // One in three is left out: 100 expected of 300.
        assert!((60..140).contains(&omitted), "{omitted}");
    }

    #[test]
    fn a_left_out_fault_is_never_chosen_and_normal_steps_come_first() {
        let kinds = [("DELIVER", false), ("DROP", true), ("CRASH", true)];
        let mut rng = Pcg64::seed_from_u64(1);
        let mut mix = FaultMix {
            densities: vec![("DROP".into(), 0.0), ("CRASH".into(), 0.5)],
        };
        let mut chosen = [0u32; 3];
        for _ in 0..2000 {
            chosen[mix.choose(&kinds, &mut rng).unwrap()] += 1;
        }
        assert_eq!(chosen[1], 0, "DROP is left out: {chosen:?}");
        assert!(
            (800..1200).contains(&chosen[2]),
            "CRASH half the time: {chosen:?}"
        );
        // Only left-out faults: the walk cannot go on.
        assert_eq!(mix.choose(&[("DROP", true)], &mut rng), None);
        // Only faults, one of them in: that one.
        assert_eq!(
            mix.choose(&[("DROP", true), ("CRASH", true)], &mut rng),
            Some(1)
        );
    }
}
