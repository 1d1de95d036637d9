//! The `check` views: correctness gates on output tensors.

use crate::format::{share, thousands};
use crate::table::{Align, Block, Table};
use kernelab_tensor::{
    BitwiseReport, CloseReport, FileComparison, FileFinite, RepeatReport, TensorFinite, TensorHash,
};

fn sci(x: Option<f64>) -> String {
    match x {
        Some(0.0) => "0".into(),
        Some(x) => format!("{x:.3e}"),
        None => crate::format::UNAVAILABLE.into(),
    }
}

fn status(pass: bool) -> String {
    if pass {
        "pass".into()
    } else {
        "FAIL".into()
    }
}

/// Sections of a bitwise comparison.
pub fn bitwise_tables(c: &FileComparison<BitwiseReport>) -> Vec<Block> {
    let mut t = Table::new(
        format!("Bitwise: {} vs {}", c.a.display(), c.b.display()),
        &[
            ("tensor", Align::Left),
            ("dtype", Align::Left),
            ("shape", Align::Left),
            ("elements", Align::Right),
            ("differing", Align::Right),
            ("share", Align::Right),
            ("status", Align::Left),
        ],
    );
    let mut first = Table::new(
        "First differing elements",
        &[
            ("tensor", Align::Left),
            ("index", Align::Left),
            ("A", Align::Right),
            ("B", Align::Right),
        ],
    );
    for x in &c.tensors {
        match (&x.result, &x.problem) {
            (Some(r), _) => {
                t.push(vec![
                    x.name.clone(),
                    x.dtype.clone(),
                    format!("{:?}", x.shape),
                    thousands(r.elements),
                    thousands(r.differing),
                    share(if r.elements > 0 {
                        r.differing as f64 / r.elements as f64
                    } else {
                        0.0
                    }),
                    if r.differing == 0 {
                        "bit-exact".into()
                    } else {
                        "FAIL".into()
                    },
                ]);
                for m in &r.first {
                    first.push(vec![
                        x.name.clone(),
                        format!("{:?}", m.index),
                        m.a.clone(),
                        m.b.clone(),
                    ]);
                }
            }
            (None, p) => t.push(vec![
                x.name.clone(),
                x.dtype.clone(),
                format!("{:?}", x.shape),
                "–".into(),
                "–".into(),
                "–".into(),
                format!("FAIL: {}", p.clone().unwrap_or_default()),
            ]),
        }
    }
    let verdict = if c.pass {
        "bit-exact: every tensor equal byte for byte".to_string()
    } else {
        "NOT bit-exact".to_string()
    };
    let mut out = vec![
        Block::List {
            title: "Verdict".into(),
            lines: vec![verdict],
        },
        Block::Table(t),
        Block::Table(first),
    ];
    out.extend(not_checked(&c.not_checked));
    out
}

/// The members no gate looked at, as a section (none when every member was compared).
fn not_checked(skipped: &[kernelab_tensor::Skipped]) -> Option<Block> {
    (!skipped.is_empty()).then(|| Block::List {
        title: "Not checked".into(),
        lines: skipped
            .iter()
            .map(|s| format!("{}: {}", s.name, s.why))
            .collect(),
    })
}

/// Sections of a close or oracle comparison.
pub fn close_tables(c: &FileComparison<CloseReport>, title: &str) -> Vec<Block> {
    let mut t = Table::new(
        format!("{title}: {} vs {}", c.a.display(), c.b.display()),
        &[
            ("tensor", Align::Left),
            ("dtype", Align::Left),
            ("max abs err", Align::Right),
            ("max rel err", Align::Right),
            ("rel L2 err", Align::Right),
            ("max ULP", Align::Right),
            ("mismatches", Align::Right),
            ("tolerance", Align::Left),
            ("status", Align::Left),
        ],
    );
    let mut hist: Option<Table> = None;
    for x in &c.tensors {
        match (&x.result, &x.problem) {
            (Some(r), _) => {
                let tol = match r.tolerance.ulp {
                    Some(u) => format!("≤ {u} ULP"),
                    None => format!("rtol {} atol {}", r.tolerance.rtol, r.tolerance.atol),
                };
                t.push(vec![
                    x.name.clone(),
                    x.dtype.clone(),
                    sci(r.max_abs_err),
                    sci(r.max_rel_err),
                    sci(r.rel_l2_err),
                    r.max_ulp.map(thousands).unwrap_or_else(|| "–".into()),
                    format!("{} of {}", thousands(r.mismatches), thousands(r.elements)),
                    tol,
                    status(r.mismatches == 0),
                ]);
                if let Some(h) = &r.ulp_histogram {
                    let table = hist.get_or_insert_with(|| {
                        let mut cols = vec![("tensor".to_string(), Align::Left)];
                        cols.extend(h.iter().map(|b| (format!("{} ULP", b.ulps), Align::Right)));
                        let cols: Vec<(&str, Align)> =
                            cols.iter().map(|(n, a)| (n.as_str(), *a)).collect();
                        Table::new("ULP-distance histogram", &cols)
                    });
                    let mut row = vec![x.name.clone()];
                    row.extend(h.iter().map(|b| thousands(b.count)));
                    table.push(row);
                }
            }
            (None, p) => t.push(vec![
                x.name.clone(),
                x.dtype.clone(),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                "–".into(),
                format!("FAIL: {}", p.clone().unwrap_or_default()),
            ]),
        }
    }
    let mut out = vec![
        Block::List {
            title: "Verdict".into(),
            lines: vec![if c.pass {
                "within tolerance".into()
            } else {
                "NOT within tolerance".into()
            }],
        },
        Block::Table(t),
    ];
    out.extend(hist.map(Block::Table));
    out.extend(not_checked(&c.not_checked));
    out
}

/// Sections of a finiteness check.
pub fn finite_tables(files: &[FileFinite]) -> Vec<Block> {
    let mut t = Table::new(
        "Finite",
        &[
            ("file", Align::Left),
            ("tensor", Align::Left),
            ("elements", Align::Right),
            ("NaN", Align::Right),
            ("+inf", Align::Right),
            ("-inf", Align::Right),
            ("first non-finite", Align::Left),
            ("status", Align::Left),
        ],
    );
    for f in files {
        for TensorFinite { name, report: r } in &f.tensors {
            t.push(vec![
                f.path.clone(),
                name.clone(),
                thousands(r.elements),
                thousands(r.nan),
                thousands(r.pos_inf),
                thousands(r.neg_inf),
                r.first
                    .as_ref()
                    .map(|i| format!("{i:?}"))
                    .unwrap_or_else(|| "–".into()),
                if r.all_finite() {
                    "all finite".into()
                } else {
                    "FAIL".into()
                },
            ]);
        }
    }
    vec![Block::Table(t)]
}

/// Sections of a repeat check.
pub fn repeat_tables(r: &RepeatReport) -> Vec<Block> {
    let mut t = Table::new(
        "Content hashes (SHA-256)",
        &[
            ("file", Align::Left),
            ("tensor", Align::Left),
            ("sha256", Align::Left),
        ],
    );
    for f in &r.files {
        for TensorHash { name, sha256: h } in &f.tensors {
            t.push(vec![
                f.path.display().to_string(),
                name.clone(),
                h[..16.min(h.len())].to_string(),
            ]);
        }
    }
    let verdict = if r.pass {
        format!("all {} runs bit-identical", r.files.len())
    } else {
        format!(
            "{} tensors differ from the first run: {}",
            r.differing.len(),
            r.differing.join("; ")
        )
    };
    vec![
        Block::List {
            title: "Verdict".into(),
            lines: vec![verdict],
        },
        Block::Table(t),
    ]
}
