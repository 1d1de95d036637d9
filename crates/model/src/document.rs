//! The one output envelope: every command's JSON document and every bundle record's result is a
//! [`Document`] — `schema_version`, `kind`, `kernelab_version`, then the command's own fields.

use serde::{Deserialize, Serialize};

/// Version of every JSON layout kernelab writes (documents and bundle records). Bumped when any
/// command's layout changes in a way that breaks readers; `docs/json.md` lists the changes.
pub const SCHEMA_VERSION: u32 = 11;

/// The kernelab version that writes documents.
pub const KERNELAB_VERSION: &str = env!("CARGO_PKG_VERSION");

/// A command's JSON document: the envelope fields followed by the body's own fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Document<T> {
    /// Layout version ([`SCHEMA_VERSION`] when written).
    pub schema_version: u32,
    /// What the document holds: `profile`, `compare`, `check_bitwise`, `kernel_run`, …
    pub kind: String,
    /// The kernelab version that wrote it.
    pub kernelab_version: String,
    /// The command's result.
    #[serde(flatten)]
    pub body: T,
}

/// A document body: the `kind` its documents carry comes from its type, so no caller names a
/// kind by a string.
pub trait Body {
    /// The kind name of this body's documents: `profile`, `check_bitwise`, `kernel_run`, …
    const KIND: &'static str;
}

impl<T: Body + ?Sized> Body for &T {
    const KIND: &'static str = T::KIND;
}

impl<T: Body> Document<T> {
    /// A document of `body`, of the kind its type names, written by this kernelab.
    pub fn of(body: T) -> Self {
        Document::new(T::KIND, body)
    }
}

impl<T> Document<T> {
    /// A document of `kind` written by this kernelab: for a kind known only at run time (a
    /// document read back); a body of known type takes [`Document::of`].
    pub fn new(kind: impl Into<String>, body: T) -> Self {
        Document {
            schema_version: SCHEMA_VERSION,
            kind: kind.into(),
            kernelab_version: KERNELAB_VERSION.to_string(),
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Body {
        pass: bool,
        n: u64,
    }

    impl super::Body for Body {
        const KIND: &'static str = "check_x";
    }

    #[test]
    fn a_body_names_its_kind() {
        let d = Document::of(&Body { pass: false, n: 1 });
        assert_eq!(d.kind, "check_x");
        assert_eq!(d.schema_version, SCHEMA_VERSION);
    }

    #[test]
    fn envelope_round_trips_with_flattened_body() {
        let d = Document::of(Body { pass: true, n: 7 });
        let text = serde_json::to_string(&d).expect("serializes");
        let head =
            format!(r#"{{"schema_version":{SCHEMA_VERSION},"kind":"check_x","kernelab_version":""#);
        assert!(text.starts_with(&head), "{text}");
        assert!(text.ends_with(r#","pass":true,"n":7}"#));
        let back: Document<Body> = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, d);
    }
}
