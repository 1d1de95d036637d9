//! JSON Schemas (draft 2020-12) of every document and bundle record kind, generated from the
//! types that write them (`schemars`, serialization contract: what kernelab writes). The
//! published copies live in `docs/schema/v<SCHEMA_VERSION>/` (docs/json.md, "Schemas"); a test
//! regenerates them and fails when they differ or when they changed without a version change.

use crate::audit::Audit;
use crate::documents::PlanBody;
use crate::evidence::Headline;
use crate::kinds::impact::Impact;
use schemars::Schema;
use serde::Serialize;

pub use crate::kind_schema::{kind_schemas, KindSchemas, ID_BASE};

/// `kernelab report DIR --format json` (`kind: "report"`): one headline per record.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ReportSummary {
    /// Title of the report.
    pub title: String,
    /// One line per record.
    pub records: Vec<Headline>,
    /// The request impacts the bundle's profiles and kernel runs give.
    pub impacts: Vec<Impact>,
}

impl kernelab_model::Body for ReportSummary {
    const KIND: &'static str = "report";
}

/// Every kind's schemas, by kind name: the record kinds of the registry, then the documents
/// that are not records (`kernel_dry_run`, `report`, `report_check`).
pub fn all() -> Vec<KindSchemas> {
    let mut out = crate::kinds::Evidence::schemas();
    out.push(kind_schemas::<PlanBody>());
    out.push(kind_schemas::<ReportSummary>());
    out.push(kind_schemas::<Audit>());
    out
}

/// The schema of the document kind `kind`, when kernelab writes one.
pub fn document(kind: &str) -> Option<Schema> {
    all()
        .into_iter()
        .find(|k| k.kind == kind)
        .map(|k| k.document)
}
