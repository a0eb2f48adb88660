//! Positions: the engine speaks byte offsets, LSP speaks UTF-16 code units per line.

use tower_lsp_server::ls_types::{Position, Range};
use visa_analysis::Span;

/// Byte offsets of the start of every line, and the means to convert both ways in UTF-16.
#[derive(Clone, Debug)]
pub struct Lines {
    starts: Vec<u32>,
}

impl Lines {
    pub fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.match_indices('\n')
                .map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
        Lines { starts }
    }

    /// The 0-based line holding byte `offset`, and its start.
    fn line_of(&self, offset: u32) -> (usize, u32) {
        let line = self
            .starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1);
        (line, self.starts.get(line).copied().unwrap_or(0))
    }

    /// The LSP position of byte `offset` (clamped to the text, rounded down to a character).
    pub fn position(&self, text: &str, offset: u32) -> Position {
        let mut offset = (offset as usize).min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let (line, start) = self.line_of(offset as u32);
        let character = text
            .get(start as usize..offset)
            .map_or(0, |s| s.encode_utf16().count());
        Position::new(line as u32, character as u32)
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
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return u32::try_from(text.len()).unwrap_or(u32::MAX);
        };
        let line_end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(text.len(), |&e| e as usize - 1);
        let line = text.get(start as usize..line_end).unwrap_or("");
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut units = 0u32;
        for (i, c) in line.char_indices() {
            let next = units + c.len_utf16() as u32;
            if next > pos.character {
                return start + i as u32;
            }
            units = next;
        }
        start + line.len() as u32
    }

    /// The byte offset of the start of `line` (0-based), clamped to the text.
    pub fn line_start(&self, text: &str, line: u32) -> u32 {
        self.starts
            .get(line as usize)
            .copied()
            .unwrap_or(u32::try_from(text.len()).unwrap_or(u32::MAX))
    }

    /// The 0-based line of byte `offset`.
    pub fn line(&self, offset: u32) -> u32 {
        self.line_of(offset).0 as u32
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
        let lines = Lines::new(text);
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
