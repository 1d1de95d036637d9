//! A record kind added in one file, outside the registry: its records are read from a bundle
//! (through [`Extra`]), drawn by every renderer, audited, described by a schema and listed by
//! the MCP server, like the kinds of the registry.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_model::{Body, Document};
use kernelab_report::bundle::{read_all, read_all_in};
use kernelab_report::kinds::{Ctx, Evidence, Extra, Mark, Place, RecordKind, Rendered, Summary};
use kernelab_report::sink::{Kind as FigureKind, Sink};
use kernelab_report::{
    csv_rows, evidence, evidence_html, evidence_markdown, render, Align, Block, OutputFormat, Table,
};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The test's own kind: one timed probe with a ratio and a gate.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
struct Probe {
    /// Candidate / baseline.
    ratio: f64,
    /// Whether the probe's gate passed.
    pass: bool,
}

impl Body for Probe {
    const KIND: &'static str = "probe";
}

/// One CSV row of a probe.
#[derive(Serialize)]
struct ProbeRow {
    ratio: f64,
    pass: bool,
}

impl RecordKind for Probe {
    fn places(&self) -> &'static [Place] {
        &[Place::Timing]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        let mut t = Table::new("Probe", &[("figure", Align::Left), ("value", Align::Right)]);
        t.push(vec!["ratio".into(), format!("{:.4}", self.ratio)]);
        Rendered {
            blocks: vec![
                Block::Lines(vec![format!("probe ratio {:.4}", self.ratio)]),
                Block::Table(t),
            ],
            headline: format!("probe: ratio {:.4}", self.ratio),
        }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        Summary {
            gates: Some((usize::from(self.pass), 1)),
            verdict: "probed".into(),
            ratio: Some((self.ratio, None)),
            mark: if self.pass { Mark::Good } else { Mark::Fail },
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        sink.add(FigureKind::Ratio, self.ratio, "probe ratio", None);
    }
    fn csv(&self) -> Option<kernelab_report::Result<String>> {
        Some(csv_rows(&[ProbeRow {
            ratio: self.ratio,
            pass: self.pass,
        }]))
    }
}

/// A root folder with a bundle `bundle/` holding one `probe` record labelled `probe-a`.
fn root() -> PathBuf {
    let root = std::env::temp_dir().join(format!("kernelab-extra-kind-{}", std::process::id()));
    let dir = root.join("bundle");
    std::fs::create_dir_all(&dir).expect("creates the bundle folder");
    let doc = Document::of(Probe {
        ratio: 0.8125,
        pass: true,
    });
    let record = serde_json::json!({
        "schema_version": doc.schema_version,
        "kind": doc.kind,
        "label": "probe-a",
        "provenance": {
            "argv": ["kernelab", "probe"],
            "kernelab_version": doc.kernelab_version,
            "inputs": [],
            "started": "2026-01-01T00:00:00Z",
            "finished": "2026-01-01T00:00:01Z"
        },
        "result": doc,
    });
    std::fs::write(
        dir.join("0001-probe.json"),
        serde_json::to_vec(&record).expect("serializes"),
    )
    .expect("writes the record");
    root
}

#[test]
fn a_kind_added_in_one_file_is_read_rendered_audited_and_described() {
    let root = root();
    let dir = root.join("bundle");
    let kinds = [Extra::of::<Probe>()];

    // Read: the registry alone does not know it; with the extra kind it reads.
    let (none, bad) = read_all(&dir).expect("lists the bundle");
    assert!(none.is_empty());
    assert!(bad[0].error.to_string().contains("does not know"));
    let (entries, bad) = read_all_in(&dir, &kinds).expect("lists the bundle");
    assert!(bad.is_empty());
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].evidence.name(), "probe");
    assert_eq!(entries[0].evidence.pass(), Some(true));
    let back = entries[0].evidence.document().expect("writes back");
    assert_eq!(back.kind, "probe");
    assert_eq!(back.body["ratio"], 0.8125);

    // Rendered, in every format.
    let report = evidence(&entries);
    let timing = report
        .parts
        .iter()
        .find(|p| p.title == Place::Timing.title())
        .expect("the probe's blocks go in kernel timing");
    let terminal = render(&timing.blocks, OutputFormat::Terminal, Some(100));
    assert!(terminal.contains("probe ratio 0.8125"), "{terminal}");
    let markdown = evidence_markdown("probe", &report);
    assert!(markdown.contains("probe ratio 0.8125"), "{markdown}");
    assert!(markdown.contains("| ✔ | probe-a | probe | 1/1 | probed | 0.8125 |"));
    let html = evidence_html("probe", &report);
    assert!(html.contains("probe ratio 0.8125"));
    let csv = entries[0]
        .evidence
        .kind()
        .csv()
        .expect("the probe has a CSV view")
        .expect("writes CSV");
    assert_eq!(csv, "ratio,pass\n0.8125,true\n");
    let json = serde_json::to_value(&report.heads).expect("serializes");
    assert_eq!(json[0]["kind"], "probe");
    assert_eq!(json[0]["headline"], "probe: ratio 0.8125");
    assert_eq!(json[0]["pass"], true);

    // Audited: its figures are found by `report check`, and a wrong one is caught.
    let right = kernelab_report::audit::audit("probe-a: ratio 0.8125\n", &entries);
    assert!(
        right.checked > 0 && right.mismatches.is_empty(),
        "{right:?}"
    );
    let wrong = kernelab_report::audit::audit("probe-a: ratio 0.9125\n", &entries);
    assert_eq!(wrong.mismatches.len(), 1, "{wrong:?}");

    // Described: its schemas name it, as the registry's kinds' do.
    let schemas = kinds[0].schemas();
    assert_eq!(schemas.kind, "probe");
    assert_eq!(
        schemas.document.as_value()["properties"]["kind"]["const"],
        "probe"
    );
    assert!(!Evidence::KINDS.contains(&"probe"));

    // Listed by the MCP server: the record with its headline, and the kind's schema.
    let options = kernelab_mcp::Options {
        root: root.clone(),
        allow_run: false,
        bundles: vec![PathBuf::from("bundle")],
        state: None,
        exe: PathBuf::from("kernelab"),
    };
    let plain = kernelab_mcp::Server::new(&clap::Command::new("kernelab"), options.clone())
        .expect("starts");
    let listed = |server: &kernelab_mcp::Server| {
        serde_json::to_string(&server.resources()).expect("serializes the resources")
    };
    assert!(!listed(&plain).contains("probe-a"));
    let server = kernelab_mcp::Server::new(&clap::Command::new("kernelab"), options)
        .expect("starts")
        .with_kinds(&kinds);
    let resources = listed(&server);
    assert!(
        resources.contains("probe-a probe (0001-probe.json)"),
        "{resources}"
    );
    assert!(resources.contains("probe: ratio 0.8125"), "{resources}");
    assert!(resources.contains("probe.document.json"), "{resources}");

    std::fs::remove_dir_all(&root).expect("removes the root folder");
}
