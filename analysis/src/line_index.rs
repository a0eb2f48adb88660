//! Byte offsets to and from lines and columns, in the three ways surfaces count columns:
//! UTF-8 bytes, UTF-16 code units (the Language Server Protocol) and Unicode scalar values
//! (the JSON contract, DESIGN.md §4).

/// How a column is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
    /// Unicode scalar values (`char`s).
    Scalar,
}

/// The starts of every line of one text. It does not keep the text: pass the same text to
/// every call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

/// A 1-based line and column (columns count Unicode scalar values, DESIGN.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// A 0-based line and column in some [`Encoding`] (the Language Server Protocol's `Position`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { line_starts }
    }

    /// The lines as the Language Server Protocol counts them: a line ends at `\n`, at `\r\n`
    /// and at a lone `\r` (the command line counts `\n` only, as rustc does).
    pub fn lsp(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut line_starts = vec![0];
        line_starts.extend(
            memchr::memchr2_iter(b'\n', b'\r', bytes)
                .filter(|&i| !(bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n')))
                .map(|i| i + 1),
        );
        LineIndex { line_starts }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The 1-based line and scalar-value column of `offset` (clamped to the text, and back to a
    /// character boundary).
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let p = self.position(text, offset, Encoding::Scalar);
        LineCol {
            line: p.line + 1,
            column: p.character + 1,
        }
    }

    /// The 0-based position of `offset` with columns counted in `enc`.
    pub fn position(&self, text: &str, offset: u32, enc: Encoding) -> Position {
        let offset = (offset as usize).min(text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let mut end = offset;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let prefix = &text[start..end];
        let character = match enc {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.encode_utf16().count(),
            Encoding::Scalar => prefix.chars().count(),
        };
        Position {
            line: line as u32,
            character: u32::try_from(character).unwrap_or(u32::MAX),
        }
    }

    /// The byte offset of a 0-based position. A line past the end gives the end of the text; a
    /// column past the end of its line gives the line's end (as LSP asks); a column inside a
    /// character gives that character's start.
    pub fn offset(&self, text: &str, pos: Position, enc: Encoding) -> u32 {
        let Some(&start) = self.line_starts.get(pos.line as usize) else {
            return u32::try_from(text.len()).unwrap_or(u32::MAX);
        };
        let end = self
            .line_starts
            .get(pos.line as usize + 1)
            .map_or(text.len(), |&next| next - 1);
        let line = text.get(start..end.max(start)).unwrap_or("");
        let line = line.strip_suffix('\r').unwrap_or(line);
        let mut units = 0usize;
        let mut at = line.len();
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                at = i;
                break;
            }
            units += match enc {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
                Encoding::Scalar => 1,
            };
            if units > pos.character as usize {
                at = i;
                break;
            }
        }
        u32::try_from(start + at).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsp_lines_end_at_a_lone_carriage_return_too() {
        let text = "a\rbc\r\nd\ne";
        let idx = LineIndex::lsp(text);
        let at = |offset| idx.position(text, offset, Encoding::Utf16);
        assert_eq!(
            at(2),
            Position {
                line: 1,
                character: 0
            }
        );
        assert_eq!(
            at(6),
            Position {
                line: 2,
                character: 0
            }
        );
        assert_eq!(
            at(8),
            Position {
                line: 3,
                character: 0
            }
        );
        let end_of_first = Position {
            line: 0,
            character: 9,
        };
        assert_eq!(
            idx.offset(text, end_of_first, Encoding::Utf16),
            1,
            "before its `\\r`"
        );
        assert_eq!(
            LineIndex::new(text).line_count(),
            3,
            "rustc's lines: `\\n` only"
        );
    }

    #[test]
    fn line_col_counts_scalar_values() {
        let text = "ab\nxé z\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), LineCol { line: 1, column: 1 });
        assert_eq!(idx.line_col(text, 3), LineCol { line: 2, column: 1 });
        // 'z' is at byte 7 (é is two bytes) but column 4.
        assert_eq!(idx.line_col(text, 7), LineCol { line: 2, column: 4 });
        assert_eq!(idx.line_col(text, 100), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn the_three_encodings_and_back() {
        // '𝕂' is 4 bytes, 2 UTF-16 units, 1 scalar; 'é' 2 bytes, 1 unit, 1 scalar.
        let text = "fn k() {}\n// 𝕂é m![A]\r\nend";
        let idx = LineIndex::new(text);
        let m = text.find("m!").map_or(0, |i| i as u32);
        let at = |enc| idx.position(text, m, enc);
        assert_eq!(
            at(Encoding::Utf8),
            Position {
                line: 1,
                character: 10
            }
        );
        assert_eq!(
            at(Encoding::Utf16),
            Position {
                line: 1,
                character: 7
            }
        );
        assert_eq!(
            at(Encoding::Scalar),
            Position {
                line: 1,
                character: 6
            }
        );
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Scalar] {
            assert_eq!(idx.offset(text, at(enc), enc), m, "{enc:?}");
        }
        // Past the end of a line: its end, before the "\r\n".
        let eol = text.find('\r').map_or(0, |i| i as u32);
        let far = Position {
            line: 1,
            character: 99,
        };
        assert_eq!(idx.offset(text, far, Encoding::Utf16), eol);
        // Inside the surrogate pair of '𝕂': the character's start.
        let k = text.find('𝕂').map_or(0, |i| i as u32);
        let mid = Position {
            line: 1,
            character: 4,
        };
        assert_eq!(idx.offset(text, mid, Encoding::Utf16), k);
        // Past the last line: the end of the text.
        let past = Position {
            line: 9,
            character: 0,
        };
        assert_eq!(idx.offset(text, past, Encoding::Utf16), text.len() as u32);
    }
}
