//! The concurrency timeline of one function: its chains in issue order as operations on the
//! three resources the scheduler tracks (main context, sub context, DMA engines; L7058-L7070),
//! the DM tensors with their placement and liveness, and the happens-before relation
//! (`.await`, data and address dependencies, resource order). The hazard rules (SCH) and the
//! bank rule (BNK) read it.

use crate::derive;
use crate::diagnostic::Span;
use crate::model::{Chain, Kind, Method, Origin, Slot, Step, TensorVar, Tu};
use std::collections::HashMap;

/// One of the three resources the scheduler tracks (L7058-L7070).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resource {
    Main,
    Sub,
    Dma,
}

impl Resource {
    pub fn name(self) -> &'static str {
        match self {
            Resource::Main => "ctx.main",
            Resource::Sub => "ctx.sub",
            Resource::Dma => "the DMA",
        }
    }
}

/// DM bytes `[start, end)` a tensor occupies in each slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Footprint {
    pub start: u64,
    pub end: u64,
}

impl Footprint {
    pub fn overlaps(self, o: Footprint) -> bool {
        self.start < o.end && o.start < self.end
    }
}

/// A write of a DM range by one step (`to_dm`, `commit`).
pub struct Write<'a> {
    pub step: &'a Step,
    /// The variable the write defines, when the chain is bound.
    pub var: Option<usize>,
    pub fp: Footprint,
    /// The address argument (or the method name).
    pub at: Span,
}

/// One chain: one operation on one resource.
pub struct Node<'a> {
    pub chain: &'a Chain,
    pub resource: Option<Resource>,
    /// Variables the chain reads, with where.
    pub uses: Vec<(usize, Span)>,
    pub writes: Vec<Write<'a>>,
}

/// A tensor variable with its placement and liveness.
pub struct Var<'a> {
    pub tv: &'a TensorVar,
    /// The first node that sees the variable (0 for parameters).
    pub from: usize,
    /// The node that writes it, when a chain does.
    pub def: Option<usize>,
    /// The last node that reads it, and where.
    pub last_use: Option<(usize, Span)>,
    pub fp: Option<Footprint>,
    /// The address argument that places it.
    pub at: Option<Span>,
}

/// The function's operations in issue order, with the happens-before relation.
pub struct Timeline<'a> {
    pub nodes: Vec<Node<'a>>,
    pub vars: Vec<Var<'a>>,
    /// `hb[i][j]` (i < j): j cannot start before i ends, address hazards included.
    pub hb: Vec<Vec<bool>>,
    /// The same without address hazards (data, resource and `.await` order only).
    pub hb_data: Vec<Vec<bool>>,
    /// The same without the resource order (data, address and `.await` only).
    pub hb_free: Vec<Vec<bool>>,
}

/// Above this many chains the quadratic happens-before relations (SCH-002..004, BNK) are not
/// built. SCH-001 needs none of them and checks functions of any size.
pub const MAX_NODES: usize = 400;

/// Identifiers in an argument's text.
pub(super) fn idents(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| {
            t.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        })
}

/// The DM footprint a step writes: its output Element at its constant address.
pub(super) fn step_footprint(step: &Step) -> Option<Footprint> {
    let out = step.output.as_ref()?;
    if out.kind != Kind::Dm {
        return None;
    }
    footprint(out, step.address?)
}

pub(super) fn footprint(ty: &crate::model::TensorTy, addr: u64) -> Option<Footprint> {
    let bits = ty.dtype?.bits();
    let size = ty.get(Slot::Element)?.layout.as_deref()?.size;
    let len = derive::bytes(size, bits).div_ceil(8).checked_mul(8)?;
    Some(Footprint {
        start: addr,
        end: addr.checked_add(len)?,
    })
}

pub(super) fn address_span(step: &Step) -> Span {
    step.method
        .transfer()
        .and_then(|m| m.address_arg)
        .and_then(|i| step.args.get(i))
        .map_or(step.span, |a| a.span)
}

fn resource(chain: &Chain) -> Option<Resource> {
    for s in &chain.steps {
        if s.method.is_dm_hbm_dma() && s.args.first().is_some_and(|a| a.text.contains("dma")) {
            return Some(Resource::Dma);
        }
    }
    chain.steps.iter().find_map(|s| match s.context {
        Some(Tu::Main) => Some(Resource::Main),
        Some(Tu::Sub) => Some(Resource::Sub),
        None => None,
    })
}

impl<'a> Timeline<'a> {
    pub fn build(model: &'a crate::model::FnModel) -> Option<Timeline<'a>> {
        if model.chains.len() > MAX_NODES {
            return None;
        }
        let (nodes, vars) = scan(model);
        Some(Timeline::relate(nodes, vars))
    }
}

/// The function's chains in issue order as nodes, and its variables with their placement and
/// liveness. Linear in the size of the function (no relation between nodes is built).
pub fn scan<'a>(model: &'a crate::model::FnModel) -> (Vec<Node<'a>>, Vec<Var<'a>>) {
    // One pass over the body of each iterated loop: its first iteration.
    let mut chains: Vec<&Chain> = model
        .chains
        .iter()
        .filter(|c| model.in_first_pass(c.iteration))
        .collect();
    chains.sort_by_key(|c| c.span.start);
    let mut vars = variables(model, &chains);
    let names = Names::of(&vars);
    let mut nodes = Vec::new();
    for (c, chain) in chains.iter().enumerate() {
        let uses = names.uses(&vars, chain, c);
        for &(v, span) in &uses {
            vars[v].last_use = Some((c, span));
        }
        nodes.push(Node {
            chain,
            resource: resource(chain),
            uses,
            writes: names.writes(&vars, chain, c),
        });
    }
    read_outside_chains(model, &chains, &names, &mut vars);
    committed_into(&nodes, &mut vars);
    // What the function returns lives past its last chain.
    for (name, span) in &model.returned {
        if let Some(v) = names.resolve(&vars, name, nodes.len()) {
            vars[v].last_use = Some((nodes.len(), *span));
        }
    }
    (nodes, vars)
}

/// The reads outside any chain: a tensor passed to a helper (`tile_totals(ctx, &sums)`) is
/// read at the call, and one moved into another name (`cur = next` at the end of an
/// iteration) at the move, which leaves it to that name from there on.
fn read_outside_chains(
    model: &crate::model::FnModel,
    chains: &[&Chain],
    names: &Names<'_>,
    vars: &mut [Var<'_>],
) {
    let first_pass = |it: Option<u32>| model.in_first_pass(it);
    let by_calls = model
        .calls
        .iter()
        .filter(|c| first_pass(c.iteration))
        .flat_map(|c| {
            c.reads
                .iter()
                .map(move |(n, s)| (n.as_str(), *s, c.span.end))
        });
    let by_moves = model
        .moves
        .iter()
        .filter(|m| first_pass(m.iteration))
        .map(|m| (m.from.as_str(), m.at, m.at.end));
    for (name, span, end) in by_calls.chain(by_moves) {
        let before = chains.partition_point(|c| c.span.start < end);
        read_in_gap(names, vars, name, before, span);
    }
}

/// A read of `name` outside any chain, in the gap before chain `before`: it sees what the
/// chains before the gap and the calls in it bound, and keeps it live up to the last chain
/// before the gap, or to the gap itself for a tensor bound in it (a call's result read by
/// the next call).
fn read_in_gap(names: &Names<'_>, vars: &mut [Var<'_>], name: &str, before: usize, span: Span) {
    let Some(v) = names.resolve(vars, name, before) else {
        return;
    };
    let node = before.saturating_sub(1).max(vars[v].from);
    if vars[v].last_use.is_none_or(|(u, _)| u <= node) {
        vars[v].last_use = Some((node, span));
    }
}

/// A tensor placed by hand (`from_addr`) and first written by a `commit_view` into it holds
/// data from that write on: it is defined there, and live only after it.
fn committed_into(nodes: &[Node<'_>], vars: &mut [Var<'_>]) {
    for (c, node) in nodes.iter().enumerate() {
        for w in node
            .writes
            .iter()
            .filter(|w| w.step.method == Method::CommitView)
        {
            let Some(var) = w.var.and_then(|v| vars.get_mut(v)) else {
                continue;
            };
            if var.def.is_none() && var.tv.from_addr && var.from <= c {
                var.def = Some(c);
                var.from = c + 1;
            }
        }
    }
}

/// A DM range a function writes in its first pass, as its callers see it: a write of a
/// tensor it gives back (which the caller places where the write is), or a scratch it keeps
/// to itself (which must not land on a tensor the caller still needs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OwnWrite {
    pub fp: Footprint,
    /// The address argument that places it, or the call that returns it.
    pub at: Span,
    pub given_back: bool,
    /// The call whose result it is (`let sq = sum_of_squares(..)`), when no chain of the
    /// function writes it.
    pub by_call: Option<Span>,
}

/// The DM ranges `model`'s function writes: each chain's writes but those into a parameter
/// (the caller's own tensor, passed to be written), and each tensor a call of it places.
pub fn own_writes(model: &crate::model::FnModel) -> Vec<OwnWrite> {
    let (nodes, vars) = scan(model);
    let mut given: Vec<u64> = Vec::new();
    if let Some(v) = &model.result {
        addresses_in(v, &mut given);
    }
    // What the result holds, by address where the trace knows it (a tail that calls a
    // helper names the tensors it passes, which it does not give back), else by name.
    let returned = |v: usize| match &model.result {
        Some(_) => vars[v].fp.is_some_and(|fp| given.contains(&fp.start)),
        None => vars[v].last_use.is_some_and(|(n, _)| n == nodes.len()),
    };
    let mut out = Vec::new();
    for w in nodes.iter().flat_map(|n| &n.writes) {
        // A write into a parameter, or by the caller's part of a pass they share (placed
        // past the text): the caller's own.
        let callers = w.at.start >= crate::model::CALLER_CONTINUATION;
        if callers || w.var.is_some_and(|v| vars[v].tv.origin == Origin::Param) {
            continue;
        }
        out.push(OwnWrite {
            fp: w.fp,
            at: w.at,
            given_back: w.var.is_some_and(returned) || given.contains(&w.fp.start),
            by_call: None,
        });
    }
    for (v, var) in vars.iter().enumerate() {
        if let (Some(call), None, Some(fp)) = (var.tv.placed_by_call, var.def, var.fp) {
            out.push(OwnWrite {
                fp,
                at: call,
                given_back: returned(v),
                by_call: Some(call),
            });
        }
    }
    out
}

/// A DM tensor of the caller live across one of its helper calls: placed before the call,
/// read after it, and not handed to the call (a helper may write what it is given).
pub struct LiveAcross<'m> {
    pub tv: &'m TensorVar,
    pub fp: Footprint,
    /// Where it is placed, and where it is last read.
    pub placed: Span,
    pub last_use: Span,
}

/// For each of `model`'s calls (by index in [`crate::model::FnModel::calls`], its loop's
/// first pass only), the DM tensors live across it. A tensor placed by hand (`from_addr`)
/// that nothing has written yet is a window the call may fill, not live data.
pub fn live_across_calls(model: &crate::model::FnModel) -> Vec<(usize, Vec<LiveAcross<'_>>)> {
    let placed = |t: &TensorVar| t.ty.kind == Kind::Dm && t.address.is_some();
    if model.calls.is_empty() || !model.tensors.iter().any(placed) {
        return Vec::new();
    }
    let (_, vars) = scan(model);
    let mut out = Vec::new();
    for (k, call) in model.calls.iter().enumerate() {
        if !model.in_first_pass(call.iteration) {
            continue;
        }
        let live: Vec<LiveAcross<'_>> = vars
            .iter()
            .filter_map(|v| {
                let fp = v.fp?;
                let before =
                    v.tv.origin == Origin::Param || defined_by(model, v) <= call.expr.start;
                let handed = call.reads.iter().any(|(name, _)| *name == v.tv.name);
                let window = v.tv.from_addr && v.def.is_none();
                if !before || handed || window {
                    return None;
                }
                Some(LiveAcross {
                    tv: v.tv,
                    fp,
                    placed: v.at.or(v.tv.placed_by_call).unwrap_or(v.tv.span),
                    last_use: read_after(model, &vars, v, call.expr.end)?,
                })
            })
            .collect();
        if !live.is_empty() {
            out.push((k, live));
        }
    }
    out
}

/// Where the statement that gives `v` its data ends: the chain that writes it, the call that
/// places it, else its binding.
fn defined_by(model: &crate::model::FnModel, v: &Var<'_>) -> u32 {
    let chains = || {
        model
            .chains
            .iter()
            .filter(|c| model.in_first_pass(c.iteration))
    };
    let by_chain = chains()
        .filter(|c| c.binding.as_deref() == Some(v.tv.name.as_str()))
        .filter(|c| c.span.start >= v.tv.span.start)
        .map(|c| c.span.end)
        .min();
    let by_call = v.tv.placed_by_call.and_then(|at| {
        model
            .calls
            .iter()
            .find(|c| c.span == at)
            .map(|c| c.expr.end)
    });
    by_chain.or(by_call).unwrap_or(v.tv.span.end)
}

/// Where `v` is read after `end`, before its name is bound again: by a chain (its last use),
/// or by a helper call given it (a function that only calls helpers has no chain to read it).
fn read_after(
    model: &crate::model::FnModel,
    vars: &[Var<'_>],
    v: &Var<'_>,
    end: u32,
) -> Option<Span> {
    let rebound = rebound_at(vars, v);
    let by_chain = v.last_use.map(|(_, s)| s).filter(|s| s.start >= end);
    let by_call = model
        .calls
        .iter()
        .filter(|c| model.in_first_pass(c.iteration))
        .filter(|c| c.expr.start >= end && c.expr.start < rebound)
        .flat_map(|c| &c.reads)
        .find(|(name, _)| *name == v.tv.name)
        .map(|(_, s)| *s);
    by_chain.or(by_call)
}

/// Where the name of `v` is bound again after `v` (a shadowing `let`), else the end of the
/// function: past it, a read of the name reads another tensor.
pub fn rebound_at(vars: &[Var<'_>], v: &Var<'_>) -> u32 {
    vars.iter()
        .filter(|o| o.tv.name == v.tv.name && o.tv.span.start > v.tv.span.start)
        .map(|o| o.tv.span.start)
        .min()
        .unwrap_or(u32::MAX)
}

/// The DM addresses a function's result value holds (see [`crate::model::FnModel::result`]).
fn addresses_in(v: &crate::model::value::Value, out: &mut Vec<u64>) {
    use crate::model::value::{Fields, Value};
    match v {
        Value::Int(a) => out.push(*a),
        Value::Tuple(vs) | Value::Array(vs) => vs.iter().for_each(|v| addresses_in(v, out)),
        Value::Variant {
            fields: Fields::Named(fs),
            ..
        } => fs.iter().for_each(|(_, v)| addresses_in(v, out)),
        Value::Variant {
            fields: Fields::Positional(vs),
            ..
        } => vs.iter().for_each(|v| addresses_in(v, out)),
        _ => {}
    }
}

/// The DM tensor `tv` (of a loop's first pass) as the loop's other iterations place it: each
/// iteration's label (`p = 1, h = 1`) and footprint, where its address differs. Only the
/// iterations whose chains or helper calls the model holds (a model of one iteration holds no
/// other).
pub fn other_iterations<'m>(
    model: &'m crate::model::FnModel,
    tv: &crate::model::TensorVar,
) -> Vec<(&'m str, Footprint)> {
    if tv.iteration.is_none() || tv.ty.kind != Kind::Dm {
        return Vec::new();
    }
    model
        .tensors
        .iter()
        .filter(|t| t.name == tv.name && t.span == tv.span && t.address != tv.address)
        .filter(|t| !model.in_first_pass(t.iteration))
        .filter(|t| {
            model.chains.iter().any(|c| c.iteration == t.iteration)
                || model.calls.iter().any(|c| c.iteration == t.iteration)
        })
        .filter_map(|t| {
            let label = model.iterations.get(t.iteration? as usize)?.label.as_str();
            Some((label, footprint(&t.ty, t.address?)?))
        })
        .collect()
}

/// The function's tensors (of the first iteration of each loop): where each becomes visible
/// (the chain after the one that defines it; a parameter at once), the chain that writes it,
/// and, for a placed DM tensor, its footprint and where its address is written.
fn variables<'a>(model: &'a crate::model::FnModel, chains: &[&'a Chain]) -> Vec<Var<'a>> {
    let mut vars: Vec<Var<'a>> = Vec::new();
    for tv in model
        .tensors
        .iter()
        .filter(|t| model.in_first_pass(t.iteration))
    {
        let (from, def) = match tv.origin {
            Origin::Param => (0, None),
            Origin::Let | Origin::Assign => {
                let pos = chains.partition_point(|c| c.span.start < tv.span.end);
                let def = chains
                    .get(pos)
                    .and_then(|c| (c.binding.as_deref() == Some(tv.name.as_str())).then_some(pos));
                (def.map_or(pos, |d| d + 1), def)
            }
        };
        let (fp, at) = match (tv.ty.kind, tv.address) {
            (Kind::Dm, Some(addr)) => {
                let at = def.and_then(|d| chains[d].steps.last()).map(address_span);
                (footprint(&tv.ty, addr), at)
            }
            _ => (None, None),
        };
        vars.push(Var {
            tv,
            from,
            def,
            last_use: None,
            fp,
            at,
        });
    }
    vars
}

/// The variables by name (resolving an identifier looks at its namesakes only), and the
/// variable each chain defines.
struct Names<'a> {
    by_name: HashMap<&'a str, Vec<usize>>,
    def_of: HashMap<usize, usize>,
}

impl<'a> Names<'a> {
    fn of(vars: &[Var<'a>]) -> Names<'a> {
        let mut by_name: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (v, var) in vars.iter().enumerate() {
            let tv: &'a crate::model::TensorVar = var.tv;
            by_name.entry(tv.name.as_str()).or_default().push(v);
        }
        let mut def_of: HashMap<usize, usize> = HashMap::new();
        for (v, var) in vars.iter().enumerate() {
            if let Some(d) = var.def {
                def_of.entry(d).or_insert(v);
            }
        }
        Names { by_name, def_of }
    }

    /// The variable `name` means at chain `at`: the latest namesake visible there.
    fn resolve(&self, vars: &[Var<'_>], name: &str, at: usize) -> Option<usize> {
        self.by_name
            .get(name)?
            .iter()
            .copied()
            .filter(|&v| vars[v].from <= at)
            .max_by_key(|&v| (vars[v].from, v))
    }

    /// The variables chain `c` uses, each with its first use: in its steps' arguments, and
    /// its receiver (`result.to_hbm(…)`).
    fn uses(&self, vars: &[Var<'_>], chain: &Chain, c: usize) -> Vec<(usize, Span)> {
        let mut uses: Vec<(usize, Span)> = Vec::new();
        // Tensors named by a field path (`p.a` of `let p = Pair { a: .., .. }`).
        let fields: Vec<&str> = self
            .by_name
            .keys()
            .copied()
            .filter(|n| n.contains('.'))
            .collect();
        for step in &chain.steps {
            for arg in &step.args {
                let named = fields
                    .iter()
                    .copied()
                    .filter(|f| crate::syntax::mentions(&arg.text, f));
                for id in idents(&arg.text).chain(named) {
                    if let Some(v) = self.resolve(vars, id, c)
                        && !uses.iter().any(|u| u.0 == v)
                    {
                        uses.push((v, arg.span));
                    }
                }
            }
        }
        if let (Some(name), Some(first)) = (chain.receiver.as_deref(), chain.steps.first())
            && let Some(v) = self.resolve(vars, name, c)
            && !uses.iter().any(|u| u.0 == v)
        {
            uses.push((v, first.span));
        }
        uses
    }

    /// The DM writes of chain `c`'s steps; its last step writes the variable it defines, and
    /// a `commit_view(t.view_mut())` writes the whole of `t`.
    fn writes<'c>(&self, vars: &[Var<'_>], chain: &'c Chain, c: usize) -> Vec<Write<'c>> {
        let n = chain.steps.len();
        let mut writes = Vec::new();
        for (i, step) in chain.steps.iter().enumerate() {
            if let Some(w) = self.commit_into(vars, step, c) {
                writes.push(w);
                continue;
            }
            let Some(fp) = step_footprint(step) else {
                continue;
            };
            let var = if i + 1 == n {
                self.def_of.get(&c).copied()
            } else {
                None
            };
            writes.push(Write {
                step,
                var,
                fp,
                at: address_span(step),
            });
        }
        writes
    }
}

impl Names<'_> {
    /// `commit_view(t.view_mut())` at chain `c`: a write of the whole of the placed DM tensor
    /// `t` (a view of part of it, `t.view_mut().tile::<..>(i)`, is not followed).
    fn commit_into<'c>(&self, vars: &[Var<'_>], step: &'c Step, c: usize) -> Option<Write<'c>> {
        if step.method != Method::CommitView {
            return None;
        }
        let arg = step.args.first()?;
        let name = step.into.as_deref()?;
        let v = self.resolve(vars, name, c)?;
        Some(Write {
            step,
            var: Some(v),
            fp: vars[v].fp?,
            at: arg.span,
        })
    }
}

impl<'a> Timeline<'a> {
    /// Adds the happens-before relations (quadratic in the number of nodes).
    pub fn relate(nodes: Vec<Node<'a>>, vars: Vec<Var<'a>>) -> Timeline<'a> {
        let n = nodes.len();
        let mut direct = vec![vec![false; n]; n];
        let mut direct_data = vec![vec![false; n]; n];
        let mut direct_free = vec![vec![false; n]; n];
        for j in 0..n {
            for i in 0..j {
                let (a, b) = (&nodes[i], &nodes[j]);
                let same = a.resource.is_some() && a.resource == b.resource;
                let raw = b.uses.iter().any(|&(v, _)| vars[v].def == Some(i));
                let awaited =
                    a.resource == Some(Resource::Dma) && a.chain.steps.iter().any(|s| s.awaited);
                let data = same || raw || awaited;
                let addr = b.writes.iter().any(|w| {
                    a.writes.iter().any(|x| x.fp.overlaps(w.fp))
                        || a.uses
                            .iter()
                            .any(|&(v, _)| vars[v].fp.is_some_and(|f| f.overlaps(w.fp)))
                        || a.writes.iter().any(|x| {
                            b.uses
                                .iter()
                                .any(|&(v, _)| vars[v].def == Some(i) && x.fp.overlaps(w.fp))
                        })
                }) || a.writes.iter().any(|w| {
                    b.uses
                        .iter()
                        .any(|&(v, _)| vars[v].fp.is_some_and(|f| f.overlaps(w.fp)))
                });
                direct_data[i][j] = data;
                direct[i][j] = data || addr;
                direct_free[i][j] = raw || awaited || addr;
            }
        }
        Timeline {
            hb: closure(&direct),
            hb_data: closure(&direct_data),
            hb_free: closure(&direct_free),
            nodes,
            vars,
        }
    }

    /// True when neither node has to wait for the other.
    pub fn concurrent(&self, i: usize, j: usize) -> bool {
        i != j && !self.hb[i.min(j)][i.max(j)]
    }

    /// The node whose chain contains `step`.
    pub fn node_of(&self, step: &Step) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.chain.steps.iter().any(|s| std::ptr::eq(s, step)))
    }

    /// The DM address of the tensor a chain's `begin` reads, when it is placed.
    pub fn source_address(&self, node: usize) -> Option<u64> {
        let n = self.nodes.get(node)?;
        let begin = n.chain.steps.iter().find(|s| s.method.is_begin())?;
        let arg = begin.args.first()?;
        n.uses
            .iter()
            .find(|&&(v, span)| span == arg.span && self.vars[v].fp.is_some())
            .and_then(|&(v, _)| self.vars[v].fp.map(|f| f.start))
    }
}

/// The transitive closure of a relation on nodes in issue order (edges go forward).
fn closure(direct: &[Vec<bool>]) -> Vec<Vec<bool>> {
    let n = direct.len();
    let mut reach = vec![vec![false; n]; n];
    for i in (0..n).rev() {
        for j in i + 1..n {
            if direct[i][j] && !reach[i][j] {
                reach[i][j] = true;
                let (head, tail) = reach.split_at_mut(j);
                for (k, r) in tail[0].iter().enumerate() {
                    if *r {
                        head[i][k] = true;
                    }
                }
            }
        }
    }
    reach
}
