//! metalsim's terminal UI: explore a trace file (`metalsim_traces::Trace`) from the whole
//! run down to one source line, one instruction and one SIMD-group's lanes.
//!
//! The views: **Overview** (a dashboard with sparklines), **Timeline** (charts over the
//! time bins with a cursor and zoom, a core × time heat map), **Source** (per-line cost
//! gutters, sorting by cost, jumping to a line's ISA), **ISA** (per-instruction counts and
//! stalls by basic block, reconvergence points marked) and **Teaching** (one recorded
//! SIMD-group stepped through its instructions).
//!
//! The shape is The Elm Architecture: [`App`] holds the state, [`keymap::message`] turns
//! terminal events into [`Msg`]s, [`update`] applies them, and [`ui::draw`] renders the
//! state into a frame without changing it, so every view is tested in ratatui's
//! `TestBackend`. [`run`] is the loop on a real terminal. Nothing here panics on odd data:
//! empty bins, zero cycles, missing sources and out-of-range lines draw as such.

mod app;
mod digest;
mod format;
pub mod keymap;
mod terminal;
mod theme;
pub mod ui;
mod view;

#[cfg(test)]
mod fixture;

pub use app::{App, HeatMetric, Msg, View, update};
pub use terminal::run;
