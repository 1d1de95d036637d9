//! The schemas of one kind: its `--format json` document and the bundle record that holds it,
//! generated from the body type. Imports nothing above the record envelope, so record kinds
//! (and kinds outside the registry) can name their schemas.

use crate::record::Record;
use kernelab_model::{Body, Document, SCHEMA_VERSION};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{json, Value};

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
