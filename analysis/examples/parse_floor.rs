//! The corpus benchmark's floor (`benches/corpus.sh`): reads every `.rs` file under the given
//! directories and parses each with ra_ap_syntax, nothing more.
use std::path::Path;

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    let mut files = Vec::new();
    for arg in std::env::args().skip(1) {
        walk(Path::new(&arg), &mut files);
    }
    let mut nodes = 0usize;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let parse = ra_ap_syntax::SourceFile::parse(&text, ra_ap_syntax::Edition::Edition2024);
        nodes += usize::from(parse.errors().is_empty());
    }
    println!("{} files parsed ({nodes} without errors)", files.len());
}
