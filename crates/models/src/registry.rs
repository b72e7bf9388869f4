//! The bundled models by name, for front ends that pick one at run time
//! (`cmc list`, `cmc check MODEL NAME=VALUE …`).

use cmc_search::AnyModel;

use crate::params::Params;
use crate::{
    DieHard, DieHardInvariant, PaxosCommit, PaxosCommitConstants, PaxosCommitInvariant, TCommit,
    TCommitInvariant, TwoPhase, TwoPhaseInvariant,
};

/// One `NAME=VALUE` parameter a bundled model takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    /// The name, e.g. `RM`.
    pub name: &'static str,
    /// The value used when the parameter is not given, as text.
    pub default: &'static str,
    /// What the parameter means and which values it takes.
    pub meaning: &'static str,
}

/// Builds a model from `NAME=VALUE` pairs, or says which one is wrong and why.
pub type BuildModel = fn(&[(String, String)]) -> Result<Box<dyn AnyModel>, String>;

/// A bundled model: its name, what it is, its parameters and its constructor.
#[derive(Debug, Clone)]
pub struct ModelEntry {
    /// The name `cmc check` takes, e.g. `two-phase`.
    pub name: &'static str,
    /// One line saying what the model is.
    pub summary: &'static str,
    /// The parameters it takes, with their defaults.
    pub params: Vec<ParamSpec>,
    /// The constructor: unknown parameter names and bad values are errors
    /// whose message names the parameter (the caller names the model).
    pub build: BuildModel,
}

impl ModelEntry {
    /// The model built from `params`; absent parameters take their defaults.
    pub fn build(&self, params: &[(String, String)]) -> Result<Box<dyn AnyModel>, String> {
        (self.build)(params)
    }
}

/// The bundled models, in the order `cmc list` shows them.
pub fn bundled() -> Vec<ModelEntry> {
    vec![
        ModelEntry {
            name: "die-hard",
            summary: "DieHard (tlaplus/Examples): measure 4 gallons with 3- and 5-gallon jugs",
            params: vec![ParamSpec {
                name: "INVARIANTS",
                default: "TypeOK",
                meaning: "comma-separated invariants to check: TypeOK, NotSolved (fails: \
                          its counterexample is the solution)",
            }],
            build: build_die_hard,
        },
        ModelEntry {
            name: "tcommit",
            summary: "TCommit (tlaplus/Examples): the transaction commit problem over RM \
                      resource managers; final states are terminal",
            params: vec![
                RM_PARAM,
                ParamSpec {
                    name: "INVARIANTS",
                    default: "TCTypeOK,TCConsistent",
                    meaning: "comma-separated invariants to check: TCTypeOK, TCConsistent",
                },
            ],
            build: build_tcommit,
        },
        ModelEntry {
            name: "two-phase",
            summary: "TwoPhase (tlaplus/Examples): two-phase commit, a TM and RM resource managers",
            params: vec![
                RM_PARAM,
                ParamSpec {
                    name: "INVARIANTS",
                    default: "TPTypeOK,TCConsistent",
                    meaning: "comma-separated invariants to check: TPTypeOK, TCConsistent, \
                              NoRMCommitted (fails: no RM ever commits)",
                },
            ],
            build: build_two_phase,
        },
        ModelEntry {
            name: "paxos-commit",
            summary: "PaxosCommit (tlaplus/Examples): Paxos Commit, one Paxos instance per RM",
            params: vec![
                ParamSpec {
                    name: "RM",
                    default: "2",
                    meaning: "number of resource managers r1, r2, ... (1 to 4)",
                },
                ParamSpec {
                    name: "ACCEPTORS",
                    default: "3",
                    meaning: "number of acceptors a1, a2, ... (1 to 6); Majority is every \
                              subset of floor(ACCEPTORS/2)+1 of them",
                },
                ParamSpec {
                    name: "BALLOTS",
                    default: "2",
                    meaning: "number of ballots: Ballot = 0..BALLOTS-1 (1 to 4; \
                              BALLOTS * ACCEPTORS * (2*BALLOTS+1) at most 64)",
                },
                ParamSpec {
                    name: "INVARIANTS",
                    default: "PCTypeOK",
                    meaning: "comma-separated invariants to check: PCTypeOK, TCConsistent, \
                              NoRMCommitted (fails: no RM ever commits)",
                },
            ],
            build: build_paxos_commit,
        },
    ]
}

/// The model named `name`, if one is bundled.
pub fn find(name: &str) -> Option<ModelEntry> {
    bundled().into_iter().find(|entry| entry.name == name)
}

const RM_PARAM: ParamSpec = ParamSpec {
    name: "RM",
    default: "3",
    meaning: "number of resource managers r1, r2, ... (1 to 16)",
};

fn build_die_hard(given: &[(String, String)]) -> Result<Box<dyn AnyModel>, String> {
    let mut params = Params::new(given);
    let invariants = params.take_choices(
        "INVARIANTS",
        &[DieHardInvariant::TypeOk],
        &DieHardInvariant::NAMES,
    )?;
    params.finish()?;
    Ok(Box::new(DieHard::with_invariants(&invariants)))
}

fn build_tcommit(given: &[(String, String)]) -> Result<Box<dyn AnyModel>, String> {
    let mut params = Params::new(given);
    let rm_count = params.take_count("RM", 3, 1..=crate::rm::RM_COUNT_MAX)?;
    let invariants = params.take_choices(
        "INVARIANTS",
        &TCommitInvariant::NAMES.map(|(_, invariant)| invariant),
        &TCommitInvariant::NAMES,
    )?;
    params.finish()?;
    Ok(Box::new(TCommit::with_invariants(rm_count, &invariants)))
}

fn build_two_phase(given: &[(String, String)]) -> Result<Box<dyn AnyModel>, String> {
    let mut params = Params::new(given);
    let rm_count = params.take_count("RM", 3, 1..=crate::rm::RM_COUNT_MAX)?;
    let invariants = params.take_choices(
        "INVARIANTS",
        &TwoPhaseInvariant::DEFAULT,
        &TwoPhaseInvariant::NAMES,
    )?;
    params.finish()?;
    Ok(Box::new(TwoPhase::with_invariants(rm_count, &invariants)))
}

fn build_paxos_commit(given: &[(String, String)]) -> Result<Box<dyn AnyModel>, String> {
    use crate::paxos_commit::{ACCEPTOR_COUNT_MAX, BALLOT_COUNT_MAX, PAXOS_RM_COUNT_MAX};
    let mut params = Params::new(given);
    let cfg = PaxosCommitConstants::CFG;
    let constants = PaxosCommitConstants {
        rm_count: params.take_count("RM", cfg.rm_count, 1..=PAXOS_RM_COUNT_MAX)?,
        acceptor_count: params.take_count(
            "ACCEPTORS",
            cfg.acceptor_count,
            1..=ACCEPTOR_COUNT_MAX,
        )?,
        ballot_count: params.take_count("BALLOTS", cfg.ballot_count, 1..=BALLOT_COUNT_MAX)?,
    };
    let invariants = params.take_choices(
        "INVARIANTS",
        &[PaxosCommitInvariant::TypeOk],
        &PaxosCommitInvariant::NAMES,
    )?;
    params.finish()?;
    Ok(Box::new(PaxosCommit::with(constants, &invariants)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(given: &[(&str, &str)]) -> Vec<(String, String)> {
        given
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    #[test]
    fn defaults_listed_are_the_defaults_built() {
        for entry in bundled() {
            let model = entry.build(&[]).unwrap();
            assert_eq!(model.name(), entry.name);
            let built = cmc_model::param_pairs(model.params());
            let listed: Vec<(String, String)> = entry
                .params
                .iter()
                .map(|param| (param.name.to_string(), param.default.to_string()))
                .collect();
            assert_eq!(built, listed, "{}", entry.name);
            // A model rebuilt from its own parameters is the same instance.
            let rebuilt = entry.build(&built).unwrap();
            assert_eq!(
                cmc_model::param_pairs(rebuilt.params()),
                built,
                "{}",
                entry.name
            );
        }
    }

    #[test]
    fn invariants_parameter_selects_the_properties() {
        let entry = find("two-phase").unwrap();
        let model = entry
            .build(&pairs(&[("RM", "5"), ("INVARIANTS", "NoRMCommitted")]))
            .unwrap();
        assert_eq!(
            model.property_names(),
            vec![("always", "NoRMCommitted".to_string())]
        );
    }

    #[test]
    fn bad_parameters_are_clear_errors() {
        let two_phase = find("two-phase").unwrap();
        let error = two_phase.build(&pairs(&[("RMS", "5")])).err().unwrap();
        assert!(error.contains("no parameter RMS"), "{error}");
        let error = two_phase.build(&pairs(&[("RM", "zero")])).err().unwrap();
        assert!(error.contains("RM=zero"), "{error}");
        let paxos = find("paxos-commit").unwrap();
        let error = paxos
            .build(&pairs(&[("ACCEPTORS", "5"), ("BALLOTS", "3")]))
            .err()
            .unwrap();
        assert!(error.contains("more than 64"), "{error}");
        assert!(find("three-phase").is_none());
    }
}
