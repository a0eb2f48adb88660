//! Diagnostics as values: what every rule, the parser and the mapping engine report.
//!
//! Spans are byte ranges into the text the analysis was given (a whole file, or the
//! command-line string of `visa-lint eval`). Rendering to lines and columns happens at the
//! edge (CLI, language server) through [`LineIndex`].

pub use crate::rule::{Rule, Severity};

/// A half-open byte range `start..end` into the analysed text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Span {
            start: clamp(start),
            end: clamp(end.max(start)),
        }
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// This span moved right by `by` bytes (used to lift spans of a macro body into the file).
    pub fn shift(self, by: u32) -> Span {
        Span {
            start: self.start.saturating_add(by),
            end: self.end.saturating_add(by),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One text edit of a fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub new_text: String,
}

impl Edit {
    /// Replaces the bytes `start..end` by `new_text`.
    pub fn replace(start: usize, end: usize, new_text: impl Into<String>) -> Edit {
        Edit {
            span: Span::new(start, end),
            new_text: new_text.into(),
        }
    }
}

/// A mechanical fix a user can apply (`--fix`, LSP code action).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    /// Safe fixes keep the kernel's meaning apart from the reported problem; `--fix` applies only those.
    pub safe: bool,
    /// Edits in the diagnostic's own file.
    pub edits: Vec<Edit>,
    /// Edits in other files of the crate (the definition of an alias another module declares).
    pub other_files: Vec<FileEdits>,
    /// It edits the definition of an alias, so every use of the alias changes: unsafe until
    /// the crate analysed with it shows no new error (see [`crate::fix_check`]).
    pub edits_definition: bool,
    /// It edits a helper function's own text, which every call of the helper shares: offered
    /// only when the crate analysed with it gains no error ([`crate::fix_check`]).
    pub edits_helper: bool,
    /// It gives the call its own copy of a helper, with the fix made in the copy
    /// ([`crate::own_copy`]): offered only when no other fix of the diagnostic is clean.
    pub copies_helper: bool,
    /// It edits the `#[device]` attribute of the kernel the diagnostic is reported in (where
    /// the kernel runs), away from the mapping the diagnostic points at; never safe.
    pub edits_attribute: bool,
    /// A padding the rule could not write where it points (a mapping alias named inside a
    /// tensor type alias): `edits` is empty until [`crate::alias_fix`] writes it at the alias's
    /// definition, or drops the fix when it finds none. Only the engine's raw diagnostics carry
    /// one; what the surfaces get never does.
    pub alias_pad: Vec<AliasPad>,
}

/// The mapping alias `name`, as named where the diagnostic points, to be defined as
/// `new_text` (its padded mapping); or, with `field`, the mapping written in the declared type
/// of a field of the struct `name`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AliasPad {
    pub name: String,
    pub new_text: String,
    pub field: Option<FieldArg>,
    /// With an empty `name`: the mapping written as this generic argument (by position among
    /// the non-lifetime ones) of the tensor type alias the diagnostic's span names
    /// (`AmaxDm` of `type AmaxDm = DmTensor<f32, Chip, Cluster, Slice, m![1]>;`).
    pub tensor_arg: Option<usize>,
    /// Where `name` is read, when not where the diagnostic points: a helper's alias, found
    /// where a call of the helper is reported (its file and an offset in the helper).
    pub read_at: Option<(std::path::PathBuf, u32)>,
    /// Not a mapping: the chip count (`chip = N`) of the `#[device]` kernel the diagnostic is
    /// reported in, to be written as `new_text` (CAP-001's other fix: the kernel runs on as
    /// many chips as its Chip mappings have positions).
    pub kernel_chips: bool,
}

/// A generic argument of a struct field's declared tensor type: the field's name (its
/// position for a tuple struct) and the argument's position among the type's non-lifetime
/// arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldArg {
    pub field: String,
    pub arg: usize,
}

/// The edits a fix makes in one file other than its diagnostic's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEdits {
    /// Absolute, as the engine names files.
    pub path: std::path::PathBuf,
    pub edits: Vec<Edit>,
}

/// A secondary location with its own short message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub rule: &'static Rule,
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub related: Vec<Related>,
    pub fixes: Vec<Fix>,
}

/// Salsa keeps a function's diagnostics in its hashed analysis; equal diagnostics hash equal
/// (rule, place and message identify one).
impl std::hash::Hash for Diagnostic {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.rule.code.hash(state);
        self.span.hash(state);
        self.message.hash(state);
    }
}

impl Diagnostic {
    /// A diagnostic of `rule` at its default severity.
    pub fn new(rule: &'static Rule, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            rule,
            severity: rule.severity,
            message: message.into(),
            span,
            related: Vec::new(),
            fixes: Vec::new(),
        }
    }

    /// This diagnostic at `severity` instead of its rule's default: for a rule whose condition
    /// the vendor library asserts in some cases only (an error there) and the manual states for
    /// all (a warning elsewhere). A configured level (`[rules]`) still overrides it.
    pub fn with_severity(mut self, severity: Severity) -> Diagnostic {
        self.severity = severity;
        self
    }

    pub fn code(&self) -> &'static str {
        self.rule.code
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    /// This diagnostic pointing at `at`, where its fix acts (ARCHITECTURE.md, "Where a
    /// diagnostic points"), the place it pointed at kept as a related place, `named`.
    pub fn pointing_at(mut self, at: Span, named: impl Into<String>) -> Diagnostic {
        let was = std::mem::replace(&mut self.span, at);
        self.with_related(was, named)
    }

    pub fn with_fix(
        mut self,
        title: impl Into<String>,
        safe: bool,
        edits: Vec<Edit>,
    ) -> Diagnostic {
        self.fixes.push(Fix {
            title: title.into(),
            safe,
            edits,
            other_files: Vec::new(),
            edits_definition: false,
            edits_helper: false,
            copies_helper: false,
            edits_attribute: false,
            alias_pad: Vec::new(),
        });
        self
    }

    /// A fix that pads the mapping alias `name` where it is defined, for a use no edit can
    /// reach (see [`Fix::alias_pad`]).
    pub fn with_alias_pad(self, name: &str, new_text: impl Into<String>) -> Diagnostic {
        let title = format!("pad `{name}` where it is defined, for every use");
        self.with_definition_pad(
            title,
            AliasPad {
                name: name.to_string(),
                new_text: new_text.into(),
                ..AliasPad::default()
            },
        )
    }

    /// A fix that pads a mapping written in the definition of the tensor type alias this
    /// diagnostic's span names, as its `arg`-th generic argument (see [`AliasPad::tensor_arg`]).
    pub fn with_tensor_alias_pad(
        self,
        title: impl Into<String>,
        arg: usize,
        new_text: impl Into<String>,
    ) -> Diagnostic {
        self.with_definition_pad(
            title.into(),
            AliasPad {
                name: String::new(),
                new_text: new_text.into(),
                tensor_arg: Some(arg),
                ..AliasPad::default()
            },
        )
    }

    /// A fix that edits a definition the engine finds ([`Fix::alias_pad`]): unsafe until the
    /// crate analysed with it shows no new error.
    fn with_definition_pad(mut self, title: String, pad: AliasPad) -> Diagnostic {
        self.fixes.push(Fix {
            title,
            safe: false,
            edits: Vec::new(),
            other_files: Vec::new(),
            edits_definition: true,
            edits_helper: false,
            copies_helper: false,
            edits_attribute: false,
            alias_pad: vec![pad],
        });
        self
    }

    /// A fix that pads a mapping written in the declared type of the field `field` of the
    /// struct `strukt` (its `arg`-th generic argument) where the struct declares it: every
    /// value of the field changes, so it is unsafe until the crate analysed with it shows no
    /// new error.
    pub fn with_field_pad(
        self,
        strukt: &str,
        field: FieldArg,
        new_text: impl Into<String>,
    ) -> Diagnostic {
        let shown = if field.field.parse::<usize>().is_ok() {
            format!("field {} of `{strukt}`", field.field)
        } else {
            format!("field `{}` of `{strukt}`", field.field)
        };
        self.with_definition_pad(
            format!("pad the type of the {shown} where it is declared"),
            AliasPad {
                name: strukt.to_string(),
                new_text: new_text.into(),
                field: Some(field),
                ..AliasPad::default()
            },
        )
    }

    /// A fix that sets the chip count of the `#[device]` kernel this diagnostic is reported in
    /// to `chips` (see [`AliasPad::kernel_chips`]): the kernel then runs on another number of
    /// chips, which its author decides, so it is never safe.
    pub fn with_kernel_chips(mut self, title: impl Into<String>, chips: u64) -> Diagnostic {
        self.fixes.push(Fix {
            title: title.into(),
            safe: false,
            edits: Vec::new(),
            other_files: Vec::new(),
            edits_definition: false,
            edits_helper: false,
            copies_helper: false,
            edits_attribute: true,
            alias_pad: vec![AliasPad {
                new_text: chips.to_string(),
                kernel_chips: true,
                ..AliasPad::default()
            }],
        });
        self
    }

    /// A fix that replaces one span.
    pub fn with_edit(
        self,
        title: impl Into<String>,
        safe: bool,
        span: Span,
        new_text: impl Into<String>,
    ) -> Diagnostic {
        self.with_fix(
            title,
            safe,
            vec![Edit {
                span,
                new_text: new_text.into(),
            }],
        )
    }

    /// This diagnostic with its fixes' edits of `path` (made where file positions were known:
    /// a helper's own text in the caller's file) among their edits of its own file, `path`.
    pub fn with_own_file_edits(mut self, path: &std::path::Path) -> Diagnostic {
        for f in &mut self.fixes {
            if f.other_files.iter().all(|o| o.path != path) {
                continue;
            }
            let (own, other): (Vec<_>, Vec<_>) = std::mem::take(&mut f.other_files)
                .into_iter()
                .partition(|o| o.path == path);
            f.other_files = other;
            for o in own {
                f.edits.extend(o.edits);
            }
            f.edits.sort_by_key(|e| (e.span.start, e.span.end));
        }
        self
    }

    /// Moves every span of this diagnostic right by `by` bytes.
    pub fn shifted(self, by: u32) -> Diagnostic {
        self.relocated(|s| s.shift(by))
    }

    /// This diagnostic with every span (its own, its related places', its fixes' edits) put
    /// through `place`.
    pub fn relocated(mut self, place: impl Fn(Span) -> Span) -> Diagnostic {
        self.span = place(self.span);
        for r in &mut self.related {
            r.span = place(r.span);
        }
        for f in &mut self.fixes {
            for e in &mut f.edits {
                e.span = place(e.span);
            }
        }
        self
    }
}

pub use crate::line_index::{LineCol, LineIndex};

/// `text` with `edits` (non-overlapping) applied.
pub fn applied(text: &str, edits: &[Edit]) -> Option<String> {
    let mut sorted: Vec<&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for e in sorted {
        let r = e.span.range();
        if r.start < at || !text.is_char_boundary(r.start) || !text.is_char_boundary(r.end) {
            return None;
        }
        out.push_str(text.get(at..r.start)?);
        out.push_str(&e.new_text);
        at = r.end;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}
