//! Where the body of a mapping macro sits in the text of an argument: MAP-009 parses the tile
//! view's mappings from it, MAP-010 extends the Element's.

/// The body of `m![...]` and its offset in `text`.
pub(super) fn body(text: &str) -> Option<(usize, &str)> {
    let open = text.find("m![")? + 3;
    let close = text.rfind(']')?;
    (close >= open).then(|| (open, &text[open..close]))
}
