//! Paired samples for `kernelab ab analyze`: kernelab's own JSONL samples file, or pairs written
//! by another harness as CSV (columns `a`, `b`, optional `order` and `aa`, found by name) or JSON
//! (`{"pairs": [{"a", "b", "order"}], "aa": [...]}`).

use crate::record::{self, Record};
use crate::{pairs_from, Error};
use kernelab_model::Location;
use kernelab_stats::{Order, Pair};
use std::path::Path;

/// The pairs of one metric, read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct PairedSamples {
    /// The metric's name (`value` for other harnesses' files unless one is named).
    pub metric: String,
    /// The A/B pairs.
    pub main: Vec<Pair>,
    /// The A/A control pairs.
    pub aa: Vec<Pair>,
    /// Failed runs recorded in the file.
    pub failures: usize,
    /// Successful runs behind the pairs.
    pub runs: usize,
    /// The design the samples file's header records (a kernelab run since #27); `None` for
    /// older files and other harnesses' pairs.
    pub design: Option<kernelab_stats::Design>,
}

fn malformed(path: &Path, line: Option<u64>, expected: impl Into<String>) -> Error {
    let location = Location {
        line,
        ..Location::default()
    }
    .with_path(path);
    Error::BadPairs {
        location,
        expected: expected.into(),
    }
}

impl PairedSamples {
    /// Pairs from another harness: no failures recorded, two runs per pair. The metric is
    /// the one asked for, else the one the file names, else the file's name (`kernel_us.csv`
    /// gives `kernel_us`): a summary names what was measured, never a placeholder.
    fn external(
        path: &Path,
        metric: Option<&str>,
        named: Option<String>,
        main: Vec<Pair>,
        aa: Vec<Pair>,
    ) -> Self {
        let stem = || {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "the pairs' metric".to_string())
        };
        PairedSamples {
            metric: metric.map(str::to_string).or(named).unwrap_or_else(stem),
            runs: 2 * (main.len() + aa.len()),
            failures: 0,
            main,
            aa,
            design: None,
        }
    }
}

/// The order of the `k`-th pair when the file does not say: ABBA from AB.
pub fn default_order(k: usize) -> Order {
    if k % 2 == 0 {
        Order::AB
    } else {
        Order::BA
    }
}

/// Largest CSV or JSON file of pairs read: 256 MiB (a kernelab samples file is read line by
/// line instead, each line capped).
pub const MAX_PAIRS_BYTES: u64 = 256 << 20;

/// Reads the pairs of `metric` (default: the samples file's primary metric, or `value`).
pub fn read_pairs(path: &Path, metric: Option<&str>) -> Result<PairedSamples, Error> {
    let cannot_read = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    // The first 4 KiB tell a samples file from a CSV or JSON one without reading it whole.
    let mut head = Vec::new();
    kernelab_model::open_regular(path)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, 4096), &mut head))
        .map_err(cannot_read)?;
    if String::from_utf8_lossy(&head)
        .trim_start()
        .starts_with("{\"kind\"")
    {
        return samples_file(path, metric);
    }
    let text = kernelab_model::read_regular_text(path, MAX_PAIRS_BYTES).map_err(cannot_read)?;
    if text.trim_start().starts_with('{') {
        json_pairs(path, &text, metric)
    } else {
        csv_pairs(path, &text, metric)
    }
}

fn samples_file(path: &Path, metric: Option<&str>) -> Result<PairedSamples, Error> {
    let recs = record::read(path)?;
    let name = match metric {
        Some(m) => m.to_string(),
        None => recs
            .iter()
            .find_map(|r| match r {
                Record::Header(h) => h.plan.metrics.first().cloned(),
                _ => None,
            })
            .ok_or_else(|| malformed(path, Some(1), "a header record naming the metrics"))?,
    };
    Ok(PairedSamples {
        main: pairs_from(&recs, false, &name),
        aa: pairs_from(&recs, true, &name),
        failures: recs
            .iter()
            .filter(|r| matches!(r, Record::Failure { .. }))
            .count(),
        runs: recs
            .iter()
            .filter(|r| matches!(r, Record::Run { .. }))
            .count(),
        metric: name,
        design: recs.iter().find_map(|r| match r {
            Record::Header(h) => h.plan.design,
            _ => None,
        }),
    })
}

fn json_pairs(path: &Path, text: &str, metric: Option<&str>) -> Result<PairedSamples, Error> {
    #[derive(serde::Deserialize)]
    struct P {
        a: f64,
        b: f64,
        #[serde(default)]
        order: Option<Order>,
    }
    #[derive(serde::Deserialize)]
    struct F {
        pairs: Vec<P>,
        #[serde(default)]
        aa: Vec<P>,
        #[serde(default)]
        metric: Option<String>,
    }
    let f: F = serde_json::from_str(text).map_err(|e| {
        malformed(
            path,
            Some(e.line() as u64),
            format!("{{\"pairs\": [{{\"a\", \"b\", \"order\"}}]}} ({e})"),
        )
    })?;
    let conv = |v: Vec<P>| -> Vec<Pair> {
        v.into_iter()
            .enumerate()
            .map(|(k, p)| Pair {
                a: p.a,
                b: p.b,
                order: p.order.unwrap_or(default_order(k)),
            })
            .collect()
    };
    Ok(PairedSamples::external(
        path,
        metric,
        f.metric,
        conv(f.pairs),
        conv(f.aa),
    ))
}

fn csv_pairs(path: &Path, text: &str, metric: Option<&str>) -> Result<PairedSamples, Error> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| malformed(path, Some(1), format!("a CSV header ({e})")))?
        .clone();
    let col = |n: &str| headers.iter().position(|c| c.eq_ignore_ascii_case(n));
    let (Some(ia), Some(ib)) = (col("a"), col("b")) else {
        let found: Vec<&str> = headers.iter().collect();
        return Err(malformed(
            path,
            Some(1),
            format!("a CSV header with columns a and b (optionally order, aa), found {found:?}"),
        ));
    };
    let (io, iaa) = (col("order"), col("aa"));
    let (mut main, mut aa) = (Vec::new(), Vec::new());
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map(|p| p.line());
            malformed(path, line, format!("a CSV row ({e})"))
        })?;
        let line = row.position().map(|p| p.line());
        if row.iter().all(str::is_empty) {
            continue;
        }
        let num = |j: usize, what: &str| -> Result<f64, Error> {
            row.get(j)
                .and_then(|s| s.parse::<f64>().ok())
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| malformed(path, line, format!("column {what}: a positive number")))
        };
        let k = main.len() + aa.len();
        let order = match io.and_then(|j| row.get(j)).map(str::to_ascii_uppercase) {
            Some(o) if o == "BA" => Order::BA,
            Some(o) if o == "AB" => Order::AB,
            _ => default_order(k),
        };
        let p = Pair {
            a: num(ia, "a")?,
            b: num(ib, "b")?,
            order,
        };
        let is_aa = iaa
            .and_then(|j| row.get(j))
            .is_some_and(|s| matches!(s.to_ascii_lowercase().as_str(), "1" | "true" | "yes"));
        if is_aa {
            aa.push(p)
        } else {
            main.push(p)
        }
    }
    Ok(PairedSamples::external(path, metric, None, main, aa))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new().expect("tmp");
        std::fs::write(f.path(), text).expect("write");
        f
    }

    #[test]
    fn csv_columns_by_name_quoted_and_reordered() {
        let f = write("\"order\",b,\"a\",aa\nBA,2.0,1.0,0\n,4,3,1\nAB,6,5,\n");
        let p = read_pairs(f.path(), None).expect("reads");
        // No metric asked for or named: the file's name, not a placeholder.
        let stem = f.path().file_stem().expect("a name").to_string_lossy();
        assert_eq!(p.metric, stem);
        assert_eq!(
            p.main,
            vec![
                Pair {
                    a: 1.0,
                    b: 2.0,
                    order: Order::BA
                },
                Pair {
                    a: 5.0,
                    b: 6.0,
                    order: Order::AB
                },
            ]
        );
        // No order given: the pair's position in the file (second) gives BA.
        assert_eq!(
            p.aa,
            vec![Pair {
                a: 3.0,
                b: 4.0,
                order: Order::BA
            }]
        );
        assert_eq!(p.runs, 6);
    }

    #[test]
    fn csv_errors_name_the_line_and_column() {
        let f = write("a,b\n1,2\n1,-3\n");
        let e = read_pairs(f.path(), None)
            .expect_err("negative")
            .to_string();
        assert!(
            e.ends_with(": line 3: expected column b: a positive number"),
            "{e}"
        );
        assert!(e.starts_with(&f.path().display().to_string()), "{e}");
        let f = write("x,y\n1,2\n");
        let e = read_pairs(f.path(), None).expect_err("header").to_string();
        assert!(
            e.contains("line 1: expected a CSV header with columns a and b"),
            "{e}"
        );
    }

    #[test]
    fn json_pairs_default_to_abba() {
        let f = write(
            r#"{"pairs": [{"a": 1, "b": 2}, {"a": 3, "b": 4}], "aa": [{"a": 1, "b": 1, "order": "BA"}]}"#,
        );
        let p = read_pairs(f.path(), Some("us")).expect("reads");
        assert_eq!(p.metric, "us");
        assert_eq!(p.main[1].order, Order::BA);
        assert_eq!(p.aa[0].order, Order::BA);
        // The metric the file names, unless one is asked for.
        let f = write(r#"{"metric": "kernel_us", "pairs": [{"a": 1, "b": 2}]}"#);
        assert_eq!(
            read_pairs(f.path(), None).expect("reads").metric,
            "kernel_us"
        );
        assert_eq!(
            read_pairs(f.path(), Some("us")).expect("reads").metric,
            "us"
        );
    }
}
