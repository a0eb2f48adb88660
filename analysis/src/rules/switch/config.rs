//! The `SwitchConfig::…` argument of a switch as written ([`Config`]): its topology
//! ([`Topology`]) and where each field's value is written.

use crate::diagnostic::Span;
use crate::model::Arg;
use std::collections::BTreeMap;

/// A switch configuration as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Topology {
    Broadcast01 {
        slice1: u64,
        slice0: u64,
        time0: u64,
    },
    Broadcast1 {
        slice1: u64,
        slice0: u64,
    },
    /// Broadcast1 with the roles of the two slice parts exchanged (the library's
    /// `TransposedBroadcast1`; the manual does not describe it).
    TransposedBroadcast1 {
        slice1: u64,
        slice0: u64,
    },
    Transpose {
        slice1: u64,
        slice0: u64,
    },
    InterTranspose {
        slice1: u64,
        slice0: u64,
        time0: u64,
    },
    Custom {
        ring_size: u64,
    },
}

impl Topology {
    /// Slices per independent ring (cost-model U11: slice1 × slice0 for the regular ones).
    pub fn ring_size(self) -> Option<u64> {
        match self {
            Topology::Broadcast01 { slice1, slice0, .. }
            | Topology::Broadcast1 { slice1, slice0 }
            | Topology::TransposedBroadcast1 { slice1, slice0 }
            | Topology::Transpose { slice1, slice0 }
            | Topology::InterTranspose { slice1, slice0, .. } => slice1.checked_mul(slice0),
            Topology::Custom { ring_size } => Some(ring_size),
        }
    }

    pub fn describe(self) -> String {
        match self {
            Topology::Broadcast01 {
                slice1,
                slice0,
                time0,
            } => format!("Broadcast01 {{ slice1: {slice1}, slice0: {slice0}, time0: {time0} }}"),
            Topology::Broadcast1 { slice1, slice0 } => {
                format!("Broadcast1 {{ slice1: {slice1}, slice0: {slice0} }}")
            }
            Topology::TransposedBroadcast1 { slice1, slice0 } => {
                format!("TransposedBroadcast1 {{ slice1: {slice1}, slice0: {slice0} }}")
            }
            Topology::Transpose { slice1, slice0 } => {
                format!("Transpose {{ slice1: {slice1}, slice0: {slice0} }}")
            }
            Topology::InterTranspose {
                slice1,
                slice0,
                time0,
            } => format!("InterTranspose {{ slice1: {slice1}, slice0: {slice0}, time0: {time0} }}"),
            Topology::Custom { ring_size } => {
                format!("CustomBroadcast {{ ring_size: {ring_size} }}")
            }
        }
    }
}

/// A parsed `SwitchConfig::…` argument with the spans of its field values.
pub(super) struct Config {
    pub topo: Topology,
    fields: BTreeMap<String, Span>,
}

impl Config {
    pub fn span(&self, field: &str, fallback: Span) -> Span {
        self.fields.get(field).copied().unwrap_or(fallback)
    }
}

fn int_literal(s: &str) -> Option<u64> {
    let s = s.trim().replace('_', "");
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    let rest = &s[digits.len()..];
    if digits.is_empty() || !(rest.is_empty() || rest.starts_with(['u', 'i'])) {
        return None;
    }
    digits.parse().ok()
}

/// Reads `SwitchConfig::Variant { field: literal, … }`; `None` when it is not literal.
pub(super) fn parse_config(arg: &Arg) -> Option<Config> {
    let value = arg.value_text();
    let blanked = blank_comments(&value);
    let text = blanked.as_str();
    let open = text.find('{')?;
    let close = text.rfind('}')?;
    let head = text[..open].trim();
    let variant = head.rsplit("::").next()?.trim();
    let (values, fields) = read_fields(arg, text, open, close)?;
    let topo = topology(variant, |k: &str| values.get(k).copied())?;
    Some(Config { topo, fields })
}

/// The fields written between the braces at `open` and `close` of `text` (the argument's
/// value with its comments blanked): each field's literal value, and where it is written.
fn read_fields(
    arg: &Arg,
    text: &str,
    open: usize,
    close: usize,
) -> Option<(BTreeMap<String, u64>, BTreeMap<String, Span>)> {
    let mut values = BTreeMap::new();
    let mut fields = BTreeMap::new();
    let body = text.get(open + 1..close)?;
    let mut offset = open + 1;
    for part in body.split(',') {
        let here = offset;
        offset += part.len() + 1;
        if part.trim().is_empty() {
            continue;
        }
        let colon = part.find(':')?;
        let (name, value) = (&part[..colon], &part[colon + 1..]);
        let name = name.trim().to_string();
        let v = int_literal(value)?;
        let lead = value.len() - value.trim_start().len();
        let start = here + colon + 1 + lead;
        let len = value.trim().len();
        let base = arg.span.start as usize;
        // A value the argument names has no field written here: the argument is the place.
        let field = if arg.in_place() {
            Span::new(base + start, base + start + len)
        } else {
            arg.span
        };
        fields.insert(name.clone(), field);
        values.insert(name, v);
    }
    Some((values, fields))
}

/// The topology `SwitchConfig::{variant}` names, its fields read with `get`; `None` for an
/// unknown variant or a missing field.
fn topology(variant: &str, get: impl Fn(&str) -> Option<u64>) -> Option<Topology> {
    Some(match variant {
        "Broadcast01" => Topology::Broadcast01 {
            slice1: get("slice1")?,
            slice0: get("slice0")?,
            time0: get("time0")?,
        },
        "Broadcast1" => Topology::Broadcast1 {
            slice1: get("slice1")?,
            slice0: get("slice0")?,
        },
        "TransposedBroadcast1" => Topology::TransposedBroadcast1 {
            slice1: get("slice1")?,
            slice0: get("slice0")?,
        },
        "Transpose" => Topology::Transpose {
            slice1: get("slice1")?,
            slice0: get("slice0")?,
        },
        "InterTranspose" => Topology::InterTranspose {
            slice1: get("slice1")?,
            slice0: get("slice0")?,
            time0: get("time0")?,
        },
        "CustomBroadcast" => Topology::Custom {
            ring_size: get("ring_size")?,
        },
        _ => return None,
    })
}

/// `text` with its `//` and `/* */` comments replaced by spaces (byte offsets kept).
fn blank_comments(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                out[i] = b' ';
                i += 1;
            }
            for _ in 0..2 {
                if i < b.len() {
                    out[i] = b' ';
                    i += 1;
                }
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}
