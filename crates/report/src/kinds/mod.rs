//! Record kinds: one file or folder per kind, each implementing [`RecordKind`] once (where it
//! goes in the report, its blocks and headline, its summary row, whether it passed, the figures
//! a note may quote, its CSV rows) beside its command view, and one registry ([`registry!`]
//! below) that names every kind by its body type. Adding a kind is one file, its `mod` line and
//! one line of the registry; a kind outside the registry is read through an [`Extra`].

mod kind;
pub(crate) use kind::{
    check_part, count, ends, gate_mark, gate_summary, pair, pass_word, plain, rendered,
    verdict_mark, within,
};
pub use kind::{Ctx, Mark, Place, RecordKind, Rendered, Summary};

pub mod ab;
mod ceilings;
pub mod check;
pub mod code;
pub mod compare;
pub mod counters;
pub mod gate;
pub mod impact;
pub mod kernel_run;
pub mod metrics;
pub mod profile;
mod report_verify;
pub(crate) mod roofline;
pub mod serve;
pub(crate) mod sweep;

/// The registry: every record kind, its variant of [`crate::documents::Evidence`] and its body
/// type, whose [`kernelab_model::Body::KIND`] is the `kind` name that reads into it.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($ty:ty);)*) => {
        /// A bundle record's result, read into the type its kind names.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum Evidence {
            $($(#[$doc])* $variant($ty),)*
            /// A kind outside the registry, read through an [`Extra`].
            Other(Other),
        }

        impl Evidence {
            /// Reads `result` as the body of a `kind` document; `None` for a kind this kernelab
            /// does not know.
            pub fn read(
                kind: &str,
                result: &serde_json::Value,
            ) -> Option<serde_json::Result<Evidence>> {
                $(if kind == <$ty as Body>::KIND {
                    return Some(<$ty as serde::Deserialize>::deserialize(result).map(Evidence::$variant));
                })*
                None
            }
            /// Reads the JSON text `result` as the body of a `kind` document (straight into its
            /// type, no JSON tree); `None` for a kind this kernelab does not know.
            pub fn read_str(kind: &str, result: &str) -> Option<serde_json::Result<Evidence>> {
                $(if kind == <$ty as Body>::KIND {
                    return Some(serde_json::from_str::<$ty>(result).map(Evidence::$variant));
                })*
                None
            }
            /// Every kind name of the registry.
            pub const KINDS: &'static [&'static str] = &[$(<$ty as Body>::KIND),*];
            /// The record's kind name, from its body's type.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Evidence::$variant(_) => <$ty as Body>::KIND,)*
                    Evidence::Other(o) => o.name,
                }
            }
            /// The body written back as JSON: reading a record and writing it again gives the
            /// same JSON.
            pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
                match self {
                    $(Evidence::$variant(b) => serde_json::to_value(b),)*
                    Evidence::Other(o) => Ok(o.value.clone()),
                }
            }
            /// The body as a document of its kind, written by this kernelab.
            pub fn document(&self) -> serde_json::Result<kernelab_model::Document<serde_json::Value>> {
                Ok(kernelab_model::Document::new(self.name(), self.to_value()?))
            }
            /// The record kind's one implementation.
            pub fn kind(&self) -> &dyn $crate::kinds::RecordKind {
                match self {
                    $(Evidence::$variant(b) => b,)*
                    Evidence::Other(o) => &*o.body,
                }
            }
            /// Whether the record is a gate, and if so whether it passed.
            pub fn pass(&self) -> Option<bool> {
                self.kind().pass()
            }
            /// The document and record schemas of every kind name (docs/schema/).
            pub fn schemas() -> Vec<$crate::kind_schema::KindSchemas> {
                vec![$($crate::kind_schema::kind_schemas::<$ty>()),*]
            }
        }
    };
}

/// A record kind outside the registry (a test's own kind, say): its name, and how a result is
/// read into it. The readers that take a slice of these ([`Evidence::read_in`],
/// [`crate::bundle::read_all_in`]) read its records too; the report, its renderers and the
/// audit then treat them as any other kind.
#[derive(Clone, Copy)]
pub struct Extra {
    /// The kind name ([`Body::KIND`] of its body).
    pub name: &'static str,
    read: fn(&serde_json::Value) -> serde_json::Result<Other>,
    schemas: fn() -> crate::kind_schema::KindSchemas,
}

impl Extra {
    /// The kind whose body is `T`.
    pub fn of<T>() -> Extra
    where
        T: Body + RecordKind + serde::de::DeserializeOwned + schemars::JsonSchema,
        T: Send + Sync + 'static,
    {
        Extra {
            name: T::KIND,
            read: read_other::<T>,
            schemas: crate::kind_schema::kind_schemas::<T>,
        }
    }

    /// The kind's document and record schemas.
    pub fn schemas(&self) -> crate::kind_schema::KindSchemas {
        (self.schemas)()
    }
}

impl std::fmt::Debug for Extra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extra").field("name", &self.name).finish()
    }
}

/// `result` read as the body of the extra kind `T`.
fn read_other<T>(result: &serde_json::Value) -> serde_json::Result<Other>
where
    T: Body + RecordKind + serde::de::DeserializeOwned + Send + Sync + 'static,
{
    Ok(Other {
        name: T::KIND,
        value: result.clone(),
        body: std::sync::Arc::new(T::deserialize(result)?),
    })
}

/// The result of a record of an [`Extra`] kind: its name, its JSON as read, and its body.
#[derive(Clone)]
pub struct Other {
    name: &'static str,
    value: serde_json::Value,
    body: std::sync::Arc<dyn RecordKind + Send + Sync>,
}

impl std::fmt::Debug for Other {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Other")
            .field("name", &self.name)
            .field("value", &self.value)
            .finish()
    }
}

impl Evidence {
    /// Reads `result` as the body of a `kind` document, of the registry or of `extra`; `None`
    /// for a kind neither names.
    pub fn read_in(
        extra: &[Extra],
        kind: &str,
        result: &serde_json::Value,
    ) -> Option<serde_json::Result<Evidence>> {
        Evidence::read(kind, result).or_else(|| {
            let e = extra.iter().find(|e| e.name == kind)?;
            Some((e.read)(result).map(Evidence::Other))
        })
    }

    /// Reads the JSON text `result` as the body of a `kind` document, of the registry or of
    /// `extra`; `None` for a kind neither names.
    pub fn read_str_in(
        extra: &[Extra],
        kind: &str,
        result: &str,
    ) -> Option<serde_json::Result<Evidence>> {
        Evidence::read_str(kind, result).or_else(|| {
            let e = extra.iter().find(|e| e.name == kind)?;
            Some(serde_json::from_str(result).and_then(|v| (e.read)(&v).map(Evidence::Other)))
        })
    }
}

use ab::AbBody;
use check::finite::FiniteFiles;
use code::show::CodeShowBody;
use compare::CompareBody;
use counters::CountersBody;
use kernel_run::KernelRunBody;
use kernelab_code::{Matrix, ObjectDiff};
use kernelab_model::roofline::{Ceilings as CeilingsBody, Roofline as RooflineBody};
use kernelab_model::sweep::SweepMatrix as SweepBody;
use kernelab_model::Body;
use kernelab_tensor::{BitwiseReport, CloseReport, FileComparison, Oracle, RepeatReport};
use metrics::MetricsBody;
use profile::ProfileBody;
use serve::ServeBody;

registry! {
    /// `profile`.
    Profile(ProfileBody);
    /// `compare`.
    Compare(CompareBody);
    /// `metrics`.
    Metrics(MetricsBody);
    /// `code_show`.
    CodeShow(CodeShowBody);
    /// `code_diff`.
    CodeDiff(ObjectDiff);
    /// `code_matrix`.
    CodeMatrix(Matrix);
    /// `check_bitwise`.
    CheckBitwise(FileComparison<BitwiseReport>);
    /// `check_close`.
    CheckClose(FileComparison<CloseReport>);
    /// `check_oracle` (a `check_close` against a higher-precision reference).
    CheckOracle(Oracle);
    /// `check_finite`.
    CheckFinite(FiniteFiles);
    /// `check_repeat`.
    CheckRepeat(RepeatReport);
    /// `ab`.
    Ab(AbBody);
    /// `kernel_run`.
    KernelRun(KernelRunBody);
    /// `serve`.
    Serve(ServeBody);
    /// `ceilings`.
    Ceilings(CeilingsBody);
    /// `roofline`.
    Roofline(RooflineBody);
    /// `counters`.
    Counters(CountersBody);
    /// `sweep` (`kernelab sweep` and `kernelab check sweep`).
    Sweep(SweepBody);
    /// `impact`.
    Impact(impact::Impact);
    /// `gate` (`kernelab gate`'s decision).
    Gate(gate::GateReport);
    /// `report_verify` (`kernelab report verify`: a bundle re-measured).
    ReportVerify(crate::verify::Verification);
}
