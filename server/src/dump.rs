//! `visa-lint model`: the kernel model as JSON (for users debugging a kernel, and for tests).

use serde_json::{Map, Value, json};
use visa_analysis::LineIndex;
use visa_analysis::db::FileAnalysis;
use visa_analysis::model::{FnKind, Origin, Slot, TensorTy};

fn ty_fields(ty: &TensorTy, out: &mut Map<String, Value>) {
    out.insert("type".into(), ty.kind.type_name().into());
    out.insert("tier".into(), ty.kind.tier().into());
    out.insert(
        "dtype".into(),
        ty.dtype
            .map_or(Value::Null, |d| Value::String(d.to_string())),
    );
    for slot in ty.kind.params() {
        if matches!(slot, Slot::D | Slot::Other) {
            continue;
        }
        let v = ty
            .get(*slot)
            .map_or(Value::Null, |m| Value::String(m.text.clone()));
        out.insert(slot.name().into(), v);
    }
}

/// The model of every function of one file.
pub fn model_json(text: &str, analysis: &FileAnalysis) -> Value {
    let idx = LineIndex::new(text);
    let line = |offset: u32, rel: u32| idx.line_col(text, offset + rel).line;
    let mut fns = Vec::new();
    // A function a macro generated is placed at the invocation, every line with it.
    let written = analysis.fns.iter().map(|(offset, f)| (*offset, f, None));
    let generated = analysis
        .generated
        .iter()
        .map(|g| (g.call.start, &g.analysis, Some(g.macro_name.as_str())));
    for (offset, f, macro_name) in written.chain(generated) {
        let at = |rel: u32| line(offset, if macro_name.is_some() { 0 } else { rel });
        let m = &f.model;
        let kind = match m.kind {
            FnKind::Device { chips, pe } => json!({"device": {"chip": chips, "pe": pe}}),
            FnKind::Host => json!("host"),
            FnKind::Plain => json!("plain"),
        };
        let tensors: Vec<Value> = m
            .tensors
            .iter()
            .map(|t| {
                let mut o = Map::new();
                o.insert("name".into(), t.name.clone().into());
                o.insert("line".into(), at(t.span.start).into());
                o.insert(
                    "origin".into(),
                    match t.origin {
                        Origin::Param => "param",
                        Origin::Let => "let",
                        Origin::Assign => "assign",
                    }
                    .into(),
                );
                ty_fields(&t.ty, &mut o);
                o.insert(
                    "context".into(),
                    t.context.map_or(Value::Null, |c| c.as_str().into()),
                );
                o.insert("address".into(), t.address.map_or(Value::Null, Value::from));
                Value::Object(o)
            })
            .collect();
        let chains: Vec<Value> = m
            .chains
            .iter()
            .map(|c| {
                let steps: Vec<Value> = c
                    .steps
                    .iter()
                    .map(|s| {
                        let mut o = Map::new();
                        o.insert("method".into(), s.method.to_string().into());
                        o.insert("line".into(), at(s.span.start).into());
                        o.insert(
                            "engine".into(),
                            s.engine.map_or(Value::Null, |e| e.name().into()),
                        );
                        match &s.output {
                            Some(ty) => ty_fields(ty, &mut o),
                            None => {
                                o.insert("type".into(), Value::Null);
                            }
                        }
                        o.insert(
                            "context".into(),
                            s.context.map_or(Value::Null, |c| c.as_str().into()),
                        );
                        if let Some(a) = s.address {
                            o.insert("address".into(), a.into());
                        }
                        Value::Object(o)
                    })
                    .collect();
                json!({
                    "line": at(c.span.start),
                    "binding": c.binding,
                    "steps": steps,
                })
            })
            .collect();
        let mut o = json!({
            "name": m.name,
            "line": at(m.span.start),
            "kind": kind,
            "tensors": tensors,
            "chains": chains,
        });
        if let Some(name) = macro_name {
            o["generated_by"] = format!("{name}!").into();
        }
        fns.push(o);
    }
    json!({"functions": fns})
}
