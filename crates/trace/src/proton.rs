//! Triton Proton profiles in the hatchet JSON that `proton.finalize()` writes (`*.hatchet`):
//! `[tree, devices]`, a call tree of `{frame: {name, type}, metrics: {…}, children: […]}` nodes
//! and the devices by kind and id (`{"CUDA": {"0": {"arch": "90", …}}}`).
//!
//! Each node whose metrics name a device (`device_id`) is a kernel: `count` launches taking
//! `time (ns)` in all. Proton aggregates launches per call path, so the input is per-kernel
//! aggregates, like a statistics CSV: no timeline. The FLOPs (`flops`, `flops8` … `flops64`)
//! and `bytes` a kernel's launch metadata adds are kept as facts of the input (totals per
//! metric). The tree is small (one node per call path), so it is parsed whole, within a limit.

use crate::error::{Error, ErrorKind, Result};
use crate::rocprof::round_e9;
use kernelab_model::{
    FlopWidth, KernelAggregate, Location, Profile, RecordedWork, SourceInfo, WorkOf,
};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Read;

/// The largest Proton profile kernelab reads.
pub(crate) const MAX_PROTON_BYTES: u64 = 256 << 20;

/// Whether `text` opens as a hatchet tree: `[`, then an object whose first key is one of a
/// tree node's (`children`, `frame`, `metrics`), which no trace event has.
pub(crate) fn looks_like(text: &[u8]) -> bool {
    let mut rest = text.iter().copied().filter(|c| !c.is_ascii_whitespace());
    if (rest.next(), rest.next()) != (Some(b'['), Some(b'{')) {
        return false;
    }
    let key: Vec<u8> = rest.take(10).collect();
    [&b"\"children\""[..], b"\"frame\"", b"\"metrics\""]
        .iter()
        .any(|k| key.starts_with(k))
}

/// Whether `text` opens as Proton's Chrome trace: the object nlohmann's JSON writes (keys in
/// order, no spaces) with `displayTimeUnit` and `traceEvents`, whose first events (within the
/// head) carry an `args.call_stack` array, which Kineto's events do not.
pub(crate) fn looks_like_trace(text: &[u8]) -> bool {
    const OPEN: &[u8] = br#"{"displayTimeUnit":"us","traceEvents":["#;
    text.starts_with(OPEN) && memchr::memmem::find(text, br#""call_stack":["#).is_some()
}

/// Says what a Proton Chrome trace holds, and what it does not.
pub(crate) fn trace_note(source: &mut SourceInfo) {
    source.notes.push(
        "Proton's Chrome trace: each kernel launch with its time (named by the innermost frame of \
         its call stack); no copies, no host launch calls, and no FLOPs or bytes (the hatchet \
         profile of the same run has them); the stream is Proton's lane (tid)"
            .into(),
    );
}

/// Per-kernel sums of one name.
#[derive(Default)]
struct Sums {
    calls: u64,
    total_e9: u128,
    /// FLOPs of every node of the name, by key; `None` once a node lacks them.
    flops: Option<BTreeMap<&'static str, f64>>,
    /// Bytes of every node of the name; `None` once a node lacks them.
    bytes: Option<f64>,
    /// Nodes of the name seen.
    nodes: u64,
}

/// The FLOP keys Proton writes, with the width each counts.
const FLOP_KEYS: [(&str, FlopWidth); 5] = [
    ("flops", FlopWidth::Unsaid),
    ("flops8", FlopWidth::Fp8),
    ("flops16", FlopWidth::Fp16),
    ("flops32", FlopWidth::Fp32),
    ("flops64", FlopWidth::Fp64),
];

impl Sums {
    /// Adds one node's work metrics (`flops*`, `bytes`): a figure stays only while every node
    /// of the name has it.
    fn add_work(&mut self, m: &Map<String, Value>) {
        let number = |k: &str| {
            m.get(k)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        let first = self.nodes == 0;
        self.nodes += 1;
        let mut flops = BTreeMap::new();
        for (key, _) in FLOP_KEYS {
            if let Some(v) = number(key) {
                flops.insert(key, v);
            }
        }
        self.flops = match (first, self.flops.take()) {
            _ if flops.is_empty() => None,
            (true, _) => Some(flops),
            (false, Some(mut sums)) if sums.keys().eq(flops.keys()) => {
                for (k, v) in flops {
                    *sums.entry(k).or_default() += v;
                }
                Some(sums)
            }
            (false, _) => None,
        };
        self.bytes = match (first, self.bytes, number("bytes")) {
            (true, _, b) => b,
            (false, Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    /// The recorded work of aggregate `index`, when a node recorded any.
    fn work(&self, index: usize) -> Option<RecordedWork> {
        let (flops, width, flops_key) = match &self.flops {
            Some(f) if f.len() == 1 => {
                let (k, v) = f.iter().next()?;
                let width = FLOP_KEYS
                    .iter()
                    .find(|(key, _)| key == k)
                    .map(|(_, w)| *w)?;
                (Some(*v), width, *k)
            }
            // Several widths in one kernel: their sum, its width unsaid.
            Some(f) => (Some(f.values().sum()), FlopWidth::Unsaid, "flops*"),
            None => (None, FlopWidth::Unsaid, "flops"),
        };
        (flops.is_some() || self.bytes.is_some()).then_some(RecordedWork {
            of: WorkOf::Aggregate(index),
            flops,
            width,
            bytes: self.bytes,
            flops_key,
            bytes_key: "bytes",
        })
    }
}

/// Reads a Proton hatchet document from `reader` into `profile`.
pub(crate) fn read<R: Read>(
    reader: R,
    profile: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let mut text = Vec::new();
    reader
        .take(MAX_PROTON_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|e| Error::new(Location::byte(0), ErrorKind::Io(e)))?;
    if text.len() as u64 > MAX_PROTON_BYTES {
        return Err(Error::new(
            Location::byte(0),
            ErrorKind::TooLarge {
                what: "a Proton profile".into(),
                limit: MAX_PROTON_BYTES,
            },
        ));
    }
    let doc: Value = serde_json::from_slice(&text).map_err(|e| {
        Error::syntax(
            Location::default(),
            "a Proton hatchet JSON document",
            e.to_string(),
        )
    })?;
    let Some(parts) = doc.as_array() else {
        return Err(Error::syntax(
            Location::default(),
            "a JSON array",
            "another value",
        ));
    };
    let Some(tree) = parts.first().and_then(Value::as_object) else {
        return Err(Error::syntax(
            Location::default().with_field("[0]"),
            "the call tree's root node",
            "none",
        ));
    };
    let mut kernels: BTreeMap<String, Sums> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut work: BTreeMap<String, f64> = BTreeMap::new();
    // Depth-first over the tree, without recursion (a hostile file may nest deeply).
    let mut stack: Vec<(&Map<String, Value>, String)> = vec![(tree, "[0]".into())];
    while let Some((node, path)) = stack.pop() {
        let name = node
            .get("frame")
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(m) = node.get("metrics").and_then(Value::as_object) {
            if m.contains_key("device_id") {
                let at = |k: &str| Location::default().with_field(format!("{path}.metrics.{k}"));
                let calls = m.get("count").and_then(Value::as_u64).ok_or_else(|| {
                    Error::syntax(at("count"), "a whole number of launches", "none")
                })?;
                let time = m.get("time (ns)").and_then(time_e9).ok_or_else(|| {
                    Error::syntax(at("time (ns)"), "non-negative nanoseconds", "none")
                })?;
                if !kernels.contains_key(name) {
                    order.push(name.to_string());
                }
                let k = kernels.entry(name.to_string()).or_default();
                k.calls = k.calls.saturating_add(calls);
                k.total_e9 = k.total_e9.saturating_add(time);
                k.add_work(m);
                for (key, v) in m {
                    if key == "bytes" || key.starts_with("flops") {
                        if let Some(v) = v.as_f64().filter(|v| v.is_finite()) {
                            *work.entry(key.clone()).or_default() += v;
                        }
                    }
                }
            }
        }
        if let Some(children) = node.get("children").and_then(Value::as_array) {
            for (i, c) in children.iter().enumerate().rev() {
                if let Some(c) = c.as_object() {
                    stack.push((c, format!("{path}.children[{i}]")));
                }
            }
        }
    }
    for name in &order {
        if let Some(k) = kernels.get(name) {
            profile
                .recorded_work
                .extend(k.work(profile.aggregates.len()));
            profile.aggregates.push(KernelAggregate {
                name: profile.names.intern_str(name),
                calls: k.calls,
                total: round_e9(k.total_e9),
                total_e9: k.total_e9,
                min: None,
                max: None,
                stddev_ns: None,
                median_ns: None,
            });
        }
    }
    if let Some(devices) = parts.get(1).and_then(Value::as_object) {
        let mut shown = Vec::new();
        for (kind, ids) in devices {
            for (id, d) in ids.as_object().into_iter().flatten() {
                let arch = d.get("arch").and_then(Value::as_str).unwrap_or("?");
                shown.push(format!("{kind} {id} ({arch})"));
            }
        }
        if !shown.is_empty() {
            source.facts.push(("device".into(), shown.join(", ")));
        }
    }
    for (key, total) in work {
        source
            .facts
            .push((format!("{key} total"), format!("{total}")));
    }
    source.notes.push(
        "Proton aggregates launches per call path: calls and total time per kernel, no timeline (busy time, gaps) and no per-launch spread".into(),
    );
    Ok(())
}

/// A `time (ns)` value in units of 10⁻⁹ ns: a whole number, or a finite non-negative float.
fn time_e9(v: &Value) -> Option<u128> {
    if let Some(n) = v.as_u64() {
        return Some(u128::from(n) * 1_000_000_000);
    }
    let f = v
        .as_f64()
        .filter(|f| f.is_finite() && *f >= 0.0 && *f < 1e20)?;
    // In range by the filter above: at most 1e29, well inside u128.
    Some((f * 1e9).round() as u128)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(s: &str) -> Result<(Profile, SourceInfo)> {
        let mut p = Profile::default();
        let mut src = SourceInfo::default();
        read(s.as_bytes(), &mut p, &mut src)?;
        Ok((p, src))
    }

    const TWO: &str = r#"[{"children":[
        {"children":[],"frame":{"name":"k","type":"function"},
         "metrics":{"count":10,"device_id":"1","device_type":"CUDA","time (ns)":2048,"flops8":1e11,"bytes":1e8}},
        {"children":[{"children":[],"frame":{"name":"k"},"metrics":{"count":2,"device_id":"0","time (ns)":2.5}}],
         "frame":{"name":"scope"},"metrics":{}}],
       "frame":{"name":"ROOT","type":"function"},"metrics":{"count":0,"time (ns)":0}},
      {"CUDA":{"0":{"arch":"90"},"1":{"arch":"100"}}}]"#;

    #[test]
    fn kernels_are_summed_by_name_with_their_work() {
        assert!(looks_like(TWO.as_bytes()));
        assert!(!looks_like(br#"[{"ph":"X","name":"k"}]"#));
        let (p, src) = read_str(TWO).expect("a profile");
        assert_eq!(p.aggregates.len(), 1);
        let k = &p.aggregates[0];
        assert_eq!((p.names.name(k.name), k.calls), ("k", 12));
        assert_eq!(k.total_e9, 2_050_500_000_000);
        let fact = |key: &str| src.facts.iter().find(|f| f.0 == key).map(|f| f.1.clone());
        assert_eq!(fact("device").as_deref(), Some("CUDA 0 (90), CUDA 1 (100)"));
        assert_eq!(fact("flops8 total").as_deref(), Some("100000000000"));
        assert_eq!(fact("bytes total").as_deref(), Some("100000000"));
        // The second node of `k` records no work: the kernel's figures are not all there.
        assert!(p.recorded_work.is_empty());
        let (p, _) = read_str(&TWO.replace(
            "\"time (ns)\":2.5}",
            "\"time (ns)\":2.5,\"flops8\":5e10,\"bytes\":1e8}",
        ))
        .expect("a profile");
        let w = p.recorded_work.first().expect("recorded work");
        assert_eq!(w.of, WorkOf::Aggregate(0));
        assert_eq!(
            (w.flops, w.width, w.flops_key),
            (Some(1.5e11), FlopWidth::Fp8, "flops8")
        );
        assert_eq!(w.bytes, Some(2e8));
    }

    #[test]
    fn a_proton_chrome_trace_is_told_from_a_kineto_trace_by_its_head() {
        let proton = br#"{"displayTimeUnit":"us","traceEvents":[{"args":{"call_stack":["ROOT","k"]},"cat":"kernel"}]}"#;
        assert!(looks_like_trace(proton));
        // Kineto writes spaces and other keys first; a call stack alone is not enough.
        assert!(!looks_like_trace(
            br#"{"schemaVersion": 1, "traceEvents": [{"args": {"call_stack": []}}]}"#
        ));
        assert!(!looks_like_trace(
            br#"{"displayTimeUnit":"us","traceEvents":[{"ph":"X"}]}"#
        ));
        assert_eq!(crate::detect(proton).ok(), Some(crate::Format::ProtonTrace));
    }

    #[test]
    fn truncated_empty_and_hostile_documents_are_errors() {
        for cut in [1, 20, TWO.len() / 2, TWO.len() - 2] {
            assert!(read_str(&TWO[..cut]).is_err(), "cut at {cut}");
        }
        assert!(read_str("[]").is_err());
        let e = read_str(&TWO.replace("\"count\":10", "\"count\":-1"))
            .expect_err("negative count")
            .to_string();
        assert!(e.contains("children[0].metrics.count"), "{e}");
        let e = read_str(&TWO.replace("\"time (ns)\":2048", "\"time (ns)\":\"x\""))
            .expect_err("text time")
            .to_string();
        assert!(e.contains("time (ns)"), "{e}");
        // Nesting past serde_json's recursion limit is an error, never a stack overflow.
        let deep = format!(
            "[{}{}]",
            "{\"children\":[".repeat(10_000),
            "]}".repeat(10_000)
        );
        assert!(read_str(&deep).is_err());
    }
}
