//! What a user reads of a run: counterexamples replayed through the real
//! cores ([`replay`]) and message sequence charts as text ([`chart`]) and SVG
//! ([`chart_svg`]).

pub mod chart;
pub mod chart_svg;
pub mod replay;
