//! MAP: well-formedness of mapping expressions (constraints.md §3). The checks themselves run
//! while a mapping is lowered to its normal form (`crate::mapping::lower`).

use super::registry::{Rule, Status};
use crate::diagnostic::Severity;

pub const RULES: &[Rule] = &[
    Rule {
        code: "MAP-001",
        name: "stride-must-divide",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "`E / n` needs `n` to divide `E::SIZE`",
        docs: "Stride keeps every n-th buffer position of its operand, so the operand's size must be a \
               multiple of n; the library asserts \"Stride size must divide the original size\" at const \
               evaluation. Pad the operand first: `E # k / n` with k the next multiple of n.",
        bad: "axes![A = 63]; type E = m![A / 8];",
        good: "axes![A = 63]; type E = m![A # 64 / 8];",
        manual: "L873, L5588",
    },
    Rule {
        code: "MAP-002",
        name: "modulo-must-divide",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "`E % n` needs `n` to divide `E::SIZE`",
        docs: "Modulo keeps the first n positions of its operand as the inner block of a split; the \
               library asserts \"Modulo size must divide the original size\". Pad the operand first: \
               `E # k % n` with k the next multiple of n.",
        bad: "axes![A = 15]; type E = m![A % 4];",
        good: "axes![A = 15]; type E = m![A # 16 % 4];",
        manual: "L891, L1027",
    },
    Rule {
        code: "MAP-003",
        name: "padding-must-not-shrink",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "`E # n` pads *to* n positions, so `n >= E::SIZE`",
        docs: "Padding creates a buffer of n positions whose tail maps to no tensor element. A pad \
               smaller than its operand is not a padding: some Fetch/Commit pages of the manual write \
               `# n` as \"add n\", but the formal definition (and `E # E::SIZE` being the identity) is \
               pad-to-size (constraints.md §22 A-6). If you meant to add n positions, write \
               `# (size + n)`; if you meant to keep fewer, use resize `= n`.",
        bad: "axes![C = 2]; type E = m![C # 6];",
        good: "axes![C = 2]; type E = m![C # 8];",
        manual: "L741-L778, L1027, L7656",
    },
    Rule {
        code: "MAP-004",
        name: "resize-must-shrink",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "`E = n` truncates, so `n <= E::SIZE`",
        docs: "Resize keeps the first n positions of its operand and discards the rest; it only \
               shrinks. A larger n would read past the operand: use padding `# n` to grow a dimension.",
        bad: "axes![D = 3]; type E = m![D = 5];",
        good: "axes![D = 3]; type E = m![D = 2];",
        manual: "L780, L810, L831",
    },
    Rule {
        code: "MAP-005",
        name: "undeclared-axis",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "Every symbol in `m![...]` must be declared with its size in `axes![...]`",
        docs: "A symbol takes its size from the `axes!` declaration; an undeclared symbol has no size \
               and no `AxisName` type. Declare it (`axes![X = 16]`) or fix the spelling. Declaring the \
               same axis twice with different sizes is reported here too.",
        bad: "axes![A = 8]; type E = m![A, X];",
        good: "axes![A = 8, X = 16]; type E = m![A, X];",
        manual: "L588, L625, L5360",
    },
    Rule {
        code: "MAP-006",
        name: "unknown-mapping-alias",
        severity: Severity::Error,
        status: Status::Implemented,
        summary: "`{ T }` must name a mapping type alias (`type T = m![...]`), without cycles",
        docs: "An escape splices a named mapping into another. The name must resolve to a \
               `type T = m![...];` alias in scope, and aliases must not refer to themselves through \
               escapes. Generic parameters (`{ Time }` inside a generic function) are accepted and \
               left unknown.",
        bad: "type E = m![{ L }, B];",
        good: "type L = m![A]; type E = m![{ L }, B];",
        manual: "L972-L984",
    },
    Rule {
        code: "MAP-007",
        name: "mapping-equivalence",
        severity: Severity::Info,
        status: Status::Implemented,
        summary: "Mappings are compared by meaning (same SIZE and map), not by spelling",
        docs: "Two mappings are equivalent when they have the same size and send every buffer position \
               to the same tensor index. visa-lint compares the canonical normal forms it computes from \
               the manual's laws (identity of pairs, stride/modulo decomposition, pair projection, \
               associativity, idempotent operations, modulo by 1). This is infrastructure for every \
               other rule; it reports nothing by itself.",
        bad: "",
        good: "type E = m![B / 64, B % 64]; // same as m![B]",
        manual: "L1017-L1028, L578",
    },
    Rule {
        code: "MAP-008",
        name: "skew-and-linear-combination",
        severity: Severity::Warning,
        status: Status::Implemented,
        summary: "A skewed axis needs an explicit logical size (`B' = 4`); linear combinations follow the size formula",
        docs: "A skewed axis `B' = B - A` has no size of its own: the manual writes `m![A, B' = 4]` to \
               give it one, and coordinates wrap modulo the base axis. A linear combination \
               `$(e1: n1, ..., ed: nd)` has size `1 + sum((size(ek) - 1) * nk)` and may send one buffer \
               position to several tensor indices (sliding windows).",
        bad: "axes![A = 4, B = 4, B' = B - A]; type E = m![A, B'];",
        good: "axes![A = 4, B = 4, B' = B - A]; type E = m![A, B' = 4];",
        manual: "L986-L1016",
    },
    Rule {
        code: "MAP-009",
        name: "tile-view-consistency",
        severity: Severity::Error,
        status: Status::Planned("issue 3 (kernel model: `.tile` calls)"),
        summary: "`.tile::<Dim, SIZE, TileMapping>(start)` must resize `Dim` to `SIZE` and stay in bounds",
        docs: "A tile view resizes one dimension to the tile size inside the original footprint \
               (`B = 2 # 4`), and `start + SIZE` must not pass the dimension's size.",
        bad: "view.tile::<m![B], 2, m![A, B = 3 # 4]>(0)",
        good: "view.tile::<m![B], 2, m![A, B = 2 # 4]>(2)",
        manual: "L823-L832, L963-L971",
    },
    Rule {
        code: "MAP-010",
        name: "storage-coverage",
        severity: Severity::Error,
        status: Status::Planned("issue 3 (kernel model: tensor types)"),
        summary: "A storage mapping must place every element of the logical tensor",
        docs: "Chip x Cluster x Slice x [Row x] Element together must cover every index of the tensor; \
               a move's source must contain every factor its destination iterates.",
        bad: "DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![B]> // A % 8 missing",
        good: "DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8, B]>",
        manual: "L149, L1155-L1159, L1557",
    },
    Rule {
        code: "MAP-011",
        name: "factorization-compatibility",
        severity: Severity::Error,
        status: Status::Planned("issue 4 (derivations)"),
        summary: "Source and destination must split each axis at points forming a divisibility chain",
        docs: "To move data between two mappings the compiler decomposes each axis into a common \
               refinement; split points such as {1, 5, 15} and {1, 3, 15} for one axis have none.",
        bad: "axes![A = 15]; src m![A / 5, A % 5] -> dst m![A / 3, A % 3]",
        good: "axes![A = 15]; src m![A / 5, A % 5] -> dst m![A / 5, A % 5]",
        manual: "L1682",
    },
];
