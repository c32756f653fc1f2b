//! The generated Markdown table and SVG chart of a page, with fixed number formatting.

use std::fmt::Write as _;

use anyhow::{Result, bail};

use super::source::Row;

/// A column after the fixed ones (what, executor, GPU / host, commit, date, median ms,
/// [p10, p90] ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Millions of elements per second at the median.
    MelemPerS,
    /// GB/s at the median from the record's bytes (`-` where it has none).
    GbPerS,
    /// The record's `info`, verbatim.
    Info,
    /// The whitespace-separated word of `info` just before this text (e.g. the rate before
    /// `interactions/s`), verbatim.
    InfoBefore(String),
    /// The word of `info` just after this text (e.g. the error after `p99`), verbatim.
    InfoAfter(String),
    /// The note of a rows summary (session, derived figures, ratios, ranges).
    Note,
}

impl Value {
    /// Parses the manifest's spelling: `melem_per_s`, `gb_per_s`, `info`, `note`,
    /// `info_before:TEXT`, `info_after:TEXT`.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "melem_per_s" => Self::MelemPerS,
            "gb_per_s" => Self::GbPerS,
            "info" => Self::Info,
            "note" => Self::Note,
            _ => match s.split_once(':') {
                Some(("info_before", text)) if !text.trim().is_empty() => Self::InfoBefore(text.trim().to_owned()),
                Some(("info_after", text)) if !text.trim().is_empty() => Self::InfoAfter(text.trim().to_owned()),
                _ => bail!(
                    "unknown column value `{s}` (melem_per_s, gb_per_s, info, note, info_before:TEXT, info_after:TEXT)"
                ),
            },
        })
    }

    fn cell(&self, row: &Row) -> String {
        let rate = |amount: Option<u64>, scale: f64| match (amount, row.median_ms) {
            (Some(n), Some(ms)) if n > 0 && ms > 0.0 => num(n as f64 / (ms * 1e-3) / scale),
            _ => "-".into(),
        };
        match self {
            Self::MelemPerS => rate(row.elements, 1e6),
            Self::GbPerS => rate(row.bytes, 1e9),
            Self::Info => row.info.clone(),
            Self::Note => row.note.clone(),
            Self::InfoBefore(text) => row
                .info
                .find(text.as_str())
                .and_then(|i| row.info[..i].split_whitespace().next_back())
                .map_or_else(|| "-".into(), |w| trim_word(w).to_owned()),
            Self::InfoAfter(text) => row
                .info
                .find(text.as_str())
                .and_then(|i| row.info[i + text.len()..].split_whitespace().next())
                .map_or_else(|| "-".into(), |w| trim_word(w).to_owned()),
        }
    }
}

fn trim_word(w: &str) -> &str {
    w.trim_end_matches([';', ','])
}

/// A column of the table: its header and what it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Header.
    pub label: String,
    /// Content.
    pub value: Value,
}

/// A measured number with 4 significant digits (no exponent; integers from 1000 on):
/// 67.779518 -> `67.78`, 0.08752 -> `0.08752`, 1.0998 -> `1.100`, 3561.4 -> `3561`.
pub fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let digits = |x: f64| (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let decimals = digits(x);
    let s = format!("{x:.decimals$}");
    // Rounding may carry into a new leading digit (9.99996 -> 10.000): one decimal less.
    let rounded: f64 = s.parse().unwrap_or(x);
    if rounded != 0.0 && digits(rounded) < decimals { format!("{x:.*}", digits(rounded)) } else { s }
}

/// A number as a rows summary recorded it (its shortest exact spelling: 9.6, 328,
/// 28.742), so that a transcribed figure is shown with the digits it was given.
pub fn recorded(x: f64) -> String {
    format!("{x}")
}

/// A row's time, as [`num`] for measured rows and [`recorded`] for transcribed ones.
fn time(row: &Row, x: f64) -> String {
    if row.transcribed { recorded(x) } else { num(x) }
}

/// `|` would end a Markdown table cell; line breaks would end the row.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The Markdown table of `rows`: what, executor, GPU / host, commit, date, median ms,
/// [p10, p90] ms, then `columns`.
pub fn table(rows: &[Row], columns: &[Column]) -> String {
    let mut s = String::from("| what | executor | GPU / host | commit | date | median ms | [p10, p90] ms |");
    for c in columns {
        let _ = write!(s, " {} |", cell(&c.label));
    }
    s.push_str("\n|---|---|---|---|---|---|---|");
    s.push_str(&"---|".repeat(columns.len()));
    s.push('\n');
    for r in rows {
        let spread = match (r.p10_ms, r.p90_ms) {
            (Some(lo), Some(hi)) => format!("[{}, {}]", time(r, lo), time(r, hi)),
            (Some(lo), None) => format!("p10 {}", time(r, lo)),
            (None, Some(hi)) => format!("p90 {}", time(r, hi)),
            (None, None) => String::new(),
        };
        let _ = write!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            cell(&r.what),
            cell(&r.executor),
            cell(&r.gpu),
            if r.commit.is_empty() { "not recorded" } else { r.commit.as_str() },
            cell(&r.date),
            r.median_ms.map_or_else(|| "-".into(), |m| time(r, m)),
            spread
        );
        for c in columns {
            let _ = write!(s, " {} |", cell(&c.value.cell(r)));
        }
        s.push('\n');
    }
    s
}

/// A horizontal bar chart of the medians (log scale), one bar per row that has one: the
/// chart `orrery-bench` writes beside its JSON (`Report::svg` of `benches/src/report.rs`),
/// except that each label is the whole "what | executor" of the table and the label
/// column is as wide as the longest one (so that bars of different executors never share
/// a label).
pub fn svg(rows: &[Row]) -> String {
    let bars: Vec<(String, f64)> =
        rows.iter().filter_map(|r| r.median_ms.map(|m| (format!("{} | {}", r.what, r.executor), m))).collect();
    let row = 18.0;
    // Monospace 11 px: about 6.7 px a character.
    let label = (8.0 + 6.7 * bars.iter().map(|b| b.0.chars().count()).max().unwrap_or(0) as f64).round();
    let bar_width = 400.0;
    let width = label + bar_width + 80.0;
    let height = row * (bars.len() as f64 + 2.0);
    let max = bars.iter().map(|b| b.1).fold(1e-3, f64::max);
    let min = bars.iter().map(|b| b.1).fold(max, f64::min).max(1e-4);
    let (lmin, lmax) = ((min / 2.0).log10(), max.log10());
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"monospace\" font-size=\"11\">\n"
    );
    for (i, (text, median)) in bars.iter().enumerate() {
        let y = row * (i as f64 + 1.0);
        let frac = ((median.log10() - lmin) / (lmax - lmin).max(1e-9)).clamp(0.02, 1.0);
        let w = frac * bar_width;
        let _ = writeln!(
            s,
            "<text x=\"4\" y=\"{:.1}\">{}</text><rect x=\"{label}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"#4a7ab5\"/><text x=\"{:.1}\" y=\"{:.1}\">{median:.3} ms</text>",
            y + 12.0,
            xml_escape(text),
            y + 3.0,
            row - 6.0,
            label + w + 4.0,
            y + 12.0,
        );
    }
    s.push_str("</svg>\n");
    s
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
