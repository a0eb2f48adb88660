//! Constant evaluation of addresses and sizes: literals, `const` items and integer arithmetic.
//! Anything else is unknown (`None`) and the rules that need it stay silent.

use ra_ap_syntax::ast::{self, ArithOp, BinaryOp, LiteralKind};
use std::collections::HashMap;

/// Evaluates an integer expression with the given `const` values in scope.
pub fn eval(e: &ast::Expr, consts: &HashMap<String, u64>) -> Option<u64> {
    match e {
        ast::Expr::Literal(l) => match l.kind() {
            LiteralKind::IntNumber(n) => n.value().ok().and_then(|v| u64::try_from(v).ok()),
            _ => None,
        },
        ast::Expr::ParenExpr(p) => eval(&p.expr()?, consts),
        ast::Expr::CastExpr(c) => eval(&c.expr()?, consts),
        ast::Expr::PathExpr(p) => {
            let path = p.path()?;
            if path.qualifier().is_some() {
                return None;
            }
            consts
                .get(path.segment()?.name_ref()?.text().as_str_compat())
                .copied()
        }
        ast::Expr::BinExpr(b) => {
            let l = eval(&b.lhs()?, consts)?;
            let r = eval(&b.rhs()?, consts)?;
            match b.op_kind()? {
                BinaryOp::ArithOp(op) => match op {
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
                },
                _ => None,
            }
        }
        _ => None,
    }
}

/// `SmolStr`/`String` text as `&str` across ra_ap_syntax versions.
trait AsStrCompat {
    fn as_str_compat(&self) -> &str;
}

impl<T: std::ops::Deref<Target = str>> AsStrCompat for T {
    fn as_str_compat(&self) -> &str {
        self
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
        let consts = HashMap::from([("BASE".to_string(), 4096u64)]);
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
    }

    #[test]
    fn non_constants_are_unknown() {
        assert_eq!(value("x + 1"), None);
        assert_eq!(value("f()"), None);
        assert_eq!(value("1 - 2"), None);
        assert_eq!(value("1 << 70"), None);
    }
}
