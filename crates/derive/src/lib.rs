//! `#[derive(Encode)]`: the canonical state encoding of `cmc_model::Encode`,
//! written from the type's own definition so that `decode` inverts `encode`
//! by construction.
//!
//! Use it through `cmc_model` (`use cmc_model::Encode; #[derive(Encode)]`).
//!
//! The encoding:
//! - a struct (named, tuple or unit) is its fields in declaration order, each
//!   in its own encoding, with nothing between them;
//! - an enum is one tag byte, the variant's position in the declaration
//!   (0 for the first variant, whatever its discriminant), then the variant's
//!   fields as for a struct; at most 256 variants. Decoding a tag that names
//!   no variant is `DecodeError::UnknownVariant`, never a panic;
//! - every type parameter gets an `Encode` bound;
//! - a field that holds `f32` or `f64` is refused, naming the field: a float
//!   has no canonical encoding (`NaN != NaN`, `0.0 == -0.0`).
//!
//! Encoding and decoding are generated from the same list of variants and
//! fields, so reordering variants or fields changes the bytes, never the
//! value a decoding gives back.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{parse_macro_input, parse_quote, Data, DeriveInput, Fields, Ident, LitStr};

/// Derives `cmc_model::Encode` for a struct or an enum (see the crate docs).
#[proc_macro_derive(Encode)]
pub fn derive_encode(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Most variants an enum may have: the tag is one byte.
const MAX_VARIANTS: usize = 256;

/// The `impl Encode` for `input`, or why there can be none.
fn expand(mut input: DeriveInput) -> syn::Result<TokenStream> {
    refuse_floats(&input)?;
    let (encode_body, decode_body) = match &input.data {
        Data::Struct(data) => (encode_struct(&data.fields), decode_struct(&data.fields)),
        Data::Enum(data) => {
            let variants: Vec<_> = data.variants.iter().collect();
            if variants.len() > MAX_VARIANTS {
                return Err(syn::Error::new_spanned(
                    &input.ident,
                    format!(
                        "#[derive(Encode)] supports at most {MAX_VARIANTS} variants (a one-byte tag); {} has {}",
                        input.ident,
                        variants.len()
                    ),
                ));
            }
            (encode_enum(&variants), decode_enum(&input.ident, &variants))
        }
        Data::Union(data) => {
            return Err(syn::Error::new_spanned(
                data.union_token,
                "#[derive(Encode)] cannot encode a union: which field holds the value is unknown",
            ))
        }
    };
    add_encode_bounds(&mut input);
    let name = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics ::cmc_model::Encode for #name #type_generics #where_clause {
            #[inline]
            fn encode(&self, out: &mut ::std::vec::Vec<u8>) {
                #encode_body
            }

            fn decode(
                decoder: &mut ::cmc_model::Decoder<'_>,
            ) -> ::core::result::Result<Self, ::cmc_model::DecodeError> {
                #decode_body
            }
        }
    })
}

/// Refuses a field whose type holds `f32` or `f64` (alone, or inside a
/// tuple, an array, a reference or a generic argument such as `Vec<f64>`),
/// naming the field: a float has no canonical encoding.
fn refuse_floats(input: &DeriveInput) -> syn::Result<()> {
    let name = &input.ident;
    // Each struct or variant, named as the message names it, with its fields.
    let owners: Vec<(String, &Fields)> = match &input.data {
        Data::Struct(data) => vec![(name.to_string(), &data.fields)],
        Data::Enum(data) => data
            .variants
            .iter()
            .map(|variant| (format!("{name}::{}", variant.ident), &variant.fields))
            .collect(),
        Data::Union(_) => Vec::new(),
    };
    for (owner, fields) in owners {
        for (index, field) in fields.iter().enumerate() {
            let Some(float) = float_in(&field.ty) else {
                continue;
            };
            let field_name = match &field.ident {
                Some(ident) => format!("field `{ident}`"),
                None => format!("field {index}"),
            };
            return Err(syn::Error::new_spanned(
                &field.ty,
                format!(
                    "#[derive(Encode)]: {field_name} of `{owner}` holds `{float}`, which has no canonical encoding \
                     (a state's bytes are its identity, but `NaN != NaN` with equal bits and \
                     `0.0 == -0.0` with different ones); store an integer instead (a count of \
                     cents or milliseconds) or an ordered type of your own that implements `Encode`"
                ),
            ));
        }
    }
    Ok(())
}

/// The first floating point type (`f32` or `f64`) that `ty` holds, if any.
fn float_in(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(path) => path.path.segments.iter().find_map(|segment| {
            if path.qself.is_none() && (segment.ident == "f32" || segment.ident == "f64") {
                return Some(segment.ident.to_string());
            }
            match &segment.arguments {
                syn::PathArguments::AngleBracketed(arguments) => {
                    arguments.args.iter().find_map(|argument| match argument {
                        syn::GenericArgument::Type(ty) => float_in(ty),
                        _ => None,
                    })
                }
                _ => None,
            }
        }),
        syn::Type::Array(array) => float_in(&array.elem),
        syn::Type::Slice(slice) => float_in(&slice.elem),
        syn::Type::Reference(reference) => float_in(&reference.elem),
        syn::Type::Paren(paren) => float_in(&paren.elem),
        syn::Type::Group(group) => float_in(&group.elem),
        syn::Type::Tuple(tuple) => tuple.elems.iter().find_map(float_in),
        _ => None,
    }
}

/// Adds `T: Encode` to the where clause for every type parameter `T`.
fn add_encode_bounds(input: &mut DeriveInput) {
    let parameters: Vec<Ident> = input
        .generics
        .type_params()
        .map(|param| param.ident.clone())
        .collect();
    let where_clause = input.generics.make_where_clause();
    for parameter in parameters {
        where_clause
            .predicates
            .push(parse_quote!(#parameter: ::cmc_model::Encode));
    }
}

/// Names for the fields of one struct or variant when bound by a pattern:
/// `field_0`, `field_1`, … (never a user's name, so never shadowing `out`).
fn bindings(fields: &Fields) -> Vec<Ident> {
    (0..fields.len())
        .map(|index| format_ident!("field_{}", index, span = Span::mixed_site()))
        .collect()
}

/// A pattern (`{ a: field_0, .. }`, `(field_0, ..)` or nothing) binding
/// every field of `fields` to [`bindings`].
fn binding_pattern(fields: &Fields) -> TokenStream {
    let names = bindings(fields);
    match fields {
        Fields::Named(named) => {
            let members = named.named.iter().map(|field| &field.ident);
            quote!({ #(#members: #names),* })
        }
        Fields::Unnamed(_) => quote!((#(#names),*)),
        Fields::Unit => TokenStream::new(),
    }
}

/// An expression building `constructor` from fields decoded in declaration
/// order (struct expressions evaluate their fields in the order written).
fn decode_fields(constructor: TokenStream, fields: &Fields) -> TokenStream {
    let decode_one = quote!(::cmc_model::Encode::decode(decoder)?);
    match fields {
        Fields::Named(named) => {
            let members = named.named.iter().map(|field| &field.ident);
            quote!(#constructor { #(#members: #decode_one),* })
        }
        Fields::Unnamed(unnamed) => {
            let each = unnamed.unnamed.iter().map(|_| &decode_one);
            quote!(#constructor(#(#each),*))
        }
        Fields::Unit => constructor,
    }
}

/// Encodes every field of a struct, in declaration order.
fn encode_struct(fields: &Fields) -> TokenStream {
    let pattern = binding_pattern(fields);
    let names = bindings(fields);
    quote! {
        let Self #pattern = self;
        #(::cmc_model::Encode::encode(#names, out);)*
    }
}

/// Decodes every field of a struct, in declaration order.
fn decode_struct(fields: &Fields) -> TokenStream {
    let value = decode_fields(quote!(Self), fields);
    quote!(::core::result::Result::Ok(#value))
}

/// Encodes the variant's tag byte, then its fields.
fn encode_enum(variants: &[&syn::Variant]) -> TokenStream {
    if variants.is_empty() {
        return quote!(match *self {});
    }
    let arms = variants.iter().enumerate().map(|(tag, variant)| {
        let tag = u8::try_from(tag).expect("variant count checked against MAX_VARIANTS");
        let name = &variant.ident;
        let pattern = binding_pattern(&variant.fields);
        let names = bindings(&variant.fields);
        quote! {
            Self::#name #pattern => {
                out.push(#tag);
                #(::cmc_model::Encode::encode(#names, out);)*
            }
        }
    });
    quote!(match self { #(#arms)* })
}

/// Reads the tag byte and decodes the variant it names; an unknown tag is
/// `DecodeError::UnknownVariant` at the tag's offset.
fn decode_enum(type_name: &Ident, variants: &[&syn::Variant]) -> TokenStream {
    let type_name = LitStr::new(&type_name.to_string(), type_name.span());
    let arms = variants.iter().enumerate().map(|(tag, variant)| {
        let tag = u8::try_from(tag).expect("variant count checked against MAX_VARIANTS");
        let name = &variant.ident;
        let value = decode_fields(quote!(Self::#name), &variant.fields);
        quote!(#tag => ::core::result::Result::Ok(#value),)
    });
    quote! {
        let offset = decoder.offset();
        match <u8 as ::cmc_model::Encode>::decode(decoder)? {
            #(#arms)*
            tag => ::core::result::Result::Err(::cmc_model::DecodeError::UnknownVariant {
                offset,
                type_name: #type_name,
                tag,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(input: DeriveInput) -> String {
        expand(input)
            .expect_err("the derive must refuse this input")
            .to_string()
    }

    #[test]
    fn a_float_field_is_refused_naming_the_field_and_the_type() {
        let error = error_of(parse_quote!(
            struct Account {
                owner: u8,
                balance: f64,
            }
        ));
        assert!(
            error.contains(
                "field `balance` of `Account` holds `f64`, which has no canonical encoding"
            ),
            "{error}"
        );
        assert!(error.contains("store an integer instead"), "{error}");
    }

    #[test]
    fn a_float_inside_another_type_or_a_variant_is_refused() {
        let error = error_of(parse_quote!(
            enum Reading {
                None(u8),
                Samples(u8, Vec<(u8, [core::primitive::f32; 2])>),
            }
        ));
        assert!(
            error.contains("field 1 of `Reading::Samples` holds `f32`"),
            "{error}"
        );
        let error = error_of(parse_quote!(
            struct Prices(std::collections::BTreeMap<u8, f64>);
        ));
        assert!(error.contains("field 0 of `Prices` holds `f64`"), "{error}");
    }

    #[test]
    fn integer_fields_in_place_of_floats_are_accepted() {
        assert!(expand(parse_quote!(
            struct Fixed {
                cents: i64,
                parts: Vec<u32>,
            }
        ))
        .is_ok());
    }

    #[test]
    fn a_union_is_refused() {
        let message = error_of(parse_quote!(
            union Bits {
                word: u32,
                bytes: [u8; 4],
            }
        ));
        assert!(message.contains("cannot encode a union"), "{message}");
    }

    #[test]
    fn an_enum_with_more_variants_than_a_tag_byte_is_refused() {
        let variants = (0..=MAX_VARIANTS).map(|index| format_ident!("V{index}"));
        let message = error_of(parse_quote!(enum Wide { #(#variants),* }));
        assert!(
            message.contains("at most 256 variants") && message.contains("Wide has 257"),
            "{message}"
        );
    }

    #[test]
    fn an_enum_with_exactly_256_variants_is_accepted() {
        let variants = (0..MAX_VARIANTS).map(|index| format_ident!("V{index}"));
        assert!(expand(parse_quote!(enum Full { #(#variants),* })).is_ok());
    }

    #[test]
    fn every_type_parameter_gets_an_encode_bound_and_existing_bounds_stay() {
        let mut input: DeriveInput = parse_quote!(
            struct Pair<'a, A: Clone, B, const N: usize>
            where
                B: Copy,
            {
                a: A,
                b: [B; N],
                r: &'a (),
            }
        );
        add_encode_bounds(&mut input);
        let where_clause = input.generics.where_clause.expect("a where clause");
        let predicates: Vec<String> = where_clause
            .predicates
            .iter()
            .map(|predicate| quote!(#predicate).to_string())
            .collect();
        assert_eq!(
            predicates,
            [
                "B : Copy",
                "A : :: cmc_model :: Encode",
                "B : :: cmc_model :: Encode"
            ]
        );
    }
}
