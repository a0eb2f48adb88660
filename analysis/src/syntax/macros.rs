//! `macro_rules!` by example: the item macros a file defines, expanded where the file invokes
//! them, so the kernels and modules a macro generates are analysed like written ones (the
//! vendor's own examples generate kernels this way: one invocation per scalar type).
//!
//! An invocation is matched against each rule of its macro in order, the first that matches
//! is transcribed, and the expansion is Rust text. Matching follows Rust's rules for the
//! common fragments: `ident`, `lifetime`, `literal` (with a leading `-`), `tt`, `block` and
//! `vis` take their tokens exactly; `ty`, `path`, `expr`, `pat`, `stmt`, `item` and `meta`
//! take token trees up to the next token the pattern expects (a `,` inside a type's `<..>`
//! belongs to the type). Repetitions `$(..) sep op` nest. What cannot be matched is an error
//! with its reason, which the analysis reports as "not checked" (never a guess).

use super::GreenKey;
use ra_ap_syntax::ast::{self, HasName};
use ra_ap_syntax::{AstNode, NodeOrToken, SyntaxKind, SyntaxNode};
use rowan::GreenNode;
use std::collections::HashMap;
use std::sync::Arc;

/// An expansion's text is at most this long: a macro that multiplies its input is cut off
/// with a reason rather than filling memory.
const MAX_EXPANSION: usize = 1 << 20;

/// How many definitions and expansions each thread remembers (then it starts again).
const REMEMBERED: usize = 512;

thread_local! {
    /// Definitions and expansions by their syntax: a file's layout is made again after every
    /// edit, and its macros and invocations are mostly the same subtrees as before.
    static MEMO: std::cell::RefCell<Memo> = std::cell::RefCell::default();
}

#[derive(Default)]
struct Memo {
    defs: HashMap<GreenKey, Option<Arc<MacroDef>>>,
    expansions: HashMap<(GreenKey, GreenKey), Result<GreenNode, String>>,
}

/// The definition a `MACRO_RULES` subtree makes (`None`: no readable rule), remembered.
pub fn definition(def: &GreenNode) -> Option<Arc<MacroDef>> {
    remembered(
        |m| &mut m.defs,
        GreenKey(def.clone()),
        || {
            ast::MacroRules::cast(SyntaxNode::new_root(def.clone()))
                .and_then(|d| MacroDef::of(&d))
                .map(Arc::new)
        },
    )
}

/// The expansion of an invocation whose arguments are `args` by the macro `def` defines
/// (`def_syntax`: its `MACRO_RULES` subtree), parsed as items; remembered.
pub fn expansion(
    def_syntax: &GreenNode,
    def: &MacroDef,
    args: &ast::TokenTree,
) -> Result<GreenNode, String> {
    let key = (
        GreenKey(def_syntax.clone()),
        GreenKey(args.syntax().green().to_owned()),
    );
    remembered(
        |m| &mut m.expansions,
        key,
        || {
            def.expand(args).map(|e| {
                let parsed = ast::SourceFile::parse(&e.text, ra_ap_syntax::Edition::Edition2024);
                parsed.tree().syntax().green().to_owned()
            })
        },
    )
}

/// `key`'s value in the thread's table `table` picks from [`MEMO`], made by `make` (and
/// remembered) when the table lacks it; a full table starts again.
fn remembered<K: std::hash::Hash + Eq, V: Clone>(
    table: impl Fn(&mut Memo) -> &mut HashMap<K, V>,
    key: K,
    make: impl FnOnce() -> V,
) -> V {
    if let Some(found) = MEMO.with(|m| table(&mut m.borrow_mut()).get(&key).cloned()) {
        return found;
    }
    let made = make();
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let t = table(&mut m);
        if t.len() >= REMEMBERED {
            t.clear();
        }
        t.insert(key, made.clone());
    });
    made
}

/// A token tree: a token with its text, or a delimited group.
#[derive(Clone, Debug)]
enum Tt {
    Leaf {
        kind: SyntaxKind,
        text: String,
        /// Whether whitespace or a comment came before it where it is written.
        spaced: bool,
        /// Where it is written (offsets in its tree).
        at: (u32, u32),
    },
    Group {
        open: char,
        inner: Vec<Tt>,
        /// The group's text as written, delimiters included.
        text: String,
        spaced: bool,
        at: (u32, u32),
    },
}

impl Tt {
    fn text(&self) -> &str {
        match self {
            Tt::Leaf { text, .. } | Tt::Group { text, .. } => text,
        }
    }

    fn spaced(&self) -> bool {
        match self {
            Tt::Leaf { spaced, .. } | Tt::Group { spaced, .. } => *spaced,
        }
    }

    fn at(&self) -> (u32, u32) {
        match self {
            Tt::Leaf { at, .. } | Tt::Group { at, .. } => *at,
        }
    }

    fn is(&self, s: &str) -> bool {
        matches!(self, Tt::Leaf { text, .. } if text == s)
    }
}

/// The token trees inside a `TOKEN_TREE` node (its delimiters left out), without trivia.
fn trees(node: &SyntaxNode) -> Vec<Tt> {
    let mut out = Vec::new();
    let children: Vec<_> = node.children_with_tokens().collect();
    let inner = children.len().saturating_sub(1);
    let mut spaced = false;
    for (i, child) in children.into_iter().enumerate() {
        let after_space = std::mem::take(&mut spaced);
        match child {
            NodeOrToken::Token(t) => {
                // The group's own delimiters are its first and last tokens.
                let delimiter = (i == 0 || i == inner)
                    && matches!(
                        t.kind(),
                        SyntaxKind::L_PAREN
                            | SyntaxKind::R_PAREN
                            | SyntaxKind::L_BRACK
                            | SyntaxKind::R_BRACK
                            | SyntaxKind::L_CURLY
                            | SyntaxKind::R_CURLY
                    );
                if t.kind().is_trivia() {
                    spaced = true;
                } else if !delimiter {
                    out.push(Tt::Leaf {
                        kind: t.kind(),
                        text: t.text().to_string(),
                        spaced: after_space,
                        at: range(t.text_range()),
                    });
                }
            }
            NodeOrToken::Node(n) if n.kind() == SyntaxKind::TOKEN_TREE => {
                out.push(group(&n, after_space));
            }
            NodeOrToken::Node(n) => out.push(Tt::Leaf {
                kind: n.kind(),
                text: n.text().to_string(),
                spaced: after_space,
                at: range(n.text_range()),
            }),
        }
    }
    out
}

fn group(n: &SyntaxNode, spaced: bool) -> Tt {
    let text = n.text().to_string();
    Tt::Group {
        open: text.chars().next().unwrap_or('('),
        inner: trees(n),
        text,
        spaced,
        at: range(n.text_range()),
    }
}

fn range(r: ra_ap_syntax::TextRange) -> (u32, u32) {
    (r.start().into(), r.end().into())
}

/// One element of a rule's matcher.
#[derive(Clone, Debug)]
enum Pat {
    Token(String),
    Group(char, Vec<Pat>),
    Fragment(String, String),
    Repeat {
        inner: Vec<Pat>,
        sep: Option<String>,
        op: char,
    },
}

/// A rule: its matcher and its transcriber's token trees.
#[derive(Clone, Debug)]
struct Rule {
    matcher: Vec<Pat>,
    body: Vec<Tt>,
}

/// A `macro_rules!` definition, read once.
#[derive(Clone, Debug)]
pub struct MacroDef {
    pub name: String,
    rules: Vec<Rule>,
}

impl MacroDef {
    /// The definition's rules, or `None` for a definition with no readable rule.
    pub fn of(def: &ast::MacroRules) -> Option<MacroDef> {
        let name = def.name()?.text().to_string();
        let tt = def.token_tree()?;
        let body = trees(tt.syntax());
        let mut rules = Vec::new();
        let mut rest = body.as_slice();
        while let [Tt::Group { inner: lhs, .. }, arrow, eq_gt @ ..] = rest {
            // `=>` may be one token or two.
            let (rhs, after) = match (arrow.is("=>"), arrow.is("="), eq_gt) {
                (true, _, [rhs, after @ ..]) => (rhs, after),
                (_, true, [gt, rhs, after @ ..]) if gt.is(">") => (rhs, after),
                _ => break,
            };
            let Tt::Group { inner: rhs, .. } = rhs else {
                break;
            };
            rules.push(Rule {
                matcher: matcher(lhs),
                body: rhs.clone(),
            });
            rest = match after {
                [semi, more @ ..] if semi.is(";") => more,
                more => more,
            };
        }
        (!rules.is_empty()).then_some(MacroDef { name, rules })
    }

    /// The expansion of an invocation whose argument is `args` (the call's token tree).
    pub fn expand(&self, args: &ast::TokenTree) -> Result<Expansion, String> {
        let input = trees(args.syntax());
        for rule in &self.rules {
            let mut b = Bindings::default();
            if match_all(&rule.matcher, &input, &mut b)? {
                let mut out = Expansion::default();
                transcribe(&rule.body, &b, &mut out)?;
                return Ok(out);
            }
        }
        Err(format!(
            "no rule of `{}!` matches this invocation",
            self.name
        ))
    }
}

/// A macro's expansion: its text, and where each fragment of the invocation was substituted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    pub text: String,
    pub substituted: Vec<Substituted>,
}

/// A fragment (`$p8`) substituted in an expansion: where its text is in the expansion, and
/// where its token trees are written in the invocation (offsets in the invocation's tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Substituted {
    pub at: (usize, usize),
    pub from: (u32, u32),
}

/// A matcher from a rule's left-hand side.
fn matcher(tts: &[Tt]) -> Vec<Pat> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tts.len() {
        match (&tts[i], tts.get(i + 1), tts.get(i + 2), tts.get(i + 3)) {
            (
                d,
                Some(Tt::Leaf { text: name, .. }),
                Some(colon),
                Some(Tt::Leaf { text: frag, .. }),
            ) if d.is("$") && colon.is(":") && !name.starts_with('(') => {
                out.push(Pat::Fragment(name.clone(), frag.clone()));
                i += 4;
            }
            (d, Some(Tt::Group { inner, .. }), ..) if d.is("$") => {
                let (sep, op, used) = repetition_tail(&tts[i + 2..]);
                out.push(Pat::Repeat {
                    inner: matcher(inner),
                    sep,
                    op,
                });
                i += 2 + used;
            }
            (Tt::Group { open, inner, .. }, ..) => {
                out.push(Pat::Group(*open, matcher(inner)));
                i += 1;
            }
            (t, ..) => {
                out.push(Pat::Token(t.text().to_string()));
                i += 1;
            }
        }
    }
    out
}

/// After `$( .. )`: an optional separator and the operator (`*`, `+`, `?`), and how many
/// token trees they took.
fn repetition_tail(rest: &[Tt]) -> (Option<String>, char, usize) {
    let op = |t: &Tt| {
        ["*", "+", "?"]
            .iter()
            .find(|o| t.is(o))
            .map(|o| o.chars().next())
    };
    match rest {
        [first, ..] if op(first).is_some() => (None, op(first).flatten().unwrap_or('*'), 1),
        [sep, second, ..] if op(second).is_some() => (
            Some(sep.text().to_string()),
            op(second).flatten().unwrap_or('*'),
            2,
        ),
        _ => (None, '*', 0),
    }
}

/// What a matcher bound: each fragment's text, and each repetition's iterations.
#[derive(Clone, Debug, Default)]
struct Bindings {
    /// Each fragment's text as it is transcribed, and where its token trees are written.
    fragments: HashMap<String, (String, (u32, u32))>,
    repeats: HashMap<String, Vec<Bindings>>,
}

/// Matches `pats` against all of `input`. `Ok(false)`: this rule does not match.
fn match_all(pats: &[Pat], input: &[Tt], b: &mut Bindings) -> Result<bool, String> {
    Ok(match_prefix(pats, input, b)? == Some(input.len()))
}

/// Matches `pats` against a prefix of `input`: how many token trees it took.
fn match_prefix(pats: &[Pat], input: &[Tt], b: &mut Bindings) -> Result<Option<usize>, String> {
    let mut at = 0;
    for (k, p) in pats.iter().enumerate() {
        let rest = &input[at..];
        let took = match p {
            Pat::Token(t) => rest.first().filter(|x| x.is(t)).map(|_| 1),
            Pat::Group(open, inner) => match rest.first() {
                Some(Tt::Group {
                    open: o,
                    inner: tts,
                    ..
                }) if o == open => match_all(inner, tts, b)?.then_some(1),
                _ => None,
            },
            Pat::Fragment(name, kind) => {
                let stop = next_token(&pats[k + 1..]);
                let n = fragment_len(kind, rest, stop.as_deref())?;
                if let Some(n) = n {
                    let at = match (rest.first(), rest[..n].last()) {
                        (Some(first), Some(last)) => (first.at().0, last.at().1),
                        _ => (0, 0),
                    };
                    b.fragments
                        .insert(name.clone(), (fragment_text(kind, &rest[..n]), at));
                }
                n
            }
            Pat::Repeat { inner, sep, op } => {
                Some(match_repeat(inner, sep.as_deref(), *op, rest, b)?)
            }
        };
        match took {
            Some(n) => at += n,
            None => return Ok(None),
        }
    }
    Ok(Some(at))
}

/// Matches a repetition as many times as it goes (at most once for `?`): how many token trees
/// it took. Each iteration's bindings are recorded under every name the repetition binds.
fn match_repeat(
    inner: &[Pat],
    sep: Option<&str>,
    op: char,
    input: &[Tt],
    b: &mut Bindings,
) -> Result<usize, String> {
    let mut at = 0;
    let mut iterations = Vec::new();
    loop {
        let mut start = at;
        if !iterations.is_empty() {
            match (sep, input.get(at)) {
                (Some(s), Some(t)) if t.is(s) => start += 1,
                (Some(_), _) => break,
                (None, _) => {}
            }
        }
        let mut one = Bindings::default();
        match match_prefix(inner, &input[start.min(input.len())..], &mut one)? {
            Some(n) if n > 0 => {
                at = start + n;
                iterations.push(one);
            }
            _ => break,
        }
        if op == '?' {
            break;
        }
    }
    if op == '+' && iterations.is_empty() {
        return Err("a `$(..)+` repetition matched nothing".to_string());
    }
    for name in names(inner) {
        b.repeats.insert(name, iterations.clone());
    }
    Ok(at)
}

/// The metavariables a matcher binds.
fn names(pats: &[Pat]) -> Vec<String> {
    let mut out = Vec::new();
    for p in pats {
        match p {
            Pat::Fragment(n, _) => out.push(n.clone()),
            Pat::Group(_, inner) | Pat::Repeat { inner, .. } => out.extend(names(inner)),
            Pat::Token(_) => {}
        }
    }
    out
}

/// The token the pattern expects next, which ends a greedy fragment.
fn next_token(rest: &[Pat]) -> Option<String> {
    match rest.first()? {
        Pat::Token(t) => Some(t.clone()),
        Pat::Repeat { sep: Some(s), .. } => Some(s.clone()),
        _ => None,
    }
}

/// How many token trees a fragment of `kind` takes from `input`, `None` when it cannot start
/// there.
fn fragment_len(kind: &str, input: &[Tt], stop: Option<&str>) -> Result<Option<usize>, String> {
    let first = input.first();
    Ok(match kind {
        "ident" => first
            .filter(|t| {
                matches!(
                    t,
                    Tt::Leaf {
                        kind: SyntaxKind::IDENT,
                        ..
                    }
                ) || is_keyword(t)
            })
            .map(|_| 1),
        "lifetime" => first
            .filter(|t| {
                matches!(
                    t,
                    Tt::Leaf {
                        kind: SyntaxKind::LIFETIME_IDENT,
                        ..
                    }
                )
            })
            .map(|_| 1),
        "literal" => match input {
            [minus, lit, ..] if minus.is("-") && is_literal(lit) => Some(2),
            [lit, ..] if is_literal(lit) => Some(1),
            _ => None,
        },
        "tt" => first.map(|_| 1),
        "block" => first
            .filter(|t| matches!(t, Tt::Group { open: '{', .. }))
            .map(|_| 1),
        "vis" => Some(match input {
            [p, Tt::Group { open: '(', .. }, ..] if p.is("pub") => 2,
            [p, ..] if p.is("pub") => 1,
            _ => 0,
        }),
        "ty" | "path" | "expr" | "pat" | "pat_param" | "stmt" | "item" | "meta" => {
            let n = greedy_len(kind, input, stop);
            (n > 0).then_some(n)
        }
        other => return Err(format!("the fragment kind `{other}` is not read")),
    })
}

/// A greedy fragment's length: up to `stop` or a token that may follow a fragment of its kind
/// (Rust's follow sets: `,` `;` `=>` for an expression, `=` and `|` too for a type, a path or
/// a pattern, and a `{ .. }` block for a type or a path), outside any group, and for a type or
/// path outside its `<..>` (an expression's turbofish `::<A, B>` too: there `<` is no
/// comparison).
fn greedy_len(kind: &str, input: &[Tt], stop: Option<&str>) -> usize {
    let generic = matches!(kind, "ty" | "path");
    let follow: &[&str] = match kind {
        "ty" | "path" | "pat" | "pat_param" => &[",", ";", "=", "=>", "|"],
        _ => &[",", ";", "=>"],
    };
    let turbofish = |i: usize| {
        i >= 1 && input[i - 1].is("::") || i >= 2 && input[i - 1].is(":") && input[i - 2].is(":")
    };
    let mut angle = 0i32;
    for (i, t) in input.iter().enumerate() {
        if t.is("<") && (generic || angle > 0 || turbofish(i)) {
            angle += 1;
        } else if t.is(">") && angle > 0 {
            angle -= 1;
        } else if t.is(">") && generic {
            // A type or path never holds an unmatched `>`: it closes the `<..>` around the
            // fragment (`$($t:ty),+ >`).
            return i;
        } else if angle == 0 && (stop.is_some_and(|s| t.is(s)) || follow.iter().any(|f| t.is(f))) {
            return i;
        } else if angle == 0 && generic && matches!(t, Tt::Group { open: '{', .. }) {
            // A block may follow a type or a path (`$elem:ty { .. }`); neither holds one
            // outside its `<..>`.
            return i;
        }
    }
    input.len()
}

fn is_literal(t: &Tt) -> bool {
    matches!(
        t,
        Tt::Leaf {
            kind: SyntaxKind::INT_NUMBER
                | SyntaxKind::FLOAT_NUMBER
                | SyntaxKind::STRING
                | SyntaxKind::CHAR
                | SyntaxKind::BYTE
                | SyntaxKind::BYTE_STRING
                | SyntaxKind::TRUE_KW
                | SyntaxKind::FALSE_KW,
            ..
        }
    )
}

fn is_keyword(t: &Tt) -> bool {
    matches!(t, Tt::Leaf { kind, .. } if kind.is_keyword(ra_ap_syntax::Edition::Edition2024))
}

/// A fragment's text as it is transcribed: an expression of several token trees keeps its
/// grouping (Rust substitutes it as one expression node).
fn fragment_text(kind: &str, tts: &[Tt]) -> String {
    let text = join(tts);
    if kind == "expr" && tts.len() > 1 {
        format!("({text})")
    } else {
        text
    }
}

/// Token trees as text, spaced as they are written.
fn join(tts: &[Tt]) -> String {
    let mut out = String::new();
    for (k, t) in tts.iter().enumerate() {
        push_token(&mut out, t.text(), k > 0 && t.spaced());
    }
    out
}

/// Appends `text`, after a space where one was written (`spaced`) and where one is needed: two
/// words must not merge, punctuation like `::` must not split.
fn push_token(out: &mut String, text: &str, spaced: bool) {
    if spaced && !out.is_empty() && !out.ends_with(char::is_whitespace) {
        out.push(' ');
    }
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '\'' || c == '"';
    // Nor may a `/` and the next token make a comment.
    let comment = out.ends_with('/') && (text.starts_with('/') || text.starts_with('*'));
    if (out.ends_with(word) && text.starts_with(word)) || comment {
        out.push(' ');
    }
    out.push_str(text);
}

/// Writes a transcriber's token trees with the bindings substituted.
fn transcribe(body: &[Tt], b: &Bindings, out: &mut Expansion) -> Result<(), String> {
    let mut i = 0;
    while i < body.len() {
        if out.text.len() > MAX_EXPANSION {
            return Err(format!(
                "the expansion is longer than {MAX_EXPANSION} bytes"
            ));
        }
        match (&body[i], body.get(i + 1)) {
            (d, Some(Tt::Leaf { text: name, .. })) if d.is("$") && name == "crate" => {
                push_token(&mut out.text, "crate", d.spaced());
                i += 2;
            }
            (d, Some(Tt::Leaf { text: name, .. })) if d.is("$") => {
                let Some((value, from)) = b.fragments.get(name) else {
                    return Err(format!("`${name}` is not bound here"));
                };
                push_token(&mut out.text, value, d.spaced());
                let end = out.text.len();
                out.substituted.push(Substituted {
                    at: (end - value.len(), end),
                    from: *from,
                });
                i += 2;
            }
            (d, Some(Tt::Group { inner, .. })) if d.is("$") => {
                let (sep, _, used) = repetition_tail(&body[i + 2..]);
                transcribe_repeat(inner, sep.as_deref(), b, out)?;
                i += 2 + used;
            }
            (
                Tt::Group {
                    open,
                    inner,
                    spaced,
                    ..
                },
                _,
            ) => {
                let close = match open {
                    '(' => ')',
                    '[' => ']',
                    _ => '}',
                };
                push_token(&mut out.text, &open.to_string(), *spaced);
                transcribe(inner, b, out)?;
                out.text.push(close);
                i += 1;
            }
            (t, _) => {
                push_token(&mut out.text, t.text(), t.spaced());
                i += 1;
            }
        }
    }
    Ok(())
}

/// A transcriber's `$( .. ) sep op`: once per iteration of the repetitions it names.
fn transcribe_repeat(
    inner: &[Tt],
    sep: Option<&str>,
    b: &Bindings,
    out: &mut Expansion,
) -> Result<(), String> {
    let used = used_names(inner);
    let Some(iterations) = used.iter().find_map(|n| b.repeats.get(n)) else {
        return Err("a transcriber repetition names no repeated metavariable".to_string());
    };
    for (k, it) in iterations.iter().enumerate() {
        if k > 0
            && let Some(s) = sep
        {
            push_token(&mut out.text, s, false);
        }
        // The iteration's own bindings shadow the outer ones.
        let mut scope = b.clone();
        scope.fragments.extend(it.fragments.clone());
        scope.repeats.extend(it.repeats.clone());
        transcribe(inner, &scope, out)?;
    }
    Ok(())
}

/// The metavariables a transcriber names.
fn used_names(tts: &[Tt]) -> Vec<String> {
    let mut out = Vec::new();
    for w in tts.windows(2) {
        if w[0].is("$")
            && let Tt::Leaf { text, .. } = &w[1]
        {
            out.push(text.clone());
        }
    }
    for t in tts {
        if let Tt::Group { inner, .. } = t {
            out.extend(used_names(inner));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ra_ap_syntax::{Edition, SourceFile};

    fn expand(src: &str) -> Result<String, String> {
        let file = SourceFile::parse(src, Edition::Edition2024).tree();
        let def = file
            .syntax()
            .descendants()
            .find_map(ast::MacroRules::cast)
            .and_then(|d| MacroDef::of(&d))
            .ok_or("no definition")?;
        let call = file
            .syntax()
            .descendants()
            .find_map(ast::MacroCall::cast)
            .and_then(|c| c.token_tree())
            .ok_or("no call")?;
        def.expand(&call)
            .map(|e| e.text.split_whitespace().collect::<Vec<_>>().join(" "))
    }

    #[test]
    fn fragments_are_substituted_and_paths_stay_joined() {
        let src = "macro_rules! k { ($name:ident, $d:ty, $b:literal) => { \
                   fn $name(x: &In<$d>) { x.to_dm::<m![A / $b]>(); } }; }\n\
                   k!(first, HbmTensor<i8, m![1], m![A]>, 8);";
        assert_eq!(
            expand(src).as_deref(),
            Ok("fn first(x: &In<HbmTensor<i8, m![1], m![A]>>) { x.to_dm::<m![A / 8]>();}")
        );
    }

    #[test]
    fn an_expression_keeps_its_grouping_and_a_negative_literal_is_one_literal() {
        let src = "macro_rules! k { ($v:expr, $l:literal) => { const X: i32 = $v * $l; }; }\n\
                   k!(1 + 2, -1);";
        assert_eq!(expand(src).as_deref(), Ok("const X: i32 = (1 + 2) * -1;"));
    }

    /// A block may follow a type fragment (`$elem:ty { vrf: $vrf:ty }`): the type ends there.
    #[test]
    fn a_type_fragment_ends_at_a_block() {
        let src = "macro_rules! k { (fn $name:ident on $s:ty, $e:ty { vrf: $v:ty $(,)? }) => { \
                   type $name = ($s, $e, $v); }; }\n\
                   k!(fn Pair on m![A], m![B / 2] { vrf: m![C], });";
        assert_eq!(
            expand(src).as_deref(),
            Ok("type Pair = (m![A], m![B / 2], m![C]);")
        );
    }

    #[test]
    fn repetitions_expand_once_per_match() {
        let src = "macro_rules! k { ($($n:ident = $v:literal),* $(,)?) => { \
                   $(const $n: u32 = $v;)* }; }\nk!(A = 1, B = 2,);";
        assert_eq!(
            expand(src).as_deref(),
            Ok("const A: u32 = 1;const B: u32 = 2;")
        );
    }

    /// A type list inside a turbofish the matcher writes (`$m:ident :: < $($t:ty),+ >`): each
    /// type ends at the `>` that closes the list, as Rust's parser ends it.
    #[test]
    fn a_type_ends_at_the_angle_bracket_that_closes_its_list() {
        let src = "macro_rules! k { ($f:ident :: < $($t:ty),+ >, $g:ident) => { \
                   fn $g() { x.$f::<$($t),+>(); } }; }\n\
                   k!(narrow::<HalfT, Pk<m![A % 4]>>, run);";
        assert_eq!(
            expand(src).as_deref(),
            Ok("fn run() { x.narrow::<HalfT,Pk<m![A % 4]>>();}")
        );
    }

    #[test]
    fn a_type_ends_at_a_comma_outside_its_generics() {
        let src = "macro_rules! k { ($($n:ident = $d:ty),+ $(,)?) => { $(type $n = $d;)+ }; }\n\
                   k!(A = Vec<(i8, u8)>, B = HashMap<i8, u8>,);";
        assert_eq!(
            expand(src).as_deref(),
            Ok("type A = Vec<(i8, u8)>;type B = HashMap<i8, u8>;")
        );
    }

    /// A turbofish's `,` is inside its `<..>`; a `<` after no `::` is a comparison.
    #[test]
    fn an_expression_ends_at_a_comma_outside_its_turbofish() {
        let src = "macro_rules! k { ($s:expr, $x:expr) => { const C: bool = $x; fn f() { $s; } }; }\n\
                   k!(t.fetch::<m![1], m![Z % 2]>(), 1 < 2);";
        assert_eq!(
            expand(src).as_deref(),
            Ok("const C: bool = (1 < 2); fn f() { (t.fetch::<m![1], m![Z % 2]>());}")
        );
    }

    #[test]
    fn the_first_matching_rule_wins_and_no_match_says_so() {
        let src = "macro_rules! k { (one) => { fn a() {} }; ($x:ident) => { fn $x() {} }; }\n\
                   k!(two);";
        assert_eq!(expand(src).as_deref(), Ok("fn two() {}"));
        let src = "macro_rules! k { (one) => { fn a() {} }; }\nk!(1, 2);";
        assert_eq!(
            expand(src),
            Err("no rule of `k!` matches this invocation".to_string())
        );
    }
}
