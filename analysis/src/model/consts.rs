//! Constant evaluation of addresses and sizes: literals, `const` items and integer arithmetic.
//! Anything else is unknown (`None`) and the rules that need it stay silent.

pub use crate::syntax::path_key;
use ra_ap_syntax::AstNode;
use ra_ap_syntax::ast::{self, ArithOp, BinaryOp, HasArgList, HasGenericArgs, LiteralKind};
use std::collections::HashMap;

/// A `const fn` whose body is one expression (`const fn tile(i: u64) -> u64 { BASE + i *
/// 0x1000 }`): its parameters and the body's text, evaluated at each call with constant
/// arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstFn {
    /// Its parameters' names; a method's receiver is not one of them (it is `self`).
    pub params: Vec<String>,
    pub body: String,
    /// Its generic parameters in order, lifetimes left out: `const fn tile<const PITCH:
    /// usize>` and `const fn offset<D>`, bound at a call from its turbofish.
    pub generics: Vec<GenericParam>,
    /// For each parameter of an array type whose length is a const generic (`sizes: [u64;
    /// R]`), that generic: a call without a turbofish binds it to the argument's length, as
    /// rustc infers it.
    pub lengths: Vec<Option<String>>,
    /// For a function of an `impl` block, the block's type and its generic parameters
    /// (`impl<const TILES: usize> KvTiler<TILES>`): a call binds them from the type's
    /// turbofish (`KvTiler::<{ KV_TILES }>::new()`) or from the value it is called on.
    pub owner: Option<Owner>,
    /// A method that takes `&mut self` (`fn place(&mut self, bytes: usize) -> u64` of a bump
    /// allocator): a call changes the value it is called on, which the caller then holds (see
    /// [`crate::model::value::self_after`]).
    pub mut_self: bool,
}

/// The `impl` block a function is written in: its type's name and generic parameters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owner {
    pub ty: String,
    pub generics: Vec<GenericParam>,
}

impl ConstFn {
    /// The function as written in `impl ty { .. }` with the block's `generics`: `Self` in its
    /// body is `ty` (`Self { base, pitch }` builds a `Tiler`).
    pub fn of_impl(mut self, ty: &str, generics: Vec<GenericParam>) -> ConstFn {
        let this = HashMap::from([("Self".to_string(), ty.to_string())]);
        self.body = substituted(&self.body, &this);
        self.owner = Some(Owner {
            ty: ty.to_string(),
            generics,
        });
        self
    }
}

/// A generic parameter of a `const fn`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenericParam {
    /// `D`: the type written at the call replaces it in the body (`size_of::<D>()`).
    Type(String),
    /// `const PITCH: usize`: a value in the body.
    Const(String),
    /// `const TOKEN_MAJOR: bool`: `true` or `false`, written in the body where it is named.
    Flag(String),
}

/// In an `impl ty` block, `Self::NAME` is `ty::NAME`: each of `consts` that is `ty`'s, under
/// `Self` too.
pub fn under_self(consts: &HashMap<String, u64>, ty: &str) -> Vec<(String, u64)> {
    let prefix = format!("{ty}::");
    consts
        .iter()
        .filter_map(|(k, v)| Some((format!("Self::{}", k.strip_prefix(&prefix)?), *v)))
        .collect()
}

/// How deep `const fn` calls are followed.
const MAX_CALL_DEPTH: u32 = 16;

/// Evaluates an integer expression with the given `const` values in scope.
pub fn eval(e: &ast::Expr, consts: &HashMap<String, u64>) -> Option<u64> {
    eval_in(e, consts, &HashMap::new())
}

/// Evaluates an integer expression with the given `const` values and `const fn`s in scope.
pub fn eval_in(
    e: &ast::Expr,
    consts: &HashMap<String, u64>,
    fns: &HashMap<String, ConstFn>,
) -> Option<u64> {
    eval_depth(e, consts, fns, None, 0)
}

/// Evaluates an integer expression as [`eval_in`] does, and reads sizes too: `A::SIZE` of an
/// axis, `Slice::SIZE` of an alias and `<m![A, B]>::SIZE` of a written mapping.
pub fn eval_sized(
    e: &ast::Expr,
    consts: &HashMap<String, u64>,
    fns: &HashMap<String, ConstFn>,
    scope: &crate::mapping::Scope,
) -> Option<u64> {
    eval_depth(e, consts, fns, Some(scope), 0)
}

/// `A::SIZE`, `layouts::Slice::SIZE` or `<m![A, B]>::SIZE`: the size of an axis, an alias or a
/// written mapping, also as `<Alias as M>::SIZE`; and `<bf16 as Scalar>::BITS`, an element
/// type's bits.
fn size_of(path: &ast::Path, scope: &crate::mapping::Scope) -> Option<u64> {
    let item = path.segment()?.name_ref()?.text().to_string();
    let qualifier = path.qualifier()?;
    // `<TokVec as M>::SIZE`, `<bf16 as Scalar>::BITS`: the type the anchor names.
    let anchored = qualifier
        .segment()
        .and_then(|s| s.type_anchor())
        .and_then(|a| a.ty());
    if item == "BITS" {
        let name = match &anchored {
            Some(t) => t.syntax().text().to_string(),
            None => path_key(&qualifier)?,
        };
        return Some(u64::from(
            crate::dtype::Dtype::from_name(name.trim())?.bits(),
        ));
    }
    if item != "SIZE" {
        return None;
    }
    match &anchored {
        Some(ty) => mapping_size(ty, scope),
        None => named_size(path_key(&qualifier)?, scope),
    }
}

/// The size of the mapping a type names: an alias or axis (`Slice`), a written mapping
/// (`m![A, B]`) or a type form (`Padding<Symbol<K>, 8>`).
fn mapping_size(ty: &ast::Type, scope: &crate::mapping::Scope) -> Option<u64> {
    let expr = match ty {
        ast::Type::PathType(p) if crate::syntax::is_type_form(p) => {
            crate::syntax::type_form::expr_of(ty).ok()?
        }
        ast::Type::PathType(p) => return named_size(path_key(&p.path()?)?, scope),
        ast::Type::MacroType(m) => {
            let body = m.macro_call()?.token_tree()?;
            let text = body.syntax().text().to_string();
            let inner = text.trim().get(1..text.trim().len().checked_sub(1)?)?;
            crate::mapping::parse::parse_mapping(inner).ok()?
        }
        _ => return None,
    };
    let layout = crate::mapping::lower::lower(&expr, scope, &mut Vec::new())?;
    Some(layout.size)
}

/// The size of an axis or mapping alias by its name.
fn named_size(key: String, scope: &crate::mapping::Scope) -> Option<u64> {
    let name = crate::mapping::ast::Name {
        text: key,
        span: crate::diagnostic::Span::new(0, 0),
    };
    let size = crate::mapping::ast::SizeExpr::SizeOf(name, crate::diagnostic::Span::new(0, 0));
    crate::mapping::lower::eval_size(&size, scope, &mut Vec::new(), &mut Vec::new())
}

/// `HbmTensor::<bf16, Chip, m![B, D]>::size()`: the bytes of the tensor, its chip and element
/// mappings' sizes times the element's bytes (the library's `size`; an element type whose
/// bits do not fill whole bytes is left unknown, as the 0.6 library refuses it).
fn tensor_bytes(path: &ast::Path, scope: &crate::mapping::Scope) -> Option<u64> {
    if path.segment()?.name_ref()?.text() != "size" {
        return None;
    }
    let owner = path.qualifier()?.segment()?;
    if owner.name_ref()?.text() != "HbmTensor" {
        return None;
    }
    let types: Vec<ast::Type> = owner
        .generic_arg_list()?
        .generic_args()
        .filter_map(|a| match a {
            ast::GenericArg::TypeArg(t) => t.ty(),
            _ => None,
        })
        .collect();
    let [dtype, chip, element, ..] = types.as_slice() else {
        return None;
    };
    let dtype = crate::dtype::Dtype::from_name(dtype.syntax().text().to_string().trim())?;
    let elements = mapping_size(chip, scope)?.checked_mul(mapping_size(element, scope)?)?;
    let bits = elements.checked_mul(u64::from(dtype.bits()))?;
    bits.is_multiple_of(8).then_some(bits / 8)
}

/// `size_of::<bf16>()` (also `std::mem::size_of`, `core::mem::size_of`): the bytes of one
/// element of a scalar type the library names, when it is whole bytes, of an element-type
/// parameter a call bound (`size_of::<D>()` in a helper called with `D = f32`), or of a
/// struct of the crate whose size its environment computed (`consts` holds it as
/// [`struct_size_key`]).
fn size_of_type(
    path: &ast::Path,
    consts: &HashMap<String, u64>,
    scope: Option<&crate::mapping::Scope>,
) -> Option<u64> {
    let seg = path.segment()?;
    if seg.name_ref()?.text() != "size_of" {
        return None;
    }
    let ast::GenericArg::TypeArg(t) = seg.generic_arg_list()?.generic_args().next()? else {
        return None;
    };
    let name = t.syntax().text().to_string();
    let name = name.trim();
    let bound = || {
        let bits = scope?.dtypes.get(name)?.bits();
        bits.is_multiple_of(8).then(|| u64::from(bits / 8))
    };
    scalar_bytes(name)
        .or_else(bound)
        .or_else(|| consts.get(&struct_size_key(name)).copied())
}

/// The bytes of one value of a Rust primitive or of an element type the library names (when
/// whole bytes).
pub fn scalar_bytes(name: &str) -> Option<u64> {
    if let Some(bytes) = rust_primitive_bytes(name) {
        return Some(bytes);
    }
    let bits = crate::dtype::Dtype::from_name(name)?.bits();
    bits.is_multiple_of(8).then(|| u64::from(bits / 8))
}

/// Where an environment's constants hold `size_of::<name>()` of a struct of the crate.
pub fn struct_size_key(name: &str) -> String {
    format!("size_of::<{name}>")
}

/// `size_of` of a Rust primitive that is no element type of the library (`u16`, `usize`; the
/// targets are 64-bit).
fn rust_primitive_bytes(name: &str) -> Option<u64> {
    Some(match name {
        "u8" | "bool" => 1,
        "u16" => 2,
        "u32" | "char" => 4,
        "u64" | "i64" | "f64" | "usize" | "isize" => 8,
        "u128" | "i128" => 16,
        _ => return None,
    })
}

/// A call of a `const fn` with constant arguments.
fn call(
    c: &ast::CallExpr,
    consts: &HashMap<String, u64>,
    fns: &HashMap<String, ConstFn>,
    sizes: Option<&crate::mapping::Scope>,
    depth: u32,
) -> Option<u64> {
    if depth >= MAX_CALL_DEPTH {
        return None;
    }
    let ast::Expr::PathExpr(callee) = c.expr()? else {
        return None;
    };
    let path = callee.path()?;
    if let Some(bytes) = size_of_type(&path, consts, sizes) {
        return Some(bytes);
    }
    if let Some(bytes) = sizes.and_then(|scope| tensor_bytes(&path, scope)) {
        return Some(bytes);
    }
    let f = fns.get(&callee_key(&path)?)?;
    let args: Vec<ast::Expr> = c.arg_list()?.args().collect();
    if args.len() != f.params.len() {
        return None;
    }
    let mut scope = consts.clone();
    for (p, a) in f.params.iter().zip(&args) {
        let v = eval_depth(a, consts, fns, sizes, depth + 1)?;
        scope.insert(p.clone(), v);
    }
    let (body, generics) = instantiate(f, &path, consts, fns, sizes, depth)?;
    scope.extend(generics);
    eval_depth(&body, &scope, fns, sizes, depth + 1)
}

/// The body of `f` as the call through `path` runs it: the types its turbofish gives written
/// in, and the values of its const parameters. `None` when the turbofish does not fit.
pub fn instantiate(
    f: &ConstFn,
    path: &ast::Path,
    consts: &HashMap<String, u64>,
    fns: &HashMap<String, ConstFn>,
    sizes: Option<&crate::mapping::Scope>,
    depth: u32,
) -> Option<(ast::Expr, HashMap<String, u64>)> {
    let turbofish = path.segment().and_then(|s| s.generic_arg_list());
    instantiate_with(f, turbofish, (consts, fns, sizes), depth)
}

/// The body of `f` as a call with the turbofish `turbofish` runs it (see [`instantiate`]): a
/// method call's (`plan.addr::<4>(i)`) is not part of a path.
pub fn instantiate_with(
    f: &ConstFn,
    turbofish: Option<ast::GenericArgList>,
    (consts, fns, sizes): (
        &HashMap<String, u64>,
        &HashMap<String, ConstFn>,
        Option<&crate::mapping::Scope>,
    ),
    depth: u32,
) -> Option<(ast::Expr, HashMap<String, u64>)> {
    let mut values = HashMap::new();
    let mut types = HashMap::new();
    if !f.generics.is_empty() {
        let turbofish = turbofish?;
        let given: Vec<ast::GenericArg> = turbofish
            .generic_args()
            .filter(|a| !matches!(a, ast::GenericArg::LifetimeArg(_)))
            .collect();
        if given.len() != f.generics.len() {
            return None;
        }
        for (param, arg) in f.generics.iter().zip(&given) {
            match param {
                GenericParam::Const(name) => {
                    let v = const_arg(arg, consts, fns, sizes, depth)?;
                    values.insert(name.clone(), v);
                }
                GenericParam::Type(name) => {
                    let ast::GenericArg::TypeArg(t) = arg else {
                        return None;
                    };
                    types.insert(name.clone(), t.syntax().text().to_string());
                }
                GenericParam::Flag(name) => {
                    let v = const_arg(arg, consts, fns, sizes, depth)?;
                    types.insert(name.clone(), (v != 0).to_string());
                }
            }
        }
    }
    let body = if types.is_empty() {
        std::borrow::Cow::Borrowed(f.body.as_str())
    } else {
        std::borrow::Cow::Owned(substituted(&f.body, &types))
    };
    let file = ra_ap_syntax::SourceFile::parse(
        &format!("const _: u64 = {body};"),
        ra_ap_syntax::Edition::Edition2024,
    )
    .tree();
    let body = file
        .syntax()
        .descendants()
        .find_map(ast::Const::cast)?
        .body()?;
    Some((body, values))
}

/// Integer arithmetic on addresses and sizes: `None` on overflow, underflow, a shift out of
/// range or a division by zero.
pub fn arith(op: ArithOp, l: u64, r: u64) -> Option<u64> {
    match op {
        ArithOp::Add => l.checked_add(r),
        ArithOp::Sub => l.checked_sub(r),
        ArithOp::Mul => l.checked_mul(r),
        ArithOp::Div => l.checked_div(r),
        ArithOp::Rem => l.checked_rem(r),
        ArithOp::Shl => u32::try_from(r)
            .ok()
            .and_then(|r| l.checked_shl(r))
            .filter(|v| v >> r == l),
        ArithOp::Shr => u32::try_from(r).ok().and_then(|r| l.checked_shr(r)),
        ArithOp::BitOr => Some(l | r),
        ArithOp::BitAnd => Some(l & r),
        ArithOp::BitXor => Some(l ^ r),
    }
}

/// The value of the constant `key`, also when it is written trait-qualified
/// (`<Bf16 as Elem>::BYTES` is `Bf16::BYTES`).
fn lookup(consts: &HashMap<String, u64>, key: &str) -> Option<u64> {
    consts.get(key).copied().or_else(|| {
        let plain = crate::syntax::without_trait(key)?;
        consts.get(&plain).copied()
    })
}

/// The key a called function is looked up by: its path, the turbofish of its last segment
/// left out (`tile_addr::<PITCH>` is `tile_addr`).
pub fn callee_key(path: &ast::Path) -> Option<String> {
    let last = path.segment()?;
    if last.generic_arg_list().is_none() {
        // `<Row as Ring>::ring_addr`: the function of the type's impl of the trait, which the
        // crate's functions are keyed by as `Row::ring_addr`.
        let key = path_key(path)?;
        return Some(crate::syntax::without_trait(&key).unwrap_or(key));
    }
    let name = last.name_ref()?.text().to_string();
    match path.qualifier() {
        Some(q) => Some(format!("{}::{name}", path_key(&q)?)),
        None => Some(name),
    }
}

/// The value of a const generic argument: `{ N * 2 }`, `8`, or a name (which the parser reads
/// as a type: `::<PITCH>`).
pub fn const_arg(
    arg: &ast::GenericArg,
    consts: &HashMap<String, u64>,
    fns: &HashMap<String, ConstFn>,
    sizes: Option<&crate::mapping::Scope>,
    depth: u32,
) -> Option<u64> {
    match arg {
        // `::<true>` of a `const DOUBLE: bool` parameter: 1 or 0.
        ast::GenericArg::ConstArg(c) => match c.expr()? {
            ast::Expr::Literal(l) => match l.kind() {
                LiteralKind::Bool(b) => Some(u64::from(b)),
                _ => eval_depth(&ast::Expr::Literal(l), consts, fns, sizes, depth + 1),
            },
            e => eval_depth(&e, consts, fns, sizes, depth + 1),
        },
        ast::GenericArg::TypeArg(t) => {
            let ast::Type::PathType(p) = t.ty()? else {
                return None;
            };
            lookup(consts, &path_key(&p.path()?)?)
        }
        _ => None,
    }
}

/// `body` with each identifier named in `types` replaced by its type's text (`size_of::<D>()`
/// → `size_of::<bf16>()`). A type that is no plain path, named as a path's qualifier, is
/// written in angle brackets: `E::SIZE` with `E = m![A, B]` is `<m![A, B]>::SIZE`.
pub fn substituted(body: &str, types: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, rest: &str| {
        match types.get(word.as_str()) {
            Some(ty) if rest.starts_with("::") && !is_plain_path(ty) => {
                out.push('<');
                out.push_str(ty);
                out.push('>');
            }
            Some(ty) => out.push_str(ty),
            None => out.push_str(word),
        }
        word.clear();
    };
    for (at, ch) in body.char_indices() {
        if ch.is_alphanumeric() || ch == '_' {
            word.push(ch);
        } else {
            flush(&mut word, &mut out, &body[at..]);
            out.push(ch);
        }
    }
    flush(&mut word, &mut out, "");
    out
}

/// Whether a type's text is a path of names (`bf16`, `layouts::Row`), which can qualify a
/// path as it is written.
fn is_plain_path(ty: &str) -> bool {
    ty.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

fn eval_depth(
    e: &ast::Expr,
    consts: &HashMap<String, u64>,
    fns: &HashMap<String, ConstFn>,
    sizes: Option<&crate::mapping::Scope>,
    depth: u32,
) -> Option<u64> {
    let eval =
        |e: &ast::Expr, consts: &HashMap<String, u64>| eval_depth(e, consts, fns, sizes, depth);
    match e {
        ast::Expr::CallExpr(c) => call(c, consts, fns, sizes, depth),
        ast::Expr::BlockExpr(b) if b.stmt_list()?.statements().next().is_none() => {
            eval(&b.stmt_list()?.tail_expr()?, consts)
        }
        ast::Expr::Literal(l) => match l.kind() {
            LiteralKind::IntNumber(n) => n.value().ok().and_then(|v| u64::try_from(v).ok()),
            _ => None,
        },
        ast::Expr::ParenExpr(p) => eval(&p.expr()?, consts),
        ast::Expr::CastExpr(c) => eval(&c.expr()?, consts),
        ast::Expr::PathExpr(p) => {
            let path = p.path()?;
            match path_key(&path).and_then(|k| lookup(consts, &k)) {
                Some(v) => Some(v),
                None => size_of(&path, sizes?),
            }
        }
        ast::Expr::BinExpr(b) => {
            let l = eval(&b.lhs()?, consts)?;
            let r = eval(&b.rhs()?, consts)?;
            match b.op_kind()? {
                BinaryOp::ArithOp(op) => arith(op, l, r),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ra_ap_syntax::{AstNode, Edition, SourceFile};

    fn value(src: &str) -> Option<u64> {
        let file =
            SourceFile::parse(&format!("const X: u64 = {src};"), Edition::Edition2024).tree();
        let c = file.syntax().descendants().find_map(ast::Const::cast)?;
        let consts = HashMap::from([
            ("BASE".to_string(), 4096u64),
            ("consts::BASE".to_string(), 4096u64),
        ]);
        eval(&c.body()?, &consts)
    }

    #[test]
    fn addresses_as_the_manual_writes_them() {
        assert_eq!(value("0x1000"), Some(4096));
        assert_eq!(value("1 << 12"), Some(4096));
        assert_eq!(value("2 << 28"), Some(2 << 28));
        assert_eq!(value("256 * 1024 + 32 * 1024"), Some(294_912));
        assert_eq!(value("BASE + 8"), Some(4104));
        assert_eq!(value("1_024usize"), Some(1024));
        assert_eq!(value("(BASE as u64) * 2"), Some(8192));
        assert_eq!(value("consts::BASE + 8"), Some(4104));
        assert_eq!(value("consts :: BASE"), Some(4096));
    }

    /// An associated item of a trait's impl is keyed by the type's and the trait's last names,
    /// as its definition inside `impl Trait for Type` is (`syntax::assoc_keys`).
    #[test]
    fn associated_items_are_keyed_by_type_and_trait() {
        let file = SourceFile::parse(
            "type A = <crate::axes::Paged as KvLayout>::Slice;\n\
             type B = Paged::Slice;\n\
             impl KvLayout for Paged { type Slice = m![S / 8]; }\n\
             impl Paged { type Lane = m![D]; }",
            Edition::Edition2024,
        )
        .tree();
        let keys: Vec<String> = file
            .syntax()
            .descendants()
            .filter_map(ast::TypeAlias::cast)
            .filter_map(|a| match a.ty()? {
                ast::Type::PathType(p) => path_key(&p.path()?),
                _ => None,
            })
            .collect();
        assert_eq!(keys, ["<Paged as KvLayout>::Slice", "Paged::Slice"]);
        let defined: Vec<Vec<String>> = file
            .syntax()
            .descendants()
            .filter_map(ast::TypeAlias::cast)
            .map(|a| {
                let name = ast::HasName::name(&a)
                    .map(|n| n.text().to_string())
                    .unwrap_or_default();
                crate::syntax::assoc_keys(a.syntax(), &name)
            })
            .collect();
        assert_eq!(
            defined,
            [
                vec![],
                vec![],
                vec![
                    "Paged::Slice".to_string(),
                    "<Paged as KvLayout>::Slice".to_string()
                ],
                vec!["Paged::Lane".to_string()],
            ]
        );
    }

    #[test]
    fn size_of_a_scalar_is_its_bytes() {
        assert_eq!(value("size_of::<bf16>()"), Some(2));
        assert_eq!(value("8 * std::mem::size_of::<f32>()"), Some(32));
        assert_eq!(value("(16 * core::mem::size_of::<i8>()) as i32"), Some(16));
        // Half a byte is not a `size_of`; a type the library does not name is not known.
        assert_eq!(value("size_of::<i4>()"), None);
        assert_eq!(value("size_of::<Foo>()"), None);
        // Rust's own integers, on a 64-bit target.
        assert_eq!(value("core::mem::size_of::<u16>()"), Some(2));
        assert_eq!(value("size_of::<usize>() * 4"), Some(32));
    }

    #[test]
    fn const_fns_with_one_expression_are_evaluated() {
        let file = SourceFile::parse("const X: u64 = tile(2) + 1;", Edition::Edition2024).tree();
        let c = file
            .syntax()
            .descendants()
            .find_map(ast::Const::cast)
            .and_then(|c| c.body());
        let consts = HashMap::from([("BASE".to_string(), 4096u64)]);
        let tile = ConstFn {
            params: vec!["i".into()],
            body: "BASE + i * 0x1000".into(),
            generics: Vec::new(),
            ..ConstFn::default()
        };
        let fns = HashMap::from([("tile".to_string(), tile)]);
        assert_eq!(
            c.and_then(|c| eval_in(&c, &consts, &fns)),
            Some(4096 + 8192 + 1)
        );
        // Recursion is bounded.
        let looping = ConstFn {
            params: vec![],
            body: "again()".into(),
            generics: Vec::new(),
            ..ConstFn::default()
        };
        let fns = HashMap::from([("again".to_string(), looping)]);
        let file = SourceFile::parse("const X: u64 = again();", Edition::Edition2024).tree();
        let c = file
            .syntax()
            .descendants()
            .find_map(ast::Const::cast)
            .and_then(|c| c.body());
        assert_eq!(c.and_then(|c| eval_in(&c, &consts, &fns)), None);
    }

    /// Generic `const fn`s are instantiated at the call: a const parameter from the turbofish
    /// (which the parser reads as a type when it is a name), a type parameter substituted into
    /// the body (`size_of::<D>()`).
    #[test]
    fn generic_const_fns_are_instantiated_at_the_call() {
        let eval_with = |src: &str, fns: &HashMap<String, ConstFn>| {
            let file =
                SourceFile::parse(&format!("const X: u64 = {src};"), Edition::Edition2024).tree();
            let c = file.syntax().descendants().find_map(ast::Const::cast)?;
            let consts = HashMap::from([("PITCH".to_string(), 0x1004u64)]);
            eval_in(&c.body()?, &consts, fns)
        };
        let tile_addr = ConstFn {
            params: vec!["base".into(), "i".into()],
            body: "base + i * STEP".into(),
            generics: vec![GenericParam::Const("STEP".into())],
            ..ConstFn::default()
        };
        let elem_offset = ConstFn {
            params: vec!["idx".into()],
            body: "idx * core::mem::size_of::<D>()".into(),
            generics: vec![GenericParam::Type("D".into())],
            ..ConstFn::default()
        };
        let fns = HashMap::from([
            ("tile_addr".to_string(), tile_addr),
            ("elem_offset".to_string(), elem_offset),
        ]);
        assert_eq!(
            eval_with("tile_addr::<PITCH>(0x4000, 1)", &fns),
            Some(0x5004)
        );
        assert_eq!(eval_with("tile_addr::<16>(0, 3)", &fns), Some(48));
        assert_eq!(eval_with("tile_addr::<{ 4 * 4 }>(0, 3)", &fns), Some(48));
        assert_eq!(eval_with("elem_offset::<bf16>(3)", &fns), Some(6));
        assert_eq!(eval_with("elem_offset::<i32>(3)", &fns), Some(12));
        // A turbofish that does not fit the parameters is not a value.
        assert_eq!(eval_with("elem_offset::<bf16, 2>(3)", &fns), None);
        assert_eq!(eval_with("elem_offset(3)", &fns), None);
    }

    #[test]
    fn non_constants_are_unknown() {
        assert_eq!(value("x + 1"), None);
        assert_eq!(value("f()"), None);
        assert_eq!(value("1 - 2"), None);
        assert_eq!(value("1 << 70"), None);
    }
}
