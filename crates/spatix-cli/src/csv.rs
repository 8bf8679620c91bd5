//! A strict, streaming reader of the simple CSV files the batch commands take: a header naming
//! the columns, then one record per line, comma-separated, no quoting. Every problem is
//! reported as `FILE:LINE: reason`.
//!
//! * The header names an `id` column and the coordinate columns, in any order, each once, and
//!   nothing else. Spaces around names and values are ignored; so are a UTF-8 byte-order mark,
//!   Windows line ends and blank lines.
//! * `id` is an unsigned 64-bit integer; coordinates are finite numbers (f64).

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use crate::failure::Failure;

/// Most coordinate columns a record may have (boxes have four).
pub(crate) const MAX_COORDS: usize = 4;

/// One record: its line, its id and its coordinates (the first `columns.len()` are used).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    pub(crate) line: u64,
    pub(crate) id: u64,
    pub(crate) coords: [f64; MAX_COORDS],
}

/// Reads records with an `id` and the given coordinate columns from one file.
#[derive(Debug)]
pub(crate) struct CsvReader {
    file: String,
    reader: BufReader<File>,
    /// Coordinate column names, in the order records return them.
    columns: &'static [&'static str],
    /// For each field of a line: `None` for the id, `Some(i)` for coordinate `i`.
    fields: Vec<Option<usize>>,
    line: u64,
    buf: String,
}

impl CsvReader {
    /// Opens `path` and checks its header.
    pub(crate) fn open(path: &Path, columns: &'static [&'static str]) -> Result<Self, Failure> {
        assert!(
            columns.len() <= MAX_COORDS,
            "at most {MAX_COORDS} coordinates"
        );
        let file = path.display().to_string();
        let handle = File::open(path).map_err(|e| Failure::file(&file, e.to_string()))?;
        let mut reader = Self {
            file,
            reader: BufReader::with_capacity(1 << 16, handle),
            columns,
            fields: Vec::new(),
            line: 0,
            buf: String::new(),
        };
        reader.read_header()?;
        Ok(reader)
    }

    /// The file's name as given, for messages.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// The expected header, for messages.
    fn expected(&self) -> String {
        format!("id,{}", self.columns.join(","))
    }

    /// An input failure at `line` of this file.
    pub(crate) fn error(&self, line: u64, reason: impl Into<String>) -> Failure {
        Failure::input(&self.file, line, reason)
    }

    /// Reads up to the next non-blank line; returns where its text starts in `buf` (after a
    /// byte-order mark), or `None` at the end of the file.
    fn next_line(&mut self) -> Result<Option<usize>, Failure> {
        loop {
            self.buf.clear();
            let read = self.reader.read_line(&mut self.buf).map_err(|e| {
                if e.kind() == io::ErrorKind::InvalidData {
                    Failure::input(&self.file, self.line + 1, "not valid UTF-8 text")
                } else {
                    Failure::file(&self.file, e.to_string())
                }
            })?;
            if read == 0 {
                return Ok(None);
            }
            self.line += 1;
            let text = match self.line {
                1 => self.buf.strip_prefix('\u{feff}').unwrap_or(&self.buf),
                _ => &self.buf,
            };
            if !text.trim().is_empty() {
                return Ok(Some(self.buf.len() - text.len()));
            }
        }
    }

    fn read_header(&mut self) -> Result<(), Failure> {
        let expected = self.expected();
        let Some(start) = self.next_line()? else {
            return Err(self.error(1, format!("empty file: expected the header {expected}")));
        };
        let header = self.buf[start..].trim();
        let mut fields = Vec::new();
        let mut seen_id = false;
        let mut seen = [false; MAX_COORDS];
        let mut problem = None;
        for name in header.split(',').map(str::trim) {
            if name == "id" {
                problem = problem.or(seen_id.then(|| "column id appears twice".to_owned()));
                seen_id = true;
                fields.push(None);
            } else if let Some(i) = self.columns.iter().position(|c| *c == name) {
                problem = problem.or(seen[i].then(|| format!("column {name} appears twice")));
                seen[i] = true;
                fields.push(Some(i));
            } else {
                problem = problem.or(Some(format!(
                    "unknown column {name:?}: expected the header {expected}"
                )));
            }
        }
        let missing = std::iter::once("id")
            .filter(|_| !seen_id)
            .chain(
                self.columns
                    .iter()
                    .zip(seen)
                    .filter(|(_, s)| !s)
                    .map(|(c, _)| *c),
            )
            .collect::<Vec<_>>();
        if let Some(problem) = problem {
            return Err(self.error(self.line, problem));
        }
        if !missing.is_empty() {
            return Err(self.error(
                self.line,
                format!(
                    "missing column {}: expected the header {expected}",
                    missing.join(", ")
                ),
            ));
        }
        self.fields = fields;
        Ok(())
    }

    /// The next record, or `None` at the end of the file.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record>, Failure> {
        let columns = self.columns;
        let width = self.fields.len();
        let Some(start) = self.next_line()? else {
            return Ok(None);
        };
        let text = self.buf[start..].trim();
        let found = text.split(',').count();
        let mut record = Record {
            line: self.line,
            id: 0,
            coords: [0.0; MAX_COORDS],
        };
        let problem = if found == width {
            text.split(',')
                .map(str::trim)
                .zip(&self.fields)
                .find_map(|(value, field)| match *field {
                    None => match value.parse::<u64>() {
                        Ok(id) => {
                            record.id = id;
                            None
                        }
                        Err(_) => Some(format!("id: {value:?} is not an unsigned 64-bit integer")),
                    },
                    Some(i) => match value.parse::<f64>() {
                        Ok(v) if v.is_finite() => {
                            record.coords[i] = v;
                            None
                        }
                        Ok(_) => Some(format!("{}: {value} is not a finite number", columns[i])),
                        Err(_) => Some(format!("{}: {value:?} is not a number", columns[i])),
                    },
                })
        } else {
            Some(format!(
                "expected {width} fields ({}), found {found}",
                self.expected()
            ))
        };
        match problem {
            Some(problem) => Err(self.error(record.line, problem)),
            None => Ok(Some(record)),
        }
    }
}
