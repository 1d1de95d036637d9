//! The serve spec: defaults, run order, and errors located by file, line and key.

use kernelab_runner::serve::spec::{RoundOrder, Spec};
use std::path::Path;

const GOOD: &str = r#"
[baseline]
argv = ["python3", "-m", "llama_cpp.server", "--port", "{port}"]
health_url = "http://127.0.0.1:{port}/v1/models"

[candidate]
argv = ["python3", "-m", "llama_cpp.server", "--port", "{port}", "--n_threads", "2"]
health_url = "http://127.0.0.1:{port}/v1/models"

[workload]
requests = 4

[[workload.case]]
input_tokens = 32
output_tokens = 16
concurrency = [1, 2]

[[workload.case]]
input_tokens = 8
output_tokens = 4
concurrency = [0]
"#;

#[test]
fn defaults_and_points() {
    let text = GOOD.replace("concurrency = [0]", "concurrency = [4]");
    let s = Spec::parse(&text, Path::new("s.toml")).expect("valid");
    assert_eq!(s.rounds.count, 4);
    assert_eq!(s.rounds.order, RoundOrder::Abba);
    assert_eq!(s.baseline.port, None);
    assert!(s.workload.stream);
    assert_eq!(s.points(), vec![(0, 1), (0, 2), (1, 4)]);
}

#[test]
fn validation_error_names_line_and_field() {
    let e = Spec::parse(GOOD, Path::new("s.toml")).expect_err("zero concurrency");
    let msg = e.to_string();
    assert!(msg.starts_with("s.toml: line 21:"), "{msg}");
    assert!(msg.contains("workload.case[1].concurrency"), "{msg}");
}

#[test]
fn syntax_and_unknown_key_errors_are_located() {
    let text = GOOD.replace("requests = 4", "requests = 4\nrequest = 5");
    let msg = Spec::parse(&text, Path::new("s.toml"))
        .expect_err("unknown")
        .to_string();
    assert!(msg.starts_with("s.toml: line 12:"), "{msg}");
    assert!(msg.contains("request"), "{msg}");
    let text = GOOD.replace("requests = 4", "requests = \"four\"");
    let msg = Spec::parse(&text, Path::new("s.toml"))
        .expect_err("type")
        .to_string();
    assert!(msg.starts_with("s.toml: line 11:"), "{msg}");
}

#[test]
fn auto_port_needs_a_placeholder() {
    let text = GOOD
        .replace("concurrency = [0]", "concurrency = [1]")
        .replace("\"--port\", \"{port}\"]", "]");
    let msg = Spec::parse(&text, Path::new("s.toml"))
        .expect_err("no port")
        .to_string();
    assert!(msg.contains("baseline.argv"), "{msg}");
    assert!(msg.starts_with("s.toml: line 3:"), "{msg}");
}
