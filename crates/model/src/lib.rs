//! The shared vocabulary of kernelab: kernel dispatches, profiles, families, units and the
//! locations that errors point at. Every other kernelab crate speaks these types; this crate
//! knows nothing of any file format or of the command line.
//!
//! ```
//! use kernelab_model::{family_key, Nanos, Timestamp};
//! assert_eq!(family_key("void at::native::vectorized_elementwise_kernel<4, Add>(int, Add)"),
//!            "at::native::vectorized_elementwise_kernel");
//! let start = Timestamp::from_ns(1_000);
//! assert_eq!(Timestamp::from_ns(1_500).since(start), Some(Nanos::from_ns(500)));
//! ```
#![deny(missing_docs)]
// Lints for libraries (issue #40, as uv has them): a library returns what it has to say,
// names no `pub` item its users cannot reach, documents every `unsafe` and panics on no `expect`.

pub mod ab;
pub mod counters;
mod digest;
mod dispatch;
mod document;
pub mod exact;
pub mod expr;
mod facts;
mod family;
pub mod fingerprint;
pub mod float;
mod fsio;
mod intern;
pub mod kernel_run;
mod limits;
mod location;
mod metrics;
pub mod plausible;
mod profile;
mod provenance;
mod quote;
pub mod roofline;
pub mod serve;
mod store;
pub mod sweep;
mod units;

pub use digest::{sha256_hex, sha256_reader};
pub use dispatch::{
    ActivityAggregate, ActivityKind, Annotation, AnnotationScope, DispatchGraphNode, FlopWidth,
    GraphCapture, GraphLaunch, GraphNodeCreation, HostOp, HostWork, KernelAggregate,
    KernelDispatch, KernelLaunchCall, Launch, LaunchConfig, OpShape, RecordedWork, Resources,
    Transfer, TransferKind, WorkLink, WorkOf,
};
pub use document::{Body, Document, KERNELAB_VERSION, SCHEMA_VERSION};
pub use facts::{fact_key, typed_facts, FactValue};
pub use family::{
    demangle_symbol, family_key, normalize_kernel_name, FamilyRule, FamilyRules, Grouping,
    RuleError,
};
pub use fsio::{
    confine_to, confined, create_dir_all, cut_torn_tail, is_dir, is_file, is_not_regular, list_dir,
    lstat, may_run, open_append_regular, open_regular, read_link, read_regular, read_regular_text,
    write_file, Entry, NewFile, NotRegularFile, Stat, TempDir, ALLOW_RUN_ENV, CONFINE_ENV,
};
/// The one change convention (docs/json.md, "Ratios and changes"): candidate / baseline.
pub use kernelab_stats::{Change, Direction, Interval, Verdict};
pub use limits::{read_capped, CappedReadError, DEFAULT_MAX_DECOMPRESSED};
pub use location::Location;

/// `one` when `n` is 1, else `many`: the noun of a count ("1 kernel", "2 kernels").
pub fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}
pub use intern::{Interner, NameId};
pub use metrics::{normalize_unit, LaunchMetrics, Metric, MetricValue};
pub use profile::{Profile, SourceInfo};
pub use provenance::{GitState, InputFile, Provenance};
pub use quote::quote_bytes;
pub use store::{Context, Dispatches, Iter as DispatchIter};
pub use units::{
    duration_clamped, parse_scaled_decimal, parse_scaled_decimal_wide, seconds_to_ns, Nanos,
    Timestamp, MAX_DURATION_S,
};

/// An error and its causes in one line, `a: b: c` (as `anyhow` prints them with `{:#}`).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        next = cause.source();
    }
    out
}
