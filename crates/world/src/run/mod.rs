//! Calling core code in this process: one step with its determinism gate
//! ([`step`]), each step's buffers between canaries and guard pages
//! (private `guard_pages`), the flight recorder that says which core call a
//! dying process was in ([`recorder`]), and the supervised child's side of
//! its channel to the supervisor (`child`), and the guard for cores run
//! outside any supervisor (`exit_guard`). The last two are the plumbing of
//! cmc's own front end (`cmc-cli`, another crate, so they cannot be
//! `pub(crate)`), hidden from these pages; what a program of its own needs
//! of the child's side is re-exported by [`crate::supervise`].

#[doc(hidden)]
pub mod child;
#[doc(hidden)]
pub mod exit_guard;
pub(crate) mod guard_pages;
pub mod recorder;
pub mod step;
