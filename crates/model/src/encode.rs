//! Canonical byte encoding of states.
//!
//! A state's bytes are its identity: two states are the same state exactly when
//! their encodings are equal. Encodings are what the fingerprint is computed
//! from, what the frontier stores and what crosses a process boundary or goes
//! to disk, so they must not depend on addresses, hash seeds or insertion
//! order. Sequences and ordered collections are encoded in their iteration
//! order; `HashSet` and `HashMap` in ascending order of their keys'
//! encodings, so equal sets have equal bytes whatever their hasher. Floating
//! point numbers have no canonical encoding (`NaN != NaN`, `0.0 == -0.0`)
//! and are refused at compile time.
//!
//! Decoding is total: bytes that no value encodes to (a truncated input, an
//! enum tag that names no variant, a `bool` byte other than 0 or 1, an invalid
//! `char`, a set out of order, a length beyond the input) give a
//! [`DecodeError`], never a panic and never another value.

mod collections;
mod compound;
mod scalars;

/// Why bytes could not be decoded into a state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes ended before the value did.
    #[error("state encoding is truncated: needed {needed} more byte(s) at offset {offset}")]
    Truncated {
        /// Offset at which more bytes were needed.
        offset: usize,
        /// How many more bytes were needed.
        needed: usize,
    },
    /// An enum's tag byte names no variant.
    #[error("invalid state encoding at offset {offset}: {type_name} has no variant number {tag}")]
    UnknownVariant {
        /// Offset of the tag byte.
        offset: usize,
        /// The enum.
        type_name: &'static str,
        /// The tag read.
        tag: u8,
    },
    /// A byte pattern that no value of the type encodes to.
    #[error("invalid state encoding at offset {offset}: {what}")]
    Invalid {
        /// Offset of the offending bytes.
        offset: usize,
        /// What was wrong.
        what: String,
    },
    /// Bytes were left over after the value was decoded.
    #[error("state encoding has {extra} trailing byte(s)")]
    Trailing {
        /// How many bytes were left.
        extra: usize,
    },
}

/// Reads values back from an encoding produced by [`Encode::encode`].
#[derive(Debug)]
pub struct Decoder<'a> {
    bytes: &'a [u8],
    offset: usize,
}

impl<'a> Decoder<'a> {
    /// A decoder positioned at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Decoder<'a> {
        Decoder { bytes, offset: 0 }
    }

    /// Takes the next `len` bytes, or fails with [`DecodeError::Truncated`].
    /// Inlined (with its error out of line) across crates: every field of
    /// every state decoded goes through it.
    #[inline]
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let rest = self.remaining();
        if rest.len() < len {
            return Err(self.truncated(len - rest.len()));
        }
        self.offset += len;
        Ok(&rest[..len])
    }

    /// The error of a `take` `needed` bytes short.
    #[cold]
    fn truncated(&self, needed: usize) -> DecodeError {
        DecodeError::Truncated {
            offset: self.offset,
            needed,
        }
    }

    /// The bytes not read yet.
    #[inline]
    fn remaining(&self) -> &'a [u8] {
        &self.bytes[self.offset..]
    }

    /// Current offset into the input, for error messages.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Fails with [`DecodeError::Invalid`] at the current offset.
    pub fn invalid<T>(&self, what: impl Into<String>) -> Result<T, DecodeError> {
        Err(DecodeError::Invalid {
            offset: self.offset,
            what: what.into(),
        })
    }

    /// Succeeds only if every byte has been consumed.
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.remaining().len() {
            0 => Ok(()),
            extra => Err(DecodeError::Trailing { extra }),
        }
    }
}

/// A value with a canonical, stable byte encoding.
///
/// Contract: `decode(encode(v)) == v`, and `encode(a) == encode(b)` exactly
/// when `a` and `b` denote the same state. Integers are little-endian and
/// fixed-width (`usize` as `u64`); sequences carry a `u32` length prefix;
/// enums a one-byte tag.
///
/// Write it with `#[derive(Encode)]` (structs, tuple structs, enums with
/// data, generics): encoding and decoding are then generated from the same
/// declaration and cannot disagree. A derived struct is its fields in
/// declaration order; a derived enum is the variant's position in the
/// declaration as one byte, then its fields.
///
/// ```
/// use cmc_model::Encode;
///
/// #[derive(Encode, Debug, PartialEq)]
/// enum Phase { Working, Prepared { votes: u8 }, Committed(bool) }
///
/// #[derive(Encode, Debug, PartialEq)]
/// struct Jugs { small: u8, big: u8, phase: Phase }
///
/// let jugs = Jugs { small: 3, big: 4, phase: Phase::Prepared { votes: 2 } };
/// assert_eq!(jugs.to_bytes(), [3, 4, 1, 2]);
/// assert_eq!(Jugs::decode_exact(&jugs.to_bytes()).unwrap(), jugs);
/// assert!(Phase::decode_exact(&[7]).is_err());
/// ```
///
/// Encodable types: the integers (`u8` to `u128`, `i8` to `i128`, `usize`),
/// `bool`, `char`, `()`, `String`, `Vec`, `VecDeque`, arrays,
/// tuples (up to 12), `Option`, `Result`, `Box`, `Arc`, `BTreeSet`,
/// `BTreeMap`, `HashSet` and `HashMap` (any hasher: their items in ascending
/// order of their keys' encodings), and types with `#[derive(Encode)]`.
///
/// ```
/// use std::collections::{HashMap, HashSet};
/// use cmc_model::Encode;
///
/// #[derive(Encode, Debug, PartialEq)]
/// struct Bank { balances: HashMap<String, u32>, frozen: HashSet<u8> }
///
/// let bank = Bank {
///     balances: HashMap::from([("alice".into(), 5), ("bob".into(), 3)]),
///     frozen: HashSet::from([2, 1]),
/// };
/// assert_eq!(Bank::decode_exact(&bank.to_bytes()).unwrap(), bank);
/// ```
///
/// Floating point numbers have no canonical encoding: `NaN != NaN` although
/// their bits are equal, and `0.0 == -0.0` although theirs differ. The
/// derive refuses a field that holds one, naming it; store an integer (a
/// count of cents, of milliseconds) or an ordered type of your own instead:
///
/// ```compile_fail
/// # use cmc_model::Encode;
/// #[derive(Encode)]
/// struct Account { balance: f64 } // error: field `balance` ... `f64` has no canonical encoding
/// ```
///
/// Any other type that does not implement `Encode` is a compile error that
/// lists the encodable types:
///
/// ```compile_fail
/// # use cmc_model::Encode;
/// #[derive(Encode)]
/// struct Lease { until: std::time::Instant } // error: `Instant` has no canonical state encoding
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no canonical state encoding (it does not implement `cmc_model::Encode`)",
    label = "not `Encode`",
    note = "encodable: integers, `bool`, `char`, `()`, `String`, `Vec`, `VecDeque`, arrays, tuples, `Option`, `Result`, `Box`, `Arc`, `BTreeSet`, `BTreeMap`, `HashSet`, `HashMap`, and types with `#[derive(Encode)]` whose fields are encodable",
    note = "floating point numbers are not (`NaN != NaN`, `0.0 == -0.0`): store an integer, such as a count of hundredths"
)]
pub trait Encode: Sized {
    /// Appends the canonical encoding of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);

    /// Reads one value from `decoder`.
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError>;

    /// Appends the encodings of `items` back to back (how sequences and
    /// arrays encode their items). Must equal encoding each item in turn;
    /// types whose encoding is their memory (bytes) override it with one copy.
    #[inline]
    fn encode_slice(items: &[Self], out: &mut Vec<u8>) {
        for item in items {
            item.encode(out);
        }
    }

    /// Reads `len` values written by [`Encode::encode_slice`], appending
    /// them to `into`. Must equal decoding each in turn.
    #[inline]
    fn decode_into(
        decoder: &mut Decoder<'_>,
        len: usize,
        into: &mut Vec<Self>,
    ) -> Result<(), DecodeError> {
        for _ in 0..len {
            into.push(Self::decode(decoder)?);
        }
        Ok(())
    }

    /// Reads one value from `decoder` into `self`, as [`Encode::decode`]
    /// would, reusing the memory `self` holds where the type can (a `Vec`
    /// keeps its buffer; the default decodes a new value). On an error,
    /// `self` holds some valid value, not necessarily the one encoded.
    #[inline]
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        *self = Self::decode(decoder)?;
        Ok(())
    }

    /// As [`Encode::decode_exact`], into `self` (see
    /// [`Encode::decode_in_place`]): how a search decodes state after state
    /// without allocating.
    fn decode_exact_in_place(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut decoder = Decoder::new(bytes);
        self.decode_in_place(&mut decoder)?;
        decoder.finish()
    }

    /// Decodes a value that must span all of `bytes`.
    fn decode_exact(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut decoder = Decoder::new(bytes);
        let value = Self::decode(&mut decoder)?;
        decoder.finish()?;
        Ok(value)
    }

    /// The encoding of `self` as a fresh vector (convenience; allocates).
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

/// How an encoding failed the round trip `decode(encode(v)) == v`.
#[derive(Debug)]
pub enum RoundTripFailure<T> {
    /// The encoding does not decode.
    Undecodable(DecodeError),
    /// It decodes to a value whose own encoding is `encoding`: another state.
    Changed {
        /// The value decoded.
        decoded: T,
        /// Its encoding, which differs from the one decoded.
        encoding: Vec<u8>,
    },
}

/// Checks the [`Encode`] contract on one encoding: `bytes` decodes exactly,
/// to a value that encodes to `bytes` again.
///
/// Values are compared by their encodings (a state's identity), so `T` needs
/// no `PartialEq`; a `decode` that returns another state shows as
/// [`RoundTripFailure::Changed`] because that state encodes differently.
pub fn check_round_trip<T: Encode>(bytes: &[u8]) -> Result<(), RoundTripFailure<T>> {
    let decoded = T::decode_exact(bytes).map_err(RoundTripFailure::Undecodable)?;
    let encoding = decoded.to_bytes();
    if encoding == bytes {
        Ok(())
    } else {
        Err(RoundTripFailure::Changed { decoded, encoding })
    }
}

/// Asserts that `value` decodes back, unchanged, from its encoding (shared
/// by the unit tests of each family of encodings).
#[cfg(test)]
fn assert_round_trip<T: Encode + PartialEq + std::fmt::Debug>(value: T) {
    let bytes = value.to_bytes();
    assert_eq!(T::decode_exact(&bytes).unwrap(), value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        assert!(matches!(
            u32::decode_exact(&[1, 2]),
            Err(DecodeError::Truncated { needed: 2, .. })
        ));
        assert!(matches!(
            u8::decode_exact(&[1, 2]),
            Err(DecodeError::Trailing { extra: 1 })
        ));
    }

    /// Encodes a `u8` as itself but decodes every byte as 0.
    #[derive(Debug)]
    struct Forgetful(u8);

    impl Encode for Forgetful {
        fn encode(&self, out: &mut Vec<u8>) {
            out.push(self.0);
        }
        fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
            u8::decode(decoder)?;
            Ok(Forgetful(0))
        }
    }

    /// Derived inside this crate: `extern crate self as cmc_model` resolves
    /// the derive's `::cmc_model::Encode` here too.
    #[derive(crate::Encode, Debug)]
    enum Derived {
        Empty,
        Pair(u8, bool),
    }

    #[test]
    fn the_round_trip_check_passes_a_correct_encoding() {
        assert!(check_round_trip::<(u8, bool)>(&(7u8, true).to_bytes()).is_ok());
        for value in [Derived::Empty, Derived::Pair(7, true)] {
            assert!(check_round_trip::<Derived>(&value.to_bytes()).is_ok());
        }
    }

    #[test]
    fn the_round_trip_check_catches_a_decode_that_returns_another_value() {
        match check_round_trip::<Forgetful>(&Forgetful(5).to_bytes()) {
            Err(RoundTripFailure::Changed { decoded, encoding }) => {
                assert_eq!(decoded.0, 0);
                assert_eq!(encoding, [0]);
            }
            other => panic!("expected Changed, got {other:?}"),
        }
        assert!(check_round_trip::<Forgetful>(&[0]).is_ok());
    }

    #[test]
    fn the_round_trip_check_catches_bytes_that_do_not_decode() {
        assert!(matches!(
            check_round_trip::<bool>(&[2]),
            Err(RoundTripFailure::Undecodable(DecodeError::Invalid { .. }))
        ));
        assert!(matches!(
            check_round_trip::<u8>(&[1, 2]),
            Err(RoundTripFailure::Undecodable(DecodeError::Trailing { .. }))
        ));
    }
}
