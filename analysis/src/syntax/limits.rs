//! A cheap pre-scan that refuses files nested too deeply to analyse safely.
//!
//! The Rust parser and every walk over its tree recurse once per level of nesting, so a file
//! of ten thousand nested braces, or a method chain of ten thousand calls, would overflow the
//! stack and take the process (or a language server) down with it. Before anything parses a
//! file, [`check_nesting`] estimates, in one pass over the text, how deep the syntax tree can
//! get, and past [`MAX_NESTING`] the file is reported once ([`TooDeep`], VL-005) instead of
//! analysed.
//!
//! The estimate is conservative: it is never smaller than the depth of the tree the parser
//! builds, for every construct that nests. Strings, characters and comments are skipped. Each
//! open `(`, `[` or `{` adds one level. Inside a level every operator character (`+`, `*`,
//! `.`, `?`, `:`, `=`, …) and the keywords that chain (`as`, `else`, `return`, `break`) add
//! one more, because `a.b().c()`, `1 + 1 + 1`, `x as u8 as u16` and `a::b::c` nest one tree
//! level per link. `<` adds one that only its `>` (or a `;`) takes back, so
//! `Vec<Vec<Vec<u8>>>` counts three. A `,` or `;` ends the links of its level (the next
//! element starts afresh), and so does a `}` that is not followed by an operator (a statement
//! ended by a block). The documented limit is in `docs/robustness.md`.

use crate::diagnostic::Span;

/// The deepest estimated nesting visa-lint analyses. Real kernels stay below 100; the tests
/// in `tests/robustness.rs` check that every nesting shape analyses without overflow on an
/// 8 MiB stack just below this limit and is refused with `VL-005` just above it.
pub const MAX_NESTING: u32 = 256;

/// One open bracket level.
#[derive(Clone, Copy, Default)]
struct Level {
    /// Operator links since the last `,` or `;` in this level.
    links: u32,
    /// Unclosed `<` since the last `;` in this level.
    angles: u32,
}

impl Level {
    fn cost(self) -> u32 {
        1 + self.links + self.angles
    }
}

/// A file nested past the limit: the token where the estimate goes past it, the estimate
/// there, and the limit. (`rules::tool` reports it as VL-005.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooDeep {
    pub at: Span,
    pub depth: u32,
    pub limit: u32,
}

/// The nesting estimate of `text` (see the module documentation) goes past [`MAX_NESTING`]:
/// where it does.
pub fn check_nesting(text: &str) -> Option<TooDeep> {
    check_nesting_with(text, MAX_NESTING)
}

/// [`check_nesting`] with another limit.
pub fn check_nesting_with(text: &str, limit: u32) -> Option<TooDeep> {
    let (at, depth) = first_too_deep(text, limit)?;
    Some(TooDeep { at, depth, limit })
}

/// Where the nesting estimate of `text` first goes past `limit`: the token, and the estimate
/// there. Mapping bodies are bounded with it too (`mapping::parse`).
pub fn first_too_deep(text: &str, limit: u32) -> Option<(Span, u32)> {
    scan(text.as_bytes(), 0, limit, &mut |_| false)
}

/// The scan of [`first_too_deep`] from `start`, where the state is fresh (the start of the
/// text, or a checkpoint). At each *checkpoint*, a place where the state is fresh again (after
/// a `;` or a `}` that closes everything), `checkpoint` is told the offset, and the scan stops
/// there (with no verdict) when it answers `true`. Nothing the scan does at or after a
/// checkpoint reads the text before the checkpoint's last byte.
fn scan(
    b: &[u8],
    start: usize,
    limit: u32,
    checkpoint: &mut impl FnMut(usize) -> bool,
) -> Option<(Span, u32)> {
    let n = b.len();
    // The file itself is level 0.
    let mut levels: Vec<Level> = vec![Level::default()];
    // The sum of the costs of every level in `levels`.
    let mut depth: u32 = 1;
    let mut i = start;
    let too_deep =
        |at: usize, len: usize, depth: u32| Some((Span::new(at, (at + len).min(n)), depth));
    while i < n {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < n && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = skip_block_comment(b, i);
                continue;
            }
            b'"' => {
                i = skip_string(b, i + 1);
                continue;
            }
            b'r' | b'b' | b'c' if starts_raw_or_byte_string(b, i) => {
                i = skip_prefixed_string(b, i);
                continue;
            }
            b'\'' => {
                i = skip_char_or_lifetime(b, i);
                continue;
            }
            b'(' | b'[' | b'{' => {
                // `f()()()` and `a[0][0]` nest a call (an index) per group that follows a
                // closed one: a link of the enclosing level.
                if c != b'{' && follows_group(b, i) {
                    if let Some(l) = levels.last_mut() {
                        l.links += 1;
                    }
                    depth += 1;
                }
                levels.push(Level::default());
                depth += 1;
                if depth > limit {
                    return too_deep(i, 1, depth);
                }
            }
            b')' | b']' | b'}' => {
                if levels.len() > 1
                    && let Some(l) = levels.pop()
                {
                    depth -= l.cost();
                }
                if c == b'}' && !continues_expression(b, i + 1) {
                    reset(&mut levels, &mut depth, true);
                    if levels.len() == 1 && depth == 1 && checkpoint(i + 1) {
                        return None;
                    }
                }
            }
            b',' => reset(&mut levels, &mut depth, false),
            b';' => {
                reset(&mut levels, &mut depth, true);
                if levels.len() == 1 && depth == 1 && checkpoint(i + 1) {
                    return None;
                }
            }
            b'<' => {
                if let Some(l) = levels.last_mut() {
                    l.angles += 1;
                }
                depth += 1;
                if depth > limit {
                    return too_deep(i, 1, depth);
                }
            }
            b'-' | b'=' if b.get(i + 1) == Some(&b'>') => {
                // `->` and `=>`: one link, and not a closing angle.
                if let Some(l) = levels.last_mut() {
                    l.links += 1;
                }
                depth += 1;
                if depth > limit {
                    return too_deep(i, 2, depth);
                }
                i += 2;
                continue;
            }
            b'>' => {
                if let Some(l) = levels.last_mut()
                    && l.angles > 0
                {
                    l.angles -= 1;
                    depth -= 1;
                }
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'!' | b'&' | b'|' | b'=' | b'.' | b'?'
            | b':' | b'@' | b'#' | b'$' => {
                if let Some(l) = levels.last_mut() {
                    l.links += 1;
                }
                depth += 1;
                if depth > limit {
                    return too_deep(i, 1, depth);
                }
            }
            c if c == b'_' || c.is_ascii_alphabetic() => {
                let start = i;
                while i < n && (b[i] == b'_' || b[i].is_ascii_alphanumeric()) {
                    i += 1;
                }
                if matches!(
                    &b[start..i],
                    b"as" | b"else" | b"return" | b"break" | b"yield" | b"move" | b"dyn" | b"impl"
                ) {
                    if let Some(l) = levels.last_mut() {
                        l.links += 1;
                    }
                    depth += 1;
                    if depth > limit {
                        return too_deep(start, i - start, depth);
                    }
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The pre-scan's verdict on a text ([`check_nesting`]) with its checkpoints, so that the
/// verdict on an edited text is reached by scanning from the last checkpoint before the edit
/// to the first one after it where the old scan was at the same place
/// ([`Nesting::after_edit`]): a keystroke does not rescan the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nesting {
    pub too_deep: Option<TooDeep>,
    checkpoints: Vec<u32>,
}

impl Nesting {
    /// The whole text scanned.
    pub fn of(text: &str) -> Nesting {
        let mut checkpoints = Vec::new();
        let found = scan(text.as_bytes(), 0, MAX_NESTING, &mut |at| {
            checkpoints.push(at as u32);
            false
        });
        Nesting::found(found, checkpoints)
    }

    fn found(found: Option<(Span, u32)>, checkpoints: Vec<u32>) -> Nesting {
        Nesting {
            too_deep: found.map(|(at, depth)| TooDeep {
                at,
                depth,
                limit: MAX_NESTING,
            }),
            checkpoints,
        }
    }

    /// The verdict on `new`, the text this one was made for with `old[start..old_end]`
    /// replaced (`new[start..new_end]` is what replaced it; both texts share what follows).
    /// Exactly [`Nesting::of`]`(new)`, scanning only around the edit when this text passed.
    pub fn after_edit(&self, new: &str, start: usize, old_end: usize, new_end: usize) -> Nesting {
        if self.too_deep.is_some() || new_end < start || old_end < start {
            return Nesting::of(new);
        }
        let (Ok(start32), Ok(old_end32), Ok(new_end32)) = (
            u32::try_from(start),
            u32::try_from(old_end),
            u32::try_from(new_end),
        ) else {
            return Nesting::of(new);
        };
        // The scan resumes at the last checkpoint but one before the edit: the texts agree
        // before the edit, and a checkpoint after a `}` looked ahead (is the expression going
        // on?) up to the next token, which may be in the edit for the last one, never for one
        // with another checkpoint's `;` or `}` after it.
        let before = self.checkpoints.partition_point(|&c| c <= start32);
        let keep = before.saturating_sub(1);
        let from = if keep == 0 {
            0
        } else {
            self.checkpoints[keep - 1]
        };
        let mut checkpoints: Vec<u32> = self.checkpoints[..keep].to_vec();
        let mut rejoined = None;
        let found = scan(new.as_bytes(), from as usize, MAX_NESTING, &mut |at| {
            let at = at as u32;
            checkpoints.push(at);
            // Past the edit (the byte before `at` is the shared text's), at a checkpoint the
            // old scan passed too: from here on both scans read the same bytes.
            if at > new_end32 {
                let old_at = at - new_end32 + old_end32;
                if let Ok(k) = self.checkpoints.binary_search(&old_at) {
                    rejoined = Some(k);
                    return true;
                }
            }
            false
        });
        if let Some(k) = rejoined {
            let shift = |c: u32| c - old_end32 + new_end32;
            checkpoints.extend(self.checkpoints[k + 1..].iter().map(|&c| shift(c)));
        }
        Nesting::found(found, checkpoints)
    }
}

/// Ends the links (and with `all`, the open angles) of the innermost level.
fn reset(levels: &mut [Level], depth: &mut u32, all: bool) {
    if let Some(l) = levels.last_mut() {
        *depth -= l.links;
        l.links = 0;
        if all {
            *depth -= l.angles;
            l.angles = 0;
        }
    }
}

/// Does the group opening at `i` directly follow a closed group (`)`, `]` or `}`)?
fn follows_group(b: &[u8], i: usize) -> bool {
    b[..i]
        .iter()
        .rev()
        .find(|c| !c.is_ascii_whitespace())
        .is_some_and(|c| matches!(c, b')' | b']' | b'}'))
}

/// After a `}`: does the expression go on (`{ 1 } + { 1 }`, `match x {}.f()`, `if {} else`)?
fn continues_expression(b: &[u8], mut i: usize) -> bool {
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        // Comments between the brace and the next token.
        if b.get(i) == Some(&b'/') && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b.get(i) == Some(&b'/') && b.get(i + 1) == Some(&b'*') {
            i = skip_block_comment(b, i);
            continue;
        }
        break;
    }
    match b.get(i) {
        None => false,
        Some(c) if b"+-*/%^!&|=.?:<>@#$([".contains(c) => true,
        Some(c) if c.is_ascii_alphabetic() => {
            let start = i;
            let mut j = i;
            while j < b.len() && (b[j] == b'_' || b[j].is_ascii_alphanumeric()) {
                j += 1;
            }
            matches!(&b[start..j], b"as" | b"else")
        }
        _ => false,
    }
}

/// `/* ... */`, nested as Rust nests them; returns the index after it.
fn skip_block_comment(b: &[u8], mut i: usize) -> usize {
    let mut open = 0u32;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            open += 1;
            i += 2;
        } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
            open -= 1;
            i += 2;
            if open == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// From just after an opening `"`: returns the index after the closing one.
fn skip_string(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// `r"`, `r#"`, `b"`, `br"`, `br#"`, `c"`, `cr#"` at `i`, not in the middle of an identifier.
fn starts_raw_or_byte_string(b: &[u8], i: usize) -> bool {
    if i > 0 && (b[i - 1] == b'_' || b[i - 1].is_ascii_alphanumeric()) {
        return false;
    }
    let mut j = i;
    if matches!(b[j], b'b' | b'c') {
        j += 1;
    }
    if b.get(j) == Some(&b'r') {
        j += 1;
        while b.get(j) == Some(&b'#') {
            j += 1;
        }
    }
    j > i && b.get(j) == Some(&b'"')
}

/// Skips a prefixed string starting at `i` (see [`starts_raw_or_byte_string`]).
fn skip_prefixed_string(b: &[u8], mut i: usize) -> usize {
    if matches!(b[i], b'b' | b'c') {
        i += 1;
    }
    if b.get(i) != Some(&b'r') {
        return skip_string(b, i + 1);
    }
    i += 1;
    let mut hashes = 0;
    while b.get(i) == Some(&b'#') {
        hashes += 1;
        i += 1;
    }
    i += 1; // the opening quote
    while i < b.len() {
        if b[i] == b'"'
            && b[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == b'#')
                .count()
                == hashes
        {
            return i + 1 + hashes;
        }
        i += 1;
    }
    i
}

/// The byte length of the UTF-8 character whose first byte is `c`.
fn utf8_len(c: u8) -> usize {
    match c {
        0..0x80 => 1,
        0xF0.. => 4,
        0xE0.. => 3,
        _ => 2,
    }
}

/// A character literal or a lifetime starting at the quote `i`, lexed as the Rust lexer does
/// (what it reads as one literal, `'( )'` included, hides no bracket from the parser either);
/// returns the index after it.
fn skip_char_or_lifetime(b: &[u8], i: usize) -> usize {
    let Some(&first) = b.get(i + 1) else {
        return i + 1;
    };
    let second = b.get(i + 1 + utf8_len(first)).copied();
    let id_start = first == b'_' || first.is_ascii_alphanumeric() || first >= 0x80;
    if second != Some(b'\'') && id_start {
        // A lifetime or label, or `'ab'` (a character literal of several characters).
        let mut j = i + 1;
        while j < b.len() && (b[j] == b'_' || b[j].is_ascii_alphanumeric() || b[j] >= 0x80) {
            j += 1;
        }
        return if b.get(j) == Some(&b'\'') { j + 1 } else { j };
    }
    // One character and its closing quote (a quote itself included).
    if first != b'\\' && second == Some(b'\'') {
        return i + 2 + utf8_len(first);
    }
    // Up to the closing quote; a `/` or a line end stops an unterminated one.
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\'' => return j + 1,
            b'/' => return j,
            b'\n' if b.get(j + 1) != Some(&b'\'') => return j,
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::Nesting;

    /// Every edit of `text` at `at` (removing `cut` bytes, inserting `with`): the verdict and
    /// checkpoints reached from the old scan are exactly those of a whole scan.
    fn same_after_edit(text: &str, at: usize, cut: usize, with: &str) {
        let new = format!("{}{}{}", &text[..at], with, &text[at + cut..]);
        let old = Nesting::of(text);
        let fast = old.after_edit(&new, at, at + cut, at + with.len());
        assert_eq!(fast, Nesting::of(&new), "edit at {at}: -{cut} +{with:?}");
    }

    #[test]
    fn an_edited_text_gets_the_whole_scan_s_verdict_and_checkpoints() {
        let text = "fn a() { let x = 1; }\nmod m {\n    fn b() { x.f() }\n}\nconst C: u8 = 1;\nfn c() { { 1 } + { 2 }; }\nfn d() {}\n";
        let edits = [
            "",
            ";",
            "}",
            "{",
            "(",
            ")",
            ".g()",
            "} + {",
            " as u8",
            "// x",
            "\"",
            "/*",
            "<",
            ">",
            "fn e() {}\n",
        ];
        for at in 0..=text.len() {
            for cut in 0..3.min(text.len() - at + 1) {
                for with in edits {
                    same_after_edit(text, at, cut, with);
                }
            }
        }
        // Deep nesting typed into one function, and taken out again.
        let deep = "(".repeat(300);
        same_after_edit(text, 9, 0, &deep);
        let nested = format!("{}{}{}", &text[..9], deep, &text[9..]);
        same_after_edit(&nested, 9, 300, "");
    }

    use super::*;

    fn depth_at(text: &str, limit: u32) -> Option<String> {
        check_nesting_with(text, limit).map(|t| text[t.at.range()].to_string())
    }

    #[test]
    fn every_nesting_shape_counts() {
        // Each of these has an estimated depth of 1 (file) + 4.
        for text in [
            "fn f() { { { {} } } }",
            "fn f() { ((((1)))); }",
            "a.b().c().d()",
            "1 + 1 + 1 + 1 + 1",
            "type T = Vec<Vec<Vec<Vec<u8>>>>;",
            "x as u8 as u16 as u32 as u64",
            "a::b::c",
            "f()()()()",
            "a[0][0][0][0]",
            "{ f }(1)(1)(1)(1)",
        ] {
            assert!(depth_at(text, 4).is_some(), "{text} is deeper than 4");
        }
    }

    #[test]
    fn separators_end_a_run() {
        // Ten statements of three links each never go deeper than 1 + 1 + 3.
        let body = "let a = b.c.d;\n".repeat(10);
        assert_eq!(depth_at(&format!("fn f() {{ {body} }}"), 6), None);
        let args = "b.c.d, ".repeat(10);
        assert_eq!(depth_at(&format!("f({args})"), 6), None);
        // Statements ended by a block do not add up either.
        let ifs = "if a < b { }\n".repeat(10);
        assert_eq!(depth_at(&format!("fn f() {{ {ifs} }}"), 6), None);
        // But a block followed by an operator continues the expression.
        assert_eq!(
            depth_at("{1} + {1} + {1} + {1} + {1}", 4).as_deref(),
            Some("{")
        );
    }

    #[test]
    fn strings_comments_and_chars_are_skipped() {
        let text = r##"
            // ((((((((((
            /* [[[[[[[[[[ /* nested */ ]]]] */
            let s = "((((((((((";
            let r = r#"{{{{{{{{{{"#;
            let c = '(';
            let d = '\'';
            let e = '\u{28}';
            fn f<'a>(x: &'a u8) {}
            // The lexer reads `', [[…'` as one (bad) character literal: no bracket in it.
            let g = ', [[[[[[[[[[';
        "##;
        assert_eq!(depth_at(text, 6), None);
    }

    #[test]
    fn the_finding_points_at_the_token_past_the_limit() {
        let text = "fn f() { [[[[[[[[ ]]]]]]]] }";
        let t = check_nesting_with(text, 5).expect("too deep");
        assert_eq!(t.at.start, 12);
        assert_eq!((t.depth, t.limit), (6, 5));
    }

    #[test]
    fn unbalanced_closers_do_not_underflow() {
        assert_eq!(depth_at(")))]]]}}}>>> a.b", 4), None);
    }
}
