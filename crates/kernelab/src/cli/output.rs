//! `--format`, `--out` and `--force`: where and how every command writes its result.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// Tables for the terminal.
    Table,
    /// Markdown, to paste into a pull request.
    Md,
    /// JSON (schema in docs/json.md).
    Json,
    /// CSV, one row per kernel row.
    Csv,
}

/// The `--format` values of a command whose result has no CSV form (table, md, json), so
/// that `--help` lists what works and clap refuses `csv`: put
/// `#[command(mut_arg("format", text_formats))]` on its arguments.
pub(crate) fn text_formats(a: clap::Arg) -> clap::Arg {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    let values = FormatArg::value_variants()
        .iter()
        .filter(|v| **v != FormatArg::Csv)
        .filter_map(ValueEnum::to_possible_value);
    a.value_parser(
        PossibleValuesParser::new(values)
            .map(|s| FormatArg::from_str(&s, true).unwrap_or(FormatArg::Table)),
    )
}

/// Where and how to write the result.
#[derive(Args, Debug)]
pub(crate) struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// Write to FILE instead of standard output (refuses to replace an existing file).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Replace the files this command writes (--out, --svg) if they exist; without it an
    /// existing file is never replaced.
    #[arg(long)]
    pub force: bool,
    /// In a terminal, draw every table whole, every column and every name (lines may be wider
    /// than the terminal). Without it, tables are fitted to the terminal's width: columns give
    /// way and long names are cut, and a line under the table says which. A pipe or --out
    /// always gets whole tables.
    #[arg(long)]
    pub wide: bool,
}
