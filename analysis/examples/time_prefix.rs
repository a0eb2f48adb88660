//! Times the analysis of a file and its parts: `cargo run --release --example time_prefix -- FILE`.
use std::time::Instant;

fn time<T>(what: &str, n: u32, mut f: impl FnMut() -> T) {
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(f());
    }
    println!("{what:>24}: {:?}", start.elapsed() / n);
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: time_prefix FILE");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    println!("{} bytes", text.len());
    time("check_text", 200, || visa_analysis::check_text(&text));
    time("new database", 20, visa_analysis::db::Database::default);
    time("ra parse", 20, || {
        ra_ap_syntax::SourceFile::parse(&text, ra_ap_syntax::Edition::Edition2024)
    });
    time("file_model", 20, || {
        visa_analysis::syntax::file_model(&text)
    });
    time("parse_mapping", 200, || {
        visa_analysis::mapping::parse::parse_mapping("A / 8 # 256, B % 4")
    });
}
