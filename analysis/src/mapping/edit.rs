//! Reading and editing a written mapping: its top-level terms, and every `# N` padding fix of
//! every rule family, built here so the families agree on how a padded mapping is spelled.

use crate::diagnostic::{Edit, Span};

/// The edit that pads the mapping written as `text` at `span` to `n` positions: `m![C]` →
/// `m![C # 8]`, `m![B, C]` → `m![[B, C] # 16]`, `m![C # 6]` → `m![C # 8]`.
pub fn pad(text: &str, span: Span, n: u64) -> Option<Edit> {
    let text = text.trim();
    let inner = text.strip_prefix("m![")?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return None;
    }
    let mut depth = 0i32;
    let mut comma = false;
    let mut last_hash = None;
    for (i, c) in inner.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => comma = true,
            '#' if depth == 0 => last_hash = Some(i),
            _ => {}
        }
    }
    let new_inner = if comma {
        format!("[{inner}] # {n}")
    } else if let Some(h) = last_hash.filter(|&h| is_pad_amount(&inner[h + 1..])) {
        format!("{} # {n}", inner[..h].trim_end())
    } else {
        format!("{inner} # {n}")
    };
    Some(Edit {
        span,
        new_text: format!("m![{new_inner}]"),
    })
}

/// Whether `text` is a padding's amount, which a new padding replaces: a number (`72`) or
/// a braced Rust expression (`{ FLIT }`, `{ CFG.lanes * 2 }`).
fn is_pad_amount(text: &str) -> bool {
    let t = text.trim();
    let number = !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '_');
    let braced = t.starts_with('{')
        && t.ends_with('}')
        && t.matches('{').count() == t.matches('}').count()
        && !t[1..t.len() - 1].contains(['{', '}']);
    number || braced
}

/// Pads the innermost term of a written mapping: `m![M, K, W]` → `m![M, K, W # n]`,
/// `m![B, A # 72]` → `m![B, A # n]`. `None` for other innermost terms.
pub fn pad_last_term(text: &str, n: u64) -> Option<String> {
    let inner = text.trim().strip_prefix("m![")?.strip_suffix(']')?;
    let mut depth = 0i32;
    let mut last_comma = None;
    for (i, c) in inner.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => last_comma = Some(i),
            _ => {}
        }
    }
    let (head, last) = match last_comma {
        Some(i) => (inner[..=i].trim(), &inner[i + 1..]),
        None => ("", inner),
    };
    let t = last.trim();
    let base = match t.split_once('#') {
        Some((b, k)) => {
            if !is_pad_amount(k) {
                return None;
            }
            b.trim()
        }
        None => t,
    };
    if base.is_empty() || !base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let sep = if head.is_empty() { "" } else { " " };
    Some(format!("m![{head}{sep}{base} # {n}]"))
}

/// Pads the innermost term of a written mapping whatever its form: like [`pad_last_term`],
/// and a term with operators is padded as a whole (`m![B / 2, B % 2]` → `m![B / 2, B % 2 # 4]`,
/// `m![N = 3]` → `m![N = 3 # 4]`). `None` when the mapping is not written as `m![...]`.
pub fn pad_innermost(text: &str, n: u64) -> Option<String> {
    if let Some(t) = pad_last_term(text, n) {
        return Some(t);
    }
    let last = top_terms(text).len().checked_sub(1)?;
    pad_top_term(text, last, n)
}

/// Pads the `j`-th top-level term of a written mapping (0 the outermost) as a whole:
/// `m![H / 16, F % 32, H % 16]`, `j` = 1 → `m![H / 16, F % 32 # 33, H % 16]`; a padded term
/// gets its new amount. `None` when the mapping is not written as `m![...]`.
pub fn pad_top_term(text: &str, j: usize, n: u64) -> Option<String> {
    let text = text.trim();
    let inner = text.strip_prefix("m![")?.strip_suffix(']')?;
    let (at, last) = *top_terms(text).get(j)?;
    let head = &text[..at];
    // `{ Padding<m![1], W> }`, padded already: its padding is what changes.
    if let Some(repadded) = repad_type_form(last, n) {
        return Some(format!("{head}{repadded}{}", &text[at + last.len()..]));
    }
    let term = match last.rsplit_once('#') {
        Some((b, k)) if is_pad_amount(k) && b.matches('[').count() == b.matches(']').count() => {
            b.trim_end()
        }
        _ => last,
    };
    let tail = &text[at + last.len()..];
    (!inner.trim().is_empty()).then(|| format!("{head}{term} # {n}{tail}"))
}

/// A term written as an escaped padding type form (`{ Padding<m![1], W> }`), with its padding
/// amount `n` instead: `{ Padding<m![1], n> }`.
fn repad_type_form(term: &str, n: u64) -> Option<String> {
    let body = term.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let args = body.strip_prefix("Padding<")?.strip_suffix('>')?;
    let mut depth = 0i32;
    let mut comma = None;
    for (i, c) in args.char_indices() {
        match c {
            '[' | '(' | '{' | '<' => depth += 1,
            ']' | ')' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => comma = Some(i),
            _ => {}
        }
    }
    let padded = args[..comma?].trim();
    Some(format!("{{ Padding<{padded}, {n}> }}"))
}

/// A written mapping with a new innermost term of padding only, `1 # n`: `m![T % 2]` →
/// `m![T % 2, 1 # n]`, where each position keeps `n` elements of the packet that fills it,
/// its one element and `n - 1` of padding. `None` when the mapping is not written as `m![...]`.
pub fn append_padding(text: &str, n: u64) -> Option<String> {
    let inner = text.trim().strip_prefix("m![")?.strip_suffix(']')?.trim();
    Some(match inner {
        "" | "1" => format!("m![1 # {n}]"),
        _ => format!("m![{inner}, 1 # {n}]"),
    })
}

/// Splits the innermost term of a written mapping, a bare axis of `size` positions, so that
/// its innermost `kept` positions are padded to `n`: `m![S % 4, D]` with `D` of 64, 4 kept, 8
/// → `m![S % 4, D / 4, D % 4 # 8]`. `None` for another form, or when `kept` does not divide
/// the axis or is the whole of it (then [`pad_innermost`] applies).
pub fn split_innermost(
    text: &str,
    size: impl Fn(&str) -> Option<u64>,
    kept: u64,
    n: u64,
) -> Option<String> {
    let text = text.trim();
    text.strip_prefix("m![")?.strip_suffix(']')?;
    let (at, last) = *top_terms(text).last()?;
    let axis = last.trim();
    if !axis.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let s = size(axis)?;
    if kept == 0 || kept >= s || s % kept != 0 || n <= kept {
        return None;
    }
    let head = &text[..at];
    let tail = &text[at + last.len()..];
    Some(format!(
        "{head}{axis} / {kept}, {axis} % {kept} # {n}{tail}"
    ))
}

/// Moves the one top-level term of a written mapping that names `axis` to the innermost
/// place: `m![K, R % 8]` → `m![R % 8, K]` for `K`. `None` when no term or several name it, or
/// it is innermost already.
pub fn move_innermost(text: &str, axis: &str) -> Option<String> {
    let terms: Vec<&str> = top_terms(text).into_iter().map(|(_, t)| t).collect();
    let names = |t: &str| {
        t.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == axis)
    };
    let mut holding = terms.iter().enumerate().filter(|(_, t)| names(t));
    let (at, _) = holding.next()?;
    if holding.next().is_some() || at + 1 == terms.len() {
        return None;
    }
    let mut order: Vec<&str> = terms.clone();
    let moved = order.remove(at);
    order.push(moved);
    Some(format!("m![{}]", order.join(", ")))
}

/// The top-level terms of a written `m![...]` mapping with their offsets in `text`.
pub fn top_terms(text: &str) -> Vec<(usize, &str)> {
    let Some(open) = text.find("m![") else {
        return Vec::new();
    };
    let start = open + 3;
    let Some(close) = text.rfind(']') else {
        return Vec::new();
    };
    if close < start {
        return Vec::new();
    }
    let body = &text[start..close];
    let mut out = Vec::new();
    let (mut depth, mut from) = (0i32, 0usize);
    for (i, c) in body.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start + from, &body[from..i]));
                from = i + 1;
            }
            _ => {}
        }
    }
    out.push((start + from, &body[from..]));
    out.into_iter()
        .filter_map(|(o, t)| {
            let lead = t.len() - t.trim_start().len();
            let t = t.trim();
            (!t.is_empty()).then_some((o + lead, t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_term_moves_innermost_when_it_alone_names_the_axis() {
        use super::move_innermost;
        assert_eq!(
            move_innermost("m![K, R % 8]", "K").as_deref(),
            Some("m![R % 8, K]")
        );
        assert_eq!(
            move_innermost("m![[K, A] # 16, R]", "K").as_deref(),
            Some("m![R, [K, A] # 16]")
        );
        assert_eq!(move_innermost("m![R % 8, K]", "K"), None);
        assert_eq!(move_innermost("m![K / 2, R, K % 2]", "K"), None);
        assert_eq!(move_innermost("m![KK, R]", "K"), None);
    }

    use super::*;

    #[test]
    fn top_terms_keep_offsets() {
        let t = "m![A / 8, [B, C] # 16,  D]";
        let got: Vec<(usize, &str)> = top_terms(t);
        assert_eq!(got, [(3, "A / 8"), (10, "[B, C] # 16"), (24, "D")]);
        for (o, term) in &got {
            assert_eq!(&t[*o..*o + term.len()], *term);
        }
        assert!(top_terms("_").is_empty());
        assert!(top_terms("m![]").is_empty());
    }

    #[test]
    fn pads_the_innermost_term() {
        assert_eq!(
            pad_last_term("m![M, K, W]", 16).as_deref(),
            Some("m![M, K, W # 16]")
        );
        assert_eq!(
            pad_last_term("m![B, A # 72]", 96).as_deref(),
            Some("m![B, A # 96]")
        );
        assert_eq!(pad_last_term("m![N]", 4).as_deref(), Some("m![N # 4]"));
        // A padding written as a constant is replaced, not padded again.
        assert_eq!(
            pad_innermost("m![N % 8 # { FLIT }]", 32).as_deref(),
            Some("m![N % 8 # 32]")
        );
        assert_eq!(
            pad("m![N % 8 # { FLIT }]", Span::new(0, 1), 32).map(|e| e.new_text),
            Some("m![N % 8 # 32]".to_string())
        );
        assert_eq!(pad_last_term("m![K, N = 3]", 4), None);
        assert_eq!(pad_last_term("Element", 4), None);
    }

    #[test]
    fn pads_an_innermost_term_of_any_form() {
        assert_eq!(
            pad_innermost("m![B / 2, B % 2]", 4).as_deref(),
            Some("m![B / 2, B % 2 # 4]")
        );
        assert_eq!(
            pad_innermost("m![K, N = 3]", 4).as_deref(),
            Some("m![K, N = 3 # 4]")
        );
        assert_eq!(
            pad_innermost("m![A, B % 8 # 12]", 16).as_deref(),
            Some("m![A, B % 8 # 16]")
        );
        // An escaped padding type form is padded anew, not padded again.
        assert_eq!(
            pad_innermost("m![S % 2, { Padding<m![1], W> }]", 2).as_deref(),
            Some("m![S % 2, { Padding<m![1], 2> }]")
        );
        assert_eq!(
            pad_innermost("m![X, { Padding<Resize<m![R], ROWS>, 6> }]", 8).as_deref(),
            Some("m![X, { Padding<Resize<m![R], ROWS>, 8> }]")
        );
        assert_eq!(
            pad_innermost("m![M, W]", 8).as_deref(),
            Some("m![M, W # 8]")
        );
        assert_eq!(pad_innermost("Element", 4), None);
        assert_eq!(pad_innermost("m![]", 4), None);
    }

    /// A commit that keeps 4 of the 64 `D` of each row (L2191-L2194) keeps 8 once `D` is split
    /// there and its kept part padded.
    #[test]
    fn splits_the_innermost_axis_where_a_part_of_it_is_kept() {
        let size = |a: &str| (a == "D").then_some(64);
        assert_eq!(
            split_innermost("m![S % 4, D]", size, 4, 8).as_deref(),
            Some("m![S % 4, D / 4, D % 4 # 8]")
        );
        // The whole axis kept, a part that does not divide it, another form: not a split.
        assert_eq!(split_innermost("m![S % 4, D]", size, 64, 128), None);
        assert_eq!(split_innermost("m![S % 4, D]", size, 6, 8), None);
        assert_eq!(split_innermost("m![S % 4, D % 8]", size, 4, 8), None);
    }

    #[test]
    fn pads_a_whole_mapping() {
        let at = Span::new(0, 0);
        let text = |t: &str, n| pad(t, at, n).map(|e| e.new_text);
        assert_eq!(text("m![C]", 8).as_deref(), Some("m![C # 8]"));
        assert_eq!(text("m![B, C]", 16).as_deref(), Some("m![[B, C] # 16]"));
        assert_eq!(text("m![C # 6]", 8).as_deref(), Some("m![C # 8]"));
        assert_eq!(text("m![]", 8), None);
    }
}
