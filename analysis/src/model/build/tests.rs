//! The builder's tests.

use super::{Env, build_fn};
use crate::mapping::Scope;
use crate::model::{Bound, FnModel, Kind, Method};
use ra_ap_syntax::{AstNode, Edition, SourceFile, ast};

/// The model of `fun` in `src`, in an environment that declares the file's structs as
/// `db::env_on` does.
fn model(src: &str, fun: &str) -> FnModel {
    let file = SourceFile::parse(src, Edition::Edition2024).tree();
    let scope = crate::syntax::scope_of(
        &crate::syntax::model_of(file.syntax(), None),
        &Scope::default(),
    );
    let mut env = Env {
        scope,
        ..Env::default()
    };
    for s in file.syntax().descendants().filter_map(ast::Struct::cast) {
        if let Some(n) = ast::HasName::name(&s) {
            env.declare_type(s.syntax(), n.text().to_string());
        }
    }
    let f = file
        .syntax()
        .descendants()
        .filter_map(ast::Fn::cast)
        .find(|f| ast::HasName::name(f).is_some_and(|n| n.text() == fun));
    let Some(f) = f else {
        panic!("no function {fun}");
    };
    let scope = env.scope.clone();
    build_fn(
        &f,
        &env,
        scope,
        (crate::library::Generation::OptStd, None),
        (&Bound::default(), &Vec::new()),
    )
    .0
}

const PAIR: &str = "axes![A = 4096, B = 8];\n\
    pub struct Pair<'a> { pub x: &'a HbmTensor<i8, m![1], m![A, B]>, pub n: usize }\n\
    #[device(chip = 1)]\n\
    pub fn k(ctx: &mut Context, pair: Pair<'_>) {\n\
        let _d = pair.x.to_dm::<m![1 # 2], m![A / 16], m![A % 16, B]>(&mut ctx.tdma);\n\
    }\n\
    fn h(ctx: &mut Context, pair: &Pair<'_>) {\n\
        let _d = pair.x.to_dm::<m![1 # 2], m![A / 16], m![A % 16, B]>(&mut ctx.tdma);\n\
    }\n";

#[test]
fn a_struct_parameter_is_its_tensor_fields() {
    for fun in ["k", "h"] {
        let m = model(PAIR, fun);
        assert!(m.problems.is_empty(), "{fun}: {:?}", m.problems);
        let input = m
            .chains
            .iter()
            .flat_map(|c| &c.steps)
            .find(|s| s.method == Method::ToDm)
            .and_then(|s| s.input.as_ref());
        assert!(
            input.is_some_and(|t| t.kind == Kind::Hbm),
            "{fun}: {:?}",
            m.chains
        );
    }
}

#[test]
fn a_generic_struct_is_not_read() {
    let src = PAIR.replace("Pair<'a>", "Pair<'a, T>");
    let m = model(&src, "k");
    assert!(!m.problems.is_empty(), "{:?}", m.chains);
}
