//! The language server's keystroke, in-process and without the protocol: a 2,000-line kernel
//! file built from `fixtures/ok` (as `benches/lsp.sh` builds it), opened in an
//! [`AnalysisHost`], then one-line edits inside one function, each followed by the file's
//! diagnostics. Prints the median and 95th percentile of an edit and of a cold analysis.
//! `cargo run --release -p visa-analysis --example edit_loop -- [EDITS]` (run it under `perf
//! record` to see where an edit's time goes).
use ra_ap_syntax::AstNode;
use std::path::{Path, PathBuf};
use std::time::Instant;
use visa_analysis::AnalysisHost;

fn kernel_file(root: &Path, lines: usize) -> String {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root.join("fixtures/ok"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    sources.sort();
    let (mut out, mut n, mut i) = (String::new(), 0, 0);
    while n < lines && !sources.is_empty() {
        let src = std::fs::read_to_string(&sources[i % sources.len()]).unwrap_or_default();
        // Each copy's functions get their own names, as in the protocol benchmark.
        let renamed = src
            .split("fn ")
            .enumerate()
            .map(|(k, part)| {
                if k == 0 {
                    return part.to_string();
                }
                let end = part
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(part.len());
                format!("fn {}_a_{i}{}", &part[..end], &part[end..])
            })
            .collect::<String>();
        // In its own module, as in the protocol benchmark: a clean file (0 findings).
        let module = format!("mod kernel_{i} {{\n{renamed}}}\n");
        n += module.matches('\n').count();
        out.push_str(&module);
        i += 1;
    }
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let k = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
    sorted.get(k).copied().unwrap_or(0.0)
}

fn main() {
    let edits: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = kernel_file(&root, 2000);
    if std::env::args().nth(2).as_deref() == Some("--memory") {
        // 50 such files open in one host, each analysed (the protocol benchmark's memory case).
        let mut host = AnalysisHost::new();
        for k in 0..50 {
            let path = PathBuf::from(format!("/bench/k{k}.rs"));
            let file = host.set_file(&path, text.replace("_a_", &format!("_f{k}_")));
            let n = host.snapshot().diagnostics(file).map_or(0, |d| d.len());
            std::hint::black_box(n);
        }
        let rss = std::fs::read_to_string("/proc/self/status")
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .map(str::to_string)
            .unwrap_or_default();
        println!("50 files of {} bytes open: {rss}", text.len());
        return;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let target = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("let "))
        .unwrap_or(0);
    let path = PathBuf::from("/bench/kernel.rs");

    let mut colds = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let mut host = AnalysisHost::new();
        let file = host.set_file(&path, text.clone());
        let n = host.snapshot().diagnostics(file).map_or(0, |d| d.len());
        std::hint::black_box(n);
        colds.push(start.elapsed().as_secs_f64() * 1e3);
    }
    colds.sort_by(f64::total_cmp);

    let mut host = AnalysisHost::new();
    let file = host.set_file(&path, text.clone());
    let _ = host.snapshot().diagnostics(file);
    let mut times = Vec::new();
    for v in 0..edits {
        let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        edited[target] = format!("{} // edit {v}", lines[target]);
        let new_text = edited.join("\n");
        let start = Instant::now();
        let file = host.set_file(&path, new_text);
        let n = host.snapshot().diagnostics(file).map_or(0, |d| d.len());
        std::hint::black_box(n);
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let cold = percentile(&colds, 0.5);
    let p50 = percentile(&times, 0.5);
    println!(
        "{} lines, {} bytes; {edits} edits on line {}",
        lines.len(),
        text.len(),
        target + 1
    );
    println!(
        "edit: p50 {p50:.2} ms, p95 {:.2} ms; cold {cold:.2} ms; edit / cold {:.1}%",
        percentile(&times, 0.95),
        100.0 * p50 / cold
    );
    // Where a keystroke's file-level time goes (each phase alone, median of 20).
    let phase = |what: &str, f: &dyn Fn() -> usize| {
        let mut t: Vec<f64> = (0..20)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(f());
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        t.sort_by(f64::total_cmp);
        println!("  {what:<28} {:.2} ms", percentile(&t, 0.5));
    };
    let tree = ra_ap_syntax::SourceFile::parse(&text, ra_ap_syntax::Edition::Edition2024).tree();
    phase("ra_ap_syntax parse", &|| {
        ra_ap_syntax::SourceFile::parse(&text, ra_ap_syntax::Edition::Edition2024)
            .tree()
            .syntax()
            .text_range()
            .len()
            .into()
    });
    phase("file items", &|| {
        visa_analysis::resolve::file_items(&tree).modules.len()
    });
    phase("macro sites (model_of)", &|| {
        visa_analysis::syntax::model_of(tree.syntax(), Some(&text))
            .sites
            .len()
    });
    phase("nesting pre-scan", &|| {
        usize::from(visa_analysis::syntax::limits::check_nesting(&text).is_some())
    });
}
