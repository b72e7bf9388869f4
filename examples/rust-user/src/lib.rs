//! A user's own models and cores for cmc, as a team would write them:
//!
//! - [`ring`]: a Rust model (a token ring) with an invariant and a planted bug;
//! - [`wal`]: a Rust core (a write-ahead log that replies once a request is
//!   durable) with a property and two planted bugs.
//!
//! `src/main.rs` registers both in the team's own front end, `mycheck`, which
//! has every command of `cmc`. This library is also built as a shared
//! library exporting the correct [`wal::Wal`] core through the C ABI, so the
//! same core loads with `cmc check --core ./librust_user.so` (or `mycheck`,
//! which also checks the core's properties there).

pub mod ring;
pub mod wal;

cmc_world::export_core!(wal::Wal);
