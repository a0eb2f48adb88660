//! SWI: the Switch Engine's ring through a cluster's slices, 256 (or the 64 or 128 of a smaller
//! furiosa-opt-std device) (constraints.md §8), and KRN-003 (a switch
//! that redistributes nothing is forwarding: skip it).
//!
//! `.switch::<Slice2, Time2>(config)` turns the FetchTensor's (Slice, Time) into (Slice2,
//! Time2). For the four regular topologies the manual defines the output from the input and
//! the config's parameters ([`expected`]): the input Slice is read as `[slice2, slice1, slice0]`
//! and the Time as `[time1, time0]` (or `[time2, time1, time0]`), and the parts are moved as
//! the topology's table says, with broadcast positions (`tile`, written as a new axis such
//! as `X` or as padding `1 # n`) where data is replicated. Layouts are compared by equivalence (MAP-007). Custom
//! topologies (`CustomBroadcast { ring_size }`) accept any output that follows the two custom
//! constraints (order preservation, innermost Time position) and conserves the data.

use super::context::{FnContext, at_arg};
use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::mapping::layout::{Axis, Dim, Factor};
use crate::mapping::{Layout, Scope};
use crate::model::{
    Arg, Chain, Method, Slot, Step, TensorTy, input_arg, output_arg, pad_edit, slot_bytes,
};
use crate::rule::{Generations, Rule, Status};
use std::collections::{BTreeMap, BTreeSet};

pub const SWI_001: Rule = Rule {
    code: "SWI-001",
    name: "switch-full-cluster",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A switch operates on the full cluster: InSlice::SIZE == OutSlice::SIZE == the cluster's slices (256)",
    docs: "The Switch Engine is one ring through all 256 slices of a cluster; partial cluster \
           operations are a compilation error. Both the FetchTensor's Slice and the `Slice2` of \
           `.switch::<Slice2, Time2>()` must have size 256: pad a smaller mapping \
           (`m![A / 4, X]` → `m![[A / 4, X] # 256]`). Reported at the switch call (at `Slice2` \
           when that is the short one), once per switch; the other SWI checks of that switch \
           are skipped.",
    bad: "axes![A = 256, B = 64];\nfetched /* Slice m![A], Time m![B] */ .switch::<m![A / 4], m![B, A % 4]>(SwitchConfig::Broadcast1 { slice1: 4, slice0: 1 })",
    good: "axes![A = 256, B = 64, X = 4];\nfetched /* Slice m![A], Time m![B] */ .switch::<m![A / 4, X], m![B, A % 4]>(SwitchConfig::Broadcast1 { slice1: 4, slice0: 1 })",
    manual: "L3501-L3502, L1079-L1084",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 also runs clusters of 64 or 128 slices, on devices of 1 or 2 \
         processing elements (`furiosa-opt-std/src/constraints.rs:30-31,48-56`; \
         `furiosa-opt-examples/src/pe_count.rs:14-20`), and its switch asserts a Slice of one of \
         these sizes, the same in and out (`furiosa-opt-std/src/engine/switch.rs:39-43,71-81`; \
         `SwitchError::SliceSizeMismatch`, `furiosa-opt-lower-types/src/switch.rs:119-126`). \
         visa-lint asks for the slices of the kernel's `#[device(pe)]` grid there (library-v06.md \
         §4 R2-R3); in a helper, whose callers' grid is unknown, for an input Slice of 64, 128 or \
         256 and an output Slice of the same size",
    ),
};

pub const SWI_002: Rule = Rule {
    code: "SWI-002",
    name: "switch-topology-pattern",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The output (Slice2, Time2) of a regular topology is the pattern its parameters define",
    docs: "Regular topologies only reshape (Slice, Time) in their predefined way. With the input \
           Slice read as `[slice2, slice1, slice0]` and Time as `[time1, time0]`: Broadcast01 gives \
           `[slice2, tile, tile] | [time1, slice1, time0, slice0]`; Broadcast1 gives \
           `[slice2, tile, slice0] | [time, slice1]`; TransposedBroadcast1 (a library topology \
           the manual does not describe) gives `[slice2, tile, slice1] | [time, slice0]`; \
           Transpose gives `[slice2, slice0, slice1] | time`; InterTranspose (Time `[time2, \
           time1, time0]`, time1 = slice1) gives `[slice2, time1, slice0] | [time2, time0, \
           slice1]`. `tile` is a broadcast: the manual writes a new axis (`X`); the library \
           (`SwitchConfig::verify`) asserts only \"OutSlice broadcast axes must be new axes\", i.e. \
           that no axis of the input Slice or Time appears in those positions, so padding \
           (`1 # 4`), a new axis, or a mix of both is a broadcast. Every other position is \
           asserted equal to the input part (\"OutSlice must preserve slice2 from InSlice\", \
           \"OutTime does not match expected layout\", …), so a mismatch panics: an error. The \
           output is compared by meaning (MAP-007) and the message shows the expected \
           `Slice2`/`Time2`; the fix writes them. Parameters that do not divide the sizes are \
           SWI-003/SWI-004 instead.",
    bad: "axes![A = 256, B = 64, C = 64, X = 4];\nfetched.switch::<m![A / 4, X], m![B / 4, A % 2, B % 4, A / 2 % 2]>(SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 })",
    good: "axes![A = 256, B = 64, C = 64, X = 4];\nfetched.switch::<m![A / 4, X], m![B / 4, A / 2 % 2, B % 4, A % 2]>(SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 })",
    manual: "L3091, L3143-L3157, L3182, L3189-L3203, L3223-L3234, L3256-L3263, L3290-L3303, L3499-L3500",
    generations: Generations::Both,
};

pub const SWI_003: Rule = Rule {
    code: "SWI-003",
    name: "switch-parameters-divide",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Topology parameters divide the input sizes: slice1·slice0 | InSlice::SIZE, time0 | InTime::SIZE",
    docs: "The compiler infers `slice2 = InSlice::SIZE / (slice1 * slice0)` and `time1 = \
           InTime::SIZE / time0`; both must be whole (so that `slice2·slice1·slice0 = 256` and \
           `time1·time0 = Time::SIZE`). Applies to every regular topology (Transpose and \
           InterTranspose split the Slice the same way); a parameter of 0 is reported too. \
           Reported at the offending parameter.",
    bad: "/* Time m![B] with B = 64 */ SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 3 }",
    good: "/* Time m![B] with B = 64 */ SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
    manual: "L3143, L3166, L3222",
    generations: Generations::Both,
};

pub const SWI_004: Rule = Rule {
    code: "SWI-004",
    name: "inter-transpose-equal-chunks",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "InterTranspose swaps equal chunks: the input Time holds a time1 of size slice1",
    docs: "InterTranspose exchanges `time1` of the Time with `slice1` of the Slice; OutSlice::SIZE \
           stays 256 only when `time1 == slice1`, so the compiler takes `time1 = slice1` and \
           derives `time2 = InTime::SIZE / (slice1 * time0)`. When `time0` divides the Time \
           (else SWI-003) but `slice1 * time0` does not, there is no `time1` of size `slice1`: \
           lower `slice1` or lengthen the Time.",
    bad: "/* Slice m![C], Time m![A] with A = 4 */ SwitchConfig::InterTranspose { slice1: 4, slice0: 16, time0: 2 }",
    good: "/* Slice m![C], Time m![A] with A = 4 */ SwitchConfig::InterTranspose { slice1: 2, slice0: 16, time0: 2 }",
    manual: "L3287-L3289",
    generations: Generations::Both,
};

pub const SWI_005: Rule = Rule {
    code: "SWI-005",
    name: "custom-ring-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "CustomBroadcast ring_size is a power of two up to the cluster's slices (256) that covers the slices exchanging data",
    docs: "Rings are power-of-two groups of consecutive slices. The slices that exchange data are \
           found from the mappings: the outermost part of the Slice that is the same in input and \
           output stays put, so the ring must span the rest (`m![A, B]` → `m![A / 2, X, B / 2, Y]` \
           keeps `A / 2`: 256 / 8 = 32 slices). A ring that is too small cannot route the data; \
           one that is larger than needed only costs cycles (SWI-011).",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![C, A % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 16 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![C, A % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 32 })",
    manual: "L3364, L3401, L3441",
    generations: Generations::Differs(
        "under furiosa-opt-std 0.6 a cluster has the slices of the kernel's `#[device(pe)]` grid, \
         64, 128 or 256 (`furiosa-opt-examples/src/pe_count.rs:14-20`): the ring is bounded by \
         that count",
    ),
};

pub const SWI_006: Rule = Rule {
    code: "SWI-006",
    name: "switch-order-preservation",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Axes moving from Slice to Time keep their relative order from the input Slice",
    docs: "Routers buffer about one packet and forward in arrival order, so the factors of the \
           input Slice that a custom topology moves into Time appear in Time in the order they \
           had in Slice (outermost first). Checked for CustomBroadcast; a regular topology's \
           output is checked exactly by SWI-002. The fix reorders the moved factors.",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B % 2, B / 2 % 2]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B / 2 % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    manual: "L3460, L3488-L3492, L3505-L3510",
    generations: Generations::Both,
};

pub const SWI_007: Rule = Rule {
    code: "SWI-007",
    name: "switch-innermost-time",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Axes moving from Slice to Time take the innermost positions of the output Time",
    docs: "Data from other slices arrives last within each packet, so the moved factors are the \
           innermost Time dimensions. Custom topologies must place them there; Broadcast01 can \
           interleave them through `time0`, which SWI-002 checks. The fix moves them to the tail.",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![A % 2, C, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 32 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A / 2, X, B / 2, Y], m![C, A % 2, B % 2]>(SwitchConfig::CustomBroadcast { ring_size: 32 })",
    manual: "L3472, L3481-L3482, L3511-L3519",
    generations: Generations::Both,
};

pub const SWI_008: Rule = Rule {
    code: "SWI-008",
    name: "switch-packet-unchanged",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The packet passes the switch unchanged (and Chip, Cluster)",
    docs: "The switch neither pads nor reshapes the packet: the `SwitchTensor`'s Packet is the \
           FetchTensor's. Normalize it afterwards with `.collect::<Time2, Packet2>()`. (A changed \
           Chip or Cluster is reported by KRN-004 for every engine, the switch included.)",
    bad: "let s: SwitchTensor<'_, T, i8, m![1], m![1 # 2], m![A], m![B], m![C # 32]> = fetched_with_packet_c.switch(..);",
    good: "let s: SwitchTensor<'_, T, i8, m![1], m![1 # 2], m![A], m![B], m![C]> = fetched_with_packet_c.switch(..);",
    manual: "L3065-L3067, L3087-L3088",
    generations: Generations::Both,
};

pub const SWI_009: Rule = Rule {
    code: "SWI-009",
    name: "switch-conservation",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A custom switch conserves the data: new axes only as Slice broadcasts, nothing dropped or duplicated",
    docs: "The output (Slice2 × Time2) is the input (Slice × Time) rearranged. New axes (`X`) may \
           appear in Slice only, as broadcast copies; every input axis reaches the output, and no \
           more of it than the input holds. A custom topology may take part of a moved axis \
           (`B % 4 = 3`, partial extraction). Checked for CustomBroadcast; regular topologies are \
           checked exactly by SWI-002.",
    bad: "fetched /* Slice m![A, B], Time m![C] */ .switch::<m![A, B / 4, X], m![C, Y]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    good: "fetched /* Slice m![A, B], Time m![C] */ .switch::<m![A, B / 4, X], m![C, B % 4]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    manual: "L3341, L3420-L3457",
    generations: Generations::Both,
};

pub const SWI_010: Rule = Rule {
    code: "SWI-010",
    name: "custom-topology-preempts",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "A CustomBroadcast that a regular topology expresses pays for writing the bitmap",
    docs: "Custom topologies write their snoop bitmap to SFRs, preempting DMA and the sub \
           context. When the same (Slice2, Time2) comes out of a regular topology, that \
           topology avoids the setup; the hint names it, with the ring cycles \
           (`ring_size × input_time × packet_bytes / 32`).",
    bad: "fetched /* Slice m![A], Time m![B] */ .switch::<m![A / 64, A % 2, A / 2 % 32], m![B]>(SwitchConfig::CustomBroadcast { ring_size: 64 })",
    good: "fetched /* Slice m![A], Time m![B] */ .switch::<m![A / 64, A % 2, A / 2 % 32], m![B]>(SwitchConfig::Transpose { slice1: 32, slice0: 2 })",
    manual: "L3336, L3524-L3526, L3533-L3537",
    generations: Generations::Both,
};

pub const SWI_011: Rule = Rule {
    code: "SWI-011",
    name: "switch-ring-cost",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Switch cost grows with the ring size; a whole-cluster ring that only moves data may lose to DMA",
    docs: "A ring costs `ring_size × input_time × packet_bytes / 32` cycles. Reported when a \
           CustomBroadcast ring is larger than the slices that exchange data (the smaller ring \
           is as correct and cheaper), and when a regular topology whose ring spans the cluster \
           (slice1·slice0 = 256, or the 64 or 128 slices of a smaller furiosa-opt-std device) feeds \
           collect and commit with no compute: a DMA of the same bytes at 256 B/cycle is then \
           estimated faster. (A CustomBroadcast is left to SWI-010 and SCH-004: its bitmap setup \
           preempts the DMA itself.)",
    bad: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B % 4]>(SwitchConfig::CustomBroadcast { ring_size: 256 })",
    good: "fetched /* Slice m![A, B] */ .switch::<m![A, B / 4, X], m![C, B % 4]>(SwitchConfig::CustomBroadcast { ring_size: 4 })",
    manual: "L3207-L3210, L3524-L3532, L3542, L2554",
    generations: Generations::Differs(
        "under furiosa-opt-std 0.6 a whole-cluster ring has the slices of the kernel's \
         `#[device(pe)]` grid, 64, 128 or 256 (`furiosa-opt-examples/src/pe_count.rs:14-20`)",
    ),
};

pub const KRN_003: Rule = Rule {
    code: "KRN-003",
    name: "identity-switch",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "A switch that does not redistribute slices can be dropped (forwarding)",
    docs: "Forwarding has no topology: skip `.switch()` and call `collect()` on the FetchTensor \
           directly (ring size 1, the cheapest switch). Reported (by the switch checks) when a \
           valid switch gives back its input Slice and Time unchanged, such as \
           `Transpose { slice1: 1, slice0: 256 }` or `Broadcast01 { slice1: 1, slice0: 1, .. }`.",
    bad: "fetched.switch::<m![A], m![B]>(SwitchConfig::Transpose { slice1: 1, slice0: 256 }).collect::<m![B], m![C]>()",
    good: "fetched.collect::<m![B], m![C]>()",
    manual: "L3123, L363",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    SWI_001, SWI_002, SWI_003, SWI_004, SWI_005, SWI_006, SWI_007, SWI_008, SWI_009, SWI_010,
    SWI_011, KRN_003,
];

/// The name of the broadcast placeholder axis (`tile` in the manual's tables).
const TILE: &str = "~tile";

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
    fn ring_size(self) -> Option<u64> {
        match self {
            Topology::Broadcast01 { slice1, slice0, .. }
            | Topology::Broadcast1 { slice1, slice0 }
            | Topology::TransposedBroadcast1 { slice1, slice0 }
            | Topology::Transpose { slice1, slice0 }
            | Topology::InterTranspose { slice1, slice0, .. } => slice1.checked_mul(slice0),
            Topology::Custom { ring_size } => Some(ring_size),
        }
    }

    fn describe(self) -> String {
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
struct Config {
    topo: Topology,
    fields: BTreeMap<String, Span>,
}

impl Config {
    fn span(&self, field: &str, fallback: Span) -> Span {
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
fn parse_config(arg: &Arg) -> Option<Config> {
    let value = arg.value_text();
    let blanked = blank_comments(&value);
    let text = blanked.as_str();
    let open = text.find('{')?;
    let close = text.rfind('}')?;
    let head = text[..open].trim();
    let variant = head.rsplit("::").next()?.trim();
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
    let get = |k: &str| values.get(k).copied();
    let topo = match variant {
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
    };
    Some(Config { topo, fields })
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

/// Why the parameters of a regular topology do not fit the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unfit {
    pub code: &'static Rule,
    pub field: &'static str,
    pub message: String,
}

/// A broadcast placeholder of `n` slices.
fn tile(n: u64) -> Layout {
    if n <= 1 {
        return Layout::identity();
    }
    Layout::symbol(Axis::new(TILE, n))
}

fn cat(parts: &[&Layout]) -> Option<Layout> {
    let mut out = Layout::identity();
    for p in parts {
        out = out.pair(p).ok()?;
    }
    Some(out)
}

/// `[outer, middle, inner]` of `l` with `middle` of size `m` and `inner` of size `i`.
fn split3(l: &Layout, m: u64, i: u64) -> Option<(Layout, Layout, Layout)> {
    let mi = m.checked_mul(i)?;
    if m == 0 || i == 0 || !l.size.is_multiple_of(mi) {
        return None;
    }
    Some((l.stride(mi), l.stride(i).window(m), l.window(i)))
}

fn unfit(code: &'static Rule, field: &'static str, message: String) -> Unfit {
    Unfit {
        code,
        field,
        message,
    }
}

/// Checks that `slice1 * slice0` divides the Slice (SWI-003).
fn slice_split(
    slice: &Layout,
    slice1: u64,
    slice0: u64,
) -> Result<(Layout, Layout, Layout), Unfit> {
    if slice1 == 0 || slice0 == 0 {
        let field = if slice1 == 0 { "slice1" } else { "slice0" };
        return Err(unfit(
            &SWI_003,
            field,
            format!("`{field}` is 0; it counts slices and must be at least 1"),
        ));
    }
    split3(slice, slice1, slice0).ok_or_else(|| {
        unfit(
            &SWI_003,
            "slice1",
            format!(
                "slice1 × slice0 = {} does not divide InSlice::SIZE = {}: slice2 = InSlice::SIZE / (slice1 × slice0) must be whole",
                u128::from(slice1) * u128::from(slice0),
                slice.size
            ),
        )
    })
}

fn time_divides(time: &Layout, time0: u64) -> Result<(), Unfit> {
    if time0 == 0 || !time.size.is_multiple_of(time0) {
        return Err(unfit(
            &SWI_003,
            "time0",
            format!(
                "time0 = {time0} does not divide InTime::SIZE = {}: time1 = InTime::SIZE / time0 must be whole",
                time.size
            ),
        ));
    }
    Ok(())
}

/// The output (Slice2, Time2) a regular topology makes of the input (Slice, Time), with
/// broadcast slices as `TILE` axes; `Ok(None)` for custom topologies or on overflow.
pub(crate) fn expected(
    topo: Topology,
    slice: &Layout,
    time: &Layout,
) -> Result<Option<(Layout, Layout)>, Unfit> {
    Ok(match topo {
        Topology::Broadcast01 {
            slice1,
            slice0,
            time0,
        } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            time_divides(time, time0)?;
            let (t1, t0) = (time.stride(time0), time.window(time0));
            cat(&[&s2, &tile(slice1), &tile(slice0)]).zip(cat(&[&t1, &s1, &t0, &s0]))
        }
        Topology::Broadcast1 { slice1, slice0 } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            cat(&[&s2, &tile(slice1), &s0]).zip(cat(&[time, &s1]))
        }
        Topology::TransposedBroadcast1 { slice1, slice0 } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            cat(&[&s2, &tile(slice0), &s1]).zip(cat(&[time, &s0]))
        }
        Topology::Transpose { slice1, slice0 } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            cat(&[&s2, &s0, &s1]).map(|s| (s, time.clone()))
        }
        Topology::InterTranspose {
            slice1,
            slice0,
            time0,
        } => {
            let (s2, s1, s0) = slice_split(slice, slice1, slice0)?;
            time_divides(time, time0)?;
            let Some((t2, t1, t0)) = split3(time, slice1, time0) else {
                return Err(unfit(
                    &SWI_004,
                    "slice1",
                    format!(
                        "InterTranspose swaps a time1 of size slice1 = {slice1} into the Slice, but InTime::SIZE / time0 = {} / {time0} = {} has no factor of size {slice1}",
                        time.size,
                        time.size / time0,
                    ),
                ));
            };
            cat(&[&s2, &t1, &s0]).zip(cat(&[&t2, &t0, &s1]))
        }
        Topology::Custom { .. } => None,
    })
}

/// Axis names used by plain factors of `l`; `None` when `l` has irregular digits.
fn axes_of(l: &Layout) -> Option<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for d in &l.dims {
        match d {
            Dim::Factor(f) => {
                if let Some(a) = &f.axis {
                    out.insert(a.name.to_string());
                }
            }
            Dim::Opaque(_) => return None,
        }
    }
    Some(out)
}

/// `l` with every factor of an axis outside `known` read as a broadcast, adjacent broadcasts
/// merged into one: the form two outputs are compared in.
fn tiled(l: &Layout, known: &BTreeSet<String>) -> Option<Layout> {
    let mut dims: Vec<Dim> = Vec::new();
    for d in &l.dims {
        let fresh = match d {
            Dim::Factor(Factor { axis: Some(a), .. }) => {
                &*a.name == TILE || !known.contains(&*a.name)
            }
            _ => false,
        };
        if !fresh {
            dims.push(d.clone());
            continue;
        }
        let mut n = d.extent();
        if let Some(Dim::Factor(Factor { axis: Some(a), .. })) = dims.last()
            && &*a.name == TILE
        {
            n = n.checked_mul(a.size)?;
            dims.pop();
        }
        dims.extend(tile(n).dims);
    }
    Layout::from_dims(dims).ok()
}

/// Where a broadcast topology writes its broadcast (`tile`) slices in the output Slice:
/// `(n, inner)`, the `n` slices just above the innermost `inner` ones.
fn tile_positions(topo: Topology) -> Option<(u64, u64)> {
    match topo {
        Topology::Broadcast01 { slice1, slice0, .. } => Some((slice1.checked_mul(slice0)?, 1)),
        Topology::Broadcast1 { slice1, slice0 } => Some((slice1, slice0)),
        Topology::TransposedBroadcast1 { slice1, slice0 } => Some((slice0, slice1)),
        Topology::Transpose { .. } | Topology::InterTranspose { .. } | Topology::Custom { .. } => {
            None
        }
    }
}

/// The written output Slice with its broadcast positions read as one broadcast when they
/// carry no axis of the input: a new axis, padding (`1 # 4`) or a mix of both. This is the
/// library's test (no symbol of InSlice or InTime in the broadcast positions); anything else
/// is returned as written and compared factor by factor.
fn broadcast_read(topo: Topology, out_slice: &Layout, known: &BTreeSet<String>) -> Layout {
    let as_written = || out_slice.clone();
    let Some((n, inner)) = tile_positions(topo) else {
        return as_written();
    };
    let Some(ni) = n.checked_mul(inner) else {
        return as_written();
    };
    if n <= 1 || inner == 0 || !out_slice.size.is_multiple_of(ni) {
        return as_written();
    }
    let region = out_slice.stride(inner).window(n);
    match axes_of(&region) {
        Some(a) if a.is_disjoint(known) => {}
        _ => return as_written(),
    }
    cat(&[&out_slice.stride(ni), &tile(n), &out_slice.window(inner)]).unwrap_or_else(as_written)
}

/// Renders `l`, naming its broadcast placeholders after the fresh axes written in `written`
/// (same sizes, same order); `None` when they cannot be named.
fn render(l: &Layout, written: &Layout, known: &BTreeSet<String>) -> Option<String> {
    let l = &merged(l);
    let fresh: Vec<Axis> = written
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor {
                axis: Some(a),
                extent,
                valid,
                coef: 1,
                ..
            }) if !known.contains(&*a.name) && extent == valid && a.size == *extent => {
                Some(a.clone())
            }
            _ => None,
        })
        .collect();
    let mut next = fresh.into_iter();
    let mut dims = Vec::new();
    for d in &l.dims {
        match d {
            Dim::Factor(Factor {
                axis: Some(a),
                extent,
                ..
            }) if &*a.name == TILE => {
                let name = next.next().filter(|f| f.size == *extent)?;
                dims.extend(Layout::symbol(name).dims);
            }
            _ => dims.push(d.clone()),
        }
    }
    if next.next().is_some() {
        return None;
    }
    Layout::from_dims(dims)
        .ok()
        .map(|l| format!("m![{}]", l.to_expr()))
}

/// `l` with adjacent broadcast placeholders merged into one.
fn merged(l: &Layout) -> Layout {
    let known: BTreeSet<String> = l
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name != TILE => {
                Some(a.name.to_string())
            }
            _ => None,
        })
        .collect();
    tiled(l, &known).unwrap_or_else(|| l.clone())
}

fn show(l: &Layout) -> String {
    let l = &merged(l);
    let named = Layout {
        size: l.size,
        dims: l
            .dims
            .iter()
            .map(|d| match d {
                Dim::Factor(f) if f.axis.as_ref().is_some_and(|a| &*a.name == TILE) => {
                    Dim::Factor(Factor {
                        axis: Some(Axis::new("X", f.extent)),
                        ..f.clone()
                    })
                }
                _ => d.clone(),
            })
            .collect(),
    };
    format!("m![{}]", named.to_expr())
}

/// The edits that rewrite the output `slot` of a switch: where the turbofish writes it, and
/// the declared type of the chain's result when the switch ends the chain and says the same.
fn out_edits(sw: &Switch<'_>, i: usize, slot: Slot, new_text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let Some(a) = output_arg(sw.step, Some(i), slot) else {
        return edits;
    };
    edits.push(Edit {
        span: a.span,
        new_text: new_text.to_string(),
    });
    if sw.index + 1 == sw.chain.steps.len()
        && let Some(m) = sw.chain.declared.as_ref().and_then(|t| t.get(slot))
        && let Some(span) = m.span
        && span != a.span
        && m.layout.is_some()
        && m.layout.as_deref() == layout(sw.output, slot)
    {
        edits.push(Edit {
            span,
            new_text: new_text.to_string(),
        });
    }
    edits
}

fn layout(ty: &TensorTy, slot: Slot) -> Option<&Layout> {
    ty.get(slot)?.layout.as_deref()
}

fn text(ty: &TensorTy, slot: Slot) -> String {
    ty.get(slot)
        .map_or_else(|| "?".to_string(), |m| m.text.clone())
}

/// The Switch Engine's cycles (L3207, L3524-L3526): `ring_size × input_time ×
/// cycles_per_packet`, a packet taking one cycle per started flit.
pub(crate) fn ring_cycles(ring: u64, input_time: u64, packet_bytes: u64, flit: u64) -> Option<u64> {
    let flits = packet_bytes.div_ceil(flit.max(1));
    ring.checked_mul(input_time)?.checked_mul(flits)
}

/// One `.switch()` call with everything the checks read.
struct Switch<'a> {
    chain: &'a Chain,
    index: usize,
    step: &'a Step,
    config: Config,
    input: &'a TensorTy,
    output: &'a TensorTy,
    in_slice: &'a Layout,
    in_time: &'a Layout,
    out_slice: &'a Layout,
    out_time: &'a Layout,
}

impl Switch<'_> {
    /// The slices of the cluster the switch's ring runs through: its input Slice, once SWI-001
    /// has found it the whole cluster of the function's grid (every check after it).
    fn cluster_slices(&self) -> u64 {
        self.in_slice.size
    }

    fn slice_span(&self) -> Span {
        output_arg(self.step, Some(0), Slot::Slice).map_or(self.step.span, |a| a.span)
    }

    fn time_span(&self) -> Span {
        output_arg(self.step, Some(1), Slot::Time).map_or(self.step.span, |a| a.span)
    }

    /// `ring_size × input_time × packet_flits`, when the packet size is known.
    fn cycles(&self, ring: u64, flit: u64) -> Option<(u64, u64)> {
        let (_, _, bytes) = slot_bytes(self.input, Slot::Packet)?;
        Some((ring_cycles(ring, self.in_time.size, bytes, flit)?, bytes))
    }
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (index, step) in chain.steps.iter().enumerate() {
            if step.method != Method::Switch {
                continue;
            }
            let Some(sw) = switch_of(chain, index, step) else {
                continue;
            };
            check_switch(cx, &sw, out);
        }
    }
}

fn switch_of<'a>(chain: &'a Chain, index: usize, step: &'a Step) -> Option<Switch<'a>> {
    let config = parse_config(step.args.first()?)?;
    let input = step.input.as_ref()?;
    let output = step.output.as_ref()?;
    Some(Switch {
        chain,
        index,
        step,
        config,
        input,
        output,
        in_slice: layout(input, Slot::Slice)?,
        in_time: layout(input, Slot::Time)?,
        out_slice: layout(output, Slot::Slice)?,
        out_time: layout(output, Slot::Time)?,
    })
}

fn check_switch(cx: &FnContext<'_>, sw: &Switch<'_>, out: &mut Vec<Diagnostic>) {
    let slices = cx.cluster_slices(sw.in_slice.size);
    // SWI-008: the packet is not touched.
    packet_unchanged(sw, out);
    // SWI-001: the full cluster, in and out.
    if sw.in_slice.size != slices || sw.out_slice.size != slices {
        // In a `#[device]` kernel CAP-003 reports every written Slice mapping that is not the
        // cluster's
        // where it is written; a short input written elsewhere is that finding, not a second
        // one at the switch. (CAP-003 leaves the switch's own output Slice to this rule.)
        let reported_by_cap = matches!(cx.model.kind, crate::model::FnKind::Device { .. })
            && sw.out_slice.size == slices
            && sw.input.get(Slot::Slice).is_some_and(|m| m.span.is_some());
        if !reported_by_cap {
            out.push(full_cluster(cx.scope, sw, slices));
        }
        return;
    }
    let Some(known) = axes_of(sw.in_slice)
        .zip(axes_of(sw.in_time))
        .map(|(mut a, b)| {
            a.extend(b);
            a
        })
    else {
        return;
    };
    match sw.config.topo {
        Topology::Custom { ring_size } => check_custom(cx, sw, ring_size, &known, out),
        topo => check_regular(cx, sw, topo, &known, out),
    }
}

fn packet_unchanged(sw: &Switch<'_>, out: &mut Vec<Diagnostic>) {
    if sw.index + 1 != sw.chain.steps.len() {
        return;
    }
    let Some(declared) = sw.chain.declared.as_ref() else {
        return;
    };
    if declared.kind != crate::model::Kind::Switch {
        return;
    }
    let (Some(want), Some(have)) = (declared.get(Slot::Packet), sw.input.get(Slot::Packet)) else {
        return;
    };
    let (Some(a), Some(b)) = (&want.layout, &have.layout) else {
        return;
    };
    if a == b {
        return;
    }
    let span = want.span.unwrap_or(sw.step.span);
    let mut d = Diagnostic::new(
        &SWI_008,
        span,
        format!(
            "the switch passes the packet through unchanged: its Packet is the FetchTensor's `{}`, not `{}`; pad or split it afterwards with `.collect::<Time2, Packet2>()`",
            have.text, want.text
        ),
    )
    .with_related(sw.step.span, "the switch");
    if want.span.is_some() {
        d = d.with_edit("keep the fetched packet", false, span, have.text.clone());
    }
    out.push(d);
}

fn full_cluster(scope: &Scope, sw: &Switch<'_>, slices: u64) -> Diagnostic {
    let out_short = sw.out_slice.size != slices;
    let (span, which, text_, size) = if out_short {
        (
            sw.slice_span(),
            "output Slice",
            output_arg(sw.step, Some(0), Slot::Slice)
                .map_or_else(|| text(sw.output, Slot::Slice), |a| a.text),
            sw.out_slice.size,
        )
    } else {
        (
            // The input Slice the fix pads, where it is written.
            input_arg(sw.step, Slot::Slice).map_or(sw.step.span, |a| a.span),
            "input Slice",
            text(sw.input, Slot::Slice),
            sw.in_slice.size,
        )
    };
    let mut d = at_arg(
        &SWI_001,
        sw.step,
        Some(span),
        format!(
            "the switch {which} `{text_}` has size {size}; the Switch Engine's ring runs through all {slices} slices of a cluster, so InSlice::SIZE and OutSlice::SIZE must both be {slices}"
        ),
    );
    if size < slices {
        let arg = if out_short {
            output_arg(sw.step, Some(0), Slot::Slice)
        } else {
            sw.input
                .get(Slot::Slice)
                .and_then(|m| Some(Arg::mapping(m, m.span?)))
        };
        if let Some(edit) = arg.and_then(|a| pad_edit(scope, &a, slices)) {
            d = d.with_fix(format!("pad the Slice to {slices}"), false, vec![edit]);
        }
    }
    d
}

fn check_regular(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    topo: Topology,
    known: &BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    let exp = match expected(topo, sw.in_slice, sw.in_time) {
        Ok(Some(e)) => e,
        Ok(None) => return,
        Err(u) => {
            let span = sw.config.span(u.field, sw.step.span);
            out.push(Diagnostic::new(
                u.code,
                span,
                format!("{}: {}", topo.describe(), u.message),
            ));
            return;
        }
    };
    let (Some(want_slice), Some(have_slice)) = (
        tiled(&exp.0, known),
        tiled(&broadcast_read(topo, sw.out_slice, known), known),
    ) else {
        return;
    };
    let slice_ok = want_slice == have_slice;
    let time_ok = exp.1 == *sw.out_time;
    if slice_ok && time_ok {
        identity(cx, sw, out);
        ring_cost(cx, sw, topo, None, out);
        return;
    }
    let shown_slice = render(&exp.0, sw.out_slice, known).unwrap_or_else(|| show(&exp.0));
    let shown_time = format!("m![{}]", exp.1.to_expr());
    let span = if slice_ok {
        sw.time_span()
    } else {
        sw.slice_span()
    };
    let mut msg = format!(
        "{} turns Slice `{}` and Time `{}` into Slice2 `{}` and Time2 `{}`, but the switch writes Slice2 `{}` and Time2 `{}`",
        topo.describe(),
        text(sw.input, Slot::Slice),
        text(sw.input, Slot::Time),
        shown_slice,
        shown_time,
        output_arg(sw.step, Some(0), Slot::Slice)
            .map_or_else(|| text(sw.output, Slot::Slice), |a| a.text),
        output_arg(sw.step, Some(1), Slot::Time)
            .map_or_else(|| text(sw.output, Slot::Time), |a| a.text),
    );
    if exp
        .0
        .dims
        .iter()
        .any(|d| matches!(d, Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name == TILE))
    {
        msg.push_str(" (a new axis or padding marks the broadcast slices)");
    }
    let mut d = at_arg(&SWI_002, sw.step, Some(span), msg);
    let mut edits = Vec::new();
    if !slice_ok && let Some(t) = render(&exp.0, sw.out_slice, known) {
        edits.extend(out_edits(sw, 0, Slot::Slice, &t));
    }
    if !time_ok {
        edits.extend(out_edits(sw, 1, Slot::Time, &shown_time));
    }
    let complete = (slice_ok || edits.iter().any(|e| e.span == sw.slice_span()))
        && (time_ok || edits.iter().any(|e| e.span == sw.time_span()));
    if complete && !edits.is_empty() {
        d = d.with_fix(
            format!("write the {} output", topo.describe()),
            false,
            edits,
        );
    }
    out.push(d);
}

/// KRN-003: a switch whose output is its input.
fn identity(_cx: &FnContext<'_>, sw: &Switch<'_>, out: &mut Vec<Diagnostic>) {
    if sw.out_slice != sw.in_slice || sw.out_time != sw.in_time {
        return;
    }
    out.push(Diagnostic::new(
        &KRN_003,
        sw.step.span,
        format!(
            "{} leaves Slice `{}` and Time `{}` as they are: this is forwarding; drop `.switch()` and call `.collect()` on the FetchTensor (ring size 1)",
            sw.config.topo.describe(),
            text(sw.input, Slot::Slice),
            text(sw.input, Slot::Time),
        ),
    ));
}

/// The outermost part of the Slice that input and output share (slices that keep their data
/// group); the ring must span the rest. Both sizes are the cluster's (a power of two).
fn needed_ring(in_slice: &Layout, out_slice: &Layout, known: &BTreeSet<String>) -> Option<u64> {
    let a = tiled(in_slice, known)?;
    let b = tiled(out_slice, known)?;
    let n = a.size;
    if n != b.size || !n.is_power_of_two() {
        return None;
    }
    let mut prefix = n;
    while prefix > 1 {
        let s = n / prefix;
        if a.stride(s) == b.stride(s) {
            return Some(s);
        }
        prefix /= 2;
    }
    Some(n)
}

fn check_custom(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    ring_size: u64,
    known: &BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    let slices = sw.cluster_slices();
    let ring_span = sw.config.span("ring_size", sw.step.span);
    if !ring_size.is_power_of_two() || ring_size > slices {
        out.push(Diagnostic::new(
            &SWI_005,
            ring_span,
            format!(
                "ring_size {ring_size} is not a power of two up to {slices}: rings are 1, 2, 4, …, {slices} consecutive slices"
            ),
        ));
        return;
    }
    let needed = needed_ring(sw.in_slice, sw.out_slice, known);
    if let Some(n) = needed
        && ring_size < n
    {
        out.push(Diagnostic::new(
            &SWI_005,
            ring_span,
            format!(
                "ring_size {ring_size} is too small: from Slice `{}` to `{}` only the outer {} slice groups keep their data, so data crosses {n} consecutive slices; use ring_size: {n}",
                text(sw.input, Slot::Slice),
                output_arg(sw.step, Some(0), Slot::Slice).map_or_else(|| text(sw.output, Slot::Slice), |a| a.text),
                slices / n,
            ),
        ));
        return;
    }
    // Order first: the manual's order and innermost examples (L3459-L3483) write `B / 2` for
    // the moved `B / 2 % 2`, which would otherwise read as duplicated data.
    if moved_order(sw, out) {
        return;
    }
    if conservation(sw, known, out) {
        return;
    }
    if sw.out_slice == sw.in_slice && sw.out_time == sw.in_time {
        identity(cx, sw, out);
        return;
    }
    if let Some(n) = needed
        && ring_size > n
    {
        ring_cost(cx, sw, sw.config.topo, Some(n), out);
    } else {
        ring_cost(cx, sw, sw.config.topo, None, out);
    }
    regular_alternative(cx, sw, ring_size, known, out);
}

/// Per axis: how many coordinates the factors cover (the product of their valid counts).
fn coverage(ls: &[&Layout], skip: &dyn Fn(&str) -> bool) -> Option<BTreeMap<String, u128>> {
    let mut m: BTreeMap<String, u128> = BTreeMap::new();
    for l in ls {
        for d in &l.dims {
            match d {
                Dim::Factor(f) => {
                    if let Some(a) = &f.axis
                        && !skip(&a.name)
                    {
                        let e = m.entry(a.name.to_string()).or_insert(1);
                        *e = e.checked_mul(u128::from(f.valid))?;
                    }
                }
                Dim::Opaque(_) => return None,
            }
        }
    }
    Some(m)
}

/// SWI-009; true when reported.
fn conservation(sw: &Switch<'_>, known: &BTreeSet<String>, out: &mut Vec<Diagnostic>) -> bool {
    let fresh_in_time: Vec<String> = sw
        .out_time
        .dims
        .iter()
        .filter_map(|d| match d {
            Dim::Factor(Factor { axis: Some(a), .. }) if !known.contains(&*a.name) => {
                Some(a.name.to_string())
            }
            _ => None,
        })
        .collect();
    if let Some(name) = fresh_in_time.first() {
        out.push(at_arg(
            &SWI_009,
            sw.step,
            Some(sw.time_span()),
            format!(
                "Time2 holds `{name}`, an axis the input (Slice `{}`, Time `{}`) does not have: a switch only rearranges its data, and new axes appear only in Slice, as broadcast copies",
                text(sw.input, Slot::Slice),
                text(sw.input, Slot::Time),
            ),
        ));
        return true;
    }
    let none = |_: &str| false;
    let fresh = |n: &str| !known.contains(n);
    let (Some(have), Some(got)) = (
        coverage(&[sw.in_slice, sw.in_time], &none),
        coverage(&[sw.out_slice, sw.out_time], &fresh),
    ) else {
        return false;
    };
    for (axis, n) in &have {
        let m = got.get(axis).copied().unwrap_or(1);
        if *n > 1 && m == 1 {
            out.push(at_arg(
                &SWI_009,
                sw.step,
                Some(sw.time_span()),
                format!(
                    "axis `{axis}` ({n} values in the input Slice × Time) is missing from Slice2 `{}` and Time2 `{}`: a switch cannot drop data; move it to Time",
                    text(sw.output, Slot::Slice),
                    text(sw.output, Slot::Time),
                ),
            ));
            return true;
        }
        if m > *n {
            out.push(at_arg(
                &SWI_009,
                sw.step,
                Some(sw.time_span()),
                format!(
                    "axis `{axis}` covers {m} values in Slice2 × Time2 but only {n} in the input: the same data cannot be both in Slice and in Time; broadcast with a new axis instead",
                ),
            ));
            return true;
        }
    }
    false
}

/// The factors of the output Time that come from the input Slice, with their order key
/// (position of the input Slice digit, then outermost first within it).
/// Where a moved factor sat in the input Slice: the digit, then outermost first within it.
type MoveKey = (usize, std::cmp::Reverse<u64>);

fn moved(sw: &Switch<'_>) -> Vec<(usize, Option<MoveKey>)> {
    sw.out_time
        .dims
        .iter()
        .enumerate()
        .map(|(k, d)| {
            let key = match d {
                Dim::Factor(Factor {
                    axis: Some(a),
                    coef,
                    ..
                }) => sw
                    .in_slice
                    .dims
                    .iter()
                    .enumerate()
                    .find_map(|(j, s)| match s {
                        Dim::Factor(Factor {
                            axis: Some(b),
                            coef: c,
                            extent,
                            ..
                        }) if b.name == a.name
                            && *coef >= *c
                            && u128::from(*coef) < u128::from(*c) * u128::from(*extent) =>
                        {
                            Some((j, std::cmp::Reverse(*coef)))
                        }
                        _ => None,
                    }),
                _ => None,
            };
            (k, key)
        })
        .collect()
}

/// Renders the output Time with the digits in `order`.
fn reordered(time: &Layout, order: &[usize]) -> Option<String> {
    let dims = order
        .iter()
        .map(|&k| time.dims.get(k).cloned())
        .collect::<Option<Vec<_>>>()?;
    Layout::from_dims(dims)
        .ok()
        .map(|l| format!("m![{}]", l.to_expr()))
}

fn digit(time: &Layout, k: usize) -> String {
    time.dims
        .get(k)
        .and_then(|d| Layout::from_dims(vec![d.clone()]).ok())
        .map_or_else(|| "?".to_string(), |l| l.to_expr())
}

/// SWI-006 and SWI-007; true when reported.
fn moved_order(sw: &Switch<'_>, out: &mut Vec<Diagnostic>) -> bool {
    let digits = moved(sw);
    let keys: Vec<(usize, MoveKey)> = digits
        .iter()
        .filter_map(|(k, key)| key.map(|v| (*k, v)))
        .collect();
    let span = sw.time_span();
    let written = output_arg(sw.step, Some(1), Slot::Time);
    // SWI-006: order preservation.
    if let Some(w) = keys.windows(2).find(|w| w[0].1 > w[1].1) {
        let mut sorted = keys.clone();
        sorted.sort_by_key(|(_, key)| *key);
        let mut order: Vec<usize> = Vec::new();
        let mut it = sorted.iter().map(|(k, _)| *k);
        for (k, key) in &digits {
            if key.is_some() {
                order.extend(it.next());
            } else {
                order.push(*k);
            }
        }
        let mut d = at_arg(
            &SWI_006,
            sw.step,
            Some(span),
            format!(
                "`{}` and `{}` move from Slice `{}` into Time in reversed order: axes moving from Slice to Time keep their input Slice order, the routers cannot reorder",
                digit(sw.out_time, w[0].0),
                digit(sw.out_time, w[1].0),
                text(sw.input, Slot::Slice),
            ),
        );
        if written.is_some()
            && let Some(t) = reordered(sw.out_time, &order)
        {
            d = d.with_fix(
                "keep the input Slice order",
                false,
                out_edits(sw, 1, Slot::Time, &t),
            );
        }
        out.push(d);
        return true;
    }
    // SWI-007: moved digits are the innermost Time digits.
    let first = digits.iter().position(|(_, key)| key.is_some());
    if let Some(first) = first
        && let Some((k, _)) = digits[first..].iter().find(|(k, key)| {
            key.is_none()
                && !matches!(
                    sw.out_time.dims.get(*k),
                    Some(Dim::Factor(Factor { axis: None, .. }))
                )
        })
    {
        let mut order: Vec<usize> = digits
            .iter()
            .filter(|(_, key)| key.is_none())
            .map(|(k, _)| *k)
            .collect();
        order.extend(
            digits
                .iter()
                .filter(|(_, key)| key.is_some())
                .map(|(k, _)| *k),
        );
        let mut d = at_arg(
            &SWI_007,
            sw.step,
            Some(span),
            format!(
                "`{}` sits inside the axes moved from Slice `{}` (`{}` …): data from other slices arrives last within each packet, so the moved axes must be the innermost Time positions",
                digit(sw.out_time, *k),
                text(sw.input, Slot::Slice),
                digit(sw.out_time, digits[first].0),
            ),
        );
        if written.is_some()
            && let Some(t) = reordered(sw.out_time, &order)
        {
            d = d.with_fix(
                "move the moved axes innermost",
                false,
                out_edits(sw, 1, Slot::Time, &t),
            );
        }
        out.push(d);
        return true;
    }
    false
}

/// SWI-010: a regular topology that gives the same output as this custom one.
fn regular_alternative(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    ring_size: u64,
    known: &BTreeSet<String>,
    out: &mut Vec<Diagnostic>,
) {
    let (Some(have_slice), slices) = (tiled(sw.out_slice, known), sw.cluster_slices()) else {
        return;
    };
    let mut pows = Vec::new();
    let mut p = 1u64;
    while p <= slices {
        pows.push(p);
        p = p.saturating_mul(2);
        if p == 0 {
            break;
        }
    }
    let mut time0s: Vec<u64> = Vec::new();
    let t = sw.in_time.size;
    let mut d = 1u64;
    while d <= t && time0s.len() < 64 && d <= 1 << 16 {
        if t.is_multiple_of(d) {
            time0s.push(d);
        }
        d += 1;
    }
    let mut candidates = Vec::new();
    for &s1 in &pows {
        for &s0 in &pows {
            if s1.saturating_mul(s0) > slices {
                continue;
            }
            candidates.push(Topology::Transpose {
                slice1: s1,
                slice0: s0,
            });
            candidates.push(Topology::Broadcast1 {
                slice1: s1,
                slice0: s0,
            });
            for &t0 in &time0s {
                candidates.push(Topology::Broadcast01 {
                    slice1: s1,
                    slice0: s0,
                    time0: t0,
                });
            }
        }
    }
    for topo in candidates {
        let Some(ring) = topo.ring_size() else {
            continue;
        };
        if ring <= 1 || ring > ring_size.max(1) {
            continue;
        }
        let Ok(Some((s, t2))) = expected(topo, sw.in_slice, sw.in_time) else {
            continue;
        };
        if t2 != *sw.out_time || tiled(&s, known).as_ref() != Some(&have_slice) {
            continue;
        }
        let flit = cx.target.flit_bytes;
        let cost = sw
            .cycles(ring, flit)
            .map_or_else(String::new, |(c, _)| format!(" ({c} ring cycles)"));
        out.push(
            Diagnostic::new(
                &SWI_010,
                sw.config.span("ring_size", sw.step.span),
                format!(
                    "this CustomBroadcast is the regular {}{cost}: a custom topology preempts DMA and the sub context to write its bitmap to the SFRs, a regular one does not",
                    topo.describe()
                ),
            )
            .with_related(sw.step.span, "the switch"),
        );
        return;
    }
}

/// SWI-011: a ring larger than needed, or a whole-cluster ring that only moves data.
fn ring_cost(
    cx: &FnContext<'_>,
    sw: &Switch<'_>,
    topo: Topology,
    smaller: Option<u64>,
    out: &mut Vec<Diagnostic>,
) {
    let flit = cx.target.flit_bytes;
    let Some(ring) = topo.ring_size() else { return };
    if let Some(n) = smaller {
        let (Some((now, _)), Some((then, _))) = (sw.cycles(ring, flit), sw.cycles(n, flit)) else {
            return;
        };
        out.push(Diagnostic::new(
            &SWI_011,
            sw.config.span("ring_size", sw.step.span),
            format!(
                "ring_size {ring} is larger than needed: only {n} consecutive slices exchange data here, and the ring costs ring_size × input_time × flits = {now} cycles; ring_size: {n} takes {then}"
            ),
        ));
        return;
    }
    if ring < sw.cluster_slices() || matches!(topo, Topology::Custom { .. }) {
        return;
    }
    // A whole-cluster ring that feeds collect and commit directly: a DMA copy.
    let rest: Vec<&Method> = sw.chain.steps[sw.index + 1..]
        .iter()
        .map(|s| &s.method)
        .collect();
    if rest != [&Method::Collect, &Method::Commit] {
        return;
    }
    let Some((cycles, bytes)) = sw.cycles(ring, flit) else {
        return;
    };
    let total = u128::from(sw.cluster_slices()) * u128::from(sw.in_time.size) * u128::from(bytes);
    let dma = total.div_ceil(u128::from(cx.target.dma_dm_bytes_per_cycle.max(1)));
    if u128::from(cycles) <= dma {
        return;
    }
    out.push(Diagnostic::new(
        &SWI_011,
        sw.step.span,
        format!(
            "this switch runs a {ring}-slice ring only to move data into DM: ring_size × input_time × flits = {cycles} cycles, while a DMA of the same {total} bytes at {} B/cycle takes about {dma}",
            cx.target.dma_dm_bytes_per_cycle
        ),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::evaluate;

    /// The layout of `mapping` under `axes`.
    fn l(axes: &str, mapping: &str) -> Layout {
        evaluate(axes, mapping)
            .layout
            .unwrap_or_else(|| panic!("{mapping} lowers"))
    }

    /// The expected output of `topo` as `m!` bodies, broadcasts named `X`.
    fn out(axes: &str, slice: &str, time: &str, topo: Topology) -> (String, String) {
        let (s, t) = expected(topo, &l(axes, slice), &l(axes, time))
            .expect("parameters fit")
            .expect("regular");
        (show(&s), format!("m![{}]", t.to_expr()))
    }

    fn same(axes: &str, got: &(String, String), slice: &str, time: &str) {
        let known: BTreeSet<String> = ["A", "B", "C", "D"].iter().map(|s| s.to_string()).collect();
        let strip = |s: &str| {
            s.trim_start_matches("m![")
                .trim_end_matches(']')
                .to_string()
        };
        let (gs, gt) = (l(axes, &strip(&got.0)), l(axes, &strip(&got.1)));
        assert_eq!(
            tiled(&gs, &known),
            tiled(&l(axes, slice), &known),
            "slice {got:?}"
        );
        assert_eq!(gt, l(axes, time), "time {got:?}");
    }

    #[test]
    fn broadcast01_golden_l3160_l3203() {
        // L3160-L3165: In Slice m![A], Time m![B]; slice1 = 2, slice0 = 2, time0 = 4 gives
        // Slice m![A / 4, 4] and Time m![B / 4, A / 2 % 2, B % 4, A % 2].
        let axes = "A = 256, B = 64, X = 4";
        let topo = Topology::Broadcast01 {
            slice1: 2,
            slice0: 2,
            time0: 4,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 4, X", "B / 4, A / 2 % 2, B % 4, A % 2");
    }

    #[test]
    fn broadcast01_golden_l3213_l3217() {
        // L3213-L3217: Slice m![A] (A = 64), Time m![B / 2]; slice0 = 8, slice1 = 8, time0 = 2
        // gives Slice m![A / 64, 64] and Time m![B / 4, A / 8 % 8, B / 2 % 2, A % 8].
        let axes = "A = 64, B = 64, X = 64";
        let topo = Topology::Broadcast01 {
            slice1: 8,
            slice0: 8,
            time0: 2,
        };
        let got = out(axes, "A", "B / 2", topo);
        same(
            axes,
            &got,
            "A / 64, X",
            "B / 4, A / 8 % 8, B / 2 % 2, A % 8",
        );
    }

    #[test]
    fn router_example_l3104_l3118() {
        // L3104-L3118: Slice m![A] (A = 2), Time m![B] (B = 2), Broadcast01 slice0 = 2,
        // slice1 = 1 gives Slice m![A / 2, 2] and Time m![B / 2, B % 2, A % 2].
        let axes = "A = 2, B = 2, X = 2";
        let topo = Topology::Broadcast01 {
            slice1: 1,
            slice0: 2,
            time0: 1,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 2, X", "B / 2, B % 2, A % 2");
    }

    #[test]
    fn transposed_broadcast1_moves_slice0_to_time() {
        // The library's TransposedBroadcast1 { slice1: 8, slice0: 8 } (no manual page): Slice
        // [slice2, slice1, slice0] becomes [slice2, tile, slice1], Time [time, slice0].
        let axes = "A = 256, B = 64, X = 8";
        let topo = Topology::TransposedBroadcast1 {
            slice1: 8,
            slice0: 8,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 64, X, A / 8 % 8", "B, A % 8");
    }

    #[test]
    fn padding_in_broadcast_positions_is_a_broadcast() {
        let axes = "A = 256, B = 64, X = 4";
        let known: BTreeSet<String> = ["A", "B"].iter().map(|s| s.to_string()).collect();
        let topo = Topology::Broadcast1 {
            slice1: 4,
            slice0: 4,
        };
        let (want, _) = expected(topo, &l(axes, "A"), &l(axes, "B"))
            .expect("parameters fit")
            .expect("regular");
        let read = |m: &str| tiled(&broadcast_read(topo, &l(axes, m), &known), &known);
        let want = tiled(&want, &known);
        assert_eq!(read("A / 16, 1 # 4, A % 4"), want);
        assert_eq!(read("A / 16, X, A % 4"), want);
        // Padding elsewhere, or an input axis in the broadcast positions, is not.
        assert_ne!(read("A / 16, A % 4, 1 # 4"), want);
        assert_ne!(read("A / 16, A / 4 % 4, A % 4"), want);
    }

    #[test]
    fn broadcast1_golden_l3236_l3254() {
        let axes = "A = 256, B = 64, X = 4";
        let topo = Topology::Broadcast1 {
            slice1: 4,
            slice0: 8,
        };
        let got = out(axes, "A", "B", topo);
        same(axes, &got, "A / 32, X, A % 8", "B, A / 8 % 4");
    }

    #[test]
    fn transpose_golden_l3265_l3284() {
        let axes = "A = 256, B = 64";
        let topo = Topology::Transpose {
            slice1: 32,
            slice0: 2,
        };
        let got = out(axes, "A", "B", topo);
        assert_eq!(got.0, "m![A / 64, A % 2, A / 2 % 32]");
        same(axes, &got, "A / 64, A % 2, A / 2 % 32", "B");
    }

    #[test]
    fn inter_transpose_golden_l3305_l3335() {
        let axes = "A = 8, C = 256";
        let topo = Topology::InterTranspose {
            slice1: 2,
            slice0: 16,
            time0: 2,
        };
        let got = out(axes, "C", "A", topo);
        same(
            axes,
            &got,
            "C / 32, A / 2 % 2, C % 16",
            "A / 4, A % 2, C / 16 % 2",
        );
    }

    #[test]
    fn gemv_broadcast_l384_l400() {
        // Slice m![1 # 256] broadcast over 256 slices: the padding moves to Time.
        let axes = "I = 256";
        let topo = Topology::Broadcast01 {
            slice1: 256,
            slice0: 1,
            time0: 1,
        };
        let (s, t) = expected(topo, &l(axes, "1 # 256"), &l(axes, "1"))
            .expect("fits")
            .expect("regular");
        assert_eq!(t, l(axes, "1 # 256"));
        let known = BTreeSet::new();
        assert_eq!(tiled(&s, &known), tiled(&l(axes, "I"), &known));
    }

    #[test]
    fn cycle_estimates_golden() {
        let flit = crate::target::RNGD.flit_bytes;
        // L3206-L3209: Broadcast01 ring 2 × 2, B = 64, packet (C # 64) i8 = 64 bytes.
        assert_eq!(ring_cycles(4, 64, 64, flit), Some(512));
        // L3361-L3363: arbitrary permutation, ring 256, C = 8, m![D, E] i8 = 64 bytes.
        assert_eq!(ring_cycles(256, 8, 64, flit), Some(4096));
        // L3398-L3400: multi-axis broadcast, ring 32.
        assert_eq!(ring_cycles(32, 8, 64, flit), Some(512));
        // L3438-L3440: partial axis extraction, ring 4: the manual prints "4 × 8 × 2 = 128",
        // but the product of its own factors is 64.
        assert_eq!(ring_cycles(4, 8, 64, flit), Some(64));
        // L3527-L3529: ring 4, input_time 64, 64-byte packets.
        assert_eq!(ring_cycles(4, 64, 64, flit), Some(512));
        assert_eq!(ring_cycles(u64::MAX, 2, 64, flit), None);
    }

    #[test]
    fn parameters_must_divide() {
        let axes = "A = 256, B = 64";
        let e = expected(
            Topology::Broadcast01 {
                slice1: 2,
                slice0: 2,
                time0: 3,
            },
            &l(axes, "A"),
            &l(axes, "B"),
        );
        assert_eq!(
            e.map_err(|u| (u.code.code, u.field)),
            Err(("SWI-003", "time0"))
        );
        let e = expected(
            Topology::Transpose {
                slice1: 3,
                slice0: 2,
            },
            &l(axes, "A"),
            &l(axes, "B"),
        );
        assert_eq!(e.map_err(|u| u.code.code), Err("SWI-003"));
        let e = expected(
            Topology::Transpose {
                slice1: 0,
                slice0: 2,
            },
            &l(axes, "A"),
            &l(axes, "B"),
        );
        assert_eq!(
            e.map_err(|u| (u.code.code, u.field)),
            Err(("SWI-003", "slice1"))
        );
        let e = expected(
            Topology::InterTranspose {
                slice1: 4,
                slice0: 16,
                time0: 2,
            },
            &l("A = 4, C = 256", "C"),
            &l("A = 4, C = 256", "A"),
        );
        assert_eq!(e.map_err(|u| u.code.code), Err("SWI-004"));
    }

    #[test]
    fn huge_sizes_do_not_panic() {
        let axes = "A = 256, B = 9223372036854775808";
        for topo in [
            Topology::Broadcast01 {
                slice1: u64::MAX,
                slice0: 2,
                time0: u64::MAX,
            },
            Topology::InterTranspose {
                slice1: 1 << 40,
                slice0: 1 << 40,
                time0: 0,
            },
            Topology::Broadcast1 {
                slice1: 16,
                slice0: 16,
            },
        ] {
            let _ = expected(topo, &l(axes, "A"), &l(axes, "B"));
        }
    }

    #[test]
    fn needed_ring_l3401_l3441() {
        let axes = "A = 16, B = 16, X = 2, Y = 2";
        let known: BTreeSet<String> = ["A", "B"].iter().map(|s| s.to_string()).collect();
        let inn = l(axes, "A, B");
        assert_eq!(
            needed_ring(&inn, &l(axes, "A / 2, X, B / 2, Y"), &known),
            Some(32)
        );
        assert_eq!(
            needed_ring(&inn, &l("A = 16, B = 16, X = 4", "A, B / 4, X"), &known),
            Some(4)
        );
        assert_eq!(
            needed_ring(&inn, &l(axes, "B % 4, B / 4, A % 4, A / 4"), &known),
            Some(256)
        );
    }

    #[test]
    fn config_parsing_reads_fields_and_spans() {
        let text = "SwitchConfig::Broadcast01 {\n slice1: 2,\n slice0: 1_0, time0: 4u32, }";
        let arg = Arg::written(text.to_string(), Span::new(100, 100 + text.len()));
        let c = parse_config(&arg).expect("parses");
        assert_eq!(
            c.topo,
            Topology::Broadcast01 {
                slice1: 2,
                slice0: 10,
                time0: 4
            }
        );
        let s = c.span("slice0", Span::default());
        assert_eq!(&text[s.start as usize - 100..s.end as usize - 100], "1_0");
        let text = "SwitchConfig::CustomBroadcast {\n ring_size: 4, // r\n /* é */ }";
        let arg = Arg::written(text.to_string(), Span::new(0, text.len()));
        let c = parse_config(&arg).expect("comments are skipped");
        assert_eq!(c.topo, Topology::Custom { ring_size: 4 });
        let bad = Arg::written(
            "SwitchConfig::CustomBroadcast { ring_size: N }".to_string(),
            Span::default(),
        );
        assert!(parse_config(&bad).is_none());
    }

    fn codes(text: &str) -> Vec<String> {
        crate::check_text(text)
            .into_iter()
            .filter(|d| d.code().starts_with("SWI") || d.code() == "KRN-003")
            .map(|d| format!("{} {}", d.code(), &text[d.span.range()]))
            .collect()
    }

    #[test]
    fn manual_invalid_custom_examples_fire() {
        let kernel = |time: &str, slice: &str, ring: u64| {
            format!(
                "use furiosa_visa_std::prelude::*;\naxes![A = 16, B = 16, C = 8, D = 8, E = 8, X = 4, Y = 2, Z = 2];\n\
                 fn f<'l, const T: Tu>(input: FetchTensor<'l, T, i8, m![1], m![1 # 2], m![A, B], m![C], m![D, E]>) \
                 -> SwitchTensor<'l, T, i8, m![1], m![1 # 2], m![{slice}], m![{time}], m![D, E]> {{\n\
                 input.switch::<m![{slice}], m![{time}]>(SwitchConfig::CustomBroadcast {{ ring_size: {ring} }})\n}}\n"
            )
        };
        // L3459-L3470: Time m![C, B % 2, B / 2] reverses the moved B.
        let t = kernel("C, B % 2, B / 2", "A, B / 4, X", 4);
        assert_eq!(codes(&t), vec!["SWI-006 m![C, B % 2, B / 2]".to_string()]);
        // The valid order; that custom bitmap is also the regular Broadcast1 { 4, 1 }.
        let t = kernel("C, B / 2 % 2, B % 2", "A, B / 4, X", 4);
        assert_eq!(codes(&t), vec!["SWI-010 4".to_string()]);
        // L3471-L3483: Time m![A % 2, C, B % 2] puts C between the moved axes.
        let t = kernel("A % 2, C, B % 2", "A / 2, Y, B / 2, Z", 32);
        assert_eq!(codes(&t), vec!["SWI-007 m![A % 2, C, B % 2]".to_string()]);
    }
}
