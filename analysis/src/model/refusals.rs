//! What furiosa-opt-std 0.6's compiler refuses in a `#[device]` function that the manual never
//! states: read from the function's syntax while its model is built, reported by the OPT
//! rules (`crate::rules::opt_std`).
//!
//! - A generic entry point: the device function must be monomorphic when it is translated
//!   (`furiosa-opt-examples/src/negative/generic_device.rs` at ebb846a).
//! - A run-time `assert!` or `panic!`: a device body allows compile-time guards only, in
//!   `const { .. }` (`negative/runtime_panic.rs`).
//! - An immediate that does not const-fold: a `memset` fill value or a Vector Engine operand
//!   computed by a function call or an `as` cast outside `const { .. }`
//!   (`negative/memset.rs`, `negative/scalar_cast_diag.rs`).
//! - A guarded Vector Engine operand (`Branched::imm(guard, v).imm(..).rf(guard, &vrf)`) whose
//!   slots the pass cannot hold: a fourth immediate or a slot after the rf port (the builder's
//!   typestate, `engine/vector/operand.rs:320-470`), a guard that never fires or a slot after an
//!   unconditional one (`SlotDefect`, `furiosa-opt-common-ir/src/lib.rs:491-510,560-600`). Found
//!   in every function of a furiosa-opt-std crate ([`slot_defects`]): the library's builder
//!   refuses them wherever the operand is built.

use crate::diagnostic::Span;
use ra_ap_syntax::ast::{self, HasArgList, HasGenericParams, HasLoopBody, HasName};
use ra_ap_syntax::{AstNode, TextRange, WalkEvent};

/// One construct the 0.6 compiler refuses in a device function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// `fn k<A: AxisName>(..)` under `#[device]`: `at` is the generic parameter list.
    GenericEntry { at: Span, params: String },
    /// `assert!(..)`, `panic!(..)` and friends at run time: `at` is the macro's name.
    RuntimePanic { at: Span, name: String },
    /// An immediate of `.method(..)` that does not const-fold: `at` is the argument, `what`
    /// the construct that stays at run time, `text` the argument as written.
    NotConstant {
        at: Span,
        method: String,
        what: RunTime,
        text: String,
    },
    /// A `Branched` operand whose slots a Vector Engine pass cannot hold: `at` is the argument
    /// or call at fault, `related` the unconditional guard an `AfterUnconditional` slot follows.
    Slots {
        at: Span,
        fault: SlotFault,
        related: Option<Span>,
    },
}

/// What is wrong with the slots of a `Branched` operand. A slot is named as the vendor names
/// it: `reg0`, `reg1`, `reg2` (the immediate registers, in the order `imm` fills them), `rf`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SlotFault {
    /// A fourth `imm`: a pass has three immediate registers.
    NoFreeImmediate,
    /// An `imm` or a second `rf` after the rf port, which is the last slot.
    AfterRf { method: String },
    /// A guard no execution id satisfies (`TagGuard::not_matches([Ignore; 4])`).
    DeadGuard { slot: &'static str, guard: String },
    /// A slot after one guarded by `TagGuard::all()`, which claims every element left over.
    AfterUnconditional {
        unconditional: &'static str,
        slot: &'static str,
    },
}

/// The construct that keeps an immediate from folding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunTime {
    /// A call of a function (`bf16::from_f32(1.0)`).
    Call,
    /// An `as` cast.
    Cast,
    /// A `for` loop's variable: a device loop runs on the chip.
    LoopVariable,
    /// An `if` on a run-time value.
    If,
    /// A `match` on a run-time value.
    Match,
}

impl RunTime {
    /// The construct, in a few words.
    pub fn what(self) -> &'static str {
        match self {
            RunTime::Call => "a function call",
            RunTime::Cast => "an `as` cast",
            RunTime::LoopVariable => "a loop variable",
            RunTime::If => "an `if` on a run-time value",
            RunTime::Match => "a `match` on a run-time value",
        }
    }

    /// Whether `const { .. }` around the value folds it: a call or a cast of constants does;
    /// a value that varies while the kernel runs never does.
    pub fn folds_in_const_block(self) -> bool {
        matches!(self, RunTime::Call | RunTime::Cast)
    }
}

/// What tells where a scalar comes from, beyond its own text.
pub struct Folding<'a> {
    /// Whether a callee is a function of the crate (`temp_alu`), which the compiler inlines,
    /// not one without a device body (`bf16::from_f32`).
    pub of_crate: &'a dyn Fn(&str) -> bool,
    /// The run-time value the caller gives a parameter of a helper traced from a kernel (the
    /// `keep` of `apply(ctx, p, u, keep)`, an `if` on a loop variable at the call).
    pub param: &'a dyn Fn(&str) -> Option<RunTime>,
}

/// Every refusal in device function `f`, in source order.
pub fn refusals(f: &ast::Fn, folding: &Folding<'_>) -> Vec<Refusal> {
    let mut out = Vec::new();
    if let Some(generics) = f.generic_param_list() {
        let params: Vec<String> = generics
            .generic_params()
            .filter(|p| !matches!(p, ast::GenericParam::LifetimeParam(_)))
            .map(|p| p.syntax().text().to_string())
            .collect();
        if !params.is_empty() {
            out.push(Refusal::GenericEntry {
                at: span_of(generics.syntax().text_range()),
                params: params.join(", "),
            });
        }
    }
    run_time_code(f, &mut |node| {
        if let Some(call) = ast::MacroCall::cast(node.clone()) {
            runtime_panic(&call, &mut out);
        } else if let Some(call) = ast::MethodCallExpr::cast(node.clone()) {
            immediates(&call, folding, &mut out);
        }
    });
    out
}

/// The immediates of helper `f`, traced from a furiosa-opt-std kernel, that do not fold: the
/// compiler inlines the helper into the kernel, so its immediates are the kernel's, and a
/// parameter the caller gives a run-time value is one.
pub fn helper_immediates(f: &ast::Fn, folding: &Folding<'_>) -> Vec<Refusal> {
    let mut out = Vec::new();
    run_time_code(f, &mut |node| {
        if let Some(call) = ast::MethodCallExpr::cast(node.clone()) {
            immediates(&call, folding, &mut out);
        }
    });
    out
}

/// Visits each node of `f`'s body in source order, outside `const { .. }` blocks: everything
/// inside one folds.
fn run_time_code(f: &ast::Fn, visit: &mut dyn FnMut(&ra_ap_syntax::SyntaxNode)) {
    let Some(body) = f.body() else {
        return;
    };
    let mut walk = body.syntax().preorder();
    while let Some(event) = walk.next() {
        let WalkEvent::Enter(node) = event else {
            continue;
        };
        if ast::BlockExpr::cast(node.clone()).is_some_and(|b| b.const_token().is_some()) {
            walk.skip_subtree();
        } else {
            visit(&node);
        }
    }
}

/// Whether argument `e` of a call varies while the kernel runs (or does not fold), and where
/// that comes from: the `if`, `match`, call or cast that makes it, or the loop's variable.
pub fn run_time_argument(e: &ast::Expr, folding: &Folding<'_>) -> Option<(RunTime, Span)> {
    if e.syntax()
        .ancestors()
        .any(|n| ast::BlockExpr::cast(n).is_some_and(|b| b.const_token().is_some()))
    {
        return None;
    }
    run_time_part(e, BINDING_DEPTH, folding).map(|(what, at)| (what, span_of(at)))
}

/// The macros that panic at run time.
const PANICKING: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
];

fn runtime_panic(call: &ast::MacroCall, out: &mut Vec<Refusal>) {
    let Some(name) = call
        .path()
        .and_then(|p| p.segment())
        .and_then(|s| s.name_ref())
    else {
        return;
    };
    let text = name.text().to_string();
    if PANICKING.contains(&text.as_str()) {
        out.push(Refusal::RuntimePanic {
            at: span_of(name.syntax().text_range()),
            name: text,
        });
    }
}

/// The immediates of a `memset` or a Vector Engine op that stay at run time.
fn immediates(call: &ast::MethodCallExpr, folding: &Folding<'_>, out: &mut Vec<Refusal>) {
    let Some(name) = call.name_ref().map(|n| n.text().to_string()) else {
        return;
    };
    if name != "memset" && !name.starts_with("vector_") {
        return;
    }
    for arg in call.arg_list().into_iter().flat_map(|l| l.args()) {
        if let Some((what, _)) = run_time_part(&arg, BINDING_DEPTH, folding) {
            out.push(Refusal::NotConstant {
                at: span_of(arg.syntax().text_range()),
                method: name.clone(),
                what,
                text: arg.syntax().text().to_string(),
            });
        }
    }
}

/// How many `let`s a name is followed through to the value it was bound to.
const BINDING_DEPTH: u32 = 8;

/// What keeps a scalar argument from folding: a call of a function or an `as` cast, outside
/// `const { .. }`; a `for` loop's variable (a device loop runs on the chip, its index is a
/// run-time scalar); an `if` or `match` on a run-time value (`negative/runtime_if_scalar.rs`
/// at ebb846a); a local bound to one of these. A variant or struct (`FpBinaryOp::MulF(..)`) is
/// a value, and the library's operand builders (`Branched::imm(..)`, `TagGuard::matches(..)`:
/// an associated function of a type, which is capitalised) describe an operand: their
/// arguments are what is checked. A function of a scalar type (`bf16::from_f32`) or a free
/// function runs at run time. References (`&vrf`) are tensor operands, not immediates. With
/// the construct, where it is.
fn run_time_part(e: &ast::Expr, depth: u32, folding: &Folding<'_>) -> Option<(RunTime, TextRange)> {
    let within = |e: &ast::Expr| run_time_part(e, depth, folding);
    let here = e.syntax().text_range();
    match e {
        ast::Expr::CastExpr(_) => Some((RunTime::Cast, here)),
        ast::Expr::CallExpr(c) => {
            let callee = c.expr()?.syntax().text().to_string();
            let mut segments = callee.rsplit("::").map(str::trim);
            let last = segments.next().unwrap_or_default();
            let owner = segments.next().unwrap_or_default();
            let capitalised = |s: &str| s.starts_with(|ch: char| ch.is_ascii_uppercase());
            // A function of the crate is inlined where it is called (`negative/memset.rs`
            // at ebb846a refuses a call "with no device-translatable body"): what it is given
            // decides whether it folds.
            if capitalised(last) || capitalised(owner) || (folding.of_crate)(&callee) {
                c.arg_list()?.args().find_map(|a| within(&a))
            } else {
                Some((RunTime::Call, here))
            }
        }
        ast::Expr::ParenExpr(p) => within(&p.expr()?),
        ast::Expr::PrefixExpr(p) => within(&p.expr()?),
        ast::Expr::BinExpr(b) => b
            .lhs()
            .and_then(|l| within(&l))
            .or_else(|| b.rhs().and_then(|r| within(&r))),
        ast::Expr::TupleExpr(t) => t.fields().find_map(|f| within(&f)),
        ast::Expr::IfExpr(i) => within(&i.condition()?).map(|_| (RunTime::If, here)),
        ast::Expr::MatchExpr(m) => within(&m.expr()?).map(|_| (RunTime::Match, here)),
        ast::Expr::PathExpr(p) => match binding(p)? {
            Binding::LoopVariable(at) => Some((RunTime::LoopVariable, at)),
            Binding::Let(value) if depth > 0 => run_time_part(&value, depth - 1, folding),
            Binding::Let(_) => None,
            Binding::Param(name, at) => (folding.param)(&name).map(|what| (what, at)),
        },
        _ => None,
    }
}

/// What a local name was bound to.
enum Binding {
    /// The pattern of an enclosing `for`.
    LoopVariable(TextRange),
    /// The value of the nearest `let name = value;` before the use.
    Let(ast::Expr),
    /// A parameter of the function, and its pattern.
    Param(String, TextRange),
}

/// The binding of a one-segment lowercase path (a local), from the use outwards: the `let`s
/// before it in each enclosing block, then an enclosing `for` that binds it.
fn binding(path: &ast::PathExpr) -> Option<Binding> {
    let p = path.path()?;
    if p.qualifier().is_some() {
        return None;
    }
    let name = p.segment()?.name_ref()?.text().to_string();
    if !name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
        return None;
    }
    let binds = |pat: Option<ast::Pat>| matches!(pat, Some(ast::Pat::IdentPat(i)) if i.name().is_some_and(|n| n.text() == name));
    let mut inner = path.syntax().clone();
    for node in path.syntax().ancestors().skip(1) {
        if let Some(list) = ast::StmtList::cast(node.clone()) {
            let before = list
                .statements()
                .take_while(|s| s.syntax().text_range().end() <= inner.text_range().start());
            let found = before.filter_map(|s| match s {
                ast::Stmt::LetStmt(l) if binds(l.pat()) => Some(l.initializer()),
                _ => None,
            });
            if let Some(value) = found.last() {
                return value.map(Binding::Let);
            }
        }
        if let Some(f) = ast::ForExpr::cast(node.clone())
            && f.loop_body().is_some_and(|b| b.syntax() == &inner)
            && binds(f.pat())
        {
            return f
                .pat()
                .map(|p| Binding::LoopVariable(p.syntax().text_range()));
        }
        if let Some(f) = ast::Fn::cast(node.clone()) {
            let param = f.param_list()?.params().find(|p| binds(p.pat()))?;
            return Some(Binding::Param(name, param.syntax().text_range()));
        }
        inner = node;
    }
    None
}

/// Every `Branched` operand of `f` whose slots a pass cannot hold, in source order: the first
/// fault of each operand, as the library's builder meets it slot by slot.
pub fn slot_defects(f: &ast::Fn) -> Vec<Refusal> {
    let mut out = Vec::new();
    let Some(body) = f.body() else {
        return out;
    };
    for call in body.syntax().descendants().filter_map(ast::CallExpr::cast) {
        branched(&call, &mut out);
    }
    out
}

/// The slot kinds, as the builder's methods name them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SlotKind {
    Imm,
    Rf,
}

/// One filled slot: its kind, its guard argument and where its call is named.
struct Filled {
    kind: SlotKind,
    method: String,
    guard: Option<ast::Expr>,
    at: Span,
}

/// What a guard admits, as far as its text says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Admits {
    /// Every execution id: `TagGuard::all()`, `matches([Ignore; 4])`.
    All,
    /// None: `not_matches([Ignore; 4])`.
    Nothing,
    /// Some ids and not others, or not known.
    Other,
}

const IMM_SLOTS: [&str; 3] = ["reg0", "reg1", "reg2"];

/// The slot fault of the operand `Branched::imm(..)` / `Branched::rf(..)` opens, if any.
fn branched(call: &ast::CallExpr, out: &mut Vec<Refusal>) {
    let Some(slots) = branched_slots(call) else {
        return;
    };
    out.extend(slot_fault(&slots));
}

/// The slots a `Branched::<slot>(guard, ..)` call and the methods chained on it fill, in
/// order; `None` for another call.
fn branched_slots(call: &ast::CallExpr) -> Option<Vec<Filled>> {
    let Some(ast::Expr::PathExpr(callee)) = call.expr() else {
        return None;
    };
    let path = callee.path()?;
    let name = path.segment().and_then(|s| s.name_ref())?;
    let owner = path
        .qualifier()
        .and_then(|q| q.segment())
        .and_then(|s| s.name_ref());
    if owner.is_none_or(|o| o.text() != "Branched") {
        return None;
    }
    let first_arg = |list: Option<ast::ArgList>| list.and_then(|l| l.args().next());
    let kind = slot_kind(name.text())?;
    let mut slots = vec![Filled {
        kind,
        method: name.text().to_string(),
        guard: first_arg(call.arg_list()),
        at: span_of(name.syntax().text_range()),
    }];
    // The methods chained on the builder: `.imm(guard, v)`, `.rf(guard, x)`.
    let mut node = call.syntax().clone();
    while let Some(m) = node.parent().and_then(ast::MethodCallExpr::cast) {
        if m.receiver().is_none_or(|r| r.syntax() != &node) {
            break;
        }
        let Some(n) = m.name_ref() else { break };
        let Some(kind) = slot_kind(n.text()) else {
            break;
        };
        slots.push(Filled {
            kind,
            method: n.text().to_string(),
            guard: first_arg(m.arg_list()),
            at: span_of(n.syntax().text_range()),
        });
        node = m.syntax().clone();
    }
    Some(slots)
}

/// The first fault of the filled `slots`, in order: a slot after the register-file slot, no
/// immediate slot left, a guard that admits nothing, or a slot after an unconditional one.
fn slot_fault(slots: &[Filled]) -> Option<Refusal> {
    let mut imms = 0;
    let mut rf = false;
    let mut unconditional: Option<(&'static str, Option<Span>)> = None;
    for s in slots {
        let fault = |fault, at, related| Some(Refusal::Slots { at, fault, related });
        if rf {
            let method = s.method.clone();
            return fault(SlotFault::AfterRf { method }, s.at, None);
        }
        let slot = match s.kind {
            SlotKind::Imm => {
                let Some(slot) = IMM_SLOTS.get(imms) else {
                    return fault(SlotFault::NoFreeImmediate, s.at, None);
                };
                imms += 1;
                *slot
            }
            SlotKind::Rf => {
                rf = true;
                "rf"
            }
        };
        let guard_span = s.guard.as_ref().map(|g| span_of(g.syntax().text_range()));
        let admits = s
            .guard
            .as_ref()
            .map_or(Admits::Other, |g| admits(g, BINDING_DEPTH));
        if admits == Admits::Nothing
            && let (Some(g), Some(at)) = (&s.guard, guard_span)
        {
            let guard = g.syntax().text().to_string();
            return fault(SlotFault::DeadGuard { slot, guard }, at, None);
        }
        if let Some((unconditional, related)) = unconditional {
            let fault_kind = SlotFault::AfterUnconditional {
                unconditional,
                slot,
            };
            return fault(fault_kind, s.at, related);
        }
        if admits == Admits::All {
            unconditional = Some((slot, guard_span));
        }
    }
    None
}

fn slot_kind(method: &str) -> Option<SlotKind> {
    match method {
        "imm" => Some(SlotKind::Imm),
        "rf" => Some(SlotKind::Rf),
        _ => None,
    }
}

/// What a `TagGuard` expression admits: its constructor and its bit pattern, through the
/// `let`s that bound it.
fn admits(e: &ast::Expr, depth: u32) -> Admits {
    match e {
        ast::Expr::ParenExpr(p) => p.expr().map_or(Admits::Other, |x| admits(&x, depth)),
        ast::Expr::PathExpr(p) => match binding(p) {
            Some(Binding::Let(value)) if depth > 0 => admits(&value, depth - 1),
            _ => Admits::Other,
        },
        ast::Expr::CallExpr(c) => {
            let Some(ast::Expr::PathExpr(callee)) = c.expr() else {
                return Admits::Other;
            };
            let Some(path) = callee.path() else {
                return Admits::Other;
            };
            let name = path.segment().and_then(|s| s.name_ref());
            let owner = path
                .qualifier()
                .and_then(|q| q.segment())
                .and_then(|s| s.name_ref());
            if owner.is_none_or(|o| o.text() != "TagGuard") {
                return Admits::Other;
            }
            let bits = || {
                c.arg_list()
                    .and_then(|l| l.args().next())
                    .and_then(|b| unconstrained(&b, depth))
            };
            match name.as_ref().map(|n| n.text().to_string()).as_deref() {
                Some("all" | "default") => Admits::All,
                Some("matches") if bits() == Some(true) => Admits::All,
                Some("not_matches") if bits() == Some(true) => Admits::Nothing,
                _ => Admits::Other,
            }
        }
        _ => Admits::Other,
    }
}

/// Whether a `[BitReq; 4]` pattern constrains no bit (`[Ignore; 4]`, four `Ignore`s); `None`
/// when its text does not say.
fn unconstrained(e: &ast::Expr, depth: u32) -> Option<bool> {
    let is_ignore = |x: &ast::Expr| -> Option<bool> {
        let ast::Expr::PathExpr(p) = x else {
            return None;
        };
        let name = p.path()?.segment()?.name_ref()?.text().to_string();
        match name.as_str() {
            "Ignore" => Some(true),
            "One" | "Zero" => Some(false),
            _ => None,
        }
    };
    match e {
        ast::Expr::ParenExpr(p) => unconstrained(&p.expr()?, depth),
        ast::Expr::PathExpr(p) => match binding(p)? {
            Binding::Let(value) if depth > 0 => unconstrained(&value, depth - 1),
            _ => None,
        },
        ast::Expr::ArrayExpr(a) if a.semicolon_token().is_some() => is_ignore(&a.exprs().next()?),
        ast::Expr::ArrayExpr(a) => {
            let known: Vec<Option<bool>> = a.exprs().map(|x| is_ignore(&x)).collect();
            if known.contains(&Some(false)) {
                Some(false)
            } else if known.len() == 4 && known.iter().all(|k| *k == Some(true)) {
                Some(true)
            } else {
                None
            }
        }
        _ => None,
    }
}

fn span_of(r: TextRange) -> Span {
    Span::new(u32::from(r.start()) as usize, u32::from(r.end()) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ra_ap_syntax::{Edition, SourceFile};

    fn found(src: &str) -> Vec<String> {
        let file = SourceFile::parse(src, Edition::Edition2024).tree();
        let f = file
            .syntax()
            .descendants()
            .find_map(ast::Fn::cast)
            .expect("a function");
        let folding = Folding {
            of_crate: &|callee| callee == "lanes_of",
            param: &|_| None,
        };
        refusals(&f, &folding)
            .into_iter()
            .map(|r| match r {
                Refusal::GenericEntry { params, .. } => format!("generic {params}"),
                Refusal::RuntimePanic { name, .. } => format!("panic {name}"),
                Refusal::NotConstant { method, what, .. } => format!("{method}: {}", what.what()),
                Refusal::Slots { fault, .. } => format!("slots {fault:?}"),
            })
            .collect()
    }

    #[test]
    fn each_construct_the_0_6_compiler_refuses_is_found_and_its_const_form_is_not() {
        assert_eq!(found("fn k<'a, A: AxisName>() {}"), ["generic A: AxisName"]);
        assert_eq!(found("fn k<'a>() {}"), Vec::<String>::new());
        assert_eq!(
            found("fn k() { assert!(b < 9); const { assert!(N % 32 == 0) }; }"),
            ["panic assert"]
        );
        assert_eq!(
            found(
                "fn k() { x.memset(bf16::from_f32(1.0), s); x.memset(const { bf16::from_f32(1.0) }, s); \
                 y.vector_fp_div(<m![A]>::SIZE as f32); y.vector_fp_mul(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32); \
                 y.vector_fxp(FxpBinaryOp::AddFxp, 1 << 23); y.vector_fxp(FxpBinaryOp::MulInt, &vrf); \
                 y.vector_logic(Op::BitAnd, Branched::imm(negative, 0.0f32)); \
                 y.vector_clip(Op::Max, Branched::imm(t, i32::from(x))); \
                 let alu = lanes_of(LANE); y.vector_fp_binary(FpBinaryOp::MulF(alu), 2.0f32); \
                 y.vector_fxp(FxpBinaryOp::AddFxp, lanes_of(i as usize)); }"
            ),
            [
                "memset: a function call",
                "vector_fp_div: an `as` cast",
                "vector_clip: a function call",
                // A function of the crate is inlined: only what it is given can keep it at
                // run time.
                "vector_fxp: an `as` cast"
            ]
        );
    }

    /// The slots of a `Branched` operand, as the builder fills them: the first fault of each
    /// operand; a guard read through a `let`; a guard the text does not decide is not judged.
    #[test]
    fn each_slot_fault_of_a_branched_operand_is_found() {
        let faults = |body: &str| -> Vec<String> {
            let src = format!("fn k() {{ {body} }}");
            let file = SourceFile::parse(&src, Edition::Edition2024).tree();
            let f = file
                .syntax()
                .descendants()
                .find_map(ast::Fn::cast)
                .expect("a function");
            slot_defects(&f)
                .into_iter()
                .map(|r| match r {
                    Refusal::Slots { fault, .. } => format!("{fault:?}"),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        let g = "TagGuard::matches([One, Ignore, Ignore, Ignore])";
        assert_eq!(
            faults(&format!(
                "y.vector_clip(Op::Max, Branched::imm({g}, 1).imm({g}, 2).imm({g}, 3).imm({g}, 4));"
            )),
            ["NoFreeImmediate"]
        );
        assert_eq!(
            faults(&format!(
                "y.vector_clip(Op::Max, Branched::rf({g}, Stash).imm({g}, 1));"
            )),
            ["AfterRf { method: \"imm\" }"]
        );
        assert_eq!(
            faults(
                "let dead = TagGuard::not_matches([BitReq::Ignore; 4]); \
                 y.vector_clip(Op::Max, Branched::imm(dead, 1));"
            ),
            ["DeadGuard { slot: \"reg0\", guard: \"dead\" }"]
        );
        assert_eq!(
            faults(&format!(
                "y.vector_clip(Op::Max, Branched::imm({g}, 1).imm(TagGuard::matches([Ignore, Ignore, Ignore, Ignore]), 2).rf({g}, &v));"
            )),
            ["AfterUnconditional { unconditional: \"reg1\", slot: \"rf\" }"]
        );
        // Valid: the unconditional slot last; a guard the text does not decide.
        assert!(
            faults(&format!(
                "y.vector_clip(Op::Max, Branched::imm({g}, 1).rf(TagGuard::all(), &v)); \
                 y.vector_clip(Op::Max, Branched::imm(guard_of(x), 1).imm({g}, 2)); \
                 y.vector_clip(Op::Max, Branched::imm(TagGuard::not_matches([One, Ignore, Ignore, Ignore]), 1));"
            ))
            .is_empty()
        );
    }

    /// A value that varies while the kernel runs: a loop's variable, a branch on one, a local
    /// bound to either (through `let`s); a local bound to a constant, or a branch on a
    /// constant, folds.
    #[test]
    fn an_immediate_read_from_a_run_time_value_is_found_through_its_lets() {
        assert_eq!(
            found(
                "fn k() { for i in 0..2 { let c = if i == 1 { 1 } else { 2 }; let d = c; \
                 y.vector_fxp(Op::AddFxp, d); y.vector_fxp(Op::AddFxp, i + 1); \
                 y.vector_fxp(Op::AddFxp, match i { 0 => 1, _ => 2 }); } }"
            ),
            [
                "vector_fxp: an `if` on a run-time value",
                "vector_fxp: a loop variable",
                "vector_fxp: a `match` on a run-time value"
            ]
        );
        assert_eq!(
            found(
                "fn k() { let c = 3; let d = if N > 2 { 1 } else { 2 }; for i in 0..2 { \
                 y.vector_fxp(Op::AddFxp, c); y.vector_fxp(Op::AddFxp, d); let i = 4; \
                 y.vector_fxp(Op::AddFxp, i); } }"
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_helper_immediate_read_from_a_parameter_the_caller_gives_a_run_time_value_is_found() {
        let src = "fn k() { for i in 0..4 { let keep = if i < 2 { 1.0 } else { 0.5 }; \
                   step(ctx, keep, 2.0); } } \
                   fn step(ctx: &mut Context, keep: f32, lr: f32) { let k = keep; \
                   y.vector_fp_mul(Op::MulF, k); y.vector_fp_mul(Op::MulF, lr); }";
        let file = SourceFile::parse(src, Edition::Edition2024).tree();
        let fns: Vec<ast::Fn> = file
            .syntax()
            .descendants()
            .filter_map(ast::Fn::cast)
            .collect();
        let none = Folding {
            of_crate: &|_| false,
            param: &|_| None,
        };
        // The caller: the first argument after `ctx` varies, the constant does not.
        let call = fns[0]
            .syntax()
            .descendants()
            .find_map(ast::CallExpr::cast)
            .expect("a call");
        let args: Vec<ast::Expr> = call.arg_list().expect("args").args().collect();
        let kinds: Vec<Option<RunTime>> = args
            .iter()
            .map(|a| run_time_argument(a, &none).map(|(what, _)| what))
            .collect();
        assert_eq!(kinds, [None, Some(RunTime::If), None]);
        // The helper, with `keep` given that value: its immediate through `k` is refused.
        let given = Folding {
            of_crate: &|_| false,
            param: &|p| (p == "keep").then_some(RunTime::If),
        };
        let found: Vec<String> = helper_immediates(&fns[1], &given)
            .into_iter()
            .filter_map(|r| match r {
                Refusal::NotConstant { text, what, .. } => Some(format!("{text}: {}", what.what())),
                _ => None,
            })
            .collect();
        assert_eq!(found, ["k: an `if` on a run-time value"]);
        assert!(helper_immediates(&fns[1], &none).is_empty());
    }
}
