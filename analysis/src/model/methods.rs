//! Every method of the `furiosa_visa_std` surface (api.md §3) as a transfer rule: which
//! receivers it takes, what it returns, which type parameters its turbofish fixes and which
//! it keeps from the receiver.

use super::types::{Kind, Slot, VeStage};

/// The Tensor Unit's engines in hardware order (KRN-001), plus the memory operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Engine {
    Begin,
    Fetch,
    Switch,
    Collect,
    Contraction,
    Vector,
    Cast,
    Transpose,
    Commit,
    /// DMA and views: not part of the Tensor Unit pipeline.
    Memory,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Begin => "begin",
            Engine::Fetch => "Fetch Engine",
            Engine::Switch => "Switch Engine",
            Engine::Collect => "Collect Engine",
            Engine::Contraction => "Contraction Engine",
            Engine::Vector => "Vector Engine",
            Engine::Cast => "Cast Engine",
            Engine::Transpose => "Transpose Engine",
            Engine::Commit => "Commit Engine",
            Engine::Memory => "DMA",
        }
    }

    /// The engine a stream kind was produced by.
    pub fn of_kind(k: Kind) -> Option<Engine> {
        Some(match k {
            Kind::Begin => Engine::Begin,
            Kind::Fetch => Engine::Fetch,
            Kind::Switch => Engine::Switch,
            Kind::Collect => Engine::Collect,
            Kind::AlignedPair | Kind::Contraction | Kind::Accumulation => Engine::Contraction,
            Kind::Vector(_) => Engine::Vector,
            Kind::Cast => Engine::Cast,
            Kind::Transpose => Engine::Transpose,
            _ => return None,
        })
    }
}

/// Where the receiver comes from for this method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recv {
    /// `ctx.main` / `ctx.sub`; the stream comes from the first argument.
    TuContext,
    /// A tensor value.
    Tensor,
    /// A context (`ctx.sub`, `ctx.tdma`) running a memory operation on the tensor (view) given
    /// as the first argument: `parallel_copy_*_slice`, `dm_*_shuffle`.
    FirstArg,
}

/// A method's transfer rule.
#[derive(Clone, Copy, Debug)]
pub struct Method {
    pub name: &'static str,
    pub engine: Engine,
    pub recv: Recv,
    /// The output kind for a receiver kind; `None` if the receiver kind does not have this method.
    pub output: fn(Kind) -> Option<Kind>,
    /// What each turbofish parameter fixes, in order (`Slot::D` is the element type).
    pub generics: &'static [Slot],
    /// Slots copied from the receiver.
    pub keep: &'static [Slot],
    /// Host-side DMA that returns a future to `.await` (KRN-009).
    pub is_async: bool,
    /// Index of the address argument, for constant evaluation.
    pub address_arg: Option<usize>,
}

use Slot::*;

const SPATIAL: &[Slot] = &[D, Chip, Cluster, Slice];
const ALL_STREAM: &[Slot] = &[D, Chip, Cluster, Slice, Row, Time, Packet];

/// A stream Commit takes: the library defines `commit`/`commit_view` on every stream position
/// (a fetched or switched stream too: its packet must then be a full flit, CMT-001), so only a
/// stream that was never fetched is refused (KRN-001).
fn committable(k: Kind) -> bool {
    k.is_stream() && k != Kind::Begin
}

macro_rules! method {
    ($name:literal, $engine:ident, $recv:ident, $out:expr, [$($g:ident),*], $keep:expr) => {
        method!($name, $engine, $recv, $out, [$($g),*], $keep, false, None)
    };
    ($name:literal, $engine:ident, $recv:ident, $out:expr, [$($g:ident),*], $keep:expr, $async:expr, $addr:expr) => {
        Method {
            name: $name,
            engine: Engine::$engine,
            recv: Recv::$recv,
            output: $out,
            generics: &[$($g),*],
            keep: $keep,
            is_async: $async,
            address_arg: $addr,
        }
    };
}

fn vec_stage(stage: VeStage) -> fn(Kind) -> Option<Kind> {
    // One function per target stage; receivers are any Vector typestate (VEC rules check order).
    macro_rules! to {
        ($s:ident) => {
            |k: Kind| matches!(k, Kind::Vector(_)).then_some(Kind::Vector(VeStage::$s))
        };
    }
    match stage {
        VeStage::Init => |k| {
            matches!(k, Kind::Collect | Kind::Accumulation).then_some(Kind::Vector(VeStage::Init))
        },
        VeStage::Branch => to!(Branch),
        VeStage::Logic => to!(Logic),
        VeStage::Fxp => to!(Fxp),
        VeStage::FxpToFp => to!(FxpToFp),
        VeStage::Narrow => to!(Narrow),
        VeStage::Fp => to!(Fp),
        VeStage::IntraSliceReduce => to!(IntraSliceReduce),
        VeStage::FpDiv => to!(FpDiv),
        VeStage::Widen => to!(Widen),
        VeStage::FpToFxp => to!(FpToFxp),
        VeStage::Clip => to!(Clip),
        VeStage::Filter => to!(Filter),
        VeStage::InterSliceReduce => to!(InterSliceReduce),
        VeStage::Pair => to!(Pair),
        VeStage::Final => to!(Final),
    }
}

/// Looks a method up by name.
pub fn method(name: &str) -> Option<Method> {
    let m = match name {
        // Host and DMA (api.md §3.1, §3.2).
        "to_hbm" => method!(
            "to_hbm",
            Memory,
            Tensor,
            |k| match k {
                Kind::Host | Kind::Dm => Some(Kind::Hbm),
                _ => None,
            },
            [],
            &[D],
            true,
            Some(1)
        ),
        "to_host" => method!(
            "to_host",
            Memory,
            Tensor,
            |k| (k == Kind::Hbm).then_some(Kind::Host),
            [Mapping],
            &[D],
            true,
            None
        ),
        "to_dm" => method!(
            "to_dm",
            Memory,
            Tensor,
            |k| matches!(k, Kind::Hbm | Kind::HbmView).then_some(Kind::Dm),
            [Cluster, Slice, Element],
            &[D, Chip],
            false,
            Some(1)
        ),
        "view" => method!(
            "view",
            Memory,
            Tensor,
            |k| match k {
                Kind::Hbm | Kind::HbmView => Some(Kind::HbmView),
                Kind::Dm | Kind::DmView => Some(Kind::DmView),
                _ => None,
            },
            [],
            &[D, Chip, Cluster, Slice, Element]
        ),
        "view_mut" => method!(
            "view_mut",
            Memory,
            Tensor,
            |k| matches!(k, Kind::Dm).then_some(Kind::DmViewMut),
            [],
            &[D, Chip, Cluster, Slice, Element]
        ),
        "tile" => method!(
            "tile",
            Memory,
            Tensor,
            |k| matches!(k, Kind::HbmView | Kind::DmView).then_some(k),
            [Other, Other, Element],
            &[D, Chip, Cluster, Slice]
        ),
        // Copies between DM tensors run by a context on its first argument (the library's
        // context.rs): the result keeps the input's Chip, Cluster and Slice; a slice copy
        // takes its Element from the fourth type parameter (`<N, AxisToSlice,
        // AxisSlicedElement, Element2, D, Chip, Cluster, Slice, Element>`), a shuffle keeps
        // the input's (`<D, N, Chip, Cluster, Slice, Element>`).
        "parallel_copy_chip_slice" | "parallel_copy_cluster_slice" => method!(
            "parallel_copy_slice",
            Memory,
            FirstArg,
            |k| matches!(k, Kind::DmView | Kind::Dm).then_some(Kind::Dm),
            [Other, Other, Other, Element, D, Chip, Cluster, Slice, Other],
            &[D, Chip, Cluster, Slice]
        ),
        "dm_chip_shuffle" | "dm_cluster_shuffle" => method!(
            "dm_shuffle",
            Memory,
            FirstArg,
            |k| matches!(k, Kind::DmView | Kind::Dm).then_some(Kind::Dm),
            [D, Other, Chip, Cluster, Slice, Element],
            &[D, Chip, Cluster, Slice, Element]
        ),
        // The Tensor Unit pipeline (api.md §3.3).
        "begin" => method!("begin", Begin, TuContext, |_| Some(Kind::Begin), [], &[]),
        "begin_interleaved" => method!(
            "begin_interleaved",
            Begin,
            TuContext,
            |_| Some(Kind::Begin),
            [Other],
            &[]
        ),
        "fetch" => method!(
            "fetch",
            Fetch,
            Tensor,
            |k| (k == Kind::Begin).then_some(Kind::Fetch),
            [D, Time, Packet],
            &[D, Chip, Cluster, Slice]
        ),
        "fetch_with_table" | "fetch_with_zero_point" | "fetch_with_zero_points" => {
            method!(
                "fetch_with",
                Fetch,
                Tensor,
                |k| (k == Kind::Begin).then_some(Kind::Fetch),
                [],
                &[Chip, Cluster, Slice]
            )
        }
        "switch" => method!(
            "switch",
            Switch,
            Tensor,
            |k| (k == Kind::Fetch).then_some(Kind::Switch),
            [Slice, Time],
            &[D, Chip, Cluster, Packet]
        ),
        "collect" => method!(
            "collect",
            Collect,
            Tensor,
            |k| matches!(k, Kind::Fetch | Kind::Switch).then_some(Kind::Collect),
            [Time, Packet],
            SPATIAL
        ),
        "to_trf" => method!(
            "to_trf",
            Collect,
            Tensor,
            |k| (k == Kind::Collect).then_some(Kind::Trf),
            [Row, Element],
            SPATIAL
        ),
        "to_vrf" => method!(
            "to_vrf",
            Collect,
            Tensor,
            // `CollectTensor::to_vrf`, and `VectorFinalTensor::to_vrf` (a Vector Engine result
            // loaded into the VRF for the next pass; the manual lists only the first).
            |k| matches!(k, Kind::Collect | Kind::Vector(VeStage::Final)).then_some(Kind::Vrf),
            [],
            SPATIAL,
            false,
            Some(0)
        ),
        "align" => method!(
            "align",
            Contraction,
            Tensor,
            |k| (k == Kind::Collect).then_some(Kind::AlignedPair),
            [Time, Packet, Row, Other],
            SPATIAL
        ),
        "contract" => method!(
            "contract",
            Contraction,
            Tensor,
            |k| (k == Kind::AlignedPair).then_some(Kind::Contraction),
            [Packet],
            &[Chip, Cluster, Slice, Row, Time]
        ),
        "accumulate" => method!(
            "accumulate",
            Contraction,
            Tensor,
            |k| (k == Kind::Contraction).then_some(Kind::Accumulation),
            [Time, Packet],
            SPATIAL
        ),
        "cast" => method!(
            "cast",
            Cast,
            Tensor,
            |k| matches!(
                k,
                Kind::Collect | Kind::Accumulation | Kind::Vector(VeStage::Final) | Kind::Stream
            )
            .then_some(Kind::Cast),
            [D, Packet],
            &[Chip, Cluster, Slice, Time]
        ),
        "transpose" => method!(
            "transpose",
            Transpose,
            Tensor,
            |k| matches!(
                k,
                Kind::Collect
                    | Kind::Accumulation
                    | Kind::Vector(VeStage::Final)
                    | Kind::Cast
                    | Kind::Stream
            )
            .then_some(Kind::Transpose),
            [Time, Packet],
            SPATIAL
        ),
        "commit" => method!(
            "commit",
            Commit,
            Tensor,
            |k| committable(k).then_some(Kind::Dm),
            [Element],
            SPATIAL,
            false,
            Some(0)
        ),
        "commit_view" => method!(
            "commit_view",
            Commit,
            Tensor,
            |k| committable(k).then_some(Kind::Dm),
            [],
            SPATIAL
        ),
        // The Vector Engine (api.md §3.4): typestates move forward; VEC rules check the order.
        "vector_init" => method!(
            "vector_init",
            Vector,
            Tensor,
            vec_stage(VeStage::Init),
            [],
            ALL_STREAM
        ),
        "vector_intra_slice_branch" => method!(
            "vector_intra_slice_branch",
            Vector,
            Tensor,
            vec_stage(VeStage::Branch),
            [],
            ALL_STREAM
        ),
        "vector_intra_slice_unzip" => method!(
            "vector_intra_slice_unzip",
            Vector,
            Tensor,
            vec_stage(VeStage::Pair),
            [Other, Other, Time],
            &[D, Chip, Cluster, Slice, Packet]
        ),
        "vector_inter_slice_reduce" => method!(
            "vector_inter_slice_reduce",
            Vector,
            Tensor,
            vec_stage(VeStage::InterSliceReduce),
            [Slice, Time],
            &[D, Chip, Cluster, Packet]
        ),
        "vector_logic" | "vector_logic_with_mode" => method!(
            "vector_logic",
            Vector,
            Tensor,
            vec_stage(VeStage::Logic),
            [],
            ALL_STREAM
        ),
        "vector_fxp" | "vector_fxp_with_mode" => method!(
            "vector_fxp",
            Vector,
            Tensor,
            vec_stage(VeStage::Fxp),
            [],
            ALL_STREAM
        ),
        "vector_fxp_zip" | "vector_fxp_zip_with_mode" => method!(
            "vector_fxp_zip",
            Vector,
            Tensor,
            vec_stage(VeStage::Fxp),
            [],
            ALL_STREAM
        ),
        "vector_fxp_to_fp" => method!(
            "vector_fxp_to_fp",
            Vector,
            Tensor,
            vec_stage(VeStage::FxpToFp),
            [],
            &[Chip, Cluster, Slice, Time, Packet]
        ),
        "vector_split" => method!(
            "vector_split",
            Vector,
            Tensor,
            vec_stage(VeStage::Narrow),
            [Time, Packet],
            SPATIAL
        ),
        "vector_trim_way4" => method!(
            "vector_trim_way4",
            Vector,
            Tensor,
            vec_stage(VeStage::Narrow),
            [Packet],
            &[D, Chip, Cluster, Slice, Time]
        ),
        "vector_fp_unary"
        | "vector_fp_unary_with_mode"
        | "vector_fp_binary"
        | "vector_fp_binary_with_mode"
        | "vector_fp_ternary"
        | "vector_fp_ternary_with_mode"
        | "vector_fp_zip"
        | "vector_fp_zip_with_mode" => {
            method!(
                "vector_fp",
                Vector,
                Tensor,
                vec_stage(VeStage::Fp),
                [],
                ALL_STREAM
            )
        }
        "vector_intra_slice_reduce" => method!(
            "vector_intra_slice_reduce",
            Vector,
            Tensor,
            vec_stage(VeStage::IntraSliceReduce),
            [Other, Time, Packet],
            SPATIAL
        ),
        "vector_fp_div" => method!(
            "vector_fp_div",
            Vector,
            Tensor,
            vec_stage(VeStage::FpDiv),
            [],
            ALL_STREAM
        ),
        "vector_concat" => method!(
            "vector_concat",
            Vector,
            Tensor,
            vec_stage(VeStage::Widen),
            [Time, Packet],
            SPATIAL
        ),
        "vector_pad_way8" => method!(
            "vector_pad_way8",
            Vector,
            Tensor,
            vec_stage(VeStage::Widen),
            [Packet],
            &[D, Chip, Cluster, Slice, Time]
        ),
        "vector_fp_to_fxp" => method!(
            "vector_fp_to_fxp",
            Vector,
            Tensor,
            vec_stage(VeStage::FpToFxp),
            [],
            &[Chip, Cluster, Slice, Time, Packet]
        ),
        "vector_clip"
        | "vector_clip_zip"
        | "vector_clip_with_mode"
        | "vector_clip_zip_with_mode" => {
            method!(
                "vector_clip",
                Vector,
                Tensor,
                vec_stage(VeStage::Clip),
                [],
                ALL_STREAM
            )
        }
        "vector_filter" => method!(
            "vector_filter",
            Vector,
            Tensor,
            vec_stage(VeStage::Filter),
            [],
            ALL_STREAM
        ),
        "vector_final" => method!(
            "vector_final",
            Vector,
            Tensor,
            vec_stage(VeStage::Final),
            [],
            ALL_STREAM
        ),
        "vector_stash" => method!(
            "vector_stash",
            Vector,
            Tensor,
            |k| matches!(k, Kind::Vector(_)).then_some(k),
            [],
            ALL_STREAM
        ),
        _ => return None,
    };
    Some(m)
}

/// Names of methods that are not tensor operations but are harmless on any value.
pub fn is_std_method(name: &str) -> bool {
    matches!(
        name,
        "clone"
            | "to_owned"
            | "as_ref"
            | "borrow"
            | "into"
            | "unwrap"
            | "expect"
            | "iter"
            | "len"
            // The vendor's accessors that give no tensor (a tensor's DM or HBM address).
            | "address"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_spellings_resolve() {
        for n in [
            "vector_fp_zip_with_mode",
            "vector_clip_zip",
            "vector_logic_with_mode",
            "fetch_with_zero_points",
        ] {
            assert!(method(n).is_some(), "{n}");
        }
    }

    #[test]
    fn pipeline_transfers() {
        let f = method("fetch").expect("fetch");
        assert_eq!((f.output)(Kind::Begin), Some(Kind::Fetch));
        assert_eq!((f.output)(Kind::Collect), None);
        let c = method("commit").expect("commit");
        assert_eq!((c.output)(Kind::Cast), Some(Kind::Dm));
        assert_eq!((c.output)(Kind::Dm), None);
    }
}
