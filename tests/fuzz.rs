//! Fuzz targets, run on stable with proptest: the `m!`/`axes!`/`i!` parsers, the mapping
//! algebra and `eval`, the kernel model and the whole analysis (fresh and incremental), over
//! a corpus seeded from `fixtures/**/*.rs` and structure-aware generators for deep nesting
//! and files of many kernels.
//!
//! Every target asserts what must hold for *any* input: no panic, no stack overflow on an
//! 8 MiB thread, diagnostics that point inside the text on character boundaries, and `VL-005`
//! whenever the input nests past the documented limit (docs/robustness.md).
//!
//! The default case counts keep this file to well under a minute in `cargo test`. For a
//! longer run, set `VISA_FUZZ_CASES` (cases per target), e.g.
//! `VISA_FUZZ_CASES=20000 cargo test --release --test fuzz`. Every crash found becomes a
//! named regression test in `tests/robustness.rs` (or below).

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};
use std::path::Path;
use std::sync::OnceLock;
use visa_analysis::db::{self, Database, SourceFile};
use visa_analysis::mapping::layout::MAX_PREIMAGES;
use visa_analysis::mapping::parse;
use visa_analysis::syntax::limits::MAX_NESTING;
use visa_analysis::{Diagnostic, check_text};

/// Cases per target: `VISA_FUZZ_CASES`, or the target's default.
fn config(default_cases: u32) -> Config {
    let cases = std::env::var("VISA_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    Config {
        cases,
        // Shrunk failures are reported in the test output; nothing is written to the tree.
        failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
        ..Config::default()
    }
}

/// Runs `f` on an 8 MiB thread, the stack a platform's main thread usually has.
fn on_8_mib<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn_scoped(s, f)
            .expect("spawn a fuzz thread")
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// The fixtures' texts: the seed corpus.
fn corpus() -> &'static [String] {
    static CORPUS: OnceLock<Vec<String>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        fn walk(dir: &Path, out: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|e| e == "rs")
                    && let Ok(text) = std::fs::read_to_string(&p)
                {
                    out.push(text);
                }
            }
        }
        let mut out = Vec::new();
        walk(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
            &mut out,
        );
        out
    })
}

/// The bodies of every `m![...]` in the corpus (up to the first `]` that balances).
fn mapping_corpus() -> &'static [String] {
    static BODIES: OnceLock<Vec<String>> = OnceLock::new();
    BODIES.get_or_init(|| {
        let mut out = Vec::new();
        for text in corpus() {
            for (at, _) in text.match_indices("m![") {
                let body = &text[at + 3..];
                let mut depth = 1;
                for (k, c) in body.char_indices() {
                    match c {
                        '[' => depth += 1,
                        ']' => depth -= 1,
                        '\n' => break,
                        _ => {}
                    }
                    if depth == 0 {
                        out.push(body[..k].to_string());
                        break;
                    }
                }
            }
        }
        out.sort();
        out.dedup();
        out
    })
}

/// Every diagnostic points inside `text`, on character boundaries.
fn spans_are_valid(text: &str, diags: &[Diagnostic]) -> Result<(), TestCaseError> {
    for d in diags {
        prop_assert!(
            text.get(d.span.range()).is_some(),
            "{} at {:?} outside a text of {} bytes",
            d.code(),
            d.span,
            text.len()
        );
    }
    Ok(())
}

fn floor_boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Fragments a broken editor buffer or a hostile user would type.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ">>",
    "m![",
    "axes![",
    "i![",
    ";",
    ",",
    ".",
    "::",
    " # ",
    " / ",
    " % ",
    " = ",
    "$(",
    ": ",
    "'",
    "\"",
    "r#\"",
    "/*",
    "*/",
    "//",
    "\n",
    "fn ",
    "let x = ",
    "type T = m![A];",
    "ctx.main.begin(",
    ".fetch::<i8, m![1], m![A]>()",
    ".commit::<m![A]>(0)",
    "#[device(chip = 1)]",
    "0",
    "1 << 63",
    "18446744073709551616",
    "A::SIZE",
    "{ T }",
    "é",
    "\u{0}",
    "…",
];

/// One edit of a text: where, how long, and what.
#[derive(Clone, Debug)]
enum Mutation {
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0..200usize).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), 0..400usize).prop_map(|(a, n)| Mutation::Duplicate(a, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(a, t)| Mutation::Insert(a, t)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let at = |a: usize| floor_boundary(text, a % (text.len() + 1));
    match *m {
        Mutation::Delete(a, n) => {
            let (s, e) = (at(a), floor_boundary(text, at(a) + n));
            format!("{}{}", &text[..s], &text[e..])
        }
        Mutation::Duplicate(a, n) => {
            let (s, e) = (at(a), floor_boundary(text, at(a) + n));
            format!("{}{}{}", &text[..e], &text[s..e], &text[e..])
        }
        Mutation::Insert(a, t) => {
            let s = at(a);
            format!("{}{}{}", &text[..s], TOKENS[t], &text[s..])
        }
        Mutation::Truncate(a) => text[..at(a)].to_string(),
    }
}

/// A fixture with a few mutations.
fn mutated_fixture() -> impl Strategy<Value = String> {
    (
        any::<prop::sample::Index>(),
        prop::collection::vec(mutation(), 0..5),
    )
        .prop_map(|(pick, muts)| {
            let corpus = corpus();
            let mut text = corpus[pick.index(corpus.len())].clone();
            for m in &muts {
                text = apply(&text, m);
            }
            text
        })
}

/// A structure-aware mapping expression over the axes A, B, C.
fn mapping_expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("A".to_string()),
        Just("B".to_string()),
        Just("C".to_string()),
        Just("1".to_string()),
        Just("{ T }".to_string()),
    ];
    leaf.prop_recursive(6, 48, 4, |inner| {
        let size = prop_oneof![
            (1u64..40).prop_map(|n| n.to_string()),
            Just("A::SIZE".to_string()),
            Just("(B::SIZE * 2)".to_string()),
            Just("0".to_string()),
        ];
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["/", "%", "#", "="]),
                size.clone()
            )
                .prop_map(|(e, op, n)| format!("{e} {op} {n}")),
            prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.join(", ")),
            inner.clone().prop_map(|e| format!("[{e}]")),
            prop::collection::vec((inner, 0u64..5), 1..4).prop_map(|v| {
                let terms: Vec<String> = v.iter().map(|(e, n)| format!("[{e}]: {n}")).collect();
                format!("$({})", terms.join(", "))
            }),
        ]
    })
}

/// A text of deep nesting: runs of one construct each, left open and closed at the end.
fn deep_text() -> impl Strategy<Value = (String, u32)> {
    prop::collection::vec((0..6u8, 1..200usize), 1..8).prop_map(|runs| {
        let mut open = String::new();
        let mut close = String::new();
        let mut brackets = 0u32;
        let mut most = 0u32;
        for (kind, n) in runs {
            for _ in 0..n {
                match kind {
                    0 => {
                        open.push('(');
                        close.insert(0, ')');
                        brackets += 1;
                    }
                    1 => {
                        open.push('{');
                        close.insert(0, '}');
                        brackets += 1;
                    }
                    2 => {
                        open.push('[');
                        close.insert(0, ']');
                        brackets += 1;
                    }
                    3 => open.push_str("a.b()."),
                    4 => open.push_str("1 + "),
                    _ => open.push_str("m!["),
                }
                if kind == 5 {
                    close.insert(0, ']');
                    brackets += 1;
                }
                most = most.max(brackets);
            }
        }
        // The file and the function body are two more levels.
        (format!("fn f() {{ let x = {open}1{close}; }}"), most + 2)
    })
}

proptest! {
    #![proptest_config(config(1024))]

    /// The `m!`, `axes!` and `i!` parsers accept any text and point inside it.
    #[test]
    fn mapping_parsers_take_any_text(
        seed in any::<prop::sample::Index>(),
        muts in prop::collection::vec(mutation(), 0..4),
        noise in "[\\[\\]{}()$#%/=:,;A-C0-9' !@*+-]{0,40}",
    ) {
        let bodies = mapping_corpus();
        let mut body = bodies[seed.index(bodies.len())].clone();
        for m in &muts {
            body = apply(&body, m);
        }
        for text in [body.as_str(), noise.as_str()] {
            let problems = on_8_mib(|| {
                let mut out = Vec::new();
                if let Err(p) = parse::parse_mapping(text) {
                    out.push(p);
                }
                out.extend(parse::parse_axes(text).1);
                if let Err(p) = parse::parse_index(text) {
                    out.push(p);
                }
                out
            });
            for p in problems {
                let span = match &p {
                    parse::ParseProblem::Syntax(s, _)
                    | parse::ParseProblem::Unsupported(s, _)
                    | parse::ParseProblem::Overflow(s, _)
                    | parse::ParseProblem::TooDeep(s, _) => *s,
                };
                prop_assert!(text.get(span.range()).is_some(), "{p:?} in {text:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// The mapping algebra and `eval`: any well-formed expression under any sizes evaluates
    /// without panicking, `map` agrees with `map_all`, preimages stay bounded, and the normal
    /// form evaluates again to the same size.
    #[test]
    fn mapping_algebra_and_eval(
        sizes in (1u64..70, 1u64..70, prop_oneof![1u64..70, Just(1u64 << 40)]),
        alias in mapping_expr(),
        expr in mapping_expr(),
        at in prop::collection::vec(any::<u64>(), 1..6),
    ) {
        let axes = format!("A = {}, B = {}, C = {}", sizes.0, sizes.1, sizes.2);
        // `{ T }` needs an alias: evaluate through a file when the expression escapes it.
        let text = format!("axes![{axes}];\ntype T = m![{alias}];\ntype E = m![{expr}];\n");
        let diags = on_8_mib(|| check_text(&text));
        spans_are_valid(&text, &diags)?;
        let ev = on_8_mib(|| visa_analysis::evaluate(&axes, &expr));
        spans_are_valid(&ev.source, &ev.diagnostics)?;
        if let Some(layout) = &ev.layout {
            for &i in at.iter().chain([0, layout.size.saturating_sub(1), layout.size].iter()) {
                let i = if layout.size > 0 { i % layout.size.saturating_add(1) } else { i };
                let all = layout.map_all(i);
                prop_assert!(all.len() <= MAX_PREIMAGES);
                prop_assert_eq!(layout.map(i), all.into_iter().next());
            }
            let again = on_8_mib(|| visa_analysis::evaluate(&axes, &layout.to_expr()));
            if let Some(l2) = &again.layout {
                prop_assert_eq!(l2.size, layout.size, "{} -> {}", expr, layout.to_expr());
            }
        }
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// The kernel model and every rule on a mutated fixture: no panic, spans inside the text,
    /// and each function's model points inside the text too.
    #[test]
    fn whole_analysis_on_mutated_fixtures(text in mutated_fixture()) {
        let file = on_8_mib(|| db::analyse_text(&text));
        spans_are_valid(&text, &file.diagnostics())?;
        for (start, f) in &file.fns {
            let end = *start as usize + f.model.span.end as usize;
            prop_assert!(end <= text.len(), "{} ends past the text", f.model.name);
        }
    }

    /// Editing a file in a database gives what a fresh analysis of the edited text gives.
    #[test]
    fn incremental_analysis_matches_a_fresh_one(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec(mutation(), 1..4),
    ) {
        let corpus = corpus();
        let first = corpus[pick.index(corpus.len())].clone();
        let result = on_8_mib(move || {
            use salsa::Setter;
            let mut db = Database::default();
            // The path `analyse_text` gives its file: a fix of a macro's own text names the
            // file it edits, which is this one.
            let file = SourceFile::new(&db, first.clone(), std::path::PathBuf::from("<text>"));
            let settings = db::Settings::new(&db, visa_analysis::Config::default());
            db::file_analysis(&db, file, settings);
            let mut text = first;
            let mut pairs = Vec::new();
            for e in &edits {
                text = apply(&text, e);
                file.set_text(&mut db).to(text.clone());
                let incremental = db::file_analysis(&db, file, settings).diagnostics();
                pairs.push((incremental, db::analyse_text(&text).diagnostics()));
            }
            pairs
        });
        for (incremental, fresh) in result {
            prop_assert_eq!(incremental, fresh);
        }
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// Deep nesting of every shape: never a stack overflow on 8 MiB, and past the limit the
    /// file is refused with `VL-005` (the estimate is never below the real depth).
    #[test]
    fn deep_nesting_never_overflows((text, depth) in deep_text()) {
        let diags = on_8_mib(|| check_text(&text));
        spans_are_valid(&text, &diags)?;
        if depth > MAX_NESTING {
            prop_assert!(diags.iter().any(|d| d.code() == "VL-005"), "depth {depth}");
        }
    }
}

proptest! {
    #![proptest_config(config(16))]

    /// A file of many kernels: fixtures concatenated, with a few edits between them.
    #[test]
    fn files_of_many_kernels(
        picks in prop::collection::vec(any::<prop::sample::Index>(), 2..24),
        muts in prop::collection::vec(mutation(), 0..3),
    ) {
        let corpus = corpus();
        let mut text = String::new();
        for p in &picks {
            text.push_str(&corpus[p.index(corpus.len())]);
            text.push('\n');
        }
        for m in &muts {
            text = apply(&text, m);
        }
        let diags = on_8_mib(|| check_text(&text));
        spans_are_valid(&text, &diags)?;
    }
}

#[test]
fn the_corpus_is_seeded_from_the_fixtures() {
    assert!(corpus().len() > 100, "{} fixtures", corpus().len());
    assert!(
        mapping_corpus().len() > 100,
        "{} mappings",
        mapping_corpus().len()
    );
}

/// An edit of a helper's body alone (`(parked, vrf + SLOT)` to `(parked, vrf)`, its signature
/// unchanged) reaches its callers' analysis: the environment that evaluates the helper's
/// returned values is built from its body, which is part of the item as the environment
/// keeps it. Before, the incremental analysis kept the body before the edit (found by
/// `incremental_analysis_matches_a_fresh_one`).
#[test]
fn an_edit_of_a_helpers_body_alone_reaches_its_callers() {
    let before = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/rules/CAP-007-returned-address.rs"),
    )
    .expect("fixture");
    let after = before.replace("(parked, vrf + SLOT)", "(parked, vrf)");
    assert_ne!(before, after);
    let (incremental, fresh) = on_8_mib(move || {
        use salsa::Setter;
        let mut db = Database::default();
        let file = SourceFile::new(&db, before, std::path::PathBuf::from("<text>"));
        let settings = db::Settings::new(&db, visa_analysis::Config::default());
        let first = db::file_analysis(&db, file, settings).diagnostics();
        assert!(first.iter().any(|d| d.code() == "CAP-007"), "{first:?}");
        file.set_text(&mut db).to(after.clone());
        let incremental = db::file_analysis(&db, file, settings).diagnostics();
        (incremental, db::analyse_text(&after).diagnostics())
    });
    assert!(
        !incremental.iter().any(|d| d.code() == "CAP-007"),
        "{incremental:?}"
    );
    assert_eq!(incremental, fresh);
}
