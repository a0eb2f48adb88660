//! KRN: kernel and pipeline structure, execution contexts (constraints.md §2). The checks run
//! while the kernel model is built (`crate::model::build`), where the pipeline state is known;
//! the builder records a [`Kernel`] problem and [`diagnostic`] reports it.
//!
//! Each rule is a file of its own, with its declaration and the diagnostics of the problems
//! it covers; this module only maps each problem to the function that reports it.

mod collect_is_mandatory;
mod data_dependent_control_flow;
mod dma_context_and_await;
mod interleave_two_tensors;
mod pipeline_order;
mod spatial_invariance;
mod sub_commit_after_cast;
mod sub_context_compute;
mod sub_fetch_adapter;
mod sub_only_commit_modes;

pub use collect_is_mandatory::KRN_002;
pub use data_dependent_control_flow::KRN_012;
pub use dma_context_and_await::KRN_009;
pub use interleave_two_tensors::KRN_011;
pub use pipeline_order::KRN_001;
pub use spatial_invariance::KRN_004;
pub use sub_commit_after_cast::KRN_006;
pub use sub_context_compute::KRN_005;
pub use sub_fetch_adapter::KRN_008;
pub use sub_only_commit_modes::KRN_007;

use crate::diagnostic::Diagnostic;
use crate::model::problem::Kernel;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    KRN_001, KRN_002, KRN_004, KRN_005, KRN_006, KRN_007, KRN_008, KRN_009, KRN_011, KRN_012,
];

/// The diagnostic of a structural problem the model builder found.
pub fn diagnostic(p: &Kernel) -> Diagnostic {
    match p {
        Kernel::NeedsCollect { at, method, engine } => {
            collect_is_mandatory::needs_collect(*at, method, *engine)
        }
        Kernel::NeedsFetch { at, method } => pipeline_order::needs_fetch(*at, method),
        Kernel::OutOfOrder {
            at,
            method,
            engine,
            after,
        } => pipeline_order::out_of_order(*at, method, *engine, *after),
        Kernel::NotAvailable {
            at,
            method,
            on,
            after,
        } => pipeline_order::not_available(*at, method, *on, *after),
        Kernel::SpatialChange {
            at,
            slot,
            from,
            to,
            annotation,
        } => spatial_invariance::spatial_change(*at, *slot, from, to, *annotation),
        Kernel::SubCompute { at, method, engine } => {
            sub_context_compute::sub_compute(*at, method, *engine)
        }
        Kernel::SubCommitAfterCast { at, offender } => {
            sub_commit_after_cast::sub_commit_after_cast(*at, offender.as_ref())
        }
        Kernel::SubFetchAdapter { at, casting } => {
            sub_fetch_adapter::sub_fetch_adapter(*at, *casting)
        }
        Kernel::LaunchNotAwaited { at } => dma_context_and_await::launch_not_awaited(*at),
        Kernel::DmOverPcie { at } => dma_context_and_await::dm_over_pcie(*at),
        Kernel::HostOverTensorDma { at } => dma_context_and_await::host_over_tensor_dma(*at),
        Kernel::PcieNotAwaited { at, method } => {
            dma_context_and_await::pcie_not_awaited(*at, method)
        }
        Kernel::AwaitedInDevice { at, method } => {
            dma_context_and_await::awaited_in_device(*at, method)
        }
        Kernel::InterleaveCount { at, count } => {
            interleave_two_tensors::interleave_count(*at, *count)
        }
        Kernel::InterleaveAxis { at, axis, size } => {
            interleave_two_tensors::interleave_axis(*at, axis, *size)
        }
    }
}
