//! Encodings of values made of other values with no length prefix: tuples
//! (up to 12 elements), arrays, `Box`, `Arc`, and the enums `Option` (tag 0
//! `None`, 1 `Some`) and `Result` (tag 0 `Ok`, 1 `Err`).

use std::sync::Arc;

use super::{DecodeError, Decoder, Encode};

macro_rules! encode_tuples {
    ($(($($name:ident),+)),*) => {$(
        impl<$($name: Encode),+> Encode for ($($name,)+) {
            #[inline]
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

encode_tuples!(
    (A),
    (A, B),
    (A, B, C),
    (A, B, C, D),
    (A, B, C, D, E),
    (A, B, C, D, E, F),
    (A, B, C, D, E, F, G),
    (A, B, C, D, E, F, G, H),
    (A, B, C, D, E, F, G, H, I),
    (A, B, C, D, E, F, G, H, I, J),
    (A, B, C, D, E, F, G, H, I, J, K),
    (A, B, C, D, E, F, G, H, I, J, K, L)
);

impl<T: Encode, const N: usize> Encode for [T; N] {
    fn encode(&self, out: &mut Vec<u8>) {
        T::encode_slice(self, out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut items = Vec::with_capacity(N);
        T::decode_into(decoder, N, &mut items)?;
        Ok(items
            .try_into()
            .unwrap_or_else(|_| unreachable!("exactly N items were pushed")))
    }
}

impl<T: Encode> Encode for Box<T> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        T::encode(self, out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        T::decode(decoder).map(Box::new)
    }
}

impl<T: Encode> Encode for Arc<T> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        T::encode(self, out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        T::decode(decoder).map(Arc::new)
    }
}

/// Reads a tag byte that must be 0 or 1, the two variants of `type_name`.
fn decode_two_way_tag(
    decoder: &mut Decoder<'_>,
    type_name: &'static str,
) -> Result<bool, DecodeError> {
    let offset = decoder.offset();
    match u8::decode(decoder)? {
        0 => Ok(false),
        1 => Ok(true),
        tag => Err(DecodeError::UnknownVariant {
            offset,
            type_name,
            tag,
        }),
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
        if decode_two_way_tag(decoder, "Option")? {
            Ok(Some(T::decode(decoder)?))
        } else {
            Ok(None)
        }
    }
}

impl<T: Encode, E: Encode> Encode for Result<T, E> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Ok(value) => {
                out.push(0);
                value.encode(out);
            }
            Err(error) => {
                out.push(1);
                error.encode(out);
            }
        }
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        if decode_two_way_tag(decoder, "Result")? {
            Ok(Err(E::decode(decoder)?))
        } else {
            Ok(Ok(T::decode(decoder)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::assert_round_trip as round_trip;

    #[test]
    fn compound_values_round_trip() {
        round_trip((1u8,));
        round_trip((1u8, 2u16, 3u32, false));
        round_trip((
            1u8,
            2u16,
            3u32,
            4u64,
            5i8,
            6i16,
            7i32,
            8i64,
            'x',
            true,
            (),
            12usize,
        ));
        round_trip([1u16, 2, 3]);
        round_trip([[true; 2]; 3]);
        round_trip::<[u8; 0]>([]);
        round_trip(Box::new(7u32));
        round_trip(Arc::new((1u8, 'a')));
        round_trip(Some(Some(3u8)));
        round_trip(None::<u8>);
        round_trip(Ok::<u8, char>(1));
        round_trip(Err::<u8, char>('e'));
    }

    #[test]
    fn layouts_are_concatenations_with_a_tag_for_enums() {
        assert_eq!((1u8, 2u16).to_bytes(), [1, 2, 0]);
        assert_eq!([3u8, 4].to_bytes(), [3, 4]);
        assert_eq!(Box::new(5u8).to_bytes(), [5]);
        assert_eq!(Some(5u8).to_bytes(), [1, 5]);
        assert_eq!(None::<u8>.to_bytes(), [0]);
        assert_eq!(Ok::<u8, u16>(5).to_bytes(), [0, 5]);
        assert_eq!(Err::<u8, u16>(5).to_bytes(), [1, 5, 0]);
    }

    #[test]
    fn option_and_result_tags_other_than_0_or_1_are_unknown_variants() {
        assert_eq!(
            Option::<u8>::decode_exact(&[2, 0]),
            Err(DecodeError::UnknownVariant {
                offset: 0,
                type_name: "Option",
                tag: 2
            })
        );
        assert_eq!(
            <(u8, Result<u8, u8>)>::decode_exact(&[9, 7, 0]),
            Err(DecodeError::UnknownVariant {
                offset: 1,
                type_name: "Result",
                tag: 7
            })
        );
    }

    #[test]
    fn a_short_array_or_tuple_is_truncated() {
        assert!(matches!(
            <[u16; 3]>::decode_exact(&[1, 0, 2, 0]),
            Err(DecodeError::Truncated { offset: 4, .. })
        ));
        assert!(matches!(
            <(u8, u32)>::decode_exact(&[1, 2]),
            Err(DecodeError::Truncated { offset: 1, .. })
        ));
    }
}
