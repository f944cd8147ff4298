//! Tokenising a headed CSV text into checked records.
//!
//! Shared by the data reader and the split-file reader: it turns text into a header and data
//! rows, each remembered with its 1-based line number, and rejects the structural problems
//! common to every CSV file (empty text, empty or repeated column names, no data rows, rows
//! with the wrong number of fields). Cells are trimmed of surrounding whitespace; `\n` and
//! `\r\n` line endings, a trailing newline and a UTF-8 byte-order mark are accepted. Blank
//! lines contain no record and are skipped by the tokenizer.

use std::collections::HashMap;
use std::path::Path;

use ::csv::{ReaderBuilder, StringRecord, Trim};

use super::DataError;

/// Reads a whole file as UTF-8 text; errors name the file (and the line of a bad byte).
pub(super) fn read_text(path: &Path) -> Result<String, DataError> {
    let source_name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| DataError::Io {
        path: source_name.clone(),
        source,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        DataError::InvalidUtf8 {
            source_name,
            line: LineCounter::new(e.as_bytes()).line_at(valid as u64),
        }
    })
}

/// A CSV text split into a header and data rows of the header's width.
pub(super) struct Table {
    /// The file path or the name given to an in-memory text, for error messages.
    pub(super) source_name: String,
    /// The 1-based line of the header.
    pub(super) header_line: u64,
    /// The trimmed, non-empty, distinct column names.
    pub(super) header: Vec<String>,
    /// Each data row with the 1-based line where it starts; every row has `header.len()` fields.
    pub(super) rows: Vec<(u64, StringRecord)>,
}

impl Table {
    /// Tokenises `text`; `source_name` is used in error messages.
    pub(super) fn parse(text: &str, source_name: &str) -> Result<Table, DataError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut records = ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(Trim::All)
            .from_reader(text.as_bytes())
            .into_records();
        // The tokenizer's own line numbers are wrong for `\r\n` endings and blank lines, so lines
        // are counted here from the byte offsets.
        let mut lines = LineCounter::new(text.as_bytes());
        let csv_error = |lines: &mut LineCounter, e: ::csv::Error| DataError::Csv {
            source_name: source_name.to_string(),
            line: lines.line_at(e.position().map_or(0, |p| p.byte())),
            message: e.to_string(),
        };

        let header_record = match records.next() {
            None => {
                return Err(DataError::EmptyFile {
                    source_name: source_name.to_string(),
                })
            }
            Some(record) => record.map_err(|e| csv_error(&mut lines, e))?,
        };
        let header_line = lines.line_of(&header_record);
        let header: Vec<String> = header_record.iter().map(str::to_string).collect();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (k, name) in header.iter().enumerate() {
            if name.is_empty() {
                return Err(DataError::EmptyColumnName {
                    source_name: source_name.to_string(),
                    line: header_line,
                    position: k + 1,
                });
            }
            if let Some(first) = seen.insert(name, k + 1) {
                return Err(DataError::DuplicateColumn {
                    source_name: source_name.to_string(),
                    line: header_line,
                    name: name.clone(),
                    first,
                    second: k + 1,
                });
            }
        }

        let mut rows = Vec::new();
        for record in records {
            let record = record.map_err(|e| csv_error(&mut lines, e))?;
            let line = lines.line_of(&record);
            if record.len() != header.len() {
                return Err(DataError::RaggedRow {
                    source_name: source_name.to_string(),
                    line,
                    expected: header.len(),
                    found: record.len(),
                });
            }
            rows.push((line, record));
        }
        if rows.is_empty() {
            return Err(DataError::NoDataRows {
                source_name: source_name.to_string(),
            });
        }
        Ok(Table {
            source_name: source_name.to_string(),
            header_line,
            header,
            rows,
        })
    }

    /// A [`DataError::BadCell`] for the cell at `line` in column `column`.
    pub(super) fn bad_cell(
        &self,
        line: u64,
        column: usize,
        expected: &'static str,
        found: &str,
    ) -> DataError {
        DataError::BadCell {
            source_name: self.source_name.clone(),
            line,
            column: self.header[column].clone(),
            expected,
            found: found.to_string(),
        }
    }
}

/// Turns byte offsets into 1-based line numbers; `\n`, `\r\n` and a lone `\r` each end a line.
///
/// Offsets must be asked for in non-decreasing order (as records are read); the scan is
/// incremental, so numbering a whole file is linear in its size.
struct LineCounter<'a> {
    /// The whole text.
    bytes: &'a [u8],
    /// How far the text has been scanned.
    pos: usize,
    /// The line number at `pos`.
    line: u64,
}

impl<'a> LineCounter<'a> {
    /// A counter at the start of `bytes`.
    fn new(bytes: &'a [u8]) -> Self {
        LineCounter {
            bytes,
            pos: 0,
            line: 1,
        }
    }

    /// The line where a record read from the tokenizer starts.
    fn line_of(&mut self, record: &StringRecord) -> u64 {
        // Records produced by a reader always carry their position.
        self.line_at(record.position().map_or(0, |p| p.byte()))
    }

    /// The line of the first byte at or after `offset` that is not a line terminator.
    ///
    /// The tokenizer reports a record's offset as the end of the previous record, which may
    /// still be followed by the rest of a `\r\n` pair and by blank lines.
    fn line_at(&mut self, offset: u64) -> u64 {
        let mut target =
            usize::try_from(offset).map_or(self.bytes.len(), |o| o.min(self.bytes.len()));
        while target < self.bytes.len() && matches!(self.bytes[target], b'\r' | b'\n') {
            target += 1;
        }
        while self.pos < target {
            let ends_line = match self.bytes[self.pos] {
                b'\n' => true,
                b'\r' => self.bytes.get(self.pos + 1) != Some(&b'\n'),
                _ => false,
            };
            if ends_line {
                self.line += 1;
            }
            self.pos += 1;
        }
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::testutil::TempFile;

    fn parse(text: &str) -> Result<Table, DataError> {
        Table::parse(text, "t.csv")
    }

    #[test]
    fn header_rows_and_line_numbers() {
        let t = parse("\u{feff} a , b \r\n1,2\r\n\r\n 3 ,\"4\"\r\n").unwrap();
        assert_eq!(t.header, vec!["a", "b"]);
        assert_eq!(t.header_line, 1);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].0, 2);
        assert_eq!(t.rows[1].0, 4);
        assert_eq!(&t.rows[1].1[0], "3");
        assert_eq!(&t.rows[1].1[1], "4");
    }

    #[test]
    fn line_numbers_survive_crlf_cr_blank_lines_and_quoted_newlines() {
        let lines = |text: &str| -> Vec<u64> {
            let t = parse(text).unwrap();
            std::iter::once(t.header_line)
                .chain(t.rows.iter().map(|(line, _)| *line))
                .collect()
        };
        assert_eq!(lines("a,b\n1,2\n3,4\n"), vec![1, 2, 3]);
        assert_eq!(lines("a,b\r\n1,2\r\n3,4\r\n"), vec![1, 2, 3]);
        assert_eq!(lines("\r\n\r\na,b\r\n1,2\r\n\r\n\r\n3,4"), vec![3, 4, 7]);
        assert_eq!(lines("a,b\n1,2\n\n3,4\n"), vec![1, 2, 4]);
        assert_eq!(lines("a,b\n\"x\ny\",2\n3,4\n"), vec![1, 2, 4]);
        assert_eq!(lines("a\r1\r\r2\r"), vec![1, 2, 4]);
    }

    #[test]
    fn structural_errors() {
        let msg = |text: &str| parse(text).err().expect("expected an error").to_string();
        assert!(msg("").contains("t.csv: the file is empty"));
        assert!(msg("\n\n").contains("empty"));
        let m = msg("a,,b\n1,2,3\n");
        assert!(
            m.contains("t.csv: line 1, header field 2: empty column name"),
            "{m}"
        );
        let m = msg("a,b,a\n1,2,3\n");
        assert!(m.contains("t.csv: line 1"), "{m}");
        assert!(m.contains("\"a\" appears twice"), "{m}");
        assert!(m.contains("fields 1 and 3"), "{m}");
        let m = msg("a,b\n");
        assert!(m.contains("t.csv: no data rows"), "{m}");
        let m = msg("a,b\n1,2\n3\n");
        assert!(m.contains("t.csv: line 3: 1 fields, expected 2"), "{m}");
        let m = msg("a,b\n1,2\n3,4,5\n");
        assert!(m.contains("t.csv: line 3: 3 fields, expected 2"), "{m}");
        let m = msg("a,b\r\n1,2\r\n\r\n3,4,5\r\n");
        assert!(m.contains("t.csv: line 4: 3 fields, expected 2"), "{m}");
    }

    #[test]
    fn read_text_errors_name_the_file() {
        let missing = std::env::temp_dir().join("trustgp_definitely_missing_file.csv");
        let m = read_text(&missing).unwrap_err().to_string();
        assert!(m.contains("trustgp_definitely_missing_file.csv"), "{m}");
        assert!(m.contains("cannot read"), "{m}");

        let f = TempFile::new("utf8", b"a,b\n1,2\n3,\xff\xfe\n");
        let m = read_text(&f.path).unwrap_err().to_string();
        assert!(m.contains(&f.name()), "{m}");
        assert!(m.contains("line 3: invalid UTF-8"), "{m}");

        let f = TempFile::new("text", b"a\n1\n");
        assert_eq!(read_text(&f.path).unwrap(), "a\n1\n");
    }
}
