//! OPT: what furiosa-opt-std 0.6's compiler refuses in a `#[device]` function that the manual
//! never states. They apply to crates on furiosa-opt-std only: the model builder finds them
//! there ([`crate::model::refusals`]) and this module reports them. The manual's hardware
//! rules are the other families; these are the library's own.

use super::context::{FnContext, at_arg};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Generation;
use crate::mapping::ast::{Expr, Op as MapOp, PadKind};
use crate::mapping::layout::{Dim, Layout};
use crate::mapping::{lower, parse, shift_expr};
use crate::model::refusals::{Refusal, SlotFault};
use crate::model::{
    Chain, Dtype, FnModel, Kind, Method, Slot, Step, TensorTy, input_arg, output_arg,
};
use crate::rule::{Generations, Rule, Status};

pub const OPT_001: Rule = Rule {
    code: "OPT-001",
    name: "generic-device-entry",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `#[device]` function is not generic (furiosa-opt-std)",
    docs: "furiosa-opt-std 0.6 translates each `#[device]` function on its own, before it is \
           monomorphized, so a device function generic over an axis, a type or a constant is \
           refused (the vendor's `negative/generic_device.rs` at ebb846a). Keep the generic \
           code in a helper and write a concrete `#[device]` wrapper per instantiation.",
    bad: "#[device(chip = 1)]\nfn copy<A: AxisName>(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![A]>) { .. }",
    good: "fn copy<A: AxisName>(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![A]>) { .. }\n#[device(chip = 1)]\nfn copy_n(ctx: &mut Context, x: &HbmTensor<i8, m![1], m![N]>) { copy::<N>(ctx, x) }",
    manual: "",
    generations: Generations::OptStdOnly(
        "the vendor's translator refuses a `#[device]` function that is still generic, as it runs \
         before monomorphization (`furiosa-opt-examples/src/negative/generic_device.rs:1-11`); the \
         manual states nothing of it",
    ),
};

pub const OPT_002: Rule = Rule {
    code: "OPT-002",
    name: "runtime-panic-in-device",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `#[device]` body has no run-time `assert!` or `panic!` (furiosa-opt-std)",
    docs: "A device body runs on the chip, which has no way to panic: furiosa-opt-std 0.6 \
           refuses a run-time `assert!`, `assert_eq!`, `panic!`, `unreachable!` or `todo!` in a \
           `#[device]` function (the vendor's `negative/runtime_panic.rs` at ebb846a). A guard \
           on shapes and constants belongs in `const { assert!(..) }`, which the compiler \
           checks and removes; a guard on a run-time value has no device equivalent.",
    bad: "for b in 0..<m![B]>::SIZE { assert!(b < 1000); .. }",
    good: "const { assert!(<m![B]>::SIZE % 32 == 0) };",
    manual: "",
    generations: Generations::OptStdOnly(
        "the vendor refuses a run-time `assert!` or `panic!` in a device body \
         (`furiosa-opt-examples/src/negative/runtime_panic.rs:1-7`); the manual states nothing of \
         it",
    ),
};

pub const OPT_003: Rule = Rule {
    code: "OPT-003",
    name: "immediate-not-constant",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `memset` fill value or a Vector Engine immediate folds to a constant (furiosa-opt-std)",
    docs: "An immediate is encoded in the instruction, so furiosa-opt-std 0.6 needs it to \
           const-fold: a `memset` value or a Vector Engine scalar operand computed by a \
           function call (`bf16::from_f32(1.0)`) or an `as` cast (`<m![A]>::SIZE as f32`) is \
           refused (the vendor's `negative/memset.rs` and `negative/scalar_cast_diag.rs` at \
           ebb846a). Wrap it in `const { .. }`, offered as a fix (not applied by `--fix`: a `const` \
           block cannot read a local variable), which folds it. A value that varies while the \
           kernel runs does not fold at all: a `for` loop's variable, an `if` or `match` on one \
           (`negative/runtime_if_scalar.rs`), or a local bound to any of these; give each case \
           its own call with a constant, or pass the value as a tensor operand.",
    bad: "dm.view_mut().memset(bf16::from_f32(1.0), &mut ctx.sub);",
    good: "dm.view_mut().memset(const { bf16::from_f32(1.0) }, &mut ctx.sub);",
    manual: "",
    generations: Generations::OptStdOnly(
        "the vendor refuses a `memset` value or an immediate that does not fold to a constant \
         (`furiosa-opt-examples/src/negative/memset.rs:17-23`, \
         `negative/scalar_cast_diag.rs:1-10`); the manual has no `memset` and states no such rule",
    ),
};

pub const OPT_004: Rule = Rule {
    code: "OPT-004",
    name: "gather-index-over-spm",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "An unscaled gather's index list fits one processing element's 4 KiB SPM (furiosa-opt-std)",
    docs: "`dma_gather_unscaled` reads its index of raw row positions from the scratchpad (SPM) \
           of one processing element, which holds 4 KiB: furiosa-opt-std 0.6 refuses a gather \
           whose index list is larger (the vendor's `negative/scatter_gather.rs` at ebb846a, \
           where 2048 i32 entries, 8 KiB, are refused). The list is every entry of the index \
           tensor (its padding and broadcasts left out). Split the index into chunks of at most \
           4 KiB with a tile loop, each gathered on its own, or scale the index on the chip \
           and use `dma_gather_scaled`, which reads it from DRAM.",
    bad: "let idx: DmTensor<i32, m![1], m![1 # 2], m![R, I / 8], m![I % 8]> = ..; // R × I = 2048 entries\nlet v = table.dma_gather_unscaled(&idx);",
    good: "for c in 0..4 { let chunk = idx_hbm.view().tile::<m![I / 32], 1, ..>(c).to_dm(..); table.dma_gather_unscaled(&chunk); }",
    manual: "",
    generations: Generations::OptStdOnly(
        "`dma_gather_unscaled` exists only there (`furiosa-opt-std/src/tensor/memory.rs:380-406`; \
         `furiosa-opt-examples/src/negative/scatter_gather.rs:10-20`); the manual has no gather",
    ),
};

pub const OPT_005: Rule = Rule {
    code: "OPT-005",
    name: "commit-cast",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`commit_cast` converts f32 to bf16, from a trimmed packet of whole 16-byte units (furiosa-opt-std)",
    docs: "furiosa-opt-std 0.6 can convert a stream while the Commit Engine writes it \
           (`commit_cast::<bf16>()`, `commit_cast_relu::<bf16>()`, after `commit_trim`). That \
           conversion is f32 to bf16 only (its `CommitCast` table), and the converting commit \
           unit writes 8 bytes from every 16 it reads, so the trimmed packet, counted in f32 \
           bytes, is a multiple of 16: 16 or 32 bytes, 4 or 8 elements (its Commit Adapter \
           verifier). The manual has no commit-side cast; another conversion goes through the \
           Cast Engine (`cast::<D, Packet>()`).",
    bad: ".commit_trim::<m![N % 4 # 6]>().commit_cast::<bf16>() // 24 bytes of f32",
    good: ".commit_trim::<m![N % 4 # 8]>().commit_cast::<bf16>() // 32 bytes of f32",
    manual: "",
    generations: Generations::OptStdOnly(
        "`commit_cast` exists only there: its `CommitCast` table is f32 → bf16 \
         (`furiosa-opt-std/src/cast.rs:128-156`; CHANGES.md:52), its packet check \
         `config_commit_cast` (`furiosa-opt-lower/src/verify/engine/commit_adapter.rs:54-73`); \
         the manual casts only in the Cast Engine",
    ),
};

pub const OPT_006: Rule = Rule {
    code: "OPT-006",
    name: "reshape-keeps-level-sizes",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`reshape` keeps the size of each level: Chip, Cluster, Slice and Element in DM, Chip and Element in HBM (furiosa-opt-std)",
    docs: "`unsafe { x.reshape::<..>() }` relabels the cells a tensor already holds: it moves no \
           data, so furiosa-opt-std 0.6 const-asserts that each level keeps its size. On a DM \
           tensor or view (`DmTensor`, `DmTensorView`, `DmTensorViewMut`) the Chip, Cluster, \
           Slice and Element mappings each keep their `SIZE`; on an HBM tensor or view the Chip \
           and Element mappings do (`furiosa-opt-std/src/constraints.rs:128-173`, called from \
           every `reshape` of `src/tensor/memory.rs`, e.g. `:438-448` and `:952-971` at ebb846a; \
           CHANGES.md:55 records that 0.6 made the DM Element and the HBM size part of it). \
           Padding counts toward `SIZE` (`A # 16` has 16 positions). To change an extent write \
           `pad` / `unpad` or `tile`. The other condition of a reshape, that both mappings lay \
           the cells out in the same order (a regrouping, not a permutation), is the caller's \
           promise behind `unsafe` and is not checked here. The manual has no `reshape`; the \
           rule applies to furiosa-opt-std crates.",
    bad: "axes![A = 8, B = 64, C = 1024];\nlet y: DmTensor<i32, m![1], m![1 # 2], m![1 # 256], m![C]> = unsafe { x.reshape() }; // x: .., m![A, B] (512)",
    good: "axes![A = 8, B = 64, C = 512];\nlet y: DmTensor<i32, m![1], m![1 # 2], m![1 # 256], m![C]> = unsafe { x.reshape() }; // x: .., m![A, B] (512)",
    manual: "",
    generations: Generations::OptStdOnly(
        "the manual's library has no `reshape`; furiosa-opt-std 0.6 const-asserts the level sizes \
         in every `reshape` (`furiosa-opt-std/src/constraints.rs:128-173`, \
         `src/tensor/memory.rs:438-448`)",
    ),
};

pub const OPT_007: Rule = Rule {
    code: "OPT-007",
    name: "tile-padding-kind",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `view_mut().tile()` marks its out-of-tile cells `#{!}`, a read `view().tile()` `#` (furiosa-opt-std)",
    docs: "furiosa-opt-std 0.6 writes the padding kind into a mapping's type, and a tile view \
           states the kind of the cells outside the tile: a mutable tile \
           (`view_mut().tile::<I, LEN, E2>(start)`, a write destination) must mark them \
           inaccessible, `#{!}` (Bottom), and a read tile (`view().tile()`) plain `#` (`#{*}`, \
           Top). Its `tile` passes that kind to the tile check, which refuses a view whose \
           padding differs (`config_tile(.., PaddingKind::Bottom)` in \
           `furiosa-opt-std/src/tensor/memory.rs:738-760` and `:1275-1297`, `PaddingKind::Top` \
           for the read tiles at `:554-575` and `:1106-1130`; `TileError::UnexpectedView` in \
           `furiosa-opt-lower-types/src/tile.rs:50-62` at ebb846a). The padding checked is the \
           one around the tile dimension's resize (`B = 2 # 8`), or a size-1 tile's `1 # N` \
           where N is the tile dimension's size; other padding the view carries over from its \
           tensor keeps the tensor's kind. The fix rewrites the operator. The manual's library \
           has one padding kind; the rule applies to furiosa-opt-std crates, to tile mappings \
           written as `m![...]` (an alias is not read) and to HBM tiles whose `view()` or \
           `view_mut()` the function shows (an `HbmTensorViewMut` parameter's is not).",
    bad: "output.view_mut().tile::<m![B], 2, m![B = 2 # 8]>(0)",
    good: "output.view_mut().tile::<m![B], 2, m![B = 2 #{!} 8]>(0)",
    manual: "",
    generations: Generations::OptStdOnly(
        "the manual's library has one padding kind; furiosa-opt-std 0.6 passes Bottom for a \
         mutable tile and Top for a read one to its tile check \
         (`furiosa-opt-std/src/tensor/memory.rs:554-575,738-760`)",
    ),
};

pub const OPT_008: Rule = Rule {
    code: "OPT-008",
    name: "branched-slots",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `Branched` operand fills at most 3 immediates then 1 rf port, with no dead guard and nothing after an unconditional one (furiosa-opt-std)",
    docs: "A guarded Vector Engine operand of furiosa-opt-std 0.6 \
           (`Branched::imm(guard, v).imm(..).rf(guard, &vrf)`) fills the slots of one pass in \
           order, the first slot whose guard admits an element's execution id deciding its \
           operand. A pass has three immediate registers and one register-file port, so at most \
           three `imm` and one `rf`, the `rf` last (the builder's typestate, \
           `furiosa-opt-std/src/engine/vector/operand.rs:320-470` at ebb846a). A guard that no \
           execution id satisfies (`TagGuard::not_matches([Ignore; 4])`) is refused, and so is \
           any slot after an unconditional one (`TagGuard::all()`, `matches([Ignore; 4])`), \
           which already claims every element left over (`BranchedOperand::validate` and \
           `SlotDefect`, `furiosa-opt-common-ir/src/lib.rs:491-510,560-600`; CHANGES.md:51). \
           Put the unconditional slot last, or guard it. Guards are read from their text, \
           through `let`s; a guard built otherwise is not judged. The manual's operands \
           (`VeBranchOperand`) have no such builder; the rule applies to furiosa-opt-std crates.",
    bad: "Branched::imm(TagGuard::all(), 1.0f32).rf(negative, &scale_vrf)",
    good: "Branched::imm(negative, 1.0f32).rf(TagGuard::all(), &scale_vrf)",
    manual: "",
    generations: Generations::OptStdOnly(
        "`Branched` and `TagGuard` exist only in furiosa-opt-std 0.6, whose slot check refuses \
         these operands (`furiosa-opt-common-ir/src/lib.rs:560-600`; CHANGES.md:51)",
    ),
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    OPT_001, OPT_002, OPT_003, OPT_004, OPT_005, OPT_006, OPT_007, OPT_008,
];

/// The OPT rules that read the model (the others are refusals the model builder found).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    if cx.model.library != Generation::OptStd {
        return;
    }
    for chain in &cx.model.chains {
        for (i, step) in chain.steps.iter().enumerate() {
            match step.method {
                Method::DmaGatherUnscaled => gather_index_fits_spm(cx, step, out),
                Method::Reshape => reshape_sizes(step, out),
                Method::Tile => tile_padding(cx, chain, i, out),
                _ => {}
            }
        }
    }
    commit_casts(cx, out);
}

/// OPT-006: the level sizes a `reshape` keeps, compared between its receiver and its result.
fn reshape_sizes(step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    // The levels in the order of the method's turbofish.
    let levels: &[Slot] = match input.kind {
        Kind::Dm | Kind::DmView | Kind::DmViewMut => {
            &[Slot::Chip, Slot::Cluster, Slot::Slice, Slot::Element]
        }
        Kind::Hbm | Kind::HbmView => &[Slot::Chip, Slot::Element],
        _ => return,
    };
    let size = |ty: &TensorTy, slot: Slot| ty.get(slot)?.layout.as_deref().map(|l| l.size);
    for (i, slot) in levels.iter().enumerate() {
        let (Some(was), Some(now)) = (size(input, *slot), size(output, *slot)) else {
            continue;
        };
        if was == now {
            continue;
        }
        let written = output_arg(step, Some(i), *slot);
        let text = written.as_ref().map_or_else(
            || format!("the {slot:?} mapping"),
            |a| format!("`{}`", a.text.trim()),
        );
        let mut d = at_arg(
            &OPT_006,
            step,
            written.map(|a| a.span),
            format!(
                "`reshape` relabels the cells the tensor holds, so its {slot:?} keeps {was} \
                 positions, but {text} has {now}: change an extent with `pad`, `unpad` or \
                 `tile`, not `reshape`"
            ),
        );
        if let Some(from) = input_arg(step, *slot) {
            d = d.with_related(from.span, format!("the tensor's {slot:?}: {was} positions"));
        }
        out.push(d);
    }
}

/// Whether the view a `tile` (step `i` of `chain`) reads from is mutable: a DM view says so in
/// its type; an HBM view only through the `view()` / `view_mut()` that made it, before the
/// tile in its chain or ending the chain that bound the variable the chain starts from.
fn tile_is_mutable(model: &FnModel, chain: &Chain, i: usize) -> Option<bool> {
    let step = chain.steps.get(i)?;
    match step.input.as_ref()?.kind {
        Kind::DmViewMut => Some(true),
        Kind::DmView => Some(false),
        Kind::HbmView => {
            let before = match i.checked_sub(1) {
                Some(j) => chain.steps.get(j)?,
                None => {
                    let name = chain.receiver.as_deref()?;
                    model
                        .chains
                        .iter()
                        .rev()
                        .find(|c| {
                            c.binding.as_deref() == Some(name) && c.span.end <= chain.span.start
                        })?
                        .steps
                        .last()?
                }
            };
            match before.method {
                Method::ViewMut => Some(true),
                Method::View => Some(false),
                _ => None,
            }
        }
        _ => None,
    }
}

/// OPT-007: the kind of the padding around a tile's resized dimension, against the view's
/// mutability.
fn tile_padding(cx: &FnContext<'_>, chain: &Chain, i: usize, out: &mut Vec<Diagnostic>) {
    let Some(step) = chain.steps.get(i) else {
        return;
    };
    let [dim, size, tile] = step.generics.as_slice() else {
        return;
    };
    let Some(mutable) = tile_is_mutable(cx.model, chain, i) else {
        return;
    };
    let Some(dim_l) = mapping_body(&dim.text)
        .and_then(|(_, b)| parse::parse_mapping(b).ok())
        .and_then(|e| lower(&e, cx.scope, &mut Vec::new()))
    else {
        return;
    };
    let Ok(len) = size.text.trim().replace('_', "").parse::<u64>() else {
        return;
    };
    let Some((off, body)) = mapping_body(&tile.text) else {
        return;
    };
    let Ok(mut expr) = parse::parse_mapping(body) else {
        return;
    };
    let base = u32::try_from(off)
        .ok()
        .map_or(tile.span.start, |o| tile.span.start.saturating_add(o));
    shift_expr(&mut expr, base);
    // A `1 # N` the tensor's own Element already has is not told apart from the tile's.
    let carried = step
        .input
        .as_ref()
        .and_then(|t| t.get(Slot::Element))
        .and_then(|m| mapping_body(&m.text))
        .and_then(|(_, b)| parse::parse_mapping(b).ok())
        .is_some_and(|e| {
            let mut pads = Vec::new();
            paddings(&e, &mut pads);
            pads.iter().any(|p| is_identity(p.inner))
        });
    let mut pads = Vec::new();
    paddings(&expr, &mut pads);
    let around_tile = |p: &Padding<'_>| match strip_group(p.inner) {
        Expr::Op {
            inner,
            op: MapOp::Resize,
            ..
        } => lower(inner, cx.scope, &mut Vec::new()).is_some_and(|l| l == dim_l),
        e => len == 1 && !carried && is_identity(e) && p.to == Some(dim_l.size),
    };
    let want = if mutable {
        PadKind::Bottom
    } else {
        PadKind::Top
    };
    let Some(p) = pads.iter().find(|p| around_tile(p)) else {
        return;
    };
    if p.kind == want {
        return;
    }
    let (view, why) = if mutable {
        (
            "`view_mut().tile()`",
            "a write destination: its cells outside the tile are inaccessible",
        )
    } else {
        (
            "`view().tile()`",
            "a read view: its cells outside the tile are plain padding",
        )
    };
    // The same mapping written again in the chain's declared type must change with it.
    let declared_apart = i + 1 == chain.steps.len() && chain.declared.is_some();
    out.push(
        Diagnostic::new(
            &OPT_007,
            p.op_span,
            format!(
                "{view} is {why}, so furiosa-opt-std needs them written `{}`, not `{}`",
                want.operator(),
                p.kind.operator()
            ),
        )
        .with_edit(
            format!("write the padding `{}`", want.operator()),
            !declared_apart && !tile.in_tensor_alias,
            p.op_span,
            want.operator().to_string(),
        ),
    );
}

/// The `m![...]` body of a written mapping and its offset in the text.
fn mapping_body(text: &str) -> Option<(usize, &str)> {
    let open = text.find("m![")? + 3;
    let close = text.rfind(']')?;
    (close >= open).then(|| (open, &text[open..close]))
}

/// One `inner # to` of an expression.
struct Padding<'e> {
    inner: &'e Expr,
    kind: PadKind,
    to: Option<u64>,
    op_span: Span,
}

/// Every padding operator of an expression, outermost first.
fn paddings<'e>(e: &'e Expr, acc: &mut Vec<Padding<'e>>) {
    match e {
        Expr::Op {
            inner,
            op,
            op_span,
            arg,
            ..
        } => {
            if let MapOp::Pad { kind, .. } = op {
                acc.push(Padding {
                    inner,
                    kind: *kind,
                    to: arg.literal(),
                    op_span: *op_span,
                });
            }
            paddings(inner, acc);
        }
        Expr::Group(x, _) => paddings(x, acc),
        Expr::Pair(xs, _) => xs.iter().for_each(|x| paddings(x, acc)),
        Expr::LinComb(xs, _) => xs.iter().for_each(|(x, _)| paddings(x, acc)),
        Expr::Identity(_) | Expr::Broadcast(..) | Expr::Symbol(_) | Expr::Escape(..) => {}
    }
}

fn strip_group(e: &Expr) -> &Expr {
    match e {
        Expr::Group(inner, _) => strip_group(inner),
        Expr::Pair(terms, _) if terms.len() == 1 => strip_group(&terms[0]),
        _ => e,
    }
}

fn is_identity(e: &Expr) -> bool {
    matches!(strip_group(e), Expr::Identity(_) | Expr::Broadcast(1, _))
}

/// OPT-005: each `commit_cast[_relu]::<D>()`, against the `commit_trim` before it.
fn commit_casts(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let adapters = &cx.model.adapters;
    for (i, cast) in adapters.iter().enumerate() {
        if !matches!(cast.method, Method::CommitCast | Method::CommitCastRelu) {
            continue;
        }
        let to = cast
            .generic
            .as_ref()
            .and_then(|(a, _)| Dtype::from_name(a.text.trim()));
        let from = cast.input.dtype;
        let stage = cx.conversions().commit_cast;
        if let (Some(from), Some(to)) = (from, to)
            && !stage.converts(from, to)
        {
            let pairs: Vec<String> = stage
                .pairs
                .iter()
                .map(|(a, b)| format!("{a} to {b}"))
                .collect();
            out.push(Diagnostic::new(
                &OPT_005,
                cast.span,
                format!(
                    "`{}` converts {} only; this stream is {from} to {to}: convert it \
                     in the Cast Engine (`cast::<{to}, ..>()`) before the commit",
                    cast.method,
                    pairs.join(", ")
                ),
            ));
            continue;
        }
        let trim = adapters[..i]
            .iter()
            .rev()
            .find(|a| a.method == Method::CommitTrim);
        let Some((arg, Some(map))) = trim.and_then(|t| t.generic.as_ref()) else {
            continue;
        };
        let (Some(kept), Some(from), Some(to)) = (map.layout.as_deref(), from, to) else {
            continue;
        };
        let Some(bytes) = from.size_bytes(kept.size) else {
            continue;
        };
        // The smallest commit width, times how many bytes are read for each one written.
        let base = cx
            .target
            .commit_sizes_main
            .iter()
            .min()
            .copied()
            .unwrap_or(8);
        let ratio = u64::from(from.bits() / to.bits().max(1)).max(1);
        let unit = base * ratio;
        if !bytes.is_multiple_of(unit) {
            out.push(
                Diagnostic::new(
                    &OPT_005,
                    arg.span,
                    format!(
                        "`{}` reads the trimmed packet in {unit}-byte units (it writes half as \
                         many bytes as it reads), but `{}` keeps {bytes} bytes of {from}: trim \
                         to 16 or 32 bytes",
                        cast.method, arg.text
                    ),
                )
                .with_related(cast.span, "the converting commit"),
            );
        }
    }
}

/// OPT-004: the index list of `dma_gather_unscaled(&index)` against one PE's SPM.
fn gather_index_fits_spm(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(arg), Some(index)) = (step.args.first(), cx.model.first_arg_tensor(step, Kind::Dm))
    else {
        return;
    };
    let Some(dtype) = index.ty.dtype else { return };
    let Some(n) = entries(&index.ty) else { return };
    let Some(bytes) = dtype.size_bytes(n) else {
        return;
    };
    let spm = cx.target.spm_bytes_per_pe;
    if bytes <= spm {
        return;
    }
    // Every type whose size is known has a whole number of entries in 4 KiB.
    let fit = dtype.elems_for(spm);
    out.push(
        Diagnostic::new(
            &OPT_004,
            arg.span,
            format!(
                "the index list of `dma_gather_unscaled` is {bytes} bytes ({n} {dtype} entries), \
                 but it lives in one processing element's SPM of {spm} bytes: gather it in \
                 chunks of at most {} entries, or scale the index and use `dma_gather_scaled`",
                fit.unwrap_or(0),
            ),
        )
        .with_related(index.span, "the index tensor"),
    );
}

/// OPT-008: the diagnostic of a `Branched` operand's slot fault (found while the model is
/// built, [`crate::model::refusals::slot_defects`]).
fn branched_slots(at: Span, fault: &SlotFault, related: Option<Span>) -> Diagnostic {
    let message = match fault {
        SlotFault::NoFreeImmediate => "a Vector Engine pass has three immediate registers, and \
             this `imm` asks for a fourth: keep at most three `imm` slots, or pass a value from \
             the VRF through `rf`"
            .to_string(),
        SlotFault::AfterRf { method } => format!(
            "the rf port is a `Branched` operand's last slot, so no `.{method}(..)` may follow \
             `.rf(..)`: fill the immediates first"
        ),
        SlotFault::DeadGuard { slot, guard } => format!(
            "slot {slot}'s guard `{guard}` is satisfied by no execution id, so the slot would \
             never fire: furiosa-opt-std refuses it; drop the slot or guard it with a pattern \
             that matches"
        ),
        SlotFault::AfterUnconditional {
            unconditional,
            slot,
        } if *slot == "rf" => format!(
            "slot {unconditional} is unconditional: it claims every element the earlier guards \
             left over, so the rf port after it could never fire; guard slot {unconditional}, \
             and give the rf port `TagGuard::all()` if it should take what is left"
        ),
        SlotFault::AfterUnconditional {
            unconditional,
            slot,
        } => format!(
            "slot {unconditional} is unconditional: it claims every element the earlier guards \
             left over, so slot {slot} after it could never fire; move this `imm` before the \
             unconditional one, or guard slot {unconditional}"
        ),
    };
    let d = Diagnostic::new(&OPT_008, at, message);
    match (fault, related) {
        (SlotFault::AfterUnconditional { unconditional, .. }, Some(r)) => {
            d.with_related(r, format!("slot {unconditional}'s unconditional guard"))
        }
        _ => d,
    }
}

/// The entries a tensor type holds: the valid positions of every axis it places, its padding
/// and broadcasts left out; `None` when a mapping is not known or not regular.
fn entries(ty: &TensorTy) -> Option<u64> {
    let mut n: u64 = 1;
    for slot in ty.kind.params() {
        if matches!(slot, Slot::D | Slot::Other) {
            continue;
        }
        let Some(map) = ty.get(*slot) else { continue };
        let layout: &Layout = map.layout.as_deref()?;
        for dim in &layout.dims {
            let Dim::Factor(f) = dim else { return None };
            if f.axis.is_some() {
                n = n.checked_mul(f.valid)?;
            }
        }
    }
    Some(n)
}

/// The diagnostic of one refusal.
pub fn diagnostic(r: &Refusal) -> Diagnostic {
    match r {
        Refusal::Slots { at, fault, related } => branched_slots(*at, fault, *related),
        Refusal::GenericEntry { at, params } => Diagnostic::new(
            &OPT_001,
            *at,
            format!(
                "a `#[device]` function cannot be generic (`<{params}>`): furiosa-opt-std \
                 translates it before it is monomorphized; keep the generic code in a helper \
                 and call it from a concrete `#[device]` function"
            ),
        ),
        Refusal::RuntimePanic { at, name } => Diagnostic::new(
            &OPT_002,
            *at,
            format!(
                "`{name}!` panics at run time, which a `#[device]` body cannot do under \
                 furiosa-opt-std; check shapes and constants in `const {{ assert!(..) }}` instead"
            ),
        ),
        Refusal::NotConstant {
            at,
            method,
            what,
            text,
        } if what.folds_in_const_block() => Diagnostic::new(
            &OPT_003,
            *at,
            format!(
                "the immediate of `.{method}()` must fold to a constant, but `{text}` has {} \
                 that stays at run time: wrap it in `const {{ .. }}`",
                what.what()
            ),
        )
        // Not a safe fix: a `const` block cannot read a local variable the value may name.
        .with_edit(
            "evaluate it at compile time: `const { .. }`",
            false,
            *at,
            format!("const {{ {text} }}"),
        ),
        Refusal::NotConstant {
            at,
            method,
            what,
            text,
        } => Diagnostic::new(
            &OPT_003,
            *at,
            format!(
                "the immediate of `.{method}()` must fold to a constant, but `{text}` comes from \
                 {}, which varies while the kernel runs: an immediate is encoded in the \
                 instruction; give each case its own call with a constant, or pass the value as \
                 a tensor operand",
                what.what()
            ),
        ),
    }
}
