//! The Sequencer page's simplified interface (manual L1241-L1262): `buf.read()` and
//! `buf.write(stream)` on a file-local `BufTensor<D, Buf>`, recorded as steps `read` (input: a
//! `DmTensor` whose Element is `Buf`; output: a `StreamTensor` with Time/Packet from the
//! turbofish or the local `StreamTensor<'l, D, Time, Packet>` return type) and `write` (input:
//! the stream argument's type; output: the buffer). Used by the SEQ rules (issue 4).

use super::env::{dtype_of, map_of};
use super::reading::{arg_of, pat_name, span_of, var_name};
use crate::mapping::Scope;
use crate::model::methods::Method;
use crate::model::types::{Kind, Slot, TensorTy};
use crate::model::{Chain, Step};
use ra_ap_syntax::ast::{HasArgList, HasGenericArgs};
use ra_ap_syntax::{AstNode, ast};
use std::collections::HashMap;

/// The chains of `f`'s reads and writes of its `BufTensor` parameters.
pub(super) fn buf_tensor_chains(f: &ast::Fn, scope: &Scope) -> Vec<Chain> {
    let Some(params) = BufParams::of(f, scope) else {
        return Vec::new();
    };
    let Some(body) = f.body() else {
        return Vec::new();
    };
    body.syntax()
        .descendants()
        .filter_map(ast::MethodCallExpr::cast)
        .filter_map(|m| params.chain_of(&m, scope))
        .collect()
}

/// `f`'s `BufTensor` and `StreamTensor` parameters, by name, and the stream it returns.
struct BufParams {
    bufs: HashMap<String, TensorTy>,
    streams: HashMap<String, TensorTy>,
    ret: Option<TensorTy>,
}

impl BufParams {
    /// `None` when `f` takes no `BufTensor`.
    fn of(f: &ast::Fn, scope: &Scope) -> Option<BufParams> {
        let mut bufs: HashMap<String, TensorTy> = HashMap::new();
        let mut streams: HashMap<String, TensorTy> = HashMap::new();
        for p in f.param_list().into_iter().flat_map(|pl| pl.params()) {
            let (Some(pat), Some(ty)) = (p.pat(), p.ty()) else {
                continue;
            };
            let Some(name) = pat_name(&pat) else { continue };
            if let Some(args) = local(&ty, "BufTensor") {
                bufs.insert(name, buf_ty(&args, scope));
            } else if let Some(args) = local(&ty, "StreamTensor") {
                let ty = stream_ty(args.first(), args.get(1), args.get(2), scope);
                streams.insert(name, ty);
            }
        }
        if bufs.is_empty() {
            return None;
        }
        let ret = f
            .ret_type()
            .and_then(|r| r.ty())
            .and_then(|t| local(&t, "StreamTensor"))
            .map(|a| stream_ty(a.first(), a.get(1), a.get(2), scope));
        Some(BufParams { bufs, streams, ret })
    }

    /// The chain of one `read` or `write` of a buffer parameter.
    fn chain_of(&self, m: &ast::MethodCallExpr, scope: &Scope) -> Option<Chain> {
        let name_ref = m.name_ref()?;
        let method = Method::from_name(name_ref.text());
        let buf = m
            .receiver()
            .and_then(|r| var_name(&r))
            .and_then(|v| self.bufs.get(&v))?;
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
                    let mut t = stream_ty(None, generics.first(), generics.get(1), scope);
                    t.dtype = buf.dtype;
                    Some(t)
                } else {
                    self.ret.clone()
                };
                (Some(buf.clone()), out)
            }
            Method::Write => {
                let s = args
                    .first()
                    .and_then(var_name)
                    .and_then(|v| self.streams.get(&v))
                    .cloned();
                (s, Some(buf.clone()))
            }
            _ => return None,
        };
        let step = Step {
            method,
            span: span_of(name_ref.syntax().text_range()),
            engine: None,
            input,
            output,
            keep: Vec::new(),
            context: None,
            address: None,
            awaited: false,
            generics: generics.iter().map(|a| arg_of(a.syntax())).collect(),
            args: args.iter().map(|a| arg_of(a.syntax())).collect(),
            into: None,
            into_view: false,
        };
        Some(Chain {
            span: span_of(m.syntax().text_range()),
            binding: None,
            declared: None,
            receiver: m.receiver().and_then(|r| var_name(&r)),
            written_apart: false,
            iteration: None,
            steps: vec![step],
        })
    }
}

/// The generic arguments of the file-local type `want` that `ty` names (through a
/// reference), lifetimes left out: `BufTensor<D, Buf>` gives `[D, Buf]`,
/// `StreamTensor<'l, D, Time, Packet>` gives `[D, Time, Packet]`.
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

/// A `BufTensor<D, Buf>`: a DM tensor whose Element is `Buf`.
fn buf_ty(args: &[ast::GenericArg], scope: &Scope) -> TensorTy {
    let mut t = TensorTy::new(Kind::Dm);
    t.dtype = args.first().and_then(dtype_of);
    if let Some(m) = args.get(1).and_then(|a| map_of(a, scope)) {
        t.maps.insert(Slot::Element, m);
    }
    t
}

/// A `StreamTensor<'l, D, Time, Packet>`.
fn stream_ty(
    d: Option<&ast::GenericArg>,
    time: Option<&ast::GenericArg>,
    packet: Option<&ast::GenericArg>,
    scope: &Scope,
) -> TensorTy {
    let mut t = TensorTy::new(Kind::Stream);
    t.dtype = d.and_then(dtype_of);
    for (slot, a) in [(Slot::Time, time), (Slot::Packet, packet)] {
        if let Some(m) = a.and_then(|a| map_of(a, scope)) {
            t.maps.insert(slot, m);
        }
    }
    t
}
