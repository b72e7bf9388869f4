//! Canonical byte encoding of states.
//!
//! A state's bytes are its identity: two states are the same state exactly when
//! their encodings are equal. Encodings are what the fingerprint is computed
//! from, what the frontier stores and what crosses a process boundary or goes
//! to disk, so they must not depend on addresses, hash seeds or insertion
//! order. Collections are encoded in their iteration order, so use ordered
//! ones (`BTreeSet`, sorted `Vec`, bit sets) for set-valued state.

use std::collections::{BTreeMap, BTreeSet};

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
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let rest = &self.bytes[self.offset..];
        if rest.len() < len {
            return Err(DecodeError::Truncated {
                offset: self.offset,
                needed: len - rest.len(),
            });
        }
        self.offset += len;
        Ok(&rest[..len])
    }

    /// Current offset into the input, for error messages.
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
        match self.bytes.len() - self.offset {
            0 => Ok(()),
            extra => Err(DecodeError::Trailing { extra }),
        }
    }
}

/// A value with a canonical, stable byte encoding.
///
/// Contract: `decode(encode(v)) == v`, and `encode(a) == encode(b)` exactly
/// when `a` and `b` denote the same state. Integers are little-endian and
/// fixed-width; sequences carry a `u32` length prefix.
///
/// For structs, [`encode_fields!`](crate::encode_fields) writes the
/// implementation; for field-less enums, [`encode_enum!`](crate::encode_enum).
pub trait Encode: Sized {
    /// Appends the canonical encoding of `self` to `out`.
    fn encode(&self, out: &mut Vec<u8>);

    /// Reads one value from `decoder`.
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError>;

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

macro_rules! encode_integers {
    ($($ty:ty),*) => {$(
        impl Encode for $ty {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
                let bytes = decoder.take(std::mem::size_of::<$ty>())?;
                Ok(<$ty>::from_le_bytes(bytes.try_into().expect("length checked by take")))
            }
        }
    )*};
}

encode_integers!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

impl Encode for bool {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        match u8::decode(decoder)? {
            0 => Ok(false),
            1 => Ok(true),
            other => decoder.invalid(format!("bool byte {other}")),
        }
    }
}

impl<T: Encode, const N: usize> Encode for [T; N] {
    fn encode(&self, out: &mut Vec<u8>) {
        for item in self {
            item.encode(out);
        }
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut items = Vec::with_capacity(N);
        for _ in 0..N {
            items.push(T::decode(decoder)?);
        }
        Ok(items
            .try_into()
            .unwrap_or_else(|_| unreachable!("exactly N items were pushed")))
    }
}

fn encode_len(len: usize, out: &mut Vec<u8>) {
    let len = u32::try_from(len).expect("a state collection holds at most u32::MAX items");
    len.encode(out);
}

fn decode_len(decoder: &mut Decoder<'_>) -> Result<usize, DecodeError> {
    let len = u32::decode(decoder)? as usize;
    // Every item takes at least zero bytes, so only a generous sanity bound applies.
    if len > decoder.bytes.len().saturating_mul(8) + 1024 {
        return decoder.invalid(format!("collection length {len} exceeds the input"));
    }
    Ok(len)
}

/// Encodes a sequence of `len` items as its length, then each item.
fn encode_items<'a, T: Encode + 'a>(
    len: usize,
    items: impl Iterator<Item = &'a T>,
    out: &mut Vec<u8>,
) {
    encode_len(len, out);
    for item in items {
        item.encode(out);
    }
}

/// Decodes a sequence written by [`encode_items`] into any collection.
fn decode_items<T: Encode, C: FromIterator<T>>(
    decoder: &mut Decoder<'_>,
) -> Result<C, DecodeError> {
    let len = decode_len(decoder)?;
    (0..len).map(|_| T::decode(decoder)).collect()
}

impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_items(self.len(), self.iter(), out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        decode_items(decoder)
    }
}

impl<T: Encode + Ord> Encode for BTreeSet<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_items(self.len(), self.iter(), out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        decode_items(decoder)
    }
}

impl<K: Encode + Ord, V: Encode> Encode for BTreeMap<K, V> {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_len(self.len(), out);
        for (key, value) in self {
            key.encode(out);
            value.encode(out);
        }
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let len = decode_len(decoder)?;
        (0..len)
            .map(|_| Ok((K::decode(decoder)?, V::decode(decoder)?)))
            .collect()
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(value) => {
                out.push(1);
                value.encode(out);
            }
        }
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        match u8::decode(decoder)? {
            0 => Ok(None),
            1 => Ok(Some(T::decode(decoder)?)),
            other => decoder.invalid(format!("option tag {other}")),
        }
    }
}

impl Encode for String {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_len(self.len(), out);
        out.extend_from_slice(self.as_bytes());
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let len = decode_len(decoder)?;
        let offset = decoder.offset();
        let bytes = decoder.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| DecodeError::Invalid {
            offset,
            what: "string is not UTF-8".into(),
        })
    }
}

macro_rules! encode_tuples {
    ($(($($name:ident),+)),*) => {$(
        impl<$($name: Encode),+> Encode for ($($name,)+) {
            #[allow(non_snake_case)]
            fn encode(&self, out: &mut Vec<u8>) {
                let ($($name,)+) = self;
                $($name.encode(out);)+
            }
            fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
                Ok(($($name::decode(decoder)?,)+))
            }
        }
    )*};
}

encode_tuples!((A), (A, B), (A, B, C), (A, B, C, D));

/// Implements [`Encode`] for a struct by encoding the named fields in order.
///
/// Every field of the struct must be listed (the generated `decode` builds the
/// struct from exactly these fields, so a missing one is a compile error).
///
/// ```
/// use cmc_model::{encode_fields, Encode};
/// #[derive(Debug, PartialEq)]
/// struct Jugs { small: u8, big: u8 }
/// encode_fields!(Jugs { small, big });
/// let jugs = Jugs { small: 3, big: 4 };
/// assert_eq!(Jugs::decode_exact(&jugs.to_bytes()).unwrap(), jugs);
/// ```
#[macro_export]
macro_rules! encode_fields {
    ($ty:ident { $($field:ident),* $(,)? }) => {
        impl $crate::Encode for $ty {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                $( $crate::Encode::encode(&self.$field, out); )*
            }
            fn decode(decoder: &mut $crate::Decoder<'_>) -> Result<Self, $crate::DecodeError> {
                Ok($ty { $( $field: $crate::Encode::decode(decoder)?, )* })
            }
        }
    };
}

/// Implements [`Encode`] for a field-less enum as one byte: the position of
/// the variant in the list given (at most 256 variants).
///
/// ```
/// use cmc_model::{encode_enum, Encode};
/// #[derive(Debug, Clone, Copy, PartialEq)]
/// enum Phase { Working, Prepared, Committed }
/// encode_enum!(Phase { Working, Prepared, Committed });
/// assert_eq!(Phase::Prepared.to_bytes(), vec![1]);
/// assert!(Phase::decode_exact(&[7]).is_err());
/// ```
#[macro_export]
macro_rules! encode_enum {
    ($ty:ident { $($variant:ident),+ $(,)? }) => {
        impl $crate::Encode for $ty {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                out.push(*self as u8);
            }
            fn decode(decoder: &mut $crate::Decoder<'_>) -> Result<Self, $crate::DecodeError> {
                const VARIANTS: &[$ty] = &[$($ty::$variant),+];
                let tag = <u8 as $crate::Encode>::decode(decoder)?;
                match VARIANTS.get(tag as usize) {
                    Some(variant) => Ok(*variant),
                    None => decoder.invalid(format!(
                        "{} has no variant number {}", stringify!($ty), tag
                    )),
                }
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: Encode + PartialEq + std::fmt::Debug>(value: T) {
        let bytes = value.to_bytes();
        assert_eq!(T::decode_exact(&bytes).unwrap(), value);
    }

    #[test]
    fn values_round_trip() {
        round_trip(7u8);
        round_trip(-3i64);
        round_trip(u128::MAX);
        round_trip(true);
        round_trip([1u16, 2, 3]);
        round_trip(vec![Some(1u32), None]);
        round_trip(BTreeSet::from([3u8, 1, 2]));
        round_trip(BTreeMap::from([(1u8, "a".to_string())]));
        round_trip((1u8, 2u16, 3u32, false));
    }

    #[test]
    fn integers_are_little_endian_fixed_width() {
        assert_eq!(0x0102u16.to_bytes(), vec![2, 1]);
        assert_eq!(vec![5u8].to_bytes(), vec![1, 0, 0, 0, 5]);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        assert!(matches!(
            u32::decode_exact(&[1, 2]),
            Err(DecodeError::Truncated { needed: 2, .. })
        ));
        assert!(matches!(
            bool::decode_exact(&[2]),
            Err(DecodeError::Invalid { .. })
        ));
        assert!(matches!(
            u8::decode_exact(&[1, 2]),
            Err(DecodeError::Trailing { extra: 1 })
        ));
        assert!(Vec::<u8>::decode_exact(&[255, 255, 255, 255]).is_err());
    }
}
