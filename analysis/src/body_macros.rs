//! `macro_rules!` macros invoked inside a function body (`dot_chain!(ctx, q, &k, T, P, 0x100)`):
//! the compiler expands them before it traces the kernel, so a chain a macro writes is checked
//! like a written one. The function is analysed with each invocation of a macro of its crate
//! replaced by the macro's expansion (in a block), and what that analysis finds is placed back
//! in the file: a finding inside an expansion at its invocation, naming the macro (no edit of
//! the file's text can fix it there); any other shifted back past the expansions before it.
//!
//! Which macro a name invokes follows the crate, not Rust's textual scope: a name defined by
//! exactly one `macro_rules!` of the crate is that macro. A name defined twice (or not by the
//! crate) is left unexpanded, as before: the model's "not followed" note (VL-009) then covers
//! only an engine chain written in its arguments.

use crate::diagnostic::{Diagnostic, Span};
use crate::syntax::GreenKey;
use crate::syntax::macros::{self, MacroDef};
use ra_ap_syntax::{AstNode, SyntaxKind, SyntaxNode, ast};

/// The library's macros (types and declarations), never the crate's.
const LIBRARY_MACROS: &[&str] = &["m", "i", "axes"];

/// The macros `root` (a function) invokes as expressions or statements in its body, but the
/// library's: the crate's macros among them are expanded.
pub fn invoked(root: &SyntaxNode) -> Vec<String> {
    let mut names: Vec<String> = crate::syntax::nodes_of_kinds(root, &[SyntaxKind::MACRO_EXPR])
        .into_iter()
        .filter_map(|n| {
            let call = ast::MacroExpr::cast(n)?.macro_call()?;
            Some(call.path()?.segment()?.to_string())
        })
        .filter(|n| !LIBRARY_MACROS.contains(&n.as_str()))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The `macro_rules!` definitions of a crate (see [`crate::db::crate_macros`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CrateMacros {
    /// Each name with its definition's syntax; `None` for a name the crate defines more than
    /// once (see the module's docs).
    pub defs: std::sync::Arc<[(String, Option<GreenKey>)]>,
    /// Where each definition defined once is written: its file and offset there.
    pub places: std::collections::HashMap<String, (std::path::PathBuf, u32)>,
}

impl CrateMacros {
    /// The definition of `name` where it is written: its file, its offset there and its text.
    pub fn written(&self, name: &str) -> Option<(std::path::PathBuf, u32, String)> {
        let (path, at) = self.places.get(name)?;
        let green = self.defs.iter().find(|(n, _)| n == name)?.1.as_ref()?;
        let text = crate::syntax::node_text(&ra_ap_syntax::SyntaxNode::new_root(green.0.clone()));
        Some((path.clone(), *at, text))
    }
}

/// One invocation replaced by its expansion: where it is in the function's text, where its
/// expansion is in the expanded text, and the macro's name.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Replaced {
    call: Span,
    expansion: Span,
    name: String,
    /// The invocation's arguments (its token tree), where a fix may edit what an argument
    /// gives the expansion.
    args: Span,
    /// Each fragment substituted in the expansion: where it is in the expanded text, and where
    /// the argument that gave it is written.
    substituted: Vec<(Span, Span)>,
}

/// A function with the crate's macro invocations in its body expanded: its syntax, and how
/// to place its findings back in the function as written.
pub struct Expanded {
    pub green: GreenKey,
    replaced: Vec<Replaced>,
    /// The function's text as written, and expanded.
    written: String,
    expanded: String,
}

/// `f` (a function's syntax, rooted at its start) with each invocation in its body of a macro
/// in `defs` (see [`crate::db::crate_macros`]) expanded; `None` when it invokes none (or
/// none expands).
pub fn expand_fn(f: &GreenKey, defs: &[(String, Option<GreenKey>)]) -> Option<Expanded> {
    if defs.is_empty() {
        return None;
    }
    let root = SyntaxNode::new_root(f.0.clone());
    let text = root.text().to_string();
    if !text.contains('!') {
        return None;
    }
    let calls = crate::syntax::nodes_of_kinds(&root, &[SyntaxKind::MACRO_EXPR]);
    let mut edits: Vec<(Span, macros::Expansion, String, Span)> = Vec::new();
    for node in calls {
        let Some(call) = ast::MacroExpr::cast(node).and_then(|m| m.macro_call()) else {
            continue;
        };
        // Only the outermost invocations: one inside another's arguments goes with it.
        let range = call.syntax().text_range();
        let span = Span::new(usize::from(range.start()), usize::from(range.end()));
        if edits
            .iter()
            .any(|(s, ..)| s.start <= span.start && span.end <= s.end)
        {
            continue;
        }
        let Some(name) = call.path().and_then(|p| p.segment()).map(|s| s.to_string()) else {
            continue;
        };
        if LIBRARY_MACROS.contains(&name.as_str()) {
            continue;
        }
        let Some(def) = defs
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, g)| g.as_ref())
            .and_then(|g| macros::definition(&g.0))
        else {
            continue;
        };
        let Some(tt) = call.token_tree() else {
            continue;
        };
        let r = tt.syntax().text_range();
        let args = Span::new(usize::from(r.start()), usize::from(r.end()));
        if let Some(expansion) = expansion_of(&def, &call) {
            edits.push((span, expansion, name, args));
        }
    }
    if edits.is_empty() {
        return None;
    }
    edits.sort_by_key(|(s, ..)| s.start);
    let mut out = String::with_capacity(text.len());
    let mut replaced = Vec::new();
    let mut at = 0;
    for (span, expansion, name, args) in edits {
        out.push_str(text.get(at..span.start as usize)?);
        let start = out.len();
        out.push_str("{ ");
        let body = out.len();
        out.push_str(&expansion.text);
        out.push_str(" }");
        let substituted = expansion
            .substituted
            .iter()
            .map(|s| {
                let inside = Span::new(body + s.at.0, body + s.at.1);
                (inside, Span::new(s.from.0 as usize, s.from.1 as usize))
            })
            .collect();
        replaced.push(Replaced {
            call: span,
            expansion: Span::new(start, out.len()),
            name,
            args,
            substituted,
        });
        at = span.end as usize;
    }
    out.push_str(text.get(at..)?);
    let parsed = ast::SourceFile::parse(&out, ra_ap_syntax::Edition::Edition2024).tree();
    let fun = parsed.syntax().descendants().find_map(ast::Fn::cast)?;
    // Rooted at the function, as every function's analysis is (its start is 0 here too).
    (fun.syntax().text_range().start() == 0.into()).then_some(())?;
    Some(Expanded {
        green: GreenKey(fun.syntax().green().to_owned()),
        replaced,
        written: text,
        expanded: out,
    })
}

/// Where `needle` occurs in `haystack` as whole tokens (not inside a longer name).
fn occurrences<'a>(haystack: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    haystack
        .match_indices(needle)
        .filter(move |(at, _)| {
            !word(haystack[..*at].chars().next_back())
                && !word(haystack[at + needle.len()..].chars().next())
        })
        .map(|(at, _)| at)
}

/// Where `needle` occurs in `haystack` as whole tokens (not inside a longer name), when it
/// occurs exactly once.
pub(crate) fn only_occurrence(haystack: &str, needle: &str) -> Option<usize> {
    let mut found = occurrences(haystack, needle);
    let at = found.next()?;
    found.next().is_none().then_some(at)
}

/// What `call` of `def` expands to, when one of its rules matches.
fn expansion_of(def: &MacroDef, call: &ast::MacroCall) -> Option<macros::Expansion> {
    def.expand(&call.token_tree()?).ok()
}

impl Expanded {
    /// A finding of the expanded function, placed in the function as written (`macros`: where
    /// the crate's macros are defined, for a fix of a macro's own text).
    pub fn place(&self, d: &Diagnostic, macros: &CrateMacros) -> Diagnostic {
        if let Some(r) = self.within(d.span) {
            let mut d = d.clone();
            // At the argument that gave the text the finding is about (`m![H % 8 # 8]` of
            // `emit_bf16!(.., m![H % 8 # 8], ..)`), else at the invocation.
            let argument = self.in_fragment(d.span, r);
            d.span = argument.unwrap_or(r.call);
            d.related.clear();
            let fixes = std::mem::take(&mut d.fixes);
            d.fixes = fixes
                .into_iter()
                .filter_map(|f| {
                    self.in_arguments(f.clone(), r)
                        .or_else(|| self.in_definition(f, r, macros))
                })
                .collect();
            let expansion = match argument {
                Some(_) => format!("the expansion of the `{}!` invocation given this", r.name),
                None => format!("the expansion of this `{}!` invocation", r.name),
            };
            d.message = format!("{} (in {expansion})", d.message);
            return d;
        }
        let mut d = d.clone();
        // A fix or a related place inside an expansion has no text here.
        d.fixes
            .retain(|f| f.edits.iter().all(|e| self.within(e.span).is_none()));
        d.related.retain(|r| self.within(r.span).is_none());
        d.relocated(|s| self.shift_back(s))
    }

    /// `fix`, made in the expansion of `r`, as an edit of the invocation's arguments: each
    /// edit in the expansion replaces text an argument gave it (`Flit16` of `$opkt`), found
    /// once among the arguments (edits outside it stay where they are). `None` when an edit
    /// touches the macro's own text.
    fn in_arguments(
        &self,
        mut fix: crate::diagnostic::Fix,
        r: &Replaced,
    ) -> Option<crate::diagnostic::Fix> {
        if !fix.other_files.is_empty() || !fix.alias_pad.is_empty() {
            return None;
        }
        let args = self
            .written
            .get(r.args.start as usize..r.args.end as usize)?;
        for e in &mut fix.edits {
            // An edit of the function's own text (the `let` annotation a padding also edits).
            if self.within(e.span).is_none() {
                e.span = self.shift_back(e.span);
                continue;
            }
            let inside = r.expansion.start <= e.span.start && e.span.end <= r.expansion.end;
            let old = self
                .expanded
                .get(e.span.start as usize..e.span.end as usize)?
                .trim();
            if !inside {
                return None;
            }
            // An insertion (`# 104` after `T`) has no text to find: only its fragment places it.
            e.span = match self.in_fragment(e.span, r) {
                Some(at) => at,
                None if !old.is_empty() => {
                    let at = r.args.start as usize + only_occurrence(args, old)?;
                    Span::new(at, at + old.len())
                }
                None => return None,
            };
        }
        Some(fix)
    }

    /// `fix`, made in the expansion of `r`, as an edit of the macro's own text, which every
    /// invocation shares: no edit in text an argument gave, and each edit's text placed in the
    /// definition at the same rank among its occurrences there as in the expansion. Checked
    /// like a helper's own text ([`crate::fix_check`]): offered only when the crate analysed
    /// with it gains no error.
    fn in_definition(
        &self,
        fix: crate::diagnostic::Fix,
        r: &Replaced,
        macros: &CrateMacros,
    ) -> Option<crate::diagnostic::Fix> {
        if fix.edits.is_empty() || !fix.other_files.is_empty() || !fix.alias_pad.is_empty() {
            return None;
        }
        let (path, at, def) = macros.written(&r.name)?;
        let mut edits = Vec::new();
        for e in &fix.edits {
            let inside = r.expansion.start <= e.span.start && e.span.end <= r.expansion.end;
            let from_argument = r
                .substituted
                .iter()
                .any(|(s, _)| s.start < e.span.end && e.span.start < s.end);
            if !inside || from_argument {
                return None;
            }
            let old = self.expanded.get(e.span.range())?.trim();
            if old.is_empty() {
                return None;
            }
            // The template's text occurs as often in the definition as in the expansion (but
            // what arguments gave): the edit's is the one at the same rank.
            let expansion = self.expanded.get(r.expansion.range())?;
            let ours = occurrences(expansion, old)
                .filter(|&k| {
                    let k = r.expansion.start as usize + k;
                    !r.substituted
                        .iter()
                        .any(|(s, _)| (s.start as usize) < k + old.len() && k < s.end as usize)
                })
                .collect::<Vec<usize>>();
            let rank = ours
                .iter()
                .position(|&k| r.expansion.start as usize + k == e.span.start as usize)?;
            let theirs: Vec<usize> = occurrences(&def, old).collect();
            if theirs.len() != ours.len() {
                return None;
            }
            let start = at as usize + theirs[rank];
            edits.push(crate::diagnostic::Edit {
                span: Span::new(start, start + old.len()),
                new_text: e.new_text.clone(),
            });
        }
        Some(crate::diagnostic::Fix {
            title: format!("{} in `{}!`, for every invocation", fix.title, r.name),
            edits: Vec::new(),
            other_files: vec![crate::diagnostic::FileEdits { path, edits }],
            edits_helper: true,
            copies_helper: false,
            edits_attribute: false,
            ..fix
        })
    }

    /// `edit` (a span of the expansion of `r`) where the argument that gave that text is
    /// written: inside a fragment transcribed as written, at the same place in the argument; a
    /// whole fragment, the whole argument.
    fn in_fragment(&self, edit: Span, r: &Replaced) -> Option<Span> {
        let (inside, from) = r
            .substituted
            .iter()
            .find(|(at, _)| at.start <= edit.start && edit.end <= at.end)?;
        if edit == *inside {
            return Some(*from);
        }
        let given = self.expanded.get(inside.range())?;
        let written = self.written.get(from.range())?;
        (given == written).then(|| {
            Span::new(
                (from.start + edit.start - inside.start) as usize,
                (from.start + edit.end - inside.start) as usize,
            )
        })
    }

    /// The invocation whose expansion holds (or overlaps) `s`.
    fn within(&self, s: Span) -> Option<&Replaced> {
        self.replaced
            .iter()
            .find(|r| s.start < r.expansion.end && r.expansion.start < s.end.max(s.start + 1))
    }

    /// `s` (outside every expansion) in the function as written.
    fn shift_back(&self, s: Span) -> Span {
        let before = |at: u32| -> i64 {
            self.replaced
                .iter()
                .filter(|r| r.expansion.end <= at)
                .map(|r| {
                    i64::from(r.expansion.end - r.expansion.start)
                        - i64::from(r.call.end - r.call.start)
                })
                .sum()
        };
        let back = |at: u32| u32::try_from(i64::from(at) - before(at)).unwrap_or(at);
        Span::new(back(s.start) as usize, back(s.end) as usize)
    }
}

#[cfg(test)]
mod tests {
    use crate::diagnostic::Diagnostic;

    /// A kernel whose chain a crate macro writes (`$pk` its collect packet), then commits at
    /// `address` after the invocation.
    fn kernel(pk: &str, address: &str, twice: bool) -> String {
        let again = if twice {
            "macro_rules! flits { ($s:expr, $pk:ty) => { $s }; }\n"
        } else {
            ""
        };
        format!(
            "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n\
             macro_rules! flits {{\n\
             ($s:expr, $pk:ty) => {{ $s.fetch::<f32, m![1], m![A % 8]>().collect::<m![1], $pk>() }};\n}}\n\
             {again}\
             #[device(chip = 1)]\n\
             pub fn k(ctx: &mut Context, x: &DmTensor<f32, m![1], m![1 # 2], m![A / 8], m![A % 8]>) {{\n\
             let s = flits!(ctx.main.begin(x.view()), {pk});\n\
             let _out: DmTensor<f32, m![1], m![1 # 2], m![A / 8], m![A % 8]> = s.commit({address});\n}}\n"
        )
    }

    fn codes(text: &str) -> Vec<Diagnostic> {
        crate::check_text(text)
            .into_iter()
            .filter(|d| d.code() != "VL-009")
            .collect()
    }

    /// The collect the macro writes is checked, and its finding is placed at the invocation's
    /// argument that gave the packet (`$pk`); a finding about the macro's own text is placed at
    /// the invocation.
    #[test]
    fn a_chain_a_macro_writes_is_checked_at_the_invocation() {
        let text = kernel("m![A % 8 # 4]", "0", false);
        let found = codes(&text);
        let col: Vec<&Diagnostic> = found.iter().filter(|d| d.code() == "COL-001").collect();
        assert_eq!(col.len(), 1, "{found:#?}");
        let at = &text[col[0].span.start as usize..col[0].span.end as usize];
        assert_eq!(at, "m![A % 8 # 4]");
        assert!(
            col[0]
                .message
                .ends_with("(in the expansion of the `flits!` invocation given this)"),
            "{}",
            col[0].message
        );
        assert!(codes(&kernel("m![A % 8]", "0", false)).is_empty());
        // The packet is the invocation's argument: the fix pads it there.
        let fixed = crate::rules::fix_testing::assert_fix_clears(&text, "COL-001");
        assert!(
            fixed.contains("flits!(ctx.main.begin(x.view()), m![A % 8 # 8]);"),
            "{fixed}"
        );
    }

    /// A finding after the invocation keeps its place in the text as written, fix included.
    #[test]
    fn a_finding_after_the_invocation_stays_where_it_is_written() {
        let text = kernel("m![A % 8]", "0x1001", false);
        let found = codes(&text);
        let aln: Vec<&Diagnostic> = found.iter().filter(|d| d.code() == "ALN-001").collect();
        assert_eq!(aln.len(), 1, "{found:#?}");
        assert_eq!(
            &text[aln[0].span.start as usize..aln[0].span.end as usize],
            "0x1001"
        );
        // The fix rounds the address where it is written (ALN-008 then asks for 8 bytes).
        let fixed = crate::rules::fix_testing::apply(&text, "ALN-001", 0);
        assert!(
            fixed
                .as_deref()
                .is_some_and(|f| f.contains("= s.commit(0x1004);")),
            "{fixed:?}"
        );
    }

    /// A name the crate defines twice is not guessed at.
    #[test]
    fn a_macro_defined_twice_is_not_expanded() {
        let found = codes(&kernel("m![A % 8 # 4]", "0", true));
        assert!(found.iter().all(|d| d.code() != "COL-001"), "{found:#?}");
    }

    /// Two arguments give the same text (`m![G # 4], m![G # 4]`): the fix of the one the
    /// widen reads edits that argument, found by where the expansion substituted it.
    #[test]
    fn a_fix_edits_the_argument_the_fragment_came_from() {
        let text = "use furiosa_visa_std::prelude::*;\naxes![N = 4096, G = 4];\n\
             macro_rules! way4 {\n\
             ($t:expr, $p4:ty, $p8:ty) => { $t.vector_trim_way4::<$p4>()\n\
             .vector_fp_unary(FpUnaryOp::Sigmoid).vector_pad_way8::<$p8>() };\n}\n\
             #[device(chip = 1)]\n\
             pub fn k(ctx: &mut Context, g: &DmTensor<f32, m![1], m![1 # 2], m![N / 16], m![N % 16, G]>) {\n\
             let t = ctx.main.begin(g.view()).fetch::<f32, m![N % 16], m![G]>()\n\
             .collect::<m![N % 16], m![G # 8]>().vector_init()\n\
             .vector_intra_slice_branch(BranchMode::Unconditional);\n\
             let _out: DmTensor<f32, m![1], m![1 # 2], m![N / 16], m![N % 16, G]> =\n\
             way4!(t, m![G # 4], m![G # 4]).vector_final().commit(0x1000);\n}\n";
        let found = codes(text);
        assert!(found.iter().any(|d| d.code() == "VEC-006"), "{found:#?}");
        let fixed = crate::rules::fix_testing::assert_fix_clears(text, "VEC-006");
        assert!(fixed.contains("way4!(t, m![G # 4], m![G # 8])"), "{fixed}");
    }
}
