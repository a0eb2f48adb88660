//! KRN: kernel and pipeline structure, execution contexts (constraints.md §2). The checks run
//! while the kernel model is built (`crate::model::build`), where the pipeline state is known;
//! the builder records a [`Kernel`] problem and [`diagnostic`] reports it.

use crate::diagnostic::{Diagnostic, Severity};
use crate::model::{Engine, Method, problem::Kernel};
use crate::rule::{Generations, Rule, Status};

pub const KRN_001: Rule = Rule {
    code: "KRN-001",
    name: "pipeline-order",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Engines are chained in hardware order, each at most once",
    docs: "A Tensor Unit pass visits Fetch → (Switch) → Collect → (Contraction: align, contract, \
           accumulate) → (Vector) → (Cast) → (Transpose) → Commit. rustc reports a misordered \
           chain as a missing method on a typestate (so an error); visa-lint names the engines \
           instead. The order follows the library's typestates, which allow two detours the \
           manual's order does not show: `vector_final().to_vrf(..)` (`VectorFinalTensor::to_vrf`, \
           a Vector Engine result loaded into the VRF for the next pass) and `commit` straight \
           after fetch or switch (see KRN-002).",
    bad: ".collect::<T, P>().cast::<bf16, _>().vector_init()",
    good: ".collect::<T, P>().vector_init() /* ... */ .vector_final().cast::<bf16, _>().commit(a)",
    manual: "L131, L3011, L4553, L1113-L1123",
    generations: Generations::Both,
};

pub const KRN_002: Rule = Rule {
    code: "KRN-002",
    name: "collect-is-mandatory",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`collect()` comes before Contraction, TRF/VRF loads, Vector, Cast and Transpose",
    docs: "The downstream engines consume exactly-32-byte flits, so a pass goes fetch → [switch →] \
           collect before them. In the library `to_trf`, `to_vrf`, `align`, `vector_init`, `cast` \
           and `transpose` exist only on `CollectTensor` (and later stages): on a fetched or \
           switched stream they are a missing method, a compilation error, hence an error here. \
           Insert `.collect::<Time, Packet>()` after the fetch or switch. Commit is not part of \
           this rule: the library defines `commit`/`commit_view` on every stream position and \
           only asserts \"Commit input packet must be exactly 32 bytes (one flit)\", so `fetch → \
           commit` with a full-flit packet is accepted and a short packet is CMT-001 (the manual, \
           L3605, says collect is mandatory for commit too).",
    bad: "ctx.sub.begin(a.view()).fetch::<i8, T, P>().to_trf::<R, E>(TrfAddress::Full)",
    good: "ctx.sub.begin(a.view()).fetch::<i8, T, P>().collect::<T, P>().to_trf::<R, E>(TrfAddress::Full)",
    manual: "L3605",
    generations: Generations::Both,
};

pub const KRN_004: Rule = Rule {
    code: "KRN-004",
    name: "spatial-invariance",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Chip and Cluster never change in the Tensor Unit; Slice only at Switch or the inter-slice reduce",
    docs: "Fetch inherits Chip, Cluster and Slice from its BeginTensor; Collect, Contraction, Cast, \
           Transpose and the intra-slice stages keep them. An annotation (a `let` type, a parameter \
           or a return type) that gives the end of a chain another Chip, Cluster or Slice than the \
           chain carries is reported; mappings are compared by meaning (MAP-007).",
    bad: "let x: CollectTensor<'_, T, i8, m![1], m![1 # 2], m![A / 4 # 256], _, _> = fetched_with_slice_a_div_8.collect()",
    good: "let x: CollectTensor<'_, T, i8, m![1], m![1 # 2], m![A / 8 # 256], _, _> = ...",
    manual: "L1725, L3087, L3899, L4073, L5361, L6585, L6839",
    generations: Generations::Both,
};

pub const KRN_005: Rule = Rule {
    code: "KRN-005",
    name: "sub-context-compute",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "The sub context moves data; Contraction and Vector belong to `ctx.main`",
    docs: "The sub context's compute engines are \"Idle only\": sub chains are fetch → [switch] → \
           collect → to_trf / to_vrf / commit (prefetching, SRAM copies). Whether compute there is \
           forbidden or only waits for main is not stated (constraints.md §22 A-24), so this warns.",
    bad: "ctx.sub.begin(a.view()).fetch::<..>().collect::<..>().vector_init()",
    good: "ctx.main.begin(a.view()).fetch::<..>().collect::<..>().vector_init()",
    manual: "L3046-L3052, L7065, L152",
    generations: Generations::Both,
};

pub const KRN_006: Rule = Rule {
    code: "KRN-006",
    name: "sub-commit-after-cast",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A sub-context commit can only follow fetch: no Cast or Transpose before it",
    docs: "Sub-context commits cannot be preceded by Cast Engine or Transpose Engine operations. \
           visa-lint points at the `cast` (or `transpose`) the commit cannot follow, with the \
           commit as a related span. Run the chain on `ctx.main`, or commit without the cast.",
    bad: "ctx.sub.begin(a.view()).fetch::<..>().collect::<..>().cast::<i8, _>().commit(0)",
    good: "ctx.main.begin(a.view()).fetch::<..>().collect::<..>().cast::<i8, _>().commit(0)",
    manual: "L2337-L2338",
    generations: Generations::Both,
};

pub const KRN_007: Rule = Rule {
    code: "KRN-007",
    name: "sub-only-commit-modes",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the API names of Valid Count Packing and Generate Mode are not in the manual",
    ),
    summary: "Valid Count Packing and Generate Mode exist only in the sub context",
    docs: "Main-context commits truncate only; the sub context also packs valid counts and writes \
           single 32-bit values. The manual shows no API for these modes, so there is nothing to match.",
    bad: "",
    good: "",
    manual: "L2332-L2336",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 names Valid Count Packing, `commit_valid_count_pack`, on the sub \
         context, but its verifier is `todo!()` \
         (`furiosa-opt-std/src/engine/commit_adapter.rs:218-245`) and visa-lint does not model it; \
         generate mode has no API in either",
    ),
};

pub const KRN_008: Rule = Rule {
    code: "KRN-008",
    name: "sub-fetch-adapter",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "The sub-context fetch adapter only subtracts zero points",
    docs: "Table indexing and type casting are main-context adapter stages. The manual also shows \
           sub-context casting fetches (i4 → i32) and large sub packets (constraints.md §22 A-9), so \
           this warns.",
    bad: "ctx.sub.begin(a.view()).fetch_with_table(&t)",
    good: "ctx.main.begin(a.view()).fetch_with_table(&t)",
    manual: "L1870",
    generations: Generations::Both,
};

pub const KRN_009: Rule = Rule {
    code: "KRN-009",
    name: "dma-context-and-await",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Host ↔ HBM uses `ctx.pdma` and is awaited; HBM ↔ DM in a kernel uses `ctx.tdma` synchronously",
    docs: "PCIe DMA (`to_hbm` from the host, `to_host`) returns a future the host awaits; the Tensor \
           DMA (`to_dm`, `to_hbm` from DM) is synchronous inside `#[device]` kernels. `launch(...)` \
           must be awaited too.",
    bad: "let dm = hbm.to_dm::<C, S, E>(&mut ctx.pdma, 0);",
    good: "let dm = hbm.to_dm::<C, S, E>(&mut ctx.tdma, 0);",
    manual: "L45-L47, L55, L65, L219, L2380",
    generations: Generations::Both,
};

pub const KRN_011: Rule = Rule {
    code: "KRN-011",
    name: "interleave-two-tensors",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`begin_interleaved` takes exactly two tensors, over an axis of size 2",
    docs: "Interleaving combines two tensors with identical mappings into one sequencer operation; \
           the interleave axis `I` added to Time has size 2. For more tensors use several passes \
           (the split-reduce pages' four-way interleave is pseudo-API, constraints.md §22 A-13).",
    bad: "axes![I = 4]; ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view())",
    good: "axes![I = 2]; ctx.main.begin_interleaved::<I, _, _, _, _, _>(a.view(), b.view())",
    manual: "L1844-L1850, L7371",
    generations: Generations::Both,
};

pub const KRN_012: Rule = Rule {
    code: "KRN-012",
    name: "data-dependent-control-flow",
    severity: Severity::Warning,
    status: Status::NotStatic(
        "a heuristic over runtime values; needs the simulator's value tracking",
    ),
    summary: "No data-dependent control flow inside the lock-step pipeline",
    docs: "All 256 slices run in lockstep; control flow that depends on runtime data must become \
           branch masks or fixed matrix operations.",
    bad: "",
    good: "",
    manual: "L8538, L8597",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    KRN_001, KRN_002, KRN_004, KRN_005, KRN_006, KRN_007, KRN_008, KRN_009, KRN_011, KRN_012,
];

/// The diagnostic of a structural problem the model builder found.
pub fn diagnostic(p: &Kernel) -> Diagnostic {
    match p {
        Kernel::NeedsCollect { at, method, engine } => Diagnostic::new(
            &KRN_002,
            *at,
            format!(
                "`.{method}()` needs `.collect()` first: every Tensor Unit pass goes fetch → [switch →] collect before {}",
                engine_phrase(*engine, method)
            ),
        ),
        Kernel::NeedsFetch { at, method } => Diagnostic::new(
            &KRN_001,
            *at,
            format!("`.{method}()` needs a fetch first: the pipeline starts with the Fetch Engine"),
        ),
        Kernel::OutOfOrder {
            at,
            method,
            engine,
            after,
        } => Diagnostic::new(
            &KRN_001,
            *at,
            format!(
                "the {} (`.{method}()`) cannot come after the {}: the Tensor Unit runs Fetch → Switch → Collect → Contraction → Vector → Cast → Transpose → Commit, each engine at most once",
                engine.name(),
                after.name()
            ),
        ),
        Kernel::NotAvailable {
            at,
            method,
            on,
            after,
        } => Diagnostic::new(
            &KRN_001,
            *at,
            format!(
                "`.{method}()` is not available on `{}` (after the {})",
                on.type_name(),
                after.name()
            ),
        ),
        Kernel::SpatialChange { at, slot, from, to } => Diagnostic::new(
            &KRN_004,
            *at,
            format!(
                "{} changes from `{from}` to `{to}` across this chain, but the Tensor Unit keeps Chip and Cluster, and changes Slice only at `.switch()` or the inter-slice reduce",
                capitalized(slot.name())
            ),
        ),
        Kernel::SubCompute { at, method, engine } => Diagnostic::new(
            &KRN_005,
            *at,
            format!(
                "the sub context leaves the {} idle: `.{method}()` belongs on `ctx.main`; sub is for data movement (fetch → [switch] → collect → to_trf / to_vrf / commit)",
                engine.name()
            ),
        ),
        Kernel::SubCommitAfterCast { at, offender } => {
            // At the Cast/Transpose that breaks the rule (ARCHITECTURE.md, "Where a
            // diagnostic points"), the commit related; at the commit when the offending step
            // is in another chain.
            let msg = "a sub-context commit can only follow fetch (and collect): remove the Cast/Transpose, or run this chain on `ctx.main`";
            match offender {
                Some((method, cast)) => Diagnostic::new(
                    &KRN_006,
                    *cast,
                    format!("`.{method}()` on the sub context: {msg}"),
                )
                .with_related(*at, "the sub-context commit that cannot follow it"),
                None => Diagnostic::new(&KRN_006, *at, msg),
            }
        }
        Kernel::SubFetchAdapter { at, casting } => {
            let what = if *casting {
                "type casting"
            } else {
                "table indexing"
            };
            Diagnostic::new(
                &KRN_008,
                *at,
                format!(
                    "the sub-context fetch adapter only subtracts zero points; {what} needs `ctx.main`"
                ),
            )
        }
        Kernel::LaunchNotAwaited { at } => Diagnostic::new(
            &KRN_009,
            *at,
            "`launch(...)` returns a future: the host must `.await` it for the kernel to run",
        ),
        Kernel::DmOverPcie { at } => Diagnostic::new(
            &KRN_009,
            *at,
            "HBM → DM transfers use the Tensor DMA: pass `&mut ctx.tdma`, not `ctx.pdma` (PCIe DMA is for host ↔ HBM)",
        ),
        Kernel::HostOverTensorDma { at } => Diagnostic::new(
            &KRN_009,
            *at,
            "HBM → host transfers use the PCIe DMA: pass `&mut ctx.pdma`, not `ctx.tdma`",
        ),
        Kernel::PcieNotAwaited { at, method } => Diagnostic::new(
            &KRN_009,
            *at,
            format!("`.{method}()` over PCIe DMA returns a future: `.await` it in host code"),
        ),
        Kernel::AwaitedInDevice { at, method } => Diagnostic::new(
            &KRN_009,
            *at,
            format!("`.{method}()` is synchronous inside a `#[device]` kernel: remove `.await`"),
        ),
        Kernel::InterleaveCount { at, count } => Diagnostic::new(
            &KRN_011,
            *at,
            format!(
                "`begin_interleaved` interleaves exactly two tensors, got {count}; use several passes"
            ),
        ),
        Kernel::InterleaveAxis { at, axis, size } => Diagnostic::new(
            &KRN_011,
            *at,
            format!(
                "the interleave axis `{axis}` has size {size}; interleaving pairs two tensors, so it must have size 2"
            ),
        ),
    }
}

/// What a method that needs `.collect()` first does, in KRN-002's message.
fn engine_phrase(engine: Engine, method: &Method) -> String {
    match method {
        Method::ToTrf => "loading the TRF".into(),
        Method::ToVrf => "loading the VRF".into(),
        _ => format!("the {}", engine.name()),
    }
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
