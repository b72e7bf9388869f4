//! Encodings of the scalar types: integers (little-endian, fixed width),
//! `usize` (as `u64`, the same on every platform), `bool`, `char` and `()`.

use super::{DecodeError, Decoder, Encode};

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

encode_integers!(u16, u32, u64, u128, i8, i16, i32, i64, i128);

/// A byte is itself; a sequence of bytes is copied at once.
impl Encode for u8 {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(*self);
    }
    #[inline]
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(decoder.take(1)?[0])
    }
    #[inline]
    fn encode_slice(items: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(items);
    }
    #[inline]
    fn decode_into(
        decoder: &mut Decoder<'_>,
        len: usize,
        into: &mut Vec<u8>,
    ) -> Result<(), DecodeError> {
        match decoder.take(len) {
            Ok(bytes) => {
                into.extend_from_slice(bytes);
                Ok(())
            }
            // The error reading byte by byte gives: the first missing byte.
            Err(DecodeError::Truncated { offset, needed }) => Err(DecodeError::Truncated {
                offset: offset + len - needed,
                needed: 1,
            }),
            Err(other) => Err(other),
        }
    }
}

impl Encode for usize {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        // Lossless: no platform Rust supports has a usize wider than 64 bits.
        (*self as u64).encode(out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let offset = decoder.offset();
        let value = u64::decode(decoder)?;
        usize::try_from(value).map_err(|_| DecodeError::Invalid {
            offset,
            what: format!("usize {value} does not fit this platform's usize"),
        })
    }
}

impl Encode for bool {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let offset = decoder.offset();
        match u8::decode(decoder)? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(DecodeError::Invalid {
                offset,
                what: format!("bool byte {other}"),
            }),
        }
    }
}

impl Encode for char {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        u32::from(*self).encode(out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let offset = decoder.offset();
        let code = u32::decode(decoder)?;
        char::from_u32(code).ok_or_else(|| DecodeError::Invalid {
            offset,
            what: format!("{code:#x} is not a Unicode scalar value"),
        })
    }
}

impl Encode for () {
    #[inline]
    fn encode(&self, _out: &mut Vec<u8>) {}
    fn decode(_decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::assert_round_trip as round_trip;

    #[test]
    fn scalars_round_trip() {
        round_trip(7u8);
        round_trip(-3i64);
        round_trip(u128::MAX);
        round_trip(i8::MIN);
        round_trip(true);
        round_trip(false);
        round_trip(usize::MAX);
        round_trip('é');
        round_trip(char::MAX);
        round_trip(());
    }

    #[test]
    fn integers_are_little_endian_fixed_width() {
        assert_eq!(0x0102u16.to_bytes(), [2, 1]);
        assert_eq!((-2i32).to_bytes(), [0xfe, 0xff, 0xff, 0xff]);
        assert_eq!(5usize.to_bytes(), 5u64.to_bytes());
        assert_eq!('A'.to_bytes(), [0x41, 0, 0, 0]);
        assert_eq!(().to_bytes(), [0u8; 0]);
    }

    #[test]
    fn a_bool_byte_other_than_0_or_1_is_invalid() {
        assert_eq!(
            bool::decode_exact(&[2]),
            Err(DecodeError::Invalid {
                offset: 0,
                what: "bool byte 2".into()
            })
        );
    }

    #[test]
    fn surrogates_and_out_of_range_code_points_are_not_chars() {
        for code in [0xd800u32, 0xdfff, 0x11_0000, u32::MAX] {
            assert!(
                matches!(
                    char::decode_exact(&code.to_bytes()),
                    Err(DecodeError::Invalid { offset: 0, .. })
                ),
                "{code:#x}"
            );
        }
    }

    #[test]
    fn truncated_scalars_are_errors() {
        assert!(matches!(
            u64::decode_exact(&[1, 2, 3]),
            Err(DecodeError::Truncated { needed: 5, .. })
        ));
        assert!(usize::decode_exact(&[1]).is_err());
        assert!(char::decode_exact(&[]).is_err());
    }
}
