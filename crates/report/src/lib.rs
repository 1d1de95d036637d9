//! Renderers for kernelab results: a table model drawn by the terminal, Markdown and CSV
//! renderers, and JSON documents with a `schema_version`. `format.rs` is the only place that
//! formats durations, shares and unavailable figures.
//!
//! ```
//! use kernelab_report::format::{duration_ns, share};
//! assert_eq!(duration_ns(1_221_134_000.0), "1,221.134 ms");
//! assert_eq!(share(0.0527), "5.27%");
//! ```
#![deny(missing_docs)]

pub mod audit;
pub mod bundle;
pub mod documents;
mod error;
mod evidence;
pub mod format;
mod kind_schema;
pub mod kinds;
mod record;
pub mod render;
pub mod schema;
pub mod sink;
mod svg;
mod table;
pub mod upgrade;
pub mod verify;

pub use error::{Error, Result};
pub use evidence::{evidence, Block, Headline, Part, Report, State, Status, Verdicts};
pub use kinds::ab::view::{aa_verdict, ab_sections, analysis_lines};
pub use kinds::check::view::{bitwise_tables, close_tables, finite_tables, repeat_tables};
pub use kinds::code::view::{change, code_diff_tables, code_matrix_tables, code_show_tables};
pub use kinds::compare::view::{compare_csv, compare_tables};
pub use kinds::counters::view::{counters_csv, counters_tables};
pub use kinds::impact;
pub use kinds::kernel_run::view::{kernel_plan_sections, kernel_sections};
pub use kinds::metrics::view::{metric_columns, metrics_csv, metrics_tables, DEFAULT_METRICS};
pub use kinds::profile::graphs::{graph_sections, rank_sections};
pub use kinds::profile::view::{
    input_docs, profile_csv, profile_document, profile_tables, CsvRow, InputDoc,
};
pub use kinds::roofline::view::{
    ceiling_value, ceilings_sections, figure, roofline_csv, roofline_sections, roofline_svg,
};
pub use kinds::serve::view::{identity_line, serve_csv_rows, serve_sections, ServeCsvRow};
pub use kinds::sweep::view::{sweep_matrix_sections, verdict_text};
pub use render::{
    csv_rows, evidence_html, evidence_markdown, pr_body, render, OutputFormat, GITHUB_BODY_LIMIT,
};
pub use table::{Align, Column, Table};
