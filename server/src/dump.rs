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
    for (offset, f) in &analysis.fns {
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
                o.insert("line".into(), line(*offset, t.span.start).into());
                o.insert(
                    "origin".into(),
                    match t.origin {
                        Origin::Param => "param",
                        Origin::Let => "let",
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
                        o.insert("line".into(), line(*offset, s.span.start).into());
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
                    "line": line(*offset, c.span.start),
                    "binding": c.binding,
                    "steps": steps,
                })
            })
            .collect();
        fns.push(json!({
            "name": m.name,
            "line": line(*offset, m.span.start),
            "kind": kind,
            "tensors": tensors,
            "chains": chains,
        }));
    }
    json!({"functions": fns})
}
