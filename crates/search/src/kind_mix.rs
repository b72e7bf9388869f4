//! Kind-weighted random walks (`--swarm-kinds`): each walk draws its own
//! weight for every *shape* of action it meets, and picks among the enabled
//! actions in proportion to their shapes' weights. An action's shape is its
//! text up to its first `(`, without `#N` indices (see [`shape`]): for a
//! World, `DELIVER n0->n1 Append` (which message goes where), `FIRE n1
//! timer=0`, `CLIENT r1 -> n1`, `CRASH n2`; a model whose actions print
//! without such detail gets one shape per action text. Where [`crate::swarm`] varies only how often faults strike, this
//! varies the pace of everything: a walk that rarely fires timers lets
//! messages settle, one that rarely takes client requests issues them late,
//! once leaders exist. Deep bugs that need one kind of step held back for a
//! long stretch are found by the walks whose draw holds it back.

use std::borrow::Cow;

use rand::Rng;
use rand_pcg::Pcg64;

/// Chance that a walk leaves a fault kind out altogether (as swarm does).
const OMIT_CHANCE: f64 = 1.0 / 3.0;
/// A kind's weight is `2^-u`, `u` uniform in this range: from 1/256 to 1,
/// spread evenly on a log scale.
const WEIGHT_EXPONENTS: std::ops::Range<f64> = 0.0..8.0;

/// One walk's weight per action kind, drawn from its generator.
#[derive(Debug, Default)]
pub(crate) struct KindMix {
    weights: Vec<(Cow<'static, str>, f64)>,
}

impl KindMix {
    /// The weight of shape `kind`, drawn now (from the walk's generator, so
    /// the same for every worker count) if not drawn yet: a fault kind is
    /// left out (weight 0) one time in three.
    fn weight(&mut self, kind: &str, fault: bool, rng: &mut Pcg64) -> f64 {
        if let Some((_, weight)) = self.weights.iter().find(|(name, _)| name == kind) {
            return *weight;
        }
        let weight = if fault && rng.gen_bool(OMIT_CHANCE) {
            0.0
        } else {
            (-rng.gen_range(WEIGHT_EXPONENTS)).exp2()
        };
        self.weights.push((Cow::Owned(kind.to_string()), weight));
        weight
    }

    /// Picks the index of the candidate to try among `kinds` (each
    /// candidate's kind name and whether it is a fault), in proportion to
    /// its kind's weight. `None`: only kinds this walk leaves out remain.
    pub fn choose(&mut self, kinds: &[(&str, bool)], rng: &mut Pcg64) -> Option<usize> {
        let weights: Vec<f64> = kinds
            .iter()
            .map(|&(kind, fault)| self.weight(kind, fault, rng))
            .collect();
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return None;
        }
        let mut left = rng.gen_range(0.0..total);
        for (at, weight) in weights.iter().enumerate() {
            if *weight > 0.0 && left < *weight {
                return Some(at);
            }
            left -= weight;
        }
        // Rounding: the last kind that is in.
        weights.iter().rposition(|weight| *weight > 0.0)
    }
}

/// The shape of an action whose text is `text`: up to its first `(`,
/// without `#N` indices, trimmed.
///
/// ```text
/// DELIVER n0->n1 #3 Append(t1,[1@t1])  ->  DELIVER n0->n1 Append
/// FIRE n1 timer=0                       ->  FIRE n1 timer=0
/// ```
pub(crate) fn shape(text: &str) -> String {
    let head = text.split('(').next().unwrap_or_default();
    let words: Vec<&str> = head
        .split_whitespace()
        .filter(|word| {
            !(word.len() > 1
                && word.starts_with('#')
                && word[1..].bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_kind_gets_a_weight_and_only_faults_are_left_out() {
        let mut omitted_faults = 0;
        for seed in 0..300u64 {
            let mut rng = Pcg64::seed_from_u64(seed);
            let mut mix = KindMix::default();
            let deliver = mix.weight("DELIVER", false, &mut rng);
            assert!((1.0 / 256.0..=1.0).contains(&deliver), "{deliver}");
            let drop = mix.weight("DROP", true, &mut rng);
            assert_eq!(mix.weight("DROP", true, &mut rng), drop, "drawn once");
            omitted_faults += usize::from(drop == 0.0);
        }
        assert!((60..140).contains(&omitted_faults), "{omitted_faults}");
    }

    #[test]
    fn candidates_are_chosen_in_proportion_to_their_kinds_weights() {
        let mut rng = Pcg64::seed_from_u64(5);
        let mut mix = KindMix {
            weights: vec![
                ("CLIENT".into(), 0.01),
                ("DELIVER".into(), 1.0),
                ("DROP".into(), 0.0),
            ],
        };
        let kinds = [("CLIENT", false), ("DELIVER", false), ("DROP", true)];
        let mut chosen = [0u32; 3];
        for _ in 0..10_000 {
            chosen[mix.choose(&kinds, &mut rng).unwrap()] += 1;
        }
        assert_eq!(chosen[2], 0, "DROP is left out: {chosen:?}");
        assert!(
            (40..200).contains(&chosen[0]),
            "CLIENT about 1%: {chosen:?}"
        );
        assert_eq!(mix.choose(&[("DROP", true)], &mut rng), None);
    }

    #[test]
    fn a_shape_keeps_what_and_where_but_not_indices_or_payloads() {
        assert_eq!(
            shape("DELIVER n0->n1 #3 Append(t1,[1@t1])"),
            "DELIVER n0->n1 Append"
        );
        assert_eq!(shape("FIRE n1 timer=0"), "FIRE n1 timer=0");
        assert_eq!(shape("CLIENT r1 -> n1"), "CLIENT r1 -> n1");
        assert_eq!(shape("Right"), "Right");
    }
}
