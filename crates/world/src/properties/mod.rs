//! What is checked of a World beyond its own environment rules: the client
//! history's linearizability and sequential consistency ([`consistency`]),
//! and properties and ghost variables written in C ([`c_properties`],
//! [`c_ghosts`]). All read core internals
//! only through [`crate::system::inspect`].

pub mod c_ghosts;
pub mod c_properties;
pub mod consistency;
