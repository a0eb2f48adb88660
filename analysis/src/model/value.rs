//! Compile-time values: what a kernel's value arguments (`SwitchConfig::Broadcast01 { .. }`,
//! `TrfAddress::FirstHalf`, `FxpBinaryOp::AddFxp`, sizes) are when the compiler traces it.
//!
//! The vendor compiler runs a kernel's body at trace time, so an argument bound by `let`,
//! chosen by an `if` whose condition is a constant, or named by a `const` item of any module
//! has one value there. [`eval`] computes it from the expression, the `let` bindings in scope
//! and the environment's `const` items; what it cannot know is [`Unknown`] with the reason,
//! which the rules report (VL-009) instead of going silent.

use super::consts::{self, ConstFn, path_key};
use crate::mapping;
use ra_ap_syntax::AstNode;
use ra_ap_syntax::ast::{
    self, BinaryOp, CmpOp, HasArgList, HasGenericArgs, LogicOp, Ordering, UnaryOp,
};
use std::collections::HashMap;

/// A value the kernel computes at compile time.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    Int(u64),
    Bool(bool),
    /// Another literal (a float, a negative number, a character), as written.
    Lit(String),
    /// An enum variant (or a struct), by its path as written without leading modules
    /// (`SwitchConfig::Broadcast01`), with its fields.
    Variant {
        path: String,
        fields: Fields,
    },
    Tuple(Vec<Value>),
    /// `[a, b]` (and `[a; n]`, its elements repeated).
    Array(Vec<Value>),
    /// A field of a struct, or an element of a tuple or array, that the evaluator cannot
    /// know (`Placement { q: BASE + 12, k: align_up(q + HbmTensor::<..>::size(), PAGE) }` where
    /// `size` is not evaluated): the other parts stay known, and reading this one gives why.
    /// Only [`eval_partial`] returns a value that holds one; [`eval`] gives the reason instead.
    Unknown(Unknown),
}

/// The fields of a variant or struct value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fields {
    Unit,
    Named(Vec<(String, Value)>),
    Positional(Vec<Value>),
}

/// Why a value is not known at compile time, for the "not checked" note: "`cfg` is a
/// parameter of `stage`", "it is chosen by `if wide`, which visa-lint cannot evaluate".
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unknown {
    pub why: String,
    /// Its low bits, where arithmetic on what is known decides them (`KV_POOL + page *
    /// 0x1_1000 + 4` is 4 modulo 4096).
    pub low: Option<LowBits>,
}

impl Unknown {
    /// A variable assigned after its `let`, whose assignments are not followed.
    pub fn assigned(name: &str) -> Unknown {
        Unknown::new(format!(
            "`{name}` is assigned in a loop or a closure (or borrowed `&mut`), and visa-lint \
             follows a variable only through assignments that run once"
        ))
    }

    pub fn new(why: impl Into<String>) -> Unknown {
        Unknown {
            why: why.into(),
            low: None,
        }
    }
}

mod low_bits;
mod statements;

pub use low_bits::LowBits;

/// A value, or why it is unknown.
pub type Eval = Result<Value, Unknown>;

impl Value {
    /// The value as Rust source text, the way the rules read a value argument written in place
    /// (`SwitchConfig::CustomBroadcast { ring_size: 32 }`).
    pub fn text(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Lit(t) => t.clone(),
            Value::Variant { path, fields } => match fields {
                Fields::Unit => path.clone(),
                Fields::Named(fs) => {
                    let body: Vec<String> = fs
                        .iter()
                        .map(|(n, v)| format!("{n}: {}", v.text()))
                        .collect();
                    format!("{path} {{ {} }}", body.join(", "))
                }
                Fields::Positional(vs) => {
                    let body: Vec<String> = vs.iter().map(Value::text).collect();
                    format!("{path}({})", body.join(", "))
                }
            },
            Value::Array(vs) => {
                let body: Vec<String> = vs.iter().map(Value::text).collect();
                format!("[{}]", body.join(", "))
            }
            Value::Tuple(vs) => {
                let body: Vec<String> = vs.iter().map(Value::text).collect();
                if vs.len() == 1 {
                    format!("({},)", body[0])
                } else {
                    format!("({})", body.join(", "))
                }
            }
            Value::Unknown(_) => "_".to_string(),
        }
    }

    /// The value as a diagnostic names it in passing (an iteration's `spec = ..`): its text, or
    /// for a struct too long to read in a line, its first field (`PassSpec { name: "dw_tail",
    /// .. }`).
    pub fn brief(&self) -> String {
        const READABLE: usize = 48;
        let text = self.text();
        match self {
            Value::Variant {
                path,
                fields: Fields::Named(fs),
            } if text.len() > READABLE && !fs.is_empty() => {
                let (n, v) = &fs[0];
                format!("{path} {{ {n}: {}, .. }}", v.brief())
            }
            _ => text,
        }
    }

    /// The first part of the value the evaluator does not know, if any.
    pub fn first_unknown(&self) -> Option<&Unknown> {
        match self {
            Value::Unknown(u) => Some(u),
            Value::Variant {
                fields: Fields::Named(fs),
                ..
            } => fs.iter().find_map(|(_, v)| v.first_unknown()),
            Value::Variant {
                fields: Fields::Positional(vs),
                ..
            }
            | Value::Tuple(vs)
            | Value::Array(vs) => vs.iter().find_map(Value::first_unknown),
            _ => None,
        }
    }

    /// Whether the value is a struct, tuple or array with a part the evaluator knows (whose
    /// fields are values, not tensors it does not evaluate), or an enum variant with fields
    /// (`Some(t)`: which variant it is, is known).
    pub fn knows_a_part(&self) -> bool {
        let known = |v: &Value| !matches!(v, Value::Unknown(_));
        match self {
            Value::Variant {
                fields: Fields::Positional(_),
                ..
            } => true,
            Value::Variant {
                fields: Fields::Named(fs),
                ..
            } => fs.iter().any(|(_, v)| known(v)),
            Value::Tuple(vs) | Value::Array(vs) => vs.iter().any(known),
            _ => false,
        }
    }

    /// The value when all of it is known, else why a part of it is not.
    pub fn whole(self) -> Eval {
        match self.first_unknown() {
            Some(u) => Err(u.clone()),
            None => Ok(self),
        }
    }

    /// A part read out of a value (a field, an element): unknown when it is.
    fn read(self) -> Eval {
        match self {
            Value::Unknown(u) => Err(u),
            v => Ok(v),
        }
    }
}

/// A part of a struct, tuple or array: its value, or the unknown it is.
fn part(v: Eval) -> Value {
    v.unwrap_or_else(Value::Unknown)
}

/// What an expression can name: the `let` bindings and `const` items in scope, the `const
/// fn`s, and the axes and aliases (for `A::SIZE`).
pub struct Names<'a> {
    /// A local binding or a `const` item that is not an integer, by its path key; `None` when
    /// the name is not a value the evaluator knows of.
    pub value: &'a dyn Fn(&str) -> Option<Eval>,
    pub ints: &'a HashMap<String, u64>,
    pub fns: &'a HashMap<String, ConstFn>,
    pub mapping: &'a mapping::Scope,
}

/// How deep nested expressions are followed (the nesting pre-scan bounds the tree; this bounds
/// the work of one argument).
const MAX_DEPTH: u32 = 64;

/// The value of `e`, and whether reaching it read a name (a `let`, a `const`): a value written
/// in place is read by the rules from its text, with spans inside it. A value with a part the
/// evaluator does not know is unknown, for that part's reason.
pub fn eval(e: &ast::Expr, names: &Names<'_>) -> (Eval, bool) {
    let (v, named) = eval_partial(e, names);
    (v.and_then(Value::whole), named)
}

/// The value of `e` as [`eval`] gives it, except that a struct, tuple or array keeps the parts
/// it knows beside those it does not ([`Value::Unknown`]): what a `let` or a `const` binds, so
/// that reading a known field of it is known.
pub fn eval_partial(e: &ast::Expr, names: &Names<'_>) -> (Eval, bool) {
    let mut named = false;
    statements::reset_budget();
    let v = eval_at(e, names, &mut named, 0);
    (v, named)
}

fn eval_at(e: &ast::Expr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    if depth > MAX_DEPTH {
        return Err(Unknown::new("it is nested too deeply to evaluate"));
    }
    let sub = |e: &ast::Expr, named: &mut bool| eval_at(e, names, named, depth + 1);
    if let Some(v) = int(e, names) {
        if !is_literal(e) {
            *named = true;
        }
        return Ok(Value::Int(v));
    }
    let v = match e {
        ast::Expr::Literal(l) => match l.kind() {
            ast::LiteralKind::Bool(b) => Ok(Value::Bool(b)),
            _ => Ok(Value::Lit(
                crate::syntax::node_text(l.syntax()).trim().to_string(),
            )),
        },
        ast::Expr::PrefixExpr(p) if p.op_kind() == Some(UnaryOp::Neg) => {
            match p.expr().map(|x| sub(&x, named)) {
                Some(Ok(v @ (Value::Int(_) | Value::Lit(_)))) => {
                    Ok(Value::Lit(format!("-{}", v.text())))
                }
                Some(Err(u)) => Err(u),
                _ => Err(not_evaluated(e)),
            }
        }
        ast::Expr::ParenExpr(p) => p.expr().map_or_else(|| Err(missing()), |x| sub(&x, named)),
        // `*addr` of a loop over `BASES.iter()`, `&BASE`: the value itself.
        ast::Expr::PrefixExpr(p) if p.op_kind() == Some(UnaryOp::Deref) => {
            p.expr().map_or_else(|| Err(missing()), |x| sub(&x, named))
        }
        ast::Expr::RefExpr(r) => r.expr().map_or_else(|| Err(missing()), |x| sub(&x, named)),
        ast::Expr::BlockExpr(b) => block(b, names, named, depth),
        ast::Expr::PathExpr(p) => name(p, names, named),
        ast::Expr::RecordExpr(r) => record(r, names, named, depth),
        ast::Expr::CallExpr(c) => tuple_variant(c, names, named, depth),
        ast::Expr::TupleExpr(t) => Ok(Value::Tuple(
            t.fields().map(|f| part(sub(&f, named))).collect(),
        )),
        ast::Expr::IfExpr(i) => if_expr(i, names, named, depth),
        ast::Expr::MatchExpr(m) => match_expr(m, names, named, depth),
        ast::Expr::ArrayExpr(a) => array(a, names, named, depth),
        ast::Expr::RangeExpr(r) => range(r, names, named, depth),
        ast::Expr::IndexExpr(i) => index(i, names, named, depth),
        ast::Expr::FieldExpr(f) => field(f, names, named, depth),
        ast::Expr::MethodCallExpr(m) => method(m, names, named, depth),
        ast::Expr::BinExpr(b) => logic(b, names, named, depth),
        ast::Expr::CastExpr(c) => cast(c, names, named, depth),
        ast::Expr::PrefixExpr(p) if p.op_kind() == Some(UnaryOp::Not) => {
            match p.expr().map(|x| sub(&x, named)) {
                Some(Ok(Value::Bool(b))) => Ok(Value::Bool(!b)),
                Some(Err(u)) => Err(u),
                _ => Err(not_evaluated(e)),
            }
        }
        _ => Err(not_evaluated(e)),
    };
    low_bits_kept(e, v)
}

/// An unknown integer's low bits hold for the arithmetic that computed them, and through
/// parentheses, names and casts; any other expression (an array indexed by it, a call given
/// it) gives something else, whose low bits are not its argument's.
fn low_bits_kept(e: &ast::Expr, v: Eval) -> Eval {
    match (e, v) {
        (
            ast::Expr::BinExpr(_)
            | ast::Expr::ParenExpr(_)
            | ast::Expr::PathExpr(_)
            | ast::Expr::CastExpr(_),
            v,
        ) => v,
        (_, Err(mut u)) => {
            u.low = None;
            Err(u)
        }
        (_, v) => v,
    }
}

fn missing() -> Unknown {
    Unknown::new("the expression is incomplete")
}

fn not_evaluated(e: &ast::Expr) -> Unknown {
    Unknown::new(format!("`{}` is not a value visa-lint evaluates", short(e)))
}

/// An expression's text for a message (see [`crate::syntax::snippet`]).
fn short(e: &ast::Expr) -> String {
    crate::syntax::snippet(e.syntax())
}

fn is_literal(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Literal(_) => true,
        ast::Expr::ParenExpr(p) => p.expr().is_some_and(|x| is_literal(&x)),
        _ => false,
    }
}

/// An integer: literals, `const` items, arithmetic, `const fn` calls and `A::SIZE`.
fn int(e: &ast::Expr, names: &Names<'_>) -> Option<u64> {
    consts::eval_sized(e, names.ints, names.fns, names.mapping)
}

/// `{ tail }`, or a block with statements (a `const fn`'s body), run as the compiler runs it.
fn block(b: &ast::BlockExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let list = b.stmt_list().ok_or_else(missing)?;
    if list.statements().next().is_some() {
        *named = true;
        return statements::run_block(&list, names, depth + 1);
    }
    let tail = list.tail_expr().ok_or_else(missing)?;
    eval_at(&tail, names, named, depth + 1)
}

/// A name: a local binding, a `const` item, or a unit variant (`TrfAddress::Full`).
fn name(p: &ast::PathExpr, names: &Names<'_>, named: &mut bool) -> Eval {
    let path = p.path().ok_or_else(missing)?;
    let key = path_key(&path).ok_or_else(|| {
        Unknown::new(format!(
            "`{}` is not a name visa-lint evaluates",
            crate::syntax::node_text(p.syntax())
        ))
    })?;
    // `<Bf16 as Elem>::BYTES` is the item `Bf16::BYTES`.
    let found = (names.value)(&key)
        .or_else(|| crate::syntax::without_trait(&key).and_then(|k| (names.value)(&k)));
    if let Some(v) = found {
        *named = true;
        return v.and_then(Value::read);
    }
    if let Some(variant) = variant_path(&path) {
        return Ok(Value::Variant {
            path: variant,
            fields: Fields::Unit,
        });
    }
    Err(Unknown::new(format!(
        "`{key}` is not a compile-time value visa-lint knows"
    )))
}

/// `Enum::Variant` (the last two segments of a path whose last segment is capitalised), or a
/// capitalised single name (a unit struct).
fn variant_path(path: &ast::Path) -> Option<String> {
    let segs: Vec<String> = path
        .segments()
        .filter_map(|s| s.name_ref().map(|n| n.text().to_string()))
        .collect();
    let last = segs.last()?;
    if !last.chars().next()?.is_uppercase() {
        return None;
    }
    // `N`, `TILES`, `Self::COUNT`: a constant's name (an `impl` block's const generic the call
    // did not bind, an associated constant), not a unit struct; an enum's variant may be
    // written in capitals (`Precision::F32`).
    let screaming = !last.chars().any(|c| c.is_lowercase());
    let qualifier = segs.len().checked_sub(2).map(|k| segs[k].as_str());
    if screaming && matches!(qualifier, None | Some("Self")) {
        return None;
    }
    Some(segs[segs.len().saturating_sub(2)..].join("::"))
}

/// `SwitchConfig::Broadcast01 { slice1: 2, slice0: N, time0 }`.
fn record(r: &ast::RecordExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let path = r.path().ok_or_else(missing)?;
    let variant = variant_path(&path).ok_or_else(|| {
        Unknown::new(format!(
            "`{}` is not a value visa-lint evaluates",
            crate::syntax::node_text(path.syntax())
        ))
    })?;
    let list = r.record_expr_field_list().ok_or_else(missing)?;
    // `Plan { addr: X, ..BASE }`: the fields not written are the base value's.
    let base = match list.spread() {
        Some(e) => match eval_at(&e, names, named, depth + 1)? {
            Value::Variant {
                fields: Fields::Named(fields),
                ..
            } => fields,
            _ => {
                return Err(Unknown::new(format!(
                    "`{variant} {{ .. }}` takes fields from a value visa-lint does not know as a struct"
                )));
            }
        },
        None => Vec::new(),
    };
    let mut fields = Vec::new();
    for f in list.fields() {
        let (name, value) = match (f.name_ref(), f.expr()) {
            (Some(n), Some(x)) => (
                n.text().to_string(),
                part(eval_at(&x, names, named, depth + 1)),
            ),
            // `{ ring_size }`: the field's shorthand names a binding.
            (None, Some(ast::Expr::PathExpr(p))) => {
                let name = crate::syntax::node_text(p.syntax()).trim().to_string();
                (name, part(self::name(&p, names, named)))
            }
            _ => return Err(missing()),
        };
        fields.push((name, value));
    }
    for (name, value) in base {
        if !fields.iter().any(|(n, _)| *n == name) {
            fields.push((name, value));
        }
    }
    // `Plan::<{ FAR }> { .. }`: a value of a generic type carries its type's arguments, which
    // a method called on it binds (see [`with_type_args`]).
    let type_args = path
        .segment()
        .and_then(|s| s.generic_arg_list())
        .map(|l| const_args(&l, names, depth))
        .filter(|a| a.iter().any(Option::is_some));
    Ok(Value::Variant {
        path: match type_args {
            Some(args) => typed_path(&variant, &args),
            None => variant,
        },
        fields: Fields::Named(fields),
    })
}

/// `Enum::Variant(a, b)`, or a call of a function whose body is one expression ([`helper`]);
/// any other call is unknown.
fn tuple_variant(c: &ast::CallExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let callee = match c.expr() {
        Some(ast::Expr::PathExpr(p)) => p.path(),
        _ => None,
    };
    if let Some(path) = &callee
        && let Some(f) = consts::callee_key(path)
            .or_else(|| typed_callee_key(path))
            .and_then(|k| names.fns.get(&k))
    {
        return helper(c, path, f, names, named, depth);
    }
    let Some(variant) = callee.as_ref().and_then(variant_path) else {
        let name = c
            .expr()
            .map_or_else(String::new, |x| crate::syntax::node_text(x.syntax()));
        return Err(Unknown::new(format!(
            "it is computed by a call of `{}`, which visa-lint does not evaluate",
            name.trim()
        )));
    };
    let args = c.arg_list().ok_or_else(missing)?;
    // The variant is known whatever its fields are (`Some(&bias)` of a tensor): a part not
    // known is kept as one (see [`eval_partial`]).
    let vs = args
        .args()
        .map(|a| part(eval_at(&a, names, named, depth + 1)))
        .collect();
    Ok(Value::Variant {
        path: variant,
        fields: Fields::Positional(vs),
    })
}

/// A call of a function whose body is one expression, as the compiler runs it when it traces
/// the kernel: the body evaluated with each parameter bound to its argument's value, and the
/// turbofish's types and constants written in (`group_config(BCAST_GROUP, 8)` → `SwitchConfig::
/// Broadcast1 { slice1: 4, slice0: 8 }`).
fn helper(
    c: &ast::CallExpr,
    path: &ast::Path,
    f: &ConstFn,
    names: &Names<'_>,
    named: &mut bool,
    depth: u32,
) -> Eval {
    let name = crate::syntax::node_text(path.syntax()).trim().to_string();
    let args: Vec<ast::Expr> = c.arg_list().ok_or_else(missing)?.args().collect();
    let turbofish = path.segment().and_then(|s| s.generic_arg_list());
    let type_args = path
        .qualifier()
        .and_then(|q| q.segment()?.generic_arg_list())
        .map(|l| const_args(&l, names, depth))
        .unwrap_or_default();
    let call = Call {
        name,
        args,
        turbofish,
        receiver: None,
        type_args,
    };
    run(&call, f, names, named, depth)
}

/// The key of a function called through a generic type, the type's turbofish left out
/// (`KvTiler::<{ KV_TILES }>::new` is `KvTiler::new`).
fn typed_callee_key(path: &ast::Path) -> Option<String> {
    let name = path.segment()?.name_ref()?.text().to_string();
    let ty = path.qualifier()?;
    let ty_seg = ty.segment()?;
    ty_seg.generic_arg_list()?;
    let ty_name = ty_seg.name_ref()?.text().to_string();
    match ty.qualifier() {
        Some(q) => Some(format!("{}::{ty_name}::{name}", path_key(&q)?)),
        None => Some(format!("{ty_name}::{name}")),
    }
}

/// A value of a generic type of the crate carries the values its type's generic arguments
/// were given in its path (`KvTiler::<4>`), so that a method called on it binds them.
fn with_type_args(v: Value, f: &ConstFn, args: &[Option<u64>]) -> Value {
    let Some(owner) = &f.owner else {
        return v;
    };
    match v {
        Value::Variant { path, fields } if path == owner.ty && !args.is_empty() => Value::Variant {
            path: typed_path(&path, args),
            fields,
        },
        v => v,
    }
}

/// `v` as the `let` annotation `ty` types it: `let ring: KvRing<4> = KvRing::new();` gives the
/// value the type's generic arguments (see [`with_type_args`]) that the call left to inference.
pub fn annotated(v: Value, ty: &ast::Type, names: &Names<'_>) -> Value {
    let ast::Type::PathType(t) = ty else {
        return v;
    };
    let Some(seg) = t.path().and_then(|p| p.segment()) else {
        return v;
    };
    let (Some(name), Some(args)) = (seg.name_ref(), seg.generic_arg_list()) else {
        return v;
    };
    match v {
        Value::Variant { path, fields } if path.as_str() == name.text() => Value::Variant {
            path: typed_path(&path, &const_args(&args, names, 0)),
            fields,
        },
        v => v,
    }
}

/// The values of a type's generic arguments, lifetimes left out; `None` for one that is a
/// type or not known.
fn const_args(list: &ast::GenericArgList, names: &Names<'_>, depth: u32) -> Vec<Option<u64>> {
    list.generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .map(|a| {
            consts::const_arg(&a, names.ints, names.fns, Some(names.mapping), depth)
                .or_else(|| flag_arg(&a, names, depth))
        })
        .collect()
}

/// A `bool` const argument (`{ config::TOKEN_MAJOR }`), as the 1 or 0 a value's path carries
/// (see [`typed_path`]; a `bool` parameter reads it back as `true` or `false`).
fn flag_arg(a: &ast::GenericArg, names: &Names<'_>, depth: u32) -> Option<u64> {
    let ast::GenericArg::ConstArg(c) = a else {
        return None;
    };
    match eval_at(&c.expr()?, names, &mut false, depth + 1) {
        Ok(Value::Bool(b)) => Some(u64::from(b)),
        _ => None,
    }
}

/// A value's path with the generic arguments of its type: `KvTiler` with `[Some(4), None]` is
/// `KvTiler::<4, _>` ([`type_args_of`] reads it back).
fn typed_path(path: &str, args: &[Option<u64>]) -> String {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.map_or_else(|| "_".to_string(), |v| v.to_string()))
        .collect();
    format!("{path}::<{}>", args.join(", "))
}

/// The generic arguments a value's path carries (see [`typed_path`]): `KvTiler::<4, _>`
/// gives `[Some(4), None]`.
fn type_args_of(path: &str) -> Vec<Option<u64>> {
    let Some(start) = path.find("::<") else {
        return Vec::new();
    };
    let inner = path[start + 3..].trim_end_matches('>');
    inner.split(',').map(|a| a.trim().parse().ok()).collect()
}

/// A call of a function the evaluator runs: its name for messages, its arguments, its
/// turbofish and, for a method, the value it is called on (`self`).
struct Call {
    name: String,
    args: Vec<ast::Expr>,
    turbofish: Option<ast::GenericArgList>,
    receiver: Option<Value>,
    /// The values of the generic arguments of the function's `impl` type, in the type's
    /// order, where the call gives them (`KvTiler::<{ KV_TILES }>::new()`, or a method called
    /// on a `KvTiler::<4>` value); `None` for one that is a type or not known.
    type_args: Vec<Option<u64>>,
}

/// `call` of `f` run as the compiler runs it when it traces the kernel: the body evaluated
/// with each parameter (and `self`) bound to its argument's value, and the turbofish's types
/// and constants written in.
fn run(call: &Call, f: &ConstFn, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let (name, args) = (&call.name, &call.args);
    if args.len() != f.params.len() {
        return Err(Unknown::new(format!(
            "`{name}` takes {} arguments, not {}",
            f.params.len(),
            args.len()
        )));
    }
    let mut bound: HashMap<String, Value> = HashMap::new();
    if let Some(v) = &call.receiver {
        bound.insert("self".to_string(), v.clone());
    }
    let mut ints = names.ints.clone();
    let mut inferred = HashMap::new();
    for ((p, a), length) in f.params.iter().zip(args).zip(&f.lengths) {
        let v = match eval_at(a, names, named, depth + 1) {
            Ok(v) => v,
            // An argument the body never reads (`ctx`, a tensor) need not be known.
            Err(_) if !mentions(&f.body, p) => continue,
            Err(u) => return Err(u),
        };
        if let Value::Int(i) = v {
            ints.insert(p.clone(), i);
        }
        if let (Some(g), Value::Array(items)) = (length, &v) {
            inferred.insert(g.clone(), items.len() as u64);
        }
        bound.insert(p.clone(), v);
    }
    // `pack(SIZES)` with `const fn pack<const R: usize>(sizes: [u64; R])`: rustc infers `R`
    // from the array's length.
    let all_inferred = f.generics.iter().all(|g| match g {
        consts::GenericParam::Const(n) => inferred.contains_key(n),
        consts::GenericParam::Type(_) | consts::GenericParam::Flag(_) => false,
    });
    let without;
    let f = if call.turbofish.is_none() && !f.generics.is_empty() && all_inferred {
        ints.extend(inferred);
        without = ConstFn {
            generics: Vec::new(),
            ..f.clone()
        };
        &without
    } else {
        f
    };
    // `impl<const TILES: usize> KvTiler<TILES>`: `TILES` is what the call's type gives it; a
    // `bool` parameter (`impl<const TOKEN_MAJOR: bool>`) is written in the body as it is.
    let owner_generics = f.owner.iter().flat_map(|o| &o.generics);
    let mut flags = HashMap::new();
    for (g, v) in owner_generics.zip(&call.type_args) {
        match (g, v) {
            (consts::GenericParam::Const(n), Some(v)) => {
                ints.insert(n.clone(), *v);
            }
            (consts::GenericParam::Flag(n), Some(v)) => {
                flags.insert(n.clone(), (*v != 0).to_string());
            }
            _ => {}
        }
    }
    let flagged;
    let f = if flags.is_empty() {
        f
    } else {
        flagged = ConstFn {
            body: consts::substituted(&f.body, &flags),
            ..f.clone()
        };
        &flagged
    };
    let given = (names.ints, names.fns, Some(names.mapping));
    let (body, generics) = consts::instantiate_with(f, call.turbofish.clone(), given, depth)
        .ok_or_else(|| Unknown::new(format!("the turbofish of `{name}` does not fit it")))?;
    ints.extend(generics);
    *named = true;
    let v = eval_with(&body, names, (&bound, &ints), named, depth + 1)?;
    Ok(with_type_args(v, f, &call.type_args))
}

/// Whether `body` names `param` (as a whole identifier).
fn mentions(body: &str, param: &str) -> bool {
    body.match_indices(param).any(|(at, _)| {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        !body[..at].chars().next_back().is_some_and(word)
            && !body[at + param.len()..].chars().next().is_some_and(word)
    })
}

/// `e` with `locals` (a call's parameters, a block's variables) in scope over `names`, and
/// `ints` the integers in scope.
fn eval_with(
    e: &ast::Expr,
    names: &Names<'_>,
    (locals, ints): (&HashMap<String, Value>, &HashMap<String, u64>),
    named: &mut bool,
    depth: u32,
) -> Eval {
    with_locals(names, (locals, ints), |inner| {
        eval_at(e, inner, named, depth)
    })
}

/// Runs `f` with `locals` in scope over `names`, and `ints` the integers in scope.
fn with_locals<R>(
    names: &Names<'_>,
    (locals, ints): (&HashMap<String, Value>, &HashMap<String, u64>),
    f: impl FnOnce(&Names<'_>) -> R,
) -> R {
    let lookup = |key: &str| {
        locals
            .get(key)
            .cloned()
            .map(Ok)
            .or_else(|| (names.value)(key))
    };
    f(&Names {
        value: &lookup,
        ints,
        fns: names.fns,
        mapping: names.mapping,
    })
}

/// `value.field` of a struct value, `value.0` of a tuple or tuple struct.
fn field(f: &ast::FieldExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let of = f.expr().ok_or_else(missing)?;
    let v = eval_at(&of, names, named, depth + 1)?;
    let name = f
        .name_ref()
        .map(|n| n.text().to_string())
        .ok_or_else(missing)?;
    let positional = |vs: &[Value]| name.parse::<usize>().ok().and_then(|k| vs.get(k).cloned());
    let found = match &v {
        Value::Variant {
            fields: Fields::Named(fs),
            ..
        } => fs.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone()),
        Value::Variant {
            fields: Fields::Positional(vs),
            ..
        }
        | Value::Tuple(vs) => positional(vs),
        _ => None,
    };
    found
        .ok_or_else(|| Unknown::new(format!("`{}` has no field `{name}`", v.text())))?
        .read()
}

/// `value.method(args)`: a method of the value's type whose body is one expression (see
/// [`run`]), found as `Type::method` (`KV_TILES.ping(i)` runs `Tiler::ping` with `self` the
/// `Tiler` that `KV_TILES` is).
fn method(m: &ast::MethodCallExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let name = m
        .name_ref()
        .map(|n| n.text().to_string())
        .ok_or_else(missing)?;
    let of = m.receiver().ok_or_else(missing)?;
    let receiver = match eval_at(&of, names, named, depth + 1) {
        Ok(v) => v,
        Err(why) => return same_in_every_impl(m, &name, names, named, depth).ok_or(why),
    };
    // `PLANS[2].acc.clone()`: a copy of the value, the value itself; `bias.as_ref()` of an
    // `Option`, the same variant.
    if matches!(name.as_str(), "clone" | "to_owned" | "as_ref" | "as_mut")
        && m.arg_list().is_none_or(|l| l.args().next().is_none())
    {
        return Ok(receiver);
    }
    if let Value::Int(n) = receiver {
        let args: Vec<ast::Expr> = m.arg_list().ok_or_else(missing)?.args().collect();
        let args = args
            .iter()
            .map(|a| match eval_at(a, names, named, depth + 1)? {
                Value::Int(v) => Ok(v),
                other => Err(Unknown::new(format!(
                    "`.{name}(..)` is given {}, not an integer",
                    other.text()
                ))),
            })
            .collect::<Result<Vec<u64>, Unknown>>()?;
        return int_method(n, &name, &args);
    }
    if let Value::Array(items) = &receiver
        && let Some(v) = array_method(items, &name)
    {
        return v;
    }
    if let Value::Array(items) = &receiver
        && let Some(v) = array_adaptor(items, &name, m, names, named, depth)
    {
        return v;
    }
    if let Some(v) = option_method(&receiver, &name, m, names, named, depth) {
        return v;
    }
    let (call, f) = crate_method(m, &name, receiver, names)?;
    run(&call, f, names, named, depth)
}

/// The call `m` of the crate's method `name` on `receiver`, a value of the crate's type, and
/// the method it runs (`Type::name`).
fn crate_method<'n>(
    m: &ast::MethodCallExpr,
    name: &str,
    receiver: Value,
    names: &Names<'n>,
) -> Result<(Call, &'n ConstFn), Unknown> {
    let Value::Variant { path, .. } = &receiver else {
        return Err(Unknown::new(format!(
            "it is computed by `.{name}(..)` on `{}`, which visa-lint does not evaluate",
            receiver.text()
        )));
    };
    // A struct's path is its type; an enum variant's (`Mode::Wide`) starts with it.
    let ty = path.split("::").next().unwrap_or(path);
    let f = [path.as_str(), ty]
        .iter()
        .find_map(|t| names.fns.get(&format!("{t}::{name}")))
        .ok_or_else(|| {
            Unknown::new(format!(
                "it is computed by `{ty}::{name}`, which is not a method visa-lint evaluates \
                 (its body is not one expression, or it is not the crate's)"
            ))
        })?;
    let call = Call {
        name: format!("{ty}::{name}"),
        args: m.arg_list().ok_or_else(missing)?.args().collect(),
        turbofish: m.generic_arg_list(),
        type_args: type_args_of(path),
        receiver: Some(receiver),
    };
    Ok((call, f))
}

/// Whether any of `fns` is a method that takes `&mut self`: most crates have none, and then
/// no call changes the value it is called on.
pub fn any_mut_self(fns: &HashMap<String, ConstFn>) -> bool {
    fns.values().any(|f| f.mut_self)
}

/// Whether `m` calls a method of the crate that takes `&mut self` (`arena.place(bytes)`), by
/// its name: the value it is called on changes (see [`self_after`]).
pub fn mutates_receiver(m: &ast::MethodCallExpr, fns: &HashMap<String, ConstFn>) -> bool {
    let Some(name) = m.name_ref() else {
        return false;
    };
    let suffix = format!("::{}", name.text());
    fns.iter().any(|(k, f)| f.mut_self && k.ends_with(&suffix))
}

/// Whether `m`, called on `receiver`, calls a method of the crate that takes `&mut self`:
/// found by the receiver's type when it is a value of the crate's, else by the method's name
/// ([`mutates_receiver`]).
pub fn mutates(receiver: &Eval, m: &ast::MethodCallExpr, fns: &HashMap<String, ConstFn>) -> bool {
    let (Ok(Value::Variant { path, .. }), Some(name)) = (receiver, m.name_ref()) else {
        return mutates_receiver(m, fns);
    };
    let ty = path.split("::").next().unwrap_or(path);
    [path.as_str(), ty]
        .iter()
        .find_map(|t| fns.get(&format!("{t}::{}", name.text())))
        .is_some_and(|f| f.mut_self)
}

/// The value the receiver of `m`, a call of a method of the crate that takes `&mut self`,
/// holds after the call: the method's body run as any call of it runs (see [`run`]), `self`
/// read at its end (`arena.place(bytes)` returns `arena.next` and moves it past the bytes).
/// Unknown, with the reason, when the receiver or the body is; `None` when `m` calls no such
/// method.
pub fn self_after(m: &ast::MethodCallExpr, names: &Names<'_>) -> Option<Eval> {
    statements::reset_budget();
    self_after_at(m, names, 0)
}

/// A method's body that ends with `self`: its statements as they are (so that those that
/// change `self` run in the body's own frame), then its tail run for its effects. `None` for
/// a body with a `return`, which would end it before `self`.
fn ending_with_self(body: &str) -> Option<String> {
    let parsed = crate::syntax::expr_of_text(body)?;
    if parsed
        .syntax()
        .descendants()
        .any(|n| ast::ReturnExpr::can_cast(n.kind()))
    {
        return None;
    }
    let ast::Expr::BlockExpr(b) = &parsed else {
        return Some(format!("{{ let _ = {body}; self }}"));
    };
    let list = b.stmt_list()?;
    let statements: Vec<String> = list
        .statements()
        .map(|s| crate::syntax::node_text(s.syntax()))
        .collect();
    let tail = list
        .tail_expr()
        .map(|t| format!("let _ = {};", crate::syntax::node_text(t.syntax())))
        .unwrap_or_default();
    Some(format!("{{ {} {tail} self }}", statements.join(" ")))
}

/// [`self_after`] within an evaluation, `depth` calls deep.
fn self_after_at(m: &ast::MethodCallExpr, names: &Names<'_>, depth: u32) -> Option<Eval> {
    let name = m.name_ref()?.text().to_string();
    let mut named = false;
    let receiver = match eval_at(&m.receiver()?, names, &mut named, depth + 1) {
        Ok(v) => v,
        Err(u) => return Some(Err(u)),
    };
    let (call, f) = match crate_method(m, &name, receiver, names) {
        Ok(found) => found,
        Err(u) => return mutates_receiver(m, names.fns).then_some(Err(u)),
    };
    if !f.mut_self {
        return None;
    }
    let Some(body) = ending_with_self(&f.body) else {
        return Some(Err(Unknown::new(format!(
            "`{}` returns early, and visa-lint does not follow what it leaves in `self`",
            call.name
        ))));
    };
    let ending_with_self = ConstFn { body, ..f.clone() };
    Some(run(&call, &ending_with_self, names, &mut named, depth + 1))
}

/// A method of the crate called on a receiver the evaluator does not know (a tensor,
/// `q_dm.sin_lane()` of `impl Projection for QDm`): the value every method of that name gives
/// without reading its receiver, when they all give the same one (`FpMulAlu::Mul1`). Which
/// impl the call runs does not matter then; otherwise the value stays unknown.
fn same_in_every_impl(
    m: &ast::MethodCallExpr,
    name: &str,
    names: &Names<'_>,
    named: &mut bool,
    depth: u32,
) -> Option<Value> {
    let suffix = format!("::{name}");
    let mut given: Option<Value> = None;
    let mut impls: Vec<(&String, &ConstFn)> = names
        .fns
        .iter()
        .filter(|(k, f)| k.ends_with(&suffix) && f.owner.is_some())
        .collect();
    impls.sort_by(|a, b| a.0.cmp(b.0));
    for (key, f) in impls {
        let ty = key.strip_suffix(&suffix)?;
        let call = Call {
            name: key.clone(),
            args: m.arg_list()?.args().collect(),
            turbofish: m.generic_arg_list(),
            // A receiver the body cannot read: a body that reads it is not evaluated.
            receiver: Some(Value::Unknown(Unknown::new(format!(
                "the receiver of `{ty}{suffix}` is not a value visa-lint knows"
            )))),
            type_args: Vec::new(),
        };
        let v = run(&call, f, names, named, depth).ok()?;
        match &given {
            Some(g) if *g != v => return None,
            _ => given = Some(v),
        }
    }
    given
}

/// `opt.unwrap_or(x)`, `opt.unwrap()`, `opt.is_some()`, `opt.is_none()` of an `Option`
/// value (`const LANES: Option<usize> = Some(8)`); `None` for another receiver or method.
/// The most integers a range is evaluated to.
const MAX_RANGE: u64 = 1 << 16;

/// A range with known bounds (`0..TILES`, `1..=N`), as the integers it gives: what a `for`
/// loop over a function's `0..TILES` iterates. An open or longer range is not evaluated.
fn range(r: &ast::RangeExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    use ast::RangeItem;
    let bound = |e: Option<ast::Expr>, named: &mut bool| match e {
        Some(e) => match eval_at(&e, names, named, depth + 1)? {
            Value::Int(n) => Ok(n),
            other => Err(Unknown::new(format!(
                "a range's bound is {}, not an integer",
                other.text()
            ))),
        },
        None => Err(Unknown::new(
            "an open range has no end visa-lint can iterate",
        )),
    };
    let start = bound(r.start(), named)?;
    let mut end = bound(r.end(), named)?;
    if r.op_kind() == Some(ast::RangeOp::Inclusive) {
        end = end.saturating_add(1);
    }
    if end.saturating_sub(start) > MAX_RANGE {
        return Err(Unknown::new(format!(
            "the range {start}..{end} has more than {MAX_RANGE} elements"
        )));
    }
    Ok(Value::Array((start..end).map(Value::Int).collect()))
}

/// A method of a `const` array or slice that takes no argument: `len`/`is_empty` (as a `const
/// fn` loops over it), `first`/`last`, and through `iter()` (or `copied`, `cloned`) `sum`,
/// `max` and `min` of its integers.
fn array_method(items: &[Value], name: &str) -> Option<Eval> {
    let some = |v: Option<&Value>| match v {
        Some(v) => Value::Variant {
            path: "Some".to_string(),
            fields: Fields::Positional(vec![v.clone()]),
        },
        None => Value::Variant {
            path: "None".to_string(),
            fields: Fields::Unit,
        },
    };
    let ints = || -> Result<Vec<u64>, Unknown> {
        items
            .iter()
            .map(|v| match v {
                Value::Int(n) => Ok(*n),
                other => Err(Unknown::new(format!(
                    "`.{name}()` of an array holding {}, not integers",
                    other.text()
                ))),
            })
            .collect()
    };
    Some(match name {
        "len" => Ok(Value::Int(items.len() as u64)),
        "is_empty" => Ok(Value::Bool(items.is_empty())),
        "iter" | "into_iter" | "copied" | "cloned" => Ok(Value::Array(items.to_vec())),
        "first" => Ok(some(items.first())),
        "last" => Ok(some(items.last())),
        "sum" => ints().and_then(|ns| {
            ns.iter()
                .try_fold(0u64, |a, n| a.checked_add(*n))
                .map(Value::Int)
                .ok_or_else(|| Unknown::new("the sum overflows".to_string()))
        }),
        "max" => ints().map(|ns| some(ns.iter().max().map(|n| Value::Int(*n)).as_ref())),
        "min" => ints().map(|ns| some(ns.iter().min().map(|n| Value::Int(*n)).as_ref())),
        _ => return None,
    })
}

/// A method of an array or its iterator that takes arguments: `take(k)`, `skip(k)`,
/// `step_by(k)`, `map(|x| ..)` and `fold(init, |acc, x| ..)` (a closure written in place, its
/// parameters plain names or `&x`), as a `const` offset table is summed (`SIZES.iter().fold(0,
/// |a, s| a + s)`).
fn array_adaptor(
    items: &[Value],
    name: &str,
    m: &ast::MethodCallExpr,
    names: &Names<'_>,
    named: &mut bool,
    depth: u32,
) -> Option<Eval> {
    let args: Vec<ast::Expr> = m.arg_list()?.args().collect();
    let int_arg = |named: &mut bool| -> Result<usize, Unknown> {
        match eval_at(args.first().ok_or_else(missing)?, names, named, depth + 1)? {
            Value::Int(k) => usize::try_from(k)
                .map_err(|_| Unknown::new(format!("`.{name}({k})` is past what visa-lint counts"))),
            other => Err(Unknown::new(format!(
                "`.{name}(..)` is given {}, not an integer",
                other.text()
            ))),
        }
    };
    Some(match (name, args.as_slice()) {
        ("take", [_]) => {
            int_arg(named).map(|k| Value::Array(items.iter().take(k).cloned().collect()))
        }
        ("skip", [_]) => {
            int_arg(named).map(|k| Value::Array(items.iter().skip(k).cloned().collect()))
        }
        ("step_by", [_]) => int_arg(named).and_then(|k| match k {
            0 => Err(Unknown::new("`.step_by(0)` panics".to_string())),
            k => Ok(Value::Array(items.iter().step_by(k).cloned().collect())),
        }),
        ("map", [ast::Expr::ClosureExpr(c)]) => items
            .iter()
            .map(|x| call_closure(c, std::slice::from_ref(x), names, named, depth))
            .collect::<Result<Vec<Value>, Unknown>>()
            .map(Value::Array),
        ("fold", [init, ast::Expr::ClosureExpr(c)]) => {
            let mut acc = match eval_at(init, names, named, depth + 1) {
                Ok(v) => v,
                Err(u) => return Some(Err(u)),
            };
            for x in items {
                acc = match call_closure(c, &[acc, x.clone()], names, named, depth) {
                    Ok(v) => v,
                    Err(u) => return Some(Err(u)),
                };
            }
            Ok(acc)
        }
        _ => return None,
    })
}

/// The value of closure `c`'s body with its parameters (plain names, or `&x`) bound to `args`.
fn call_closure(
    c: &ast::ClosureExpr,
    args: &[Value],
    names: &Names<'_>,
    named: &mut bool,
    depth: u32,
) -> Eval {
    let params: Vec<ast::Pat> = c
        .param_list()
        .ok_or_else(missing)?
        .params()
        .filter_map(|p| p.pat())
        .collect();
    if params.len() != args.len() {
        return Err(Unknown::new(format!(
            "the closure `{}` takes {} parameters, not {}",
            short(&ast::Expr::ClosureExpr(c.clone())),
            params.len(),
            args.len()
        )));
    }
    let mut locals = HashMap::new();
    let mut ints = names.ints.clone();
    for (p, v) in params.iter().zip(args) {
        let p = match p {
            ast::Pat::RefPat(r) => r.pat().ok_or_else(missing)?,
            p => p.clone(),
        };
        let ast::Pat::IdentPat(i) = p else {
            return Err(Unknown::new(format!(
                "the closure's parameter `{}` is a pattern visa-lint does not bind",
                crate::syntax::snippet(p.syntax())
            )));
        };
        let n = ast::HasName::name(&i)
            .ok_or_else(missing)?
            .text()
            .to_string();
        if let Value::Int(k) = v {
            ints.insert(n.clone(), *k);
        }
        locals.insert(n, v.clone());
    }
    let body = c.body().ok_or_else(missing)?;
    eval_with(&body, names, (&locals, &ints), named, depth + 1)
}

fn option_method(
    receiver: &Value,
    name: &str,
    m: &ast::MethodCallExpr,
    names: &Names<'_>,
    named: &mut bool,
    depth: u32,
) -> Option<Eval> {
    let inner = match receiver {
        Value::Variant {
            path,
            fields: Fields::Positional(vs),
        } if path == "Some" && vs.len() == 1 => Some(vs[0].clone()),
        Value::Variant {
            path,
            fields: Fields::Unit,
        } if path == "None" => None,
        _ => return None,
    };
    let mut arg = || {
        let a = m.arg_list()?.args().next()?;
        Some(eval_at(&a, names, named, depth + 1))
    };
    Some(match (name, inner) {
        ("unwrap_or" | "unwrap_or_default", Some(v)) | ("unwrap" | "expect", Some(v)) => Ok(v),
        ("unwrap_or", None) => arg()?,
        ("is_some", v) => Ok(Value::Bool(v.is_some())),
        ("is_none", v) => Ok(Value::Bool(v.is_none())),
        _ => return None,
    })
}

/// `n.name(args)` for the integer methods a `const fn` computes sizes with, as `usize`
/// computes them (an overflow or a division by zero is unknown: it is a compile error).
fn int_method(n: u64, name: &str, args: &[u64]) -> Eval {
    let v = match (name, args) {
        ("div_ceil", [d]) => (*d != 0).then(|| n.div_ceil(*d)),
        ("next_multiple_of", [d]) => n.checked_next_multiple_of(*d),
        ("min", [o]) => Some(n.min(*o)),
        ("max", [o]) => Some(n.max(*o)),
        ("pow", [e]) => u32::try_from(*e).ok().and_then(|e| n.checked_pow(e)),
        ("saturating_sub", [o]) => Some(n.saturating_sub(*o)),
        ("saturating_add", [o]) => Some(n.saturating_add(*o)),
        ("abs_diff", [o]) => Some(n.abs_diff(*o)),
        ("next_power_of_two", []) => n.checked_next_power_of_two(),
        ("trailing_zeros", []) => Some(u64::from(n.trailing_zeros())),
        ("count_ones", []) => Some(u64::from(n.count_ones())),
        ("ilog2", []) => n.checked_ilog2().map(u64::from),
        ("is_power_of_two", []) => return Ok(Value::Bool(n.is_power_of_two())),
        _ => {
            return Err(Unknown::new(format!(
                "it is computed by `.{name}(..)` on an integer, which visa-lint does not evaluate"
            )));
        }
    };
    v.map(Value::Int)
        .ok_or_else(|| Unknown::new(format!("`{n}.{name}(..)` overflows or divides by zero")))
}

/// How many elements an array value may have (`[0; N]` with a large `N` is not unrolled).
const MAX_ARRAY: u64 = 4096;

/// `[a, b, c]` or `[a; n]`.
fn array(a: &ast::ArrayExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let elems: Vec<ast::Expr> = a.exprs().collect();
    if a.semicolon_token().is_some() {
        let (Some(elem), Some(n)) = (elems.first(), elems.get(1)) else {
            return Err(missing());
        };
        let v = eval_at(elem, names, named, depth + 1)?;
        let n = match eval_at(n, names, named, depth + 1)? {
            Value::Int(n) if n <= MAX_ARRAY => n,
            _ => return Err(not_evaluated(&ast::Expr::ArrayExpr(a.clone()))),
        };
        return Ok(Value::Array(vec![v; n as usize]));
    }
    Ok(Value::Array(
        elems
            .iter()
            .map(|x| part(eval_at(x, names, named, depth + 1)))
            .collect(),
    ))
}

/// `if c { a } else { b }`: the arm its condition takes, or the value both arms give.
fn if_expr(i: &ast::IfExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let then = i.then_branch().ok_or_else(missing)?;
    if let Some(ast::Expr::LetExpr(l)) = i.condition() {
        return if_let(i, &l, names, named, depth);
    }
    let Some(ast::ElseBranch::Block(other)) = i.else_branch() else {
        return match i.else_branch() {
            Some(ast::ElseBranch::IfExpr(inner)) => {
                let cond = condition(i, names, named, depth)?;
                match cond {
                    Some(true) => block(&then, names, named, depth),
                    Some(false) => if_expr(&inner, names, named, depth + 1),
                    None => agree(
                        block(&then, names, named, depth),
                        if_expr(&inner, names, named, depth + 1),
                        i,
                    ),
                }
            }
            _ => Err(Unknown::new("an `if` without `else` gives no value")),
        };
    };
    match condition(i, names, named, depth)? {
        Some(true) => block(&then, names, named, depth),
        Some(false) => block(&other, names, named, depth),
        None => agree(
            block(&then, names, named, depth),
            block(&other, names, named, depth),
            i,
        ),
    }
}

/// `if let Some(slot) = spec.score_slot { slot } else { SCORE_DM }`: the `then` block with
/// what the pattern binds when the known scrutinee matches it, else the `else` branch.
fn if_let(
    i: &ast::IfExpr,
    l: &ast::LetExpr,
    names: &Names<'_>,
    named: &mut bool,
    depth: u32,
) -> Eval {
    let scrutinee = l.expr().ok_or_else(missing)?;
    let pat = l.pat().ok_or_else(missing)?;
    let v = eval_at(&scrutinee, names, named, depth + 1)?;
    let undecided = || {
        Unknown::new(format!(
            "it is chosen by `if let {} = {}`, which visa-lint cannot decide",
            crate::syntax::snippet(pat.syntax()),
            short(&scrutinee)
        ))
    };
    match destructure(&pat, &v, names).ok_or_else(undecided)? {
        Some(bound) => {
            let then = ast::Expr::BlockExpr(i.then_branch().ok_or_else(missing)?);
            let mut ints = names.ints.clone();
            for (k, b) in &bound {
                if let Value::Int(n) = b {
                    ints.insert(k.clone(), *n);
                }
            }
            eval_with(&then, names, (&bound, &ints), named, depth + 1)
        }
        None => match i.else_branch() {
            Some(ast::ElseBranch::Block(other)) => block(&other, names, named, depth),
            Some(ast::ElseBranch::IfExpr(inner)) => if_expr(&inner, names, named, depth + 1),
            None => Err(Unknown::new("an `if let` without `else` gives no value")),
        },
    }
}

/// `match x { P => a, .. }`: the arm a constant scrutinee takes (literal, variant, `_` and
/// `|` patterns), or the value every arm gives when the scrutinee is not known. An arm whose
/// pattern or guard visa-lint cannot decide before the one taken makes the value unknown.
fn match_expr(m: &ast::MatchExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let scrutinee = m.expr().ok_or_else(missing)?;
    let arms: Vec<ast::MatchArm> = m.match_arm_list().ok_or_else(missing)?.arms().collect();
    let arm_value = |arm: &ast::MatchArm, named: &mut bool| {
        arm.expr()
            .map_or_else(|| Err(missing()), |x| eval_at(&x, names, named, depth + 1))
    };
    let what = short(&scrutinee);
    let Ok(v) = eval_at(&scrutinee, names, named, depth + 1) else {
        // Not known: the arms' value when they all agree.
        let mut values = arms.iter().map(|a| arm_value(a, named));
        let first = values.next().ok_or_else(missing)??;
        for other in values {
            let other = other?;
            if other != first {
                return Err(Unknown::new(format!(
                    "it is chosen by `match {what}`, which visa-lint cannot evaluate: `{}` or `{}`",
                    first.text(),
                    other.text()
                )));
            }
        }
        return Ok(first);
    };
    for arm in &arms {
        let undecided = || {
            Unknown::new(format!(
                "it is chosen by `match {what}`, whose arm `{}` visa-lint cannot decide",
                arm.pat()
                    .map_or_else(String::new, |p| crate::syntax::snippet(p.syntax()))
            ))
        };
        let matches = arm.pat().and_then(|p| destructure(&p, &v, names));
        match matches {
            Some(Some(bound)) if arm.guard().is_none() => {
                if bound.is_empty() {
                    return arm_value(arm, named);
                }
                // `Some(lanes) => lanes`: the arm's value with what its pattern binds.
                let mut ints = names.ints.clone();
                for (k, b) in &bound {
                    if let Value::Int(i) = b {
                        ints.insert(k.clone(), *i);
                    }
                }
                let x = arm.expr().ok_or_else(missing)?;
                return eval_with(&x, names, (&bound, &ints), named, depth + 1);
            }
            Some(None) => continue,
            _ => return Err(undecided()),
        }
    }
    Err(Unknown::new(format!(
        "no arm of `match {what}` takes `{}`",
        v.text()
    )))
}

/// What pattern `p` binds when it matches `v`: `Some(Some(bindings))` when it matches,
/// `Some(None)` when it does not, `None` when visa-lint cannot decide. Binds a name
/// (`lanes`) and destructures a variant's positional fields (`Some(lanes)`); any other
/// pattern is [`pattern_matches`]'s.
fn destructure(
    p: &ast::Pat,
    v: &Value,
    names: &Names<'_>,
) -> Option<Option<HashMap<String, Value>>> {
    match p {
        ast::Pat::IdentPat(i) if i.pat().is_none() => {
            let name = ast::HasName::name(i)?.text().to_string();
            if name == "None" {
                let none =
                    matches!(v, Value::Variant { path, fields: Fields::Unit } if path == "None");
                return Some(none.then(HashMap::new));
            }
            match constant(&name, names) {
                Some(Ok(c)) => Some((c == *v).then(HashMap::new)),
                Some(Err(_)) => None,
                None => Some(Some(HashMap::from([(name, v.clone())]))),
            }
        }
        ast::Pat::TupleStructPat(t) => {
            let want = variant_path(&t.path()?)?;
            let Value::Variant { path, fields } = v else {
                return None;
            };
            let last = |p: &str| p.rsplit("::").next().map(str::to_string);
            if *path != want && last(path) != last(&want) {
                return Some(None);
            }
            let Fields::Positional(vs) = fields else {
                return None;
            };
            let pats: Vec<ast::Pat> = t.fields().collect();
            destructure_each(&pats, vs, names)
        }
        // `(Prec::Bf16, 1)` against the scrutinee `(OUT_PREC, GATE_SPLIT)`.
        ast::Pat::TuplePat(t) => {
            let Value::Tuple(vs) = v else {
                return None;
            };
            let pats: Vec<ast::Pat> = t.fields().collect();
            destructure_each(&pats, vs, names)
        }
        _ => pattern_matches(p, v, names).map(|m| m.then(HashMap::new)),
    }
}

/// [`destructure`] of each value by the pattern in its place: the bindings of all when all
/// match, `Some(None)` when one does not.
fn destructure_each(
    pats: &[ast::Pat],
    vs: &[Value],
    names: &Names<'_>,
) -> Option<Option<HashMap<String, Value>>> {
    if pats.len() != vs.len() {
        return None;
    }
    let mut bound = HashMap::new();
    for (p, v) in pats.iter().zip(vs) {
        match destructure(p, v, names)? {
            Some(b) => bound.extend(b),
            None => return Some(None),
        }
    }
    Some(Some(bound))
}

/// Whether pattern `p` matches `v` (`None`: a pattern visa-lint does not decide: one that
/// binds or destructures, a range).
fn pattern_matches(p: &ast::Pat, v: &Value, names: &Names<'_>) -> Option<bool> {
    match p {
        ast::Pat::WildcardPat(_) => Some(true),
        ast::Pat::OrPat(o) => {
            let mut any = Some(false);
            for alt in o.pats() {
                match pattern_matches(&alt, v, names) {
                    Some(true) => return Some(true),
                    Some(false) => {}
                    None => any = None,
                }
            }
            any
        }
        ast::Pat::LiteralPat(l) => {
            let lit = ast::Expr::Literal(l.literal()?);
            let (pv, _) = eval(&lit, names);
            Some(pv.ok()? == *v)
        }
        ast::Pat::PathPat(pp) => {
            let path = pp.path()?;
            match constant(&path_key(&path)?, names) {
                Some(Ok(c)) => Some(c == *v),
                Some(Err(_)) => None,
                None => match (variant_path(&path)?, v) {
                    (pat, Value::Variant { path, .. }) => Some(pat == *path),
                    _ => None,
                },
            }
        }
        // `0..=256`, `1024..`, `..8`: an integer range.
        ast::Pat::RangePat(r) => {
            use ast::RangeItem;
            let Value::Int(n) = v else { return None };
            let bound = |p: Option<ast::Pat>| -> Option<Option<u64>> {
                match p {
                    None => Some(None),
                    Some(ast::Pat::LiteralPat(l)) => {
                        match eval(&ast::Expr::Literal(l.literal()?), names).0 {
                            Ok(Value::Int(k)) => Some(Some(k)),
                            _ => None,
                        }
                    }
                    Some(ast::Pat::PathPat(pp)) => match constant(&path_key(&pp.path()?)?, names) {
                        Some(Ok(Value::Int(k))) => Some(Some(k)),
                        _ => None,
                    },
                    // `0..=TOP`: the parser reads a lone name as a binding pattern.
                    Some(ast::Pat::IdentPat(i)) if i.pat().is_none() => {
                        let name = ast::HasName::name(&i)?.text().to_string();
                        match constant(&name, names) {
                            Some(Ok(Value::Int(k))) => Some(Some(k)),
                            _ => None,
                        }
                    }
                    Some(_) => None,
                }
            };
            let lo = bound(r.start())?;
            let hi = bound(r.end())?;
            let inclusive = r.op_kind() == Some(ast::RangeOp::Inclusive);
            let above = lo.is_none_or(|lo| *n >= lo);
            let below = hi.is_none_or(|hi| if inclusive { *n <= hi } else { *n < hi });
            Some(above && below)
        }
        // `N`: a const item (or an imported variant), else a binding (undecided).
        ast::Pat::IdentPat(i) if i.pat().is_none() => {
            let name = ast::HasName::name(i)?.text().to_string();
            constant(&name, names)?.ok().map(|c| c == *v)
        }
        _ => None,
    }
}

/// The constant a name stands for in a pattern (an integer `const`, another `const` item or
/// a binding the evaluator knows); `None` when it names none.
fn constant(key: &str, names: &Names<'_>) -> Option<Eval> {
    match names.ints.get(key) {
        Some(k) => Some(Ok(Value::Int(*k))),
        None => (names.value)(key),
    }
}

/// The condition of an `if`, when it is a constant (`None` when not).
fn condition(
    i: &ast::IfExpr,
    names: &Names<'_>,
    named: &mut bool,
    depth: u32,
) -> Result<Option<bool>, Unknown> {
    let c = i.condition().ok_or_else(missing)?;
    match eval_at(&c, names, named, depth + 1) {
        Ok(Value::Bool(b)) => Ok(Some(b)),
        _ => Ok(None),
    }
}

/// Two arms under a condition visa-lint cannot evaluate: their value when they agree.
fn agree(a: Eval, b: Eval, i: &ast::IfExpr) -> Eval {
    let cond = i.condition().map_or_else(String::new, |c| short(&c));
    match (a.and_then(Value::whole), b.and_then(Value::whole)) {
        (Ok(x), Ok(y)) if x == y => Ok(x),
        (Ok(x), Ok(y)) => Err(Unknown::new(format!(
            "it is chosen by `if {cond}`, which visa-lint cannot evaluate: `{}` or `{}`",
            x.text(),
            y.text()
        ))),
        (Err(u), _) | (_, Err(u)) => Err(u),
    }
}

/// Comparisons and `&&`/`||` of constants.
fn logic(b: &ast::BinExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let (Some(l), Some(r), Some(op)) = (b.lhs(), b.rhs(), b.op_kind()) else {
        return Err(missing());
    };
    // A comparison reads the whole of both sides: a struct with a part not known compares
    // unknown.
    let lv = eval_at(&l, names, named, depth + 1).and_then(Value::whole);
    let rv = eval_at(&r, names, named, depth + 1).and_then(Value::whole);
    let (lv, rv) = match (lv, rv) {
        (Ok(lv), Ok(rv)) => (lv, rv),
        (lv, rv) => return Err(partly_known(op, lv, rv)),
    };
    let result = match (op, &lv, &rv) {
        (BinaryOp::LogicOp(LogicOp::And), Value::Bool(x), Value::Bool(y)) => *x && *y,
        (BinaryOp::LogicOp(LogicOp::Or), Value::Bool(x), Value::Bool(y)) => *x || *y,
        (BinaryOp::CmpOp(CmpOp::Eq { negated }), x, y) => (x == y) != negated,
        (BinaryOp::CmpOp(CmpOp::Ord { ordering, strict }), Value::Int(x), Value::Int(y)) => {
            match (ordering, strict) {
                (Ordering::Less, true) => x < y,
                (Ordering::Less, false) => x <= y,
                (Ordering::Greater, true) => x > y,
                (Ordering::Greater, false) => x >= y,
            }
        }
        (BinaryOp::ArithOp(op), Value::Int(x), Value::Int(y)) => {
            return consts::arith(op, *x, *y).map(Value::Int).ok_or_else(|| {
                Unknown::new(format!(
                    "`{}` overflows or divides by zero",
                    short(&ast::Expr::BinExpr(b.clone()))
                ))
            });
        }
        // `1.0 / (21.5 * 96.0)`, `-3 + 1`: a float or a negative number is a literal kept as
        // written (see [`Value::Lit`]), and so is arithmetic on one.
        (BinaryOp::ArithOp(op), Value::Lit(_) | Value::Int(_), Value::Lit(_) | Value::Int(_))
            if numeric(&lv) && numeric(&rv) =>
        {
            return Ok(Value::Lit(format!("({} {op} {})", lv.text(), rv.text())));
        }
        _ => return Err(not_evaluated(&ast::Expr::BinExpr(b.clone()))),
    };
    Ok(Value::Bool(result))
}

/// Why `l op r` is not known (the first side's reason), with its low bits where integer
/// arithmetic on the parts known decides them.
fn partly_known(op: BinaryOp, l: Eval, r: Eval) -> Unknown {
    let bits = |v: &Eval| match v {
        Ok(Value::Int(n)) => Some(Ok(*n)),
        Err(u) => Some(Err(u.low)),
        Ok(_) => None,
    };
    let low = match (op, bits(&l), bits(&r)) {
        (BinaryOp::ArithOp(op), Some(x), Some(y)) => LowBits::of_arith(op, x, y),
        _ => None,
    };
    let mut unknown = match (l, r) {
        (Err(u), _) | (_, Err(u)) => u,
        (Ok(_), Ok(_)) => missing(),
    };
    unknown.low = low;
    unknown
}

/// Whether `v` is a number: an integer, or a literal that is a float or a negative number
/// (not a character or a string).
fn numeric(v: &Value) -> bool {
    match v {
        Value::Int(_) => true,
        Value::Lit(t) => t
            .trim_start_matches(['-', '('])
            .starts_with(|c: char| c.is_ascii_digit()),
        _ => false,
    }
}

/// The key under which the integer consts hold the discriminant of the unit variant
/// `Enum::Variant` of an enum of the crate (no path a program writes can spell it).
pub fn discriminant_key(variant: &str) -> String {
    format!("{variant} as")
}

/// `x as usize`: an integer stays itself, a bool is 0 or 1, and a unit enum variant is its
/// discriminant (`Region::Skip as usize` is 2 for `enum Region { Taps, Halo, Skip }`); one
/// whose enum visa-lint does not know is kept as written (`Branch::Attn as usize`), which
/// compares equal to the same variant's only (a `const fn` compares enums this way).
fn cast(c: &ast::CastExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let inner = c.expr().ok_or_else(missing)?;
    match eval_at(&inner, names, named, depth + 1)? {
        v @ Value::Int(_) => Ok(v),
        Value::Bool(b) => Ok(Value::Int(u64::from(b))),
        Value::Variant {
            path,
            fields: Fields::Unit,
        } => {
            // `config::Region::Skip`: the enum and the variant name it.
            let segs: Vec<&str> = path.split("::").map(str::trim).collect();
            let short = segs[segs.len().saturating_sub(2)..].join("::");
            if let Some(&d) = names.ints.get(&discriminant_key(&short)) {
                *named = true;
                return Ok(Value::Int(d));
            }
            let ty = c.ty().map(|t| crate::syntax::compact_text(t.syntax()));
            Ok(Value::Lit(format!("{path} as {}", ty.unwrap_or_default())))
        }
        _ => Err(not_evaluated(&ast::Expr::CastExpr(c.clone()))),
    }
}

/// `ARR[i]`: an element of an array value (a `const` array indexed by a loop's variable).
fn index(i: &ast::IndexExpr, names: &Names<'_>, named: &mut bool, depth: u32) -> Eval {
    let (Some(base), Some(at)) = (i.base(), i.index()) else {
        return Err(missing());
    };
    let elems = match eval_at(&base, names, named, depth + 1)? {
        Value::Array(elems) => elems,
        _ => return Err(not_evaluated(&ast::Expr::IndexExpr(i.clone()))),
    };
    let Value::Int(k) = eval_at(&at, names, named, depth + 1)? else {
        return Err(not_evaluated(&ast::Expr::IndexExpr(i.clone())));
    };
    usize::try_from(k)
        .ok()
        .and_then(|k| elems.get(k).cloned())
        .ok_or_else(|| {
            Unknown::new(format!(
                "index {k} is out of bounds of an array of {} elements",
                elems.len()
            ))
        })?
        .read()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ra_ap_syntax::{Edition, SourceFile};

    fn value_of(src: &str, locals: &[(&str, Eval)]) -> (Eval, bool) {
        let file = SourceFile::parse(&format!("const X: T = {src};"), Edition::Edition2024).tree();
        let body = file
            .syntax()
            .descendants()
            .find_map(ast::Const::cast)
            .and_then(|c| c.body())
            .expect("an expression");
        let locals: HashMap<String, Eval> = locals
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let lookup = |k: &str| locals.get(k).cloned();
        let ints = HashMap::from([("N".to_string(), 32u64)]);
        let mut scope = mapping::Scope::default();
        scope.declare_axes(
            &crate::mapping::parse::parse_axes("A = 64").0,
            &mut Vec::new(),
        );
        let names = Names {
            value: &lookup,
            ints: &ints,
            fns: &HashMap::new(),
            mapping: &scope,
        };
        eval(&body, &names)
    }

    fn text(src: &str, locals: &[(&str, Eval)]) -> Result<String, String> {
        value_of(src, locals).0.map(|v| v.text()).map_err(|u| u.why)
    }

    /// A block with statements is run as the compiler runs a `const fn` body: mutable
    /// locals, compound assignments, `while`, `for` over a range, `if` statements and
    /// `return`.
    #[test]
    fn blocks_with_statements_run_like_const_fn_bodies() {
        let run = |src: &str| value_of(src, &[]).0;
        assert_eq!(
            run("{ let mut c = 8; while c * 256 < 32768 { c <<= 1; } c }"),
            Ok(Value::Int(128))
        );
        assert_eq!(
            run("{ let mut t = 0; for i in 0..=3 { if i == 2 { return t; } t += N; } t }"),
            Ok(Value::Int(64))
        );
        assert_eq!(
            run(
                "{ let free = if 64 < 256 { 256 - 64 } else { 256 }; let mut p = free / 8; while p % 8 != 0 { p -= 1; } p }"
            ),
            Ok(Value::Int(24))
        );
    }

    /// A struct with a field the evaluator cannot know keeps its known fields: reading one is
    /// known, reading the other gives its reason, and the whole struct (an argument, a
    /// comparison) is unknown.
    #[test]
    fn a_partly_known_struct_keeps_its_known_fields() {
        let plan = Value::Variant {
            path: "Plan".into(),
            fields: Fields::Named(vec![
                ("q".into(), Value::Int(12)),
                (
                    "k".into(),
                    Value::Unknown(Unknown::new("`k` comes from the runtime")),
                ),
            ]),
        };
        let at = [("at", Ok(plan))];
        assert_eq!(value_of("at.q", &at).0, Ok(Value::Int(12)));
        let Err(why) = value_of("at.k", &at).0 else {
            panic!("an unknown field");
        };
        assert!(why.why.contains("runtime"), "{}", why.why);
        assert!(value_of("at", &at).0.is_err());
        assert!(value_of("at == at", &at).0.is_err());
        // A struct literal with an unknown field, read through its known one.
        assert_eq!(
            value_of("{ let p = Plan { q: N, k: unknown_fn() }; p.q }", &[]).0,
            Ok(Value::Int(32))
        );
    }

    /// A loop that does not end within the budget is unknown, with the reason, never a hang.
    #[test]
    fn a_loop_past_the_budget_is_unknown() {
        let Err(why) = value_of("{ let mut i = 0; while i < 1 { i = 0; } i }", &[]).0 else {
            panic!("an endless loop has no value");
        };
        assert!(why.why.contains("steps"), "{}", why.why);
    }

    /// A `const` array indexed by a value (a loop's variable), and arithmetic on the element.
    #[test]
    fn an_array_is_indexed_and_its_element_computed_with() {
        let offsets = Ok(Value::Array(vec![
            Value::Int(0),
            Value::Int(0x100),
            Value::Int(0x302),
        ]));
        let locals = [("OFFSETS", offsets), ("i", Ok(Value::Int(2)))];
        assert_eq!(text("OFFSETS[i]", &locals), Ok("770".into()));
        assert_eq!(text("N + OFFSETS[1]", &locals), Ok("288".into()));
        assert_eq!(
            text("OFFSETS[3]", &locals),
            Err("index 3 is out of bounds of an array of 3 elements".into())
        );
    }

    #[test]
    fn values_written_in_place() {
        assert_eq!(
            text("TrfAddress::FirstHalf", &[]),
            Ok("TrfAddress::FirstHalf".into())
        );
        assert_eq!(
            text("furiosa_visa_std::prelude::TrfAddress::Full", &[]),
            Ok("TrfAddress::Full".into())
        );
        assert_eq!(
            text(
                "SwitchConfig::Broadcast01 { slice1: 2, slice0: 1_0, time0: 4u32 }",
                &[]
            ),
            Ok("SwitchConfig::Broadcast01 { slice1: 2, slice0: 10, time0: 4 }".into())
        );
        assert!(!value_of("TrfAddress::Full", &[]).1);
        assert!(!value_of("0x1000", &[]).1);
        assert_eq!(text("-0.5f32", &[]), Ok("-0.5f32".into()));
        assert_eq!(text("[N, 3]", &[]), Ok("[32, 3]".into()));
        assert_eq!(text("[1; 3]", &[]), Ok("[1, 1, 1]".into()));
    }

    #[test]
    fn a_match_on_a_constant_takes_its_arm() {
        let wide = || {
            Ok(Value::Variant {
                path: "Mode::Wide".into(),
                fields: Fields::Unit,
            })
        };
        let by_mode = "match mode { Mode::Narrow => TrfAddress::FirstHalf, Mode::Wide | Mode::Full => TrfAddress::Full }";
        assert_eq!(
            text(by_mode, &[("mode", wide())]),
            Ok("TrfAddress::Full".into())
        );
        // Integers, a const item as a pattern, and `_`.
        assert_eq!(
            text("match N { 0 => 1, N => 2, _ => 3 }", &[]),
            Ok("2".into())
        );
        assert_eq!(text("match 7 { 0 | 1 => 1, _ => 3 }", &[]), Ok("3".into()));
        // Not known: the arms' value when they agree, else why not.
        let unknown = || Err(Unknown::new("a parameter"));
        assert_eq!(
            text("match m { 0 => 4, _ => 4 }", &[("m", unknown())]),
            Ok("4".into())
        );
        let chosen = text("match m { 0 => 4, _ => 8 }", &[("m", unknown())]);
        assert!(chosen.is_err_and(|why| why.contains("chosen by `match m`")));
        // A guard before the arm taken is not decided.
        let guarded = text("match N { n if n > 3 => 1, _ => 2 }", &[]);
        assert!(guarded.is_err_and(|why| why.contains("cannot decide")));
        // A binding takes the value; a variant's fields are bound by position.
        assert_eq!(text("match 7 { 0 => 1, n => n * 2 }", &[]), Ok("14".into()));
        let some = "match Some(N) { Some(l) => l + 1, None => 0 }";
        assert_eq!(text(some, &[]), Ok("33".into()));
        let none = "match o { Some(l) => l, None => 16 }";
        let o = || {
            Ok(Value::Variant {
                path: "None".into(),
                fields: Fields::Unit,
            })
        };
        assert_eq!(text(none, &[("o", o())]), Ok("16".into()));
        assert_eq!(text("o.unwrap_or(8)", &[("o", o())]), Ok("8".into()));
        assert_eq!(text("Some(3).unwrap_or(8)", &[]), Ok("3".into()));
    }

    #[test]
    fn names_constants_and_sizes_are_read() {
        assert_eq!(
            text("SwitchConfig::CustomBroadcast { ring_size: N }", &[]),
            Ok("SwitchConfig::CustomBroadcast { ring_size: 32 }".into())
        );
        assert_eq!(text("A::SIZE / 2", &[]), Ok("32".into()));
        let half = Ok(Value::Variant {
            path: "TrfAddress::FirstHalf".into(),
            fields: Fields::Unit,
        });
        assert_eq!(
            text("half", &[("half", half.clone())]),
            Ok("TrfAddress::FirstHalf".into())
        );
        assert!(value_of("half", &[("half", half)]).1);
        assert_eq!(
            text(
                "SwitchConfig::CustomBroadcast { ring_size }",
                &[("ring_size", Ok(Value::Int(8)))]
            ),
            Ok("SwitchConfig::CustomBroadcast { ring_size: 8 }".into())
        );
    }

    #[test]
    fn conditions_pick_an_arm_or_the_arms_must_agree() {
        assert_eq!(
            text(
                "if N > 16 { TrfAddress::Full } else { TrfAddress::FirstHalf }",
                &[]
            ),
            Ok("TrfAddress::Full".into())
        );
        assert_eq!(
            text(
                "if wide { TrfAddress::Full } else { TrfAddress::Full }",
                &[]
            ),
            Ok("TrfAddress::Full".into())
        );
        let why = text(
            "if wide { TrfAddress::Full } else { TrfAddress::FirstHalf }",
            &[],
        )
        .expect_err("unknown");
        assert!(why.contains("if wide"), "{why}");
    }

    #[test]
    fn unknowns_say_why() {
        let why = text("cfg", &[]).expect_err("unknown");
        assert!(why.contains("`cfg`"), "{why}");
        let why = text("pick(3)", &[]).expect_err("unknown");
        assert!(why.contains("call of `pick`"), "{why}");
        let param = Err(Unknown::new("`cfg` is a parameter of `stage`"));
        assert_eq!(
            text(
                "SwitchConfig::CustomBroadcast { ring_size: cfg }",
                &[("cfg", param)]
            ),
            Err("`cfg` is a parameter of `stage`".into())
        );
    }

    /// A method of a struct the crate declares, called on a `const` of it (`KV.ping(i)`), and
    /// an associated function building it (`Tiler::new` with `Self { .. }`), evaluated as the
    /// compiler runs them: tile 1 lands 4 bytes past a multiple of 8, tile 0 does not.
    #[test]
    fn integer_methods_compute_as_usize_does() {
        use super::{Value, int_method};
        assert_eq!(int_method(12, "div_ceil", &[8]), Ok(Value::Int(2)));
        assert_eq!(int_method(12, "next_multiple_of", &[8]), Ok(Value::Int(16)));
        assert_eq!(int_method(3, "max", &[5]), Ok(Value::Int(5)));
        assert_eq!(int_method(2, "pow", &[10]), Ok(Value::Int(1024)));
        assert_eq!(
            int_method(64, "is_power_of_two", &[]),
            Ok(Value::Bool(true))
        );
        // A division by zero or an overflow is a compile error, so no value.
        assert!(int_method(12, "div_ceil", &[0]).is_err());
        assert!(int_method(2, "pow", &[64]).is_err());
        assert!(int_method(2, "rotate_left", &[1]).is_err());
    }

    #[test]
    fn methods_of_the_crates_types_are_evaluated() {
        let kernel = |addr: &str| {
            format!(
                "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n\
                 pub struct Tiler {{ pub base: usize, pub pitch: usize }}\n\
                 impl Tiler {{\n\
                 pub const fn new(base: usize) -> Self {{ Self {{ base, pitch: 0x1004 }} }}\n\
                 pub const fn ping(&self, i: usize) -> usize {{ self.base + (i % 2) * self.pitch }}\n}}\n\
                 pub const KV: Tiler = Tiler::new(0x1000);\n\
                 #[device(chip = 1)]\n\
                 pub fn k(ctx: &mut Context, x: &HbmTensor<bf16, m![1], m![A]>) {{\n\
                 let _a: DmTensor<bf16, m![1], m![1 # 2], m![A / 8], m![A % 8]> = \
                 x.to_dm(&mut ctx.tdma, {addr});\n}}\n"
            )
        };
        let found = crate::check_text(&kernel("KV.ping(1)"));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].code(), "ALN-002");
        assert!(
            found[0].message.contains("KV.ping(1) is 4 bytes past"),
            "{}",
            found[0].message
        );
        assert!(crate::check_text(&kernel("KV.ping(2)")).is_empty());
    }
}
