//! The tensor types of `furiosa_visa_std` (api.md §2) and their type-parameter order.

pub use crate::dtype::Dtype;
use crate::mapping::Layout;

/// Which Tensor-Unit context a stream belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tu {
    Main,
    Sub,
}

/// A region of the TRF a `to_trf` load occupies (`TrfAddress::Full`, `FirstHalf`,
/// `SecondHalf`; manual L304, L4151-L4159).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrfRegion {
    Full,
    FirstHalf,
    SecondHalf,
}

impl TrfRegion {
    /// The region a `TrfAddress` value names (`TrfAddress::FirstHalf`, `FirstHalf`).
    pub fn named(text: &str) -> Option<TrfRegion> {
        let last = text.trim().rsplit("::").next()?;
        match last {
            "Full" => Some(TrfRegion::Full),
            "FirstHalf" => Some(TrfRegion::FirstHalf),
            "SecondHalf" => Some(TrfRegion::SecondHalf),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TrfRegion::Full => "Full",
            TrfRegion::FirstHalf => "FirstHalf",
            TrfRegion::SecondHalf => "SecondHalf",
        }
    }

    /// Whether two loads into these regions share TRF bytes: Full takes the whole TRF.
    pub fn overlaps(self, other: TrfRegion) -> bool {
        self == TrfRegion::Full || other == TrfRegion::Full || self == other
    }

    /// The region as the evaluator's value (`TrfAddress::Full`), what a helper's result says.
    pub fn value(self) -> super::value::Value {
        super::value::Value::Variant {
            path: format!("TrfAddress::{}", self.name()),
            fields: super::value::Fields::Unit,
        }
    }
}

impl Tu {
    /// The unit as the evaluator's value (`Tu::Sub`), what a call binds a context generic to.
    pub fn value(self) -> super::value::Value {
        super::value::Value::Variant {
            path: format!("Tu::{}", if self == Tu::Main { "Main" } else { "Sub" }),
            fields: super::value::Fields::Unit,
        }
    }

    /// The unit a value names (`Tu::Sub`).
    pub fn of_value(v: &super::value::Value) -> Option<Tu> {
        match v {
            super::value::Value::Variant { path, .. } if path.ends_with("Tu::Main") => {
                Some(Tu::Main)
            }
            super::value::Value::Variant { path, .. } if path.ends_with("Tu::Sub") => Some(Tu::Sub),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Tu::Main => "main",
            Tu::Sub => "sub",
        }
    }
}

/// A Vector Engine typestate (api.md §2.6, §3.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VeStage {
    Init,
    Branch,
    Logic,
    Fxp,
    FxpToFp,
    Narrow,
    Fp,
    IntraSliceReduce,
    FpDiv,
    Widen,
    FpToFxp,
    Clip,
    Filter,
    InterSliceReduce,
    Pair,
    Final,
}

impl VeStage {
    /// The stage a marker type of the manual's library names (`stage::Fp` is `Fp`).
    pub fn from_marker(name: &str) -> Option<VeStage> {
        Some(match name.trim() {
            "Branch" => VeStage::Branch,
            "Logic" => VeStage::Logic,
            "Fxp" => VeStage::Fxp,
            "FxpToFp" => VeStage::FxpToFp,
            "Narrow" => VeStage::Narrow,
            "Fp" => VeStage::Fp,
            "IntraSliceReduce" => VeStage::IntraSliceReduce,
            "FpDiv" => VeStage::FpDiv,
            "Widen" => VeStage::Widen,
            "FpToFxp" => VeStage::FpToFxp,
            "Clip" => VeStage::Clip,
            "Filter" => VeStage::Filter,
            "InterSliceReduce" => VeStage::InterSliceReduce,
            "Output" => VeStage::Final,
            _ => return None,
        })
    }
}

/// What kind of value a tensor type is: where it lives, or which pipeline stage produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Host,
    Hbm,
    HbmView,
    Dm,
    DmView,
    DmViewMut,
    Trf,
    Vrf,
    Begin,
    Fetch,
    Switch,
    Collect,
    AlignedPair,
    Contraction,
    Accumulation,
    Vector(VeStage),
    Cast,
    Transpose,
    /// The generic `StreamTensor<'l, P, ...>` of the Memory and Stream page.
    Stream,
}

/// A type parameter's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    D,
    Chip,
    Cluster,
    Slice,
    Row,
    Time,
    Packet,
    Element,
    /// The single mapping of a `HostTensor`.
    Mapping,
    /// A parameter visa-lint does not model (`T: Tu`, stash state, `VeOrder`, stage markers).
    Other,
}

impl Slot {
    pub fn name(self) -> &'static str {
        match self {
            Slot::D => "dtype",
            Slot::Chip => "chip",
            Slot::Cluster => "cluster",
            Slot::Slice => "slice",
            Slot::Row => "row",
            Slot::Time => "time",
            Slot::Packet => "packet",
            Slot::Element => "element",
            Slot::Mapping => "mapping",
            Slot::Other => "other",
        }
    }

    pub fn is_spatial(self) -> bool {
        matches!(self, Slot::Chip | Slot::Cluster | Slot::Slice)
    }
}

use Slot::*;

const STREAM: &[Slot] = &[Other, D, Chip, Cluster, Slice, Time, Packet];
const STREAM_ROW: &[Slot] = &[Other, D, Chip, Cluster, Slice, Row, Time, Packet];
const VECTOR: &[Slot] = &[
    Other, D, Chip, Cluster, Slice, Time, Packet, Other, Other, Other, Other, Other,
];
const VECTOR_PAIR: &[Slot] = &[Other, D, Other, Chip, Cluster, Slice, Time, Packet];

impl Kind {
    /// The type's name in `furiosa_visa_std`, and its kind.
    pub fn from_name(name: &str) -> Option<Kind> {
        Some(match name {
            "HostTensor" => Kind::Host,
            "HbmTensor" => Kind::Hbm,
            "HbmTensorView" => Kind::HbmView,
            // A writable HBM view has the same slots; the model reads `view_mut()` of an HBM
            // tensor as this kind too.
            "HbmTensorViewMut" => Kind::HbmView,
            "DmTensor" => Kind::Dm,
            "DmTensorView" => Kind::DmView,
            "DmTensorViewMut" => Kind::DmViewMut,
            "TrfTensor" => Kind::Trf,
            "VrfTensor" => Kind::Vrf,
            "BeginTensor" => Kind::Begin,
            "FetchTensor" => Kind::Fetch,
            "SwitchTensor" => Kind::Switch,
            "CollectTensor" => Kind::Collect,
            "AlignedPair" => Kind::AlignedPair,
            "ContractionTensor" => Kind::Contraction,
            "AccumulationTensor" => Kind::Accumulation,
            "CastTensor" => Kind::Cast,
            "TransposeTensor" => Kind::Transpose,
            "StreamTensor" => Kind::Stream,
            "VectorInitTensor" => Kind::Vector(VeStage::Init),
            "VectorBranchTensor" => Kind::Vector(VeStage::Branch),
            "VectorLogicTensor" => Kind::Vector(VeStage::Logic),
            "VectorFxpTensor" => Kind::Vector(VeStage::Fxp),
            "VectorFxpToFpTensor" => Kind::Vector(VeStage::FxpToFp),
            "VectorNarrowTensor" => Kind::Vector(VeStage::Narrow),
            "VectorFpTensor" => Kind::Vector(VeStage::Fp),
            "VectorIntraSliceReduceTensor" => Kind::Vector(VeStage::IntraSliceReduce),
            "VectorFpDivTensor" => Kind::Vector(VeStage::FpDiv),
            "VectorWidenTensor" => Kind::Vector(VeStage::Widen),
            "VectorFpToFxpTensor" => Kind::Vector(VeStage::FpToFxp),
            "VectorClipTensor" => Kind::Vector(VeStage::Clip),
            "VectorFilterTensor" => Kind::Vector(VeStage::Filter),
            "VectorInterSliceReduceTensor" => Kind::Vector(VeStage::InterSliceReduce),
            "VectorTensorPair" => Kind::Vector(VeStage::Pair),
            "VectorFinalTensor" => Kind::Vector(VeStage::Final),
            // furiosa-opt-std 0.6's names of the stream after each engine (its `engine/*.rs`
            // type aliases, all `<'l, T, D, Chip, Cluster, Slice, Time, Packet>`).
            "ContractTensor" => Kind::Accumulation,
            // Between the contraction's stages, with the Lane (the model's Row) before Time.
            "ContractPacketTensor" | "ContractTimeTensor" => Kind::Contraction,
            "FetchCastTensor"
            | "FetchMaskTensor"
            | "FetchTableLookupTensor"
            | "FetchZeroPointSubTensor" => Kind::Fetch,
            "CommitTrimTensor" | "CommitCastTensor" | "CommitValidCountPackTensor" => Kind::Stream,
            _ => return None,
        })
    }

    /// The type's name, for messages.
    pub fn type_name(self) -> &'static str {
        match self {
            Kind::Host => "HostTensor",
            Kind::Hbm => "HbmTensor",
            Kind::HbmView => "HbmTensorView",
            Kind::Dm => "DmTensor",
            Kind::DmView => "DmTensorView",
            Kind::DmViewMut => "DmTensorViewMut",
            Kind::Trf => "TrfTensor",
            Kind::Vrf => "VrfTensor",
            Kind::Begin => "BeginTensor",
            Kind::Fetch => "FetchTensor",
            Kind::Switch => "SwitchTensor",
            Kind::Collect => "CollectTensor",
            Kind::AlignedPair => "AlignedPair",
            Kind::Contraction => "ContractionTensor",
            Kind::Accumulation => "AccumulationTensor",
            Kind::Cast => "CastTensor",
            Kind::Transpose => "TransposeTensor",
            Kind::Stream => "StreamTensor",
            Kind::Vector(s) => match s {
                VeStage::Init => "VectorInitTensor",
                VeStage::Branch => "VectorBranchTensor",
                VeStage::Logic => "VectorLogicTensor",
                VeStage::Fxp => "VectorFxpTensor",
                VeStage::FxpToFp => "VectorFxpToFpTensor",
                VeStage::Narrow => "VectorNarrowTensor",
                VeStage::Fp => "VectorFpTensor",
                VeStage::IntraSliceReduce => "VectorIntraSliceReduceTensor",
                VeStage::FpDiv => "VectorFpDivTensor",
                VeStage::Widen => "VectorWidenTensor",
                VeStage::FpToFxp => "VectorFpToFxpTensor",
                VeStage::Clip => "VectorClipTensor",
                VeStage::Filter => "VectorFilterTensor",
                VeStage::InterSliceReduce => "VectorInterSliceReduceTensor",
                VeStage::Pair => "VectorTensorPair",
                VeStage::Final => "VectorFinalTensor",
            },
        }
    }

    /// The type parameters after the lifetimes, in order (api.md §2.3-2.6).
    pub fn params(self) -> &'static [Slot] {
        match self {
            Kind::Host => &[D, Mapping],
            Kind::Hbm | Kind::HbmView => &[D, Chip, Element],
            Kind::Dm | Kind::DmView | Kind::DmViewMut | Kind::Vrf => {
                &[D, Chip, Cluster, Slice, Element]
            }
            Kind::Trf => &[D, Chip, Cluster, Slice, Row, Element],
            Kind::AlignedPair | Kind::Contraction => STREAM_ROW,
            Kind::Vector(VeStage::Pair) => VECTOR_PAIR,
            Kind::Vector(VeStage::Init | VeStage::Final) => STREAM,
            Kind::Vector(VeStage::InterSliceReduce) => {
                &[Other, D, Chip, Cluster, Slice, Time, Packet, Other]
            }
            Kind::Vector(_) => VECTOR,
            Kind::Begin
            | Kind::Fetch
            | Kind::Switch
            | Kind::Collect
            | Kind::Accumulation
            | Kind::Cast
            | Kind::Transpose
            | Kind::Stream => STREAM,
        }
    }

    /// The memory tier or pipeline position, for the model dump.
    pub fn tier(self) -> &'static str {
        match self {
            Kind::Host => "host",
            Kind::Hbm | Kind::HbmView => "hbm",
            Kind::Dm | Kind::DmView | Kind::DmViewMut => "dm",
            Kind::Trf => "trf",
            Kind::Vrf => "vrf",
            _ => "stream",
        }
    }

    /// True for stream (Tensor Unit) kinds.
    pub fn is_stream(self) -> bool {
        self.tier() == "stream"
    }
}

/// A mapping as written (`m![A / 8 # 256]`, or an alias name) with its value when known.
///
/// `span` is where the text is written in the function being analysed (relative to the
/// function's text, like every span of a [`crate::model::FnModel`]); `None` when the mapping
/// was inferred, or comes from another item (a helper's signature, an alias). Fixes that
/// rewrite a mapping (`m![1]` -> `m![1 # 2]`) edit this span. Equality and hashing ignore it:
/// two mappings written in different places are the same type.
#[derive(Clone, Debug)]
pub struct MapVal {
    pub text: String,
    /// Shared: a model copies its tensor types into every step that reads or writes them.
    pub layout: Option<std::sync::Arc<Layout>>,
    pub span: Option<crate::diagnostic::Span>,
    /// Written inside a tensor type alias (`type Input = DmTensor<.., m![A / 8], ..>`) that is
    /// named at `span` (`a: &Input`): `text` is the mapping, not the text at `span`, so no fix
    /// may replace `span` with a mapping.
    pub in_tensor_alias: bool,
    /// Written in the type of a field of a struct of the crate (`top` of `HaloStrip`) and
    /// named at `span` where the function reads or builds the field: a fix pads it in the
    /// struct's declaration ([`crate::diagnostic::Fix::field_pad`]).
    pub field: Option<std::sync::Arc<FieldOf>>,
}

/// The field of a struct of the crate whose declared type a mapping is written in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldOf {
    /// The struct as the function names it (`HaloStrip`, `stage::HaloStrip`).
    pub strukt: String,
    /// Its name, or its position for a tuple struct (`0`).
    pub field: String,
}

impl MapVal {
    /// A mapping not written at any place of the function (inferred or built by the model).
    pub fn unplaced(text: impl Into<String>, layout: Option<Layout>) -> Self {
        MapVal {
            text: text.into(),
            layout: layout.map(std::sync::Arc::new),
            span: None,
            in_tensor_alias: false,
            field: None,
        }
    }
}

impl PartialEq for MapVal {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.layout == other.layout
    }
}

impl Eq for MapVal {}

impl std::hash::Hash for MapVal {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.text.hash(state);
        self.layout.hash(state);
    }
}

/// A (partially known) tensor type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorTy {
    pub kind: Kind,
    pub dtype: Option<Dtype>,
    pub maps: SlotMap,
}

impl TensorTy {
    /// Whether a value of type `actual` may be of this type (an `impl` block's, written with
    /// generics): the same kind, and the same element type and mappings wherever both are
    /// known.
    pub fn admits(&self, actual: &TensorTy) -> bool {
        let dtype = match (self.dtype, actual.dtype) {
            (Some(d), Some(a)) => d == a,
            _ => true,
        };
        self.kind == actual.kind
            && dtype
            && self.maps.iter().all(|(slot, mine)| {
                match (&mine.layout, actual.maps.get(&slot).map(|a| &a.layout)) {
                    (Some(d), Some(Some(a))) => d == a,
                    _ => true,
                }
            })
    }

    /// This type (a helper's parameter, written with generics) with what `arg` (the caller's
    /// argument) knows filled in where this one does not: the element type of a generic `D`,
    /// the mappings of generic slots (unplaced: they are written at the call, not here).
    /// `None` when `arg` adds nothing, or is another kind of tensor.
    pub fn instantiated_by(&self, arg: &TensorTy) -> Option<TensorTy> {
        if self.kind != arg.kind {
            return None;
        }
        let mut out = self.clone();
        let mut filled = false;
        if out.dtype.is_none() && arg.dtype.is_some() {
            out.dtype = arg.dtype;
            filled = true;
        }
        for (slot, m) in arg.maps.iter().filter(|(_, m)| m.layout.is_some()) {
            if out.maps.get(&slot).is_none_or(|mine| mine.layout.is_none()) {
                let unplaced = MapVal {
                    span: None,
                    in_tensor_alias: false,
                    field: None,
                    ..m.clone()
                };
                out.maps.insert(slot, unplaced);
                filled = true;
            }
        }
        filled.then_some(out)
    }
}

/// A tensor type's mappings by slot, in slot order: a sorted vector, not a `BTreeMap` (a type
/// has a handful of slots, and a model copies its types into every step: a map's node holds
/// room for eleven).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SlotMap(Vec<(Slot, MapVal)>);

impl SlotMap {
    fn find(&self, s: Slot) -> Result<usize, usize> {
        self.0.binary_search_by_key(&s, |(k, _)| *k)
    }

    pub fn get(&self, s: &Slot) -> Option<&MapVal> {
        self.find(*s).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, s: &Slot) -> bool {
        self.find(*s).is_ok()
    }

    /// Sets a slot's mapping, returning the one it replaces.
    pub fn insert(&mut self, s: Slot, m: MapVal) -> Option<MapVal> {
        match self.find(s) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, m)),
            Err(i) => {
                self.0.insert(i, (s, m));
                None
            }
        }
    }

    /// Sets a slot's mapping unless it has one.
    pub fn insert_if_absent(&mut self, s: Slot, m: impl FnOnce() -> MapVal) {
        if let Err(i) = self.find(s) {
            self.0.insert(i, (s, m()));
        }
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Slot, &mut MapVal) -> bool) {
        self.0.retain_mut(|(s, m)| keep(s, m));
    }

    pub fn values(&self) -> impl Iterator<Item = &MapVal> {
        self.0.iter().map(|(_, m)| m)
    }

    /// The slots with their mappings, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (Slot, &MapVal)> {
        self.0.iter().map(|(s, m)| (*s, m))
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut MapVal> {
        self.0.iter_mut().map(|(_, m)| m)
    }
}

impl<'a> IntoIterator for &'a SlotMap {
    type Item = (&'a Slot, &'a MapVal);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Slot, MapVal)>,
        fn(&'a (Slot, MapVal)) -> (&'a Slot, &'a MapVal),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(s, m)| (s, m))
    }
}

impl TensorTy {
    pub fn new(kind: Kind) -> TensorTy {
        TensorTy {
            kind,
            dtype: None,
            maps: SlotMap::default(),
        }
    }

    pub fn get(&self, s: Slot) -> Option<&MapVal> {
        self.maps.get(&s)
    }
}

/// The dtype, element count and bytes of one slot of a type, when all are known.
pub fn slot_bytes(ty: &TensorTy, slot: Slot) -> Option<(Dtype, u64, u64)> {
    let d = ty.dtype?;
    let n = ty.get(slot)?.layout.as_deref()?.size;
    Some((d, n, d.size_bytes(n)?))
}

#[cfg(test)]
mod tests {
    use super::Kind;

    /// The resolver tells a library tensor type by its name alone (an `impl` block for one
    /// extends it): every name the model reads as a tensor must be one it tells.
    #[test]
    fn every_tensor_type_name_is_one_the_resolver_tells() {
        let names = [
            "HostTensor",
            "HbmTensor",
            "HbmTensorView",
            "HbmTensorViewMut",
            "DmTensor",
            "DmTensorView",
            "DmTensorViewMut",
            "TrfTensor",
            "VrfTensor",
            "BeginTensor",
            "FetchTensor",
            "SwitchTensor",
            "CollectTensor",
            "AlignedPair",
            "ContractionTensor",
            "AccumulationTensor",
            "CastTensor",
            "TransposeTensor",
            "StreamTensor",
            "VectorInitTensor",
            "VectorTensorPair",
            "VectorFinalTensor",
            "ContractTensor",
            "ContractPacketTensor",
            "FetchCastTensor",
            "CommitTrimTensor",
        ];
        for n in names {
            assert!(Kind::from_name(n).is_some(), "{n}");
            assert!(crate::library::is_tensor_type(n), "{n}");
        }
        assert!(!crate::library::is_tensor_type("Tensor"));
        assert!(!crate::library::is_tensor_type("GemvPlan"));
    }
}
