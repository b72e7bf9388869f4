//! The determinism gate's encoding check: a model whose states do not survive
//! `decode(encode(s))` is an error naming the model and the state, never a
//! search over silently changed states.

use cmc_model::{DecodeError, Decoder, Encode, Model};
use cmc_search::{Checker, Strategy, Verdict};

/// A phase whose hand-written `Encode` has the bug `encode_enum!` allowed:
/// it encodes the discriminant but decodes by the position in a list written
/// in another order, so `Prepared` comes back as `Committed`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Working,
    Prepared,
    Committed,
}

impl Encode for Phase {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(*self as u8);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        const LISTED: [Phase; 3] = [Phase::Working, Phase::Committed, Phase::Prepared];
        let tag = u8::decode(decoder)?;
        LISTED
            .get(usize::from(tag))
            .copied()
            .ok_or_else(|| DecodeError::Invalid {
                offset: 0,
                what: format!("phase {tag}"),
            })
    }
}

/// Working, then Prepared, then Committed.
struct Commit;

impl Model for Commit {
    type State = Phase;
    type Action = ();
    fn name(&self) -> String {
        "commit".into()
    }
    fn init_states(&self, out: &mut Vec<Phase>) {
        out.push(Phase::Working);
    }
    fn actions(&self, _: &Phase, out: &mut Vec<()>) {
        out.push(());
    }
    fn next_state(&self, phase: &Phase, _: &()) -> Option<Phase> {
        match phase {
            Phase::Working => Some(Phase::Prepared),
            Phase::Prepared => Some(Phase::Committed),
            Phase::Committed => None,
        }
    }
    fn is_terminal(&self, phase: &Phase) -> bool {
        *phase == Phase::Committed
    }
}

fn assert_round_trip_error(message: &str) {
    assert!(message.contains("not a round trip"), "{message}");
    assert!(message.contains("model commit"), "{message}");
    assert!(
        message.contains("state Prepared encodes to bytes that decode to another state, Committed"),
        "{message}"
    );
}

#[test]
fn check_determinism_reports_an_encoding_that_is_not_a_round_trip() {
    for strategy in [Strategy::Bfs, Strategy::Dfs] {
        let mut checker = Checker::new(Commit).workers(1).check_determinism(true);
        checker = match strategy {
            Strategy::Bfs => checker.bfs(),
            _ => checker.dfs(),
        };
        match checker.run().verdict {
            Verdict::Error { message } => assert_round_trip_error(&message),
            other => panic!("{strategy:?}: expected an error, got {other:?}"),
        }
    }
}

/// The state `0` encodes to nothing, which decodes to nothing.
#[derive(Clone, Debug)]
struct Silent;

impl Encode for Silent {
    fn encode(&self, _out: &mut Vec<u8>) {}
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        decoder.invalid("a Silent is never decoded")
    }
}

struct Mute;

impl Model for Mute {
    type State = Silent;
    type Action = ();
    fn name(&self) -> String {
        "mute".into()
    }
    fn init_states(&self, out: &mut Vec<Silent>) {
        out.push(Silent);
    }
    fn actions(&self, _: &Silent, _: &mut Vec<()>) {}
    fn next_state(&self, _: &Silent, _: &()) -> Option<Silent> {
        None
    }
    fn is_terminal(&self, _: &Silent) -> bool {
        true
    }
}

#[test]
fn check_determinism_reports_an_encoding_that_does_not_decode() {
    let outcome = Checker::new(Mute).workers(1).check_determinism(true).run();
    match outcome.verdict {
        Verdict::Error { message } => {
            assert!(message.contains("model mute"), "{message}");
            assert!(
                message.contains("the encoding of state Silent does not decode"),
                "{message}"
            );
            assert!(message.contains("a Silent is never decoded"), "{message}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn a_correct_encoding_passes_the_check() {
    #[derive(Clone, Debug, Encode)]
    enum Step {
        Start,
        Middle(u8),
        End { at: u16 },
    }
    struct Walk;
    impl Model for Walk {
        type State = Step;
        type Action = ();
        fn name(&self) -> String {
            "walk".into()
        }
        fn init_states(&self, out: &mut Vec<Step>) {
            out.push(Step::Start);
        }
        fn actions(&self, _: &Step, out: &mut Vec<()>) {
            out.push(());
        }
        fn next_state(&self, step: &Step, _: &()) -> Option<Step> {
            match step {
                Step::Start => Some(Step::Middle(0)),
                Step::Middle(9) => Some(Step::End { at: 9 }),
                Step::Middle(n) => Some(Step::Middle(n + 1)),
                Step::End { .. } => None,
            }
        }
        fn is_terminal(&self, step: &Step) -> bool {
            matches!(step, Step::End { .. })
        }
    }
    let outcome = Checker::new(Walk).workers(2).check_determinism(true).run();
    assert!(
        matches!(outcome.verdict, Verdict::Pass),
        "{:?}",
        outcome.verdict
    );
    assert_eq!(outcome.stats.distinct_states, 12);
}

/// Debug builds (plain `cargo test`) check encodings even without the flag.
#[cfg(debug_assertions)]
#[test]
fn debug_builds_check_encodings_without_being_asked() {
    match Checker::new(Commit).workers(1).run().verdict {
        Verdict::Error { message } => assert_round_trip_error(&message),
        other => panic!("expected an error, got {other:?}"),
    }
}
