//! `docs/rules.md` is generated from the rule registry; this test keeps it current.

#[test]
fn rules_reference_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let want = visa_analysis::rules::registry::markdown();
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        std::fs::write(&path, &want).expect("write docs/rules.md");
        panic!("docs/rules.md was stale and has been regenerated: review and commit it");
    }
}
