//! `kernelab serve`: request-level A/B of two inference servers, each started fresh per round.

pub mod client;
pub mod error;
pub mod scripted;
pub mod server;

pub mod spec;

pub use error::{Error, Result};
