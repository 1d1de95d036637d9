//! One module per command.

pub mod compare;
pub mod metrics;
pub mod profile;
