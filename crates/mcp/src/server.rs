//! The MCP server: tools (one per evidence command), resources (the records of bundles, the
//! published schemas) and a prompt (the evidence order of a kernel change).

use crate::docs;
use crate::exec::{self, Ended, Launch, Step};
use crate::paths::Root;
use crate::tools::{check_args, specs, ArgError, ArgSpec, ToolSpec, Ty};
use crate::Options;
use kernelab_report::kinds::Extra;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
    ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Arguments that name a program to run, not a file to read: not confined to the root (their
/// tools run only with `--allow-run`).
const PROGRAM_ARGS: &[&str] = &["profiler_path"];
/// The most bytes of a record or `out` file read back.
const MAX_READ_BYTES: u64 = exec::MAX_DOCUMENT_BYTES;
/// The most bytes of a record sent as a resource, or read to describe one in the list: a
/// larger record is listed without its headline and refused when read (the `report` tool
/// renders it), so one large record cannot end the session.
pub(crate) const MAX_RESOURCE_BYTES: u64 = 16 << 20;
/// The URI prefix of a record (a file under the root).
const RECORD_URI: &str = "kernelab://record/";
/// The URI prefix of a published schema.
const SCHEMA_URI: &str = "kernelab://schema/";

/// The server's state.
pub struct Server {
    specs: Vec<ToolSpec>,
    options: Options,
    root: Root,
    state: PathBuf,
    schemas: Vec<kernelab_report::schema::KindSchemas>,
    /// Record kinds outside the registry whose records are resources too.
    kinds: Vec<Extra>,
    /// Bundles named at start and those tool calls recorded into.
    bundles: Mutex<Vec<PathBuf>>,
    /// Tool calls running now (the server waits for them to stop before it exits).
    pub(crate) active: AtomicUsize,
}

/// A refusal of a call's arguments, as the MCP error that names the argument.
fn arg_error(tool: &str, e: ArgError) -> McpError {
    McpError::invalid_params(
        format!("tool `{tool}`: {}", e.message),
        Some(json!({"tool": tool, "argument": e.argument})),
    )
}

fn text_result(text: String, is_error: bool) -> CallToolResult {
    if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = kernelab_model::read_regular(path, MAX_READ_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes)
}

impl Server {
    /// A server for the CLI definition `cli` with `options`.
    pub fn new(cli: &clap::Command, options: Options) -> anyhow::Result<Server> {
        let root = Root::new(&options.root)
            .map_err(|e| anyhow::anyhow!("--root {}: {e}", options.root.display()))?;
        let state = match &options.state {
            Some(s) => s.clone(),
            None => root.dir().join(".kernelab").join("state"),
        };
        let mut bundles = Vec::new();
        for b in &options.bundles {
            let p = root
                .resolve(&b.to_string_lossy())
                .map_err(|e| anyhow::anyhow!("--bundle {e}"))?;
            bundles.push(p);
        }
        Ok(Server {
            specs: specs(cli),
            root,
            state,
            schemas: docs::all_schemas(),
            kinds: Vec::new(),
            bundles: Mutex::new(bundles),
            options,
            active: AtomicUsize::new(0),
        })
    }

    /// The server, listing the records and schemas of `kinds` (kinds outside the registry)
    /// among its resources too.
    pub fn with_kinds(mut self, kinds: &[Extra]) -> Server {
        self.schemas.extend(kinds.iter().map(Extra::schemas));
        self.kinds.extend_from_slice(kinds);
        self
    }

    fn output_schema(&self, kind: &str) -> Option<Arc<Map<String, Value>>> {
        let s = self.schemas.iter().find(|s| s.kind == kind)?;
        s.document.as_object().cloned().map(Arc::new)
    }

    /// Every tool as listed: run tools without `--allow-run` say why they are unavailable.
    pub fn tools(&self) -> Vec<Tool> {
        self.specs
            .iter()
            .map(|s| {
                let e = s.entry;
                let mut description = format!("{}\n\n{}", e.summary, s.about);
                let gate = match e.gate {
                    crate::tools::Gate::Files => None,
                    crate::tools::Gate::Run(why) => Some(why.to_string()),
                    crate::tools::Gate::RunUnless(arg, why) => {
                        Some(format!("{why} (unless `{arg}` is given)"))
                    }
                };
                if let Some(why) = &gate {
                    if self.options.allow_run {
                        description = format!("Runs programs: it {why}.\n\n{description}");
                    } else {
                        description = format!(
                            "UNAVAILABLE: this tool {why}, and the server was started without --allow-run.\n\n{description}"
                        );
                    }
                }
                if e.long {
                    description.push_str(
                        "\n\nLong: sends progress notifications; a cancelled call stops every process it started and keeps the samples (call again with `resume`).",
                    );
                }
                let mut tool = Tool::new(e.name, description, Arc::new(s.input_schema()));
                if let Some(o) = self.output_schema(e.kind) {
                    tool = tool.with_raw_output_schema(o);
                }
                let mut ann = ToolAnnotations::new();
                ann.read_only_hint = Some(gate.is_none() && !s.args.iter().any(|a| a.id == "out"));
                ann.destructive_hint = Some(false);
                ann.open_world_hint = Some(gate.is_some());
                tool.with_annotations(ann)
            })
            .collect()
    }

    fn remember_bundle(&self, dir: PathBuf) {
        if let Ok(mut b) = self.bundles.lock() {
            if !b.contains(&dir) {
                b.push(dir);
            }
        }
    }

    /// Checks every path of the call against the root; returns the resolved `out` and `record`.
    fn confine(&self, tool: &str, values: &[(ArgSpec, Vec<String>)]) -> Result<Confined, McpError> {
        let mut c = Confined::default();
        for (a, vs) in values {
            if a.ty != Ty::Path || PROGRAM_ARGS.contains(&a.id.as_str()) {
                continue;
            }
            for v in vs {
                let p = self.root.resolve(v).map_err(|m| {
                    arg_error(
                        tool,
                        ArgError {
                            argument: Some(a.id.clone()),
                            message: format!("argument `{}`: {m}", a.id),
                        },
                    )
                })?;
                match a.id.as_str() {
                    "out" => c.out = Some(p),
                    "record" => c.record = Some(p),
                    _ => {}
                }
            }
        }
        Ok(c)
    }

    /// Lets clap check the command line (conflicts, ranges, requirements) before anything
    /// runs; its error names the option, which is mapped back to the argument.
    fn clap_check(&self, spec: &ToolSpec, argv: &[String]) -> Result<(), McpError> {
        let own = &argv[spec.entry.path.len()..];
        let name = spec.entry.path.last().copied().unwrap_or("kernelab");
        let args = std::iter::once(name.to_string()).chain(own.iter().cloned());
        match spec.command.clone().try_get_matches_from(args) {
            Ok(_) => Ok(()),
            Err(e) => {
                let arg = e
                    .get(clap::error::ContextKind::InvalidArg)
                    .map(|v| v.to_string())
                    .and_then(|flag| {
                        spec.args
                            .iter()
                            .find(|a| {
                                a.long
                                    .as_ref()
                                    .is_some_and(|l| flag.starts_with(&format!("--{l}")))
                                    || flag
                                        .trim_matches(|c| c == '<' || c == '>')
                                        .eq_ignore_ascii_case(&a.id)
                                    || flag.contains(&format!("<{}>", a.id.to_uppercase()))
                            })
                            .map(|a| a.id.clone())
                    });
                let text = e.render().to_string();
                let first = text
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("invalid arguments")
                    .trim_start_matches("error: ")
                    .to_string();
                let message = match &arg {
                    Some(a) => format!("argument `{a}`: {first}"),
                    None => first,
                };
                Err(arg_error(
                    spec.entry.name,
                    ArgError {
                        argument: arg,
                        message,
                    },
                ))
            }
        }
    }

    async fn run_child(
        &self,
        argv: &[String],
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Ended, McpError> {
        let token = ctx.meta.get_progress_token();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Step>();
        let peer = ctx.peer.clone();
        let forward = tokio::spawn(async move {
            // Progress only increases: a phase that starts again (A/A pairs, then pairs) adds
            // its steps after the last phase's.
            let (mut offset, mut last, mut last_total) = (0.0f64, 0.0f64, 0.0f64);
            while let Some(s) = rx.recv().await {
                let Some(token) = token.clone() else { continue };
                if s.done < last {
                    offset += last_total.max(last);
                }
                last = s.done;
                last_total = s.total.unwrap_or(s.done);
                let mut p =
                    ProgressNotificationParam::new(token, offset + s.done).with_message(s.message);
                if let Some(t) = s.total {
                    p = p.with_total(offset + t);
                }
                let _ = peer.notify_progress(p).await;
            }
        });
        self.active.fetch_add(1, Ordering::SeqCst);
        let ct = ctx.ct.clone();
        let ended = exec::run(
            Launch {
                exe: &self.options.exe,
                argv,
                cwd: self.root.dir(),
                state: &self.state,
                allow_run: self.options.allow_run,
            },
            move |s| {
                let _ = tx.send(s);
            },
            async move { ct.cancelled().await },
        )
        .await;
        self.active.fetch_sub(1, Ordering::SeqCst);
        let _ = forward.await;
        ended.map_err(|e| McpError::internal_error(format!("starting kernelab: {e}"), None))
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let name = request.name.to_string();
        let Some(spec) = self.specs.iter().find(|s| s.entry.name == name) else {
            let known: Vec<&str> = self.specs.iter().map(|s| s.entry.name).collect();
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`; the tools are: {}", known.join(", ")),
                Some(json!({"tool": name})),
            ));
        };
        let args: Map<String, Value> = request.arguments.unwrap_or_default();
        let values = check_args(spec, &args).map_err(|e| arg_error(&name, e))?;
        if let Some(why) = spec.runs(&args) {
            if !self.options.allow_run {
                return Ok(text_result(
                    format!(
                        "refused: tool `{name}` {why}; the server was started without --allow-run (restart it with `kernelab mcp --allow-run` to allow programs, servers and the GPU)"
                    ),
                    true,
                ));
            }
        }
        let confined = self.confine(&name, &values)?;
        let report_text = name == "report"
            && args
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| f != "json");
        // `report` with a text format: the JSON summary from one run, the text from a second.
        let (doc_values, text_values): (Vec<_>, Option<Vec<_>>) = if name == "report"
            && (report_text || confined.out.is_some())
        {
            let doc: Vec<_> = values
                .iter()
                .filter(|(a, _)| !["format", "out", "force", "appendix"].contains(&a.id.as_str()))
                .cloned()
                .collect();
            (doc, Some(values.clone()))
        } else {
            (values.clone(), None)
        };
        let argv = spec.argv(&doc_values, true);
        self.clap_check(spec, &argv)?;
        let text_argv = text_values.map(|v| spec.argv(&v, false));
        if let Some(t) = &text_argv {
            self.clap_check(spec, t)?;
        }
        if let Some(r) = &confined.record {
            self.remember_bundle(r.clone());
        }
        let ended = self.run_child(&argv, &ctx).await?;
        let (code, stdout, stderr) = match ended {
            Ended::Exited {
                code,
                stdout,
                stderr,
            } => (code, stdout, stderr),
            Ended::Cancelled { stopped, stderr } => {
                let resume = exec::run_named(&stderr)
                    .map(|(id, samples)| {
                        format!(
                            "; the samples are kept in {} (call `{name}` again with `resume: \"{id}\"` to continue)",
                            samples.display()
                        )
                    })
                    .unwrap_or_default();
                return Ok(text_result(
                    format!("cancelled: {stopped} processes stopped{resume}"),
                    true,
                ));
            }
        };
        // The document: standard output, or the `out` file it was written to.
        let bytes = match (&confined.out, text_argv.is_some()) {
            (Some(out), false) if code != 2 => read_bounded(out)
                .map_err(|e| McpError::internal_error(format!("reading `out`: {e}"), None))?,
            _ => stdout,
        };
        let doc: Option<Value> = match name.as_str() {
            "runs" if code == 0 => {
                Some(docs::runs_document(&bytes).map_err(|e| McpError::internal_error(e, None))?)
            }
            "export" if code == 0 => {
                Some(docs::export_document(&bytes).map_err(|e| McpError::internal_error(e, None))?)
            }
            _ => serde_json::from_slice::<Value>(&bytes)
                .ok()
                .filter(|v| v.get("kind").is_some()),
        };
        let mut lines = Vec::new();
        if let Some(d) = &doc {
            lines.push(docs::headline(d));
        }
        match code {
            0 => {}
            1 => lines.push("exit status 1: a gate failed (the document says which)".into()),
            c => {
                let e = stderr.trim();
                lines.push(format!(
                    "kernelab exited with status {c}: {}",
                    if e.is_empty() { "no message" } else { e }
                ));
            }
        }
        if code != 2 {
            if let Some(t) = &text_argv {
                match self.run_child(t, &ctx).await? {
                    Ended::Exited {
                        code: 0, stdout, ..
                    } => match &confined.out {
                        Some(out) => lines.push(format!("written to {}", out.display())),
                        None => lines.push(String::from_utf8_lossy(&stdout).into_owned()),
                    },
                    Ended::Exited { code, stderr, .. } => {
                        return Ok(text_result(
                            format!(
                                "kernelab report exited with status {code}: {}",
                                stderr.trim()
                            ),
                            true,
                        ))
                    }
                    Ended::Cancelled { .. } => {
                        return Ok(text_result("cancelled".into(), true));
                    }
                }
            } else if let Some(out) = &confined.out {
                lines.push(format!("written to {}", out.display()));
            }
            if let Some(r) = &confined.record {
                lines.push(format!("recorded in {}", r.display()));
            }
        }
        let mut result = text_result(lines.join("\n"), code == 2);
        if code != 2 || doc.is_some() {
            result.structured_content = doc;
        }
        if code != 2 && result.structured_content.is_none() {
            return Ok(text_result(
                format!(
                    "kernelab {} printed no JSON document (exit status {code}): {}",
                    spec.entry.path.join(" "),
                    stderr.trim()
                ),
                true,
            ));
        }
        Ok(result)
    }

    fn bundle_dirs(&self) -> Vec<PathBuf> {
        self.bundles.lock().map(|b| b.clone()).unwrap_or_default()
    }

    /// The records of every known bundle, and the published schemas.
    pub fn resources(&self) -> Vec<Resource> {
        let mut out = Vec::new();
        for dir in self.bundle_dirs() {
            let Ok(files) =
                kernelab_model::list_dir(&dir, kernelab_report::bundle::MAX_BUNDLE_ENTRIES)
            else {
                continue;
            };
            for f in files {
                let name = f.name.to_string_lossy().into_owned();
                if !f.is_file || !name.ends_with(".json") || name.starts_with('.') {
                    continue;
                }
                let path = dir.join(&f.name);
                let size = kernelab_model::lstat(&path)
                    .map(|s| s.size)
                    .unwrap_or(u64::MAX);
                if size > MAX_RESOURCE_BYTES {
                    if let Ok(rel) = path.strip_prefix(self.root.dir()) {
                        out.push(
                            Resource::new(format!("{RECORD_URI}{}", rel.display()), name.clone())
                                .with_description(format!(
                                    "a record of {size} bytes, more than a resource carries ({MAX_RESOURCE_BYTES}); render it with the `report` tool"
                                ))
                                .with_mime_type("application/json"),
                        );
                    }
                    continue;
                }
                let Ok(e) = kernelab_report::bundle::read_entry_in(&path, &self.kinds) else {
                    continue;
                };
                let Ok(rel) = e.path.strip_prefix(self.root.dir()) else {
                    continue;
                };
                let file = e
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let headline = docs::headline_in(&self.kinds, &{
                    let mut v = e.evidence.to_value().unwrap_or(Value::Null);
                    if let Some(o) = v.as_object_mut() {
                        o.insert("kind".into(), json!(e.record.kind));
                    }
                    v
                });
                out.push(
                    Resource::new(
                        format!("{RECORD_URI}{}", rel.display()),
                        format!("{} {} ({file})", e.record.label, e.record.kind),
                    )
                    .with_description(headline)
                    .with_mime_type("application/json"),
                );
            }
        }
        for s in &self.schemas {
            out.push(
                Resource::new(
                    format!(
                        "{SCHEMA_URI}v{}/{}.document.json",
                        kernelab_model::SCHEMA_VERSION,
                        s.kind
                    ),
                    format!("schema of `{}` documents", s.kind),
                )
                .with_mime_type("application/schema+json"),
            );
        }
        out
    }

    fn read(&self, uri: &str) -> Result<String, McpError> {
        if let Some(rest) = uri.strip_prefix(SCHEMA_URI) {
            let v = format!("v{}/", kernelab_model::SCHEMA_VERSION);
            let name = rest.strip_prefix(&v).unwrap_or("");
            for s in &self.schemas {
                if name == format!("{}.document.json", s.kind) {
                    return serde_json::to_string_pretty(&s.document)
                        .map_err(|e| McpError::internal_error(e.to_string(), None));
                }
                if name == format!("{}.record.json", s.kind) {
                    return serde_json::to_string_pretty(&s.record)
                        .map_err(|e| McpError::internal_error(e.to_string(), None));
                }
            }
            return Err(McpError::resource_not_found(
                format!("{uri}: no such schema"),
                None,
            ));
        }
        let Some(rel) = uri.strip_prefix(RECORD_URI) else {
            return Err(McpError::resource_not_found(
                format!("{uri}: not a kernelab resource (kernelab://record/PATH, kernelab://schema/...)"),
                None,
            ));
        };
        let path = self
            .root
            .resolve(rel)
            .map_err(|e| McpError::invalid_params(e, Some(json!({"uri": uri}))))?;
        let bytes = kernelab_model::read_regular(&path, MAX_RESOURCE_BYTES).map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::InvalidData {
                "; render it with the `report` tool"
            } else {
                ""
            };
            McpError::resource_not_found(format!("{uri}: {e}{hint}"), None)
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| McpError::invalid_params(format!("{uri}: not UTF-8 text"), None))?;
        Ok(text)
    }
}

/// The resolved paths a call writes to.
#[derive(Default)]
struct Confined {
    out: Option<PathBuf>,
    record: Option<PathBuf>,
}

/// The evidence order of a kernel change, as the prompt walks an agent through it.
pub const EVIDENCE_ORDER: &str = "Build the evidence of one kernel change, in this order, recording every result into one bundle (give each tool `record: BUNDLE` and `label: CHANGE`):

1. Why this kernel — `profile` the request's profiler files: the kernel family's share of GPU time says what the change can gain at most.
2. Correctness gates — `check_bitwise` (or `check_close` / `check_oracle` with tolerances), `check_finite`, `check_repeat`, or `check_sweep` over a manifest; `kernel_dry_run` checks a launch spec without a GPU. A failed gate ends the review: nothing after it matters until it passes.
3. Code evidence — `code_diff` of the two builds (instruction classes, registers, spills), `code_matrix` for build trees, `code_show` for one build.
4. Timing — `kernel_run` (GPU) or `ab_run` (programs) for a paired verdict with its interval; `ab_analyze` for samples measured elsewhere; `counters` and `roofline` say why. Long tools send progress and can be cancelled and resumed (`runs` lists runs).
5. Request impact — `impact` of the profile and the kernel run: the predicted change of the request, checked against `compare` or `ab` measurements of the request.
6. Serving — `serve` (or `serve_analyze` of a run's samples): request-level A/B with the output-identity gate.
7. Report — `report` of the bundle (`format: \"md\"` for the PR body), then `report_check` of any note a person edited.

Quote figures only from the tools' results (`ratio` = candidate / baseline, `change` = ratio − 1); a figure a result lacks is unavailable, never estimated.";

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("kernelab", kernelab_model::KERNELAB_VERSION))
        .with_instructions(format!(
            "kernelab: evidence for GPU kernel changes. Paths are under {} ; programs, servers and the GPU are {}. Use the `evidence_order` prompt for the order of the evidence.",
            self.root.dir().display(),
            if self.options.allow_run { "allowed (--allow-run)" } else { "not allowed (no --allow-run)" }
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, context)
            .await
            .map(CallToolResponse::from)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(self.resources()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(
            vec![ResourceTemplate::new(
                format!("{RECORD_URI}{{+path}}"),
                "a bundle record",
            )
            .with_description(
                "A record file (or any JSON document) under the root, by its path from the root.",
            )
            .with_mime_type("application/json")],
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let text = self.read(&request.uri)?;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            "evidence_order",
            Some("Walk through the evidence of a kernel change: profile → gates → code → timing → impact → serving → report."),
            Some(vec![
                PromptArgument::new("change")
                    .with_description("The change's label (what `label` names in every record).")
                    .with_required(false),
                PromptArgument::new("bundle")
                    .with_description("The bundle folder to record into, under the root.")
                    .with_required(false),
            ]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != "evidence_order" {
            return Err(McpError::invalid_params(
                format!(
                    "unknown prompt `{}`; the prompt is `evidence_order`",
                    request.name
                ),
                None,
            ));
        }
        let arg = |k: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let change = arg("change").unwrap_or_else(|| "CHANGE".into());
        let bundle = arg("bundle").unwrap_or_else(|| "evidence".into());
        let text = format!(
            "{}\n\nFor this change: label `{change}`, bundle `{bundle}` (under {}).",
            EVIDENCE_ORDER
                .replace("BUNDLE", &bundle)
                .replace("label: CHANGE", &format!("label: {change}")),
            self.root.dir().display()
        );
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description("The evidence order of a kernel change")
                .into(),
        )
    }
}
