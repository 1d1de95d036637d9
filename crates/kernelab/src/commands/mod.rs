//! One module per command.

pub mod profile;
