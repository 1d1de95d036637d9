//! One module per command.

pub mod ab;
pub mod ceilings;
pub mod check;
pub mod code;
pub mod compare;
pub mod completions;
pub mod counters;
pub mod export;
pub mod impact;
pub mod kernel;
pub mod mcp;
pub mod metrics;
pub mod profile;
pub mod record;
pub mod report;
pub mod roofline;
pub mod runs;
pub mod serve;
pub mod sweep;
