//! The published JSON Schemas (docs/schema/v<SCHEMA_VERSION>/) are the ones the types generate,
//! and a schema change without a version change fails: docs/schema/versions.json keeps one hash
//! per published version, which is never rewritten. `KERNELAB_WRITE_SCHEMAS=1 cargo test -p
//! kernelab-mcp --test schemas` writes the files of a new version (and refuses to change a
//! published one's).
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_model::SCHEMA_VERSION;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/schema")
}

/// Every file of the current version: name → pretty JSON with a final newline.
fn generated() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for k in kernelab_mcp::docs::all_schemas() {
        for (what, s) in [("document", &k.document), ("record", &k.record)] {
            let text = serde_json::to_string_pretty(s).expect("serializes") + "\n";
            out.insert(format!("{}.{what}.json", k.kind), text);
        }
    }
    out
}

fn hash(files: &BTreeMap<String, String>) -> String {
    let mut h = Sha256::new();
    for (name, text) in files {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn versions() -> BTreeMap<String, String> {
    let p = schema_dir().join("versions.json");
    match std::fs::read_to_string(&p) {
        Ok(t) => serde_json::from_str(&t).expect("versions.json is a JSON object"),
        Err(_) => BTreeMap::new(),
    }
}

#[test]
fn published_schemas_are_generated_from_the_types_and_versioned() {
    let files = generated();
    let h = hash(&files);
    let mut versions = versions();
    let v = SCHEMA_VERSION.to_string();
    let dir = schema_dir().join(format!("v{SCHEMA_VERSION}"));
    if std::env::var_os("KERNELAB_WRITE_SCHEMAS").is_some() {
        if let Some(published) = versions.get(&v) {
            assert_eq!(
                published, &h,
                "schema version {v} is published with hash {published}; the types now give \
                 {h}: raise SCHEMA_VERSION (crates/model/src/document.rs) and list the change \
                 in docs/json.md instead of rewriting a published version"
            );
        }
        std::fs::create_dir_all(&dir).expect("schema folder");
        for (name, text) in &files {
            std::fs::write(dir.join(name), text).expect("write schema");
        }
        versions.insert(v.clone(), h.clone());
        let text = serde_json::to_string_pretty(&versions).expect("versions") + "\n";
        std::fs::write(schema_dir().join("versions.json"), text).expect("write versions");
    }
    let published = versions.get(&v).unwrap_or_else(|| {
        panic!(
            "docs/schema/versions.json has no hash for schema version {v}: write the schemas \
             with KERNELAB_WRITE_SCHEMAS=1 cargo test -p kernelab-mcp --test schemas"
        )
    });
    assert_eq!(
        published, &h,
        "the document types changed the published schemas of version {v} (hash {published}, \
         now {h}) without a version change: raise SCHEMA_VERSION (crates/model/src/document.rs), \
         list the change in docs/json.md and write the new version's schemas with \
         KERNELAB_WRITE_SCHEMAS=1 cargo test -p kernelab-mcp --test schemas"
    );
    // The committed files are exactly the generated ones (none stale, none missing).
    let mut on_disk = BTreeMap::new();
    for e in std::fs::read_dir(&dir).expect("docs/schema/v<N> exists") {
        let p = e.expect("entry").path();
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        on_disk.insert(name, std::fs::read_to_string(&p).expect("read schema"));
    }
    let missing: Vec<&String> = files.keys().filter(|k| !on_disk.contains_key(*k)).collect();
    let stale: Vec<&String> = on_disk.keys().filter(|k| !files.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "missing {missing:?}, stale {stale:?}"
    );
    for (name, text) in &files {
        assert_eq!(
            &on_disk[name], text,
            "docs/schema/v{v}/{name} differs from the types"
        );
    }
}

#[test]
fn every_schema_compiles_and_pins_its_kind() {
    for k in kernelab_mcp::docs::all_schemas() {
        for (what, s) in [("document", &k.document), ("record", &k.record)] {
            let v = s.clone().to_value();
            jsonschema::draft202012::new(&v)
                .unwrap_or_else(|e| panic!("{} {what}: not a valid schema: {e}", k.kind));
            assert_eq!(
                v["properties"]["kind"]["const"], k.kind,
                "{} {what}",
                k.kind
            );
            assert_eq!(
                v["properties"]["schema_version"]["const"], SCHEMA_VERSION,
                "{} {what}",
                k.kind
            );
        }
        // A document of another kind is refused by this kind's schema.
        let other = serde_json::json!({"schema_version": SCHEMA_VERSION, "kind": "not-a-kind", "kernelab_version": "0"});
        let doc = k.document.clone().to_value();
        let validator = jsonschema::draft202012::new(&doc).expect("compiles");
        assert!(
            !validator.is_valid(&other),
            "{} accepts another kind",
            k.kind
        );
    }
}
