//! The documents the server returns: the schema of every kind (the CLI's, and the two the
//! server wraps: `runs` and `export`), and the headline a person would read of each.

use kernelab_model::{Body, Document};
use kernelab_report::kinds::{Ctx, Evidence, Extra};
use kernelab_report::schema::{kind_schemas, KindSchemas};
use kernelab_runner::run::RunSummary;
use serde::Serialize;
use serde_json::Value;

/// `runs` as the server returns it (`kind: "runs"`): the CLI's `runs --format json` array.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct RunsBody {
    /// The runs, oldest first.
    pub runs: Vec<RunSummary>,
}

impl Body for RunsBody {
    const KIND: &'static str = "runs";
}

/// `runs` as the CLI's JSON array gives it, passed through as read.
#[derive(Serialize)]
struct RunsRead {
    runs: Vec<Value>,
}

impl Body for RunsRead {
    const KIND: &'static str = RunsBody::KIND;
}

/// One Parquet file `export` wrote.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Exported {
    /// The file, as the CLI names it.
    pub path: String,
    /// Rows in it.
    pub rows: u64,
}

/// `export` as the server returns it (`kind: "export"`): the files the CLI's lines name.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ExportBody {
    /// The files written.
    pub written: Vec<Exported>,
}

impl Body for ExportBody {
    const KIND: &'static str = "export";
}

/// Every kind's schemas: the CLI's documents and records, then `runs` and `export`.
pub fn all_schemas() -> Vec<KindSchemas> {
    let mut all = kernelab_report::schema::all();
    all.push(kind_schemas::<RunsBody>());
    all.push(kind_schemas::<ExportBody>());
    all
}

/// The `runs` document of the CLI's JSON array.
pub fn runs_document(stdout: &[u8]) -> Result<Value, String> {
    let runs: Vec<Value> =
        serde_json::from_slice(stdout).map_err(|e| format!("kernelab runs: {e}"))?;
    let doc = Document::of(RunsRead { runs });
    serde_json::to_value(doc).map_err(|e| e.to_string())
}

/// The `export` document of the CLI's lines (`PATH<TAB>N rows`).
pub fn export_document(stdout: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(stdout);
    let mut written = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let (path, rows) = line
            .rsplit_once('\t')
            .ok_or_else(|| format!("kernelab export: unexpected line {line:?}"))?;
        let rows = rows
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| format!("kernelab export: unexpected row count in {line:?}"))?;
        written.push(Exported {
            path: path.to_string(),
            rows,
        });
    }
    serde_json::to_value(Document::of(ExportBody { written })).map_err(|e| e.to_string())
}

/// The one line a person would read of a document: the report's headline of its kind.
pub fn headline(doc: &Value) -> String {
    headline_in(&[], doc)
}

/// [`headline`], reading documents of the kinds of `extra` too.
pub fn headline_in(extra: &[Extra], doc: &Value) -> String {
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("?");
    let count = |key: &str| doc.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    match kind {
        "kernel_dry_run" => "both builds resolved (no GPU opened)".into(),
        "report" => format!("{} records", count("records")),
        "report_check" => format!(
            "{} of {} numbers disagree with the bundle",
            count("mismatches"),
            doc.get("checked").and_then(Value::as_u64).unwrap_or(0)
        ),
        "runs" => format!("{} runs", count("runs")),
        "export" => format!("{} Parquet files written", count("written")),
        _ => match Evidence::read_in(extra, kind, doc) {
            Some(Ok(e)) => {
                let k = e.kind();
                let ctx = Ctx {
                    label: "",
                    marked: &[],
                };
                match k.places().first() {
                    Some(p) => k.render(*p, &ctx).headline,
                    None => k.summary(&ctx).verdict,
                }
            }
            Some(Err(e)) => format!("{kind} (not read back: {e})"),
            None => kind.to_string(),
        },
    }
}
