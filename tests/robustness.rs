//! Hostile input must not kill or stall visa-lint (docs/robustness.md).
//!
//! Every nesting shape that used to overflow the stack is analysed just below its documented
//! limit, on an 8 MiB thread (the platform's usual main thread) and on the thread
//! `run_with_stack` gives the command line, and is refused with one `VL-005` just above it and
//! far above it. The `eval` search and SCH-001 are checked at sizes that used to stall or be
//! skipped.

use std::time::{Duration, Instant};
use visa_analysis::mapping::parse::MAX_MAPPING_NESTING;
use visa_analysis::syntax::limits::MAX_NESTING;
use visa_analysis::{Diagnostic, check_text, run_with_stack};
use visa_lint_tests::run_cli;

/// Runs `f` on a thread with a stack of `bytes`.
fn on_stack<T: Send>(bytes: usize, f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(bytes)
            .spawn_scoped(s, f)
            .expect("spawn a test thread")
            .join()
            .expect("the analysis does not panic")
    })
}

const MIB: usize = 1 << 20;

/// A nesting shape: the text with `k` levels, the nesting estimate of that text at `k = 0`
/// (so `k` levels reach `base + k`), the limit that applies, and the token `VL-005` points at.
struct Shape {
    name: &'static str,
    text: fn(usize) -> String,
    base: u32,
    limit: u32,
    token: &'static str,
}

fn shapes() -> Vec<Shape> {
    vec![
        Shape {
            name: "nested braces",
            // The file, the function body, then k blocks.
            text: |k| format!("fn f() {{ {}{} }}", "{".repeat(k), "}".repeat(k)),
            base: 2,
            limit: MAX_NESTING,
            token: "{",
        },
        Shape {
            name: "nested parentheses",
            // The file, the body with its `=`, then k parentheses.
            text: |k| format!("fn f() {{ let x = {}1{}; }}", "(".repeat(k), ")".repeat(k)),
            base: 3,
            limit: MAX_NESTING,
            token: "(",
        },
        Shape {
            name: "method chain",
            // The file, the body with its `=`, k dots, and the last call's parentheses.
            text: |k| format!("fn f() {{ let x = a{}; }}", ".b()".repeat(k)),
            base: 4,
            limit: MAX_NESTING,
            token: "(",
        },
        Shape {
            name: "f()()()...",
            // The file, the body with its `=`, one level per call after the first.
            text: |k| format!("fn f() {{ let x = f{}; }}", "()".repeat(k)),
            base: 3,
            limit: MAX_NESTING,
            token: "(",
        },
        Shape {
            name: "1 + 1 + ...",
            text: |k| format!("fn f() {{ let x = 1{}; }}", " + 1".repeat(k)),
            base: 3,
            limit: MAX_NESTING,
            token: "+",
        },
        Shape {
            name: "Vec<Vec<...>>",
            // The file, the parameter list with its `:`, then k open angles.
            text: |k| format!("fn f(x: {}u8{}) {{}}", "Vec<".repeat(k), ">".repeat(k)),
            base: 3,
            limit: MAX_NESTING,
            token: "<",
        },
        Shape {
            name: "m![[[...]]]",
            // The mapping body, then k groups.
            text: |k| {
                format!(
                    "axes![A = 4];\ntype T = m![{}A{}];",
                    "[".repeat(k),
                    "]".repeat(k)
                )
            },
            base: 1,
            limit: MAX_MAPPING_NESTING,
            token: "[",
        },
        Shape {
            name: "m![A # 4 # 4 ...]",
            text: |k| format!("axes![A = 4];\ntype T = m![A{}];", " # 4".repeat(k)),
            base: 1,
            limit: MAX_MAPPING_NESTING,
            token: "#",
        },
    ]
}

/// The `VL-005` diagnostics of a text, with the token each points at.
fn too_deep(text: &str) -> Vec<(Diagnostic, String)> {
    check_text(text)
        .into_iter()
        .filter(|d| d.code() == "VL-005")
        .map(|d| {
            let token = text[d.span.range()].to_string();
            (d, token)
        })
        .collect()
}

#[test]
fn every_nesting_shape_is_analysed_at_its_limit_on_8_mib_and_on_the_sized_thread() {
    for shape in shapes() {
        let at_limit = (shape.text)((shape.limit - shape.base) as usize);
        let on_8_mib = on_stack(8 * MIB, || too_deep(&at_limit));
        assert!(on_8_mib.is_empty(), "{}: {on_8_mib:?}", shape.name);
        let sized = run_with_stack(|| too_deep(&at_limit));
        assert!(sized.is_empty(), "{}: {sized:?}", shape.name);
    }
}

#[test]
fn every_nesting_shape_is_refused_one_level_past_its_limit() {
    for shape in shapes() {
        let past = (shape.text)((shape.limit - shape.base + 1) as usize);
        let found = on_stack(8 * MIB, || too_deep(&past));
        assert_eq!(found.len(), 1, "{}: {found:?}", shape.name);
        assert_eq!(found[0].1, shape.token, "{}", shape.name);
    }
}

#[test]
fn far_past_the_limits_the_prescan_answers_before_anything_recurses() {
    // Depths that overflowed 8 MiB before the pre-scan (issue: braces from 7,500, parentheses
    // 9,400, chains 5,600, `1 + 1` 26,000, `Vec<Vec<..>>` 5,300, `m![[[..]]]` 8,400,
    // `m![A # 4 ..]` 15,000), analysed on the test harness's own 2 MiB thread.
    for shape in shapes() {
        let text = (shape.text)(30_000);
        let found = too_deep(&text);
        assert_eq!(found.len(), 1, "{}", shape.name);
        // The whole file is refused: nothing else is reported.
        assert_eq!(check_text(&text).len(), 1, "{}", shape.name);
    }
}

#[test]
fn the_message_says_what_the_limit_is() {
    let text = format!("fn f() {{ {} }}", "(".repeat(300));
    let found = too_deep(&text);
    expect_test::expect![[r#"
        "nesting too deep: brackets, operators and chained calls reach an estimated depth of 257 here; visa-lint analyses files nested up to 256 levels and does not analyse this file"
    "#]]
    .assert_debug_eq(&found[0].0.message);
}

#[test]
fn eval_refuses_a_deep_mapping_with_vl_005_and_exit_status_1() {
    for k in [64, 30_000] {
        let deep = format!("m![{}A{}]", "[".repeat(k), "]".repeat(k));
        let (code, out) = on_stack(8 * MIB, || run_cli(&["eval", "--axes", "A = 4", &deep]));
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("VL-005"), "{out}");
        let pads = format!("m![A{}]", " # 4".repeat(k));
        let (code, out) = on_stack(8 * MIB, || run_cli(&["eval", "--axes", "A = 4", &pads]));
        assert_eq!(code, 1, "{out}");
        assert!(out.contains("VL-005"), "{out}");
    }
    // One level less is evaluated.
    let deep = format!("m![{}A{}]", "[".repeat(63), "]".repeat(63));
    let (code, out) = on_stack(8 * MIB, || {
        run_cli(&["eval", "--axes", "A = 4", &deep, "--format", "json"])
    });
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(r#""size":4"#), "{out}");
}

/// `eval` of a linear combination solved the coefficients by trying every value of every term:
/// `$(A: 2, B: 2, C: 2)` with axes of 65,536 ran for minutes on an odd position.
#[test]
fn eval_linear_combination_preimages_without_enumerating() {
    let start = Instant::now();
    let (code, out) = run_cli(&[
        "eval",
        "--axes",
        "A = 65536, B = 65536, C = 65536",
        "m![$(A: 2, B: 2, C: 2)]",
        "--index",
        "65535",
        "--index",
        "65534",
        "--index",
        "393210",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    // Every coefficient is even: no odd position holds an index.
    assert_eq!(v["map"]["65535"], serde_json::Value::Null);
    // 2A + 2B + 2C = 65534 has many solutions; the first 256 are reported, each exact.
    let all = v["map"]["65534"].as_array().expect("several preimages");
    assert_eq!(all.len(), 256);
    for idx in all {
        let get = |k: &str| idx.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
        assert_eq!(2 * (get("A") + get("B") + get("C")), 65534, "{idx}");
    }
    // The last position: every term at its largest value.
    assert_eq!(
        v["map"]["393210"],
        serde_json::json!({"A": 65535, "B": 65535, "C": 65535})
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
}

#[test]
fn eval_linear_combination_with_mostly_padding_terms_stays_bounded() {
    // Each term is valid at 0 and 1 only, but spans 65,536 positions: the search cannot rule
    // coefficients out by size alone and stops at its step budget.
    let start = Instant::now();
    let (code, out) = run_cli(&[
        "eval",
        "--axes",
        "A = 2, B = 2, C = 2, D = 2",
        "m![$(A # 65536: 1, B # 65536: 1, C # 65536: 1, D # 65536: 1)]",
        "--index",
        "3",
        "--index",
        "100000",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["map"]["100000"], serde_json::Value::Null);
    assert_eq!(v["map"]["3"].as_array().map(Vec::len), Some(4));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
}

/// A device kernel that copies `n` HBM tensors of 16 bytes per slice into DM at
/// `address(i)`, and keeps every one of them live until the end.
fn many_live_tensors(n: usize, address: impl Fn(usize) -> u64) -> String {
    let mut params = String::new();
    let mut body = String::new();
    let mut tail = String::new();
    for i in 0..n {
        params.push_str(&format!(", x{i}: &HbmTensor<bf16, m![1], m![S, A]>"));
        body.push_str(&format!(
            "    let y{i} = x{i}.to_dm::<m![1 # 2], m![S], m![A]>(&mut ctx.tdma, {});\n",
            address(i)
        ));
        tail.push_str(&format!(
            "    y{i}.to_hbm(&mut ctx.tdma, {});\n",
            (1u64 << 30) + (i as u64) * 4096
        ));
    }
    format!(
        "axes![S = 256, A = 8];\n#[device(chip = 1)]\nfn kernel(ctx: &mut Context{params}) {{\n{body}{tail}}}\n"
    )
}

fn sch_001(text: &str) -> Vec<Diagnostic> {
    check_text(text)
        .into_iter()
        .filter(|d| d.code() == "SCH-001")
        .collect()
}

#[test]
fn sch_001_checks_hundreds_of_live_tensors() {
    // 201 tensors at address 0, all live until the end (402 chains: past the 400 where the
    // check used to stop): every write after the first lands on `y0`.
    let text = many_live_tensors(201, |_| 0);
    let found = sch_001(&text);
    assert_eq!(found.len(), 200);
    assert!(found.iter().all(|d| d.message.contains("overlaps `y0`")));
    // Each fix moves the tensor past every live one.
    let last = found.last().map(|d| d.message.clone()).unwrap_or_default();
    assert!(last.contains("`y200` occupies DM [0, 16)"), "{last}");
    // The pairwise hazard checks are not run at this size, and the function says so once.
    let skipped: Vec<String> = check_text(&text)
        .into_iter()
        .filter(|d| d.code() == "VL-007")
        .map(|d| d.message)
        .collect();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].contains("402 chains"), "{}", skipped[0]);
    // Below the bound nothing is skipped.
    let small = many_live_tensors(100, |_| 0);
    assert!(check_text(&small).iter().all(|d| d.code() != "VL-007"));
}

#[test]
fn sch_001_stays_silent_on_a_large_clean_kernel() {
    // 600 tensors side by side, 16 bytes apart (1,200 chains).
    let start = Instant::now();
    let text = many_live_tensors(600, |i| i as u64 * 16);
    assert!(sch_001(&text).is_empty());
    // And one that overlaps its neighbour is found among them.
    let text = many_live_tensors(600, |i| {
        if i == 477 {
            476 * 16 + 8
        } else {
            i as u64 * 16
        }
    });
    let found = sch_001(&text);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].message.contains("`y477`"), "{}", found[0].message);
    assert!(
        found[0].message.contains("overlaps `y476`"),
        "{}",
        found[0].message
    );
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "took {:?}",
        start.elapsed()
    );
}

/// `k` aliases, each escaping the one before: `type T3 = m![[{ T2 }] # 5];`, … Every alias
/// adds a level to the value (a window of a window …) that no single body shows, and lowering
/// follows the escapes recursively: 5,000 of them overflowed 8 MiB.
fn alias_chain(k: usize, body: impl Fn(usize) -> String) -> String {
    let mut text = String::from("axes![A = 2];\ntype T0 = m![A];\n");
    for i in 1..=k {
        text.push_str(&format!("type T{i} = m![{}];\n", body(i)));
    }
    text
}

#[test]
fn alias_chains_are_bounded_at_64_levels() {
    let windows = |i: usize| format!("[{{ T{} }}] # {}", i - 1, i + 2);
    let escapes = |i: usize| format!("{{ T{} }}", i - 1);
    for body in [&windows as &(dyn Fn(usize) -> String + Sync), &escapes] {
        // 63 levels are evaluated.
        assert!(too_deep(&alias_chain(63, body)).is_empty());
        // Past 64, each alias that reaches too deep is reported (and not evaluated)…
        let text = alias_chain(100, body);
        let found = on_stack(8 * MIB, || too_deep(&text));
        assert!(!found.is_empty() && found.len() <= 37, "{}", found.len());
        // …and 5,000 no longer overflow the stack.
        let text = alias_chain(5000, body);
        let found = on_stack(8 * MIB, || too_deep(&text));
        assert!(found.len() > 4900, "{}", found.len());
    }
}

#[test]
fn alias_cycle_search_is_not_exponential() {
    // Each alias escapes the next one twice: the cycle search used to walk all 2^k paths.
    let mut text = String::from("axes![A = 2];\n");
    for i in 0..40 {
        text.push_str(&format!(
            "type T{i} = m![{{ T{0} }} / 2, {{ T{0} }} % 2];\n",
            i + 1
        ));
    }
    text.push_str("type T40 = m![{ T0 }];\n");
    let start = Instant::now();
    let cycles = check_text(&text)
        .into_iter()
        .filter(|d| d.message.starts_with("mapping alias cycle"))
        .count();
    assert_eq!(cycles, 1);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
}
