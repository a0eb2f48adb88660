//! Builds a [`FnModel`] from one function's syntax: types flow forward along each chain from
//! its root and backward from `let` annotations, parameter and return types, as rustc would.
//! The pipeline state machine is checked on the way: what goes wrong is recorded as a
//! [`Problem`] where the pipeline state is known.

use super::consts;
use super::methods::{self, Engine, Recv};
use super::problem::{Kernel, Primitive, Problem, Unknown};
use super::types::{Kind, MapVal, Slot, TensorTy, Tu, dtype_bits, widened};
use super::{Arg, Chain, FnKind, FnModel, Origin, Step, TensorVar, written};
use crate::diagnostic::Span;
use crate::mapping::{self, Layout, Scope, parse};
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs, HasLoopBody};
use ra_ap_syntax::{AstNode, TextRange, ast};
use std::collections::HashMap;

/// What a function can see of its module: mapping names, constants and helper signatures.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Env {
    pub scope: Scope,
    /// Types the file defines itself (they shadow the prelude: the Sequencer page's own
    /// `BufTensor` and 4-parameter `StreamTensor`).
    pub local_types: std::collections::HashSet<String>,
    pub consts: HashMap<String, u64>,
    /// The functions it can call, by name: their syntax, read into a [`FnSig`] only when a
    /// call is met ([`Env::signature`]); most are never called from the function analysed.
    pub fns: HashMap<String, ra_ap_syntax::GreenNode>,
    /// Whole tensor type aliases (`type Weights = TrfTensor<...>;`): the type each names.
    pub tensor_aliases: HashMap<String, TensorTy>,
}

impl Env {
    /// The signature of the function `name` visible here, read in this environment.
    pub fn signature(&self, name: &str) -> Option<FnSig> {
        let node = ra_ap_syntax::SyntaxNode::new_root(self.fns.get(name)?.clone());
        Some(signature(&ast::Fn::cast(node)?, self))
    }
}

/// A helper function's signature, for chains that cross function boundaries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FnSig {
    pub params: Vec<Option<TensorTy>>,
    pub ret: Option<TensorTy>,
}

fn span_of(r: TextRange) -> Span {
    Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize)
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
    Dma(&'static str),
    Unknown,
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
    model: FnModel,
    ret: Option<TensorTy>,
}

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
            let seg = p.path()?.segment()?;
            let name = seg.name_ref()?.text().to_string();
            if env.local_types.contains(&name) {
                return None;
            }
            if let Some(t) = env.tensor_aliases.get(&name) {
                // The alias's mappings are written where it is used.
                let mut t = t.clone();
                let at = span_of(seg.syntax().text_range());
                for m in t.maps.values_mut() {
                    m.span = Some(at);
                }
                return Some(t);
            }
            let Some(kind) = Kind::from_name(&name) else {
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

fn dtype_of(arg: &ast::GenericArg) -> Option<String> {
    let ast::GenericArg::TypeArg(ta) = arg else {
        return None;
    };
    let ast::Type::PathType(p) = ta.ty()? else {
        return None;
    };
    let name = p.path()?.segment()?.name_ref()?.text().to_string();
    dtype_bits(&name).map(|_| name)
}

/// A mapping argument: `m![...]`, an alias name or `{ Alias }`; `_` and generics are unknown.
fn map_of(arg: &ast::GenericArg, scope: &Scope) -> Option<MapVal> {
    match arg {
        ast::GenericArg::TypeArg(ta) => match ta.ty()? {
            ast::Type::MacroType(mt) => {
                let call = mt.macro_call()?;
                let text = call.syntax().text().to_string();
                let tt = call.token_tree()?.syntax().text().to_string();
                let mut body = tt.get(1..).unwrap_or("");
                if body.ends_with(']') || body.ends_with(')') || body.ends_with('}') {
                    body = &body[..body.len() - 1];
                }
                let layout = parse::parse_mapping(body)
                    .ok()
                    .and_then(|e| mapping::lower(&e, scope, &mut Vec::new()));
                Some(MapVal {
                    text,
                    layout,
                    span: Some(span_of(call.syntax().text_range())),
                })
            }
            ast::Type::PathType(p) => {
                let at = span_of(p.syntax().text_range());
                alias_val(p.path()?.segment()?.name_ref()?.text(), scope, at)
            }
            _ => None,
        },
        ast::GenericArg::ConstArg(c) => {
            // `{ Alias }`
            let text = c.syntax().text().to_string();
            let inner = text
                .trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .trim();
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
        layout,
        span: Some(at),
    })
}

/// `#[device(chip = N)]` on a function.
fn device_chips(f: &ast::Fn) -> Option<Option<u64>> {
    for attr in ast::HasAttrs::attrs(f) {
        if attr.simple_name().as_deref() == Some("device") {
            let tt = attr
                .as_simple_call()
                .map(|(_, t)| t.syntax().text().to_string())
                .unwrap_or_default();
            let chips = tt
                .split_once("chip")
                .and_then(|(_, rest)| rest.trim_start().strip_prefix('='))
                .and_then(|rest| {
                    let digits: String = rest
                        .trim_start()
                        .chars()
                        .take_while(|c| c.is_ascii_digit())
                        .collect();
                    digits.parse().ok()
                });
            return Some(chips);
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
    sig.ret = f
        .ret_type()
        .and_then(|r| r.ty())
        .and_then(|t| tensor_type(&t, env, &env.scope, &mut Vec::new()))
        .map(unplaced);
    sig
}

/// Builds the model of one function. `scope` holds the module's axes and aliases plus the
/// function's own (and its generic parameters).
pub fn build_fn(f: &ast::Fn, env: &Env, scope: Scope) -> FnModel {
    let name = ast::HasName::name(f)
        .map(|n| n.text().to_string())
        .unwrap_or_default();
    let name_span = ast::HasName::name(f).map_or(span_of(f.syntax().text_range()), |n| {
        span_of(n.syntax().text_range())
    });
    let kind = match device_chips(f) {
        Some(chips) => FnKind::Device { chips },
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
        model: FnModel {
            name,
            span: name_span,
            kind,
            tensors: Vec::new(),
            chains: Vec::new(),
            problems: Vec::new(),
        },
        ret: None,
    };
    if let Some(pl) = f.param_list() {
        for p in pl.params() {
            let Some(pat) = p.pat() else { continue };
            let Some(pname) = pat_name(&pat) else {
                continue;
            };
            let ty = p
                .ty()
                .and_then(|t| tensor_type(&t, b.env, &b.scope, &mut b.model.problems));
            if let Some(ty) = ty {
                b.model.tensors.push(TensorVar {
                    name: pname.clone(),
                    span: span_of(pat.syntax().text_range()),
                    origin: Origin::Param,
                    ty: ty.clone(),
                    context: None,
                    address: None,
                });
                b.vars.insert(
                    pname,
                    Val::Tensor {
                        ty,
                        tu: None,
                        engines: Vec::new(),
                    },
                );
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
    }
    if env.local_types.contains("BufTensor") {
        let chains = buf_tensor_chains(f, &b.scope);
        b.model.chains.extend(chains);
    }
    b.model
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
        let name = name_ref.text().to_string();
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
        let (input, output) = match name.as_str() {
            "read" => {
                let out = if generics.len() == 2 {
                    let mut t = stream_ty(None, generics.first(), generics.get(1));
                    t.dtype = buf.dtype.clone();
                    Some(t)
                } else {
                    ret.clone()
                };
                (Some(buf.clone()), out)
            }
            "write" => {
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
            steps: vec![Step {
                method: name,
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
        for stmt in list.statements() {
            match stmt {
                ast::Stmt::LetStmt(l) => self.let_stmt(&l),
                ast::Stmt::ExprStmt(e) => {
                    if let Some(e) = e.expr() {
                        self.top(&e, None, None);
                    }
                }
                ast::Stmt::Item(_) => {}
            }
        }
        self.last_ends.clear();
        let val = match list.tail_expr() {
            Some(tail) => self.top(&tail, expected, binding),
            None => Val::Unknown,
        };
        self.consts = outer_consts;
        val
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
        if tu.is_some() {
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
            self.arg_expr(&c);
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
        let immutable = matches!(l.pat(), Some(ast::Pat::IdentPat(ref i)) if i.mut_token().is_none() && i.ref_token().is_none());
        let constant = l
            .initializer()
            .filter(|_| immutable)
            .and_then(|init| consts::eval(&init, &self.consts));
        if let Some(n) = &name {
            match constant {
                Some(v) => {
                    self.consts.insert(n.clone(), v);
                }
                None => {
                    self.consts.remove(n);
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
        let Some(name) = name else { return };
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
                .and_then(|s| s.address);
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
            });
        }
        self.vars.insert(name, val);
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
            ast::Expr::ForExpr(f) => {
                if let Some(b) = f.loop_body() {
                    self.block(&b, None, None);
                }
                self.last_ends.clear();
                return Val::Unknown;
            }
            ast::Expr::WhileExpr(w) => {
                if let Some(b) = w.loop_body() {
                    self.block(&b, None, None);
                }
                self.last_ends.clear();
                return Val::Unknown;
            }
            ast::Expr::LoopExpr(l) => {
                if let Some(b) = l.loop_body() {
                    self.block(&b, None, None);
                }
                self.last_ends.clear();
                return Val::Unknown;
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
        let mid_pass = matches!(val, Val::Tensor { tu: Some(_), .. });
        if steps.is_empty() {
            if let (Some(exp), Val::Tensor { ty, .. }) = (&expected, &mut val) {
                self.unify(ty, exp, &mut []);
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
        } else if let (Some(exp), Val::Unknown) = (&expected, &val) {
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
        if let Some(want) = &exp.dtype
            && ty.dtype.as_ref() != Some(want)
            && let Some(f) = steps.iter().rposition(|s| s.method == "fetch")
            && written(&steps[f], 0).is_none()
            && steps[f + 1..].iter().all(|s| s.keep.contains(&Slot::D))
        {
            for (k, s) in steps[f..].iter_mut().enumerate() {
                if k > 0
                    && let Some(i) = s.input.as_mut()
                {
                    i.dtype = Some(want.clone());
                }
                if let Some(o) = s.output.as_mut() {
                    o.dtype = Some(want.clone());
                }
            }
            ty.dtype = Some(want.clone());
        }
        if ty.dtype.is_none() {
            ty.dtype = exp.dtype.clone();
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
                        input.dtype = out.dtype.clone();
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
                    prev.maps.entry(*s).or_insert_with(|| v.clone());
                }
                if prev.dtype.is_none() {
                    prev.dtype = input.dtype.clone();
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
                    "pdma" => Val::Dma("pdma"),
                    "tdma" => Val::Dma("tdma"),
                    _ => Val::Unknown,
                }
            }
            ast::Expr::CallExpr(c) => self.call(c, awaited),
            _ => Val::Unknown,
        }
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
        // `HbmTensor::<D, Chip, Element>::from_addr(a)`, `HostTensor::<D, M>::rand(..)`.
        if let Some(q) = path.qualifier()
            && let Some(seg) = q.segment()
            && let Some(tname) = seg.name_ref().map(|n| n.text().to_string())
            && let Some(kind) = Kind::from_name(&tname)
        {
            let mut ty = TensorTy::new(kind);
            if let Some(ga) = seg.generic_arg_list() {
                apply_generics(&mut ty, kind.params(), &ga, &self.scope);
            }
            for a in &args {
                self.arg_expr(a);
            }
            return Val::Tensor {
                ty,
                tu: None,
                engines: Vec::new(),
            };
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
        if path.qualifier().is_none()
            && let Some(sig) = self.env.signature(&fname)
        {
            for (k, a) in args.iter().enumerate() {
                let expected = sig.params.get(k).cloned().flatten();
                self.top(a, expected, None);
            }
            return match sig.ret {
                Some(ty) => Val::Tensor {
                    ty,
                    tu: None,
                    engines: Vec::new(),
                },
                None => Val::Unknown,
            };
        }
        for a in &args {
            self.arg_expr(a);
        }
        Val::Unknown
    }

    /// `launch(kernel, (&mut ctx, &a, &b))`: the tuple takes the kernel's parameter types (as
    /// rustc infers them) and the result is the kernel's return type.
    fn launch(&mut self, args: &[ast::Expr]) -> Val {
        let Some(ast::Expr::PathExpr(k)) = args.first() else {
            return Val::Unknown;
        };
        let Some(kname) = k
            .path()
            .and_then(|p| p.segment())
            .and_then(|s| s.name_ref())
        else {
            return Val::Unknown;
        };
        let Some(sig) = self.env.signature(kname.text()) else {
            return Val::Unknown;
        };
        if let Some(ast::Expr::TupleExpr(t)) = args.get(1) {
            for (field, param) in t.fields().zip(&sig.params) {
                let (Some(param), Some(var)) = (param, var_name(&field)) else {
                    continue;
                };
                self.refine_var(&var, param);
            }
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
        let span = span_of(name_ref.syntax().text_range());
        let args: Vec<ast::Expr> = m.arg_list().map(|a| a.args().collect()).unwrap_or_default();
        let val_args: Vec<Arg> = args.iter().map(|a| arg_of(a.syntax())).collect();
        let gen_args: Vec<Arg> = m
            .generic_arg_list()
            .map(|g| {
                g.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .map(|a| arg_of(a.syntax()))
                    .collect()
            })
            .unwrap_or_default();
        let arg_vals: Vec<Val> = args.iter().map(|a| self.arg_expr(a)).collect();
        let Some(spec) = methods::method(&name) else {
            if matches!(recv, Val::Tensor { .. } | Val::TuCtx(_)) && !methods::is_std_method(&name)
            {
                self.model.problems.push(
                    Unknown {
                        at: span,
                        primitive: Primitive::Method(name.clone()),
                    }
                    .into(),
                );
                steps.push(Step {
                    method: name,
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
        let address = spec
            .address_arg
            .and_then(|k| args.get(k))
            .and_then(|a| consts::eval(a, &self.consts));

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
                if name == "begin_interleaved" {
                    self.check_interleave(&generics, &args, span);
                }
                let mut ty = TensorTy::new(Kind::Begin);
                ty.dtype = src.dtype.clone();
                for s in [Slot::Chip, Slot::Cluster, Slot::Slice] {
                    if let Some(v) = src.get(s) {
                        ty.maps.insert(s, v.clone());
                    }
                }
                if let Some(v) = src.get(Slot::Element) {
                    ty.maps.insert(Slot::Packet, v.clone());
                }
                let time = if name == "begin_interleaved" {
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
                    method: name,
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
            self.order_error(&name, spec.engine, &input, span);
            steps.push(Step {
                method: name,
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
            self.context_rules(&name, spec.engine, &input, tu, &engines, &generics, span);
            if engines.last() != Some(&spec.engine) {
                engines.push(spec.engine);
            }
        } else {
            self.dma_rules(&name, spec.is_async, awaited, &arg_vals, span);
        }

        let mut out = TensorTy::new(out_kind);
        for s in spec.keep {
            if *s == Slot::D {
                out.dtype = input.dtype.clone();
            } else if let Some(v) = input.get(*s) {
                out.maps.insert(*s, v.clone());
            }
        }
        for (slot, g) in spec.generics.iter().zip(&generics) {
            set_slot(&mut out, *slot, g, &self.scope);
        }
        match name.as_str() {
            "contract" => out.dtype = input.dtype.as_deref().and_then(widened).map(str::to_string),
            "vector_fxp_to_fp" => out.dtype = Some("f32".into()),
            "vector_fp_to_fxp" => out.dtype = Some("i32".into()),
            "align" => {
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
            method: name,
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
        let tu = if out_kind.is_stream() { tu } else { None };
        Val::Tensor {
            ty: out,
            tu,
            engines,
        }
    }

    /// A method the receiver's pipeline position does not have.
    fn order_error(&mut self, name: &str, engine: Engine, input: &TensorTy, span: Span) {
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
            || (matches!(input.kind, Kind::Fetch | Kind::Switch) && name == "to_trf")
            || (matches!(input.kind, Kind::Fetch | Kind::Switch) && name == "to_vrf");
        let method = name.to_string();
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
        name: &str,
        engine: Engine,
        input: &TensorTy,
        tu: Option<Tu>,
        engines: &[Engine],
        generics: &[ast::GenericArg],
        span: Span,
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
                        method: name.to_string(),
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
                    .push(Kernel::SubCommitAfterCast { at: span }.into());
            }
            Engine::Fetch => {
                let casting = name == "fetch"
                    && generics
                        .first()
                        .and_then(dtype_of)
                        .zip(input.dtype.clone())
                        .is_some_and(|(d2, d)| d2 != d);
                if name == "fetch_with_table" || casting {
                    self.model
                        .problems
                        .push(Kernel::SubFetchAdapter { at: span, casting }.into());
                }
            }
            _ => {}
        }
    }

    /// DMA contexts and `.await`.
    fn dma_rules(&mut self, name: &str, is_async: bool, awaited: bool, args: &[Val], span: Span) {
        let host_side = matches!(self.model.kind, FnKind::Host | FnKind::Plain);
        let dma = args.iter().find_map(|a| match a {
            Val::Dma(d) => Some(*d),
            _ => None,
        });
        match (name, dma) {
            ("to_dm", Some("pdma")) => self
                .model
                .problems
                .push(Kernel::DmOverPcie { at: span }.into()),
            ("to_host", Some("tdma")) => self
                .model
                .problems
                .push(Kernel::HostOverTensorDma { at: span }.into()),
            _ => {}
        }
        if is_async && dma == Some("pdma") && !awaited && host_side {
            self.model.problems.push(
                Kernel::PcieNotAwaited {
                    at: span,
                    method: name.to_string(),
                }
                .into(),
            );
        }
        if awaited
            && matches!(self.model.kind, FnKind::Device { .. })
            && (dma == Some("tdma") || !is_async)
        {
            self.model.problems.push(
                Kernel::AwaitedInDevice {
                    at: span,
                    method: name.to_string(),
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
    let name = p.path()?.segment()?.name_ref()?.text().to_string();
    let axis = scope.axes.get(&name)?;
    Some(MapVal::unplaced(
        format!("m![{name}]"),
        Some(Layout::symbol(axis.axis.clone())),
    ))
}

fn arg_of(node: &ra_ap_syntax::SyntaxNode) -> Arg {
    Arg {
        text: node.text().to_string(),
        span: span_of(node.text_range()),
    }
}

/// Copies what `want` knows and `ty` does not.
fn fill(ty: &mut TensorTy, want: &TensorTy) {
    if ty.dtype.is_none() {
        ty.dtype = want.dtype.clone();
    }
    for (s, v) in &want.maps {
        ty.maps.entry(*s).or_insert_with(|| v.clone());
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
