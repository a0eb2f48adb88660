//! OPT: what furiosa-opt-std 0.6's compiler refuses in a `#[device]` function that the manual
//! never states. They apply to crates on furiosa-opt-std only: the model builder finds them
//! there ([`crate::model::refusals`]) and this module reports them. The manual's hardware
//! rules are the other families; these are the library's own.

use super::context::FnContext;
use crate::diagnostic::{Diagnostic, Severity};
use crate::library::Generation;
use crate::mapping::layout::{Dim, Layout};
use crate::model::refusals::Refusal;
use crate::model::{Dtype, Kind, Method, Slot, Step, TensorTy};
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
        "`commit_cast` exists only there (`furiosa-opt-std/src/cast.rs:137-156`; CHANGES.md:52); \
         the manual casts only in the Cast Engine",
    ),
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[OPT_001, OPT_002, OPT_003, OPT_004, OPT_005];

/// The OPT rules that read the model (the others are refusals the model builder found).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    if cx.model.library != Generation::OptStd {
        return;
    }
    for step in cx.model.chains.iter().flat_map(|c| &c.steps) {
        if step.method == Method::DmaGatherUnscaled {
            gather_index_fits_spm(cx, step, out);
        }
    }
    commit_casts(cx, out);
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
        if let (Some(from), Some(to)) = (from, to)
            && (from, to) != (Dtype::F32, Dtype::Bf16)
        {
            out.push(Diagnostic::new(
                &OPT_005,
                cast.span,
                format!(
                    "`{}` converts f32 to bf16 only; this stream is {from} to {to}: convert it \
                     in the Cast Engine (`cast::<{to}, ..>()`) before the commit",
                    cast.method
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
        let (Some(kept), Some(from)) = (map.layout.as_deref(), from) else {
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
        let ratio = u64::from(from.bits() / Dtype::Bf16.bits()).max(1);
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
