//! KRN-009: host ↔ HBM transfers use the PCIe DMA (`ctx.pdma`) and are awaited; HBM ↔ DM in a
//! kernel uses the Tensor DMA (`ctx.tdma`) synchronously; `launch(...)` is awaited too. One
//! function per way of getting it wrong.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::Method;
use crate::rule::{Generations, Rule, Status};

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

/// `launch(...)` (`at`: `launch`) without `.await`.
pub(super) fn launch_not_awaited(at: Span) -> Diagnostic {
    Diagnostic::new(
        &KRN_009,
        at,
        "`launch(...)` returns a future: the host must `.await` it for the kernel to run",
    )
}

/// `to_dm` over the PCIe DMA (`ctx.pdma`).
pub(super) fn dm_over_pcie(at: Span) -> Diagnostic {
    Diagnostic::new(
        &KRN_009,
        at,
        "HBM → DM transfers use the Tensor DMA: pass `&mut ctx.tdma`, not `ctx.pdma` (PCIe DMA is for host ↔ HBM)",
    )
}

/// `to_host` over the Tensor DMA (`ctx.tdma`).
pub(super) fn host_over_tensor_dma(at: Span) -> Diagnostic {
    Diagnostic::new(
        &KRN_009,
        at,
        "HBM → host transfers use the PCIe DMA: pass `&mut ctx.pdma`, not `ctx.tdma`",
    )
}

/// A PCIe DMA transfer `.method()` in host code that is not awaited.
pub(super) fn pcie_not_awaited(at: Span, method: &Method) -> Diagnostic {
    Diagnostic::new(
        &KRN_009,
        at,
        format!("`.{method}()` over PCIe DMA returns a future: `.await` it in host code"),
    )
}

/// A transfer `.method()` awaited inside a `#[device]` kernel, where it is synchronous.
pub(super) fn awaited_in_device(at: Span, method: &Method) -> Diagnostic {
    Diagnostic::new(
        &KRN_009,
        at,
        format!("`.{method}()` is synchronous inside a `#[device]` kernel: remove `.await`"),
    )
}
