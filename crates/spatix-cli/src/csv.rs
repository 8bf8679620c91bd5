//! A strict, streaming reader of CSV files (RFC 4180) with a header naming the columns, as the
//! batch commands take them. Every problem is reported as `FILE:LINE: reason`.
//!
//! * Fields are separated by commas; a field may be quoted (`"..."`, with `""` for a quote),
//!   and a quoted field may hold commas and line ends: its record then spans lines, and is
//!   reported at the line where it starts.
//! * The header names an `id` column and the coordinate columns, in any order, each once;
//!   other columns are ignored (their fields are not kept, however long). Every record has as
//!   many fields as the header.
//! * Spaces around names and values (quoted or not) are ignored; so are a UTF-8 byte-order
//!   mark, Windows line ends and blank lines.
//! * `id` is an unsigned 64-bit integer; coordinates are finite numbers (f64).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::failure::Failure;

/// Most coordinate columns a record may have (boxes have four).
pub(crate) const MAX_COORDS: usize = 4;

/// Longest field kept (a name of the header, or a value of a needed column), in bytes: a
/// number needs far fewer, and a quote left open is refused within this much.
const MAX_FIELD: usize = 1 << 16;

/// Longest header shown in messages, in bytes.
const MAX_SHOWN: usize = 80;

/// One record: its line, its id and its coordinates (the first `columns.len()` are used).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    pub(crate) line: u64,
    pub(crate) id: u64,
    pub(crate) coords: [f64; MAX_COORDS],
}

/// What a column of the file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Id,
    /// Coordinate `i` of the reader's columns.
    Coord(usize),
    Ignored,
}

/// A problem found by the [`Parser`]: at a line, or (`None`) with the file as a whole.
#[derive(Debug)]
struct Problem {
    line: Option<u64>,
    reason: String,
}

/// Splits a file into records and fields, keeping the fields asked for.
#[derive(Debug)]
struct Parser {
    reader: BufReader<File>,
    /// Lines read so far (line ends consumed).
    line: u64,
    /// The kept fields of the last record, by slot.
    values: Vec<Vec<u8>>,
}

/// Where the parser is within a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the field's first character (spaces skipped).
    Start,
    Unquoted,
    Quoted,
    /// Just after a quote within a quoted field: its end, or the first of `""`.
    Quote,
    /// After a quoted field's closing quote (only spaces may follow).
    After,
}

impl Parser {
    /// Reads the next record that is not blank, keeping field `i` in `values[slot(i)]` when
    /// `slot(i)` is `Some`. Returns the line where the record starts and its number of
    /// fields, or `None` at the end of the file.
    fn record(
        &mut self,
        slot: impl Fn(usize) -> Option<usize>,
    ) -> Result<Option<(u64, usize)>, Problem> {
        'record: loop {
            for value in &mut self.values {
                value.clear();
            }
            let start = self.line + 1;
            let at_start = |reason: String| Problem {
                line: Some(start),
                reason,
            };
            let mut state = State::Start;
            let mut field = 0;
            let mut target = slot(0);
            let mut blank = true;
            loop {
                let buf = self.reader.fill_buf().map_err(|e| Problem {
                    line: None,
                    reason: e.to_string(),
                })?;
                if buf.is_empty() {
                    return match state {
                        State::Quoted => Err(at_start(
                            "a quoted field is never closed (its closing quote is missing)"
                                .to_owned(),
                        )),
                        _ if blank && field == 0 => Ok(None),
                        _ => Ok(Some((start, field + 1))),
                    };
                }
                let mut used = 0;
                let mut ended = false;
                for &byte in buf {
                    used += 1;
                    let mut keep = false;
                    match (state, byte) {
                        (State::Quoted, b'"') => state = State::Quote,
                        (State::Quoted, b'\n') => {
                            self.line += 1;
                            keep = true;
                        }
                        (State::Quoted, _) => keep = true,
                        (State::Quote, b'"') => {
                            state = State::Quoted;
                            keep = true;
                        }
                        (State::Start | State::Quote | State::After, b' ' | b'\t' | b'\r') => {
                            if state == State::Quote {
                                state = State::After;
                            }
                        }
                        (_, b',') => {
                            blank = false;
                            field += 1;
                            target = slot(field);
                            state = State::Start;
                        }
                        (_, b'\n') => {
                            self.line += 1;
                            ended = true;
                            break;
                        }
                        (State::Start, b'"') => {
                            blank = false;
                            state = State::Quoted;
                        }
                        (State::Start | State::Unquoted, _) => {
                            blank = false;
                            state = State::Unquoted;
                            keep = true;
                        }
                        (State::Quote | State::After, _) => {
                            return Err(at_start(format!(
                                "field {}: text after the closing quote of a quoted field (a \
                                 quote within one is written \"\")",
                                field + 1
                            )));
                        }
                    }
                    if let (true, Some(slot)) = (keep, target) {
                        if self.values.len() <= slot {
                            self.values.resize_with(slot + 1, Vec::new);
                        }
                        let value = &mut self.values[slot];
                        if value.len() == MAX_FIELD {
                            return Err(at_start(format!(
                                "field {}: longer than {MAX_FIELD} bytes",
                                field + 1
                            )));
                        }
                        value.push(byte);
                    }
                }
                self.reader.consume(used);
                if ended {
                    if blank && field == 0 {
                        // A blank line: the record starts on the next one.
                        continue 'record;
                    }
                    return Ok(Some((start, field + 1)));
                }
            }
        }
    }
}

/// Reads records with an `id` and the given coordinate columns from one file.
#[derive(Debug)]
pub(crate) struct CsvReader {
    file: String,
    parser: Parser,
    /// Coordinate column names, in the order records return them.
    columns: &'static [&'static str],
    /// What each field of a record holds.
    fields: Vec<Column>,
    /// The header's names, for messages (or where it is, when too long to show).
    header: String,
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
        let mut reader = BufReader::with_capacity(1 << 16, handle);
        let start = reader
            .fill_buf()
            .map_err(|e| Failure::file(&file, e.to_string()))?;
        if start.starts_with("\u{feff}".as_bytes()) {
            reader.consume(3);
        }
        let mut reader = Self {
            file,
            parser: Parser {
                reader,
                line: 0,
                values: Vec::new(),
            },
            columns,
            fields: Vec::new(),
            header: String::new(),
        };
        reader.read_header()?;
        Ok(reader)
    }

    /// The file's name as given, for messages.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// The columns needed, for messages.
    fn expected(&self) -> String {
        format!("id,{}", self.columns.join(","))
    }

    /// An input failure at `line` of this file.
    pub(crate) fn error(&self, line: u64, reason: impl Into<String>) -> Failure {
        Failure::input(&self.file, line, reason)
    }

    fn failure(&self, problem: Problem) -> Failure {
        match problem.line {
            Some(line) => self.error(line, problem.reason),
            None => Failure::file(&self.file, problem.reason),
        }
    }

    fn read_header(&mut self) -> Result<(), Failure> {
        let expected = self.expected();
        let Some((line, count)) = self.parser.record(Some).map_err(|p| self.failure(p))? else {
            return Err(self.error(1, format!("empty file: expected the header {expected}")));
        };
        let names: Vec<String> = (0..count)
            .map(|i| {
                let name = self.parser.values.get(i).map_or(&[][..], Vec::as_slice);
                String::from_utf8_lossy(name).trim().to_owned()
            })
            .collect();
        let mut fields = Vec::with_capacity(count);
        let mut seen_id = false;
        let mut seen = [false; MAX_COORDS];
        for name in &names {
            let column = if name == "id" {
                Column::Id
            } else {
                match self.columns.iter().position(|c| c == name) {
                    Some(i) => Column::Coord(i),
                    None => Column::Ignored,
                }
            };
            let twice = match column {
                Column::Id => std::mem::replace(&mut seen_id, true),
                Column::Coord(i) => std::mem::replace(&mut seen[i], true),
                Column::Ignored => false,
            };
            if twice {
                return Err(self.error(line, format!("column {name} appears twice")));
            }
            fields.push(column);
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
        if !missing.is_empty() {
            return Err(self.error(
                line,
                format!(
                    "missing column {}: the header must name {expected} (in any order; other \
                     columns are ignored)",
                    missing.join(", ")
                ),
            ));
        }
        let shown = names.join(",");
        self.header = if shown.len() <= MAX_SHOWN {
            shown
        } else {
            format!("as the header on line {line}")
        };
        self.fields = fields;
        Ok(())
    }

    /// The next record, or `None` at the end of the file.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record>, Failure> {
        let fields = &self.fields;
        let slot = |i: usize| match fields.get(i) {
            Some(Column::Id) => Some(0),
            Some(Column::Coord(c)) => Some(1 + c),
            Some(Column::Ignored) | None => None,
        };
        let Some((line, found)) = self.parser.record(slot).map_err(|p| self.failure(p))? else {
            return Ok(None);
        };
        let width = self.fields.len();
        if found != width {
            return Err(self.error(
                line,
                format!("expected {width} fields ({}), found {found}", self.header),
            ));
        }
        let text = |slot: usize| {
            let bytes = self.parser.values.get(slot).map_or(&[][..], Vec::as_slice);
            std::str::from_utf8(bytes)
                .map(str::trim)
                .map_err(|_| self.error(line, "not valid UTF-8 text"))
        };
        let value = text(0)?;
        let id = value.parse::<u64>().map_err(|_| {
            self.error(
                line,
                format!("id: {value:?} is not an unsigned 64-bit integer"),
            )
        })?;
        let mut record = Record {
            line,
            id,
            coords: [0.0; MAX_COORDS],
        };
        for (i, name) in self.columns.iter().enumerate() {
            let value = text(1 + i)?;
            record.coords[i] = match value.parse::<f64>() {
                Ok(v) if v.is_finite() => v,
                Ok(_) => {
                    return Err(self.error(line, format!("{name}: {value} is not a finite number")));
                }
                Err(_) => {
                    return Err(self.error(line, format!("{name}: {value:?} is not a number")));
                }
            };
        }
        Ok(Some(record))
    }
}
