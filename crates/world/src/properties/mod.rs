//! What is checked of a World beyond its own environment rules: the client
//! history's linearizability and sequential consistency ([`consistency`]),
//! and properties written in C ([`c_properties`]). Both read core internals
//! only through [`crate::system::inspect`].

pub mod c_properties;
pub mod consistency;
