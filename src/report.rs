//! The output of `--plan` and `--simulate`: one table of rows, written as
//! aligned columns, CSV or a JSON array of objects (`--format`).

use std::fmt::Write as _;

use crate::cli::Format;

/// One cell: numbers stay numbers in JSON, text is quoted.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Int(u128),
    /// A number shown with this many decimals.
    Num(f64, usize),
    Text(String),
}

impl Cell {
    fn plain(&self) -> String {
        match self {
            Cell::Int(n) => n.to_string(),
            Cell::Num(x, decimals) => format!("{x:.decimals$}"),
            Cell::Text(text) => text.clone(),
        }
    }
}

pub struct Report {
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Cell>>,
}

impl Report {
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Table => self.table(),
            Format::Csv => self.csv(),
            Format::Json => self.json(),
        }
    }

    /// Right-aligned numbers, left-aligned text, two spaces between columns.
    fn table(&self) -> String {
        let cells: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| row.iter().map(Cell::plain).collect())
            .collect();
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|i| {
                cells
                    .iter()
                    .map(|r| r[i].len())
                    .chain([self.columns[i].len()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let text_column: Vec<bool> = (0..self.columns.len())
            .map(|i| {
                self.rows
                    .first()
                    .is_some_and(|r| matches!(r[i], Cell::Text(_)))
            })
            .collect();
        let line = |values: &[&str]| {
            let mut out = String::new();
            for (i, value) in values.iter().enumerate() {
                let sep = if i == 0 { "" } else { "  " };
                let width = widths[i];
                if text_column[i] {
                    let _ = write!(out, "{sep}{value:<width$}");
                } else {
                    let _ = write!(out, "{sep}{value:>width$}");
                }
            }
            out.truncate(out.trim_end().len());
            out.push('\n');
            out
        };
        let mut out = line(&self.columns);
        for row in &cells {
            out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
        }
        out
    }

    fn csv(&self) -> String {
        let mut out = self.columns.join(",");
        out.push('\n');
        for row in &self.rows {
            // Our text cells are strategy names: no commas or quotes to escape.
            out.push_str(&row.iter().map(Cell::plain).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }

    fn json(&self) -> String {
        let objects: Vec<String> = self
            .rows
            .iter()
            .map(|row| {
                let fields: Vec<String> = self
                    .columns
                    .iter()
                    .zip(row)
                    .map(|(name, cell)| match cell {
                        Cell::Text(text) => format!("\"{name}\":\"{text}\""),
                        number => format!("\"{name}\":{}", number.plain()),
                    })
                    .collect();
                format!("{{{}}}", fields.join(","))
            })
            .collect();
        format!("[{}]\n", objects.join(",\n "))
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
    }
}
