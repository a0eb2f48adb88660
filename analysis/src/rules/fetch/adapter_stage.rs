//! Which conversion table a fetch is checked against: the fetch stage of a fetch method or
//! adapter under the crate's library (`stage_of`), and, for furiosa-opt-std 0.6's adapters,
//! what FET-004 and FET-007 both read of one adapter (`AdapterCast`).

use crate::library::{Conversions, Stage};
use crate::model::{Adapter, Arg, Dtype, Method};

/// The fetch stage a fetch method or adapter converts with, under the crate's library, and the
/// name a message gives it: furiosa-opt-std's three adapters each have their own table; the
/// manual's fetch methods share the Fetch Adapter's (which the generation's tables say).
pub(super) fn stage_of<'t>(
    conv: &Conversions<'t>,
    method: &Method,
) -> Option<(Stage<'t>, &'static str)> {
    Some(match method {
        Method::Fetch | Method::FetchCast => (conv.fetch_cast, "fetch_cast"),
        Method::FetchWithZeroPoint | Method::FetchWithZeroPoints | Method::FetchZeroPointSub => {
            (conv.zero_point_sub, "fetch_zero_point_sub")
        }
        Method::FetchWithTable | Method::FetchTableLookup => {
            (conv.table_lookup, "fetch_table_lookup")
        }
        _ => return None,
    })
}

/// One furiosa-opt-std adapter's conversion as written: its stage, the name a message gives
/// it, the type argument it names, and the types it converts from and to.
pub(super) struct AdapterCast<'a, 't> {
    pub stage: Stage<'t>,
    pub name: &'static str,
    pub arg: &'a Arg,
    pub from: Dtype,
    pub to: Dtype,
}

impl<'a, 't> AdapterCast<'a, 't> {
    /// The adapter's conversion, when it is a fetch stage whose source type is known and
    /// whose type argument names an element type.
    pub(super) fn of(conv: &Conversions<'t>, adapter: &'a Adapter) -> Option<Self> {
        let (stage, name) = stage_of(conv, &adapter.method)?;
        let (arg, _) = adapter.generic.as_ref()?;
        let (Some(from), Some(to)) = (adapter.input.dtype, adapter.to) else {
            return None;
        };
        Some(Self {
            stage,
            name,
            arg,
            from,
            to,
        })
    }
}
