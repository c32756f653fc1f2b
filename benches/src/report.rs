//! Benchmark records, the printed table, the JSON file and an SVG bar chart.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::stats::Stats;

/// One measured workload on one executor.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    /// Suite name.
    pub suite: String,
    /// Workload name (e.g. "sort_pairs 16M bits 0..64").
    pub workload: String,
    /// Executor name (e.g. "cpu:rayon (16 threads, x86-64-v4)", "torch").
    pub executor: String,
    /// Elements processed per run.
    pub elements: u64,
    /// Bytes moved per run by the minimal algorithm (each input read once, each output
    /// written once), for bandwidth figures; 0 where meaningless.
    pub bytes: u64,
    /// Timing summary.
    pub stats: Stats,
    /// What else the workload produced, for the reader (e.g. a tree's leaves, depth and
    /// passes); empty for most suites.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub info: String,
}

impl Record {
    /// Elements per second at the median.
    pub fn throughput(&self) -> f64 {
        self.elements as f64 / (self.stats.median_ms * 1e-3)
    }

    /// GB/s at the median (bytes as defined in [`Record::bytes`]).
    pub fn bandwidth_gbs(&self) -> f64 {
        self.bytes as f64 / (self.stats.median_ms * 1e-3) / 1e9
    }
}

/// Where and when a report was made.
#[derive(Debug, Clone, Serialize)]
pub struct Environment {
    /// Host name.
    pub host: String,
    /// CPU model and logical core count.
    pub cpu: String,
    /// GPU names seen by the executors that ran.
    pub gpus: Vec<String>,
    /// Git commit the binary was built from.
    pub commit: String,
    /// UTC time of the run (seconds since the epoch).
    pub unix_time: u64,
}

impl Environment {
    /// Reads the environment of this process. The commit comes from `ORRERY_COMMIT`
    /// (set by xtask and by device bundles), else `git rev-parse`, else "unknown".
    pub fn detect() -> Self {
        let host = std::fs::read_to_string("/etc/hostname").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned());
        let model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let commit = std::env::var("ORRERY_COMMIT").ok().or_else(|| {
            std::process::Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        });
        let unix_time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        Self {
            host,
            cpu: format!("{model} ({cores} logical cores)"),
            gpus: Vec::new(),
            commit: commit.unwrap_or_else(|| "unknown".into()),
            unix_time,
        }
    }
}

/// A suite's complete output.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Where it ran.
    pub environment: Environment,
    /// What was measured.
    pub records: Vec<Record>,
}

impl Report {
    /// A fixed-width table, one row per record.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# {} @ {} on {} {:?}",
            self.records.first().map_or("", |r| r.suite.as_str()),
            self.environment.commit,
            self.environment.cpu,
            self.environment.gpus
        );
        let _ = writeln!(
            s,
            "{:<40} {:<66} {:>10} {:>10} {:>10} {:>12} {:>9}",
            "workload", "executor", "median ms", "p10 ms", "p90 ms", "Melem/s", "GB/s"
        );
        for r in &self.records {
            let gbs = if r.bytes > 0 { format!("{:.1}", r.bandwidth_gbs()) } else { "-".into() };
            let _ = writeln!(
                s,
                "{:<40} {:<66} {:>10.3} {:>10.3} {:>10.3} {:>12.1} {:>9}{}",
                r.workload,
                truncate(&r.executor, 66),
                r.stats.median_ms,
                r.stats.p10_ms,
                r.stats.p90_ms,
                r.throughput() / 1e6,
                gbs,
                if r.info.is_empty() { String::new() } else { format!("  {}", r.info) }
            );
        }
        s
    }

    /// A Markdown table of medians in ms with one row per workload and one column per
    /// executor and variant, for suites whose workload names end in variant tokens: the
    /// first `row_tokens` words of a workload name make the row (`"uniform 3D
    /// 16x1024"`), the executor's first word and the remaining words the column
    /// (`"cuda:0 f32 Hybrid"`). Rows and columns keep the order of first appearance.
    pub fn pivot(&self, row_tokens: usize) -> String {
        let mut rows: Vec<String> = Vec::new();
        let mut cols: Vec<String> = Vec::new();
        let mut cells = std::collections::HashMap::new();
        for r in &self.records {
            let words: Vec<&str> = r.workload.split_whitespace().collect();
            let split = row_tokens.min(words.len());
            let row = words[..split].join(" ");
            let exec = r.executor.split_whitespace().next().unwrap_or("?");
            let col = std::iter::once(exec).chain(words[split..].iter().copied()).collect::<Vec<_>>().join(" ");
            if !rows.contains(&row) {
                rows.push(row.clone());
            }
            if !cols.contains(&col) {
                cols.push(col.clone());
            }
            cells.insert((row, col), r.stats.median_ms);
        }
        let mut s = format!("| workload | {} |\n|---|{}\n", cols.join(" | "), "---|".repeat(cols.len()));
        for row in &rows {
            let _ = write!(s, "| {row} |");
            for col in &cols {
                match cells.get(&(row.clone(), col.clone())) {
                    Some(ms) => {
                        let _ = write!(s, " {ms:.3} |");
                    }
                    None => s.push_str(" - |"),
                }
            }
            s.push('\n');
        }
        s
    }

    /// Writes `<dir>/<suite>.json` and `<dir>/<suite>.svg`.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write(&self, dir: &Path, suite: &str) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{suite}.json")), serde_json::to_string_pretty(self)?)?;
        std::fs::write(dir.join(format!("{suite}.svg")), self.svg())?;
        Ok(())
    }

    /// A horizontal bar chart of medians (log scale), one bar per record.
    pub fn svg(&self) -> String {
        let row = 18.0;
        let width = 900.0;
        let label = 420.0;
        let height = row * (self.records.len() as f64 + 2.0);
        let max = self.records.iter().map(|r| r.stats.median_ms).fold(1e-3, f64::max);
        let min = self.records.iter().map(|r| r.stats.median_ms).fold(max, f64::min).max(1e-4);
        let (lmin, lmax) = ((min / 2.0).log10(), max.log10());
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"monospace\" font-size=\"11\">\n"
        );
        for (i, r) in self.records.iter().enumerate() {
            let y = row * (i as f64 + 1.0);
            let frac = ((r.stats.median_ms.log10() - lmin) / (lmax - lmin).max(1e-9)).clamp(0.02, 1.0);
            let w = frac * (width - label - 80.0);
            let _ = writeln!(
                s,
                "<text x=\"4\" y=\"{:.1}\">{} | {}</text><rect x=\"{label}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"#4a7ab5\"/><text x=\"{:.1}\" y=\"{:.1}\">{:.3} ms</text>",
                y + 12.0,
                xml_escape(&r.workload),
                xml_escape(truncate(&r.executor, 22)),
                y + 3.0,
                row - 6.0,
                label + w + 4.0,
                y + 12.0,
                r.stats.median_ms
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

fn truncate(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
