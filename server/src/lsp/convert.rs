//! Positions: the engine speaks byte offsets, LSP speaks UTF-16 code units per line.

use tower_lsp_server::ls_types::{Position, Range};
use visa_analysis::Span;
use visa_analysis::line_index::{Encoding, LineIndex, Position as EnginePosition};

/// The engine's line index of one text, answering in LSP's types, lines and UTF-16 columns (a
/// lone `\r` ends a line, as LSP counts). It is
/// built when first asked (a keystroke on a file without findings never needs it); every
/// method takes the text it indexes.
#[derive(Clone, Debug, Default)]
pub struct Lines {
    index: std::sync::OnceLock<LineIndex>,
}

impl Lines {
    fn index(&self, text: &str) -> &LineIndex {
        self.index.get_or_init(|| LineIndex::lsp(text))
    }

    /// The LSP position of byte `offset` (clamped to the text, rounded down to a character).
    pub fn position(&self, text: &str, offset: u32) -> Position {
        let p = self.index(text).position(text, offset, Encoding::Utf16);
        Position::new(p.line, p.character)
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        Range::new(
            self.position(text, span.start),
            self.position(text, span.end),
        )
    }

    /// The byte offset of an LSP position; a position past the end of its line is the line's
    /// end, past the last line the text's end; one inside a surrogate pair rounds down.
    pub fn offset(&self, text: &str, pos: Position) -> u32 {
        let p = EnginePosition {
            line: pos.line,
            character: pos.character,
        };
        self.index(text).offset(text, p, Encoding::Utf16)
    }

    /// The byte offset of the start of `line` (0-based), clamped to the text.
    pub fn line_start(&self, text: &str, line: u32) -> u32 {
        self.offset(text, Position::new(line, 0))
    }

    /// The 0-based line of byte `offset`.
    pub fn line(&self, text: &str, offset: u32) -> u32 {
        self.position(text, offset).line
    }

    pub fn span(&self, text: &str, range: Range) -> Span {
        let start = self.offset(text, range.start);
        let end = self.offset(text, range.end);
        Span::new(start as usize, end.max(start) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_code_units() {
        // 'é' is 2 bytes and 1 unit; '𝛼' is 4 bytes and 2 units (a surrogate pair).
        let text = "ab\né𝛼 z\r\nlast";
        let lines = Lines::default();
        let z = text.find('z').map_or(0, |i| i as u32);
        assert_eq!(lines.position(text, z), Position::new(1, 4));
        assert_eq!(lines.offset(text, Position::new(1, 4)), z);
        // Inside the surrogate pair: rounds down to the character's start.
        assert_eq!(lines.offset(text, Position::new(1, 2)), 5);
        // Past the end of a line: that line's end, before its "\r\n".
        assert_eq!(lines.offset(text, Position::new(1, 99)), 11);
        assert_eq!(lines.offset(text, Position::new(9, 0)), text.len() as u32);
        assert_eq!(lines.position(text, 999), Position::new(2, 4));
        assert_eq!(lines.line_start(text, 2), 13);
    }
}
