//! The output of `--plan` and `--simulate`: rows of cells written as
//! aligned columns, CSV or a JSON array of objects (`--format`), one row at
//! a time. Table widths are decided before the first row (from bounds the
//! caller knows), so a plan of four billion rows is never held in memory.

use std::io::{self, Write};

/// `--format`: how `--plan` and `--simulate` write their rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for people
    Table,
    /// Comma-separated values with a header row
    Csv,
    /// One JSON array of objects
    Json,
}

/// One cell: numbers stay numbers in JSON, text is quoted.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Int(u128),
    /// A number shown with this many decimals.
    Num(f64, usize),
    Text(String),
    /// No value (an undefined mean): `-` in a table, empty in CSV, null in JSON.
    Missing,
}

impl Cell {
    fn write_plain(&self, out: &mut String) {
        use std::fmt::Write as _;
        let _ = match self {
            Cell::Int(n) => write!(out, "{n}"),
            Cell::Num(x, decimals) => write!(out, "{x:.decimals$}"),
            Cell::Text(text) => write!(out, "{text}"),
            Cell::Missing => Ok(()),
        };
    }

    fn plain(&self) -> String {
        let mut out = String::new();
        self.write_plain(&mut out);
        out
    }
}

/// A column: its header, whether it holds text (left-aligned in a table),
/// and the widest value it can hold (the header's width is added here).
#[derive(Clone, Debug)]
pub struct Column {
    pub name: &'static str,
    pub text: bool,
    pub width: usize,
}

impl Column {
    pub fn number(name: &'static str, widest: u128) -> Self {
        Column {
            name,
            text: false,
            width: digits(widest),
        }
    }
}

/// Decimal digits of `n`.
pub fn digits(n: u128) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Writes rows as they come; `finish` closes a JSON array.
pub struct Writer<W: Write> {
    out: W,
    format: Format,
    columns: Vec<Column>,
    rows: u64,
    /// The line being built, reused so a row costs no allocation.
    line: String,
    cell: String,
}

impl<W: Write> Writer<W> {
    /// Writes the header (table, CSV) and returns the writer for the rows.
    pub fn start(out: W, format: Format, mut columns: Vec<Column>) -> io::Result<Self> {
        for column in &mut columns {
            column.width = column.width.max(column.name.len());
        }
        let mut writer = Writer {
            out,
            format,
            columns,
            rows: 0,
            line: String::new(),
            cell: String::new(),
        };
        match format {
            Format::Table => {
                let names: Vec<Cell> = writer
                    .columns
                    .iter()
                    .map(|c| Cell::Text(c.name.into()))
                    .collect();
                writer.table_line(&names)?;
            }
            Format::Csv => {
                let names: Vec<&str> = writer.columns.iter().map(|c| c.name).collect();
                writeln!(writer.out, "{}", names.join(","))?;
            }
            Format::Json => {}
        }
        Ok(writer)
    }

    pub fn row(&mut self, cells: &[Cell]) -> io::Result<()> {
        match self.format {
            Format::Table => self.table_line(cells)?,
            Format::Csv => self.csv_line(cells)?,
            Format::Json => self.json_object(cells)?,
        }
        self.rows += 1;
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<W> {
        if self.format == Format::Json {
            let end = if self.rows == 0 { "[]\n" } else { "]\n" };
            self.out.write_all(end.as_bytes())?;
        }
        Ok(self.out)
    }

    /// Right-aligned numbers, left-aligned text, two spaces between columns.
    fn table_line(&mut self, cells: &[Cell]) -> io::Result<()> {
        self.line.clear();
        for (i, (cell, column)) in cells.iter().zip(&self.columns).enumerate() {
            self.cell.clear();
            match cell {
                Cell::Missing => self.cell.push('-'),
                _ => cell.write_plain(&mut self.cell),
            }
            if i > 0 {
                self.line.push_str("  ");
            }
            let pad = column.width.saturating_sub(self.cell.chars().count());
            if !column.text {
                self.line.extend(std::iter::repeat_n(' ', pad));
            }
            self.line.push_str(&self.cell);
            if column.text {
                self.line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        self.line.truncate(self.line.trim_end().len());
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn csv_line(&mut self, cells: &[Cell]) -> io::Result<()> {
        self.line.clear();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            // Our text cells are strategy names: no commas or quotes to escape.
            cell.write_plain(&mut self.line);
        }
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())
    }

    fn json_object(&mut self, cells: &[Cell]) -> io::Result<()> {
        self.line.clear();
        self.line
            .push_str(if self.rows == 0 { "[{" } else { ",\n {" });
        for (i, (cell, column)) in cells.iter().zip(&self.columns).enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            self.line.push('"');
            self.line.push_str(column.name);
            self.line.push_str("\":");
            if matches!(cell, Cell::Text(_)) {
                self.line.push('"');
                cell.write_plain(&mut self.line);
                self.line.push('"');
            } else if matches!(cell, Cell::Missing) {
                self.line.push_str("null");
            } else {
                cell.write_plain(&mut self.line);
            }
        }
        self.line.push('}');
        self.out.write_all(self.line.as_bytes())
    }
}

/// A whole table already in memory (`--simulate`'s few summary rows):
/// widths come from the rows themselves.
pub struct Report {
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Cell>>,
}

impl Report {
    pub fn render(&self, format: Format) -> String {
        let columns = self
            .columns
            .iter()
            .enumerate()
            .map(|(i, &name)| Column {
                name,
                text: self
                    .rows
                    .first()
                    .is_some_and(|r| matches!(r[i], Cell::Text(_))),
                width: self
                    .rows
                    .iter()
                    .map(|r| r[i].plain().chars().count().max(1))
                    .max()
                    .unwrap_or(0),
            })
            .collect();
        let write = || -> io::Result<Vec<u8>> {
            let mut writer = Writer::start(Vec::new(), format, columns)?;
            for row in &self.rows {
                writer.row(row)?;
            }
            writer.finish()
        };
        // Writing to memory cannot fail.
        String::from_utf8_lossy(&write().unwrap_or_default()).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> Report {
        Report {
            columns: vec!["name", "n", "x"],
            rows: vec![
                vec![Cell::Text("full".into()), Cell::Int(10), Cell::Num(1.25, 1)],
                vec![
                    Cell::Text("decorrelated".into()),
                    Cell::Int(200),
                    Cell::Num(3.0, 1),
                ],
            ],
        }
    }

    #[test]
    fn table_aligns_columns() {
        assert_eq!(
            report().render(Format::Table),
            "name            n    x\nfull           10  1.2\ndecorrelated  200  3.0\n"
        );
    }

    #[test]
    fn csv_has_a_header_row() {
        assert_eq!(
            report().render(Format::Csv),
            "name,n,x\nfull,10,1.2\ndecorrelated,200,3.0\n"
        );
    }

    #[test]
    fn json_is_an_array_of_objects() {
        assert_eq!(
            report().render(Format::Json),
            "[{\"name\":\"full\",\"n\":10,\"x\":1.2},\n {\"name\":\"decorrelated\",\"n\":200,\"x\":3.0}]\n"
        );
        let empty = Report {
            columns: vec!["a"],
            rows: vec![],
        };
        assert_eq!(empty.render(Format::Json), "[]\n");
    }

    #[test]
    fn a_missing_value_is_a_dash_nothing_or_null() {
        let report = Report {
            columns: vec!["name", "lag"],
            rows: vec![
                vec![Cell::Text("a".into()), Cell::Missing],
                vec![Cell::Text("b".into()), Cell::Num(1.5, 1)],
            ],
        };
        assert_eq!(
            report.render(Format::Table),
            "name  lag\na       -\nb     1.5\n"
        );
        assert_eq!(report.render(Format::Csv), "name,lag\na,\nb,1.5\n");
        assert_eq!(
            report.render(Format::Json),
            "[{\"name\":\"a\",\"lag\":null},\n {\"name\":\"b\",\"lag\":1.5}]\n"
        );
    }

    #[test]
    fn streamed_widths_come_from_the_declared_bounds() {
        let columns = vec![Column::number("n", 99_999), Column::number("total", 5)];
        let mut writer = Writer::start(Vec::new(), Format::Table, columns).unwrap();
        writer.row(&[Cell::Int(7), Cell::Int(3)]).unwrap();
        let out = String::from_utf8(writer.finish().unwrap()).unwrap();
        assert_eq!(out, "    n  total\n    7      3\n");
        assert_eq!(
            (digits(0), digits(9), digits(10), digits(u128::MAX)),
            (1, 1, 2, 39)
        );
    }
}
