//! `visa-lint`: the command line CI runs.

pub use crate::args::{Cli, Color, Command, Format};
use crate::lint::{self, Analyse};
use crate::output::{self, Source};
use codespan_reporting::term::termcolor::{ColorChoice, StandardStream, WriteColor};
use serde_json::{Value, json};
use std::path::Path;
use std::process::ExitCode;
use visa_analysis::mapping::{self, describe};
use visa_analysis::rules::registry::{self, Status};
use visa_analysis::{Diagnostic, LineIndex, Severity};

/// Runs the CLI on parsed arguments, writing to stdout.
pub fn run(cli: Cli) -> ExitCode {
    let color = match cli.color {
        Color::Always => ColorChoice::Always,
        Color::Never => ColorChoice::Never,
        Color::Auto if std::io::IsTerminal::is_terminal(&std::io::stdout()) => ColorChoice::Auto,
        Color::Auto => ColorChoice::Never,
    };
    let mut out = StandardStream::stdout(color);
    ExitCode::from(run_with(&cli, &mut out))
}

/// Runs the CLI, writing its report to `out`; returns the exit status (0 clean, 1 errors,
/// 2 usage or I/O failure). Messages about the invocation itself go to stderr.
pub fn run_with(cli: &Cli, out: &mut dyn WriteColor) -> u8 {
    run_streams(
        cli,
        Streams {
            out,
            err: &mut std::io::stderr(),
            stdin: &mut std::io::stdin(),
        },
        &lint::analyse,
    )
}

/// Where a run writes and reads: the report, the one-line messages about the invocation
/// (stderr), and standard input (read when `-` is among the paths).
pub struct Streams<'a> {
    pub out: &'a mut dyn WriteColor,
    pub err: &'a mut dyn std::io::Write,
    pub stdin: &'a mut dyn std::io::Read,
}

/// [`run_with`] with the streams and the analysis of one text given: the seam the CLI's own
/// tests use to read its messages, feed standard input, and check that a panicking analysis
/// is reported while the run goes on.
pub fn run_streams(cli: &Cli, streams: Streams<'_>, analyse: Analyse<'_>) -> u8 {
    let Streams { out, err, stdin } = streams;
    // A failed write of a message to stderr cannot be reported anywhere.
    let mut say = |message: &str| {
        let _ = writeln!(err, "visa-lint: {message}");
    };
    let linting = cli.command.is_none() && !cli.list_rules && cli.explain.is_none();
    if !linting && matches!(cli.format, Format::Sarif | Format::Github) {
        say(&format!(
            "--format {}: only linting reports in this format (use human or json)",
            if cli.format == Format::Sarif {
                "sarif"
            } else {
                "github"
            }
        ));
        return 2;
    }
    let result = match &cli.command {
        Some(Command::Eval {
            axes,
            mapping,
            indices,
        }) => eval(out, cli.format, axes, mapping, indices),
        Some(Command::Model { file }) => model(out, cli.format, file),
        Some(Command::Derive { file }) => derive(out, cli.format, file),
        Some(Command::Cost { file, timeline }) => {
            crate::cost::run(out, cli.format, file, timeline.as_deref())
        }
        None if cli.list_rules => list_rules(out, cli.format),
        None if cli.explain.is_some() => explain(out, cli.explain.as_deref().unwrap_or_default()),
        None if cli.paths.is_empty() => {
            say("no paths given (try `visa-lint fixtures/` or `visa-lint --help`)");
            Ok(2)
        }
        None => lint::lint(out, &mut say, stdin, cli, analyse),
    };
    match result {
        Ok(code) => code,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            say(&e.to_string());
            2
        }
    }
}

fn index_json(idx: &mapping::Index) -> Value {
    let mut m = serde_json::Map::new();
    for (k, v) in idx {
        let v = u64::try_from(*v).map_or_else(|_| Value::String(v.to_string()), Value::from);
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

fn eval(
    out: &mut dyn WriteColor,
    format: Format,
    axes: &str,
    mapping_text: &str,
    indices: &[u64],
) -> std::io::Result<u8> {
    let ev = visa_analysis::evaluate(axes, mapping_text);
    let has_error = ev.diagnostics.iter().any(|d| d.severity == Severity::Error);
    let src = Source {
        name: "<command line>",
        text: &ev.source,
        others: &[],
    };
    let Some(layout) = ev.layout.as_ref().filter(|_| !has_error) else {
        match format {
            Format::Json => write_diagnostics_json(out, &src, &ev.diagnostics)?,
            _ => {
                output::emit_human(out, &src, &ev.diagnostics)?;
                if ev.diagnostics.is_empty() {
                    writeln!(out, "the mapping has no known value")?;
                }
            }
        }
        return Ok(1);
    };
    match format {
        Format::Json => {
            let mut map = serde_json::Map::new();
            for &i in indices {
                let all = layout.map_all(i);
                let v = match all.len() {
                    0 => Value::Null,
                    1 => index_json(&all[0]),
                    _ => Value::Array(all.iter().map(index_json).collect()),
                };
                map.insert(i.to_string(), v);
            }
            let mut doc = json!({
                "size": layout.size,
                "normal_form": format!("m![{}]", layout.to_expr()),
                "map": map,
            });
            if !ev.diagnostics.is_empty() {
                let idx = LineIndex::new(&ev.source);
                let diags: Vec<Value> = ev
                    .diagnostics
                    .iter()
                    .map(|d| output::diagnostic_json(&src, &idx, d))
                    .collect();
                doc["diagnostics"] = diags.into();
            }
            serde_json::to_writer(&mut *out, &doc)?;
            writeln!(out)?;
        }
        _ => {
            output::emit_human(out, &src, &ev.diagnostics)?;
            writeln!(out, "size:        {}", layout.size)?;
            writeln!(out, "normal form: m![{}]", layout.to_expr())?;
            for &i in indices {
                let all = layout.map_all(i);
                let shown = if all.is_empty() {
                    if i >= layout.size {
                        format!("none (past the end: size is {})", layout.size)
                    } else {
                        "none (padding)".into()
                    }
                } else {
                    all.iter()
                        .map(|x| {
                            format!("i![{}]", describe::format_index(Some(x)).replace('=', ": "))
                        })
                        .collect::<Vec<_>>()
                        .join(" and ")
                };
                writeln!(out, "position {i} -> {shown}")?;
            }
            writeln!(out)?;
            write!(out, "{}", describe::describe(layout, ev.inner_term_size))?;
        }
    }
    Ok(0)
}

fn model(out: &mut dyn WriteColor, format: Format, file: &Path) -> std::io::Result<u8> {
    let text = match crate::walk::read_kernel(file) {
        Ok(t) => t,
        Err(e) => return Err(std::io::Error::other(e)),
    };
    let analysis = crate::lint::analysis_in_crate(file, &text);
    let doc = crate::dump::model_json(&text, &analysis);
    match format {
        Format::Json => {
            serde_json::to_writer(&mut *out, &doc)?;
            writeln!(out)?;
        }
        _ => {
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
    }
    Ok(0)
}

/// `visa-lint derive FILE`: the sequencer configurations of every fetch/commit/read/write.
fn derive(out: &mut dyn WriteColor, format: Format, file: &Path) -> std::io::Result<u8> {
    let text = match crate::walk::read_kernel(file) {
        Ok(t) => t,
        Err(e) => return Err(std::io::Error::other(e)),
    };
    let analysis = crate::lint::analysis_in_crate(file, &text);
    let mut derived = Derived {
        file,
        text: &text,
        idx: LineIndex::new(&text),
        target: &visa_analysis::target::RNGD,
        ops: Vec::new(),
        lines: Vec::new(),
    };
    for (offset, f) in &analysis.fns {
        derived.sequencer_ops(*offset, &f.model);
        derived.collect_ops(*offset, &f.model);
        derived.dma_ops(*offset, &f.model);
    }
    let Derived {
        mut ops, mut lines, ..
    } = derived;
    // In source order (a line's fetch before its collect before its commit).
    ops.sort_by_key(|o| o["line"].as_u64().unwrap_or(0));
    let prefix = format!("{}:", file.display());
    lines.sort_by_key(|l| {
        l.strip_prefix(&prefix)
            .and_then(|rest| rest.split(':').next())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    });
    match format {
        Format::Json => {
            serde_json::to_writer(&mut *out, &json!({ "ops": ops }))?;
            writeln!(out)?;
        }
        _ => {
            for l in lines {
                writeln!(out, "{l}")?;
            }
        }
    }
    Ok(0)
}

/// What `visa-lint derive` found in a file: each derived operation as JSON and as a line.
struct Derived<'a> {
    file: &'a Path,
    text: &'a str,
    idx: LineIndex,
    target: &'a visa_analysis::target::Target,
    ops: Vec<Value>,
    lines: Vec<String>,
}

impl Derived<'_> {
    /// The line of `at` in a function starting at `offset`.
    fn line(&self, offset: u32, at: u32) -> u32 {
        self.idx.line_col(self.text, offset + at).line
    }

    /// The sequencer configuration of each fetch, commit, read and write, with the sizes
    /// derived from it.
    fn sequencer_ops(&mut self, offset: u32, model: &visa_analysis::model::FnModel) {
        for op in visa_analysis::derive::ops(model, self.target) {
            let line = self.line(offset, op.span.start);
            let mut o = serde_json::Map::new();
            o.insert("line".into(), line.into());
            o.insert("op".into(), op.kind.as_str().into());
            let file = self.file.display();
            match &op.config {
                Ok(cfg) => {
                    let entries: Vec<Value> = cfg
                        .entries
                        .iter()
                        .map(|e| json!([e.size, e.stride]))
                        .collect();
                    o.insert("entries".into(), entries.into());
                    o.insert("packet_size".into(), cfg.packet_size.into());
                    o.extend(op_sizes(&op));
                    self.lines
                        .push(format!("{file}:{line}: {} {cfg}", op.kind.as_str()));
                }
                Err(e) => {
                    o.insert("error".into(), format!("{e:?}").into());
                    self.lines.push(format!(
                        "{file}:{line}: {} no configuration: {e:?}",
                        op.kind.as_str()
                    ));
                }
            }
            self.ops.push(Value::Object(o));
        }
    }

    /// Collect's flit normalization (L3561-L3564): Time2/Packet2 as derived.
    fn collect_ops(&mut self, offset: u32, model: &visa_analysis::model::FnModel) {
        use visa_analysis::model::Slot;
        for step in model.chains.iter().flat_map(|c| c.steps.iter()) {
            if step.method != visa_analysis::model::Method::Collect {
                continue;
            }
            let Some(inp) = step.input.as_ref() else {
                continue;
            };
            let layout = |s: Slot| inp.get(s).and_then(|m| m.layout.clone());
            let bits = inp.dtype.map(visa_analysis::model::Dtype::bits);
            let (Some(t), Some(p), Some(bits)) = (layout(Slot::Time), layout(Slot::Packet), bits)
            else {
                continue;
            };
            let flit = self.target.flit_bytes;
            let Some(fl) = visa_analysis::derive::collect::normalize(&t, &p, bits, flit) else {
                continue;
            };
            let line = self.line(offset, step.span.start);
            let (t2, p2) = (fl.time2.to_expr(), fl.packet2.to_expr());
            self.ops.push(json!({
                "line": line, "op": "collect", "packet_bytes": fl.packet_bytes,
                "flits": fl.flits, "pad_bytes": fl.pad_bytes,
                "time2": format!("m![{t2}]"), "packet2": format!("m![{p2}]"),
            }));
            self.lines.push(format!(
                "{}:{line}: collect {} bytes -> {} flit(s), {} padding: Time2 m![{t2}], Packet2 m![{p2}]",
                self.file.display(),
                fl.packet_bytes,
                fl.flits,
                fl.pad_bytes
            ));
        }
    }

    /// The DMA engine's read/write sequencer pair and its request split (derive::dma).
    fn dma_ops(&mut self, offset: u32, model: &visa_analysis::model::FnModel) {
        for op in visa_analysis::derive::dma::ops(model, self.target) {
            let line = self.line(offset, op.span.start);
            let file = self.file.display();
            let p = match &op.pair {
                Ok(p) => p,
                Err(e) => {
                    let error = format!("{e:?}");
                    self.ops
                        .push(json!({ "line": line, "op": "dma", "error": error }));
                    self.lines
                        .push(format!("{file}:{line}: dma no configuration: {e:?}"));
                    continue;
                }
            };
            for (name, cfg) in [("dma_read", &p.read), ("dma_write", &p.write)] {
                let entries: Vec<Value> = cfg
                    .entries
                    .iter()
                    .map(|e| json!([e.size, e.stride]))
                    .collect();
                self.ops.push(json!({
                    "line": line, "op": name, "entries": entries,
                    "packet_size": cfg.packet_size, "packet_bytes": p.stride0,
                    "contiguous_bytes": p.run_bytes, "fetch_size": Value::Null,
                    "commit_size": Value::Null, "requests": p.requests, "cycles": p.requests,
                    "startup_cycles": self.target.dma_startup_cycles,
                }));
                self.lines.push(match (p.stride0, p.requests) {
                    (Some(s0), Some(requests)) => format!(
                        "{file}:{line}: {name} {cfg}, {s0}-byte packets, {requests} requests"
                    ),
                    _ => format!(
                        "{file}:{line}: {name} {cfg}, {}-byte runs: no legal DMA packet (ALN-003)",
                        p.run_bytes
                    ),
                });
            }
        }
    }
}

/// The sizes derived with a fetch's or a commit's configuration, read once from the derived op
/// (L1757-L1762, L2224-L2248, L7672).
fn op_sizes(op: &visa_analysis::derive::Op) -> [(String, Value); 5] {
    let (pb, cb, fetch, commit, cycles) = match (op.fetch, op.commit) {
        (Some(s), _) => (
            json!(s.packet_bytes),
            json!(s.contiguous_bytes),
            json!(s.fetch_size),
            Value::Null,
            json!(s.cycles),
        ),
        (None, Some(s)) => (
            json!(s.commit_in_size),
            json!(s.contiguous_bytes),
            Value::Null,
            json!(s.commit_size),
            Value::Null,
        ),
        (None, None) => (
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ),
    };
    [
        ("packet_bytes".into(), pb),
        ("contiguous_bytes".into(), cb),
        ("fetch_size".into(), fetch),
        ("commit_size".into(), commit),
        ("cycles".into(), cycles),
    ]
}

fn write_diagnostics_json(
    out: &mut dyn WriteColor,
    src: &Source<'_>,
    diags: &[Diagnostic],
) -> std::io::Result<()> {
    let idx = LineIndex::new(src.text);
    let v: Vec<Value> = diags
        .iter()
        .map(|d| output::diagnostic_json(src, &idx, d))
        .collect();
    let no_crate = std::collections::BTreeMap::new();
    serde_json::to_writer(&mut *out, &output::report_json(1, v, &no_crate))?;
    writeln!(out)
}

fn status(s: Status) -> (&'static str, String) {
    (s.as_str(), s.reason())
}

fn list_rules(out: &mut dyn WriteColor, format: Format) -> std::io::Result<u8> {
    match format {
        Format::Json => {
            let rules: Vec<Value> = registry::all()
                .map(|r| {
                    let (status, reason) = status(r.status);
                    let applies_to: Vec<&str> = r
                        .generations
                        .libraries()
                        .map(|g| g.package_name())
                        .collect();
                    json!({
                        "code": r.code,
                        "name": r.name,
                        "severity": r.severity.as_str(),
                        "status": status,
                        "reason": reason,
                        "generations": r.generations.as_str(),
                        "applies_to": applies_to,
                        "generations_note": r.generations.note(),
                    })
                })
                .collect();
            serde_json::to_writer(&mut *out, &rules)?;
            writeln!(out)?;
        }
        _ => {
            for r in registry::all() {
                let (status, reason) = status(r.status);
                let reason = if reason.is_empty() {
                    String::new()
                } else {
                    format!(" ({reason})")
                };
                writeln!(
                    out,
                    "{:<8} {:<32} {:<8} {status}{reason}\n         {}",
                    r.code,
                    r.name,
                    r.severity.as_str(),
                    r.summary
                )?;
            }
        }
    }
    Ok(0)
}

fn explain(out: &mut dyn WriteColor, code: &str) -> std::io::Result<u8> {
    let Some(r) = registry::rule(code) else {
        return Err(std::io::Error::other(format!(
            "--explain {code}: no such rule (see `visa-lint --list-rules`)"
        )));
    };
    let (status, reason) = status(r.status);
    writeln!(
        out,
        "{} ({}) — default severity: {}, status: {status}",
        r.code,
        r.name,
        r.severity.as_str()
    )?;
    if !reason.is_empty() {
        writeln!(out, "  {reason}")?;
    }
    writeln!(out, "\n{}\n\n{}\n", r.summary, r.docs)?;
    if !r.bad.is_empty() {
        writeln!(out, "Breaks the rule:\n    {}\n", r.bad)?;
    }
    if !r.good.is_empty() {
        writeln!(out, "Follows it:\n    {}\n", r.good)?;
    }
    // The library's own rules (OPT) follow the vendor's code, not a manual line.
    if !r.manual.is_empty() {
        writeln!(out, "Manual: {}", r.manual)?;
    }
    writeln!(out, "Applies to: {}", r.generations)?;
    Ok(0)
}
