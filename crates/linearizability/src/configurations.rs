//! Linearizability checked event by event: the set of linearization
//! configurations a history can be in, kept canonical, so that it can stand
//! for the history wherever only the history's future verdicts matter (a
//! model checker's state identity; see the crate's README).
//!
//! A configuration is the state of the object after some legal sequential
//! run of the operations linearized so far, with the results that the pending
//! ones among them took. Every completed operation is linearized; a pending
//! one may or may not be yet. The history is linearizable exactly when some
//! configuration exists.

use std::collections::{BTreeMap, BTreeSet};

use cmc_model::{DecodeError, Decoder, Encode};

use crate::spec::SequentialSpec;

/// The key of an operation in [`Linearizations`]: distinct for the
/// operations of one history (e.g. a request id).
pub type OpKey = u32;

/// One linearization configuration: the object's state after the operations
/// linearized so far, and the results taken by the linearized operations
/// that are still pending (by key).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Config<State, Ret> {
    state: State,
    linearized: BTreeMap<OpKey, Ret>,
}

/// The configurations a history can be in, fed one event at a time.
///
/// The set is closed under linearizing any pending operation (a pending
/// operation may take effect at any moment before its response), and stored
/// canonically as its *generators*: the configurations that are not one
/// linearization step away from another of the set. The closure is the
/// generators' closure, so two values are equal (and encode to the same
/// bytes) exactly when they have the same pending operations and the same
/// closed set, which decides the verdict of every continuation of the history.
///
/// Contract: keys are distinct; [`Linearizations::respond`] and
/// [`Linearizations::withdraw`] name a pending operation.
pub struct Linearizations<S: SequentialSpec> {
    /// The invoked operations without a response, by key.
    pending: BTreeMap<OpKey, S::Op>,
    /// The generators of the closed set of configurations.
    generators: BTreeSet<Config<S::State, S::Ret>>,
}

impl<S: SequentialSpec> Linearizations<S>
where
    S::State: Ord,
    S::Op: Ord,
    S::Ret: Ord,
{
    /// The empty history's: the initial state, nothing pending.
    pub fn new(spec: &S) -> Self {
        Linearizations {
            pending: BTreeMap::new(),
            generators: BTreeSet::from([Config {
                state: spec.init(),
                linearized: BTreeMap::new(),
            }]),
        }
    }

    /// Whether the history so far is linearizable (some configuration exists).
    pub fn is_linearizable(&self) -> bool {
        !self.generators.is_empty()
    }

    /// Operation `key` invoked `op`. The generators do not change: every new
    /// configuration linearizes `op`, so it is one step from an old one.
    ///
    /// Panics if `key` is pending already.
    pub fn invoke(&mut self, key: OpKey, op: S::Op) {
        let fresh = self.pending.insert(key, op).is_none();
        assert!(fresh, "operation {key} is already pending");
    }

    /// Pending operation `key` returned `ret`: it must have been linearized,
    /// with that result, by now.
    ///
    /// Panics if `key` is not pending.
    pub fn respond(&mut self, spec: &S, key: OpKey, ret: &S::Ret) {
        let closed = self.closure(spec);
        self.forget(key);
        let kept = closed.into_iter().filter_map(|mut config| {
            let took = config.linearized.remove(&key)?;
            (took == *ret).then_some(config)
        });
        self.generators = self.generators_of(spec, kept.collect());
    }

    /// Pending operation `key` certainly never took effect (it was refused):
    /// it leaves the history, as if never invoked.
    ///
    /// Panics if `key` is not pending.
    pub fn withdraw(&mut self, spec: &S, key: OpKey) {
        let closed = self.closure(spec);
        self.forget(key);
        let kept = closed
            .into_iter()
            .filter(|config| !config.linearized.contains_key(&key));
        self.generators = self.generators_of(spec, kept.collect());
    }

    /// Whether the configurations that `bytes` encode (as [`Encode`] writes
    /// them) are those of a linearizable history, read without decoding
    /// them: the same answer as [`Linearizations::is_linearizable`] on the
    /// decoded value, for the bytes of any value.
    ///
    /// ```
    /// use cmc_linearizability::specs::{Register, RegisterOp, RegisterRet};
    /// use cmc_linearizability::Linearizations;
    /// use cmc_model::Encode;
    ///
    /// let mut lin = Linearizations::new(&Register);
    /// lin.invoke(0, RegisterOp::Read);
    /// assert_eq!(Linearizations::<Register>::encoded_is_linearizable(&lin.to_bytes()), Ok(true));
    /// lin.respond(&Register, 0, &RegisterRet::Value(7)); // 7 was never written
    /// assert_eq!(Linearizations::<Register>::encoded_is_linearizable(&lin.to_bytes()), Ok(false));
    /// ```
    pub fn encoded_is_linearizable(bytes: &[u8]) -> Result<bool, DecodeError> {
        Ok(u32::decode(&mut Decoder::new(bytes))? != 0)
    }

    /// Number of generators (the size of the canonical form).
    pub fn generators(&self) -> usize {
        self.generators.len()
    }

    fn forget(&mut self, key: OpKey) {
        let was_pending = self.pending.remove(&key).is_some();
        assert!(was_pending, "operation {key} is not pending");
    }

    /// `config` with pending operation `key` (not linearized in it) linearized.
    fn step(
        &self,
        spec: &S,
        config: &Config<S::State, S::Ret>,
        key: OpKey,
    ) -> Config<S::State, S::Ret> {
        let (state, ret) = spec.apply(&config.state, &self.pending[&key]);
        let mut linearized = config.linearized.clone();
        linearized.insert(key, ret);
        Config { state, linearized }
    }

    /// The pending operations not linearized in `config`.
    fn unlinearized<'a>(
        &'a self,
        config: &'a Config<S::State, S::Ret>,
    ) -> impl Iterator<Item = OpKey> + 'a {
        self.pending
            .keys()
            .copied()
            .filter(|key| !config.linearized.contains_key(key))
    }

    /// Every configuration: the generators' closure under linearization steps.
    fn closure(&self, spec: &S) -> BTreeSet<Config<S::State, S::Ret>> {
        let mut closed = self.generators.clone();
        let mut work: Vec<Config<S::State, S::Ret>> = closed.iter().cloned().collect();
        while let Some(config) = work.pop() {
            for key in self.unlinearized(&config) {
                let next = self.step(spec, &config, key);
                if !closed.contains(&next) {
                    closed.insert(next.clone());
                    work.push(next);
                }
            }
        }
        closed
    }

    /// The generators of `closed`, a set closed under linearization steps
    /// of the current pending operations: its members no step leads to.
    fn generators_of(
        &self,
        spec: &S,
        closed: BTreeSet<Config<S::State, S::Ret>>,
    ) -> BTreeSet<Config<S::State, S::Ret>> {
        let mut reached = BTreeSet::new();
        for config in &closed {
            for key in self.unlinearized(config) {
                reached.insert(self.step(spec, config, key));
            }
        }
        closed
            .into_iter()
            .filter(|c| !reached.contains(c))
            .collect()
    }
}

impl<S: SequentialSpec> Clone for Linearizations<S> {
    fn clone(&self) -> Self {
        Linearizations {
            pending: self.pending.clone(),
            generators: self.generators.clone(),
        }
    }
}

impl<S: SequentialSpec> std::fmt::Debug for Linearizations<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Linearizations")
            .field("pending", &self.pending)
            .field("generators", &self.generators)
            .finish()
    }
}

impl<S: SequentialSpec> PartialEq for Linearizations<S>
where
    S::Op: PartialEq,
    S::Ret: PartialEq,
{
    fn eq(&self, other: &Self) -> bool {
        self.pending == other.pending && self.generators == other.generators
    }
}

/// The canonical bytes: the number of generators (first, so that
/// [`Linearizations::encoded_is_linearizable`] reads the verdict alone),
/// the pending operations by key, then the generators in order (each its
/// state, then its linearized pending results by key).
impl<S: SequentialSpec> Encode for Linearizations<S>
where
    S::State: Encode + Ord,
    S::Op: Encode,
    S::Ret: Encode + Ord,
{
    fn encode(&self, out: &mut Vec<u8>) {
        (self.generators.len() as u32).encode(out);
        self.pending.encode(out);
        for config in &self.generators {
            config.state.encode(out);
            config.linearized.encode(out);
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let count = u32::decode(decoder)?;
        let pending = BTreeMap::decode(decoder)?;
        let mut generators = BTreeSet::new();
        let mut last: Option<Config<S::State, S::Ret>> = None;
        for _ in 0..count {
            let config = Config {
                state: S::State::decode(decoder)?,
                linearized: BTreeMap::decode(decoder)?,
            };
            if last.as_ref().is_some_and(|last| *last >= config) {
                return decoder.invalid("linearization configurations out of order");
            }
            if config
                .linearized
                .keys()
                .any(|key| !pending.contains_key(key))
            {
                return decoder.invalid("a configuration linearizes an operation not pending");
            }
            last = Some(config.clone());
            generators.insert(config);
        }
        Ok(Linearizations {
            pending,
            generators,
        })
    }
}
