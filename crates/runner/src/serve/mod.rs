//! `kernelab serve`: request-level A/B of two inference servers, each started fresh per round.

pub mod error;

pub mod spec;

pub use error::{Error, Result};
