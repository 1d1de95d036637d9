//! `kernelab serve`: request-level A/B of two inference servers, each started fresh per round.

pub mod analysis;
pub mod check;
pub mod client;
pub mod error;
pub mod figures;
pub mod looks;
pub mod point;
pub mod ports;
pub mod range;
pub mod rounds;
pub mod samples;
pub mod scripted;
pub mod server;
pub mod server_metrics;
pub mod spec;
pub mod state;
pub mod telemetry;
pub mod trace;
pub mod wire;
pub mod workload;

pub use error::{Error, Result};
