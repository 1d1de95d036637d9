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

mod ab;
pub mod audit;
pub mod bundle;
mod check;
mod code;
mod compare;
mod counters;
pub mod documents;
mod error;
mod evidence;
pub mod format;
mod graphs;
pub mod impact;
mod kernel;
pub mod kinds;
mod metrics;
mod profile;
pub mod render;
mod roofline;
pub mod schema;
mod serve;
mod svg;
mod sweep;
mod table;
pub mod upgrade;

pub use ab::{ab_sections, analysis_lines};
pub use check::{bitwise_tables, close_tables, finite_tables, repeat_tables};
pub use code::{change, code_diff_tables, code_matrix_tables, code_show_tables};
pub use compare::{compare_csv, compare_tables};
pub use counters::{counters_csv, counters_tables};
pub use error::{Error, Result};
pub use evidence::{evidence, Block, Headline, Part, Report, State, Status, Verdicts};
pub use graphs::{graph_sections, rank_sections};
pub use kernel::{kernel_plan_sections, kernel_sections};
pub use metrics::{metric_columns, metrics_csv, metrics_tables, DEFAULT_METRICS};
pub use profile::{input_docs, profile_csv, profile_document, profile_tables, CsvRow, InputDoc};
pub use render::{
    csv_rows, evidence_html, evidence_markdown, pr_body, render, OutputFormat, GITHUB_BODY_LIMIT,
};
pub use roofline::{
    ceiling_value, ceilings_sections, figure, roofline_csv, roofline_sections, roofline_svg,
};
pub use serve::{identity_line, serve_csv_rows, serve_sections, ServeCsvRow};
pub use sweep::{sweep_matrix_sections, verdict_text};
pub use table::{Align, Column, Table};
