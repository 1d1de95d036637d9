//! One module per command.

pub mod metrics;
pub mod profile;
