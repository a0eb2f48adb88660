//! What a function can see of its module ([`Env`]: mapping names, constants, helper signatures),
//! and the tensor types its signature and annotations are read as.

use super::reading::span_of;
use crate::diagnostic::Span;
use crate::mapping::{self, Scope, parse};
use crate::model::consts::{self, path_key};
use crate::model::problem::{Primitive, Problem, Unknown};
use crate::model::types::{Dtype, Kind, MapVal, Slot, TensorTy};
use ra_ap_syntax::ast::HasGenericArgs;
use ra_ap_syntax::{AstNode, ast};
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
    /// The structs among them.
    pub struct_names: std::collections::HashSet<String>,
    /// The traits among them.
    pub traits: std::collections::HashSet<String>,
    /// Every const in scope (copied from the parent: a number each).
    pub consts: HashMap<String, u64>,
    pub fns: HashMap<String, LazySig>,
    /// Whole tensor type aliases (`type Weights = TrfTensor<...>;`): the type each names.
    pub tensor_aliases: HashMap<String, TensorTy>,
    /// Generic tensor type aliases (`type Hbm<D, E> = HbmTensor<D, Chip, E>;`): their type
    /// parameters and the type they name, instantiated where they are used.
    pub generic_tensor_aliases: HashMap<String, GenericAlias>,
    /// Functions whose body is one expression, `const fn`s and helpers alike (addresses and
    /// configurations computed by calls of them); every one in scope, copied from the parent.
    pub value_fns: HashMap<String, consts::ConstFn>,
    /// Helpers that return tensors they place with `from_addr`, as functions that compute
    /// the addresses (see `db::returned_placements_fn`); every one in scope.
    pub placing_fns: HashMap<String, consts::ConstFn>,
    /// Methods of the crate's `impl` blocks, by name (a call on a value the model cannot type
    /// takes the signature of the method of that name).
    pub methods: HashMap<String, LazySig>,
    /// Each method an `impl` block of the crate gives its type itself, as `Type::name` (a
    /// method the type does not give itself is a trait's default).
    pub own_methods: std::collections::HashSet<String>,
    /// Methods the crate's `impl` blocks give library tensor types (`impl Stage for
    /// DmTensor<bf16, ..>`), by name: for each block, its key (`DmTensor·3f2a19c0::stage`) and
    /// the method's signature with the receiver its first parameter. Read through
    /// [`Env::tensor_methods`].
    pub tensor_methods: HashMap<String, Vec<(String, LazySig)>>,
    /// `const` items whose value is not an integer (`const CFG: SwitchConfig = ..;`), by name
    /// and by the paths bound to them; read through [`Env::value`].
    pub values: HashMap<String, crate::model::value::Value>,
    /// `const` items whose value visa-lint cannot compute, with why: a use of one is "not
    /// checked" (VL-009), never silent. Read through [`Env::value_or_why`].
    pub unknown_consts: HashMap<String, crate::model::value::Unknown>,
    /// The declared type of each `const` item of a type of the crate (`const FAST_EMIT:
    /// ScoreEmitter<{ FlitLanes::F32 }> = ScoreEmitter;`), as written; read through
    /// [`Env::value_type`] (a method called on the const binds its type's generics).
    pub value_types: HashMap<String, String>,
    /// Aliases of a generic type of the crate given its arguments (`type NarrowTile =
    /// LaneTile<4>;`), the type as written, by the alias's name and the paths bound to it;
    /// read through [`Env::type_alias`] (`NarrowTile::run(..)` binds `LaneTile`'s generics).
    pub type_aliases: HashMap<String, String>,
    /// Associated constants whose value depends on their `impl` block's parameters (`const TRF:
    /// TrfAddress = if DOUBLE_BUF { .. } else { .. };`), by `Type::NAME`, their bodies as
    /// written (`Self` written out): a method traced with the parameters bound evaluates them.
    pub deferred_consts: HashMap<String, String>,
    /// Structs of the crate that hold tensors (`struct Inputs<'a> { a: &'a HbmTensor<..> }`):
    /// each named field with its tensor type (`None` for a plain field), by struct name; read
    /// through [`Env::struct_fields`].
    pub structs: HashMap<String, Vec<(String, Option<TensorTy>)>>,
    /// Library items imported under another name (`use furiosa_visa_std::prelude::DmTensor as
    /// Dm;`): the library's name of each, by the name it has here.
    pub library_renames: HashMap<String, String>,
}

/// A generic tensor type alias: its type and const parameters in order, and the type it
/// names as written (`HbmTensor<D, Chip, E>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenericAlias {
    pub params: Vec<String>,
    pub body: String,
    /// The body's generic arguments as written (`HbmTensor<D, Chip, E>` → `D`, `Chip`, `E`),
    /// by position: which slot each parameter fills.
    body_args: Vec<String>,
}

impl GenericAlias {
    /// The alias `type _<params> = ty;`.
    pub fn new(params: Vec<String>, ty: &ast::Type) -> GenericAlias {
        let body_args = ty
            .syntax()
            .descendants()
            .find_map(ast::GenericArgList::cast)
            .map(|l| {
                l.generic_args()
                    .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
                    .map(|a| crate::syntax::node_text(a.syntax()).trim().to_string())
                    .collect()
            })
            .unwrap_or_default();
        GenericAlias {
            params,
            body: crate::syntax::node_text(ty.syntax()),
            body_args,
        }
    }
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
            value_fns: parent.value_fns.clone(),
            placing_fns: parent.placing_fns.clone(),
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

    /// Whether the crate defines a struct of this name.
    pub fn is_struct(&self, name: &str) -> bool {
        self.struct_names.contains(name) || self.parent.as_ref().is_some_and(|p| p.is_struct(name))
    }

    /// The tensor type a whole-type alias names.
    pub fn tensor_alias(&self, name: &str) -> Option<&TensorTy> {
        self.tensor_aliases
            .get(name)
            .or_else(|| self.parent.as_ref()?.tensor_alias(name))
    }

    /// A generic tensor type alias.
    pub fn generic_tensor_alias(&self, name: &str) -> Option<&GenericAlias> {
        self.generic_tensor_aliases
            .get(name)
            .or_else(|| self.parent.as_ref()?.generic_tensor_alias(name))
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

    /// Whether the crate gives a library tensor type a method named `name`.
    pub fn has_tensor_method(&self, name: &str) -> bool {
        std::iter::successors(Some(self), |e| e.parent.as_deref())
            .any(|e| e.tensor_methods.contains_key(name))
    }

    /// The methods named `name` the crate gives library tensor types, each with its key and
    /// its signature (the receiver first), in this environment and its parents.
    pub fn tensor_methods(&self, name: &str) -> Vec<(&str, &FnSig)> {
        std::iter::successors(Some(self), |e| e.parent.as_deref())
            .flat_map(|e| {
                e.tensor_methods
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(move |(key, sig)| (key.as_str(), sig.get(e)))
            })
            .collect()
    }

    /// Whether the type's own `impl` blocks give it the method (`Plan::run`).
    pub fn has_own_method(&self, key: &str) -> bool {
        std::iter::successors(Some(self), |e| e.parent.as_deref())
            .any(|e| e.own_methods.contains(key))
    }

    /// The traits of the crate in scope.
    pub fn all_traits(&self) -> Vec<&str> {
        let mut all: Vec<&str> = std::iter::successors(Some(self), |e| e.parent.as_deref())
            .flat_map(|e| e.traits.iter().map(String::as_str))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    /// The value of a `const` item that is not an integer.
    pub fn value(&self, name: &str) -> Option<&crate::model::value::Value> {
        self.values
            .get(name)
            .or_else(|| self.parent.as_ref()?.value(name))
    }

    /// The value of a `const` item that is not an integer, or why a `const` item's value is
    /// not known; `None` for a name that is no `const` item.
    pub fn value_or_why(&self, name: &str) -> Option<crate::model::value::Eval> {
        if let Some(v) = self.values.get(name) {
            return Some(Ok(v.clone()));
        }
        if let Some(u) = self.unknown_consts.get(name) {
            return Some(Err(u.clone()));
        }
        self.parent.as_ref()?.value_or_why(name)
    }

    /// Whether `name` is a `const` item whose value is not known.
    pub fn unknown_consts_has(&self, name: &str) -> bool {
        matches!(self.value_or_why(name), Some(Err(_)))
    }

    /// Every non-integer `const` value it and its parents hold, as `(name, value)`.
    pub fn all_values(&self) -> impl Iterator<Item = (&String, &crate::model::value::Value)> {
        std::iter::successors(Some(self), |e| e.parent.as_deref()).flat_map(|e| e.values.iter())
    }

    /// The declared type of a `const` item of a type of the crate, as written.
    pub fn value_type(&self, name: &str) -> Option<&str> {
        match self.value_types.get(name) {
            Some(t) => Some(t),
            None => self.parent.as_ref()?.value_type(name),
        }
    }

    /// The generic type of the crate an alias names with its arguments (`LaneTile<4>` for
    /// `NarrowTile`), as written.
    pub fn type_alias(&self, name: &str) -> Option<&str> {
        match self.type_aliases.get(name) {
            Some(t) => Some(t),
            None => self.parent.as_ref()?.type_alias(name),
        }
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
        if let Some(mut fields) =
            ast::Struct::cast(node.clone()).and_then(|s| tensor_fields(&s, self))
        {
            // Each field's mappings are written in the struct: a fix pads them there.
            for (field, ty) in &mut fields {
                let of = std::sync::Arc::new(crate::model::FieldOf {
                    strukt: name.clone(),
                    field: field.clone(),
                });
                for m in ty.iter_mut().flat_map(|t| t.maps.values_mut()) {
                    m.field = Some(of.clone());
                }
            }
            self.structs.insert(name.clone(), fields);
        }
        if ast::Trait::can_cast(node.kind()) {
            self.traits.insert(name.clone());
        }
        if ast::Struct::can_cast(node.kind()) {
            self.struct_names.insert(name.clone());
        }
        self.local_types.insert(name);
    }

    /// The traits of the crate in scope that give the function `fname` a default
    /// (`Loader` for `load`, when `trait Loader { fn load(..) { .. } }`).
    pub fn traits_defaulting(&self, fname: &str) -> Vec<&str> {
        let mut found = self.all_traits();
        found.retain(|t| self.fn_sig(&format!("{t}::{fname}")).is_some());
        found
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
    /// A struct of the crate it returns that holds tensors (`TileIn { x, res }`), field by
    /// field ([`Env::struct_fields`]).
    pub fields: Vec<(String, Option<TensorTy>)>,
    /// It returns something visa-lint cannot type that may hold a tensor (a struct, a
    /// generic, `impl Trait`): its result is not followed (VL-009 where it is used as one).
    pub opaque: bool,
    /// Its type and const parameters in order (lifetimes left out), which a call's turbofish
    /// gives by position.
    pub generics: Vec<String>,
    /// The type parameter written as each tensor's element type (`D` of `DmTensor<D, ..>`), in
    /// the order of [`FnSig::types_mut`]: a call that gives `D` gives the element type.
    pub dtype_params: Vec<Option<String>>,
    /// For each parameter whose type is one of its type parameters (`plan: P`, `&P`), that
    /// parameter: the value a call passes (`Bf16Packed`) gives `P`, as rustc infers it.
    pub value_params: Vec<Option<String>>,
    /// The struct of the crate it returns (`Beta` of `-> Beta<S>`), or each a tuple it
    /// returns holds (`(Gamma<S>, Beta<S>)`): a call visa-lint does not evaluate still gives
    /// values of those types, whose methods that read no field are evaluated.
    pub ret_structs: Vec<Option<String>>,
}

impl FnSig {
    /// Its tensor types: the parameters, then the result, then a tuple result's elements.
    fn types_mut(&mut self) -> impl Iterator<Item = &mut Option<TensorTy>> {
        self.params
            .iter_mut()
            .chain(std::iter::once(&mut self.ret).chain(self.rets.iter_mut()))
    }

    /// The type parameter this signature writes as its result's element type, if any.
    pub fn ret_dtype_param(&self) -> Option<&str> {
        self.dtype_params.get(self.params.len())?.as_deref()
    }

    /// This signature with the element types a call gives its type parameters (`D = i32`),
    /// where its tensors are written with them.
    pub fn with_dtypes(mut self, given: &HashMap<String, Dtype>) -> FnSig {
        if given.is_empty() {
            return self;
        }
        let names = std::mem::take(&mut self.dtype_params);
        for (ty, name) in self.types_mut().zip(&names) {
            if let (Some(ty), Some(d)) = (ty, name.as_ref().and_then(|n| given.get(n))) {
                ty.dtype.get_or_insert(*d);
            }
        }
        self.dtype_params = names;
        self
    }

    /// This signature as a call instantiates it: each tensor mapping the helper writes as one
    /// of its type parameters (`Pk`) is the mapping the call's turbofish gives it.
    pub fn instantiated(mut self, given: &[Option<MapVal>]) -> FnSig {
        let by_name: HashMap<String, MapVal> = self
            .generics
            .iter()
            .zip(given)
            .filter_map(|(name, m)| Some((name.clone(), m.clone()?)))
            .collect();
        if by_name.is_empty() {
            return self;
        }
        for ty in self.types_mut().flatten() {
            for m in ty.maps.values_mut() {
                if m.layout.is_none()
                    && let Some(given) = by_name.get(m.text.trim())
                {
                    *m = MapVal {
                        span: None,
                        in_tensor_alias: false,
                        field: None,
                        ..given.clone()
                    };
                }
            }
        }
        self
    }
}

impl FnSig {
    /// Its types with `Self` the type `ty` a call traces it with (`KHeads::stage_lanes(..)`
    /// returning `TrfTensor<.., Self::Lane, m![{ Self::Stack }, K]>`): each mapping that names
    /// `Self::X` reads `ty::X`, the type's associated mapping, in the caller's `scope`.
    pub fn with_self(self, ty: &str, scope: &Scope) -> FnSig {
        self.with_type_param("Self", ty, scope)
    }

    /// Its types with the type parameter `param` the type `ty` a call gives it
    /// (`cast_bf16(t, Bf16Packed)` returning `CastTensor<.., P::OutPacket>`): each mapping
    /// that names `param::X` reads `ty::X`, the type's associated mapping, in the caller's
    /// `scope`.
    pub fn with_type_param(mut self, param: &str, ty: &str, scope: &Scope) -> FnSig {
        let own = format!("{ty}::");
        let named = format!("{param}::");
        // `<R as RowTile>::Rows`: the trait's item of the parameter, named by the type too.
        let (anchor, own_anchor) = (format!("<{param} as "), format!("<{ty} as "));
        let names = |text: &str| {
            text.contains(&anchor)
                || text.match_indices(&named).any(|(at, _)| {
                    !text[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                })
        };
        for t in self.types_mut().flatten() {
            for m in t.maps.values_mut() {
                if m.layout.is_some() || !names(&m.text) {
                    continue;
                }
                let text = m
                    .text
                    .trim()
                    .replace(&named, &own)
                    .replace(&anchor, &own_anchor);
                let lowered = match mapping_body(&text) {
                    Some(body) => parse::parse_mapping(body)
                        .ok()
                        .and_then(|e| mapping::lower(&e, scope, &mut Vec::new()))
                        .map(Arc::new),
                    None => alias_val(&text, scope, Span::default()).and_then(|v| v.layout),
                };
                if let Some(l) = lowered {
                    m.layout = Some(l);
                    m.text = text;
                }
            }
        }
        self
    }

    /// Its types with the const generics a call gives written into the mappings that name
    /// them (`m![R % { LANES }]` of `load::<.., 4>` is `m![R % 4]` at that call), read in the
    /// caller's `scope`.
    pub fn with_consts(mut self, consts: &[(String, u64)], scope: &Scope) -> FnSig {
        let named = |text: &str| {
            let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
            consts
                .iter()
                .any(|(n, _)| text.contains(&format!("{{{n}}}")))
        };
        let mut with: Option<Scope> = None;
        for ty in self.types_mut().flatten() {
            for m in ty.maps.values_mut() {
                if !named(&m.text) {
                    continue;
                }
                let Some(body) = mapping_body(m.text.trim()) else {
                    continue;
                };
                let scope = with.get_or_insert_with(|| {
                    let mut s = scope.clone();
                    s.consts.extend(consts.iter().cloned());
                    s
                });
                let layout = parse::parse_mapping(body)
                    .ok()
                    .and_then(|e| mapping::lower(&e, scope, &mut Vec::new()));
                if let Some(l) = layout {
                    m.layout = Some(Arc::new(l));
                }
            }
        }
        self
    }
}

/// The body of a mapping written `m![..]`, or `m ! [..]` as a macro's expansion writes it.
fn mapping_body(text: &str) -> Option<&str> {
    match (text.starts_with('m'), text.find('['), text.rfind(']')) {
        (true, Some(a), Some(b)) if a < b => Some(&text[a + 1..b]),
        _ => None,
    }
}

/// A generic tensor type alias used with `args` (`Hbm<i8, m![A, K]>`): the type it names with
/// each parameter written as its argument. A mapping the alias takes as a parameter is written
/// at the use, where its fixes edit it; the others are the alias's.
fn instantiated_alias(
    alias: &GenericAlias,
    args: &ast::GenericArgList,
    (env, scope): (&Env, &Scope),
) -> Option<TensorTy> {
    let given: Vec<ast::GenericArg> = args
        .generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .collect();
    if given.len() != alias.params.len() {
        return None;
    }
    let texts: HashMap<String, String> = alias
        .params
        .iter()
        .zip(&given)
        .map(|(p, a)| (p.clone(), crate::syntax::node_text(a.syntax())))
        .collect();
    let text = crate::model::consts::substituted(&alias.body, &texts);
    let ty = crate::syntax::type_of_text(&text)?;
    // Its own tree: what it finds has no place in the file (the use reports it).
    let mut t = tensor_type(&ty, env, scope, &mut Vec::new())?;
    let at = span_of(args.syntax().text_range());
    // Where each parameter's argument is written at the use.
    let written: HashMap<&str, &ast::GenericArg> = alias
        .params
        .iter()
        .map(String::as_str)
        .zip(&given)
        .collect();
    let body_args = &alias.body_args;
    let kind = t.kind;
    t.maps.retain(|slot, m| {
        let k = kind.params().iter().position(|s| s == slot);
        let param = k.and_then(|k| body_args.get(k)).map(String::as_str);
        match param.and_then(|p| written.get(p)) {
            Some(arg) => {
                m.span = Some(span_of(arg.syntax().text_range()));
                m.in_tensor_alias = false;
            }
            None => {
                m.span = Some(at);
                m.in_tensor_alias = true;
            }
        }
        true
    });
    Some(t)
}

/// The manual library's `VectorTensor<'l, T, S, D, Chip, Cluster, Slice, Time, Packet, ..>`
/// (dadf9ca `vector_engine/tensor/vector_tensor.rs:129`), whose stage is its marker `S`
/// (`stage::Fp`). A stage the function is generic over is the first of its packet mode `W`
/// (`Branch`, or `Narrow` for `{ PacketMode::Way4 }`): any stage of that mode may follow it,
/// and each call checks the pass with the stream it gives.
fn vector_tensor(seg: &ast::PathSegment, scope: &Scope) -> Option<TensorTy> {
    use crate::model::types::{Slot::*, VeStage};
    const SLOTS: &[Slot] = &[
        Other, Other, D, Chip, Cluster, Slice, Time, Packet, Other, Other, Other, Other, Other,
        Other,
    ];
    let args = seg.generic_arg_list()?;
    let written: Vec<String> = args
        .generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .map(|a| crate::syntax::node_text(a.syntax()))
        .collect();
    let way4 = written.get(12).is_some_and(|w| w.contains("Way4"));
    let stage = written
        .get(1)
        .and_then(|m| VeStage::from_marker(m.rsplit("::").next().unwrap_or(m)))
        .unwrap_or(if way4 {
            VeStage::Narrow
        } else {
            VeStage::Branch
        });
    let mut t = TensorTy::new(Kind::Vector(stage));
    apply_generics(&mut t, SLOTS, &args, scope);
    Some(t)
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
            let path = p.path()?;
            let seg = path.segment()?;
            let name = seg.name_ref()?.text().to_string();
            // The name as the environment binds it: plain or by its qualified path.
            let key = path_key(&path).unwrap_or_else(|| name.clone());
            if env.is_local_type(&key) {
                return None;
            }
            if let (Some(alias), Some(args)) =
                (env.generic_tensor_alias(&key), seg.generic_arg_list())
                && let Some(t) = instantiated_alias(alias, &args, (env, scope))
            {
                return Some(t);
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
            if library == "VectorTensor" {
                return vector_tensor(&seg, scope);
            }
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
pub(super) fn apply_generics(
    t: &mut TensorTy,
    slots: &[Slot],
    args: &ast::GenericArgList,
    scope: &Scope,
) {
    let args: Vec<ast::GenericArg> = args
        .generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .collect();
    for (slot, arg) in slots.iter().zip(args.iter()) {
        set_slot(t, *slot, arg, scope);
    }
}

pub(super) fn set_slot(t: &mut TensorTy, slot: Slot, arg: &ast::GenericArg, scope: &Scope) {
    match slot {
        Slot::Other => {}
        Slot::D => {
            if let Some(d) = dtype_in(arg, scope) {
                t.dtype = Some(d);
            }
        }
        _ => {
            // A type parameter shadows an alias of the crate with its name (`Slice: M`).
            if let Some(m) = map_of(arg, scope).or_else(|| generic_param(arg, scope)) {
                t.maps.insert(slot, m);
            }
        }
    }
}

/// A mapping written as a type parameter of the function (`Pk` of `fn f<Pk: M>`), or an
/// associated mapping of one (`L::Cluster`): unknown here, named so that a call's turbofish
/// can give it ([`FnSig::instantiated`]).
fn generic_param(arg: &ast::GenericArg, scope: &Scope) -> Option<MapVal> {
    let ast::GenericArg::TypeArg(ta) = arg else {
        return None;
    };
    let ast::Type::PathType(p) = ta.ty()? else {
        return None;
    };
    let name = path_key(&p.path()?)?;
    // `L::Cluster`: an associated mapping of a type parameter, as unknown here as the
    // parameter (a call that gives `L` binds it, `Builder::bind_type_generics`).
    let of_param = |n: &str| {
        n.split_once("::")
            .is_some_and(|(p, _)| scope.generics.contains(p))
    };
    (scope.generics.contains(&name) || of_param(&name)).then(|| MapVal {
        text: name,
        layout: None,
        span: Some(span_of(p.syntax().text_range())),
        in_tensor_alias: false,
        field: None,
    })
}

/// The element type `arg` names: a scalar type, a type parameter a call bound to one, or an
/// associated type of a type of the crate.
pub(super) fn dtype_in(arg: &ast::GenericArg, scope: &Scope) -> Option<Dtype> {
    dtype_of(arg).or_else(|| {
        let ast::GenericArg::TypeArg(ta) = arg else {
            return None;
        };
        let ast::Type::PathType(p) = ta.ty()? else {
            return None;
        };
        let key = path_key(&p.path()?)?;
        // `<Int8G128 as QuantFormat>::Mac` (a generic alias given its argument) is the type's
        // `Int8G128::Mac`.
        scope.dtypes.get(&key).copied().or_else(|| {
            let plain = crate::syntax::without_trait(&key)?;
            scope.dtypes.get(&plain).copied()
        })
    })
}

pub(super) fn dtype_of(arg: &ast::GenericArg) -> Option<Dtype> {
    let ast::GenericArg::TypeArg(ta) = arg else {
        return None;
    };
    let ast::Type::PathType(p) = ta.ty()? else {
        return None;
    };
    Dtype::from_name(p.path()?.segment()?.name_ref()?.text())
}

/// A mapping argument: `m![...]`, an alias name or `{ Alias }`; `_` and generics are unknown.
pub(super) fn map_of(arg: &ast::GenericArg, scope: &Scope) -> Option<MapVal> {
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
                    field: None,
                })
            }
            // `Padding<Symbol<K>, { PLAN.lanes }>` written in place: the mapping it spells.
            ast::Type::PathType(p) if crate::syntax::is_type_form(&p) => Some(MapVal {
                text: crate::syntax::node_text(p.syntax()),
                layout: type_form_layout(&p, scope),
                span: Some(span_of(p.syntax().text_range())),
                in_tensor_alias: false,
                field: None,
            }),
            ast::Type::PathType(p) => {
                let at = span_of(p.syntax().text_range());
                let path = p.path()?;
                match path_key(&path) {
                    // `Self::Lane` in a trait's default: the type a call traces it with
                    // gives it (see [`FnSig::with_self`]).
                    Some(name)
                        if name.starts_with("Self::") && !scope.aliases.contains_key(&name) =>
                    {
                        Some(MapVal {
                            text: name,
                            layout: None,
                            span: Some(at),
                            in_tensor_alias: false,
                            field: None,
                        })
                    }
                    Some(name) => alias_val(&name, scope, at),
                    None => generic_alias_val(&path, scope, at),
                }
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

/// The mapping a type form written in place spells (`Padding<Symbol<K>, { PLAN.lanes }>`),
/// when `scope` gives its sizes.
fn type_form_layout(p: &ast::PathType, scope: &Scope) -> Option<Arc<mapping::Layout>> {
    let e = crate::syntax::type_form::expr_of(&ast::Type::PathType(p.clone())).ok()?;
    mapping::lower(&e, scope, &mut Vec::new()).map(Arc::new)
}

/// The mapping a generic mapping alias given its parameters stands for (`Lanes<4>`, as
/// written), or a type form written in place, when `scope` can read it.
pub fn generic_alias_layout(text: &str, scope: &Scope) -> Option<Arc<mapping::Layout>> {
    let ast::Type::PathType(p) = crate::syntax::type_of_text(text)? else {
        return None;
    };
    if crate::syntax::is_type_form(&p) {
        return type_form_layout(&p, scope);
    }
    generic_alias_val(&p.path()?, scope, Span::default())?.layout
}

/// A generic mapping alias given its parameters (`LaneBus<Lanes>`, `Padded<m![K], 8>`): its
/// body read with each type parameter the mapping given and each const parameter the size.
fn generic_alias_val(path: &ast::Path, scope: &Scope, at: Span) -> Option<MapVal> {
    let (body, with) = instantiated(path, scope)?;
    let layout = mapping::lower(&body, &with, &mut Vec::new());
    Some(MapVal {
        text: crate::syntax::compact_text(path.syntax()),
        layout: layout.map(Arc::new),
        span: Some(at),
        in_tensor_alias: false,
        field: None,
    })
}

/// What lowering a generic alias given its arguments (`MacRows<m![Ch]>`) finds wrong with the
/// mapping it stands for (`m![Ch % 8]`, Ch = 5: MAP-002), and that mapping; `None` when `text`
/// is no such instance.
pub fn generic_alias_problems(
    text: &str,
    scope: &Scope,
) -> Option<(Vec<mapping::Problem>, Option<String>)> {
    let ast::Type::PathType(p) = crate::syntax::type_of_text(text)? else {
        return None;
    };
    let (body, with) = instantiated(&p.path()?, scope)?;
    let mut problems = Vec::new();
    let layout = mapping::lower(&body, &with, &mut problems);
    Some((problems, layout.map(|l| format!("m![{}]", l.to_expr()))))
}

/// A generic mapping alias's body, and the scope that reads it with the alias's parameters
/// bound to the arguments `path` gives them.
fn instantiated(path: &ast::Path, scope: &Scope) -> Option<(crate::mapping::ast::Expr, Scope)> {
    let segment = path.segment()?;
    let name = segment.name_ref()?.text().to_string();
    let key = match path.qualifier() {
        Some(q) => format!("{}::{name}", path_key(&q)?),
        None => name,
    };
    // Through the names it is imported under (`use layouts::Lanes as Lanes16;`).
    let alias = scope.alias_through_renames(&key)?;
    let args: Vec<ast::GenericArg> = segment.generic_arg_list()?.generic_args().collect();
    if args.len() != alias.generics.len() {
        return None;
    }
    let mut with = scope.clone();
    for (param, arg) in alias.generics.iter().zip(&args) {
        with.generics.remove(param);
        if let Some(m) = map_of(arg, scope).and_then(|m| m.layout) {
            // The given mapping, as an alias of the parameter's name.
            let body = parse::parse_mapping(&m.to_expr()).ok();
            let bound = crate::mapping::lower::Alias {
                name: crate::mapping::ast::Name {
                    text: param.clone(),
                    span: Span::default(),
                },
                body,
                generics: Vec::new(),
            };
            with.aliases.insert(param.clone(), bound);
        } else if let Some(n) = const_arg(arg, scope) {
            with.consts.insert(param.clone(), n);
        } else {
            return None;
        }
    }
    Some((alias.body.clone()?, with))
}

/// A const generic argument's value: `{ 2 * N }`, `8`, or a constant's name, which Rust
/// parses as a type (`ProjSlice<PACKED_SLICES>`).
fn const_arg(arg: &ast::GenericArg, scope: &Scope) -> Option<u64> {
    match arg {
        ast::GenericArg::ConstArg(c) => consts::eval(&c.expr()?, &scope.consts),
        ast::GenericArg::TypeArg(t) => match t.ty()? {
            ast::Type::PathType(p) => scope.consts.get(&path_key(&p.path()?)?).copied(),
            _ => None,
        },
        _ => None,
    }
}

/// An alias used as a mapping argument; `at` is the use (`Slice` or `{ Slice }`).
pub(super) fn alias_val(name: &str, scope: &Scope, at: Span) -> Option<MapVal> {
    scope.aliases.get(name)?;
    // `{ name }`, built rather than parsed: `<Paged as KvLayout>::Slice` is no mapping text.
    let name_at = crate::mapping::ast::Name {
        text: name.to_string(),
        span: Span::default(),
    };
    let e = crate::mapping::ast::Expr::Escape(name_at, Span::default());
    let layout = mapping::lower(&e, scope, &mut Vec::new());
    Some(MapVal {
        text: name.to_string(),
        layout: layout.map(Arc::new),
        span: Some(at),
        in_tensor_alias: false,
        field: None,
    })
}

/// The named fields of a struct that holds tensors, with their tensor types (their mappings
/// are written in the struct, not where it is used, so they carry no span); `None` when the
/// struct has generics other than lifetimes, a field that is neither a tensor nor plain, or
/// no tensor at all.
pub(super) fn tensor_fields(s: &ast::Struct, env: &Env) -> Option<Vec<(String, Option<TensorTy>)>> {
    let generic = ast::HasGenericParams::generic_param_list(s).is_some_and(|g| {
        g.generic_params()
            .any(|p| !matches!(p, ast::GenericParam::LifetimeParam(_)))
    });
    if generic {
        return None;
    }
    // Named fields by name; a tuple struct's by position (`0`, `1`), as `.0` reads them.
    let typed: Vec<(String, ast::Type)> = match s.field_list()? {
        ast::FieldList::RecordFieldList(list) => list
            .fields()
            .map(|f| Some((ast::HasName::name(&f)?.text().to_string(), f.ty()?)))
            .collect::<Option<_>>()?,
        ast::FieldList::TupleFieldList(list) => list
            .fields()
            .enumerate()
            .map(|(k, f)| Some((k.to_string(), f.ty()?)))
            .collect::<Option<_>>()?,
    };
    let mut fields = Vec::new();
    for (name, ty) in typed {
        let tensor = tensor_type(&ty, env, &env.scope, &mut Vec::new()).map(|mut t| {
            for m in t.maps.values_mut() {
                m.span = None;
            }
            t
        });
        if tensor.is_none() && !plain(&ty) {
            return None;
        }
        fields.push((name, tensor));
    }
    fields.iter().any(|(_, t)| t.is_some()).then_some(fields)
}

/// The name a struct type's path is declared under in the environment (`TileIn`,
/// `staging::TileIn`), for [`Env::struct_fields`].
pub(super) fn struct_key(path: &ast::Path) -> Option<String> {
    path_key(path).or_else(|| Some(path.segment()?.name_ref()?.text().to_string()))
}

/// `#[device(chip = N)]` on a function.
pub(super) fn device_attr(f: &ast::Fn) -> Option<(Option<u64>, Option<u64>)> {
    let entries = crate::syntax::device_entries(f)?;
    let int_of = |key: &str| {
        entries
            .iter()
            .find(|(k, ..)| k == key)
            .and_then(|(_, v, _)| v.parse().ok())
    };
    Some((int_of("chip"), int_of("pe")))
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
    let params = ast::HasGenericParams::generic_param_list(f)
        .into_iter()
        .flat_map(|l| l.generic_params());
    let mut type_params = Vec::new();
    for p in params {
        let name = match &p {
            ast::GenericParam::TypeParam(t) => ast::HasName::name(t),
            ast::GenericParam::ConstParam(c) => ast::HasName::name(c),
            ast::GenericParam::LifetimeParam(_) => continue,
        };
        let Some(name) = name.map(|n| n.text().to_string()) else {
            continue;
        };
        if matches!(p, ast::GenericParam::TypeParam(_)) {
            type_params.push(name.clone());
        }
        sig.generics.push(name);
    }
    // The helper's mapping parameters are named in its types (`Pk`), unknown until a call
    // gives them.
    let generic_scope;
    let scope = if type_params.is_empty() {
        &env.scope
    } else {
        let mut s = env.scope.clone();
        // A type parameter shadows an alias of the crate with its name (`Slice: M`).
        for p in &type_params {
            s.aliases.remove(p);
        }
        s.generics.extend(type_params);
        generic_scope = s;
        &generic_scope
    };
    let mut dtype_params = Vec::new();
    if let Some(pl) = f.param_list() {
        for p in pl.params() {
            let ty = p.ty();
            sig.value_params
                .push(ty.as_ref().and_then(|t| type_param_of(t, scope)));
            dtype_params.push(ty.as_ref().and_then(|t| dtype_param(t, env, scope)));
            sig.params.push(
                ty.and_then(|t| tensor_type(&t, env, scope, &mut Vec::new()))
                    .map(unplaced),
            );
        }
    }
    let ret = f.ret_type().and_then(|r| r.ty()).map(|t| unwrapped(&t));
    dtype_params.push(ret.as_ref().and_then(|t| dtype_param(t, env, scope)));
    sig.ret = ret
        .as_ref()
        .and_then(|t| tensor_type(t, env, scope, &mut Vec::new()))
        .map(unplaced);
    if let Some(ast::Type::TupleType(t)) = &ret {
        for f in t.fields() {
            dtype_params.push(dtype_param(&f, env, scope));
            sig.rets
                .push(tensor_type(&f, env, scope, &mut Vec::new()).map(unplaced));
        }
    }
    sig.dtype_params = dtype_params;
    let struct_named = |t: &ast::Type| match unwrapped(t) {
        ast::Type::PathType(p) => p
            .path()
            .and_then(|p| struct_key(&p))
            .filter(|k| env.is_struct(k)),
        _ => None,
    };
    sig.ret_structs = match &ret {
        Some(ast::Type::TupleType(t)) => t.fields().map(|f| struct_named(&f)).collect(),
        Some(t) => struct_named(t).into_iter().map(Some).collect(),
        None => Vec::new(),
    };
    if let Some(ast::Type::PathType(p)) = &ret
        && let Some(fields) = p
            .path()
            .and_then(|p| struct_key(&p))
            .and_then(|k| env.struct_fields(&k))
    {
        sig.fields = fields.to_vec();
    }
    sig.opaque = sig.ret.is_none()
        && sig.rets.is_empty()
        && sig.fields.is_empty()
        && ret.as_ref().is_some_and(|t| !plain(t));
    sig
}

/// The type parameter a parameter's type is (`P`, `&P`, `&mut P`), when it is one of the
/// function's (`scope.generics`).
fn type_param_of(ty: &ast::Type, scope: &Scope) -> Option<String> {
    let ast::Type::PathType(p) = unwrapped(ty) else {
        return None;
    };
    let name = path_key(&p.path()?)?;
    scope.generics.contains(&name).then_some(name)
}

/// The type parameter a tensor type of the library writes as its element type (`D` of
/// `DmTensor<D, Chip, ..>`), when it is one of the function's (`scope.generics`).
fn dtype_param(ty: &ast::Type, env: &Env, scope: &Scope) -> Option<String> {
    let ast::Type::PathType(p) = unwrapped(ty) else {
        return None;
    };
    let seg = p.path()?.segment()?;
    let name = seg.name_ref()?.text().to_string();
    let kind = Kind::from_name(env.library_name(&name).unwrap_or(&name))?;
    let at = kind.params().iter().position(|s| *s == Slot::D)?;
    let arg = seg
        .generic_arg_list()?
        .generic_args()
        .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
        .nth(at)?;
    let ast::GenericArg::TypeArg(t) = arg else {
        return None;
    };
    let ast::Type::PathType(p) = t.ty()? else {
        return None;
    };
    let name = path_key(&p.path()?)?;
    if scope.generics.contains(&name) {
        return Some(name);
    }
    // `Self::Elem` of a trait's default (kept as the trait's `PagePool::Elem`): the type a call
    // names gives it.
    let (owner, item) = name.split_once("::")?;
    (owner == "Self" || env.all_traits().contains(&owner)).then(|| format!("Self::{item}"))
}

/// `Option<T>`, `Result<T, E>`, `Box<T>` and references: `T` (`?`, `unwrap` and
/// dereferences see through them).
pub(super) fn unwrapped(ty: &ast::Type) -> ast::Type {
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
pub(super) fn plain(ty: &ast::Type) -> bool {
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
