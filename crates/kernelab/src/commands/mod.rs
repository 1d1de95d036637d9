//! One module per command.

pub(crate) mod ab;
pub(crate) mod ceilings;
pub(crate) mod check;
pub(crate) mod code;
pub(crate) mod compare;
pub(crate) mod completions;
pub(crate) mod counters;
pub(crate) mod export;
pub(crate) mod gate;
pub(crate) mod impact;
pub(crate) mod kernel;
pub(crate) mod mcp;
pub(crate) mod metrics;
pub(crate) mod profile;
pub(crate) mod record;
pub(crate) mod report;
pub(crate) mod roofline;
pub(crate) mod runs;
pub(crate) mod serve;
pub(crate) mod sweep;
