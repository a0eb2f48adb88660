//! Parsers for the bodies of `m![...]`, `axes![...]` and `i![...]`, written as syn `Parse`
//! functions over the macro body so that every error points at its token.
//!
//! Spans in the results are byte offsets into the body text; callers lift them into the file.

use super::ast::*;
use crate::diagnostic::Span;
use proc_macro2::TokenStream;
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Token, braced, bracketed, parenthesized};

/// Why a body could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseProblem {
    /// Not the mapping grammar: message, and the offending token.
    Syntax(Span, String),
    /// A notation the manual uses only in prose (constraints.md §22 A-14).
    Unsupported(Span, String),
    /// An integer literal beyond 2^64 - 1.
    Overflow(Span, String),
    /// Nested past [`MAX_MAPPING_NESTING`]: the token where the limit is exceeded.
    TooDeep(Span, String),
}

impl ParseProblem {
    /// The same problem with its span lifted by `by` bytes (body -> file coordinates).
    pub fn shifted(self, by: u32) -> ParseProblem {
        match self {
            ParseProblem::Syntax(s, m) => ParseProblem::Syntax(s.shift(by), m),
            ParseProblem::Unsupported(s, m) => ParseProblem::Unsupported(s.shift(by), m),
            ParseProblem::Overflow(s, m) => ParseProblem::Overflow(s.shift(by), m),
            ParseProblem::TooDeep(s, m) => ParseProblem::TooDeep(s.shift(by), m),
        }
    }
}

/// How deep a mapping body may nest, estimated as the file pre-scan does
/// ([`crate::syntax::limits`]): each `[`, `(`, `{` and each postfix or arithmetic operator of a
/// term counts one level. Real mappings stay below 10; the bound keeps the parser, its
/// token buffer and every recursive walk over the expression (lowering, printing) off the
/// end of the stack.
pub const MAX_MAPPING_NESTING: u32 = 64;

thread_local! {
    /// Bodies this thread parsed since [`forget_parsed`]: one file's analysis reads the same
    /// mapping text several times (its declaration, the environment of every function, the
    /// types of the function that uses it), and a body always parses to the same expression.
    static PARSED: RefCell<HashMap<String, Result<Expr, ParseProblem>>> =
        RefCell::new(HashMap::new());
    /// The same for `axes![...]` bodies (read by the file's items and by its scopes).
    static PARSED_AXES: RefCell<HashMap<String, AxesParse>> = RefCell::new(HashMap::new());
}

/// The declarations of an `axes![...]` body and the problems of the entries that failed.
pub type AxesParse = (Vec<AxisDecl>, Vec<ParseProblem>);

/// How many parsed bodies a thread keeps at most (a file with more starts over).
const PARSED_LIMIT: usize = 4096;

/// Forgets the bodies parsed so far on this thread (each file's analysis starts with it, so
/// the memo never carries one file's work into another's measurements or memory).
pub fn forget_parsed() {
    PARSED.with(|m| m.borrow_mut().clear());
    PARSED_AXES.with(|m| m.borrow_mut().clear());
}

/// Parses the body of `m![...]`.
pub fn parse_mapping(body: &str) -> Result<Expr, ParseProblem> {
    memoized(&PARSED, body, parse_mapping_uncached)
}

/// `parse(body)` through this thread's memo `memo` (bounded by [`PARSED_LIMIT`]).
fn memoized<T: Clone + 'static>(
    memo: &'static std::thread::LocalKey<RefCell<HashMap<String, T>>>,
    body: &str,
    parse: fn(&str) -> T,
) -> T {
    if let Some(hit) = memo.with(|m| m.borrow().get(body).cloned()) {
        return hit;
    }
    let parsed = parse(body);
    memo.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= PARSED_LIMIT {
            m.clear();
        }
        m.insert(body.to_string(), parsed.clone());
    });
    parsed
}

fn parse_mapping_uncached(body: &str) -> Result<Expr, ParseProblem> {
    run(body, |p, input| {
        let e = p.mapping(input)?;
        p.expect_end(
            input,
            "expected `,` or a postfix operator (`/`, `%`, `#`, `=`)",
        )?;
        Ok(e)
    })
}

/// Parses the body of `axes![...]`. Entries are independent: a bad entry is reported and
/// skipped, the others are still declared.
pub fn parse_axes(body: &str) -> AxesParse {
    memoized(&PARSED_AXES, body, parse_axes_uncached)
}

fn parse_axes_uncached(body: &str) -> AxesParse {
    let mut problems = Vec::new();
    let decls = run(body, |p, input| {
        let mut decls = Vec::new();
        while !input.is_empty() {
            match p.axis_decl(input) {
                Ok(d) => decls.push(d),
                Err(e) => {
                    problems.push(e);
                    while !input.is_empty() && !input.peek(Token![,]) {
                        let _ = input.parse::<proc_macro2::TokenTree>();
                    }
                }
            }
            if input.is_empty() {
                break;
            }
            p.comma(input, "expected `,` between axis declarations")?;
        }
        Ok(decls)
    });
    match decls {
        Ok(d) => (d, problems),
        Err(e) => {
            problems.push(e);
            (Vec::new(), problems)
        }
    }
}

/// Parses the body of `i![...]`.
pub fn parse_index(body: &str) -> Result<Vec<IndexEntry>, ParseProblem> {
    run(body, |p, input| {
        let mut entries = Vec::new();
        while !input.is_empty() {
            let key = p.term_until(input, true)?;
            p.punct::<Token![:]>(input, "expected `:` after the index key")?;
            let start = input.span();
            let value =
                if input.peek(syn::LitInt) && (input.peek2(Token![,]) || p.ends_after_one(input)) {
                    let lit: syn::LitInt = input.parse().map_err(|e| p.err(e))?;
                    Some(p.int(&lit)?)
                } else {
                    // A runtime expression such as `64 * i + j`: skip to the next top-level comma.
                    let mut any = false;
                    while !input.is_empty() && !input.peek(Token![,]) {
                        input
                            .parse::<proc_macro2::TokenTree>()
                            .map_err(|e| p.err(e))?;
                        any = true;
                    }
                    if !any {
                        return Err(ParseProblem::Syntax(
                            p.span(start),
                            "expected an index value".into(),
                        ));
                    }
                    None
                };
            let span = key.span().cover(p.span(start));
            entries.push(IndexEntry { key, value, span });
            if input.is_empty() {
                break;
            }
            p.comma(input, "expected `,` between index entries")?;
        }
        Ok(entries)
    })
}

struct P<'a> {
    src: &'a str,
    /// Byte offsets of primes (`B'`) that were replaced by `_` for lexing.
    primes: HashSet<usize>,
}

type R<T> = Result<T, ParseProblem>;

fn run<T>(body: &str, f: impl FnOnce(&P<'_>, ParseStream<'_>) -> R<T>) -> R<T> {
    // Before lexing: syn builds its token buffer recursively, one frame per nested group.
    if let Some((span, depth)) = crate::syntax::limits::first_too_deep(body, MAX_MAPPING_NESTING) {
        return Err(ParseProblem::TooDeep(
            span,
            format!(
                "mapping nested too deep: groups and operators reach an estimated depth of \
                 {depth} here; visa-lint evaluates mappings nested up to {MAX_MAPPING_NESTING} \
                 levels (name parts of it with type aliases)"
            ),
        ));
    }
    // `B'` is not a Rust token: lex it as `B_` and remember where the prime was. Byte lengths are
    // kept, so every span stays valid for the original text.
    // Each prime is kept with the byte where the character it follows starts (a multi-byte one
    // like `é` included), so the span of `é'` starts on a character boundary.
    let mut primed: Vec<(usize, usize)> = Vec::new();
    let mut lexed = String::with_capacity(body.len());
    let mut prev: Option<(usize, char)> = None;
    for (i, c) in body.char_indices() {
        match prev {
            Some((start, p)) if c == '\'' && (p.is_alphanumeric() || p == '_') => {
                primed.push((start, i));
                lexed.push('_');
            }
            _ => lexed.push(c),
        }
        prev = Some((i, c));
    }
    let primes: HashSet<usize> = primed.iter().map(|&(_, prime)| prime).collect();
    let p = P { src: body, primes };
    let tokens = match TokenStream::from_str(&lexed) {
        Ok(t) => t,
        Err(e) => {
            let r = e.span().byte_range();
            proc_macro2::extra::invalidate_current_thread_spans();
            if let Some(&(axis, prime)) = primed.first() {
                // In a Rust file `B'` starts a character literal, which garbles the macro call.
                return Err(ParseProblem::Unsupported(
                    Span::new(axis, prime + 1),
                    "skewed axes like `B'` are not Rust tokens: the manual shows them only in prose; \
                     `visa-lint eval` evaluates them"
                        .into(),
                ));
            }
            return Err(ParseProblem::Syntax(
                p.clamp(r.start, r.end.max(r.start + 1)),
                "unbalanced delimiter or invalid token here".to_string(),
            ));
        }
    };
    let mut out: Option<R<T>> = None;
    let parsed = (|input: ParseStream<'_>| {
        let r = f(&p, input);
        // Leave the remaining tokens to syn only when we already produced our own error.
        if r.is_err() {
            while !input.is_empty() {
                let _ = input.parse::<proc_macro2::TokenTree>();
            }
        }
        out = Some(r);
        Ok(())
    })
    .parse2(tokens);
    // All spans have been turned into byte offsets: drop proc-macro2's thread-local source map so
    // a long-running server does not grow it forever.
    proc_macro2::extra::invalidate_current_thread_spans();
    match (parsed, out) {
        (_, Some(r)) => r,
        (Err(e), None) => Err(ParseProblem::Syntax(
            Span::new(0, body.len()),
            e.to_string(),
        )),
        (Ok(()), None) => Err(ParseProblem::Syntax(
            Span::new(0, body.len()),
            "empty".into(),
        )),
    }
}

/// Opens one delimited group (the syn macros return `syn::Result`).
fn group<'a>(
    input: ParseStream<'a>,
    f: impl FnOnce(
        ParseStream<'a>,
    ) -> syn::Result<(syn::parse::ParseBuffer<'a>, proc_macro2::extra::DelimSpan)>,
) -> syn::Result<(syn::parse::ParseBuffer<'a>, proc_macro2::extra::DelimSpan)> {
    f(input)
}

impl P<'_> {
    /// A span inside the body, widened to character boundaries (a lexer error inside `…`
    /// points at its first byte).
    fn clamp(&self, start: usize, end: usize) -> Span {
        let len = self.src.len();
        let mut start = start.min(len);
        while !self.src.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = end.clamp(start, len);
        while !self.src.is_char_boundary(end) {
            end += 1;
        }
        Span::new(start, end)
    }

    /// The span of the whole next token tree (a group's span covers its delimiters).
    fn next_span(&self, input: ParseStream<'_>) -> Span {
        match input.cursor().token_tree() {
            Some((tt, _)) => self.span(tt.span()),
            None => self.end_span(),
        }
    }

    fn span(&self, s: proc_macro2::Span) -> Span {
        let r = s.byte_range();
        self.clamp(r.start, r.end)
    }

    /// Where an "unexpected end of input" error should point: the last token of the body.
    fn end_span(&self) -> Span {
        let trimmed = self.src.trim_end();
        let end = trimmed.len();
        let start = trimmed.char_indices().next_back().map_or(0, |(i, _)| i);
        Span::new(start, end.max(start))
    }

    fn err(&self, e: syn::Error) -> ParseProblem {
        let msg = e.to_string();
        let r = e.span().byte_range();
        let span = if msg.contains("end of input")
            || (r.start == 0 && r.end == 0 && !self.src.is_empty())
        {
            self.end_span()
        } else {
            self.clamp(r.start, r.end)
        };
        ParseProblem::Syntax(span, msg)
    }

    fn ends_after_one(&self, input: ParseStream<'_>) -> bool {
        let fork = input.fork();
        fork.parse::<proc_macro2::TokenTree>().is_ok() && fork.is_empty()
    }

    fn expect_end(&self, input: ParseStream<'_>, msg: &str) -> R<()> {
        if input.is_empty() {
            return Ok(());
        }
        self.check_unsupported(input)?;
        Err(ParseProblem::Syntax(self.next_span(input), msg.into()))
    }

    fn comma(&self, input: ParseStream<'_>, msg: &str) -> R<()> {
        self.punct::<Token![,]>(input, msg)
    }

    fn punct<T: syn::parse::Parse>(&self, input: ParseStream<'_>, msg: &str) -> R<()> {
        if input.is_empty() {
            return Err(ParseProblem::Syntax(
                self.end_span(),
                format!("{msg}, found end of input"),
            ));
        }
        if input.fork().parse::<T>().is_ok() {
            input.parse::<T>().map_err(|e| self.err(e))?;
            return Ok(());
        }
        Err(ParseProblem::Syntax(self.next_span(input), msg.into()))
    }

    fn name(&self, ident: &syn::Ident) -> Name {
        let span = self.span(ident.span());
        let text = self
            .src
            .get(span.range())
            .map(str::to_owned)
            .unwrap_or_else(|| ident.to_string());
        Name { text, span }
    }

    /// `name::next` as one name, written without spaces (the key the environment binds a
    /// qualified path under).
    fn joined(&self, name: &Name, next: &syn::Ident) -> Name {
        let next = self.name(next);
        Name {
            text: format!("{}::{}", name.text, next.text),
            span: name.span.cover(next.span),
        }
    }

    /// Whether `input` starts with a mapping form written as a type (`Padding<`, `Pair<`,
    /// `Identity`, ..., manual L632-L886).
    fn starts_a_type_form(input: ParseStream<'_>) -> bool {
        let fork = input.fork();
        let Ok(ident) = fork.parse::<syn::Ident>() else {
            return false;
        };
        let generic = matches!(
            ident.to_string().as_str(),
            "Symbol" | "Broadcast" | "Pair" | "Padding" | "Resize" | "Stride" | "Modulo"
        );
        (generic && fork.peek(Token![<])) || (ident == "Identity" && fork.is_empty())
    }

    /// A mapping written as types (`Padding<m![1], W>`, `Pair<Symbol<A>, Identity>`): the
    /// expression it spells; another name in it is an alias or a generic parameter.
    fn type_form(&self, input: ParseStream<'_>, depth: u32) -> R<Expr> {
        if depth > 64 {
            return Err(ParseProblem::TooDeep(
                self.next_span(input),
                "the type form nests too deeply".into(),
            ));
        }
        if let Some((mapping, span)) = self.written_mapping(input)? {
            return Ok(Expr::Group(Box::new(mapping), span));
        }
        let ident: syn::Ident = input.parse().map_err(|e| self.err(e))?;
        let name = self.name(&ident);
        let form = ident.to_string();
        if !input.peek(Token![<]) {
            return Ok(match form.as_str() {
                "Identity" => Expr::Identity(name.span),
                _ => Expr::Escape(name.clone(), name.span),
            });
        }
        self.punct::<Token![<]>(input, "expected `<`")?;
        let expr = match form.as_str() {
            "Symbol" => {
                let axis: syn::Ident = input.parse().map_err(|e| self.err(e))?;
                Expr::Symbol(self.name(&axis))
            }
            "Broadcast" => match self.size_atom(input, true)? {
                SizeExpr::Lit(1, _) => Expr::Identity(name.span),
                SizeExpr::Lit(n, _) => Expr::Broadcast(n, name.span),
                _ => {
                    return Err(ParseProblem::Unsupported(
                        name.span,
                        "a `Broadcast` whose size is not a literal is not evaluated".into(),
                    ));
                }
            },
            "Pair" => {
                let mut terms = vec![self.type_form(input, depth + 1)?];
                self.comma(input, "expected `,` between the two halves of a `Pair`")?;
                match self.type_form(input, depth + 1)? {
                    Expr::Pair(rest, _) => terms.extend(rest),
                    r => terms.push(r),
                }
                Expr::Pair(terms, name.span)
            }
            _ => {
                let op = match form.as_str() {
                    "Padding" => Op::PAD,
                    "Resize" => Op::Resize,
                    "Stride" => Op::Stride,
                    _ => Op::Modulo,
                };
                let inner = self.type_form(input, depth + 1)?;
                self.comma(input, "expected `,` before the size")?;
                let arg = self.size_atom(input, true)?;
                Expr::Op {
                    inner: Box::new(inner),
                    op,
                    op_span: name.span,
                    arg,
                    span: name.span,
                }
            }
        };
        self.punct::<Token![>]>(input, "expected `>` to close the form")?;
        Ok(expr)
    }

    /// The whole content of an escape as a mapping written `m![..]`, or `None`.
    fn escaped_mapping(&self, content: ParseStream<'_>) -> R<Option<Expr>> {
        let Some((mapping, _)) = self.written_mapping(content)? else {
            return Ok(None);
        };
        self.expect_end(content, "expected `}` after the mapping")?;
        Ok(Some(mapping))
    }

    /// A mapping written `m![..]` at the start of `input`, and the span of its brackets; `None`
    /// when `input` does not start with one.
    fn written_mapping(&self, input: ParseStream<'_>) -> R<Option<(Expr, Span)>> {
        let fork = input.fork();
        let is_m = fork
            .parse::<syn::Ident>()
            .is_ok_and(|i| i == "m" && fork.peek(Token![!]) && fork.peek2(syn::token::Bracket));
        if !is_m {
            return Ok(None);
        }
        input.parse::<syn::Ident>().map_err(|e| self.err(e))?;
        input.parse::<Token![!]>().map_err(|e| self.err(e))?;
        let (inner, delim) = group(input, |i| {
            let c;
            let b = bracketed!(c in i);
            Ok((c, b.span))
        })
        .map_err(|e| self.err(e))?;
        let mapping = self.mapping(&inner)?;
        self.expect_end(&inner, "expected `,`, `]` or a postfix operator")?;
        Ok(Some((mapping, self.span(delim.join()))))
    }

    /// The whole content of an escape as a path of two or more segments (`layouts::Slice`,
    /// `crate::a::T`), or `None`.
    fn escaped_path(&self, content: ParseStream<'_>) -> Option<Name> {
        let fork = content.fork();
        // `{ <B as KvBlock>::Keys }`: the associated mapping of `B`, as `{ B::Keys }` names it.
        if fork.peek(Token![<]) {
            fork.parse::<Token![<]>().ok()?;
            let ty = syn::Ident::parse_any(&fork).ok()?;
            fork.parse::<Token![as]>().ok()?;
            syn::Ident::parse_any(&fork).ok()?;
            while fork.peek(Token![::]) {
                fork.parse::<Token![::]>().ok()?;
                syn::Ident::parse_any(&fork).ok()?;
            }
            fork.parse::<Token![>]>().ok()?;
            fork.parse::<Token![::]>().ok()?;
            let assoc = syn::Ident::parse_any(&fork).ok()?;
            if !fork.is_empty() {
                return None;
            }
            use syn::parse::discouraged::Speculative;
            content.advance_to(&fork);
            return Some(self.joined(&self.name(&ty), &assoc));
        }
        let first = syn::Ident::parse_any(&fork).ok()?;
        let mut name = self.name(&first);
        let mut segments = 1;
        while fork.peek(Token![::]) {
            fork.parse::<Token![::]>().ok()?;
            let next = syn::Ident::parse_any(&fork).ok()?;
            name = self.joined(&name, &next);
            segments += 1;
        }
        if segments < 2 || !fork.is_empty() {
            return None;
        }
        use syn::parse::discouraged::Speculative;
        content.advance_to(&fork);
        Some(name)
    }

    fn is_primed(&self, name: &Name) -> bool {
        name.span.end > 0 && self.primes.contains(&(name.span.end as usize - 1))
    }

    fn int(&self, lit: &syn::LitInt) -> R<u64> {
        let span = self.span(lit.span());
        match lit.base10_parse::<u128>() {
            Ok(v) => u64::try_from(v).map_err(|_| {
                ParseProblem::Overflow(
                    span,
                    format!(
                        "`{}` does not fit in 64 bits (the largest size is 2^64 - 1)",
                        lit
                    ),
                )
            }),
            Err(e) => {
                let msg = e.to_string();
                if msg.contains("too large") || msg.contains("overflow") {
                    Err(ParseProblem::Overflow(
                        span,
                        format!("`{lit}` does not fit in 64 bits"),
                    ))
                } else {
                    Err(ParseProblem::Syntax(span, msg))
                }
            }
        }
    }

    /// Notation the manual writes only in prose: report it as unsupported, not as an error.
    fn check_unsupported(&self, input: ParseStream<'_>) -> R<()> {
        let notation = if input.peek(Token![@]) {
            Some("`@` (offset)")
        } else if input.peek(Token![!]) {
            Some("`!`")
        } else if input.peek(Token![*]) {
            Some("`*` (outer sum)")
        } else if input.peek(Token![:]) {
            Some("`name: size`")
        } else if input.peek(Token![+]) || input.peek(Token![-]) {
            Some("`+`/`-` arithmetic on mappings")
        } else {
            None
        };
        match notation {
            Some(n) => Err(ParseProblem::Unsupported(
                self.next_span(input),
                format!(
                    "mapping notation {n} is used by the manual only in prose; visa-lint does not evaluate it"
                ),
            )),
            None => Ok(()),
        }
    }

    fn mapping(&self, input: ParseStream<'_>) -> R<Expr> {
        if input.is_empty() {
            return Err(ParseProblem::Syntax(
                self.end_span(),
                "empty mapping: write `1` for the identity mapping".into(),
            ));
        }
        let mut terms = vec![self.term(input)?];
        while input.peek(Token![,]) {
            input.parse::<Token![,]>().map_err(|e| self.err(e))?;
            if input.is_empty() {
                break; // trailing comma
            }
            terms.push(self.term(input)?);
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            let span = terms[0].span().cover(terms[terms.len() - 1].span());
            Expr::Pair(terms, span)
        })
    }

    fn term(&self, input: ParseStream<'_>) -> R<Expr> {
        self.term_until(input, false)
    }

    /// A term; with `colon_ends`, a `:` ends it (index keys, linear-combination terms).
    fn term_until(&self, input: ParseStream<'_>, colon_ends: bool) -> R<Expr> {
        let mut e = self.atom(input)?;
        loop {
            let op = if input.peek(Token![/]) {
                Op::Stride
            } else if input.peek(Token![%]) {
                Op::Modulo
            } else if input.peek(Token![#]) {
                Op::PAD
            } else if input.peek(Token![=]) && !input.peek(Token![==]) && !input.peek(Token![=>]) {
                Op::Resize
            } else {
                if !(colon_ends && input.peek(Token![:])) {
                    self.check_unsupported(input)?;
                }
                return Ok(e);
            };
            let mut op_span = self.next_span(input);
            let _: proc_macro2::TokenTree = input.parse().map_err(|err| self.err(err))?;
            let mut op = op;
            if matches!(op, Op::Pad { .. })
                && let Some((kind, marker)) = self.pad_marker(input)
            {
                let _: proc_macro2::TokenTree = input.parse().map_err(|err| self.err(err))?;
                op = Op::Pad { kind, marked: true };
                op_span = op_span.cover(marker);
            }
            if input.is_empty() {
                return Err(ParseProblem::Syntax(
                    op_span,
                    format!("`{}` needs a size after it", op.symbol()),
                ));
            }
            let arg = self.size_primary(input)?;
            let span = e.span().cover(arg.span());
            e = Expr::Op {
                inner: Box::new(e),
                op,
                op_span,
                arg,
                span,
            };
        }
    }

    fn atom(&self, input: ParseStream<'_>) -> R<Expr> {
        if input.is_empty() {
            return Err(ParseProblem::Syntax(
                self.end_span(),
                "expected a mapping term, found end of input".into(),
            ));
        }
        if input.peek(syn::LitInt) {
            let lit: syn::LitInt = input.parse().map_err(|e| self.err(e))?;
            let span = self.span(lit.span());
            // `1` is the identity in both generations; any other `N` is furiosa-opt-std's
            // broadcast (`parser.lalrpop:78` at ebb846a), which `dialect_forms` reports for the
            // manual's library.
            return match self.int(&lit)? {
                0 => Err(ParseProblem::Syntax(
                    span,
                    "`0` is not a mapping: a broadcast `N` has at least one position".into(),
                )),
                1 => Ok(Expr::Identity(span)),
                n => Ok(Expr::Broadcast(n, span)),
            };
        }
        if input.peek(syn::Ident) {
            let ident: syn::Ident = input.parse().map_err(|e| self.err(e))?;
            return Ok(Expr::Symbol(self.name(&ident)));
        }
        if input.peek(syn::token::Bracket) {
            let (content, delim) = group(input, |i| {
                let c;
                let b = bracketed!(c in i);
                Ok((c, b.span))
            })
            .map_err(|e| self.err(e))?;
            let content = &content;
            let span = self.span(delim.join());
            let inner = self.mapping(content)?;
            self.expect_end(content, "expected `,`, `]` or a postfix operator")?;
            return Ok(Expr::Group(Box::new(inner), span));
        }
        if input.peek(syn::token::Brace) {
            let (content, delim) = group(input, |i| {
                let c;
                let b = braced!(c in i);
                Ok((c, b.span))
            })
            .map_err(|e| self.err(e))?;
            let content = &content;
            let span = self.span(delim.join());
            if content.peek(syn::Ident) && self.ends_after_one(content) {
                let ident: syn::Ident = content.parse().map_err(|e| self.err(e))?;
                return Ok(Expr::Escape(self.name(&ident), span));
            }
            // `{ layouts::Slice }`, `{ super::Tile }`: an alias named by its path.
            if let Some(name) = self.escaped_path(content) {
                return Ok(Expr::Escape(name, span));
            }
            // `{ m![J] }` (a macro's `$row:ty` given `m![J]`): that mapping, as a group.
            if let Some(inner) = self.escaped_mapping(content)? {
                return Ok(Expr::Group(Box::new(inner), span));
            }
            // `{ Padding<m![1], W> }`: a mapping written as the types `m!` expands to.
            if Self::starts_a_type_form(content) {
                let inner = self.type_form(content, 0)?;
                self.expect_end(content, "expected `}` after the mapping")?;
                return Ok(Expr::Group(Box::new(inner), span));
            }
            return Err(ParseProblem::Unsupported(
                span,
                "escapes of anything but a type alias or generic parameter name are not evaluated"
                    .into(),
            ));
        }
        if input.peek(Token![$]) {
            let dollar = self.next_span(input);
            input.parse::<Token![$]>().map_err(|e| self.err(e))?;
            if !input.peek(syn::token::Paren) {
                return Err(ParseProblem::Syntax(
                    dollar,
                    "expected `$(e1: n1, ...)`".into(),
                ));
            }
            let (content, delim) = group(input, |i| {
                let c;
                let p = parenthesized!(c in i);
                Ok((c, p.span))
            })
            .map_err(|e| self.err(e))?;
            let content = &content;
            let span = dollar.cover(self.span(delim.join()));
            let mut terms = Vec::new();
            while !content.is_empty() {
                let e = self.term_until(content, true)?;
                self.punct::<Token![:]>(
                    content,
                    "expected `:` and a coefficient after a linear-combination term",
                )?;
                let n = self.size_primary(content)?;
                terms.push((e, n));
                if content.is_empty() {
                    break;
                }
                self.comma(content, "expected `,` between linear-combination terms")?;
            }
            if terms.is_empty() {
                return Err(ParseProblem::Syntax(
                    span,
                    "a linear combination needs at least one term".into(),
                ));
            }
            return Ok(Expr::LinComb(terms, span));
        }
        if input.peek(syn::token::Paren) {
            // The vendor's grammar (furiosa-mapping's parser) groups with `( ... )` exactly as
            // with `[ ... ]`: `([A, B] # 64 % 4) = 3 # 4` resizes the grouped mapping.
            let (content, delim) = group(input, |i| {
                let c;
                let p = parenthesized!(c in i);
                Ok((c, p.span))
            })
            .map_err(|e| self.err(e))?;
            let content = &content;
            let span = self.span(delim.join());
            let inner = self.mapping(content)?;
            self.expect_end(content, "expected `,`, `)` or a postfix operator")?;
            return Ok(Expr::Group(Box::new(inner), span));
        }
        self.check_unsupported(input)?;
        Err(ParseProblem::Syntax(
            self.next_span(input),
            "expected an axis, `1`, `[ ... ]`, `( ... )`, `{ Alias }` or `$( ... )`".into(),
        ))
    }

    /// The padding-kind marker after a `#`: a brace holding only `*`, `!` or `0` (`#{!}`), and
    /// the span of the brace. Any other brace is an escaped size (`# { Out::SIZE }`), as the
    /// vendor's lexer decides it (`furiosa-mapping-macro/src/parser/lexer.rs:175-214` at
    /// ebb846a).
    fn pad_marker(&self, input: ParseStream<'_>) -> Option<(PadKind, Span)> {
        use proc_macro2::TokenTree;
        let (inside, delim, _) = input.cursor().group(proc_macro2::Delimiter::Brace)?;
        let (tt, rest) = inside.token_tree()?;
        if !rest.eof() {
            return None;
        }
        let kind = match &tt {
            TokenTree::Punct(p) if p.as_char() == '*' => PadKind::Top,
            TokenTree::Punct(p) if p.as_char() == '!' => PadKind::Bottom,
            TokenTree::Literal(l) if l.to_string() == "0" => PadKind::Zero,
            _ => return None,
        };
        Some((kind, self.span(delim.join())))
    }

    /// A size: `8`, `B::SIZE`, a parenthesised arithmetic expression, or an escaped one
    /// (`{ B::SIZE / 8 }`).
    fn size_primary(&self, input: ParseStream<'_>) -> R<SizeExpr> {
        self.size_atom(input, false)
    }

    /// A size; `escaped`: inside `{ … }`. A bare name is a constant (`{ N }`, and `# N` as the
    /// manual writes it).
    fn size_atom(&self, input: ParseStream<'_>, escaped: bool) -> R<SizeExpr> {
        if input.peek(syn::LitInt) {
            let lit: syn::LitInt = input.parse().map_err(|e| self.err(e))?;
            return Ok(SizeExpr::Lit(self.int(&lit)?, self.span(lit.span())));
        }
        if input.peek(syn::Ident::peek_any) {
            let ident = syn::Ident::parse_any(input).map_err(|e| self.err(e))?;
            let mut name = self.name(&ident);
            if input.peek(Token![::]) {
                input.parse::<Token![::]>().map_err(|e| self.err(e))?;
                let mut field = syn::Ident::parse_any(input).map_err(|e| self.err(e))?;
                // `layouts::Tile::SIZE`: the alias or axis is named by its path.
                while input.peek(Token![::]) {
                    name = self.joined(&name, &field);
                    input.parse::<Token![::]>().map_err(|e| self.err(e))?;
                    field = syn::Ident::parse_any(input).map_err(|e| self.err(e))?;
                }
                let span = name.span.cover(self.span(field.span()));
                if field == "SIZE" {
                    return Ok(SizeExpr::SizeOf(name, span));
                }
                // `# crate::config::LANES`: a constant, escaped or not (the manual writes
                // `m![1 # NUM_CHIPS]`, L1079; furiosa-opt-std needs the braces).
                return Ok(SizeExpr::Const(self.joined(&name, &field)));
            }
            return Ok(SizeExpr::Const(name));
        }
        if input.peek(syn::token::Paren) {
            let (content, delim) = group(input, |i| {
                let c;
                let p = parenthesized!(c in i);
                Ok((c, p.span))
            })
            .map_err(|e| self.err(e))?;
            let content = &content;
            let span = self.span(delim.join());
            let e = self.size_level(content, 0, escaped)?;
            self.expect_end(content, "expected `+`, `-`, `*`, `/` or `)`")?;
            return Ok(match e {
                SizeExpr::Bin(l, op, r, _) => SizeExpr::Bin(l, op, r, span),
                other => other,
            });
        }
        if input.peek(syn::token::Brace) {
            // `{ Out::SIZE / 8 }`: furiosa-opt-std's escaped size (`parser.lalrpop:95-100` at
            // ebb846a), read with the size grammar.
            let (content, delim) = group(input, |i| {
                let c;
                let b = braced!(c in i);
                Ok((c, b.span))
            })
            .map_err(|e| self.err(e))?;
            let content = &content;
            let span = self.span(delim.join());
            if content.is_empty() {
                return Err(ParseProblem::Syntax(
                    span,
                    "expected a size inside `{ }`".into(),
                ));
            }
            let e = match self.escaped_size(content) {
                Ok(e) => e,
                Err(problem) => self.escaped_rust(content).ok_or(problem)?,
            };
            return Ok(SizeExpr::Escaped(Box::new(e), span));
        }
        if input.is_empty() {
            return Err(ParseProblem::Syntax(
                self.end_span(),
                "expected a size, found end of input".into(),
            ));
        }
        Err(ParseProblem::Syntax(
            self.next_span(input),
            "expected a size: an integer, `Name::SIZE` or `( ... )`".to_string(),
        ))
    }

    /// The content of `{ … }` read with the size grammar, to its end.
    fn escaped_size(&self, content: ParseStream<'_>) -> R<SizeExpr> {
        use syn::parse::discouraged::Speculative;
        let fork = content.fork();
        let e = self.size_level(&fork, 0, true)?;
        self.expect_end(&fork, "expected `+`, `-`, `*`, `/` or `}`")?;
        content.advance_to(&fork);
        Ok(e)
    }

    /// The content of `{ … }` as any Rust constant expression the size grammar does not read
    /// (`{ RouteTable::padded_row() }`, `{ SPEC.width }`): a constant named by its text
    /// ([`escape_key`]), which the environment evaluates. `None` when it is not an expression.
    fn escaped_rust(&self, content: ParseStream<'_>) -> Option<SizeExpr> {
        let tokens: TokenStream = content.parse().ok()?;
        syn::parse2::<syn::Expr>(tokens.clone()).ok()?;
        let mut spans = tokens.clone().into_iter().map(|t| self.span(t.span()));
        let first = spans.next()?;
        let span = spans.last().map_or(first, |l| first.cover(l));
        let text = self
            .src
            .get(span.range())
            .map_or_else(|| tokens.to_string(), str::to_owned);
        Some(SizeExpr::Const(Name {
            text: escape_key(&text),
            span,
        }))
    }

    fn size_sum(&self, input: ParseStream<'_>) -> R<SizeExpr> {
        self.size_level(input, 0, false)
    }

    /// Left-associative binary size arithmetic: level 0 is `+`/`-`, level 1 is `*`/`/`.
    fn size_level(&self, input: ParseStream<'_>, level: u8, escaped: bool) -> R<SizeExpr> {
        let operand = |i| {
            if level == 0 {
                self.size_level(i, 1, escaped)
            } else {
                self.size_atom(i, escaped)
            }
        };
        let mut l = operand(input)?;
        loop {
            let op = match level {
                0 if input.peek(Token![+]) => BinOp::Add,
                0 if input.peek(Token![-]) => BinOp::Sub,
                1 if input.peek(Token![*]) => BinOp::Mul,
                1 if input.peek(Token![/]) => BinOp::Div,
                _ => return Ok(l),
            };
            let _: proc_macro2::TokenTree = input.parse().map_err(|e| self.err(e))?;
            let r = operand(input)?;
            let span = l.span().cover(r.span());
            l = SizeExpr::Bin(Box::new(l), op, Box::new(r), span);
        }
    }

    fn axis_decl(&self, input: ParseStream<'_>) -> R<AxisDecl> {
        if !input.peek(syn::Ident) {
            if input.is_empty() {
                return Err(ParseProblem::Syntax(
                    self.end_span(),
                    "expected an axis name".into(),
                ));
            }
            return Err(ParseProblem::Syntax(
                self.next_span(input),
                "expected an axis name".into(),
            ));
        }
        let ident: syn::Ident = input.parse().map_err(|e| self.err(e))?;
        let name = self.name(&ident);
        self.punct::<Token![=]>(
            input,
            &format!("expected `=` and a size after `{}`", name.text),
        )?;
        if self.is_primed(&name) {
            let base: syn::Ident = input.parse().map_err(|e| self.err(e))?;
            let base = self.name(&base);
            self.punct::<Token![-]>(input, "a skewed axis is declared as `B' = B - A`")?;
            let minus: syn::Ident = input.parse().map_err(|e| self.err(e))?;
            let minus = self.name(&minus);
            let span = name.span.cover(minus.span);
            return Ok(AxisDecl {
                name,
                def: AxisDef::Skew { base, minus },
                span,
            });
        }
        let size = if input.peek(syn::token::Paren) {
            self.size_primary(input)?
        } else {
            self.size_sum(input)?
        };
        let span = name.span.cover(size.span());
        Ok(AxisDecl {
            name,
            def: AxisDef::Size(size),
            span,
        })
    }
}

/// The name an escaped Rust expression (`{ RouteTable::padded_row() }`) is known by in a
/// scope's constants: its text without whitespace, as written in the mapping or read from the
/// syntax tree.
pub fn escape_key(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mapping printed back (`Display for Expr`) parses to the same expression, and
    /// printing that again gives the same text (an edit rewrites part of a mapping and prints
    /// the rest).
    #[test]
    fn a_printed_mapping_reads_back_the_same() {
        for text in [
            "1 # 32, A",
            "[B, A] # 64 / 8",
            "A / 8 % 4, B #{!} 16, 1 #{0} 2",
            "{ Rows } = 2 #{*} 8",
            "$(A: 4, B: 1)",
            "A # (B::SIZE * 2), C % { N }",
        ] {
            let Ok(e) = parse_mapping(text) else {
                panic!("{text} does not parse");
            };
            let printed = e.to_string();
            let Ok(again) = parse_mapping(&printed) else {
                panic!("{printed} (printed from {text}) does not parse");
            };
            assert_eq!(again.to_string(), printed, "{text}");
        }
    }

    fn syntax_at(body: &str) -> (String, String) {
        match parse_mapping(body) {
            Err(ParseProblem::Syntax(s, m)) => (body[s.range()].to_string(), m),
            other => panic!("expected a syntax error for {body:?}, got {other:?}"),
        }
    }

    #[test]
    fn postfix_operators_apply_left_to_right() {
        // `R # 32 / 8` pads, then strides (api.md §1.2, manual L5482).
        let e = parse_mapping("R # 32 / 8").unwrap();
        let Expr::Op {
            inner,
            op: Op::Stride,
            ..
        } = e
        else {
            panic!("{e:?}")
        };
        assert!(matches!(*inner, Expr::Op { op: Op::PAD, .. }));
    }

    #[test]
    fn pairs_groups_escapes_and_identity() {
        let e = parse_mapping("[{ A }, { B }] / B::SIZE, 1 # 2, T0").unwrap();
        let Expr::Pair(terms, _) = e else { panic!() };
        assert_eq!(terms.len(), 3);
        assert!(matches!(&terms[0], Expr::Op { arg: SizeExpr::SizeOf(n, _), .. } if n.text == "B"));
        assert!(matches!(&terms[2], Expr::Symbol(n) if n.text == "T0"));
    }

    #[test]
    fn parentheses_group_like_brackets() {
        // The vendor's mapping grammar reads `( ... )` and `[ ... ]` alike; its examples write
        // `([A, B] # 64 % 4) = 3 # 4` (a resize of a grouped, padded mapping).
        let e = parse_mapping("[A, B] # 64 / 4 % 2, ([A, B] # 64 % 4) = 3 # 4").unwrap();
        let Expr::Pair(terms, _) = e else {
            panic!("{e:?}")
        };
        let Expr::Op {
            inner, op: Op::PAD, ..
        } = &terms[1]
        else {
            panic!("{:?}", terms[1])
        };
        let Expr::Op {
            inner,
            op: Op::Resize,
            ..
        } = &**inner
        else {
            panic!("{inner:?}")
        };
        assert!(
            matches!(&**inner, Expr::Group(g, _) if matches!(&**g, Expr::Op { op: Op::Modulo, .. }))
        );
        for (grouped, plain) in [
            ("([A, B] # 64 % 4) = 3 # 4", "[A, B] # 64 % 4 = 3 # 4"),
            ("(A, B) # 64 / 2", "[A, B] # 64 / 2"),
            ("((A)), B", "A, B"),
        ] {
            let (g, p) = (
                crate::mapping::evaluate("A = 9, B = 7", grouped),
                crate::mapping::evaluate("A = 9, B = 7", plain),
            );
            assert!(g.problems.is_empty(), "{grouped}: {:?}", g.problems);
            assert_eq!(g.layout, p.layout, "{grouped}");
        }
        assert_eq!(syntax_at("(A, B").0, "(");
        assert_eq!(syntax_at("()").0, ")");
    }

    #[test]
    fn errors_point_at_the_offending_token() {
        assert_eq!(syntax_at("A / , B").0, ",");
        assert_eq!(syntax_at("A B").0, "B");
        assert_eq!(syntax_at("A, 0").0, "0");
        assert_eq!(syntax_at("(A B)").0, "B");
        assert_eq!(syntax_at("A /").0, "/");
        assert_eq!(syntax_at("[A, B").0, "[");
    }

    #[test]
    fn prose_notations_are_unsupported_not_errors() {
        for (body, at) in [
            ("A @ 1024", "@"),
            ("A!4", "!"),
            ("B * A", "*"),
            ("I: 2, A", ":"),
        ] {
            match parse_mapping(body) {
                Err(ParseProblem::Unsupported(s, _)) => assert_eq!(&body[s.range()], at, "{body}"),
                other => panic!("{body}: {other:?}"),
            }
        }
    }

    #[test]
    fn primed_axes_and_skew_declarations() {
        let (decls, problems) = parse_axes("A = 4, B = 4, B' = B - A");
        assert!(problems.is_empty());
        assert_eq!(decls[2].name.text, "B'");
        assert!(
            matches!(&decls[2].def, AxisDef::Skew { base, minus } if base.text == "B" && minus.text == "A")
        );
        let e = parse_mapping("A, B' = 4").unwrap();
        let Expr::Pair(terms, _) = e else { panic!() };
        assert!(
            matches!(&terms[1], Expr::Op { inner, op: Op::Resize, .. } if matches!(&**inner, Expr::Symbol(n) if n.text == "B'"))
        );
    }

    /// A prime after a multi-byte letter is reported over the whole letter (fuzz: `"P, é'M`).
    #[test]
    fn a_prime_after_a_multi_byte_letter_points_at_a_character() {
        let text = "\"P, é'M";
        let Err(ParseProblem::Unsupported(span, _)) = parse_mapping(text) else {
            panic!("expected the skew problem")
        };
        assert_eq!(text.get(span.range()), Some("é'"));
    }

    #[test]
    fn huge_literals_overflow() {
        assert!(matches!(
            parse_mapping("A # 18446744073709551616"),
            Err(ParseProblem::Overflow(..))
        ));
        assert!(parse_axes("A = 18446744073709551615").1.is_empty());
        let (decls, problems) = parse_axes("A = 18446744073709551616, B = 4");
        assert_eq!((decls.len(), problems.len()), (1, 1));
    }

    #[test]
    fn index_literals() {
        let entries = parse_index("B / 64: 3, A: i + 1").unwrap();
        assert_eq!(entries[0].value, Some(3));
        assert_eq!(entries[1].value, None);
        assert!(parse_index("").unwrap().is_empty());
    }

    #[test]
    fn errors_inside_a_multibyte_character_cover_it() {
        // Found by tests/fuzz.rs: `…` is not a Rust token, and the error pointed at its
        // first byte only.
        let body = "…A # 4, B # 64";
        match parse_mapping(body) {
            Err(ParseProblem::Syntax(s, _)) => assert_eq!(&body[s.range()], "…"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn linear_combination() {
        let e = parse_mapping("$(N: 1, F: 2)").unwrap();
        assert!(matches!(e, Expr::LinComb(ref t, _) if t.len() == 2));
    }

    #[test]
    fn a_bare_number_is_a_broadcast_and_one_the_identity() {
        let Ok(Expr::Pair(terms, _)) = parse_mapping("Feat, 2") else {
            panic!("pair")
        };
        assert!(matches!(terms[1], Expr::Broadcast(2, s) if s == Span::new(6, 7)));
        assert!(matches!(parse_mapping("1"), Ok(Expr::Identity(_))));
        assert!(matches!(parse_mapping("4"), Ok(Expr::Broadcast(4, _))));
        assert_eq!(syntax_at("A, 0").0, "0");
    }

    #[test]
    fn padding_kinds_are_read_from_their_marker() {
        let kind_of = |body: &str| match parse_mapping(body) {
            Ok(Expr::Op {
                op: Op::Pad { kind, marked },
                op_span,
                arg,
                ..
            }) => (
                kind,
                marked,
                body[op_span.range()].to_string(),
                arg.literal(),
            ),
            other => panic!("{body}: {other:?}"),
        };
        assert_eq!(kind_of("A # 8"), (PadKind::Top, false, "#".into(), Some(8)));
        assert_eq!(
            kind_of("A #{*} 8"),
            (PadKind::Top, true, "#{*}".into(), Some(8))
        );
        assert_eq!(
            kind_of("A #{!} 8"),
            (PadKind::Bottom, true, "#{!}".into(), Some(8))
        );
        assert_eq!(
            kind_of("A # { 0 } 8"),
            (PadKind::Zero, true, "# { 0 }".into(), Some(8))
        );
        // A brace holding anything else is an escaped size, as the vendor's lexer decides.
        assert_eq!(
            kind_of("A # {8}"),
            (PadKind::Top, false, "#".into(), Some(8))
        );
        let Ok(Expr::Pair(terms, _)) = parse_mapping("1 #{!} 32, A") else {
            panic!("pair")
        };
        assert!(matches!(
            terms[0],
            Expr::Op {
                op: Op::Pad {
                    kind: PadKind::Bottom,
                    ..
                },
                ..
            }
        ));
        assert_eq!(syntax_at("A #{!}").0, "#{!}");
    }

    #[test]
    fn escaped_sizes_read_the_size_grammar_and_bare_constants() {
        let arg = |body: &str| match parse_mapping(body) {
            Ok(Expr::Op { arg, .. }) => arg,
            other => panic!("{body}: {other:?}"),
        };
        let SizeExpr::Escaped(inner, span) = arg("A # { B::SIZE / 8 }") else {
            panic!("escaped")
        };
        assert_eq!(span, Span::new(4, 19));
        assert!(matches!(*inner, SizeExpr::Bin(_, BinOp::Div, _, _)));
        assert!(
            matches!(arg("B / {N}"), SizeExpr::Escaped(n, _) if matches!(&*n, SizeExpr::Const(c) if c.text == "N"))
        );
        assert!(
            matches!(arg("B / { consts::N * 2 }"), SizeExpr::Escaped(n, _) if matches!(&*n, SizeExpr::Bin(c, ..) if matches!(&**c, SizeExpr::Const(c) if c.text == "consts::N")))
        );
        // Outside braces a bare name is a constant too, as the manual writes
        // `m![1 # NUM_CHIPS]` (L1079); furiosa-opt-std refuses the form (`dialect_forms`).
        assert!(matches!(arg("B / N"), SizeExpr::Const(c) if c.text == "N"));
        assert!(
            matches!(arg("B % crate::config::LANES"), SizeExpr::Const(c) if c.text == "crate::config::LANES")
        );
        assert_eq!(syntax_at("B / {}").0, "{}");
        assert_eq!(syntax_at("B / { 8 8 }").0, "8");
        // In atom position a brace is still the mapping escape.
        assert!(
            matches!(parse_mapping("{ T } / 2"), Ok(Expr::Op { inner, .. }) if matches!(*inner, Expr::Escape(..)))
        );
    }

    #[test]
    fn an_escaped_rust_expression_is_a_constant_named_by_its_text() {
        let arg = |body: &str| match parse_mapping(body) {
            Ok(Expr::Op { arg, .. }) => arg,
            other => panic!("{body}: {other:?}"),
        };
        let SizeExpr::Escaped(inner, _) = arg("Z # { RouteTable::padded_row( ) }") else {
            panic!("escaped")
        };
        let SizeExpr::Const(name) = *inner else {
            panic!("a constant: {inner:?}")
        };
        assert_eq!(name.text, "RouteTable::padded_row()");
        assert_eq!(name.span, Span::new(6, 31));
        assert!(
            matches!(arg("Z # { SPEC.width }"), SizeExpr::Escaped(n, _) if matches!(&*n, SizeExpr::Const(c) if c.text == "SPEC.width"))
        );
        // Not a Rust expression either: the size grammar's error stands.
        assert_eq!(syntax_at("B / { 8 8 }").0, "8");
    }

    /// A macro's `$row:ty` given `m![J]` writes `m![{ m![J] }, D]`: the inner mapping.
    #[test]
    fn an_escaped_type_form_is_the_mapping_it_spells() {
        // `{ Padding<m![1], W> }` (a helper's const generic): `[1] # W`.
        let e = parse_mapping("S % 2, { Padding<m![1], W> }").unwrap();
        let Expr::Pair(terms, _) = e else {
            panic!("a pair: {e:?}")
        };
        let Expr::Group(inner, _) = &terms[1] else {
            panic!("a group: {:?}", terms[1])
        };
        assert!(
            matches!(&**inner, Expr::Op { op: Op::Pad { .. }, arg: SizeExpr::Const(n), .. } if n.text == "W"),
            "{inner:?}"
        );
        let e = parse_mapping("{ Pair<Symbol<A>, Modulo<Symbol<B>, 8>> }").unwrap();
        assert!(
            matches!(&e, Expr::Group(p, _) if matches!(&**p, Expr::Pair(t, _) if t.len() == 2)),
            "{e:?}"
        );
    }

    #[test]
    fn an_escaped_mapping_is_its_mapping() {
        let Ok(Expr::Pair(terms, _)) = parse_mapping("{ m![J % 4] }, D") else {
            panic!("a pair")
        };
        assert!(matches!(&terms[0], Expr::Group(inner, _) if matches!(**inner, Expr::Op { .. })));
    }

    #[test]
    fn trailing_commas_are_accepted_in_mappings_and_indices() {
        assert!(matches!(parse_mapping("A, B,"), Ok(Expr::Pair(ref t, _)) if t.len() == 2));
        assert!(matches!(parse_mapping("[A, B,] # 64"), Ok(Expr::Op { .. })));
        let entries = parse_index("A / { N } = 8: 0, B #{!} 16: 3,").unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[1].value, Some(3));
        assert!(matches!(
            &entries[0].key,
            Expr::Op { inner, .. } if matches!(&**inner, Expr::Op { arg: SizeExpr::Escaped(..), .. })
        ));
    }
}
