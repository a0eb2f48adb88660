//! VL-006: a `// visa-lint: allow(...)` comment that silences nothing is stale. `crate::suppress`
//! checks and reports it; this file holds the rule's declaration.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const VL_006: Rule = Rule {
    code: "VL-006",
    name: "unused-suppression",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A `// visa-lint: allow(...)` comment must silence something",
    docs: "`// visa-lint: allow(CODE)` silences a rule on its line (alone on a line, on that line and \
           the next one); `// visa-lint: allow-file(CODE)` in the whole file. CODE is a rule code, a \
           rule name or a family. A suppression that silences nothing is stale: the problem it hid \
           was fixed, or it names the wrong line or a rule that does not exist, and it would hide \
           the next real problem on that line. The fix removes it.",
    bad: "let x = 1; // visa-lint: allow(MAP-001)",
    good: "let x = 1;",
    manual: "(the tool's own rule)",
    generations: Generations::Both,
};
