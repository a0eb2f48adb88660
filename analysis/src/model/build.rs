//! Builds a [`FnModel`] from one function's syntax: types flow forward along each chain from
//! its root and backward from `let` annotations, parameter and return types, as rustc would.
//! The pipeline state machine is checked on the way: what goes wrong is recorded as a
//! [`Problem`] where the pipeline state is known.

use super::consts::{self, path_key};
use super::methods::{Engine, Method, Recv};
use super::problem::{Kernel, NotFollowed, Primitive, Problem, Unknown};
use super::types::{Dtype, Kind, MapVal, Slot, TensorTy, Tu};
use super::value;
use super::{Adapter, Arg, Chain, FnKind, FnModel, Iteration, Origin, Step, TensorVar, written};
use crate::diagnostic::Span;
use crate::library::Generation;
use crate::mapping::{self, Layout, Scope, parse};
use crate::syntax::snippet;
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs, HasLoopBody, RangeItem};
use ra_ap_syntax::{AstNode, TextRange, ast};
use std::collections::HashMap;
use std::sync::Arc;

/// What a function can see of its module: mapping names, constants and helper signatures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env {
    pub scope: Scope,
    /// The environment this one adds to (a module's, under a function's local declarations):
    /// its types, signatures and aliases are read through it, not copied (fifty open files
    /// of a hundred kernels each held a copy of their module's signatures per function).
    /// Read the four layered tables below through [`Env::is_local_type`],
    /// [`Env::tensor_alias`], [`Env::fn_sig`] and [`Env::method`].
    pub parent: Option<std::sync::Arc<Env>>,
    /// Types the file defines itself (they shadow the prelude: the Sequencer page's own
    /// `BufTensor` and 4-parameter `StreamTensor`).
    pub local_types: std::collections::HashSet<String>,
    /// Every const in scope (copied from the parent: a number each).
    pub consts: HashMap<String, u64>,
    pub fns: HashMap<String, LazySig>,
    /// Whole tensor type aliases (`type Weights = TrfTensor<...>;`): the type each names.
    pub tensor_aliases: HashMap<String, TensorTy>,
    /// `const fn`s whose body is one expression (addresses computed by calls of them); every
    /// one in scope, copied from the parent.
    pub const_fns: HashMap<String, consts::ConstFn>,
    /// Methods of the crate's `impl` blocks, by name (a call on a value the model cannot type
    /// takes the signature of the method of that name).
    pub methods: HashMap<String, LazySig>,
    /// `const` items whose value is not an integer (`const CFG: SwitchConfig = ..;`), by name
    /// and by the paths bound to them; read through [`Env::value`].
    pub values: HashMap<String, super::value::Value>,
    /// Structs of the crate that hold tensors (`struct Inputs<'a> { a: &'a HbmTensor<..> }`):
    /// each named field with its tensor type (`None` for a plain field), by struct name; read
    /// through [`Env::struct_fields`].
    pub structs: HashMap<String, Vec<(String, Option<TensorTy>)>>,
    /// Library items imported under another name (`use furiosa_visa_std::prelude::DmTensor as
    /// Dm;`): the library's name of each, by the name it has here.
    pub library_renames: HashMap<String, String>,
}

/// A helper's signature, built from its syntax when a call first asks for it, in the
/// environment that declares it: most functions of a module are kernels nobody calls, and a
/// signature's tensor types are the costly part of an environment.
#[derive(Clone, Debug)]
pub struct LazySig {
    syntax: rowan::GreenNode,
    sig: std::sync::OnceLock<FnSig>,
}

impl LazySig {
    /// The signature of the function `f` (only its signature is read).
    pub fn of(f: &ast::Fn) -> LazySig {
        LazySig {
            syntax: f.syntax().green().to_owned(),
            sig: std::sync::OnceLock::new(),
        }
    }

    /// The signature, as `env` (the environment that holds it) types it.
    fn get(&self, env: &Env) -> &FnSig {
        self.sig.get_or_init(|| {
            let root = ra_ap_syntax::SyntaxNode::new_root(self.syntax.clone());
            ast::Fn::cast(root).map_or_else(FnSig::default, |f| signature(&f, env))
        })
    }
}

impl PartialEq for LazySig {
    fn eq(&self, other: &LazySig) -> bool {
        self.syntax == other.syntax
    }
}

impl Eq for LazySig {}

impl Env {
    /// An environment over `parent`, with `scope` (the parent's scope and what is added).
    pub fn child_of(parent: std::sync::Arc<Env>, scope: Scope) -> Env {
        Env {
            scope,
            consts: parent.consts.clone(),
            const_fns: parent.const_fns.clone(),
            parent: Some(parent),
            ..Env::default()
        }
    }

    /// The library's name of an item imported under another name here.
    pub fn library_name(&self, name: &str) -> Option<&str> {
        match self.library_renames.get(name) {
            Some(n) => Some(n.as_str()),
            None => self.parent.as_ref()?.library_name(name),
        }
    }

    /// Whether the crate defines a type of this name (or path).
    pub fn is_local_type(&self, name: &str) -> bool {
        self.local_types.contains(name)
            || self.parent.as_ref().is_some_and(|p| p.is_local_type(name))
    }

    /// The tensor type a whole-type alias names.
    pub fn tensor_alias(&self, name: &str) -> Option<&TensorTy> {
        self.tensor_aliases
            .get(name)
            .or_else(|| self.parent.as_ref()?.tensor_alias(name))
    }

    /// A helper function's signature.
    pub fn fn_sig(&self, name: &str) -> Option<&FnSig> {
        match self.fns.get(name) {
            Some(sig) => Some(sig.get(self)),
            None => self.parent.as_ref()?.fn_sig(name),
        }
    }

    /// The signature of the crate's method of this name.
    pub fn method(&self, name: &str) -> Option<&FnSig> {
        match self.methods.get(name) {
            Some(sig) => Some(sig.get(self)),
            None => self.parent.as_ref()?.method(name),
        }
    }

    /// The value of a `const` item that is not an integer.
    pub fn value(&self, name: &str) -> Option<&super::value::Value> {
        self.values
            .get(name)
            .or_else(|| self.parent.as_ref()?.value(name))
    }

    /// The fields of a struct of the crate that holds tensors.
    pub fn struct_fields(&self, name: &str) -> Option<&[(String, Option<TensorTy>)]> {
        match self.structs.get(name) {
            Some(fields) => Some(fields),
            None => self.parent.as_ref()?.struct_fields(name),
        }
    }

    /// Declares a struct, enum or trait the crate defines (`node`, named `name`). A struct
    /// whose named fields are tensors and plain values, with no generics but lifetimes, also
    /// keeps its fields' tensor types: a parameter of that type is its tensors field by field.
    pub fn declare_type(&mut self, node: &ra_ap_syntax::SyntaxNode, name: String) {
        if let Some(fields) = ast::Struct::cast(node.clone()).and_then(|s| tensor_fields(&s, self))
        {
            self.structs.insert(name.clone(), fields);
        }
        self.local_types.insert(name);
    }

    /// A helper's signature as declared, unbuilt (to declare it under another name too).
    pub fn lazy_sig(&self, name: &str) -> Option<(&LazySig, &Env)> {
        match self.fns.get(name) {
            Some(sig) => Some((sig, self)),
            None => self.parent.as_ref()?.lazy_sig(name),
        }
    }
}

/// A helper function's signature, for chains that cross function boundaries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FnSig {
    pub params: Vec<Option<TensorTy>>,
    /// The tensor it returns (also through `Option`/`Result`, which `?` and `unwrap` see
    /// through).
    pub ret: Option<TensorTy>,
    /// A tuple it returns, element by element (`(DmTensor<..>, HbmTensor<..>)`).
    pub rets: Vec<Option<TensorTy>>,
    /// It returns something visa-lint cannot type that may hold a tensor (a struct, a
    /// generic, `impl Trait`): its result is not followed (VL-009 where it is used as one).
    pub opaque: bool,
}

fn span_of(r: TextRange) -> Span {
    Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize)
}

/// A DMA context: `ctx.pdma` (PCIe, host <-> HBM) or `ctx.tdma` (the Tensor DMA).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dma {
    Pcie,
    Tensor,
}

/// A value during evaluation.
#[derive(Clone, Debug)]
enum Val {
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

impl Val {
    /// An array of tensors of one type.
    fn many(ty: TensorTy) -> Val {
        Val::Many {
            elem: Box::new(Val::Tensor {
                ty,
                tu: None,
                engines: Vec::new(),
            }),
            enumerated: false,
        }
    }
}

/// A construct whose value the model does not follow (a closure parameter, a macro, a field,
/// an index, a destructuring, an unknown function's result).
#[derive(Clone, Debug)]
struct Construct {
    span: Span,
    /// What it is, for the message: "the field `self.weights`".
    what: String,
}

impl Construct {
    fn new(node: &ra_ap_syntax::SyntaxNode, what: impl Into<String>) -> Construct {
        Construct {
            span: span_of(node.text_range()),
            what: what.into(),
        }
    }
}

/// Type-level knowledge for one function body.
pub struct Builder<'a> {
    env: &'a Env,
    scope: Scope,
    vars: HashMap<String, Val>,
    /// Chains are values: for a variable holding a Tensor Unit stream in mid-pass, the ends of
    /// the chains that made it (chain index, steps so far). Continuing the variable extends
    /// those chains, so a pass split over `let` bindings, blocks or `if`/`match` arms is one
    /// chain, as if written in one expression.
    ends: HashMap<String, Vec<(usize, usize)>>,
    /// The chain ends of the variable the expression being evaluated starts from.
    root: Option<Vec<(usize, usize)>>,
    /// The chain ends of the value the last [`Builder::top`] produced.
    last_ends: Vec<(usize, usize)>,
    /// The constants in scope: the module's `const` items and the immutable `let` bindings of
    /// constant expressions (shadowing and block scoping as in Rust).
    consts: HashMap<String, u64>,
    /// The values the function's names hold at compile time, for value arguments: `let`
    /// bindings (known or not, with the reason) and the parameters (unknown: each call gives
    /// its own), shadowed and scoped as in Rust.
    values: HashMap<String, value::Eval>,
    model: FnModel,
    ret: Option<TensorTy>,
    /// Constructs already reported as not analysed (VL-009), once each.
    lost_reported: std::collections::HashSet<Span>,
    /// The loop iteration being evaluated (an index into the model's `iterations`).
    iteration: Option<u32>,
    /// How many more loop-body evaluations the function's budget allows.
    iterations_left: u32,
    /// The `let mut` integers not assigned since their `let`, with their first value: the
    /// counters a `while` loop may step (see [`Builder::counted_while`]).
    counters: HashMap<String, u64>,
}

/// How many loop-body evaluations one function's model makes at most, over all its loops (a
/// loop of more iterations than are left is summarised: its first and last iterations are
/// evaluated, and the others reported as not checked).
pub const MAX_ITERATIONS: u32 = 64;

/// Parses a type; tensor types become [`TensorTy`] (unknown mappings stay unset). Types the
/// file defines itself are not the prelude's.
pub fn tensor_type(
    ty: &ast::Type,
    env: &Env,
    scope: &Scope,
    problems: &mut Vec<Problem>,
) -> Option<TensorTy> {
    match ty {
        ast::Type::RefType(r) => tensor_type(&r.ty()?, env, scope, problems),
        ast::Type::ParenType(p) => tensor_type(&p.ty()?, env, scope, problems),
        ast::Type::PathType(p) => {
            let path = p.path()?;
            let seg = path.segment()?;
            let name = seg.name_ref()?.text().to_string();
            // The name as the environment binds it: plain or by its qualified path.
            let key = path_key(&path).unwrap_or_else(|| name.clone());
            if env.is_local_type(&key) {
                return None;
            }
            if let Some(t) = env.tensor_alias(&key) {
                // The alias's mappings are written where it is used.
                let mut t = t.clone();
                let at = span_of(seg.syntax().text_range());
                for m in t.maps.values_mut() {
                    m.span = Some(at);
                    m.in_tensor_alias = true;
                }
                return Some(t);
            }
            let library = env.library_name(&key).unwrap_or(&name);
            let Some(kind) = Kind::from_name(library) else {
                if name.ends_with("Tensor") {
                    problems.push(
                        Unknown {
                            at: span_of(seg.syntax().text_range()),
                            primitive: Primitive::Type(name),
                        }
                        .into(),
                    );
                }
                return None;
            };
            let mut t = TensorTy::new(kind);
            if let Some(args) = seg.generic_arg_list() {
                apply_generics(&mut t, kind.params(), &args, scope);
            }
            Some(t)
        }
        _ => None,
    }
}

/// Fills `t`'s slots from a generic argument list, skipping lifetimes.
fn apply_generics(t: &mut TensorTy, slots: &[Slot], args: &ast::GenericArgList, scope: &Scope) {
    let args: Vec<ast::GenericArg> = args
        .generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .collect();
    for (slot, arg) in slots.iter().zip(args.iter()) {
        set_slot(t, *slot, arg, scope);
    }
}

fn set_slot(t: &mut TensorTy, slot: Slot, arg: &ast::GenericArg, scope: &Scope) {
    match slot {
        Slot::Other => {}
        Slot::D => {
            if let Some(d) = dtype_of(arg) {
                t.dtype = Some(d);
            }
        }
        _ => {
            if let Some(m) = map_of(arg, scope) {
                t.maps.insert(slot, m);
            }
        }
    }
}

fn dtype_of(arg: &ast::GenericArg) -> Option<Dtype> {
    let ast::GenericArg::TypeArg(ta) = arg else {
        return None;
    };
    let ast::Type::PathType(p) = ta.ty()? else {
        return None;
    };
    Dtype::from_name(p.path()?.segment()?.name_ref()?.text())
}

/// A mapping argument: `m![...]`, an alias name or `{ Alias }`; `_` and generics are unknown.
fn map_of(arg: &ast::GenericArg, scope: &Scope) -> Option<MapVal> {
    match arg {
        ast::GenericArg::TypeArg(ta) => match ta.ty()? {
            ast::Type::MacroType(mt) => {
                let call = mt.macro_call()?;
                let text = crate::syntax::node_text(call.syntax());
                let tt = crate::syntax::node_text(call.token_tree()?.syntax());
                let mut body = tt.get(1..).unwrap_or("");
                if body.ends_with(']') || body.ends_with(')') || body.ends_with('}') {
                    body = &body[..body.len() - 1];
                }
                let layout = parse::parse_mapping(body)
                    .ok()
                    .and_then(|e| mapping::lower(&e, scope, &mut Vec::new()));
                Some(MapVal {
                    text,
                    layout: layout.map(Arc::new),
                    span: Some(span_of(call.syntax().text_range())),
                    in_tensor_alias: false,
                })
            }
            ast::Type::PathType(p) => {
                let at = span_of(p.syntax().text_range());
                alias_val(&path_key(&p.path()?)?, scope, at)
            }
            _ => None,
        },
        ast::GenericArg::ConstArg(c) => {
            // `{ Alias }`
            let text = crate::syntax::compact_text(c.syntax());
            let inner = text.trim_start_matches('{').trim_end_matches('}');
            alias_val(inner, scope, span_of(c.syntax().text_range()))
        }
        _ => None,
    }
}

/// An alias used as a mapping argument; `at` is the use (`Slice` or `{ Slice }`).
fn alias_val(name: &str, scope: &Scope, at: Span) -> Option<MapVal> {
    scope.aliases.get(name)?;
    let e = parse::parse_mapping(&format!("{{ {name} }}")).ok()?;
    let layout = mapping::lower(&e, scope, &mut Vec::new());
    Some(MapVal {
        text: name.to_string(),
        layout: layout.map(Arc::new),
        span: Some(at),
        in_tensor_alias: false,
    })
}

/// The named fields of a struct that holds tensors, with their tensor types (their mappings
/// are written in the struct, not where it is used, so they carry no span); `None` when the
/// struct has generics other than lifetimes, a field that is neither a tensor nor plain, or
/// no tensor at all.
fn tensor_fields(s: &ast::Struct, env: &Env) -> Option<Vec<(String, Option<TensorTy>)>> {
    let generic = ast::HasGenericParams::generic_param_list(s).is_some_and(|g| {
        g.generic_params()
            .any(|p| !matches!(p, ast::GenericParam::LifetimeParam(_)))
    });
    let ast::FieldList::RecordFieldList(list) = s.field_list()? else {
        return None;
    };
    if generic {
        return None;
    }
    let mut fields = Vec::new();
    for f in list.fields() {
        let ty = f.ty()?;
        let tensor = tensor_type(&ty, env, &env.scope, &mut Vec::new()).map(|mut t| {
            for m in t.maps.values_mut() {
                m.span = None;
            }
            t
        });
        if tensor.is_none() && !plain(&ty) {
            return None;
        }
        fields.push((ast::HasName::name(&f)?.text().to_string(), tensor));
    }
    fields.iter().any(|(_, t)| t.is_some()).then_some(fields)
}

/// A parameter whose type is a struct of the crate that holds tensors (`inputs: Inputs<'_>`,
/// or a reference to one): its fields, the tensors as tensors.
fn struct_param(ty: &ast::Type, env: &Env) -> Option<Val> {
    let ast::Type::PathType(p) = unwrapped(ty) else {
        return None;
    };
    let path = p.path()?;
    let key = path_key(&path).or_else(|| Some(path.segment()?.name_ref()?.text().to_string()))?;
    let fields = env.struct_fields(&key)?;
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
    Some(Val::Struct(fields))
}

/// `#[device(chip = N)]` on a function.
fn device_attr(f: &ast::Fn) -> Option<(Option<u64>, Option<u64>)> {
    for attr in ast::HasAttrs::attrs(f) {
        if attr.simple_name().as_deref() == Some("device") {
            let tt = attr
                .as_simple_call()
                .map(|(_, t)| crate::syntax::node_text(t.syntax()))
                .unwrap_or_default();
            // `key = N` among the attribute's comma-separated entries.
            let int_of = |key: &str| {
                tt.trim_matches(|c| c == '(' || c == ')')
                    .split(',')
                    .filter_map(|e| e.split_once('='))
                    .find(|(k, _)| k.trim() == key)
                    .and_then(|(_, v)| v.trim().parse().ok())
            };
            return Some((int_of("chip"), int_of("pe")));
        }
    }
    None
}

/// A helper's signature from its syntax. Its mappings are written in the helper, not in the
/// functions that call it, so they carry no span.
pub fn signature(f: &ast::Fn, env: &Env) -> FnSig {
    let unplaced = |mut t: TensorTy| {
        for m in t.maps.values_mut() {
            m.span = None;
        }
        t
    };
    let mut sig = FnSig::default();
    if let Some(pl) = f.param_list() {
        for p in pl.params() {
            sig.params.push(
                p.ty()
                    .and_then(|t| tensor_type(&t, env, &env.scope, &mut Vec::new()))
                    .map(unplaced),
            );
        }
    }
    let ret = f.ret_type().and_then(|r| r.ty()).map(|t| unwrapped(&t));
    sig.ret = ret
        .as_ref()
        .and_then(|t| tensor_type(t, env, &env.scope, &mut Vec::new()))
        .map(unplaced);
    if let Some(ast::Type::TupleType(t)) = &ret {
        sig.rets = t
            .fields()
            .map(|f| tensor_type(&f, env, &env.scope, &mut Vec::new()).map(unplaced))
            .collect();
    }
    sig.opaque =
        sig.ret.is_none() && sig.rets.is_empty() && ret.as_ref().is_some_and(|t| !plain(t));
    sig
}

/// `Option<T>`, `Result<T, E>`, `Box<T>` and references: `T` (`?`, `unwrap` and
/// dereferences see through them).
fn unwrapped(ty: &ast::Type) -> ast::Type {
    match ty {
        ast::Type::RefType(r) => r.ty().map_or_else(|| ty.clone(), |t| unwrapped(&t)),
        ast::Type::PathType(p) => {
            let Some(seg) = p.path().and_then(|p| p.segment()) else {
                return ty.clone();
            };
            let wrapper = seg.name_ref().is_some_and(|n| {
                matches!(n.text().to_string().as_str(), "Option" | "Result" | "Box")
            });
            let inner = seg.generic_arg_list().and_then(|g| {
                g.generic_args().find_map(|a| match a {
                    ast::GenericArg::TypeArg(t) => t.ty(),
                    _ => None,
                })
            });
            match inner {
                Some(t) if wrapper => unwrapped(&t),
                _ => ty.clone(),
            }
        }
        _ => ty.clone(),
    }
}

/// A type that cannot hold a tensor: a number, `bool`, `char`, a string, `()`, a reference
/// to one, or an array of them.
fn plain(ty: &ast::Type) -> bool {
    match ty {
        ast::Type::RefType(r) => r.ty().is_some_and(|t| plain(&t)),
        ast::Type::TupleType(t) => t.fields().all(|f| plain(&f)),
        ast::Type::ArrayType(a) => a.ty().is_some_and(|t| plain(&t)),
        ast::Type::SliceType(a) => a.ty().is_some_and(|t| plain(&t)),
        ast::Type::NeverType(_) => true,
        ast::Type::PathType(p) => p
            .path()
            .and_then(|p| p.segment())
            .and_then(|s| s.name_ref())
            .is_some_and(|n| {
                matches!(
                    n.text().to_string().as_str(),
                    "u8" | "u16"
                        | "u32"
                        | "u64"
                        | "u128"
                        | "usize"
                        | "i8"
                        | "i16"
                        | "i32"
                        | "i64"
                        | "i128"
                        | "isize"
                        | "f32"
                        | "f64"
                        | "bool"
                        | "char"
                        | "str"
                        | "String"
                )
            }),
        _ => false,
    }
}

/// `&[T]`, `[T; N]`, `Vec<T>` of a tensor type `T`: the element's type.
fn many_type(
    ty: &ast::Type,
    env: &Env,
    scope: &Scope,
    diags: &mut Vec<Problem>,
) -> Option<TensorTy> {
    match ty {
        ast::Type::RefType(r) => many_type(&r.ty()?, env, scope, diags),
        ast::Type::SliceType(s) => tensor_type(&s.ty()?, env, scope, diags),
        ast::Type::ArrayType(a) => tensor_type(&a.ty()?, env, scope, diags),
        ast::Type::PathType(p) => {
            let seg = p.path()?.segment()?;
            if seg.name_ref()?.text() != "Vec" {
                return None;
            }
            let inner = seg
                .generic_arg_list()?
                .generic_args()
                .find_map(|a| match a {
                    ast::GenericArg::TypeArg(t) => t.ty(),
                    _ => None,
                })?;
            tensor_type(&inner, env, scope, diags)
        }
        _ => None,
    }
}

/// Builds the model of one function. `scope` holds the module's axes and aliases plus the
/// function's own (and its generic parameters); `bound` holds what a call binds its
/// parameters to (nothing, when the function is checked on its own).
pub fn build_fn(
    f: &ast::Fn,
    env: &Env,
    scope: Scope,
    library: crate::library::Generation,
    bound: &super::Bound,
) -> FnModel {
    // Whole tensor type aliases declared in the body (`type Out = DmTensor<..>;`) are the
    // types they name there.
    let local: Vec<ast::TypeAlias> = f
        .body()
        .map(|b| {
            crate::syntax::nodes_of_kinds(b.syntax(), &[ra_ap_syntax::SyntaxKind::TYPE_ALIAS])
                .into_iter()
                .filter_map(ast::TypeAlias::cast)
                .filter(|a| {
                    a.syntax()
                        .ancestors()
                        .skip(1)
                        .find_map(ast::Fn::cast)
                        .is_some_and(|g| g.syntax() == f.syntax())
                })
                .collect()
        })
        .unwrap_or_default();
    let with_local;
    let env = if local.is_empty() {
        env
    } else {
        let mut e = env.clone();
        e.scope = scope.clone();
        for a in &local {
            if let (Some(n), Some(ty)) = (ast::HasName::name(a), a.ty())
                && let Some(mut t) = tensor_type(&ty, &e, &scope, &mut Vec::new())
            {
                for m in t.maps.values_mut() {
                    m.span = None;
                }
                e.tensor_aliases.insert(n.text().to_string(), t);
            }
        }
        with_local = e;
        &with_local
    };
    let name = ast::HasName::name(f)
        .map(|n| n.text().to_string())
        .unwrap_or_default();
    let name_span = ast::HasName::name(f).map_or(span_of(f.syntax().text_range()), |n| {
        span_of(n.syntax().text_range())
    });
    let kind = match device_attr(f) {
        Some((chips, pe)) => FnKind::Device { chips, pe },
        None if f.async_token().is_some() => FnKind::Host,
        None => FnKind::Plain,
    };
    let mut b = Builder {
        env,
        scope,
        vars: HashMap::new(),
        ends: HashMap::new(),
        root: None,
        last_ends: Vec::new(),
        consts: env.consts.clone(),
        values: HashMap::new(),
        model: FnModel {
            name,
            span: name_span,
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
        },
        ret: None,
        iteration: None,
        iterations_left: MAX_ITERATIONS,
        lost_reported: std::collections::HashSet::new(),
        counters: HashMap::new(),
    };
    if library == Generation::OptStd && matches!(b.model.kind, FnKind::Device { .. }) {
        let refused = super::refusals::refusals(f)
            .into_iter()
            .map(Problem::Refused);
        b.model.problems.extend(refused);
    }
    if library == Generation::OptStd {
        let defects = super::refusals::slot_defects(f)
            .into_iter()
            .map(Problem::Refused);
        b.model.problems.extend(defects);
    }
    b.bind_const_generics(f, &bound.generics);
    if let Some(pl) = f.param_list() {
        for (k, p) in pl.params().enumerate() {
            let Some(pat) = p.pat() else { continue };
            let Some(pname) = pat_name(&pat) else {
                continue;
            };
            match bound.params.get(k).cloned().flatten() {
                Some(v) => b.bind(&pname, v),
                None => {
                    let why = format!(
                        "`{pname}` is a parameter of `{}`: its body is checked on its own without its callers' values, and again at each call that gives it a known one",
                        b.model.name
                    );
                    b.values.insert(pname.clone(), Err(value::Unknown { why }));
                }
            }
            let ty = p
                .ty()
                .and_then(|t| tensor_type(&t, b.env, &b.scope, &mut b.model.problems));
            // Its generics as the call instantiates them.
            let ty =
                match (ty, bound.tensors.get(k).cloned().flatten()) {
                    (Some(declared), Some(at_call)) => {
                        Some(declared.instantiated_by(&at_call).unwrap_or(declared))
                    }
                    (Some(declared), None) => {
                        let generic = p.ty().map(|t| generic_in(f, &t)).unwrap_or_default();
                        b.model
                            .generic_tensors
                            .extend(generic.into_iter().map(|(generic, at)| {
                                super::GenericTensor {
                                    param: pname.clone(),
                                    generic,
                                    at,
                                }
                            }));
                        Some(declared)
                    }
                    (ty, _) => ty,
                };
            // A tuple of tensors (`inputs: (&HbmTensor<..>, &DmTensor<..>)`), field by field.
            if ty.is_none()
                && let Some(ast::Type::TupleType(tuple)) = p.ty()
                && tuple.fields().next().is_some()
            {
                let fields: Vec<Val> = tuple
                    .fields()
                    .map(
                        |f| match tensor_type(&f, b.env, &b.scope, &mut b.model.problems) {
                            Some(ty) => Val::Tensor {
                                ty,
                                tu: None,
                                engines: Vec::new(),
                            },
                            None => Val::Unknown,
                        },
                    )
                    .collect();
                if fields.iter().any(|v| matches!(v, Val::Tensor { .. })) {
                    b.vars.insert(pname, Val::Tuple(fields));
                    continue;
                }
            }
            // A struct of the crate holding tensors (`inputs: Inputs<'_>`), field by field.
            if ty.is_none()
                && let Some(fields) = p.ty().and_then(|t| struct_param(&t, b.env))
            {
                b.vars.insert(pname, fields);
                continue;
            }
            if ty.is_none()
                && let Some(many) = p
                    .ty()
                    .and_then(|t| many_type(&t, b.env, &b.scope, &mut b.model.problems))
            {
                b.vars.insert(pname, Val::many(many));
                continue;
            }
            if let Some(ty) = ty {
                b.model.tensors.push(TensorVar {
                    name: pname.clone(),
                    span: span_of(pat.syntax().text_range()),
                    origin: Origin::Param,
                    ty: ty.clone(),
                    context: None,
                    // Where the caller placed it, when the call says.
                    address: bound.addresses.get(k).copied().flatten(),
                    iteration: None,
                });
                if let Some(Some(pass)) = bound.streams.get(k) {
                    b.continue_callers_pass(&pname, pass);
                }
                b.vars.insert(
                    pname,
                    Val::Tensor {
                        ty,
                        tu: None,
                        engines: Vec::new(),
                    },
                );
            } else if p.ty().is_some_and(|t| !plain(&t)) {
                // A parameter of a type visa-lint cannot type (a generic, a struct): a tensor
                // in it is not followed.
                let what = format!("the parameter `{}`", snippet(p.syntax()));
                b.vars
                    .insert(pname, Val::Lost(Construct::new(p.syntax(), what)));
            }
        }
    }
    b.ret = f
        .ret_type()
        .and_then(|r| r.ty())
        .and_then(|t| tensor_type(&t, b.env, &b.scope, &mut b.model.problems));
    if let Some(body) = f.body() {
        let ret = b.ret.clone();
        b.block(&body, ret, None);
        if let Some(after) = &bound.continued {
            b.continue_returned(after);
        }
    }
    b.settle_continuations();
    if env.is_local_type("BufTensor") {
        let chains = buf_tensor_chains(f, &b.scope);
        b.model.chains.extend(chains);
    }
    b.model
}

/// The type parameters of `f` (not lifetimes or consts) that `ty` names, each with where
/// `f` declares it.
fn generic_in(f: &ast::Fn, ty: &ast::Type) -> Vec<(String, Span)> {
    let declared: Vec<(String, Span)> = ast::HasGenericParams::generic_param_list(f)
        .into_iter()
        .flat_map(|l| l.generic_params())
        .filter_map(|p| match p {
            ast::GenericParam::TypeParam(t) => {
                let name = ast::HasName::name(&t)?;
                Some((name.text().to_string(), span_of(name.syntax().text_range())))
            }
            _ => None,
        })
        .collect();
    if declared.is_empty() {
        return Vec::new();
    }
    let named: std::collections::HashSet<String> = ty
        .syntax()
        .descendants()
        .filter_map(ast::PathType::cast)
        .filter_map(|p| {
            let path = p.path()?;
            path.qualifier()
                .is_none()
                .then(|| Some(path.segment()?.name_ref()?.text().to_string()))?
        })
        .collect();
    declared
        .into_iter()
        .filter(|(n, _)| named.contains(n))
        .collect()
}

/// The Sequencer page's simplified interface (manual L1241-L1262): `buf.read()` and
/// `buf.write(stream)` on a file-local `BufTensor<D, Buf>`, recorded as steps `read`
/// (input: a `DmTensor` whose Element is `Buf`; output: a `StreamTensor` with Time/Packet from
/// the turbofish or the local `StreamTensor<'l, D, Time, Packet>` return type) and `write`
/// (input: the stream argument's type; output: the buffer). Used by the SEQ rules (issue 4).
fn buf_tensor_chains(f: &ast::Fn, scope: &Scope) -> Vec<Chain> {
    // `BufTensor<D, Buf>` -> (dtype, Buf); `StreamTensor<'l, D, Time, Packet>` -> (dtype, Time, Packet).
    fn local(ty: &ast::Type, want: &str) -> Option<Vec<ast::GenericArg>> {
        match ty {
            ast::Type::RefType(r) => local(&r.ty()?, want),
            ast::Type::PathType(p) => {
                let seg = p.path()?.segment()?;
                if seg.name_ref()?.text() != want {
                    return None;
                }
                Some(
                    seg.generic_arg_list()?
                        .generic_args()
                        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                        .collect(),
                )
            }
            _ => None,
        }
    }
    let buf_ty = |args: &[ast::GenericArg]| {
        let mut t = TensorTy::new(Kind::Dm);
        t.dtype = args.first().and_then(dtype_of);
        if let Some(m) = args.get(1).and_then(|a| map_of(a, scope)) {
            t.maps.insert(Slot::Element, m);
        }
        t
    };
    let stream_ty = |d: Option<&ast::GenericArg>,
                     time: Option<&ast::GenericArg>,
                     packet: Option<&ast::GenericArg>| {
        let mut t = TensorTy::new(Kind::Stream);
        t.dtype = d.and_then(dtype_of);
        for (slot, a) in [(Slot::Time, time), (Slot::Packet, packet)] {
            if let Some(m) = a.and_then(|a| map_of(a, scope)) {
                t.maps.insert(slot, m);
            }
        }
        t
    };
    let mut bufs: HashMap<String, TensorTy> = HashMap::new();
    let mut streams: HashMap<String, TensorTy> = HashMap::new();
    if let Some(pl) = f.param_list() {
        for p in pl.params() {
            let (Some(pat), Some(ty)) = (p.pat(), p.ty()) else {
                continue;
            };
            let Some(name) = pat_name(&pat) else { continue };
            if let Some(args) = local(&ty, "BufTensor") {
                bufs.insert(name, buf_ty(&args));
            } else if let Some(args) = local(&ty, "StreamTensor") {
                streams.insert(name, stream_ty(args.first(), args.get(1), args.get(2)));
            }
        }
    }
    if bufs.is_empty() {
        return Vec::new();
    }
    let ret = f
        .ret_type()
        .and_then(|r| r.ty())
        .and_then(|t| local(&t, "StreamTensor"))
        .map(|a| stream_ty(a.first(), a.get(1), a.get(2)));
    let Some(body) = f.body() else {
        return Vec::new();
    };
    let mut chains = Vec::new();
    for m in body
        .syntax()
        .descendants()
        .filter_map(ast::MethodCallExpr::cast)
    {
        let Some(name_ref) = m.name_ref() else {
            continue;
        };
        let method = Method::from_name(name_ref.text());
        let Some(buf) = m
            .receiver()
            .and_then(|r| var_name(&r))
            .and_then(|v| bufs.get(&v))
        else {
            continue;
        };
        let generics: Vec<ast::GenericArg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .collect()
            })
            .unwrap_or_default();
        let args: Vec<ast::Expr> = m.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        let (input, output) = match method {
            Method::Read => {
                let out = if generics.len() == 2 {
                    let mut t = stream_ty(None, generics.first(), generics.get(1));
                    t.dtype = buf.dtype;
                    Some(t)
                } else {
                    ret.clone()
                };
                (Some(buf.clone()), out)
            }
            Method::Write => {
                let s = args
                    .first()
                    .and_then(var_name)
                    .and_then(|v| streams.get(&v))
                    .cloned();
                (s, Some(buf.clone()))
            }
            _ => continue,
        };
        let span = span_of(name_ref.syntax().text_range());
        chains.push(Chain {
            span: span_of(m.syntax().text_range()),
            binding: None,
            declared: None,
            receiver: m.receiver().and_then(|r| var_name(&r)),
            written_apart: false,
            iteration: None,
            steps: vec![Step {
                method,
                span,
                engine: None,
                input,
                output,
                keep: Vec::new(),
                context: None,
                address: None,
                awaited: false,
                generics: generics.iter().map(|a| arg_of(a.syntax())).collect(),
                args: args.iter().map(|a| arg_of(a.syntax())).collect(),
            }],
        });
    }
    chains
}

/// Whether an engine method (`to_dm`, `commit`, `switch`, ..) is called anywhere under `node`.
fn has_engine_call(node: &ra_ap_syntax::SyntaxNode) -> bool {
    node.descendants()
        .filter_map(ast::MethodCallExpr::cast)
        .filter_map(|m| m.name_ref())
        .any(|n| {
            [Generation::VisaStd, Generation::OptStd]
                .into_iter()
                .any(|g| {
                    Method::resolve(n.text(), g)
                        .transfer_for(n.text(), g, None)
                        .is_some()
                })
        })
}

/// Whether `name` is written as an identifier anywhere under `node`.
fn uses_name(node: &ra_ap_syntax::SyntaxNode, name: &str) -> bool {
    node.descendants_with_tokens()
        .filter_map(|t| t.into_token())
        .any(|t| t.kind() == ra_ap_syntax::SyntaxKind::IDENT && t.text() == name)
}

fn pat_name(p: &ast::Pat) -> Option<String> {
    match p {
        ast::Pat::IdentPat(i) => Some(ast::HasName::name(i)?.text().to_string()),
        _ => None,
    }
}

impl Builder<'_> {
    /// Evaluates a block; its tail takes `expected` and `binding` (a function body's tail takes
    /// the return type).
    fn block(
        &mut self,
        block: &ast::BlockExpr,
        expected: Option<TensorTy>,
        binding: Option<String>,
    ) -> Val {
        let Some(list) = block.stmt_list() else {
            self.last_ends.clear();
            return Val::Unknown;
        };
        let outer_consts = self.consts.clone();
        let outer_values = self.values.clone();
        self.local_consts(&list);
        let mut diverges = false;
        for stmt in list.statements() {
            diverges = false;
            match stmt {
                ast::Stmt::LetStmt(l) => self.let_stmt(&l),
                ast::Stmt::ExprStmt(e) => {
                    if let Some(e) = e.expr() {
                        diverges = matches!(self.top(&e, None, None), Val::Never);
                    }
                }
                ast::Stmt::Item(_) => {}
            }
        }
        self.last_ends.clear();
        let val = match list.tail_expr() {
            Some(tail) => self.top(&tail, expected, binding),
            // `{ ..; return x; }`
            None if diverges => Val::Never,
            None => Val::Unknown,
        };
        self.consts = outer_consts;
        self.values = outer_values;
        val
    }

    /// The `const` items a block declares (`const GROUPS: usize = 2;` in a kernel's body):
    /// constants in the whole block, as Rust scopes an item.
    fn local_consts(&mut self, list: &ast::StmtList) {
        for stmt in list.statements() {
            let ast::Stmt::Item(ast::Item::Const(c)) = stmt else {
                continue;
            };
            let (Some(name), Some(body)) = (ast::HasName::name(&c), c.body()) else {
                continue;
            };
            let name = name.text().to_string();
            let value = self.value_of(&body).0;
            if let Ok(value::Value::Int(k)) = value {
                self.consts.insert(name.clone(), k);
            }
            self.values.insert(name, value);
        }
    }

    /// The arms of an `if`/`match` used as a value: a tensor when every arm gives one of the
    /// same kind in the same context (what the arms disagree on is unknown), continuing every
    /// arm's chain; anything else is unknown.
    fn join(&mut self, arms: Vec<(Val, Vec<(usize, usize)>)>, complete: bool) -> Val {
        self.last_ends.clear();
        if !complete || arms.is_empty() {
            return Val::Unknown;
        }
        let mut joined: Option<(TensorTy, Option<Tu>, Vec<Engine>)> = None;
        let mut ends = Vec::new();
        // An arm that returns or panics gives no value to join.
        let arms: Vec<_> = arms
            .into_iter()
            .filter(|(v, _)| !matches!(v, Val::Never))
            .collect();
        if arms.is_empty() {
            return Val::Never;
        }
        for (v, e) in arms {
            let Val::Tensor { ty, tu, engines } = v else {
                return Val::Unknown;
            };
            ends.extend(e);
            match joined.as_mut() {
                None => joined = Some((ty, tu, engines)),
                Some((jt, jtu, jen)) => {
                    if jt.kind != ty.kind || *jtu != tu {
                        return Val::Unknown;
                    }
                    if jt.dtype != ty.dtype {
                        jt.dtype = None;
                    }
                    jt.maps.retain(|s, m| {
                        ty.maps
                            .get(s)
                            .is_some_and(|o| o.layout.is_some() && o.layout == m.layout)
                    });
                    if *jen != engines {
                        jen.retain(|e| engines.contains(e));
                    }
                }
            }
        }
        let Some((ty, tu, engines)) = joined else {
            return Val::Unknown;
        };
        if ty.kind.is_stream() {
            self.last_ends = ends;
        }
        Val::Tensor { ty, tu, engines }
    }

    /// An `if` expression's arms, `else if` included; `complete` when it has a final `else`.
    fn if_arms(
        &mut self,
        i: &ast::IfExpr,
        expected: &Option<TensorTy>,
        binding: &Option<String>,
        arms: &mut Vec<(Val, Vec<(usize, usize)>)>,
    ) -> bool {
        if let Some(c) = i.condition() {
            self.condition(&c);
        }
        if let Some(b) = i.then_branch() {
            let v = self.block(&b, expected.clone(), binding.clone());
            arms.push((v, std::mem::take(&mut self.last_ends)));
        }
        match i.else_branch() {
            Some(ast::ElseBranch::Block(b)) => {
                let v = self.block(&b, expected.clone(), binding.clone());
                arms.push((v, std::mem::take(&mut self.last_ends)));
                true
            }
            Some(ast::ElseBranch::IfExpr(e)) => self.if_arms(&e, expected, binding, arms),
            None => false,
        }
    }

    /// The compile-time value of `e` (see [`value::eval`]), and whether it was reached through
    /// a name.
    fn value_of(&self, e: &ast::Expr) -> (value::Eval, bool) {
        let lookup = |key: &str| {
            self.values
                .get(key)
                .cloned()
                .or_else(|| self.env.value(key).cloned().map(Ok))
        };
        let names = value::Names {
            value: &lookup,
            ints: &self.consts,
            fns: &self.env.const_fns,
            mapping: &self.scope,
        };
        value::eval(e, &names)
    }

    /// A value argument of an engine call: as written, with the value it names (or why that
    /// value is unknown).
    fn value_arg(&self, e: &ast::Expr) -> Arg {
        let mut arg = arg_of(e.syntax());
        let (v, named) = self.value_of(e);
        if named || v.is_err() {
            arg.value = Some(v);
        }
        arg
    }

    /// Binds `name` to a compile-time value (a parameter a call gives a known value, a loop's
    /// index): an integer is a constant too.
    fn bind(&mut self, name: &str, v: value::Value) {
        if let value::Value::Int(k) = v {
            self.consts.insert(name.to_string(), k);
        }
        self.values.insert(name.to_string(), Ok(v));
    }

    /// Binds the function's const generic parameters to the arguments a call wrote for them
    /// (`tile::<4>(..)`), by position among its type and const parameters.
    fn bind_const_generics(&mut self, f: &ast::Fn, args: &[Option<value::Value>]) {
        let Some(list) = ast::HasGenericParams::generic_param_list(f) else {
            return;
        };
        let params = list
            .generic_params()
            .filter(|p| !matches!(p, ast::GenericParam::LifetimeParam(_)));
        for (k, p) in params.enumerate() {
            let ast::GenericParam::ConstParam(c) = p else {
                continue;
            };
            let Some(name) = ast::HasName::name(&c).map(|n| n.text().to_string()) else {
                continue;
            };
            match args.get(k).cloned().flatten() {
                Some(v) => self.bind(&name, v),
                None => {
                    let why = format!(
                        "`{name}` is a const generic parameter of `{}`: its body is checked on its own without its callers' arguments, and again at each call that writes one",
                        self.model.name
                    );
                    self.values.insert(name, Err(value::Unknown { why }));
                }
            }
        }
    }

    /// What a call of a helper binds its parameters to: each argument's compile-time value
    /// and each const generic argument's, where known.
    fn bound_by(
        &self,
        args: &[ast::Expr],
        generics: Option<ast::GenericArgList>,
        sig: &FnSig,
        vals: &[Val],
    ) -> super::Bound {
        let known = |e: &ast::Expr| self.value_of(e).0.ok();
        let generics = generics
            .into_iter()
            .flat_map(|g| g.generic_args())
            .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
            .map(|a| match a {
                ast::GenericArg::ConstArg(c) => c.expr().and_then(|e| known(&e)),
                // `::<N>` with `N` a const item parses as a type.
                ast::GenericArg::TypeArg(t) => match t.ty() {
                    Some(ast::Type::PathType(p)) => p
                        .path()
                        .and_then(|p| path_key(&p))
                        .and_then(|k| self.consts.get(&k).map(|v| value::Value::Int(*v))),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let tensors = vals
            .iter()
            .enumerate()
            .map(|(k, v)| match (sig.params.get(k).cloned().flatten(), v) {
                (Some(declared), Val::Tensor { ty, .. }) => declared.instantiated_by(ty),
                _ => None,
            })
            .collect();
        super::Bound {
            params: args.iter().map(known).collect(),
            generics,
            tensors,
            addresses: args.iter().map(|a| self.placed_at(a)).collect(),
            streams: Vec::new(),
            continued: None,
        }
    }

    /// A stream parameter given the caller's pass so far: the chains from it continue that
    /// pass (one chain of the caller's steps, which the parameter's first use extends).
    fn continue_callers_pass(&mut self, param: &str, pass: &[Step]) {
        self.model.chains.push(Chain {
            span: Span::default(),
            binding: None,
            declared: None,
            receiver: None,
            steps: pass.to_vec(),
            written_apart: true,
            iteration: None,
        });
        let index = self.model.chains.len() - 1;
        self.ends
            .insert(param.to_string(), vec![(index, pass.len())]);
    }

    /// The stream the body returns in mid-pass, continued with what the caller does with it.
    fn continue_returned(&mut self, after: &[Step]) {
        for (i, n) in std::mem::take(&mut self.last_ends) {
            if let Some(c) = self.model.chains.get_mut(i)
                && c.steps.len() == n
            {
                c.steps.extend(after.iter().cloned());
            }
        }
    }

    /// Once the body is built: each call's [`super::Bound::continued`] from the chain that
    /// continues what it returns, and the chains nothing continued dropped.
    fn settle_continuations(&mut self) {
        let chains = &mut self.model.chains;
        for call in &mut self.model.calls {
            let Some(i) = call.result.take() else {
                continue;
            };
            let steps = chains.get(i as usize).map_or(&[][..], |c| &c.steps);
            if !steps.is_empty() {
                let at = super::CALLER_CONTINUATION;
                call.bound.continued = Some(steps.iter().map(|s| s.from_caller(at)).collect());
            }
        }
        chains.retain(|c| !c.steps.is_empty());
    }

    /// The pass a value in mid-pass has gone through (the steps of the one chain that made
    /// it, as a helper it is passed to holds them): `None` for anything else, or a stream
    /// whose chains differ (the arms of an `if`).
    fn pass_so_far(&self, v: &Val) -> Option<Vec<Step>> {
        let Val::Tensor { ty, .. } = v else {
            return None;
        };
        let [(i, n)] = self.last_ends.as_slice() else {
            return None;
        };
        let steps = self.model.chains.get(*i)?.steps.get(..*n)?;
        let at = super::CALLER_PASS;
        (ty.kind.is_stream() && !steps.is_empty())
            .then(|| steps.iter().map(|s| s.from_caller(at)).collect())
    }

    /// For a helper returning a stream in mid-pass, a chain (empty yet) that what the caller
    /// does with the stream continues: the expression being evaluated starts from it.
    fn continuation_of(&mut self, sig: &FnSig, call: Span) -> Option<u32> {
        if !sig.ret.as_ref().is_some_and(|t| t.kind.is_stream()) {
            return None;
        }
        self.model.chains.push(Chain {
            span: call,
            binding: None,
            declared: None,
            receiver: None,
            steps: Vec::new(),
            written_apart: true,
            iteration: self.iteration,
        });
        let index = self.model.chains.len() - 1;
        self.root = Some(vec![(index, 0)]);
        Some(index as u32)
    }

    /// The address a `let` whose initializer is a `from_addr(..)` call places its tensor at
    /// (the placement that call recorded).
    fn placed_by(&self, l: &ast::LetStmt) -> Option<u64> {
        let init = l.initializer().filter(is_from_addr)?;
        let at = span_of(init.syntax().text_range());
        let p = self.model.placements.last()?;
        (at.start <= p.arg.span.start && p.arg.span.end <= at.end).then_some(p.address)
    }

    /// The address the tensor an argument names (`&a`, `a`) was placed at, when known.
    fn placed_at(&self, arg: &ast::Expr) -> Option<u64> {
        let name = var_name(arg)?;
        let Some(Val::Tensor { .. }) = self.vars.get(&name) else {
            return None;
        };
        self.model
            .tensors
            .iter()
            .rev()
            .find(|t| t.name == name)?
            .address
    }

    /// Evaluates an expression that is not the start of the chain being built (an argument):
    /// it neither starts nor continues that chain.
    fn arg_expr(&mut self, e: &ast::Expr) -> Val {
        let saved = self.root.take();
        let v = self.expr(e, &mut Vec::new(), false);
        self.root = saved;
        v
    }

    fn let_stmt(&mut self, l: &ast::LetStmt) {
        let annotation = l.ty();
        let expected = annotation
            .as_ref()
            .and_then(|t| tensor_type(t, self.env, &self.scope, &mut self.model.problems));
        let name = l.pat().as_ref().and_then(pat_name);
        let (immutable, mutable) = match l.pat() {
            Some(ast::Pat::IdentPat(i)) if i.ref_token().is_none() => {
                (i.mut_token().is_none(), i.mut_token().is_some())
            }
            _ => (false, false),
        };
        if let Some(n) = &name {
            // A binding's compile-time value (a `let mut` never assigned again is one too); an
            // integer one is a constant too. A variable assigned after its `let` is not
            // followed through its assignments: its value is unknown, and says why.
            let reassigned = mutable && assigned_after(l, n);
            if !self.counters.is_empty() {
                self.counters.remove(n);
            }
            if reassigned
                && let Some(first) = l.initializer().and_then(|init| {
                    consts::eval_sized(&init, &self.consts, &self.env.const_fns, &self.scope)
                })
            {
                self.counters.insert(n.clone(), first);
            }
            let value =
                l.initializer()
                    .filter(|_| immutable || mutable)
                    .map(|init| match reassigned {
                        false => self.value_of(&init).0,
                        true => Err(value::Unknown::assigned(n)),
                    });
            match &value {
                Some(Ok(value::Value::Int(k))) => {
                    self.consts.insert(n.clone(), *k);
                }
                _ => {
                    self.consts.remove(n);
                }
            }
            match value {
                Some(v) => {
                    self.values.insert(n.clone(), v);
                }
                None => {
                    self.values.remove(n);
                }
            }
        }
        let val = match l.initializer() {
            Some(init) => self.top(&init, expected.clone(), name.clone()),
            None => match &expected {
                Some(t) => Val::Tensor {
                    ty: t.clone(),
                    tu: None,
                    engines: Vec::new(),
                },
                None => Val::Unknown,
            },
        };
        let ends = std::mem::take(&mut self.last_ends);
        let Some(name) = name else {
            // `let (a, b) = ..`, `let Pair { a, b } = ..`, `let Some(t) = .. else { .. }`.
            if let Some(pat) = l.pat() {
                let val = match (val, annotation.as_ref()) {
                    (Val::Tuple(mut vs), Some(ast::Type::TupleType(t))) => {
                        for (v, f) in vs.iter_mut().zip(t.fields()) {
                            if matches!(v, Val::Unknown)
                                && let Some(ty) =
                                    tensor_type(&f, self.env, &self.scope, &mut self.model.problems)
                            {
                                *v = Val::Tensor {
                                    ty,
                                    tu: None,
                                    engines: Vec::new(),
                                };
                            }
                        }
                        Val::Tuple(vs)
                    }
                    (v, _) => v,
                };
                self.bind_pat(&pat, val);
            }
            return;
        };
        let val = match (val, annotation.as_ref()) {
            (Val::Unknown | Val::Lost(_), Some(t)) => {
                match many_type(t, self.env, &self.scope, &mut self.model.problems) {
                    Some(ty) => Val::many(ty),
                    None => Val::Unknown,
                }
            }
            (v, _) => v,
        };
        if ends.is_empty() {
            self.ends.remove(&name);
        } else {
            self.ends.insert(name.clone(), ends);
        }
        if let Val::Tensor { ty, tu, .. } = &val {
            let address = self
                .model
                .chains
                .last()
                .filter(|c| c.binding.as_deref() == Some(name.as_str()))
                .and_then(|c| c.steps.last())
                .and_then(|s| s.address)
                .or_else(|| self.placed_by(l));
            let span = l.pat().map_or(span_of(l.syntax().text_range()), |p| {
                span_of(p.syntax().text_range())
            });
            self.model.tensors.push(TensorVar {
                name: name.clone(),
                span,
                origin: Origin::Let,
                ty: ty.clone(),
                context: *tu,
                address,
                iteration: self.iteration,
            });
        }
        self.vars.insert(name, val);
    }

    /// Binds a variable to a value outside a `let` of a plain name (a pattern's part, a loop
    /// variable, a closure parameter, an assignment).
    fn set_var(&mut self, name: String, val: Val, span: Span) {
        self.consts.remove(&name);
        self.values.remove(&name);
        self.ends.remove(&name);
        if let Val::Tensor { ty, tu, .. } = &val {
            self.model.tensors.push(TensorVar {
                name: name.clone(),
                span,
                origin: Origin::Let,
                ty: ty.clone(),
                context: *tu,
                address: None,
                iteration: self.iteration,
            });
        }
        self.vars.insert(name, val);
    }

    /// Binds a pattern to a value: tuples and struct literals part by part, `Some(t)`/`Ok(t)`
    /// to the value itself (the model sees through `Option`/`Result`); a part it cannot
    /// follow is [`Val::Lost`] at the pattern.
    fn bind_pat(&mut self, pat: &ast::Pat, val: Val) {
        let at = span_of(pat.syntax().text_range());
        match pat {
            ast::Pat::IdentPat(i) => {
                if let Some(n) = ast::HasName::name(i) {
                    self.set_var(n.text().to_string(), val, at);
                }
            }
            ast::Pat::RefPat(r) => {
                if let Some(p) = r.pat() {
                    self.bind_pat(&p, val);
                }
            }
            ast::Pat::ParenPat(p) => {
                if let Some(p) = p.pat() {
                    self.bind_pat(&p, val);
                }
            }
            ast::Pat::TuplePat(t) => {
                let fields: Vec<ast::Pat> = t.fields().collect();
                let rest = fields.iter().any(|f| matches!(f, ast::Pat::RestPat(_)));
                match val {
                    Val::Tuple(vs) if vs.len() == fields.len() && !rest => {
                        for (f, v) in fields.iter().zip(vs) {
                            self.bind_pat(f, v);
                        }
                    }
                    Val::Unknown => self.bind_all(pat, Val::Unknown),
                    Val::Lost(c) => self.bind_all(pat, Val::Lost(c)),
                    _ => {
                        let what = format!("the destructuring `{}`", snippet(pat.syntax()));
                        self.bind_all(pat, Val::Lost(Construct::new(pat.syntax(), what)));
                    }
                }
            }
            ast::Pat::RecordPat(r) => {
                let Val::Struct(fields) = val else {
                    let lost = match val {
                        Val::Unknown => Val::Unknown,
                        Val::Lost(c) => Val::Lost(c),
                        _ => {
                            let what = format!("the destructuring `{}`", snippet(pat.syntax()));
                            Val::Lost(Construct::new(pat.syntax(), what))
                        }
                    };
                    self.bind_all(pat, lost);
                    return;
                };
                for f in r
                    .record_pat_field_list()
                    .into_iter()
                    .flat_map(|l| l.fields())
                {
                    let Some(p) = f.pat() else { continue };
                    let name = f
                        .field_name()
                        .map(|n| n.to_string())
                        .or_else(|| pat_name(&p));
                    let v = name
                        .and_then(|n| fields.iter().find(|(k, _)| *k == n))
                        .map_or(Val::Unknown, |(_, v)| v.clone());
                    self.bind_pat(&p, v);
                }
            }
            ast::Pat::TupleStructPat(t) => {
                let fields: Vec<ast::Pat> = t.fields().collect();
                match fields.as_slice() {
                    [one] => self.bind_pat(one, val),
                    _ => self.bind_all(pat, Val::Unknown),
                }
            }
            ast::Pat::SlicePat(sp) => {
                let elem = match val {
                    Val::Many { elem, .. } => *elem,
                    Val::Lost(c) => Val::Lost(c),
                    Val::Unknown => Val::Unknown,
                    _ => {
                        let what = format!("the destructuring `{}`", snippet(pat.syntax()));
                        Val::Lost(Construct::new(pat.syntax(), what))
                    }
                };
                for p in sp.pats() {
                    if !matches!(p, ast::Pat::RestPat(_)) {
                        self.bind_pat(&p, elem.clone());
                    }
                }
            }
            _ => self.bind_all(pat, Val::Unknown),
        }
    }

    /// Binds every name a pattern introduces to one value.
    fn bind_all(&mut self, pat: &ast::Pat, val: Val) {
        for i in pat.syntax().descendants().filter_map(ast::IdentPat::cast) {
            if let Some(n) = ast::HasName::name(&i) {
                let at = span_of(i.syntax().text_range());
                self.set_var(n.text().to_string(), val.clone(), at);
            }
        }
    }

    /// Reports a value the model did not follow where it is used as a tensor: once per
    /// construct.
    fn lost_use(&mut self, c: &Construct, at: Span) {
        if !self.lost_reported.insert(c.span) {
            return;
        }
        self.model.problems.push(
            NotFollowed::Lost {
                at: c.span,
                what: c.what.clone(),
                used: at,
            }
            .into(),
        );
    }

    /// A construct reported as soon as it is met (an engine chain inside a macro, an address
    /// computed by a call): once.
    fn not_analysed(&mut self, p: NotFollowed) {
        if self.lost_reported.insert(p.at()) {
            self.model.problems.push(p.into());
        }
    }

    /// An `if`/`while` condition: `let` patterns bind what they match.
    fn condition(&mut self, c: &ast::Expr) {
        match c {
            ast::Expr::LetExpr(l) => {
                let v = l.expr().map_or(Val::Unknown, |e| self.arg_expr(&e));
                if let Some(p) = l.pat() {
                    self.bind_pat(&p, v);
                }
            }
            ast::Expr::BinExpr(b)
                if matches!(b.op_kind(), Some(ast::BinaryOp::LogicOp(ast::LogicOp::And))) =>
            {
                if let Some(l) = b.lhs() {
                    self.condition(&l);
                }
                if let Some(r) = b.rhs() {
                    self.condition(&r);
                }
            }
            other => {
                self.arg_expr(other);
            }
        }
    }

    /// A loop: its pattern bound to the elements of what it iterates (a tensor of an array
    /// or slice of them), its body evaluated once (Rust gives a variable one type, so what
    /// flows around the back edge has the type it had before the loop).
    fn loop_expr(&mut self, e: &ast::Expr) -> Val {
        match e {
            ast::Expr::ForExpr(f) if self.iterate(f) => {}
            ast::Expr::ForExpr(f) => {
                let it = f.iterable().map_or(Val::Unknown, |i| self.arg_expr(&i));
                let elem = match it {
                    Val::Many { elem, enumerated } => {
                        if enumerated {
                            Val::Tuple(vec![Val::Unknown, *elem])
                        } else {
                            *elem
                        }
                    }
                    Val::Lost(c) => Val::Lost(c),
                    _ => Val::Unknown,
                };
                if let Some(p) = f.pat() {
                    self.bind_pat(&p, elem);
                }
                if let Some(b) = f.loop_body() {
                    self.block(&b, None, None);
                }
            }
            ast::Expr::WhileExpr(w) if self.counted_while(w) => {}
            ast::Expr::WhileExpr(w) => {
                if let Some(c) = w.condition() {
                    self.condition(&c);
                }
                if let Some(b) = w.loop_body() {
                    self.block(&b, None, None);
                }
            }
            ast::Expr::LoopExpr(l) => {
                if let Some(b) = l.loop_body() {
                    self.block(&b, None, None);
                }
            }
            _ => {}
        }
        self.last_ends.clear();
        Val::Unknown
    }

    /// `for i in a..b { .. }` (also `a..=b` and `(a..b).step_by(s)`) with constant bounds and an
    /// index the body uses: the body is evaluated once per iteration with `i` bound, as the
    /// compiler's trace unrolls it, each iteration's chains named by it. Past the function's
    /// budget only the first and last iterations are evaluated, and the loop is reported as
    /// not checked in between (VL-009). `false` when the loop is not of this form.
    fn iterate(&mut self, f: &ast::ForExpr) -> bool {
        let (Some(ast::Pat::IdentPat(p)), Some(iterable), Some(body)) =
            (f.pat(), f.iterable(), f.loop_body())
        else {
            return false;
        };
        let Some(var) = ast::HasName::name(&p).map(|n| n.text().to_string()) else {
            return false;
        };
        let Some(range) = self.constant_range(&iterable) else {
            return false;
        };
        if !self.worth_unrolling(&body, &var) {
            return false;
        }
        self.unroll(&var, range, &body, span_of(p.syntax().text_range()));
        true
    }

    /// Only a body whose engine calls (or helper calls) may see the index is worth unrolling.
    fn worth_unrolling(&self, body: &ast::BlockExpr, var: &str) -> bool {
        uses_name(body.syntax(), var)
            && (has_engine_call(body.syntax()) || self.calls_a_helper(body.syntax()))
    }

    /// `while i < N { ..; i += s; }` with `i` a `let mut` counter that only the body's last
    /// statement steps, and `N` and `s` constants: the `for i in (first..N).step_by(s)` it is,
    /// unrolled the same way (`<=` and `!=` bounds too). `false` when the loop is not of
    /// this form.
    fn counted_while(&mut self, w: &ast::WhileExpr) -> bool {
        let (Some(ast::Expr::BinExpr(cond)), Some(body)) = (w.condition(), w.loop_body()) else {
            return false;
        };
        let Some(var) = cond.lhs().as_ref().and_then(var_name) else {
            return false;
        };
        let Some(&first) = self.counters.get(&var) else {
            return false;
        };
        let int =
            |e: &ast::Expr| consts::eval_sized(e, &self.consts, &self.env.const_fns, &self.scope);
        let Some(bound) = cond.rhs().as_ref().and_then(int) else {
            return false;
        };
        let end = match cond.op_kind() {
            Some(ast::BinaryOp::CmpOp(ast::CmpOp::Ord {
                ordering: ast::Ordering::Less,
                strict: true,
            }))
            | Some(ast::BinaryOp::CmpOp(ast::CmpOp::Eq { negated: true })) => bound,
            Some(ast::BinaryOp::CmpOp(ast::CmpOp::Ord {
                ordering: ast::Ordering::Less,
                strict: false,
            })) => match bound.checked_add(1) {
                Some(e) => e,
                None => return false,
            },
            _ => return false,
        };
        let Some(step) = last_step(&body, &var).and_then(|e| int(&e)) else {
            return false;
        };
        // The counter moves only at the end of the body, by the step.
        let steps = body
            .syntax()
            .descendants()
            .filter(|n| assigns(n, &var))
            .count();
        let Ok(step) = usize::try_from(step) else {
            return false;
        };
        // A `break` or `continue` would end or repeat an iteration the unrolling runs whole.
        let jumps = body.syntax().descendants().any(|n| {
            matches!(
                n.kind(),
                ra_ap_syntax::SyntaxKind::BREAK_EXPR | ra_ap_syntax::SyntaxKind::CONTINUE_EXPR
            )
        });
        if jumps || steps != 1 || step == 0 || end.saturating_sub(first) > 1 << 16 {
            return false;
        }
        let range: Vec<u64> = (first..end).step_by(step).collect();
        if (cond.op_kind() == Some(ast::BinaryOp::CmpOp(ast::CmpOp::Eq { negated: true })))
            && range.last().and_then(|l| l.checked_add(step as u64)) != Some(end)
        {
            // `i != N` that steps past N never ends.
            return false;
        }
        if !self.worth_unrolling(&body, &var) {
            return false;
        }
        self.unroll(&var, range, &body, span_of(cond.syntax().text_range()));
        true
    }

    /// Evaluates `body` once per index in `range` with `var` bound to it, each iteration's
    /// chains named by it; past the function's budget only the first and last.
    fn unroll(&mut self, var: &str, range: Vec<u64>, body: &ast::BlockExpr, at: Span) {
        let var = var.to_string();
        let n = range.len();
        let indices: Vec<u64> = if n as u64 <= u64::from(self.iterations_left) {
            range.clone()
        } else {
            let first_last = [range.first().copied(), range.last().copied()];
            let kept: Vec<u64> = first_last.into_iter().flatten().collect();
            self.not_analysed(NotFollowed::Iterations {
                at,
                var: var.clone(),
                count: n as u64,
                budget: MAX_ITERATIONS,
            });
            kept
        };
        let outer = self.iteration;
        let outer_it = outer.and_then(|k| self.model.iterations.get(k as usize).cloned());
        for (n, k) in indices.into_iter().enumerate() {
            self.iterations_left = self.iterations_left.saturating_sub(1);
            let label = match &outer_it {
                Some(o) => format!("{}, {var} = {k}", o.label),
                None => format!("{var} = {k}"),
            };
            let first = n == 0 && outer_it.as_ref().is_none_or(|o| o.first);
            self.model.iterations.push(Iteration { label, first });
            self.iteration = u32::try_from(self.model.iterations.len() - 1).ok();
            let saved = (self.consts.clone(), self.values.clone());
            self.bind(&var, value::Value::Int(k));
            self.vars.remove(&var);
            self.block(body, None, None);
            (self.consts, self.values) = saved;
        }
        self.iteration = outer;
        self.last_ends.clear();
    }

    /// Whether `node` calls one of the crate's helper functions (which may take the index).
    fn calls_a_helper(&self, node: &ra_ap_syntax::SyntaxNode) -> bool {
        node.descendants().filter_map(ast::CallExpr::cast).any(|c| {
            let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
                return false;
            };
            callee
                .path()
                .and_then(|p| callee_key(&p))
                .is_some_and(|k| self.env.fn_sig(&k).is_some())
        })
    }

    /// The indices of a constant range (`0..N`, `1..=4`, `(0..N).step_by(2)`), when there are
    /// at most 2^16 of them.
    fn constant_range(&self, e: &ast::Expr) -> Option<Vec<u64>> {
        let int =
            |e: &ast::Expr| consts::eval_sized(e, &self.consts, &self.env.const_fns, &self.scope);
        match e {
            ast::Expr::ParenExpr(p) => self.constant_range(&p.expr()?),
            ast::Expr::RangeExpr(r) => {
                let start = int(&r.start()?)?;
                let end = int(&r.end()?)?;
                let end = match r.op_kind()? {
                    ast::RangeOp::Inclusive => end.checked_add(1)?,
                    ast::RangeOp::Exclusive => end,
                };
                if end.saturating_sub(start) > 1 << 16 {
                    return None;
                }
                Some((start..end).collect())
            }
            ast::Expr::MethodCallExpr(m) if m.name_ref().is_some_and(|n| n.text() == "step_by") => {
                let inner = self.constant_range(&m.receiver()?)?;
                let step = int(&m.arg_list()?.args().next()?)?;
                let step = usize::try_from(step).ok().filter(|s| *s > 0)?;
                Some(inner.into_iter().step_by(step).collect())
            }
            _ => None,
        }
    }

    /// `x = e`: the variable takes the new value (its chain, if it is a stream in mid-pass);
    /// `x += e` and assignments to fields or indices only evaluate the right-hand side.
    fn assign(&mut self, b: &ast::BinExpr) -> Val {
        let plain = matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { op: None }));
        let target = b.lhs().as_ref().and_then(var_name);
        if let Some(t) = &target
            && !self.counters.is_empty()
        {
            self.counters.remove(t);
        }
        // A variable with a compile-time value loses it: assignments are not followed.
        let forgotten = target.clone().filter(|t| self.values.contains_key(t));
        let Some(rhs) = b.rhs() else {
            return Val::Unknown;
        };
        match target {
            Some(name) if plain => {
                let expected = match self.vars.get(&name) {
                    Some(Val::Tensor { ty, .. }) => Some(ty.clone()),
                    _ => None,
                };
                let val = self.top(&rhs, expected, Some(name.clone()));
                let ends = std::mem::take(&mut self.last_ends);
                let at = b.lhs().map_or(span_of(b.syntax().text_range()), |l| {
                    span_of(l.syntax().text_range())
                });
                self.set_var(name.clone(), val, at);
                if !ends.is_empty() {
                    self.ends.insert(name, ends);
                }
            }
            Some(name) => {
                self.consts.remove(&name);
                self.arg_expr(&rhs);
            }
            None => {
                self.top(&rhs, None, None);
            }
        }
        if let Some(name) = forgotten {
            let unknown = value::Unknown::assigned(&name);
            self.values.insert(name, Err(unknown));
        }
        self.last_ends.clear();
        Val::Unknown
    }

    /// Evaluates a statement-level expression, recording its chain: a new one, or the chains
    /// of the variable it continues, extended (see [`Builder::ends`]).
    fn top(&mut self, e: &ast::Expr, expected: Option<TensorTy>, binding: Option<String>) -> Val {
        self.last_ends.clear();
        match e {
            ast::Expr::BlockExpr(b) if b.unsafe_token().is_none() => {
                return self.block(b, expected, binding);
            }
            ast::Expr::ParenExpr(p) => {
                if let Some(inner) = p.expr() {
                    return self.top(&inner, expected, binding);
                }
            }
            ast::Expr::ForExpr(_) | ast::Expr::WhileExpr(_) | ast::Expr::LoopExpr(_) => {
                return self.loop_expr(e);
            }
            ast::Expr::ReturnExpr(r) => {
                // `return x.to_hbm(..)`: the value takes the function's return type.
                if let Some(v) = r.expr() {
                    let ret = self.ret.clone();
                    self.top(&v, ret, None);
                }
                self.last_ends.clear();
                return Val::Never;
            }
            ast::Expr::BreakExpr(b) => {
                if let Some(v) = b.expr() {
                    self.top(&v, None, None);
                }
                self.last_ends.clear();
                return Val::Unknown;
            }
            ast::Expr::BinExpr(b)
                if matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { .. })) =>
            {
                return self.assign(b);
            }
            ast::Expr::TupleExpr(t) => {
                let vals = t.fields().map(|f| self.top(&f, None, None)).collect();
                self.last_ends.clear();
                return Val::Tuple(vals);
            }
            ast::Expr::IfExpr(i) => {
                let mut arms = Vec::new();
                let complete = self.if_arms(i, &expected, &binding, &mut arms);
                return self.join(arms, complete);
            }
            ast::Expr::MatchExpr(m) => {
                if let Some(scrutinee) = m.expr() {
                    self.arg_expr(&scrutinee);
                }
                let mut arms = Vec::new();
                for arm in m.match_arm_list().into_iter().flat_map(|l| l.arms()) {
                    if let Some(x) = arm.expr() {
                        let v = self.top(&x, expected.clone(), binding.clone());
                        arms.push((v, std::mem::take(&mut self.last_ends)));
                    }
                }
                return self.join(arms, true);
            }
            _ => {}
        }
        let saved = self.root.take();
        let mut steps = Vec::new();
        let mut val = self.expr(e, &mut steps, false);
        let origin = std::mem::replace(&mut self.root, saved).unwrap_or_default();
        // The chains this expression continues, each with its steps so far.
        let prefixes: Vec<(usize, usize)> = origin
            .into_iter()
            .filter(|(i, n)| {
                self.model
                    .chains
                    .get(*i)
                    .is_some_and(|c| c.steps.len() >= *n)
            })
            .collect();
        // A stream in mid-pass (from a context, or a stream-typed parameter of a helper).
        let mid_pass = matches!(&val, Val::Tensor { ty, .. } if ty.kind.is_stream());
        if steps.is_empty() {
            if let (Some(exp), Val::Tensor { ty, .. }) = (&expected, &mut val) {
                self.unify(ty, exp, &mut []);
            }
            // `let w: Weights = load(..);`: what the model does not follow is the type the
            // annotation (or the return type) gives it, as rustc types it.
            if let (Some(exp), Val::Unknown | Val::Lost(_)) = (&expected, &val) {
                val = Val::Tensor {
                    ty: exp.clone(),
                    tu: None,
                    engines: Vec::new(),
                };
            }
            // A variable passed on (`let b = a;`, a block's tail): its chains go with it.
            if mid_pass {
                self.last_ends = prefixes;
            }
            return val;
        }
        let mut whole: Vec<Vec<Step>> = if prefixes.is_empty() {
            vec![steps]
        } else {
            prefixes
                .iter()
                .map(|(i, n)| {
                    let mut w = self.model.chains[*i].steps[..*n].to_vec();
                    w.extend(steps.iter().cloned());
                    w
                })
                .collect()
        };
        if let (Some(exp), Val::Tensor { ty, .. }) = (&expected, &mut val) {
            for w in &mut whole {
                self.unify(ty, exp, w);
            }
        } else if let (Some(exp), Val::Unknown | Val::Lost(_)) = (&expected, &val) {
            val = Val::Tensor {
                ty: exp.clone(),
                tu: None,
                engines: Vec::new(),
            };
        }
        let span = span_of(e.syntax().text_range());
        let mut ends = Vec::new();
        for (k, w) in whole.into_iter().enumerate() {
            let n = w.len();
            match prefixes.get(k) {
                // The first continuation of a chain end extends that chain in place.
                Some(&(i, len)) if self.model.chains[i].steps.len() == len => {
                    let c = &mut self.model.chains[i];
                    c.steps = w;
                    c.span = Span::new(
                        c.span.start.min(span.start) as usize,
                        span.end.max(c.span.end) as usize,
                    );
                    c.binding = binding.clone();
                    c.declared = expected.clone();
                    c.written_apart = true;
                    ends.push((i, n));
                }
                // A second continuation of the same end (another arm): a chain of its own.
                Some(&(i, _)) => {
                    let c = &self.model.chains[i];
                    let chain = Chain {
                        span: Span::new(c.span.start.min(span.start) as usize, span.end as usize),
                        binding: binding.clone(),
                        declared: expected.clone(),
                        receiver: c.receiver.clone(),
                        steps: w,
                        written_apart: true,
                        iteration: self.iteration,
                    };
                    self.model.chains.push(chain);
                    ends.push((self.model.chains.len() - 1, n));
                }
                None => {
                    self.model.chains.push(Chain {
                        span,
                        binding: binding.clone(),
                        declared: expected.clone(),
                        receiver: root_var(e),
                        steps: w,
                        written_apart: false,
                        iteration: self.iteration,
                    });
                    ends.push((self.model.chains.len() - 1, n));
                }
            }
        }
        if mid_pass {
            self.last_ends = ends;
        }
        val
    }

    /// Merges what an annotation says into the chain's result, and flows it backward.
    fn unify(&mut self, ty: &mut TensorTy, exp: &TensorTy, steps: &mut [Step]) {
        if ty.kind != exp.kind {
            return; // a different type: rustc reports that
        }
        // A `fetch()` without a written element type takes it from what the chain's result is
        // declared as (rustc infers the cast from the annotation or the return type), when every
        // step after it keeps the element type.
        if let Some(want) = exp.dtype
            && ty.dtype != Some(want)
            && let Some(f) = steps.iter().rposition(|s| s.method == Method::Fetch)
            && written(&steps[f], 0).is_none()
            && steps[f + 1..].iter().all(|s| s.keep.contains(&Slot::D))
        {
            for (k, s) in steps[f..].iter_mut().enumerate() {
                if k > 0
                    && let Some(i) = s.input.as_mut()
                {
                    i.dtype = Some(want);
                }
                if let Some(o) = s.output.as_mut() {
                    o.dtype = Some(want);
                }
            }
            ty.dtype = Some(want);
        }
        if ty.dtype.is_none() {
            ty.dtype = exp.dtype;
        }
        for (slot, want) in &exp.maps {
            match ty.maps.get(slot) {
                None => {
                    ty.maps.insert(*slot, want.clone());
                }
                Some(have) => {
                    let differs =
                        matches!((&have.layout, &want.layout), (Some(a), Some(b)) if a != b);
                    if differs && slot.is_spatial() && kept_through_stream(steps, *slot) {
                        let at = steps.last().map_or(Span::default(), |s| s.span);
                        self.model.problems.push(
                            Kernel::SpatialChange {
                                at,
                                slot: *slot,
                                from: have.text.clone(),
                                to: want.text.clone(),
                            }
                            .into(),
                        );
                    }
                }
            }
        }
        // Flow the result back through the steps that keep each slot.
        if let Some(last) = steps.last_mut() {
            last.output = Some(ty.clone());
        }
        for i in (0..steps.len()).rev() {
            let Some(out) = steps[i].output.clone() else {
                break;
            };
            let keep = steps[i].keep.clone();
            let Some(input) = steps[i].input.as_mut() else {
                break;
            };
            let mut changed = false;
            for s in &keep {
                if *s == Slot::D {
                    if input.dtype.is_none() && out.dtype.is_some() {
                        input.dtype = out.dtype;
                        changed = true;
                    }
                } else if let Some(v) = out.maps.get(s)
                    && !input.maps.contains_key(s)
                {
                    input.maps.insert(*s, v.clone());
                    changed = true;
                }
            }
            if !changed || i == 0 {
                continue;
            }
            let input = input.clone();
            if let Some(prev) = steps[i - 1].output.as_mut() {
                for (s, v) in &input.maps {
                    prev.maps.insert_if_absent(*s, || v.clone());
                }
                if prev.dtype.is_none() {
                    prev.dtype = input.dtype;
                }
            }
        }
    }

    fn expr(&mut self, e: &ast::Expr, steps: &mut Vec<Step>, awaited: bool) -> Val {
        match e {
            ast::Expr::MethodCallExpr(m) => self.method_call(m, steps, awaited),
            ast::Expr::AwaitExpr(a) => match a.expr() {
                Some(inner) => self.expr(&inner, steps, true),
                None => Val::Unknown,
            },
            ast::Expr::ParenExpr(p) => p
                .expr()
                .map_or(Val::Unknown, |i| self.expr(&i, steps, awaited)),
            ast::Expr::RefExpr(r) => r
                .expr()
                .map_or(Val::Unknown, |i| self.expr(&i, steps, awaited)),
            ast::Expr::TryExpr(t) => t
                .expr()
                .map_or(Val::Unknown, |i| self.expr(&i, steps, awaited)),
            ast::Expr::BlockExpr(b) => {
                // `unsafe { ... }` and plain blocks used as values.
                let Some(list) = b.stmt_list() else {
                    return Val::Unknown;
                };
                for s in list.statements() {
                    match s {
                        ast::Stmt::LetStmt(l) => self.let_stmt(&l),
                        ast::Stmt::ExprStmt(x) => {
                            if let Some(x) = x.expr() {
                                self.top(&x, None, None);
                            }
                        }
                        ast::Stmt::Item(_) => {}
                    }
                }
                list.tail_expr()
                    .map_or(Val::Unknown, |t| self.expr(&t, steps, awaited))
            }
            ast::Expr::PathExpr(p) => {
                let Some(path) = p.path() else {
                    return Val::Unknown;
                };
                if path.qualifier().is_some() {
                    return Val::Unknown;
                }
                if path
                    .segment()
                    .is_some_and(|s| s.kind() == Some(ast::PathSegmentKind::SelfKw))
                {
                    // A method's receiver: what its fields and methods give is not followed.
                    return Val::Lost(Construct::new(p.syntax(), "`self`"));
                }
                let name = path
                    .segment()
                    .and_then(|s| s.name_ref())
                    .map(|n| n.text().to_string());
                let Some(n) = name else {
                    return Val::Unknown;
                };
                if steps.is_empty()
                    && let Some(ends) = self.ends.get(&n)
                {
                    self.root = Some(ends.clone());
                }
                self.vars.get(&n).cloned().unwrap_or(Val::Unknown)
            }
            ast::Expr::FieldExpr(f) => {
                let field = f
                    .name_ref()
                    .map(|n| n.text().to_string())
                    .unwrap_or_default();
                match field.as_str() {
                    "main" => Val::TuCtx(Tu::Main),
                    "sub" => Val::TuCtx(Tu::Sub),
                    "pdma" => Val::Dma(Dma::Pcie),
                    "tdma" => Val::Dma(Dma::Tensor),
                    _ => {
                        let recv = f.expr().map_or(Val::Unknown, |r| self.arg_expr(&r));
                        match recv {
                            Val::Tuple(vs) => field
                                .parse::<usize>()
                                .ok()
                                .and_then(|i| vs.get(i).cloned())
                                .unwrap_or(Val::Unknown),
                            Val::Struct(fs) => fs
                                .into_iter()
                                .find(|(n, _)| *n == field)
                                .map_or(Val::Unknown, |(_, v)| v),
                            _ => {
                                let what = format!("the field `{}`", snippet(f.syntax()));
                                Val::Lost(Construct::new(f.syntax(), what))
                            }
                        }
                    }
                }
            }
            ast::Expr::CallExpr(c) => self.call(c, awaited),
            ast::Expr::ClosureExpr(c) => self.closure(c),
            ast::Expr::MacroExpr(m) => self.macro_expr(m),
            ast::Expr::IndexExpr(i) => {
                let base = i.base().map_or(Val::Unknown, |b| self.arg_expr(&b));
                if let Some(ix) = i.index() {
                    self.arg_expr(&ix);
                }
                match base {
                    Val::Many { elem, .. } => *elem,
                    _ => {
                        let what = format!("the index `{}`", snippet(i.syntax()));
                        Val::Lost(Construct::new(i.syntax(), what))
                    }
                }
            }
            ast::Expr::ArrayExpr(a) => {
                let vals: Vec<Val> = a.exprs().map(|x| self.top(&x, None, None)).collect();
                self.last_ends.clear();
                array_of(vals)
            }
            ast::Expr::TupleExpr(_)
            | ast::Expr::ReturnExpr(_)
            | ast::Expr::BreakExpr(_)
            | ast::Expr::ForExpr(_)
            | ast::Expr::WhileExpr(_)
            | ast::Expr::LoopExpr(_) => self.top(e, None, None),
            ast::Expr::BinExpr(b)
                if matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { .. })) =>
            {
                self.assign(b)
            }
            ast::Expr::IfExpr(_) | ast::Expr::MatchExpr(_) => {
                // Used as a value inside an expression (`(if c { a } else { b }).view()`): the
                // arms are evaluated as at statement level, and the chain continues from them.
                let v = self.top(e, None, None);
                let ends = std::mem::take(&mut self.last_ends);
                if steps.is_empty() && !ends.is_empty() {
                    self.root = Some(ends);
                }
                v
            }
            ast::Expr::RecordExpr(r) => {
                let mut fields = Vec::new();
                for f in r
                    .record_expr_field_list()
                    .into_iter()
                    .flat_map(|l| l.fields())
                {
                    let Some(x) = f.expr() else { continue };
                    let name = f
                        .field_name()
                        .map(|n| n.to_string())
                        .or_else(|| var_name(&x));
                    let v = self.top(&x, None, None);
                    if let Some(n) = name {
                        fields.push((n, v));
                    }
                }
                self.last_ends.clear();
                Val::Struct(fields)
            }
            ast::Expr::PrefixExpr(p) => {
                // `*t` of a reference to a tensor is the tensor.
                let v = p.expr().map_or(Val::Unknown, |x| self.arg_expr(&x));
                match p.op_kind() {
                    Some(ast::UnaryOp::Deref) => v,
                    _ => Val::Unknown,
                }
            }
            _ => Val::Unknown,
        }
    }

    /// An engine chain written inside a macro's arguments (read as expressions, as
    /// `assert!`, `dbg!` and `vec!` take them): a pass or a device DMA transfer from
    /// `ctx.main`/`ctx.sub` or a tensor variable. Its first engine method's name.
    fn engine_chain_in(&self, tt: &ast::TokenTree) -> Option<Method> {
        let text = crate::syntax::node_text(tt.syntax());
        let inner = text.get(1..text.len().saturating_sub(1))?;
        let wrapped = format!("fn __visa_lint() {{ ({inner}); }}");
        let file =
            ra_ap_syntax::SourceFile::parse(&wrapped, ra_ap_syntax::Edition::Edition2024).tree();
        for m in file
            .syntax()
            .descendants()
            .filter_map(ast::MethodCallExpr::cast)
        {
            let Some(method) = m.name_ref().map(|n| Method::from_name(n.text())) else {
                continue;
            };
            let device = method
                .transfer()
                .is_some_and(|s| s.engine != Engine::Memory)
                || method.is_dm_hbm_dma();
            if !device {
                continue;
            }
            // The spine's root: `ctx.main`, `ctx.sub`, or a tensor variable.
            let mut root = m.receiver();
            while let Some(r) = root.clone() {
                root = match r {
                    ast::Expr::MethodCallExpr(x) => x.receiver(),
                    ast::Expr::AwaitExpr(x) => x.expr(),
                    ast::Expr::TryExpr(x) => x.expr(),
                    ast::Expr::ParenExpr(x) => x.expr(),
                    ast::Expr::RefExpr(x) => x.expr(),
                    _ => break,
                };
            }
            let from_context = matches!(&root, Some(ast::Expr::FieldExpr(f)) if f.name_ref().is_some_and(|n| matches!(n.text().to_string().as_str(), "main" | "sub")));
            let from_tensor = root
                .as_ref()
                .and_then(var_name)
                .is_some_and(|v| matches!(self.vars.get(&v), Some(Val::Tensor { .. })));
            if from_context || from_tensor {
                return Some(method);
            }
        }
        None
    }

    /// A closure: evaluated where it is written (its chains are checked there), with its
    /// parameters typed by their annotations; an unannotated parameter is not followed. The
    /// closure's value is what its body gives, which every call returns (a closure has one
    /// type).
    fn closure(&mut self, c: &ast::ClosureExpr) -> Val {
        let saved = (
            self.vars.clone(),
            self.ends.clone(),
            self.consts.clone(),
            self.values.clone(),
        );
        for p in c.param_list().into_iter().flat_map(|l| l.params()) {
            let Some(pat) = p.pat() else { continue };
            let annotated = p
                .ty()
                .and_then(|t| tensor_type(&t, self.env, &self.scope, &mut self.model.problems));
            let v = match annotated {
                Some(ty) => Val::Tensor {
                    ty,
                    tu: None,
                    engines: Vec::new(),
                },
                None => {
                    let what = format!(
                        "a tensor passed into a closure through `{}`",
                        snippet(pat.syntax())
                    );
                    Val::Lost(Construct::new(pat.syntax(), what))
                }
            };
            self.bind_pat(&pat, v);
        }
        let body = c.body().map_or(Val::Unknown, |b| self.top(&b, None, None));
        (self.vars, self.ends, self.consts, self.values) = saved;
        self.last_ends.clear();
        Val::Closure(Box::new(body))
    }

    /// A macro call used as a value (`m!`, `axes!` and `i!` are types and declarations, read
    /// elsewhere): `vec![a, b]` of tensors is an array of them; an engine chain written
    /// inside any other macro is not checked, which is said at once; the value is not
    /// followed.
    fn macro_expr(&mut self, m: &ast::MacroExpr) -> Val {
        let Some(call) = m.macro_call() else {
            return Val::Unknown;
        };
        let name = call
            .path()
            .and_then(|p| p.segment())
            .and_then(|s| s.name_ref())
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        if matches!(name.as_str(), "m" | "i" | "axes") {
            return Val::Unknown;
        }
        if matches!(
            name.as_str(),
            "todo" | "unimplemented" | "panic" | "unreachable"
        ) {
            return Val::Never;
        }
        let end = call
            .excl_token()
            .map_or(call.syntax().text_range().end(), |t| t.text_range().end());
        let at = Span::new(
            u32::from(call.syntax().text_range().start()) as usize,
            u32::from(end) as usize,
        );
        let tokens: Vec<ra_ap_syntax::SyntaxToken> = call
            .token_tree()
            .map(|t| {
                t.syntax()
                    .descendants_with_tokens()
                    .filter_map(|e| e.into_token())
                    .filter(|t| !t.kind().is_trivia())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(method) = call.token_tree().and_then(|t| self.engine_chain_in(&t)) {
            self.not_analysed(NotFollowed::InMacro {
                at,
                name: name.to_string(),
                method,
            });
        }
        if name == "vec" {
            // `vec![a, b]` of tensor variables.
            let vals: Vec<Val> = tokens
                .iter()
                .filter(|t| t.kind() == ra_ap_syntax::SyntaxKind::IDENT)
                .map(|t| self.vars.get(t.text()).cloned().unwrap_or(Val::Unknown))
                .collect();
            if let v @ Val::Many { .. } = array_of(vals) {
                return v;
            }
        }
        let what = format!("the value of `{name}!`");
        Val::Lost(Construct { span: at, what })
    }

    fn call(&mut self, c: &ast::CallExpr, awaited: bool) -> Val {
        let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
            return Val::Unknown;
        };
        let Some(path) = callee.path() else {
            return Val::Unknown;
        };
        let Some(last) = path.segment() else {
            return Val::Unknown;
        };
        let fname = last
            .name_ref()
            .map(|n| n.text().to_string())
            .unwrap_or_default();
        let args: Vec<ast::Expr> = c.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        // `HbmTensor::<D, Chip, Element>::from_addr(a)`, `HostTensor::<D, M>::rand(..)`,
        // `Output::from_addr(a)` of a whole tensor type alias.
        if let Some(ty) = self.constructed_type(&path) {
            return self.construct(ty, &fname, &args);
        }
        if path.qualifier().is_none() && fname == "launch" {
            if !awaited {
                self.model.problems.push(
                    Kernel::LaunchNotAwaited {
                        at: span_of(last.syntax().text_range()),
                    }
                    .into(),
                );
            }
            return self.launch(&args);
        }
        let key = callee_key(&path);
        if let Some(sig) = key.as_ref().and_then(|k| self.env.fn_sig(k)).cloned() {
            let mut streams = Vec::new();
            let vals: Vec<Val> = args
                .iter()
                .enumerate()
                .map(|(k, a)| {
                    let v = self.top(a, sig.params.get(k).cloned().flatten(), None);
                    streams.push(self.pass_so_far(&v));
                    v
                })
                .collect();
            let mut bound = self.bound_by(&args, last.generic_arg_list(), &sig, &vals);
            bound.streams = streams;
            let span = span_of(path.syntax().text_range());
            let result = self.continuation_of(&sig, span);
            if let Some(callee) = key.clone() {
                self.model.calls.push(super::HelperCall {
                    callee,
                    span,
                    bound,
                    iteration: self.iteration,
                    launched: false,
                    result,
                });
            }
            let what = format!("the result of `{}(..)`", snippet(callee.syntax()));
            return sig_value(sig, Construct::new(callee.syntax(), what));
        }
        // A closure bound to a variable: every call gives what its body gives.
        if path.qualifier().is_none()
            && let Some(v) = self.vars.get(&fname).cloned()
        {
            for a in &args {
                self.arg_expr(a);
            }
            return match v {
                Val::Closure(body) => *body,
                Val::Lost(c) => Val::Lost(c),
                _ => Val::Unknown,
            };
        }
        // Wrappers the model sees through (`Ok(t)` as a helper's tail, `Some(t)`).
        let through = matches!(
            key.as_deref(),
            Some("Some" | "Ok" | "Box::new" | "Rc::new" | "Arc::new" | "std::hint::black_box")
        );
        if through && let [a] = args.as_slice() {
            return self.top(a, None, None);
        }
        // An engine chain passed straight to a function is still a chain.
        for a in &args {
            if passes_a_chain(a) {
                self.top(a, None, None);
            } else {
                self.arg_expr(a);
            }
        }
        self.last_ends.clear();
        let what = format!("the result of `{}(..)`", snippet(callee.syntax()));
        Val::Lost(Construct::new(callee.syntax(), what))
    }

    /// The tensor type a constructor's path names (`Output::from_addr`,
    /// `HbmTensor::<D, Chip, Element>::from_addr`), when it names one.
    fn constructed_type(&self, path: &ast::Path) -> Option<TensorTy> {
        let q = path.qualifier()?;
        if let Some(ty) = path_key(&q).and_then(|k| self.env.tensor_alias(&k)) {
            return Some(ty.clone());
        }
        let seg = q.segment()?;
        let kind = Kind::from_name(seg.name_ref()?.text())?;
        let mut ty = TensorTy::new(kind);
        if let Some(ga) = seg.generic_arg_list() {
            apply_generics(&mut ty, kind.params(), &ga, &self.scope);
        }
        Some(ty)
    }

    /// A tensor made by the constructor `fname` of its type: `from_addr(a)` places it at `a`
    /// when `a` is a constant.
    fn construct(&mut self, ty: TensorTy, fname: &str, args: &[ast::Expr]) -> Val {
        for a in args {
            self.arg_expr(a);
        }
        if fname == "from_addr"
            && let [a] = args
            && let Ok(value::Value::Int(address)) = self.value_of(a).0
        {
            self.model.placements.push(super::Placement {
                arg: self.value_arg(a),
                address,
                ty: ty.clone(),
            });
        }
        Val::Tensor {
            ty,
            tu: None,
            engines: Vec::new(),
        }
    }

    /// `launch(kernel, (&mut ctx, &a, &b))`: the tuple takes the kernel's parameter types (as
    /// rustc infers them), the kernel is checked again with the addresses the host placed its
    /// tensors at (a [`super::HelperCall`] launched), and the result is the kernel's return
    /// type.
    fn launch(&mut self, args: &[ast::Expr]) -> Val {
        let Some(ast::Expr::PathExpr(k)) = args.first() else {
            return Val::Unknown;
        };
        let Some(kname) = k.path().as_ref().and_then(path_key) else {
            return Val::Unknown;
        };
        let Some(sig) = self.env.fn_sig(&kname).cloned() else {
            return Val::Unknown;
        };
        if let Some(ast::Expr::TupleExpr(t)) = args.get(1) {
            let fields: Vec<ast::Expr> = t.fields().collect();
            for (field, param) in fields.iter().zip(&sig.params) {
                let (Some(param), Some(var)) = (param, var_name(field)) else {
                    continue;
                };
                self.refine_var(&var, param);
            }
            // The kernel is checked again with what the host placed where.
            let vals: Vec<Val> = fields
                .iter()
                .map(|f| {
                    var_name(f)
                        .and_then(|v| self.vars.get(&v).cloned())
                        .unwrap_or(Val::Unknown)
                })
                .collect();
            let bound = self.bound_by(&fields, None, &sig, &vals);
            self.model.calls.push(super::HelperCall {
                callee: kname,
                span: span_of(k.syntax().text_range()),
                bound,
                iteration: self.iteration,
                launched: true,
                result: None,
            });
        }
        match sig.ret {
            Some(ty) => Val::Tensor {
                ty,
                tu: None,
                engines: Vec::new(),
            },
            None => Val::Unknown,
        }
    }

    /// Fills a variable's unknown slots from a type it is used at (and the chain that made it).
    fn refine_var(&mut self, var: &str, want: &TensorTy) {
        let Some(Val::Tensor { ty, .. }) = self.vars.get_mut(var) else {
            return;
        };
        if ty.kind != want.kind {
            return;
        }
        fill(ty, want);
        let ty = ty.clone();
        if let Some(t) = self.model.tensors.iter_mut().rev().find(|t| t.name == var) {
            t.ty = ty.clone();
        }
        if let Some(step) = self
            .model
            .chains
            .iter_mut()
            .rev()
            .find(|c| c.binding.as_deref() == Some(var))
            .and_then(|c| c.steps.last_mut())
            && let Some(out) = step.output.as_mut()
        {
            fill(out, &ty);
        }
    }

    fn method_call(
        &mut self,
        m: &ast::MethodCallExpr,
        steps: &mut Vec<Step>,
        awaited: bool,
    ) -> Val {
        let recv = m
            .receiver()
            .map_or(Val::Unknown, |r| self.expr(&r, steps, false));
        let Some(name_ref) = m.name_ref() else {
            return Val::Unknown;
        };
        let name = name_ref.text().to_string();
        let library = self.model.library;
        let method = Method::resolve(&name, library);
        let span = span_of(name_ref.syntax().text_range());
        let args: Vec<ast::Expr> = m.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        let val_args: Vec<Arg> = args.iter().map(|a| self.value_arg(a)).collect();
        let gen_args: Vec<Arg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .map(|a| arg_of(a.syntax()))
                    .collect()
            })
            .unwrap_or_default();
        // A tile view written as the argument (`commit_view(out.view_mut().tile::<..>(i))`) is
        // recorded as a chain, as it is when bound by a `let`, so its tile is checked.
        let arg_vals: Vec<Val> = args
            .iter()
            .map(|a| {
                if is_tile_view(a) {
                    self.top(a, None, None)
                } else {
                    self.arg_expr(a)
                }
            })
            .collect();
        // On a value not followed, or an array of tensors, the methods other types have too
        // (`Iterator::collect`, `Option::transpose`, `clone`) are not taken for engine calls.
        let shared = name == "clone" || matches!(method, Method::Collect | Method::Transpose);
        let recv_kind = match &recv {
            Val::Tensor { ty, .. } => Some(ty.kind),
            _ => None,
        };
        if method.is_adapter()
            && let Val::Tensor { ty, tu, engines } = &recv
        {
            let first = m.generic_arg_list().and_then(|g| g.generic_args().next());
            self.model.adapters.push(Adapter {
                method: method.clone(),
                span,
                input: ty.clone(),
                generic: first
                    .as_ref()
                    .map(|g| (arg_of(g.syntax()), map_of(g, &self.scope))),
                args: val_args.clone(),
            });
            return self.adapt(&method, ty, *tu, engines, first, val_args, steps);
        }
        let spec = method
            .transfer_for(&name, library, recv_kind)
            .filter(|_| !(shared && matches!(recv, Val::Lost(_) | Val::Many { .. })));
        let Some(spec) = spec else {
            // A method of the crate's `impl` blocks on a value the model cannot type
            // (`self.apply(ctx, a)`): its signature.
            if !matches!(recv, Val::Tensor { .. } | Val::TuCtx(_) | Val::Many { .. })
                && let Some(sig) = self.env.method(&name).cloned()
            {
                for (k, a) in args.iter().enumerate() {
                    let expected = sig.params.get(k).cloned().flatten();
                    self.top(a, expected, None);
                }
                self.last_ends.clear();
                let what = format!("the result of `{}`", snippet(m.syntax()));
                return sig_value(sig, Construct::new(m.syntax(), what));
            }
            // Arrays of tensors iterate; values not followed stay so.
            match &recv {
                Val::Many { elem, enumerated } => {
                    return match name.as_str() {
                        "iter" | "iter_mut" | "into_iter" | "copied" | "cloned" | "clone" => {
                            Val::Many {
                                elem: elem.clone(),
                                enumerated: *enumerated,
                            }
                        }
                        "enumerate" => Val::Many {
                            elem: elem.clone(),
                            enumerated: true,
                        },
                        "len" | "is_empty" => Val::Unknown,
                        _ => {
                            let what = format!("`.{name}()` of an array of tensors");
                            Val::Lost(Construct::new(m.syntax(), what))
                        }
                    };
                }
                Val::Lost(c) => {
                    let of_self = matches!(m.receiver(), Some(ast::Expr::PathExpr(ref p)) if p.syntax().text() == "self");
                    return if of_self {
                        let what = format!("the result of `{}`", snippet(m.syntax()));
                        Val::Lost(Construct::new(m.syntax(), what))
                    } else {
                        Val::Lost(c.clone())
                    };
                }
                Val::Tensor { .. }
                    if matches!(
                        name.as_str(),
                        "clone" | "to_owned" | "borrow" | "as_ref" | "unwrap" | "expect"
                    ) =>
                {
                    return recv;
                }
                _ => {}
            }
            if matches!(recv, Val::Tensor { .. } | Val::TuCtx(_))
                && !super::methods::is_std_method(&name)
            {
                self.model.problems.push(
                    Unknown {
                        at: span,
                        primitive: Primitive::Method(name.clone()),
                    }
                    .into(),
                );
                steps.push(Step {
                    method,
                    span,
                    engine: None,
                    input: None,
                    output: None,
                    keep: Vec::new(),
                    context: None,
                    address: None,
                    awaited,
                    generics: gen_args.clone(),
                    args: val_args.clone(),
                });
            }
            // A method of a value the model cannot type (`loader.load(ctx)`): what it gives
            // may be a tensor.
            if matches!(recv, Val::Unknown) && !super::methods::is_std_method(&name) {
                let what = format!("the result of `{}`", snippet(m.syntax()));
                return Val::Lost(Construct::new(m.syntax(), what));
            }
            return Val::Unknown;
        };
        let generics: Vec<ast::GenericArg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .collect()
            })
            .unwrap_or_default();
        // A tensor the model did not follow, used here as one (the receiver, or the tensor a
        // pass begins from or aligns with).
        if let Val::Lost(c) = &recv {
            let c = c.clone();
            self.lost_use(&c, span);
            return Val::Unknown;
        }
        if matches!(spec.recv, Recv::TuContext | Recv::FirstArg) || method == Method::Align {
            let lost: Vec<Construct> = arg_vals
                .iter()
                .filter_map(|v| match v {
                    Val::Lost(c) => Some(c.clone()),
                    _ => None,
                })
                .collect();
            for c in &lost {
                self.lost_use(c, span);
            }
            if !lost.is_empty() {
                return Val::Unknown;
            }
        }
        if method.reads_value_args() {
            self.unknown_values(&args, &val_args, &arg_vals);
        }
        let address_expr = spec.address_arg.and_then(|k| args.get(k));
        // An address is an integer value: through names, `if`s on constants and sizes too.
        let address = address_expr.and_then(|a| match self.value_of(a).0 {
            Ok(value::Value::Int(v)) => Some(v),
            _ => None,
        });
        if address.is_none()
            && let Some(a) = address_expr
        {
            self.address_call(a);
        }

        // The input stream and its context.
        let (input, tu, mut engines) = match (spec.recv, &recv) {
            (Recv::TuContext, Val::TuCtx(tu)) => {
                let Some(Val::Tensor { ty: src, .. }) = arg_vals.first() else {
                    if args.is_empty() {
                        // `begin_interleaved().fetch(&a, &b)`: the pseudo-API of the Kernel Examples.
                        self.model.problems.push(
                            Unknown {
                                at: span,
                                primitive: Primitive::WithoutTensors(name.clone()),
                            }
                            .into(),
                        );
                    }
                    return Val::Unknown;
                };
                if method == Method::BeginInterleaved {
                    self.check_interleave(&generics, &args, span);
                }
                let mut ty = TensorTy::new(Kind::Begin);
                ty.dtype = src.dtype;
                for s in [Slot::Chip, Slot::Cluster, Slot::Slice] {
                    if let Some(v) = src.get(s) {
                        ty.maps.insert(s, v.clone());
                    }
                }
                if let Some(v) = src.get(Slot::Element) {
                    ty.maps.insert(Slot::Packet, v.clone());
                }
                let time = if method == Method::BeginInterleaved {
                    generics
                        .first()
                        .and_then(|g| interleave_axis(g, &self.scope))
                } else {
                    Some(MapVal::unplaced("m![1]", Some(Layout::identity())))
                };
                if let Some(t) = time {
                    ty.maps.insert(Slot::Time, t);
                }
                steps.push(Step {
                    method,
                    span,
                    engine: Some(Engine::Begin),
                    input: Some(src.clone()),
                    output: Some(ty.clone()),
                    keep: Vec::new(),
                    context: Some(*tu),
                    address: None,
                    awaited,
                    generics: gen_args.clone(),
                    args: val_args.clone(),
                });
                return Val::Tensor {
                    ty,
                    tu: Some(*tu),
                    engines: vec![Engine::Begin],
                };
            }
            (Recv::Tensor, Val::Tensor { ty, tu, engines }) => (ty.clone(), *tu, engines.clone()),
            (Recv::FirstArg, Val::TuCtx(_) | Val::Dma(_)) => match arg_vals.first() {
                Some(Val::Tensor { ty, .. }) => (ty.clone(), None, Vec::new()),
                _ => return Val::Unknown,
            },
            _ => return Val::Unknown,
        };

        // The pipeline state machine.
        let Some(out_kind) = (spec.output)(input.kind) else {
            self.order_error(&method, spec.engine, &input, span);
            steps.push(Step {
                method,
                span,
                engine: Some(spec.engine),
                input: Some(input),
                output: None,
                keep: Vec::new(),
                context: tu,
                address,
                awaited,
                generics: gen_args.clone(),
                args: val_args.clone(),
            });
            return Val::Unknown;
        };
        if spec.engine != Engine::Memory {
            // The step a sub-context commit cannot follow (KRN-006 points at it).
            // This expression's steps first, then those of the chain it continues (a pass
            // split over `let` bindings is one chain).
            let breaks = |s: &&Step| matches!(s.engine, Some(Engine::Cast | Engine::Transpose));
            let offender = steps
                .iter()
                .rev()
                .find(breaks)
                .or_else(|| {
                    self.root.iter().flatten().find_map(|(i, n)| {
                        let earlier = self.model.chains.get(*i)?.steps.get(..*n)?;
                        earlier.iter().rev().find(breaks)
                    })
                })
                .map(|s| (s.method.clone(), s.span));
            self.context_rules(
                &method,
                spec.engine,
                &input,
                tu,
                &engines,
                &generics,
                span,
                offender,
            );
            if engines.last() != Some(&spec.engine) {
                engines.push(spec.engine);
            }
        } else {
            self.dma_rules(&method, spec.is_async, awaited, &arg_vals, span);
        }

        let mut out = TensorTy::new(out_kind);
        for s in spec.keep {
            if *s == Slot::D {
                out.dtype = input.dtype;
            } else if let Some(v) = input.get(*s) {
                out.maps.insert(*s, v.clone());
            }
        }
        for (slot, g) in spec.generics.iter().zip(&generics) {
            set_slot(&mut out, *slot, g, &self.scope);
        }
        // A DMA into a destination view (`to_dm_view(dma, dst)`) writes the destination's
        // layout.
        let returns_nothing = method.returns_nothing(&name);
        if returns_nothing && let Some(Val::Tensor { ty: dst, .. }) = arg_vals.get(1) {
            for s in [Slot::Chip, Slot::Cluster, Slot::Slice, Slot::Element] {
                if let Some(v) = dst.get(s) {
                    out.maps.insert(s, v.clone());
                }
            }
        }
        match method {
            Method::Contract => out.dtype = input.dtype.and_then(Dtype::widened),
            Method::VectorFxpToFp => out.dtype = Some(Dtype::F32),
            Method::VectorFpToFxp => out.dtype = Some(Dtype::I32),
            Method::Align => {
                if !out.maps.contains_key(&Slot::Row)
                    && let Some(Val::Tensor { ty: trf, .. }) = arg_vals.first()
                    && let Some(r) = trf.get(Slot::Row)
                {
                    out.maps.insert(Slot::Row, r.clone());
                }
            }
            _ => {}
        }
        steps.push(Step {
            method,
            span,
            engine: Some(spec.engine),
            input: Some(input),
            output: Some(out.clone()),
            keep: spec.keep.to_vec(),
            context: tu,
            address,
            awaited,
            generics: gen_args.clone(),
            args: val_args.clone(),
        });
        if returns_nothing {
            return Val::Unknown;
        }
        let tu = if out_kind.is_stream() { tu } else { None };
        Val::Tensor {
            ty: out,
            tu,
            engines,
        }
    }

    /// A stream adapter of furiosa-opt-std (`fetch_cast::<D>()`, `fetch_zero_point_sub::<D>(zp)`,
    /// `commit_trim::<P>()`, `commit_cast::<D>()`): the stream with one property changed, no
    /// step of its own. A fetch adapter is folded into the fetch it adapts, which then reads
    /// as the manual's `fetch::<D, Time, Packet>` (`library-v06.md` §3.3), so the fetch rules
    /// check the conversion.
    #[allow(clippy::too_many_arguments)]
    fn adapt(
        &mut self,
        method: &Method,
        ty: &TensorTy,
        tu: Option<Tu>,
        engines: &[Engine],
        first: Option<ast::GenericArg>,
        args: Vec<Arg>,
        steps: &mut [Step],
    ) -> Val {
        let mut out = ty.clone();
        // `commit_trim::<P>()` keeps the stream as the Commit Engine receives it: the manual's
        // commit trims implicitly, and its rules (CMT-001/002) read the untrimmed packet.
        if *method != Method::CommitTrim
            && let Some(g) = &first
        {
            set_slot(&mut out, Slot::D, g, &self.scope);
        }
        if matches!(
            method,
            Method::FetchCast | Method::FetchTableLookup | Method::FetchZeroPointSub
        ) && let Some(fetch) = steps.iter_mut().rev().find(|s| s.method.is_fetch())
        {
            if let Some(o) = fetch.output.as_mut() {
                o.dtype = out.dtype;
            }
            if let Some(g) = &first {
                fetch.generics.insert(0, arg_of(g.syntax()));
            }
            match method {
                Method::FetchTableLookup => fetch.method = Method::FetchWithTable,
                Method::FetchZeroPointSub => {
                    fetch.method = Method::FetchWithZeroPoint;
                    fetch.args.extend(args);
                }
                _ => {}
            }
        }
        Val::Tensor {
            ty: out,
            tu,
            engines: engines.to_vec(),
        }
    }

    /// An address computed by a call visa-lint cannot evaluate, with constant arguments (so
    /// it would be a constant if the call were followed): once.
    /// Reports each value argument of an engine call whose value visa-lint cannot know (a
    /// parameter, a `let` of something it does not evaluate, an `if` whose arms differ), once:
    /// the rules that read it skip it.
    fn unknown_values(&mut self, exprs: &[ast::Expr], args: &[Arg], vals: &[Val]) {
        for ((e, arg), val) in exprs.iter().zip(args).zip(vals) {
            let Some(Err(unknown)) = &arg.value else {
                continue;
            };
            if !matches!(val, Val::Unknown | Val::Lost(_)) || !self.names_a_value(e) {
                continue;
            }
            self.not_analysed(NotFollowed::Value {
                at: arg.span,
                text: snippet(e.syntax()),
                why: unknown.why.clone(),
            });
        }
    }

    /// Whether `e` stands for a compile-time value (not a tensor, a context or a closure): a
    /// name the function binds to a value, a variant or struct literal, or an `if`/`match`.
    fn names_a_value(&self, e: &ast::Expr) -> bool {
        match e {
            ast::Expr::ParenExpr(p) => p.expr().is_some_and(|x| self.names_a_value(&x)),
            ast::Expr::PathExpr(p) => p
                .path()
                .and_then(|p| path_key(&p))
                .is_some_and(|k| self.values.contains_key(&k)),
            ast::Expr::RecordExpr(_) | ast::Expr::IfExpr(_) | ast::Expr::MatchExpr(_) => true,
            // `BASE + OFF`, `-at`, `at as u64`: computed from a value.
            ast::Expr::BinExpr(b) => [b.lhs(), b.rhs()]
                .into_iter()
                .flatten()
                .any(|x| self.names_a_value(&x)),
            ast::Expr::PrefixExpr(p) => p.expr().is_some_and(|x| self.names_a_value(&x)),
            ast::Expr::CastExpr(c) => c.expr().is_some_and(|x| self.names_a_value(&x)),
            _ => false,
        }
    }

    fn address_call(&mut self, a: &ast::Expr) {
        let calls = std::iter::once(a.syntax().clone())
            .chain(a.syntax().descendants().skip(1))
            .filter_map(ast::CallExpr::cast);
        for c in calls {
            let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
                continue;
            };
            let constant_args = c.arg_list().is_some_and(|l| {
                l.args()
                    .all(|x| consts::eval_in(&x, &self.consts, &self.env.const_fns).is_some())
            });
            if !constant_args {
                continue;
            }
            let name = snippet(callee.syntax());
            self.not_analysed(NotFollowed::AddressCall {
                at: span_of(c.syntax().text_range()),
                name,
            });
            return;
        }
    }

    /// A method the receiver's pipeline position does not have.
    fn order_error(&mut self, method: &Method, engine: Engine, input: &TensorTy, span: Span) {
        let Some(at) = Engine::of_kind(input.kind) else {
            return;
        };
        if engine == Engine::Memory {
            return;
        }
        let needs_collect = matches!(input.kind, Kind::Fetch | Kind::Switch)
            && matches!(
                engine,
                Engine::Contraction | Engine::Vector | Engine::Cast | Engine::Transpose
            )
            || (matches!(input.kind, Kind::Fetch | Kind::Switch)
                && matches!(method, Method::ToTrf | Method::ToVrf));
        let method = method.clone();
        let problem = if needs_collect {
            Kernel::NeedsCollect {
                at: span,
                method,
                engine,
            }
        } else if input.kind == Kind::Begin {
            Kernel::NeedsFetch { at: span, method }
        } else if engine <= at && !(engine == Engine::Contraction && at == Engine::Contraction) {
            Kernel::OutOfOrder {
                at: span,
                method,
                engine,
                after: at,
            }
        } else {
            Kernel::NotAvailable {
                at: span,
                method,
                on: input.kind,
                after: at,
            }
        };
        self.model.problems.push(problem.into());
    }

    /// What the sub context may do.
    #[allow(clippy::too_many_arguments)]
    fn context_rules(
        &mut self,
        method: &Method,
        engine: Engine,
        input: &TensorTy,
        tu: Option<Tu>,
        engines: &[Engine],
        generics: &[ast::GenericArg],
        span: Span,
        offender: Option<(Method, Span)>,
    ) {
        if tu != Some(Tu::Sub) {
            return;
        }
        match engine {
            Engine::Contraction | Engine::Vector
                if !matches!(
                    input.kind,
                    Kind::AlignedPair | Kind::Contraction | Kind::Vector(_)
                ) =>
            {
                self.model.problems.push(
                    Kernel::SubCompute {
                        at: span,
                        method: method.clone(),
                        engine,
                    }
                    .into(),
                );
            }
            Engine::Commit
                if engines
                    .iter()
                    .any(|e| matches!(e, Engine::Cast | Engine::Transpose)) =>
            {
                self.model
                    .problems
                    .push(Kernel::SubCommitAfterCast { at: span, offender }.into());
            }
            Engine::Fetch => {
                let casting = *method == Method::Fetch
                    && generics
                        .first()
                        .and_then(dtype_of)
                        .zip(input.dtype)
                        .is_some_and(|(d2, d)| d2 != d);
                if *method == Method::FetchWithTable || casting {
                    self.model
                        .problems
                        .push(Kernel::SubFetchAdapter { at: span, casting }.into());
                }
            }
            _ => {}
        }
    }

    /// DMA contexts and `.await`.
    fn dma_rules(
        &mut self,
        method: &Method,
        is_async: bool,
        awaited: bool,
        args: &[Val],
        span: Span,
    ) {
        let host_side = matches!(self.model.kind, FnKind::Host | FnKind::Plain);
        let dma = args.iter().find_map(|a| match a {
            Val::Dma(d) => Some(*d),
            _ => None,
        });
        match (method, dma) {
            (Method::ToDm, Some(Dma::Pcie)) => self
                .model
                .problems
                .push(Kernel::DmOverPcie { at: span }.into()),
            (Method::ToHost, Some(Dma::Tensor)) => self
                .model
                .problems
                .push(Kernel::HostOverTensorDma { at: span }.into()),
            _ => {}
        }
        if is_async && dma == Some(Dma::Pcie) && !awaited && host_side {
            self.model.problems.push(
                Kernel::PcieNotAwaited {
                    at: span,
                    method: method.clone(),
                }
                .into(),
            );
        }
        if awaited
            && matches!(self.model.kind, FnKind::Device { .. })
            && (dma == Some(Dma::Tensor) || !is_async)
        {
            self.model.problems.push(
                Kernel::AwaitedInDevice {
                    at: span,
                    method: method.clone(),
                }
                .into(),
            );
        }
    }

    /// Two tensors, and an interleave axis of size 2.
    fn check_interleave(&mut self, generics: &[ast::GenericArg], args: &[ast::Expr], span: Span) {
        if args.len() != 2 {
            self.model.problems.push(
                Kernel::InterleaveCount {
                    at: span,
                    count: args.len(),
                }
                .into(),
            );
        }
        if let Some(g) = generics.first()
            && let Some(v) = interleave_axis(g, &self.scope)
            && let Some(l) = &v.layout
            && l.size != 2
        {
            self.model.problems.push(
                Kernel::InterleaveAxis {
                    at: span,
                    axis: v.text,
                    size: l.size,
                }
                .into(),
            );
        }
    }
}

/// The interleave axis `I` of `begin_interleaved::<I, ...>` as the mapping `m![I]`.
fn interleave_axis(g: &ast::GenericArg, scope: &Scope) -> Option<MapVal> {
    let ast::GenericArg::TypeArg(ta) = g else {
        return None;
    };
    let ast::Type::PathType(p) = ta.ty()? else {
        return None;
    };
    let name = path_key(&p.path()?)?;
    let axis = scope.axes.get(&name)?;
    Some(MapVal::unplaced(
        format!("m![{name}]"),
        Some(Layout::symbol(axis.axis.clone())),
    ))
}

fn arg_of(node: &ra_ap_syntax::SyntaxNode) -> Arg {
    Arg::written(crate::syntax::node_text(node), span_of(node.text_range()))
}

/// The function a call's path names, by its key: a helper named with a turbofish
/// (`stage_past::<1>`, `helpers::tile::<4>`) is the helper of that name.
fn callee_key(path: &ast::Path) -> Option<String> {
    if let Some(key) = path_key(path) {
        return Some(key);
    }
    let last = path.segment()?;
    last.generic_arg_list()?;
    let name = last.name_ref()?.text().to_string();
    match path.qualifier() {
        Some(q) => Some(format!("{}::{name}", path_key(&q)?)),
        None => Some(name),
    }
}

/// What a call of a helper or method with this signature gives; `lost` names the call for an
/// opaque result.
fn sig_value(sig: FnSig, lost: Construct) -> Val {
    let tensor = |ty| Val::Tensor {
        ty,
        tu: None,
        engines: Vec::new(),
    };
    match sig.ret {
        Some(ty) => tensor(ty),
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

/// Whether an argument is an engine chain (a pass, or a DMA transfer), which is recorded as a
/// chain even when the function it is passed to is unknown.
fn passes_a_chain(e: &ast::Expr) -> bool {
    let mut cur = Some(e.clone());
    while let Some(x) = cur {
        cur = match x {
            ast::Expr::MethodCallExpr(m) => {
                let method = m.name_ref().map(|n| Method::from_name(n.text()));
                let transfer = method.as_ref().and_then(Method::transfer);
                // A device engine, or a DMA transfer (`to_dm`, `to_hbm`, `to_host`).
                let dma = matches!(method, Some(Method::ToDm | Method::ToHbm | Method::ToHost));
                if transfer.is_some_and(|s| s.engine != Engine::Memory) || dma {
                    return true;
                }
                m.receiver()
            }
            ast::Expr::AwaitExpr(a) => a.expr(),
            ast::Expr::TryExpr(t) => t.expr(),
            ast::Expr::RefExpr(r) => r.expr(),
            ast::Expr::ParenExpr(p) => p.expr(),
            _ => None,
        };
    }
    false
}

/// Whether an argument is a tile view (`out.view_mut().tile::<..>(i)`, possibly behind `&` or
/// parentheses).
fn is_tile_view(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::MethodCallExpr(m) => m
            .name_ref()
            .is_some_and(|n| Method::from_name(n.text()) == Method::Tile),
        ast::Expr::RefExpr(r) => r.expr().is_some_and(|x| is_tile_view(&x)),
        ast::Expr::ParenExpr(p) => p.expr().is_some_and(|x| is_tile_view(&x)),
        _ => false,
    }
}

/// An array of values: values of one type (tensors of one kind, tuples of them) make an array
/// of them (what the elements disagree on is unknown); otherwise unknown, or not followed if an
/// element is not.
fn array_of(vals: Vec<Val>) -> Val {
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
fn join_elem(a: Val, b: Val) -> Option<Val> {
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
fn fill(ty: &mut TensorTy, want: &TensorTy) {
    if ty.dtype.is_none() {
        ty.dtype = want.dtype;
    }
    for (s, v) in &want.maps {
        ty.maps.insert_if_absent(*s, || v.clone());
    }
}

/// The plain variable a method chain starts from (`x` in `x.view().to_hbm(…).await`).
fn root_var(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::MethodCallExpr(m) => root_var(&m.receiver()?),
        ast::Expr::AwaitExpr(a) => root_var(&a.expr()?),
        ast::Expr::TryExpr(t) => root_var(&t.expr()?),
        ast::Expr::ParenExpr(p) => root_var(&p.expr()?),
        _ => var_name(e),
    }
}

/// Whether an initializer is a `from_addr(..)` call, in an `unsafe` block or parentheses.
fn is_from_addr(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::CallExpr(c) => matches!(c.expr(), Some(ast::Expr::PathExpr(p))
            if p.path().and_then(|p| p.segment()?.name_ref()).is_some_and(|n| n.text() == "from_addr")),
        ast::Expr::ParenExpr(p) => p.expr().is_some_and(|x| is_from_addr(&x)),
        ast::Expr::BlockExpr(b) => b
            .stmt_list()
            .and_then(|l| l.tail_expr())
            .is_some_and(|x| is_from_addr(&x)),
        _ => false,
    }
}

/// Whether the variable `name` a `let` binds is assigned (`name = ..`, `name += ..`) or
/// borrowed mutably (`&mut name`) later in the block it lives in.
fn assigned_after(l: &ast::LetStmt, name: &str) -> bool {
    l.syntax()
        .siblings(ra_ap_syntax::Direction::Next)
        .skip(1)
        .flat_map(|s| s.descendants())
        .any(|n| assigns(&n, name))
}

/// `name = ..`, `name op= ..` or `&mut name`.
fn assigns(n: &ra_ap_syntax::SyntaxNode, name: &str) -> bool {
    if let Some(b) = ast::BinExpr::cast(n.clone())
        && matches!(b.op_kind(), Some(ast::BinaryOp::Assignment { .. }))
    {
        return b.lhs().and_then(|l| var_name(&l)).as_deref() == Some(name);
    }
    if let Some(r) = ast::RefExpr::cast(n.clone())
        && r.mut_token().is_some()
    {
        return r.expr().and_then(|e| var_name(&e)).as_deref() == Some(name);
    }
    false
}

/// The step of `var += step` when it is the last statement of `body`.
fn last_step(body: &ast::BlockExpr, var: &str) -> Option<ast::Expr> {
    let list = body.stmt_list()?;
    let last = match list.tail_expr() {
        Some(t) => t,
        None => match list.statements().last()? {
            ast::Stmt::ExprStmt(e) => e.expr()?,
            _ => return None,
        },
    };
    let ast::Expr::BinExpr(b) = last else {
        return None;
    };
    let add = Some(ast::BinaryOp::Assignment {
        op: Some(ast::ArithOp::Add),
    });
    (b.op_kind() == add && b.lhs().as_ref().and_then(var_name).as_deref() == Some(var))
        .then(|| b.rhs())
        .flatten()
}

/// `&x`, `x`: the variable an argument names.
fn var_name(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::RefExpr(r) => var_name(&r.expr()?),
        ast::Expr::PathExpr(p) => {
            let path = p.path()?;
            path.qualifier().is_none().then_some(())?;
            Some(path.segment()?.name_ref()?.text().to_string())
        }
        _ => None,
    }
}

fn kept_through_stream(steps: &[Step], slot: Slot) -> bool {
    steps
        .iter()
        .any(|s| s.engine.is_some_and(|e| e != Engine::Memory))
        && steps
            .iter()
            .all(|s| s.keep.contains(&slot) || s.engine == Some(Engine::Begin))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ra_ap_syntax::{AstNode, Edition, SourceFile};

    /// The model of `fun` in `src`, in an environment that declares the file's structs as
    /// `db::env_on` does.
    fn model(src: &str, fun: &str) -> FnModel {
        let file = SourceFile::parse(src, Edition::Edition2024).tree();
        let scope = crate::syntax::scope_of(
            &crate::syntax::model_of(file.syntax(), None),
            &Scope::default(),
        );
        let mut env = Env {
            scope,
            ..Env::default()
        };
        for s in file.syntax().descendants().filter_map(ast::Struct::cast) {
            if let Some(n) = ast::HasName::name(&s) {
                env.declare_type(s.syntax(), n.text().to_string());
            }
        }
        let f = file
            .syntax()
            .descendants()
            .filter_map(ast::Fn::cast)
            .find(|f| ast::HasName::name(f).is_some_and(|n| n.text() == fun));
        let Some(f) = f else {
            panic!("no function {fun}");
        };
        let scope = env.scope.clone();
        build_fn(
            &f,
            &env,
            scope,
            crate::library::Generation::OptStd,
            &super::super::Bound::default(),
        )
    }

    const PAIR: &str = "axes![A = 4096, B = 8];\n\
        pub struct Pair<'a> { pub x: &'a HbmTensor<i8, m![1], m![A, B]>, pub n: usize }\n\
        #[device(chip = 1)]\n\
        pub fn k(ctx: &mut Context, pair: Pair<'_>) {\n\
            let _d = pair.x.to_dm::<m![1 # 2], m![A / 16], m![A % 16, B]>(&mut ctx.tdma);\n\
        }\n\
        fn h(ctx: &mut Context, pair: &Pair<'_>) {\n\
            let _d = pair.x.to_dm::<m![1 # 2], m![A / 16], m![A % 16, B]>(&mut ctx.tdma);\n\
        }\n";

    #[test]
    fn a_struct_parameter_is_its_tensor_fields() {
        for fun in ["k", "h"] {
            let m = model(PAIR, fun);
            assert!(m.problems.is_empty(), "{fun}: {:?}", m.problems);
            let input = m
                .chains
                .iter()
                .flat_map(|c| &c.steps)
                .find(|s| s.method == Method::ToDm)
                .and_then(|s| s.input.as_ref());
            assert!(
                input.is_some_and(|t| t.kind == Kind::Hbm),
                "{fun}: {:?}",
                m.chains
            );
        }
    }

    #[test]
    fn a_generic_struct_is_not_read() {
        let src = PAIR.replace("Pair<'a>", "Pair<'a, T>");
        let m = model(&src, "k");
        assert!(!m.problems.is_empty(), "{:?}", m.chains);
    }
}
