//! `#[derive(Encode)]` on every shape it supports: round trips, the exact
//! layout, generics, and decoding errors for bytes no value encodes to.

use std::collections::BTreeMap;
use std::fmt::Debug;

use cmc_model::{DecodeError, Encode};

fn round_trip<T: Encode + PartialEq + Debug>(value: &T) {
    let bytes = value.to_bytes();
    assert_eq!(&T::decode_exact(&bytes).unwrap(), value, "bytes {bytes:?}");
}

#[derive(Encode, Debug, PartialEq)]
struct Named {
    small: u8,
    big: u16,
    on: bool,
}

#[derive(Encode, Debug, PartialEq)]
struct Tuple(u8, i16);

#[derive(Encode, Debug, PartialEq)]
struct Unit;

#[derive(Encode, Debug, PartialEq)]
struct EmptyBraces {}

#[derive(Encode, Debug, PartialEq)]
enum Message {
    Ping,
    Prepare { ballot: u16, from: u8 },
    Accept(u16, Option<u8>),
    Nested(Named),
}

#[test]
fn structs_are_their_fields_in_declaration_order() {
    let named = Named {
        small: 3,
        big: 0x0504,
        on: true,
    };
    assert_eq!(named.to_bytes(), [3, 4, 5, 1]);
    round_trip(&named);
    assert_eq!(Tuple(7, -1).to_bytes(), [7, 0xff, 0xff]);
    round_trip(&Tuple(7, -1));
    assert_eq!(Unit.to_bytes(), [0u8; 0]);
    round_trip(&Unit);
    round_trip(&EmptyBraces {});
}

#[test]
fn enums_are_a_tag_byte_then_the_variants_fields() {
    let cases = [
        (Message::Ping, vec![0]),
        (Message::Prepare { ballot: 2, from: 1 }, vec![1, 2, 0, 1]),
        (Message::Accept(0x0102, Some(9)), vec![2, 2, 1, 1, 9]),
        (
            Message::Nested(Named {
                small: 1,
                big: 2,
                on: false,
            }),
            vec![3, 1, 2, 0, 0],
        ),
    ];
    for (message, bytes) in cases {
        assert_eq!(message.to_bytes(), bytes, "{message:?}");
        round_trip(&message);
    }
}

/// The same variants declared in two orders, as two versions of a program
/// might: each type decodes every variant to itself. (`encode_enum!`, which
/// this derive replaces, encoded by discriminant but decoded by the position
/// in a separately written list, so a list in another order decoded
/// `Working` as whatever variant came first in the list.)
mod declared_in_order {
    #[derive(cmc_model::Encode, Clone, Copy, Debug, PartialEq)]
    pub enum Phase {
        Working,
        Prepared,
        Committed,
    }
}

mod declared_reordered {
    #[derive(cmc_model::Encode, Clone, Copy, Debug, PartialEq)]
    pub enum Phase {
        Committed,
        Working,
        Prepared,
    }
}

/// Explicit discriminants out of declaration order do not matter either:
/// the tag is the declaration position.
#[derive(Encode, Clone, Copy, Debug, PartialEq)]
enum Shuffled {
    Two = 2,
    Zero = 0,
    One = 1,
}

#[test]
fn reordering_variants_changes_tags_never_the_decoded_value() {
    use declared_in_order::Phase as InOrder;
    use declared_reordered::Phase as Reordered;
    for phase in [InOrder::Working, InOrder::Prepared, InOrder::Committed] {
        round_trip(&phase);
    }
    for phase in [
        Reordered::Working,
        Reordered::Prepared,
        Reordered::Committed,
    ] {
        round_trip(&phase);
    }
    assert_eq!(InOrder::Working.to_bytes(), [0]);
    assert_eq!(Reordered::Working.to_bytes(), [1]);
    for (value, tag) in [
        (Shuffled::Two, 0u8),
        (Shuffled::Zero, 1),
        (Shuffled::One, 2),
    ] {
        assert_eq!(value.to_bytes(), [tag]);
        round_trip(&value);
    }
}

#[test]
fn a_tag_beyond_the_last_variant_is_an_unknown_variant_error() {
    assert_eq!(
        Message::decode_exact(&[4]),
        Err(DecodeError::UnknownVariant {
            offset: 0,
            type_name: "Message",
            tag: 4
        })
    );
    assert_eq!(
        <declared_in_order::Phase>::decode_exact(&[3]),
        Err(DecodeError::UnknownVariant {
            offset: 0,
            type_name: "Phase",
            tag: 3
        })
    );
    // Inside a struct, the offset is the tag's.
    assert_eq!(
        <(u8, Message)>::decode_exact(&[0, 255]),
        Err(DecodeError::UnknownVariant {
            offset: 1,
            type_name: "Message",
            tag: 255
        })
    );
    let message = DecodeError::UnknownVariant {
        offset: 1,
        type_name: "Message",
        tag: 255,
    }
    .to_string();
    assert!(
        message.contains("Message has no variant number 255"),
        "{message}"
    );
}

#[test]
fn bad_field_bytes_inside_a_derived_value_are_errors() {
    // Prepare's ballot cut short.
    assert!(matches!(
        Message::decode_exact(&[1, 2]),
        Err(DecodeError::Truncated { offset: 1, .. })
    ));
    // Named.on is a bool byte 2.
    assert!(matches!(
        Named::decode_exact(&[3, 4, 5, 2]),
        Err(DecodeError::Invalid { offset: 3, .. })
    ));
    // Accept's Option tag is 2.
    assert!(matches!(
        Message::decode_exact(&[2, 0, 0, 2, 0]),
        Err(DecodeError::UnknownVariant {
            offset: 3,
            type_name: "Option",
            tag: 2
        })
    ));
    assert!(matches!(
        Tuple::decode_exact(&[1, 2, 3, 4]),
        Err(DecodeError::Trailing { extra: 1 })
    ));
}

#[derive(Encode, Debug, PartialEq)]
enum Empty {}

#[test]
fn an_enum_without_variants_decodes_nothing() {
    assert_eq!(
        Empty::decode_exact(&[0]),
        Err(DecodeError::UnknownVariant {
            offset: 0,
            type_name: "Empty",
            tag: 0
        })
    );
}

#[derive(Encode, Debug, PartialEq)]
struct Pair<A, B> {
    first: A,
    second: B,
}

#[derive(Encode, Debug, PartialEq)]
enum Tree<T: Ord>
where
    T: Clone,
{
    Leaf,
    Node(Box<Tree<T>>, T, Box<Tree<T>>),
}

#[derive(Encode, Debug, PartialEq)]
struct Window<T, const N: usize>([T; N]);

#[test]
fn generic_types_encode_through_their_parameters() {
    round_trip(&Pair {
        first: 'a',
        second: vec![1u8, 2],
    });
    assert_eq!(
        Pair {
            first: 1u8,
            second: 2u16
        }
        .to_bytes(),
        [1, 2, 0]
    );
    let tree = Tree::Node(
        Box::new(Tree::Node(Box::new(Tree::Leaf), 1u8, Box::new(Tree::Leaf))),
        2,
        Box::new(Tree::Leaf),
    );
    assert_eq!(tree.to_bytes(), [1, 1, 0, 1, 0, 2, 0]);
    round_trip(&tree);
    round_trip(&Window([Some(1u32), None, Some(3)]));
    round_trip(&Pair {
        first: Window::<bool, 0>([]),
        second: BTreeMap::from([(1u8, Unit)]),
    });
}

/// Fields and variants named like the locals a derive might generate.
#[derive(Encode, Debug, PartialEq)]
struct Shadowing {
    out: u8,
    decoder: u8,
    offset: u8,
    tag: u8,
    field_0: u8,
}

#[derive(Encode, Debug, PartialEq)]
enum ShadowingVariants {
    Out { out: u8, field_1: u8, field_0: u16 },
    Decoder(u8),
}

#[test]
fn field_names_cannot_capture_the_generated_code() {
    let value = Shadowing {
        out: 1,
        decoder: 2,
        offset: 3,
        tag: 4,
        field_0: 5,
    };
    assert_eq!(value.to_bytes(), [1, 2, 3, 4, 5]);
    round_trip(&value);
    let variant = ShadowingVariants::Out {
        out: 1,
        field_1: 2,
        field_0: 3,
    };
    assert_eq!(variant.to_bytes(), [0, 1, 2, 3, 0]);
    round_trip(&variant);
    round_trip(&ShadowingVariants::Decoder(9));
}
