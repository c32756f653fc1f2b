//! The committed JSON a page's Current table comes from, read into [`Row`]s.
//!
//! Two shapes are read:
//! - an `orrery-bench` report (`Report::write` of `benches/src/report.rs`): `environment`
//!   (`commit`, `unix_time`, `cpu`, `gpus`) and `records` (`workload`, `executor`,
//!   `elements`, `bytes`, `stats.{median_ms, p10_ms, p90_ms}`, optional `info`);
//! - a rows summary (`keys.json`, `primitives.json`, `balltree.json`): `rows`, each with
//!   its own `workload`, `executor`, `commit`, `date`, `gpu` or `host`, `median_ms` (or
//!   null), optional `p10_ms`/`p90_ms`, and what else it recorded (`session`,
//!   `derived_as_recorded`, `metric: "reference_over_ours"` with `ratio` and `rounds`,
//!   `range_ms` with `spread`), which becomes the row's note.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// One row of a generated table, whatever shape it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The workload.
    pub what: String,
    /// The executor, with the GPU's full name shortened to its backend (`cuda`, `wgpu`)
    /// when the GPU column names it.
    pub executor: String,
    /// The GPU the executor ran on, or the host's CPU for CPU executors; empty if unknown.
    pub gpu: String,
    /// Commit, 7 characters; empty if not recorded.
    pub commit: String,
    /// UTC date, `YYYY-MM-DD`.
    pub date: String,
    /// Median time.
    pub median_ms: Option<f64>,
    /// 10th percentile.
    pub p10_ms: Option<f64>,
    /// 90th percentile.
    pub p90_ms: Option<f64>,
    /// Elements per run (reports only).
    pub elements: Option<u64>,
    /// Bytes per run (reports only; 0 where meaningless).
    pub bytes: Option<u64>,
    /// The record's `info` (reports only).
    pub info: String,
    /// What a rows summary recorded besides the times (session, derived figures, ratios,
    /// ranges).
    pub note: String,
    /// From a rows summary: its numbers are shown as recorded, not rounded.
    pub transcribed: bool,
}

/// Which records of a source go into the table: those whose workload and executor match
/// the globs (`*` matches any text; an absent glob matches everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Select {
    /// Glob on the workload.
    pub workload: Option<String>,
    /// Glob on the executor as recorded (before shortening).
    pub executor: Option<String>,
}

impl Select {
    fn keeps(&self, workload: &str, executor: &str) -> bool {
        self.workload.as_deref().is_none_or(|g| glob(g, workload))
            && self.executor.as_deref().is_none_or(|g| glob(g, executor))
    }
}

/// `text` matches `pattern`, where `*` stands for any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// A record of a source before selection: its rows-to-be and the executor as recorded.
struct Candidate {
    row: Row,
    raw_executor: String,
}

/// Reads the rows of `file` (shown in errors as `shown`) that `select` keeps: all of them
/// when `select` is empty, else in the order of the rules, each row once (at its first
/// matching rule), in file order within a rule.
pub fn read(file: &Path, shown: &str, select: &[Select]) -> Result<Vec<Row>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("{shown}: cannot be read"))?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{shown}: not valid JSON"))?;
    let candidates = parse(&value).with_context(|| format!("{shown}: not a report or rows summary this task reads"))?;
    if select.is_empty() {
        return Ok(candidates.into_iter().map(|c| c.row).collect());
    }
    let mut taken = vec![false; candidates.len()];
    let mut rows = Vec::new();
    for rule in select {
        for (i, c) in candidates.iter().enumerate() {
            if !taken[i] && rule.keeps(&c.row.what, &c.raw_executor) {
                taken[i] = true;
                rows.push(c.row.clone());
            }
        }
    }
    Ok(rows)
}

fn parse(value: &Value) -> Result<Vec<Candidate>> {
    if value.get("environment").is_some() && value.get("records").is_some() {
        parse_report(value)
    } else if let Some(rows) = value.get("rows") {
        parse_rows(rows)
    } else {
        bail!(
            "expected an orrery-bench report (`environment` and `records`) or a rows summary (`rows`), \
             found neither"
        )
    }
}

fn string(v: &Value, key: &str) -> Result<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned).with_context(|| format!("`{key}` is not a string"))
}

fn opt_string(v: &Value, key: &str) -> Result<Option<String>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => bail!("`{key}` is neither a string nor null"),
    }
}

fn opt_f64(v: &Value, key: &str) -> Result<Option<f64>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => x.as_f64().map(Some).with_context(|| format!("`{key}` is neither a number nor null")),
    }
}

fn u64_of(v: &Value, key: &str) -> Result<u64> {
    v.get(key).and_then(Value::as_u64).with_context(|| format!("`{key}` is not a non-negative integer"))
}

/// The first 7 characters of a commit (the pages' convention).
fn short_commit(commit: &str) -> String {
    commit.chars().take(7).collect()
}

fn parse_report(value: &Value) -> Result<Vec<Candidate>> {
    let env = &value["environment"];
    let commit = string(env, "commit").context("environment")?;
    let unix_time = u64_of(env, "unix_time").context("environment")?;
    let cpu = string(env, "cpu").context("environment")?;
    let gpus: Vec<String> = env
        .get("gpus")
        .and_then(Value::as_array)
        .context("environment: `gpus` is not an array")?
        .iter()
        .map(|g| g.as_str().map(str::to_owned).context("environment: a GPU name is not a string"))
        .collect::<Result<_>>()?;
    let records = value["records"].as_array().context("`records` is not an array")?;
    let mut out = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        let ctx = || format!("record {i}");
        let raw_executor = string(r, "executor").with_context(ctx)?;
        let stats = r.get("stats").with_context(|| format!("record {i}: no `stats`"))?;
        let median =
            opt_f64(stats, "median_ms").with_context(ctx)?.with_context(|| format!("record {i}: no median"))?;
        // The GPU this executor ran on: the longest GPU name it contains.
        let gpu = gpus.iter().filter(|g| raw_executor.contains(g.as_str())).max_by_key(|g| g.len());
        let (executor, gpu) = match gpu {
            Some(g) => (raw_executor.replace(g.as_str(), g.split(':').next().unwrap_or(g)), g.clone()),
            None if raw_executor.starts_with("cpu") => (raw_executor.clone(), cpu.clone()),
            None => (raw_executor.clone(), String::new()),
        };
        out.push(Candidate {
            row: Row {
                what: string(r, "workload").with_context(ctx)?,
                executor,
                gpu,
                commit: short_commit(&commit),
                date: utc_date(unix_time),
                median_ms: Some(median),
                p10_ms: opt_f64(stats, "p10_ms").with_context(ctx)?,
                p90_ms: opt_f64(stats, "p90_ms").with_context(ctx)?,
                elements: Some(u64_of(r, "elements").with_context(ctx)?),
                bytes: Some(u64_of(r, "bytes").with_context(ctx)?),
                info: opt_string(r, "info").with_context(ctx)?.unwrap_or_default(),
                note: String::new(),
                transcribed: false,
            },
            raw_executor,
        });
    }
    Ok(out)
}

fn parse_rows(rows: &Value) -> Result<Vec<Candidate>> {
    let rows = rows.as_array().context("`rows` is not an array")?;
    let mut out = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let ctx = || format!("row {i}");
        let executor = string(r, "executor").with_context(ctx)?;
        let mut notes = Vec::new();
        if let Some(session) = opt_string(r, "session").with_context(ctx)? {
            notes.push(session);
        }
        if let Some(derived) = opt_string(r, "derived_as_recorded").with_context(ctx)? {
            notes.push(derived);
        }
        if let Some(ratio) = opt_f64(r, "ratio").with_context(ctx)? {
            let metric = opt_string(r, "metric").with_context(ctx)?.unwrap_or_default();
            let what = if metric == "reference_over_ours" { "reference / ours" } else { "ratio" };
            let rounds = match r.get("rounds").and_then(Value::as_array) {
                Some(rounds) => {
                    let rounds: Vec<String> = rounds
                        .iter()
                        .map(|x| {
                            x.as_f64()
                                .map(|x| format!("{x:.2}"))
                                .with_context(|| format!("row {i}: a round is not a number"))
                        })
                        .collect::<Result<_>>()?;
                    format!(" (rounds {})", rounds.join(" / "))
                }
                None => String::new(),
            };
            notes.push(format!("{what} {ratio:.2}x{rounds}"));
        }
        if let Some(range) = r.get("range_ms").and_then(Value::as_array) {
            let [lo, hi] = range.as_slice() else { bail!("row {i}: `range_ms` is not [low, high]") };
            let (lo, hi) = (
                lo.as_f64().with_context(|| format!("row {i}: `range_ms` low is not a number"))?,
                hi.as_f64().with_context(|| format!("row {i}: `range_ms` high is not a number"))?,
            );
            let spread = opt_string(r, "spread").with_context(ctx)?;
            let spread = spread.map_or_else(String::new, |s| format!(" ({s})"));
            notes.push(format!("{}-{} ms{spread}", super::render::recorded(lo), super::render::recorded(hi)));
        }
        let gpu = match opt_string(r, "gpu").with_context(ctx)? {
            Some(g) => g,
            None => opt_string(r, "host").with_context(ctx)?.unwrap_or_default(),
        };
        out.push(Candidate {
            row: Row {
                what: string(r, "workload").with_context(ctx)?,
                executor: executor.clone(),
                gpu,
                commit: opt_string(r, "commit").with_context(ctx)?.as_deref().map_or_else(String::new, short_commit),
                date: string(r, "date").with_context(ctx)?,
                median_ms: opt_f64(r, "median_ms").with_context(ctx)?,
                p10_ms: opt_f64(r, "p10_ms").with_context(ctx)?,
                p90_ms: opt_f64(r, "p90_ms").with_context(ctx)?,
                elements: None,
                bytes: None,
                info: String::new(),
                note: notes.join("; "),
                transcribed: true,
            },
            raw_executor: executor,
        });
    }
    Ok(out)
}

/// `YYYY-MM-DD` (UTC) of a Unix time (the civil-from-days algorithm of H. Hinnant).
pub fn utc_date(unix_time: u64) -> String {
    let days = i64::try_from(unix_time / 86_400).unwrap_or(i64::MAX / 2);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
