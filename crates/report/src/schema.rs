//! JSON Schemas (draft 2020-12) of every document and bundle record kind, generated from the
//! types that write them (`schemars`, serialization contract: what kernelab writes). The
//! published copies live in `docs/schema/v<SCHEMA_VERSION>/` (docs/json.md, "Schemas"); a test
//! regenerates them and fails when they differ or when they changed without a version change.

use crate::audit::Audit;
use crate::bundle::Record;
use crate::documents::PlanBody;
use crate::evidence::Headline;
use crate::kinds::impact::Impact;
use kernelab_model::{Body, Document, SCHEMA_VERSION};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde::Serialize;
use serde_json::{json, Value};

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

/// One kind's schemas: the `--format json` document and the bundle record that holds it.
#[derive(Clone, Debug)]
pub struct KindSchemas {
    /// The kind name (`profile`, `check_close`, …).
    pub kind: &'static str,
    /// The document: the envelope (`schema_version`, `kind`, `kernelab_version`) and the body.
    pub document: Schema,
    /// The bundle record: `schema_version`, `kind`, `label`, `provenance`, `result` (the body).
    pub record: Schema,
}

fn generator() -> schemars::SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
}

/// The `$id` base of the published schemas.
pub const ID_BASE: &str = "https://kernelab.invalid/schema";

/// Pins `schema_version` and `kind` of an envelope's properties and names the schema.
fn pin(schema: &mut Schema, kind: &str, what: &str) {
    let obj = schema.ensure_object();
    obj.insert(
        "$id".into(),
        json!(format!("{ID_BASE}/v{SCHEMA_VERSION}/{kind}.{what}.json")),
    );
    obj.insert(
        "title".into(),
        json!(format!(
            "kernelab {what} of kind {kind:?}, schema version {SCHEMA_VERSION}"
        )),
    );
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        props.insert("schema_version".into(), json!({"const": SCHEMA_VERSION}));
        props.insert("kind".into(), json!({"const": kind}));
    }
}

/// The schemas of the kind whose body is `T`.
pub fn kind_schemas<T: JsonSchema + Body>() -> KindSchemas {
    let kind = T::KIND;
    let mut document = generator().into_root_schema_for::<Document<T>>();
    pin(&mut document, kind, "document");
    let mut g = generator();
    let body = g.subschema_for::<T>();
    let mut record = g.into_root_schema_for::<Record>();
    if let Some(Value::Object(props)) = record.ensure_object().get_mut("properties") {
        props.insert("result".into(), body.to_value());
    }
    // The body's definitions live beside the record's own.
    let defs = generator().into_root_schema_for::<T>();
    if let Some(Value::Object(d)) = defs.as_object().and_then(|o| o.get("$defs")).cloned() {
        let obj = record.ensure_object();
        let entry = obj.entry("$defs").or_insert_with(|| json!({}));
        if let Value::Object(into) = entry {
            into.extend(d);
        }
    }
    pin(&mut record, kind, "record");
    KindSchemas {
        kind,
        document,
        record,
    }
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
