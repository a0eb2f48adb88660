//! The builder's state: the values it evaluates expressions to ([`Val`]), the constructs it does
//! not follow, and [`Builder`], its knowledge of one function body.

use super::env::{Env, FnSig, tensor_type, unwrapped};
use super::reading::span_of;
use crate::diagnostic::Span;
use crate::mapping::Scope;
use crate::model::methods::Engine;
use crate::model::problem::Problem;
use crate::model::types::{Slot, TensorTy, Tu};
use crate::model::value;
use crate::model::{FnModel, Step};
use ra_ap_syntax::ast;
use ra_ap_syntax::ast::HasGenericArgs;
use std::collections::HashMap;

/// A DMA context: `ctx.pdma` (PCIe, host <-> HBM) or `ctx.tdma` (the Tensor DMA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dma {
    Pcie,
    Tensor,
}

impl Dma {
    /// The engine as the evaluator's value (`Dma::Tensor`), what a call binds a generic
    /// `DmaContext<DMA>` parameter's `DMA` to.
    pub(super) fn value(self) -> crate::model::value::Value {
        let name = match self {
            Dma::Pcie => "Pcie",
            Dma::Tensor => "Tensor",
        };
        crate::model::value::Value::Variant {
            path: format!("Dma::{name}"),
            fields: crate::model::value::Fields::Unit,
        }
    }

    /// The engine a value names (`Dma::Tensor`).
    pub(super) fn of_value(v: &crate::model::value::Value) -> Option<Dma> {
        match v {
            crate::model::value::Value::Variant { path, .. } if path.ends_with("Dma::Tensor") => {
                Some(Dma::Tensor)
            }
            crate::model::value::Value::Variant { path, .. } if path.ends_with("Dma::Pcie") => {
                Some(Dma::Pcie)
            }
            _ => None,
        }
    }
}

/// A value during evaluation.
#[derive(Clone, Debug)]
pub(super) enum Val {
    Tensor {
        ty: TensorTy,
        tu: Option<Tu>,
        /// Tensor Unit engines this stream went through, in order.
        engines: Vec<Engine>,
    },
    TuCtx(Tu),
    Dma(Dma),
    /// `(a, b)`, or what a helper returning a tuple gives.
    Tuple(Vec<Val>),
    /// Values of one type: a slice, an array or a `Vec` of tensors (or of tuples holding
    /// them); `enumerated`: paired with their index by `.enumerate()`.
    Many {
        elem: Box<Val>,
        enumerated: bool,
    },
    /// A closure, with the value its body gives.
    Closure(Box<Val>),
    /// A struct literal's fields.
    Struct(Vec<(String, Val)>),
    /// What a construct the model does not follow gives: it may be a tensor. Used as one, it
    /// is reported once at the construct (VL-009).
    Lost(Construct),
    /// An expression that never gives a value (`todo!()`, `panic!(..)`, `return`): a type
    /// written for it is not a tensor that exists.
    Never,
    Unknown,
}

/// The runs of a closure that builds an array element by element: its body, and for each
/// element what the run gives with the loop iteration it is named by.
#[derive(Clone)]
pub(super) struct ClosureRuns {
    pub(super) body: ast::Expr,
    pub(super) runs: Vec<Run>,
}

/// One run of a closure that builds an array element: what it gives, the loop iteration it is
/// named by, and the address it places its tensor at by hand (`from_addr(slot(q))`), when it
/// does.
#[derive(Clone)]
pub(super) struct Run {
    pub(super) val: Val,
    pub(super) iteration: Option<u32>,
    pub(super) placed: Option<u64>,
}

impl Val {
    /// An array of tensors of one type.
    pub(super) fn many(ty: TensorTy) -> Val {
        Val::Many {
            elem: Box::new(Val::Tensor {
                ty,
                tu: None,
                engines: Vec::new(),
            }),
            enumerated: false,
        }
    }

    /// Whether it is a tensor, or holds one (an array, a tuple or a struct of them).
    pub(super) fn holds_tensor(&self) -> bool {
        match self {
            Val::Tensor { .. } => true,
            Val::Many { elem, .. } => elem.holds_tensor(),
            Val::Tuple(items) => items.iter().any(Val::holds_tensor),
            Val::Struct(fields) => fields.iter().any(|(_, v)| v.holds_tensor()),
            _ => false,
        }
    }
}

/// A construct whose value the model does not follow (a closure parameter, a macro, a field,
/// an index, a destructuring, an unknown function's result).
#[derive(Clone, Debug)]
pub(super) struct Construct {
    pub(super) span: Span,
    /// What it is, for the message: "the field `self.weights`".
    pub(super) what: String,
}

impl Construct {
    pub(super) fn new(node: &ra_ap_syntax::SyntaxNode, what: impl Into<String>) -> Construct {
        Construct {
            span: span_of(node.text_range()),
            what: what.into(),
        }
    }
}

/// Type-level knowledge for one function body.
pub struct Builder<'a> {
    pub(super) env: &'a Env,
    pub(super) scope: Scope,
    pub(super) vars: HashMap<String, Val>,
    /// Chains are values: for a variable holding a Tensor Unit stream in mid-pass, the ends of
    /// the chains that made it (chain index, steps so far). Continuing the variable extends
    /// those chains, so a pass split over `let` bindings, blocks or `if`/`match` arms is one
    /// chain, as if written in one expression.
    pub(super) ends: HashMap<String, Vec<(usize, usize)>>,
    /// The chain ends of the variable the expression being evaluated starts from.
    pub(super) root: Option<Vec<(usize, usize)>>,
    /// The chain ends of the value the last [`Builder::top`] produced.
    pub(super) last_ends: Vec<(usize, usize)>,
    /// The type expected of the helper call about to be evaluated (`let q: T = f(x);`): the
    /// generics its turbofish leaves out are read from it, as rustc infers them.
    pub(super) call_expected: Option<TensorTy>,
    /// The tensor type a `let` annotation gave each variable (`let mut best: Option<BestDm> =
    /// None;`): what an assignment to it later holds (`best = Some(..)`).
    pub(super) declared: HashMap<String, TensorTy>,
    /// The types `let`s gave variables a method of the crate may be called on (`let plan =
    /// GemvPlan::<4>;`), see [`Builder::type_let`].
    pub(super) receiver_types: HashMap<String, super::receivers::ReceiverTy>,
    /// The function's type parameters a call gave a type of the crate (`Rt = SigmoidRouter`).
    pub(super) type_args: HashMap<String, crate::model::TypeArg>,
    /// The traits each type parameter is bounded by (`Rt: Router`), by name.
    pub(super) type_bounds: HashMap<String, Vec<String>>,
    /// The constants in scope: the module's `const` items and the immutable `let` bindings of
    /// constant expressions (shadowing and block scoping as in Rust).
    pub(super) consts: HashMap<String, u64>,
    /// The values the function's names hold at compile time, for value arguments: `let`
    /// bindings (known or not, with the reason) and the parameters (unknown: each call gives
    /// its own), shadowed and scoped as in Rust.
    pub(super) values: HashMap<String, value::Eval>,
    pub(super) model: FnModel,
    pub(super) ret: Option<TensorTy>,
    /// The tensor types a tuple type gives the elements of the tuple expression it types
    /// (the function's tail under `-> (Tile, Tile)`, a `let (a, b): (A, B) = (..)`), by the
    /// expression's span: each element's chain writes its type there.
    pub(super) tuple_types: HashMap<Span, Vec<Option<TensorTy>>>,
    /// Constructs already reported as not analysed (VL-009), once each.
    pub(super) lost_reported: std::collections::HashSet<Span>,
    /// The loop iteration being evaluated (an index into the model's `iterations`).
    pub(super) iteration: Option<u32>,
    /// How many more loop-body evaluations the function's budget allows.
    pub(super) iterations_left: u32,
    /// The `let mut` integers not assigned since their `let`, with their first value: the
    /// counters a `while` loop may step (see [`Builder::counted_while`]).
    pub(super) counters: HashMap<String, u64>,
    /// The local arrays of tensors, by the variable bound, with the names their elements are
    /// read by: the tensors' own (`let srcs = [mean, var];`), or `tiles[0]`, `tiles[1]` for an
    /// array of what calls give (`let tiles = [load(ctx, 0), load(ctx, 1)];`). A loop over one
    /// (`srcs.iter().enumerate()`) is unrolled element by element, as over the array written
    /// in place, and `tiles[k]` with `k` known is its element.
    pub(super) tensor_arrays: HashMap<String, Vec<String>>,
    /// The arrays a closure builds, run once per element (`GATES.map(|g| gate(ctx, g))`,
    /// `array::from_fn(..)`), by the expression that builds them: what each run gives, so
    /// that `let [r, z] = ..` binds each name to its own run (see [`ClosureRuns`]).
    pub(super) closure_runs: HashMap<Span, ClosureRuns>,
    /// Once a `let` binds a closure (`let slot = |k: usize| BASE + k * STRIDE;`): the crate's
    /// value functions with the function's closures beside them, which the evaluator runs
    /// where they are called (`slot(3)`). Built once, when the first closure is bound.
    pub(super) with_closures: Option<HashMap<String, crate::model::consts::ConstFn>>,
    /// The function's parameters typed `Context` (`ctx: &mut Context`).
    pub(super) contexts: std::collections::HashSet<String>,
    /// What the helpers' traces give for the function's calls (see [`super::results`]).
    pub(super) results: crate::model::CallResults,
    /// The iteration being evaluated has reached a `continue` its values take: the rest of
    /// its body is not traced.
    pub(super) skipping: bool,
    /// The `let mut` variables whose assignments the model follows (none is in a loop or a
    /// closure, see [`super::reading::assigned_in_straight_code`]).
    pub(super) followed: std::collections::HashSet<String>,
    /// How many arms of an `if` or a `match` the trace may or may not take are being
    /// evaluated: an assignment there leaves its variable unknown.
    pub(super) undecided: u32,
    /// The variables assigned so far, in order: a block keeps what it assigned to the
    /// variables around it (see [`Builder::leave_block`]).
    pub(super) assigned: Vec<String>,
    /// The variables the calls of `&mut self` methods of the statement being traced change
    /// (`arena.place(bytes)`), each with its value after the call: the statement's other
    /// expressions read the value before, and the next statement the value after (see
    /// [`Builder::note_changing_call`]).
    pub(super) changed_by_calls: Vec<(String, crate::model::value::Eval)>,
    /// Whether a method of the crate takes `&mut self`: most crates have none, and then no
    /// call is looked at for it.
    pub(super) mutating: bool,
    /// The parameters a caller gives a value that varies while the kernel runs (a helper
    /// traced from a furiosa-opt-std kernel): an immediate read from one does not fold, and a
    /// helper given one passes that on.
    pub(super) run_time_params: HashMap<String, crate::model::refusals::RunTime>,
}

/// How many loop-body evaluations one function's model makes at most, over all its loops (a
/// loop of more iterations than are left is summarised: its first and last iterations are
/// evaluated, and the others reported as not checked).
pub const MAX_ITERATIONS: u32 = 64;

/// An array of values: values of one type (tensors of one kind, tuples of them) make an array
/// of them (what the elements disagree on is unknown); otherwise unknown, or not followed if an
/// element is not.
pub(super) fn array_of(vals: Vec<Val>) -> Val {
    let mut it = vals.into_iter();
    let Some(first) = it.next() else {
        return Val::Unknown;
    };
    let mut acc = first;
    for v in it {
        match join_elem(acc, v) {
            Some(j) => acc = j,
            None => return Val::Unknown,
        }
    }
    match acc {
        Val::Unknown => Val::Unknown,
        Val::Lost(c) => Val::Lost(c),
        elem => Val::Many {
            elem: Box::new(elem),
            enumerated: false,
        },
    }
}

/// Two elements of one array as one type.
pub(super) fn join_elem(a: Val, b: Val) -> Option<Val> {
    match (a, b) {
        (Val::Lost(c), _) | (_, Val::Lost(c)) => Some(Val::Lost(c)),
        (Val::Tensor { ty: mut j, .. }, Val::Tensor { ty: t, .. }) if j.kind == t.kind => {
            if j.dtype != t.dtype {
                j.dtype = None;
            }
            j.maps.retain(|s, m| {
                t.maps
                    .get(s)
                    .is_some_and(|o| o.layout.is_some() && o.layout == m.layout)
            });
            Some(Val::Tensor {
                ty: j,
                tu: None,
                engines: Vec::new(),
            })
        }
        (Val::Tuple(x), Val::Tuple(y)) if x.len() == y.len() => x
            .into_iter()
            .zip(y)
            .map(|(a, b)| join_elem(a, b))
            .collect::<Option<Vec<Val>>>()
            .map(Val::Tuple),
        (Val::Unknown, Val::Unknown) => Some(Val::Unknown),
        _ => None,
    }
}

/// Copies what `want` knows and `ty` does not.
pub(super) fn fill(ty: &mut TensorTy, want: &TensorTy) {
    if ty.dtype.is_none() {
        ty.dtype = want.dtype;
    }
    for (s, v) in &want.maps {
        ty.maps.insert_if_absent(*s, || v.clone());
    }
}

pub(super) fn kept_through_stream(steps: &[Step], slot: Slot) -> bool {
    steps
        .iter()
        .any(|s| s.engine.is_some_and(|e| e != Engine::Memory))
        && steps
            .iter()
            .all(|s| s.keep.contains(&slot) || s.engine == Some(Engine::Begin))
}

/// What a call of a helper or method with this signature gives; `lost` names the call for an
/// opaque result.
pub(super) fn sig_value(sig: FnSig, lost: Construct) -> Val {
    let tensor = |ty| Val::Tensor {
        ty,
        tu: None,
        engines: Vec::new(),
    };
    match sig.ret {
        Some(ty) => tensor(ty),
        None if !sig.fields.is_empty() => struct_of(&sig.fields),
        None if !sig.rets.is_empty() => Val::Tuple(
            sig.rets
                .into_iter()
                .map(|t| t.map_or(Val::Unknown, tensor))
                .collect(),
        ),
        None if sig.opaque => Val::Lost(lost),
        None => Val::Unknown,
    }
}

/// A parameter whose type is a struct of the crate that holds tensors (`inputs: Inputs<'_>`,
/// or a reference to one): its fields, the tensors as tensors.
pub(super) fn struct_param(ty: &ast::Type, env: &Env) -> Option<Val> {
    let ast::Type::PathType(p) = unwrapped(ty) else {
        return None;
    };
    let fields = env.struct_fields(&super::env::struct_key(&p.path()?)?)?;
    Some(struct_of(fields))
}

/// A value of a struct of tensors: each field a tensor of its declared type.
pub(super) fn struct_of(fields: &[(String, Option<TensorTy>)]) -> Val {
    let fields = fields
        .iter()
        .map(|(name, ty)| {
            let val = ty.clone().map_or(Val::Unknown, |ty| Val::Tensor {
                ty,
                tu: None,
                engines: Vec::new(),
            });
            (name.clone(), val)
        })
        .collect();
    Val::Struct(fields)
}

/// `&[T]`, `[T; N]`, `Vec<T>` of a tensor type `T`, or of `Option<T>` (filled in a loop,
/// then unwrapped): the element's type.
pub(super) fn many_type(
    ty: &ast::Type,
    env: &Env,
    scope: &Scope,
    diags: &mut Vec<Problem>,
) -> Option<TensorTy> {
    let elem = match ty {
        ast::Type::RefType(r) => return many_type(&r.ty()?, env, scope, diags),
        ast::Type::SliceType(s) => s.ty()?,
        ast::Type::ArrayType(a) => a.ty()?,
        ast::Type::PathType(p) => only_type_arg(p, "Vec")?,
        _ => return None,
    };
    let elem = match &elem {
        ast::Type::PathType(p) => only_type_arg(p, "Option").unwrap_or(elem),
        _ => elem,
    };
    tensor_type(&elem, env, scope, diags)
}

/// `T` of `Vec<T>` when `p` is a `Vec` (`wrapper`) of it.
fn only_type_arg(p: &ast::PathType, wrapper: &str) -> Option<ast::Type> {
    let seg = p.path()?.segment()?;
    if seg.name_ref()?.text() != wrapper {
        return None;
    }
    seg.generic_arg_list()?
        .generic_args()
        .find_map(|a| match a {
            ast::GenericArg::TypeArg(t) => t.ty(),
            _ => None,
        })
}
