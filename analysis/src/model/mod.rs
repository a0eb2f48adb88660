//! The kernel model: per function, its tensors and its chains of engine calls, with the type
//! at every step (api.md §2-3). Rules and the simulator read this, never the syntax tree.

pub mod build;
pub mod consts;
pub mod methods;
pub mod ops;
pub mod problem;
pub mod refusals;
pub mod types;
pub mod value;

use crate::diagnostic::Span;
use crate::mapping::Scope;
pub use methods::{Engine, Method};
pub use problem::Problem;
pub use types::{Dtype, FieldOf, Kind, MapVal, Slot, TensorTy, TrfRegion, Tu, VeStage, slot_bytes};

/// One method call of a chain.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    pub method: Method,
    /// The method name token.
    pub span: Span,
    pub engine: Option<Engine>,
    /// The receiver's type (the first argument's for `begin`), when known.
    pub input: Option<TensorTy>,
    /// The result's type, when known.
    pub output: Option<TensorTy>,
    /// Slots the result keeps from the input (for backward type flow).
    pub keep: Vec<Slot>,
    pub context: Option<Tu>,
    /// The constant address argument (`to_dm`, `commit`, `to_hbm`), when there is one.
    pub address: Option<u64>,
    pub awaited: bool,
    /// The turbofish arguments as written (`i32`, `m![A % 8]`, `_`), lifetimes left out.
    pub generics: Vec<Arg>,
    /// The value arguments as written (`FxpBinaryOp::AddFxp`, `1`, `&rhs`).
    pub args: Vec<Arg>,
    /// The tensor a `commit_view` writes whole, by the name the model gives it (`tiles[2]`
    /// of `commit_view(tiles[t].view_mut())` when `t = 2`); `None` for a view of part of one.
    pub into: Option<String>,
    /// A DMA or a commit into a destination view given as an argument (`to_dm_view(dma,
    /// dst)`, `commit_view(dst)`): its layout is the destination's, declared with it.
    pub into_view: bool,
}

impl Step {
    /// The low bits of the address this step places its result at, where the address is not
    /// known in full (see [`value::LowBits`]).
    pub fn address_low_bits(&self) -> Option<value::LowBits> {
        let arg = self.args.get(self.method.address_arg()?)?;
        match &arg.value {
            Some(Err(unknown)) => unknown.low,
            _ => None,
        }
    }

    /// The TRF region a `to_trf` step loads into, when its argument's value names one.
    pub fn trf_region(&self) -> Option<TrfRegion> {
        if self.method != Method::ToTrf {
            return None;
        }
        TrfRegion::named(&self.args.first()?.value_text())
    }
}

/// An argument as written, with its span.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Arg {
    pub text: String,
    pub span: Span,
    /// A value argument's compile-time value when the argument names it (a `let`, a `const`,
    /// an `if`, a field that is a constant) or when it is unknown; `None` when the value is
    /// written in place (the rules read its text, with spans inside it).
    pub value: Option<value::Eval>,
    /// A mapping written inside a tensor type alias that is named at `span` (see
    /// [`MapVal::in_tensor_alias`]): `text` is not what `span` holds.
    pub in_tensor_alias: bool,
}

impl Arg {
    /// An argument written in place.
    pub fn written(text: String, span: Span) -> Arg {
        Arg {
            text,
            span,
            value: None,
            in_tensor_alias: false,
        }
    }

    /// Where a mapping is written, as an argument (see [`placed`]).
    pub fn mapping(m: &MapVal, span: Span) -> Arg {
        Arg {
            in_tensor_alias: m.in_tensor_alias,
            ..Arg::written(m.text.clone(), span)
        }
    }

    /// The argument's value as Rust text: the value it names, or its text as written (also
    /// when the value is unknown: then nothing a rule parses out of it is a value).
    pub fn value_text(&self) -> std::borrow::Cow<'_, str> {
        match &self.value {
            Some(Ok(v)) => std::borrow::Cow::Owned(v.text()),
            _ => std::borrow::Cow::Borrowed(&self.text),
        }
    }

    /// Whether the value is written in the argument itself, so that a span inside its text is
    /// a part of the value (a field of a `SwitchConfig`).
    pub fn in_place(&self) -> bool {
        self.value.is_none()
    }
}

/// A chain of method calls, as one statement or `let` initializer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Chain {
    pub span: Span,
    pub binding: Option<String>,
    /// The type the chain's result is declared with, as written (a `let` annotation or the
    /// function's return type for its tail expression), before it is merged into the steps.
    pub declared: Option<TensorTy>,
    /// The variable the chain starts from (`x` in `x.view().to_hbm(…)`), when it is a plain
    /// name; `None` for `ctx.main.begin(…)` and other roots.
    pub receiver: Option<String>,
    pub steps: Vec<Step>,
    /// Written over several statements or arms (it continues a variable's chain): a fix that
    /// rewrites it as one statement does not apply.
    pub written_apart: bool,
    /// The loop iteration that made it (an index into [`FnModel::iterations`]), when it is
    /// written in the body of a loop the model iterates.
    pub iteration: Option<u32>,
}

/// Where a tensor value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    Param,
    Let,
    /// `x = e` of a variable declared before: in a loop, what one iteration assigns the next
    /// reads until it assigns again (`best = Some(..)`).
    Assign,
}

/// A named tensor value: a parameter or a `let` binding.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorVar {
    pub name: String,
    pub span: Span,
    pub origin: Origin,
    pub ty: TensorTy,
    pub context: Option<Tu>,
    pub address: Option<u64>,
    /// Where `address` is not known, its low bits where they are (`keys.to_hbm(&mut
    /// ctx.pdma, KV_POOL + page * 0x1_1000 + 4)`: 4 modulo 4096, whichever `page` is).
    pub address_low: Option<value::LowBits>,
    /// Made by `from_addr(..)`: a view the writer placed by hand, which may be one tile of a
    /// larger tensor (its address selects which).
    pub from_addr: bool,
    /// The loop iteration that bound it (see [`Chain::iteration`]).
    pub iteration: Option<u32>,
    /// A TRF tensor a helper call loaded (`let w = load_weights(ctx, &w_dm, region);`): the
    /// region the helper's trace loads it into, and the call (a `to_trf` of the function
    /// itself is one of its steps).
    pub trf_loaded: Option<(TrfRegion, Span)>,
    /// A DM tensor a helper call returns, placed where the helper's trace with the call's
    /// values writes it (`let t = stage(ctx, &x, SLOT);`): the call, where the write happens.
    pub placed_by_call: Option<Span>,
}

/// What kind of function this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FnKind {
    /// `#[device(chip = N)]`, and furiosa-opt-std's `pe = P` (processing elements per chip,
    /// which fix its Cluster and Slice sizes) when written.
    Device { chips: Option<u64>, pe: Option<u64> },
    /// `async fn`, host code.
    Host,
    /// Anything else (helpers, tests, doc-test wrappers).
    Plain,
}

/// The model of one function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FnModel {
    pub name: String,
    /// The function's name token.
    pub span: Span,
    pub kind: FnKind,
    pub tensors: Vec<TensorVar>,
    pub chains: Vec<Chain>,
    /// What building the model found (the rules layer reports each).
    pub problems: Vec<Problem>,
    /// The iterations of the loops the model iterated; a chain built in one points here.
    pub iterations: Vec<Iteration>,
    /// The library generation the function is written against (its crate's).
    pub library: crate::library::Generation,
    /// furiosa-opt-std's stream adapters as written (`commit_trim::<P>()`, `commit_cast::<D>()`,
    /// ...): each is folded into the step it adapts, and the rules that check an adapter's own
    /// conditions read it here.
    pub adapters: Vec<Adapter>,
    /// The calls of the crate's helper functions (every one, so that a helper's callers are
    /// all known: see `crate::callers`). A call that binds a parameter to a value known at
    /// the call has the helper's body checked again with those values
    /// (`crate::calls::call_diagnostics`), as the compiler traces it at the call.
    pub calls: Vec<HelperCall>,
    /// The tensors placed at a constant address by a constructor (`from_addr(0x1000)`): the
    /// alignment rules check the address where it is written.
    pub placements: Vec<Placement>,
    /// The tensor parameters whose type names a type parameter of the function (`a:
    /// &DmTensor<D, ..>` in `fn widen<D: Scalar>`) that no call binds here: the rules read
    /// them only where a call instantiates them (see `crate::callers`).
    pub generic_tensors: Vec<GenericTensor>,
    /// For a helper checked with a call's values ([`Bound`]), the `#[device]` kernel whose
    /// trace calls it: its grid and chips are the helper's.
    pub traced_in: Option<FnKind>,
    /// The tensor variables the function's result holds (its tail `x`, `(a, b)`, `TileIn { x,
    /// res }`), each where the tail names it: the caller gets them, so they outlive the body.
    pub returned: Vec<(String, Span)>,
    /// Each local array of tensors (`let trfs = [&cos_trf, &sin_trf];`) with the tensors it
    /// holds, and where it is bound: reading the array reads them.
    pub tensor_arrays: Vec<(String, Vec<String>, Span)>,
    /// The names the arms of a `match` on a tensor variable bind to it (`prev` of `match &best
    /// { Some(prev) => .. }`): reading one reads the variable's tensor.
    pub aliases: Vec<Alias>,
    /// Each tensor variable moved into another name by a plain assignment or `let` (`cur =
    /// next;`, `let keep = t;`), where the move is written: the move reads it, and its tensor
    /// lives on under the new name.
    pub moves: Vec<Move>,
    /// What the function's result holds that its type does not say, for its callers: each
    /// DM tensor's address (an integer), each TRF tensor's region (`TrfAddress::Full`), `()`
    /// for anything else, shaped as the tail is (a tuple, a struct's fields). `None` when it
    /// holds none of these.
    pub result: Option<value::Value>,
}

/// What the calls of a function give, from the helpers' traces with each call's values
/// (see [`FnModel::result`]): by the call expression and its loop iteration.
pub type CallResults = Vec<((Span, Option<u32>), value::Value)>;

/// A tensor variable moved into another name (see [`FnModel::moves`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// The variable moved.
    pub from: String,
    /// Where it is named in the move.
    pub at: Span,
    /// The loop iteration the move is made in (see [`Chain::iteration`]).
    pub iteration: Option<u32>,
}

/// A name bound to the tensor a variable holds (see [`FnModel::aliases`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Alias {
    pub name: String,
    /// The variable it names the tensor of.
    pub of: String,
    /// The pattern that binds it.
    pub at: Span,
    /// The loop iteration it is bound in (see [`Chain::iteration`]).
    pub iteration: Option<u32>,
}

/// A tensor parameter typed by a type parameter of its function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GenericTensor {
    /// The parameter's name.
    pub param: String,
    /// The type parameter (`D`), and where it is declared.
    pub generic: String,
    pub at: Span,
}

/// A tensor a constructor placed at a constant address (`Input::from_addr(0x1000)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Placement {
    /// The address argument as written.
    pub arg: Arg,
    pub address: u64,
    pub ty: TensorTy,
    /// The loop iteration that placed it (see [`Chain::iteration`]).
    pub iteration: Option<u32>,
}

/// A call of a helper function with some of its parameters known at the call
/// (`stage(ctx, &a, BASE + 1)`, `tile::<4>(ctx, &a)`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HelperCall {
    /// The helper as the call names it (`stage`, `super::helpers::stage`).
    pub callee: String,
    /// The callee's path at the call: where what the helper's body gives with these values
    /// is reported.
    pub span: Span,
    /// The callee's path as written up to the helper's name (`crate::dequant::tile` of
    /// `crate::dequant::tile::<bf16>(..)`), where it names the function itself: what a fix
    /// that gives the call a copy of the helper renames ([`crate::own_copy`]).
    pub path: Option<Span>,
    pub bound: Bound,
    /// The tensor variables the call's arguments name (`&sums`, `t.view()`), each with its
    /// argument: the call reads them, so they are live up to it.
    pub reads: Vec<(String, Span)>,
    /// The loop iteration the call is made in (see [`Chain::iteration`]).
    pub iteration: Option<u32>,
    /// A kernel launched by the host (`launch(kernel, (&mut ctx, &a))`), not a helper called.
    pub launched: bool,
    /// A method of the crate's `impl` blocks called on a value of a type the model knows
    /// (`GemvPlan::<4>.run(..)`, `FAST_EMIT.emit(..)`): `callee` is `Type::method`.
    pub method: bool,
    /// Where each mapping argument of the call's turbofish is written (`m![K % 32]`, an
    /// alias), by position among the type and const arguments: a fix the helper's body gives
    /// for its mapping parameter edits the argument that binds it.
    pub mapping_args: Vec<Option<Span>>,
    /// The alias each mapping parameter the call does not write was inferred as, from an
    /// argument's type (`S` of `router_logits(ctx, &x_dm, ..)` is `Tile16::Slice`, the type
    /// `stage_tokens::<Tile16>` gave `x_dm`): a fix of the parameter pads that alias where it
    /// is defined.
    pub inferred: Vec<Option<String>>,
    /// Where each argument of the call's turbofish is written (`::<3>`, `::<W>`), by position
    /// among the type and const arguments: a fix the helper's body gives by changing a const
    /// parameter's value (`Padding<m![1], W>` → `Padding<m![1], 2>`) changes the argument.
    pub turbofish: Vec<Span>,
    /// Where each value argument is written, by position (`None` for a context, `&mut
    /// ctx.main`, which every engine call of the helper reads): a finding that one argument's
    /// value alone causes is reported at that argument, as rustc points at it.
    pub args: Vec<Option<Span>>,
    /// The whole call expression (`load_weights(ctx, &w, r)`, `x.park(ctx)`): what the
    /// caller's [`CallResults`] are keyed by.
    pub expr: Span,
    /// Where the run-time values the call gives its helper come from (the `if` on a loop
    /// variable, the loop's variable): a value the helper's immediate cannot fold.
    pub run_time_origins: Vec<Span>,
    /// Whether the result's type holds a DM or TRF tensor: what the helper's trace places it
    /// at is read for the caller ([`FnModel::result`]).
    pub gives_placed: bool,
    /// The chain that continues the stream the helper returns in mid-pass (an index into
    /// [`FnModel::chains`]), while the function is being built: its steps become
    /// [`Bound::continued`].
    pub result: Option<u32>,
}

impl FnModel {
    /// The names that read the tensor `name` in text written after `after`: its own, and
    /// each local array bound after `after` that holds it.
    pub fn names_reading<'a>(&'a self, name: &'a str, after: u32) -> Vec<&'a str> {
        std::iter::once(name)
            .chain(
                self.tensor_arrays
                    .iter()
                    .filter(|(_, held, at)| at.start >= after && held.iter().any(|h| h == name))
                    .map(|(array, _, _)| array.as_str()),
            )
            .collect()
    }
}

impl HelperCall {
    /// The helper as a message names it: as the call names it, a library tensor type's
    /// method by the type and the method (`HbmTensor::stage`, not the key of its `impl`
    /// block, `HbmTensor·ec8b4442::stage`).
    pub fn callee_name(&self) -> String {
        match self.callee.split_once('·') {
            Some((ty, rest)) => {
                let method = rest.split_once("::").map_or(rest, |(_, m)| m);
                format!("{ty}::{method}")
            }
            None => self.callee.clone(),
        }
    }
}

/// What a call binds a helper's parameters to: each value parameter's value, by position
/// (`None`: not a value known at the call), and each const generic argument written at the
/// call (`::<4>`), by position among the type and const arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bound {
    pub params: Vec<Option<value::Value>>,
    pub generics: Vec<Option<value::Value>>,
    /// Each generic argument that is a mapping (`flits::<{ Tu::Main }, m![K / 32], Packet>`),
    /// written out as the caller's scope reads it (`K / 32`), by position among the type and
    /// const parameters: the helper's mapping parameter (`Tm: M`) is that mapping.
    pub mappings: Vec<Option<String>>,
    /// The axes those mappings name, as the caller declares them: a helper whose module does
    /// not declare one (`use crate::consts::{C, D}` without `L`) reads `m![L % 8]` with the
    /// caller's `L`, as rustc resolves the type at the call.
    pub axes: Vec<crate::mapping::layout::Axis>,
    /// Each tensor parameter's type as the call instantiates it (a generic element type or
    /// mapping taken from the caller's argument), where the argument adds to the declared one.
    pub tensors: Vec<Option<TensorTy>>,
    /// Each tensor parameter's address, where the caller's argument was placed at a known one
    /// (`to_hbm(&mut ctx.pdma, 0x1000)`, `from_addr(0x1000)` before `launch`).
    pub addresses: Vec<Option<u64>>,
    /// Each tensor parameter's address low bits, where the caller placed its argument at an
    /// address known only in part (`KV_POOL + page * 0x1_1000 + 4` with `page` not known).
    pub address_low: Vec<Option<value::LowBits>>,
    /// Each stream parameter's pass so far, where the caller passes a stream in mid-pass: the
    /// steps of the caller's chain up to the call ([`Step::from_caller`], at
    /// [`CALLER_PASS`]). The helper's chain from that parameter continues them, as the
    /// hardware's one pass does.
    pub streams: Vec<Option<Vec<Step>>>,
    /// What the caller does with the stream the helper returns in mid-pass: the steps of the
    /// caller's chain after the call (at [`CALLER_CONTINUATION`]), which the helper's returned
    /// chain is continued with.
    pub continued: Option<Vec<Step>>,
    /// The `#[device]` kernel whose trace makes the call (directly or through helpers): the
    /// helper's Chip, Cluster and Slice mappings are that kernel's, which its own analysis
    /// does not know. Not a binding of its own ([`Bound::binds_any`]), but it gives the
    /// helper's analysis something new ([`Bound::traces_anew`]).
    pub kernel: Option<FnKind>,
    /// Each parameter the call gives a value that varies while the kernel runs (furiosa-opt-
    /// std: a loop variable, an `if` on one), by position: an immediate read from it does not
    /// fold ([`crate::model::refusals::helper_immediates`]).
    pub run_time: Vec<Option<crate::model::refusals::RunTime>>,
    /// The receiver of a method call, where the call is one ([`HelperCall::method`]).
    pub receiver: Option<Receiver>,
    /// Each type argument that names a type of the crate with associated items
    /// (`scale_rows::<HiddenNorm>`), by position among the type and const parameters: what
    /// the helper reads through its parameter (`S::CastOut` is `HiddenNorm::CastOut`).
    pub types: Vec<Option<TypeArg>>,
    /// `Self` of a trait's default function called through a type (`Rt::normalize(..)` with
    /// `Rt = SigmoidRouter`): the type's associated items, and the trait's defaults it keeps.
    pub self_arg: Option<TypeArg>,
}

impl Bound {
    /// Whether the call gives the helper something of its `k`th argument: its value, or
    /// where the tensor it names was placed.
    pub fn knows_argument(&self, k: usize) -> bool {
        let some = |v: Option<bool>| v.unwrap_or(false);
        some(self.params.get(k).map(Option::is_some))
            || some(self.addresses.get(k).map(Option::is_some))
            || some(self.address_low.get(k).map(Option::is_some))
    }

    /// The same binding with nothing known of the `k`th argument.
    pub fn without_argument(&self, k: usize) -> Bound {
        let mut b = self.clone();
        forget(b.params.get_mut(k));
        forget(b.addresses.get_mut(k));
        forget(b.address_low.get_mut(k));
        b
    }

    /// The same binding with the `k`th const generic not known.
    pub fn without_generic(&self, k: usize) -> Bound {
        let mut b = self.clone();
        forget(b.generics.get_mut(k));
        b
    }
}

/// Makes a known part of a binding not known.
fn forget<T>(v: Option<&mut Option<T>>) {
    if let Some(v) = v {
        *v = None;
    }
}

/// A type of the crate given as a helper's type argument, by its associated items: each
/// associated mapping (`type CastOut = m![H % 8 # 8];`) written out as the caller's scope
/// reads it, and each associated constant's value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TypeArg {
    /// The type as the call writes it (`HiddenNorm`).
    pub name: String,
    /// `(CastOut, "H % 8 # 8")`.
    pub mappings: Vec<(String, String)>,
    /// `(LEN, 4096)`.
    pub consts: Vec<(String, value::Value)>,
    /// Its associated element types: `(Elem, i8)` of `type Elem = i8;`.
    pub dtypes: Vec<(String, crate::dtype::Dtype)>,
}

/// What a method call gives its method besides its arguments: `self`'s value (`Plan { tile:
/// 4 }`) and the generic arguments of the receiver's type (`GemvPlan::<LANE_BUS>`, a const
/// `ScoreEmitter<{ FlitLanes::F32 }>`), which bind the `impl` block's parameters
/// (`impl<const BUS: usize> GemvPlan<BUS>`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Receiver {
    /// `self`'s value, where known at the call.
    pub value: Option<value::Value>,
    /// Each generic argument of the receiver's type that is a known constant, by position
    /// among the type's type and const arguments.
    pub generics: Vec<Option<value::Value>>,
    /// Each generic argument that is a mapping, written out as the caller's scope reads it.
    pub mappings: Vec<Option<String>>,
    /// Each generic argument that is a type of the crate (`Body` of `Conv3x3<Body>`), with
    /// its associated items.
    pub types: Vec<Option<TypeArg>>,
    /// The `impl` block's parameter each position binds (`BUS` of `impl<const BUS: usize>
    /// GemvPlan<BUS>`): empty in the caller's model, filled where the call is resolved to
    /// its method ([`crate::calls`]), which is what the method's analysis binds.
    pub params: Vec<Option<String>>,
}

impl Receiver {
    /// Whether it binds anything the method cannot know on its own.
    pub fn binds_any(&self) -> bool {
        let unit = matches!(
            &self.value,
            Some(value::Value::Variant {
                fields: value::Fields::Unit,
                ..
            })
        );
        (self.value.is_some() && !unit)
            || self.generics.iter().any(Option::is_some)
            || self.mappings.iter().any(Option::is_some)
            || self.types.iter().any(Option::is_some)
    }

    /// The constants it binds, by the `impl` block's parameter names (`BUS = 4`).
    pub fn named_consts(&self) -> Vec<(&str, &value::Value)> {
        let names = self.params.iter().map(Option::as_deref);
        names
            .zip(&self.generics)
            .filter_map(|(n, v)| Some((n?, v.as_ref()?)))
            .collect()
    }

    /// The types it binds, by the `impl` block's parameter names (`L = Body`).
    pub fn named_types(&self) -> Vec<(&str, &TypeArg)> {
        let names = self.params.iter().map(Option::as_deref);
        names
            .zip(&self.types)
            .filter_map(|(n, t)| Some((n?, t.as_ref()?)))
            .collect()
    }

    /// The mappings it binds, by the `impl` block's parameter names (`Out = K % 8`).
    pub fn named_mappings(&self) -> Vec<(&str, &str)> {
        let names = self.params.iter().map(Option::as_deref);
        names
            .zip(&self.mappings)
            .filter_map(|(n, m)| Some((n?, m.as_deref()?)))
            .collect()
    }
}

/// Where the steps a caller's pass gives a helper ([`Bound::streams`]) are placed in the
/// helper's analysis: past any text, so that what a rule finds there (the caller's own part,
/// which the caller's check reports) is told apart.
pub const CALLER_PASS: u32 = 0xC000_0000;
/// Where the caller's continuation of a returned stream ([`Bound::continued`]) is placed in
/// the helper's analysis: what a rule finds there is the pass the two share, reported at the
/// call.
pub const CALLER_CONTINUATION: u32 = 0x8000_0000;
/// How far past the call (and how long) a continued step's place is kept
/// ([`Step::from_caller_after`]), well inside the room between [`CALLER_CONTINUATION`] and
/// [`CALLER_PASS`].
const CALLER_SPAN_MAX: u32 = 0x1000_0000;

impl Bound {
    /// Whether the call binds anything.
    pub fn binds_any(&self) -> bool {
        self.params
            .iter()
            .chain(&self.generics)
            .any(Option::is_some)
            || self.mappings.iter().any(Option::is_some)
            || self.tensors.iter().any(Option::is_some)
            || self.addresses.iter().any(Option::is_some)
            || self.address_low.iter().any(Option::is_some)
            || self.streams.iter().any(Option::is_some)
            || self.continued.is_some()
            || self.receiver.as_ref().is_some_and(Receiver::binds_any)
            || self.types.iter().any(Option::is_some)
            || self.self_arg.is_some()
            || self.run_time.iter().any(Option::is_some)
    }

    /// Whether the helper's analysis with this call can find more than its own: the call binds
    /// something, or is traced in a `#[device]` kernel, whose grid the helper's Chip, Cluster
    /// and Slice mappings must fit (a helper's signature `DmTensor<.., m![C / 2], ..>` is a
    /// Slice of 128 in every kernel that calls it).
    pub fn traces_anew(&self) -> bool {
        self.binds_any() || self.kernel.is_some()
    }
}

impl Step {
    /// This step of a caller's chain as a helper's analysis holds it: every place of it at
    /// `at` (it has no text in the helper).
    pub fn from_caller(&self, at: u32) -> Step {
        self.from_caller_after(at, None)
    }

    /// [`Step::from_caller`], each place at `at` plus how far past `origin` (the call) the
    /// step is written in the caller, so that a finding there is reported at the caller's own
    /// step (`.vector_clip(..)` after `saturate(acc)`).
    pub fn from_caller_after(&self, at: u32, origin: Option<u32>) -> Step {
        let past = origin.map_or(0, |o| {
            self.span.start.saturating_sub(o).min(CALLER_SPAN_MAX)
        });
        let len = (self.span.end - self.span.start.min(self.span.end)).min(CALLER_SPAN_MAX);
        let here = match origin {
            Some(_) => Span::new((at + past) as usize, (at + past + len) as usize),
            None => Span::new(at as usize, at as usize),
        };
        let unplace = |t: &mut TensorTy| {
            for m in t.maps.values_mut() {
                m.span = None;
                m.in_tensor_alias = false;
            }
        };
        let mut step = self.clone();
        step.span = here;
        for a in step.generics.iter_mut().chain(step.args.iter_mut()) {
            a.span = here;
            a.in_tensor_alias = false;
        }
        step.input
            .iter_mut()
            .chain(step.output.iter_mut())
            .for_each(unplace);
        step
    }
}

/// One stream adapter call of furiosa-opt-std.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Adapter {
    pub method: Method,
    /// The method name token.
    pub span: Span,
    /// The stream it adapts.
    pub input: TensorTy,
    /// Its turbofish argument as written (`m![A % 8]`, `bf16`), with its mapping when it is
    /// one.
    pub generic: Option<(Arg, Option<MapVal>)>,
    /// The element type that argument names, as the trace resolves it (`bf16`, a type
    /// parameter a call gives, `Self::Wide` of a trait's default traced for a type).
    pub to: Option<crate::dtype::Dtype>,
    /// Its value arguments (`fetch_zero_point_sub`'s zero point).
    pub args: Vec<Arg>,
}

/// One iteration of a loop the model iterated.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Iteration {
    /// Its loop variables' values: `i = 7`, `i = 1, j = 3` in nested loops.
    pub label: String,
    /// The first iteration of its loop, inside the first of every enclosing one: what the
    /// function's timeline reads of the loop (one pass of its body, as before loops were
    /// iterated), so that a tensor rebound in each iteration is not taken to live on.
    pub first: bool,
    /// The iteration of the same run of its loop just before it, when the model iterated
    /// that one too (past the budget only the first and last are, and the last has none).
    pub previous: Option<u32>,
}

impl FnModel {
    /// The model of a function with nothing found in it yet.
    pub fn empty(
        name: String,
        span: Span,
        kind: FnKind,
        library: crate::library::Generation,
    ) -> FnModel {
        FnModel {
            name,
            span,
            kind,
            tensors: Vec::new(),
            chains: Vec::new(),
            problems: Vec::new(),
            iterations: Vec::new(),
            library,
            adapters: Vec::new(),
            calls: Vec::new(),
            placements: Vec::new(),
            generic_tensors: Vec::new(),
            traced_in: None,
            returned: Vec::new(),
            tensor_arrays: Vec::new(),
            aliases: Vec::new(),
            moves: Vec::new(),
            result: None,
        }
    }

    /// Whether a chain or tensor of `iteration` belongs to the function's single pass: outside
    /// any iterated loop, or in the first iteration of each.
    pub fn in_first_pass(&self, iteration: Option<u32>) -> bool {
        iteration.is_none_or(|k| self.iterations.get(k as usize).is_some_and(|i| i.first))
    }

    /// The tensor of `kind` that `step`'s first value argument names (`&x`, `x`), as bound
    /// before the step: the TRF of a contraction, the index of a gather.
    pub fn first_arg_tensor(&self, step: &Step, kind: Kind) -> Option<&TensorVar> {
        let arg = step.args.first()?;
        let name = arg.text.trim().trim_start_matches('&').trim();
        self.tensors
            .iter()
            .rev()
            .find(|t| t.name == name && t.ty.kind == kind && t.span.start <= step.span.start)
    }
}

/// The turbofish argument at `i` when it is written out (not `_`).
pub fn written(step: &Step, i: usize) -> Option<&Arg> {
    step.generics.get(i).filter(|a| a.text.trim() != "_")
}

/// A mapping as the argument it is written as (its text and where), when it is written
/// somewhere in the function; `None` for a mapping the model inferred.
pub fn placed(m: &MapVal) -> Option<Arg> {
    m.span.map(|span| Arg::mapping(m, span))
}

/// Where the `slot` mapping of `step`'s result is written: its turbofish argument `generic`
/// when written out, else where the result's mapping comes from (a `let` annotation, the
/// function's signature, another call's turbofish); `None` when it is written nowhere.
/// Diagnostics about that mapping point here (ARCHITECTURE.md, "Where a diagnostic points").
pub fn output_arg(step: &Step, generic: Option<usize>, slot: Slot) -> Option<Arg> {
    generic
        .and_then(|i| written(step, i))
        .cloned()
        .or_else(|| step.output.as_ref()?.get(slot).and_then(placed))
}

/// Where the `slot` mapping of `step`'s input is written (the signature, a `let` annotation,
/// the call that produced it), when it is.
pub fn input_arg(step: &Step, slot: Slot) -> Option<Arg> {
    step.input.as_ref()?.get(slot).and_then(placed)
}

/// The smallest mapping written in `model` (a type's `m![...]` or alias, a turbofish argument)
/// that contains `span`: where a diagnostic points when its fix edits inside that mapping.
pub fn mapping_around(model: &FnModel, span: Span) -> Option<Span> {
    let within = |outer: Span| outer.start <= span.start && span.end <= outer.end;
    let types = model
        .tensors
        .iter()
        .map(|t| &t.ty)
        .chain(model.chains.iter().flat_map(|c| {
            c.declared.iter().chain(
                c.steps
                    .iter()
                    .flat_map(|s| s.input.iter().chain(s.output.iter())),
            )
        }));
    let generics = model
        .chains
        .iter()
        .flat_map(|c| c.steps.iter())
        .flat_map(|s| s.generics.iter().map(|a| a.span));
    types
        .flat_map(|t| t.maps.values().filter_map(|m| m.span))
        .chain(generics)
        .filter(|sp| within(*sp))
        .min_by_key(|sp| sp.end - sp.start)
}

/// Whether `span` lies within the call of `step`: its method name or one of its arguments.
pub fn in_call(step: &Step, span: Span) -> bool {
    let within = |outer: Span| outer.start <= span.start && span.end <= outer.end;
    within(step.span)
        || step.generics.iter().any(|a| within(a.span))
        || step.args.iter().any(|a| within(a.span))
}

/// The edit that pads a written mapping argument to `n` positions (see
/// [`crate::mapping::edit::pad`]): an `m![...]` is padded where it stands; a mapping alias
/// (`Slice`, `layouts::Slice`) is replaced at this use by its padded mapping, so no other use
/// of the alias changes (the engine offers editing the alias's definition as a second fix).
/// `None` for a mapping written inside a tensor type alias, which this use cannot edit.
pub fn pad_edit(scope: &Scope, arg: &Arg, n: u64) -> Option<crate::diagnostic::Edit> {
    crate::mapping::edit::pad(&written_mapping(scope, arg)?, arg.span, n)
}

/// A written mapping argument as the `m![...]` a fix rewrites at this use: the argument itself,
/// or the mapping a mapping alias (`Slice`, `layouts::Slice`) stands for, so that the rewritten
/// mapping replaces the alias at this use only (the engine offers editing the alias's
/// definition as a second fix). `None` for a mapping written inside a tensor type alias, which
/// this use cannot edit.
pub fn written_mapping(scope: &Scope, arg: &Arg) -> Option<String> {
    if arg.in_tensor_alias {
        return None;
    }
    let text = arg.text.trim();
    if text.starts_with("m![") {
        return Some(text.to_string());
    }
    let layout = match scope.aliases.get(text) {
        Some(alias) => crate::mapping::lower(alias.body.as_ref()?, scope, &mut Vec::new())?,
        // A generic alias given its parameters (`Lanes<4>`): the mapping it stands for.
        None => build::generic_alias_layout(text, scope)?.as_ref().clone(),
    };
    Some(format!("m![{}]", layout.to_expr()))
}
