//! What the VEC rules read of a step as written: op enum literals (`FxpBinaryOp::AddFxp`),
//! numeric constants, VRF operands, `m![..]` packets padded to a lane count and literal
//! arrays; and, of a stream's typestate, its layouts and the lanes that hold data.

use crate::mapping::Layout;
use crate::model::{Arg, Slot, Step, TensorTy};

/// An op enum literal as written: `FxpBinaryOp::AddFxp`, `FpBinaryOp::MulF(FpMulAlu::Mul0)`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Op<'a> {
    /// The enum's name (`FxpBinaryOp`), empty when written without a path.
    pub(super) ty: &'a str,
    pub(super) variant: &'a str,
    /// The variant's payload's last path segment (`Mul0`) and its byte offset in the text.
    pub(super) lane: Option<(&'a str, usize)>,
}

pub(super) use crate::syntax::is_ident;

/// The op enum literal `text` spells, when it is one.
pub(super) fn parse_op(text: &str) -> Option<Op<'_>> {
    let text = text.trim();
    let (head, payload) = match text.find(['(', '{']) {
        Some(i) => (&text[..i], Some(i)),
        None => (text, None),
    };
    let head = head.trim();
    let (ty, variant) = match head.rfind("::") {
        Some(i) => {
            let path = &head[..i];
            let ty = path.rsplit("::").next().unwrap_or(path);
            (ty, &head[i + 2..])
        }
        None => ("", head),
    };
    if !is_ident(variant) {
        return None;
    }
    let lane = payload.and_then(|open| {
        let close = text.rfind([')', '}'])?;
        if close <= open {
            return None;
        }
        let inner = &text[open + 1..close];
        let trimmed = inner.trim();
        let seg_start = trimmed.rfind("::").map_or(0, |i| i + 2);
        let seg = &trimmed[seg_start..];
        if !is_ident(seg) {
            return None;
        }
        let lead = inner.len() - inner.trim_start().len();
        Some((seg, open + 1 + lead + seg_start))
    });
    Some(Op { ty, variant, lane })
}

/// `word` occurs in `text` as a whole identifier.
pub(super) fn has_word(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    let is_id = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.match_indices(word).any(|(i, _)| {
        let before = i == 0 || !is_id(bytes[i - 1]);
        let after = i + word.len() >= bytes.len() || !is_id(bytes[i + word.len()]);
        before && after
    })
}

/// The kind of a numeric literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lit {
    Int,
    Float,
}

/// A numeric literal's kind (`100`, `-5`, `0x7f`, `2.5f32`, `0.0`).
pub(super) fn literal(text: &str) -> Option<Lit> {
    let t = text.trim();
    let t = t.strip_prefix('-').unwrap_or(t).trim();
    if !t.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if t.ends_with("f32") || t.ends_with("f64") {
        return Some(Lit::Float);
    }
    if t.starts_with("0x") || t.starts_with("0b") || t.starts_with("0o") {
        return Some(Lit::Int);
    }
    let core = [
        "isize", "usize", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    ]
    .iter()
    .find_map(|s| t.strip_suffix(s))
    .unwrap_or(t);
    if core.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return Some(Lit::Int);
    }
    if core
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | 'e' | 'E' | '+' | '-'))
    {
        return Some(Lit::Float);
    }
    None
}

/// The tensor a VRF operand names: `VeRhs::vrf(&v)`, `VeRhs::vrf(v)`, `&v`.
pub(super) fn operand_var(text: &str) -> Option<&str> {
    let mut t = text.trim();
    if let Some(rest) = t.strip_prefix("VeRhs::vrf(") {
        t = rest.strip_suffix(')')?.trim();
    }
    let t = t.trim_start_matches('&').trim();
    let t = t.strip_prefix("mut ").unwrap_or(t).trim();
    is_ident(t).then_some(t)
}

/// `m![E]` with its padding set to `n` lanes: `m![A % 2]` -> `m![A % 2 # 4]`,
/// `m![A % 2 # 8]` -> `m![A % 2 # 4]`.
pub(super) fn with_pad(text: &str, n: u64) -> Option<String> {
    let inner = text.trim().strip_prefix("m![")?.strip_suffix(']')?.trim();
    if let Some(i) = inner.rfind('#') {
        let tail = inner[i + 1..].trim();
        if tail.chars().all(|c| c.is_ascii_digit()) && !tail.is_empty() {
            return Some(format!("m![{} # {n}]", inner[..i].trim_end()));
        }
    }
    let mut depth = 0i32;
    let top_comma = inner.chars().any(|c| {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ => {}
        }
        c == ',' && depth == 0
    });
    Some(if top_comma {
        format!("m![[{inner}] # {n}]")
    } else {
        format!("m![{inner} # {n}]")
    })
}

/// Number of elements of a literal array `[a, b, c]` or `[x; n]`.
pub(super) fn array_len(text: &str) -> Option<usize> {
    let open = text.find('[')?;
    let close = text.rfind(']')?;
    if close <= open {
        return None;
    }
    let inner = text[open + 1..close].trim();
    if inner.is_empty() {
        return Some(0);
    }
    let mut depth = 0i32;
    let mut parts = 1;
    for c in inner.chars() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => parts += 1,
            ';' if depth == 0 => {
                let n = inner.rsplit(';').next()?.trim();
                return n.parse().ok();
            }
            _ => {}
        }
    }
    if inner.ends_with(',') {
        parts -= 1;
    }
    Some(parts)
}

/// Valid lanes (positions holding a tensor element) of a packet layout.
pub(super) fn valid_lanes(l: &Layout) -> Option<Vec<u64>> {
    if l.size > 64 {
        return None;
    }
    Some((0..l.size).filter(|&i| l.map(i).is_some()).collect())
}

/// The layout of `slot` in a stream's typestate, when known.
pub(super) fn layout(ty: Option<&TensorTy>, slot: Slot) -> Option<&Layout> {
    ty?.get(slot)?.layout.as_deref()
}

/// The operands of a vector op: the value arguments after the op and the mode.
pub(super) fn operands(step: &Step) -> impl Iterator<Item = &Arg> {
    step.args
        .iter()
        .skip(1)
        .filter(|a| !a.value_text().contains("ArgMode::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_op_reads_variant_and_lane() {
        let op = parse_op("FpBinaryOp::MulF(FpMulAlu::Mul0)").expect("op");
        assert_eq!(op.ty, "FpBinaryOp");
        assert_eq!(op.variant, "MulF");
        assert_eq!(op.lane, Some(("Mul0", 27)));
        assert_eq!(
            &"FpBinaryOp::MulF(FpMulAlu::Mul0)"[27..31],
            "Mul0",
            "the lane offset points at the lane"
        );
        let op = parse_op("furiosa_visa_std::FxpBinaryOp::AddFxp").expect("op");
        assert_eq!(
            (op.ty, op.variant, op.lane),
            ("FxpBinaryOp", "AddFxp", None)
        );
        assert!(parse_op("1 + 2").is_none());
    }

    #[test]
    fn helpers() {
        assert_eq!(literal("100"), Some(Lit::Int));
        assert_eq!(literal("-5"), Some(Lit::Int));
        assert_eq!(literal("7i32"), Some(Lit::Int));
        assert_eq!(literal("0x7fff_ffff"), Some(Lit::Int));
        assert_eq!(literal("2.5f32"), Some(Lit::Float));
        assert_eq!(literal("0.0"), Some(Lit::Float));
        assert_eq!(literal("Stash"), None);
        assert_eq!(
            with_pad("m![A % 2 # 8]", 4).as_deref(),
            Some("m![A % 2 # 4]")
        );
        assert_eq!(with_pad("m![A % 2]", 8).as_deref(), Some("m![A % 2 # 8]"));
        assert_eq!(with_pad("m![A, B]", 8).as_deref(), Some("m![[A, B] # 8]"));
        assert_eq!(array_len("BranchMode::Comparison([a, b, c, d])"), Some(4));
        assert_eq!(array_len("BranchMode::Comparison([c; 3])"), Some(3));
        assert!(has_word("VeBranchOperand::always(Stash)", "Stash"));
        assert!(!has_word("NoStash", "Stash"));
        assert_eq!(operand_var("VeRhs::vrf(&rhs)"), Some("rhs"));
        assert_eq!(operand_var("&rhs_vrf"), Some("rhs_vrf"));
    }
}
