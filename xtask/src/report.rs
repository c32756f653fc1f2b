//! `cargo xtask bench report [--check]`: the Current table of every page of
//! `docs/performance/`, generated from committed JSON.
//!
//! `docs/performance/report.json` (the manifest) lists the generated pages. For each it
//! names the `sources` (committed JSON files beside the page, read in that order), an
//! optional `select` (rules `{"workload": GLOB, "executor": GLOB}`, `*` matching any text;
//! rows are taken in the order of the rules, in file order within a rule; without rules
//! every row) and `columns` after the fixed ones (`{"label": ..., "value": ...}`, value one
//! of `melem_per_s`, `gb_per_s`, `info`, `note`, `info_before:TEXT`, `info_after:TEXT`).
//! The table goes between the page's `<!-- report:begin -->` and `<!-- report:end -->`
//! lines; everything outside them stays byte for byte as it was. The same rows' medians
//! are drawn into `docs/performance/<page>.svg` (the chart `orrery-bench` writes beside its
//! JSON). `--check` writes nothing and fails when a page or chart differs from what the
//! JSON gives. See `docs/performance/README.md`.

mod render;
mod source;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Parser;
use serde_json::Value;

use self::render::{Column, Value as ColumnValue};
use self::source::Select;

/// The folder of the performance pages, from the workspace root.
pub const DIR: &str = "docs/performance";
/// The manifest's file name in [`DIR`].
pub const MANIFEST: &str = "report.json";
/// The line before the generated block.
pub const BEGIN: &str = "<!-- report:begin -->";
/// The line after the generated block.
pub const END: &str = "<!-- report:end -->";

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask bench report",
    about = "Regenerate the Current tables of docs/performance/ from their JSON"
)]
struct Args {
    /// Write nothing; fail if a page or chart is out of date.
    #[arg(long)]
    check: bool,
}

/// `cargo xtask bench report [--check]`, run from the workspace root.
pub fn run(args: &[String]) -> Result<()> {
    let args = Args::parse_from(std::iter::once("cargo xtask bench report".to_owned()).chain(args.iter().cloned()));
    let stale = report(Path::new(DIR), args.check)?;
    if args.check && !stale.is_empty() {
        bail!("{} file(s) out of date: run `cargo xtask bench report`", stale.len());
    }
    Ok(())
}

/// One page of the manifest.
#[derive(Debug, Clone)]
struct Page {
    /// File name in the folder (`keys.md`).
    name: String,
    /// The name without `.md` (`keys`): the chart is `<stem>.svg`.
    stem: String,
    /// JSON files in the folder.
    sources: Vec<String>,
    select: Vec<Select>,
    columns: Vec<Column>,
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>> {
    v.get(key)
        .and_then(Value::as_array)
        .with_context(|| format!("`{key}` is not an array"))?
        .iter()
        .map(|s| s.as_str().map(str::to_owned).with_context(|| format!("`{key}` holds a non-string")))
        .collect()
}

/// A file name beside the pages: no folders, so that the manifest cannot reach outside.
fn file_name(name: &str) -> Result<String> {
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        bail!("`{name}` is not a file name in {DIR}");
    }
    Ok(name.to_owned())
}

fn parse_manifest(text: &str) -> Result<Vec<Page>> {
    let v: Value = serde_json::from_str(text).context("not valid JSON")?;
    let pages = v.get("pages").and_then(Value::as_array).context("`pages` is not an array")?;
    let mut out: Vec<Page> = Vec::with_capacity(pages.len());
    for (i, p) in pages.iter().enumerate() {
        let ctx = || format!("page entry {i}");
        let name =
            file_name(p.get("page").and_then(Value::as_str).with_context(|| format!("page entry {i}: no `page`"))?)?;
        let Some(stem) = name.strip_suffix(".md") else {
            bail!("page entry {i}: `{name}` is not a Markdown page (.md)")
        };
        if out.iter().any(|o| o.name == name) {
            bail!("page entry {i}: `{name}` is listed twice");
        }
        let stem = stem.to_owned();
        let sources =
            strings(p, "sources").with_context(ctx)?.iter().map(|s| file_name(s)).collect::<Result<Vec<_>>>()?;
        if sources.is_empty() {
            bail!("{name}: no sources");
        }
        let mut select = Vec::new();
        for rule in p.get("select").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
            let glob = |key: &str| -> Result<Option<String>> {
                match rule.get(key) {
                    None => Ok(None),
                    Some(g) => g
                        .as_str()
                        .map(|g| Some(g.to_owned()))
                        .with_context(|| format!("{name}: select `{key}` is not a string")),
                }
            };
            select.push(Select { workload: glob("workload")?, executor: glob("executor")? });
        }
        let mut columns = Vec::new();
        for c in p.get("columns").and_then(Value::as_array).map_or(&[][..], Vec::as_slice) {
            let label =
                c.get("label").and_then(Value::as_str).with_context(|| format!("{name}: a column has no `label`"))?;
            let value = c
                .get("value")
                .and_then(Value::as_str)
                .with_context(|| format!("{name}: column `{label}` has no `value`"))?;
            columns.push(Column {
                label: label.to_owned(),
                value: ColumnValue::parse(value).with_context(|| format!("{name}: column `{label}`"))?,
            });
        }
        out.push(Page { name, stem, sources, select, columns });
    }
    Ok(out)
}

/// Byte offsets of the lines of `page` that are `marker` (trailing whitespace allowed), so
/// that prose quoting a marker inside a line is not taken for one.
fn marker_lines(page: &str, marker: &str) -> Vec<usize> {
    page.match_indices(marker)
        .map(|(i, _)| i)
        .filter(|&i| {
            let line_end = page[i..].find('\n').map_or(page.len(), |n| i + n);
            (i == 0 || page.as_bytes()[i - 1] == b'\n') && page[i + marker.len()..line_end].trim().is_empty()
        })
        .collect()
}

/// `page` with the text between its [`BEGIN`] and [`END`] lines replaced by `block`; every
/// byte before the end of the [`BEGIN`] marker and from the start of the [`END`] marker on
/// as it was.
pub fn replace_block(page: &str, block: &str) -> Result<String> {
    let begin = match marker_lines(page, BEGIN)[..] {
        [i] => i,
        [] => bail!("no `{BEGIN}` line (the generated table goes between a `{BEGIN}` line and an `{END}` line)"),
        _ => bail!("more than one `{BEGIN}` line"),
    };
    let end = match marker_lines(page, END)[..] {
        [i] => i,
        [] => bail!("no `{END}` line after `{BEGIN}`"),
        _ => bail!("more than one `{END}` line"),
    };
    if end < begin {
        bail!("`{END}` comes before `{BEGIN}`");
    }
    let inner = begin + BEGIN.len();
    Ok(format!("{}{block}{}", &page[..inner], &page[end..]))
}

/// The text between the markers: a line naming the sources, the table, a blank line on
/// either side.
fn block(page: &Page, rows: &[source::Row]) -> String {
    let links: Vec<String> = page.sources.iter().map(|s| format!("[{s}]({s})")).collect();
    let svg = format!("{}.svg", page.stem);
    format!(
        "\n\nGenerated by `cargo xtask bench report` from {} (rows and columns chosen in [{MANIFEST}]({MANIFEST})); \
         do not edit by hand. Medians drawn in [{svg}]({svg}).\n\n{}\n",
        links.join(", "),
        render::table(rows, &page.columns)
    )
}

/// Regenerates every page of the manifest in `dir` and its chart; with `check`, writes
/// nothing. Returns the files that were (or, with `check`, would be) changed.
pub fn report(dir: &Path, check: bool) -> Result<Vec<PathBuf>> {
    let manifest_path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&manifest_path)
        .with_context(|| format!("{}: cannot be read", manifest_path.display()))?;
    let pages = parse_manifest(&text).with_context(|| format!("{}", manifest_path.display()))?;
    let mut changed = Vec::new();
    for page in &pages {
        let page_path = dir.join(&page.name);
        let mut rows = Vec::new();
        for src in &page.sources {
            let path = dir.join(src);
            rows.extend(source::read(&path, &path.display().to_string(), &page.select)?);
        }
        if rows.is_empty() {
            bail!("{}: the selection in {MANIFEST} keeps no row of {}", page_path.display(), page.sources.join(", "));
        }
        let old =
            std::fs::read_to_string(&page_path).with_context(|| format!("{}: cannot be read", page_path.display()))?;
        let new = replace_block(&old, &block(page, &rows)).with_context(|| format!("{}", page_path.display()))?;
        let svg_path = dir.join(format!("{}.svg", page.stem));
        let svg = render::svg(&rows);
        for (path, content) in [(&page_path, new), (&svg_path, svg)] {
            let current = std::fs::read_to_string(path).ok();
            if current.as_deref() == Some(content.as_str()) {
                eprintln!("{}: up to date ({} rows)", path.display(), rows.len());
                continue;
            }
            if check {
                eprintln!("{}: out of date", path.display());
            } else {
                std::fs::write(path, &content).with_context(|| format!("{}: cannot be written", path.display()))?;
                eprintln!("{}: written ({} rows)", path.display(), rows.len());
            }
            changed.push(path.clone());
        }
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::source::{Row, glob, utc_date};
    use super::*;

    /// A fresh empty folder under the system's temporary folder, removed when dropped
    /// (tests run in parallel: every call gets its own).
    struct Scratch(PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("xtask-report-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    const REPORT: &str = r#"{
      "environment": {"host": "vm", "cpu": "Xeon (16 logical cores)",
        "gpus": ["cuda:0 NVIDIA H200", "wgpu:NVIDIA H200 (Vulkan)"], "commit": "f4aaac646300", "unix_time": 1796187375},
      "records": [
        {"suite": "s", "workload": "plummer 1M", "executor": "Group walk, cuda:0 NVIDIA H200", "elements": 1000000,
         "bytes": 0, "stats": {"median_ms": 12.6324, "p10_ms": 12.5, "p90_ms": 12.70001, "repeats": 10},
         "info": "err p50 1.2e-4 p90 3e-4 p99 4.08e-4 max 1.8e-3; 3.443e11 interactions/s; 12.7 TFlop/s"},
        {"suite": "s", "workload": "plummer 1M", "executor": "Group walk, wgpu:NVIDIA H200 (Vulkan)", "elements": 1000000,
         "bytes": 4000000, "stats": {"median_ms": 18.4748, "p10_ms": 18.0, "p90_ms": 19.0, "repeats": 10}},
        {"suite": "s", "workload": "plummer 1M", "executor": "cpu:rayon (16 threads)", "elements": 1000000,
         "bytes": 0, "stats": {"median_ms": 2797.692128, "p10_ms": 2661.7, "p90_ms": 2945.2, "repeats": 3}, "info": "a | b"}
      ]
    }"#;

    fn columns() -> Vec<Column> {
        ["melem_per_s", "gb_per_s", "info_before:interactions/s", "info_after:p99"]
            .iter()
            .map(|v| Column { label: (*v).to_owned(), value: ColumnValue::parse(v).unwrap() })
            .collect()
    }

    fn rows_of(text: &str, select: &[Select]) -> Vec<Row> {
        let dir = scratch("rows");
        let file = dir.join("r.json");
        std::fs::write(&file, text).unwrap();
        source::read(&file, "r.json", select).unwrap()
    }

    #[test]
    fn replacing_the_block_leaves_the_rest_byte_identical() {
        let before = "# Title\r\n\nprose with trailing spaces   \n## Current\n\n";
        let after = "\n\n## History\n\n| old | table |\n|---|---|\nno final newline";
        let page = format!("{before}{BEGIN}\nold generated text\n{END}{after}");
        let new = replace_block(&page, "\nNEW\n").unwrap();
        assert_eq!(new, format!("{before}{BEGIN}\nNEW\n{END}{after}"));
        assert!(new.starts_with(&format!("{before}{BEGIN}")) && new.ends_with(&format!("{END}{after}")));
        // Idempotent: replacing again with the same block changes nothing.
        assert_eq!(replace_block(&new, "\nNEW\n").unwrap(), new);
    }

    #[test]
    fn marker_errors_are_clear() {
        let err = |page: &str| replace_block(page, "x").unwrap_err().to_string();
        assert!(err("no markers here").contains("no `<!-- report:begin -->`"));
        assert!(err(&format!("{BEGIN}\n")).contains("no `<!-- report:end -->`"));
        assert!(err(&format!("{END}\n{BEGIN}\n")).contains("comes before"));
        assert!(err(&format!("{BEGIN}\n{BEGIN}\n{END}")).contains("more than one"));
        // A marker quoted inside a line of prose is not a marker.
        let quoted = format!("The table lies after `{BEGIN}`.\n{BEGIN}\nold\n{END}  \r\nrest");
        assert_eq!(
            replace_block(&quoted, "\nnew\n").unwrap(),
            format!("The table lies after `{BEGIN}`.\n{BEGIN}\nnew\n{END}  \r\nrest")
        );
        assert!(err(&format!("see {BEGIN} and {END}\n")).contains("no `<!-- report:begin -->` line"));
    }

    /// A folder with a manifest naming `page.md` (from `data.json`) and those files.
    fn site(name: &str, page: &str, data: &str) -> Scratch {
        let dir = scratch(name);
        let manifest = r#"{"pages": [{"page": "page.md", "sources": ["data.json"],
            "columns": [{"label": "M elem/s", "value": "melem_per_s"}]}]}"#;
        std::fs::write(dir.join(MANIFEST), manifest).unwrap();
        std::fs::write(dir.join("page.md"), page).unwrap();
        std::fs::write(dir.join("data.json"), data).unwrap();
        dir
    }

    #[test]
    fn a_page_without_markers_is_named_in_the_error() {
        let dir = site("nomarkers", "# A page\n\nno markers\n", REPORT);
        let e = format!("{:#}", report(&dir, true).unwrap_err());
        assert!(e.contains("page.md") && e.contains("no `<!-- report:begin -->`"), "{e}");
    }

    #[test]
    fn malformed_json_is_named_in_the_error() {
        let dir = site("badjson", &format!("{BEGIN}\n{END}\n"), "{\"environment\": {,}");
        let e = format!("{:#}", report(&dir, true).unwrap_err());
        assert!(e.contains("data.json") && e.contains("not valid JSON"), "{e}");
        // Valid JSON of another shape: named too.
        std::fs::write(dir.join("data.json"), r#"{"page": "x", "rows": [{"set": "uniform"}]}"#).unwrap();
        let e = format!("{:#}", report(&dir, true).unwrap_err());
        assert!(e.contains("data.json") && e.contains("row 0"), "{e}");
        // A broken manifest is named as well.
        std::fs::write(dir.join(MANIFEST), "{\"pages\": [").unwrap();
        let e = format!("{:#}", report(&dir, true).unwrap_err());
        assert!(e.contains(MANIFEST) && e.contains("not valid JSON"), "{e}");
    }

    #[test]
    fn check_fails_until_written_then_passes() {
        let dir = site("roundtrip", &format!("# P\n\n{BEGIN}\n{END}\n\n## History\n"), REPORT);
        let stale = report(&dir, true).unwrap();
        assert_eq!(stale, [dir.join("page.md"), dir.join("page.svg")]);
        assert!(!dir.join("page.svg").exists(), "--check writes nothing");
        assert_eq!(report(&dir, false).unwrap().len(), 2);
        assert!(report(&dir, true).unwrap().is_empty());
        let page = std::fs::read_to_string(dir.join("page.md")).unwrap();
        assert!(page.starts_with(&format!("# P\n\n{BEGIN}\n\nGenerated by")), "{page}");
        assert!(page.ends_with(&format!("|\n\n{END}\n\n## History\n")), "{page}");
        assert!(page.contains("| plummer 1M | Group walk, cuda | cuda:0 NVIDIA H200 | f4aaac6 | 2026-12-02 | 12.63 |"));
        // Changing the data makes the page stale again.
        std::fs::write(dir.join("data.json"), REPORT.replace("12.6324", "12.9")).unwrap();
        assert_eq!(report(&dir, true).unwrap(), [dir.join("page.md"), dir.join("page.svg")]);
    }

    #[test]
    fn report_rows_render_to_a_fixed_table() {
        let rows = rows_of(REPORT, &[]);
        let expected = "\
| what | executor | GPU / host | commit | date | median ms | [p10, p90] ms | melem_per_s | gb_per_s | info_before:interactions/s | info_after:p99 |
|---|---|---|---|---|---|---|---|---|---|---|
| plummer 1M | Group walk, cuda | cuda:0 NVIDIA H200 | f4aaac6 | 2026-12-02 | 12.63 | [12.50, 12.70] | 79.16 | - | 3.443e11 | 4.08e-4 |
| plummer 1M | Group walk, wgpu | wgpu:NVIDIA H200 (Vulkan) | f4aaac6 | 2026-12-02 | 18.47 | [18.00, 19.00] | 54.13 | 0.2165 | - | - |
| plummer 1M | cpu:rayon (16 threads) | Xeon (16 logical cores) | f4aaac6 | 2026-12-02 | 2798 | [2662, 2945] | 0.3574 | - | - | - |
";
        assert_eq!(render::table(&rows, &columns()), expected);
    }

    #[test]
    fn output_is_deterministic_and_independent_of_key_order() {
        let a = rows_of(REPORT, &[]);
        // The same report with the keys of each object in another order.
        let v: Value = serde_json::from_str(REPORT).unwrap();
        let reordered = format!(
            "{{\"records\": {}, \"environment\": {}}}",
            serde_json::to_string_pretty(&v["records"]).unwrap(),
            serde_json::to_string(&v["environment"]).unwrap()
        );
        let b = rows_of(&reordered, &[]);
        assert_eq!(render::table(&a, &columns()), render::table(&b, &columns()));
        assert_eq!(render::svg(&a), render::svg(&b));
        assert_eq!(render::table(&a, &columns()), render::table(&rows_of(REPORT, &[]), &columns()));
    }

    #[test]
    fn selection_follows_rule_order_once_per_row() {
        let cpu = Select { workload: None, executor: Some("cpu*".into()) };
        let any_walk = Select { workload: Some("plummer *".into()), executor: Some("* walk, *".into()) };
        let rows = rows_of(REPORT, &[cpu.clone(), any_walk, cpu]);
        let execs: Vec<&str> = rows.iter().map(|r| r.executor.as_str()).collect();
        assert_eq!(execs, ["cpu:rayon (16 threads)", "Group walk, cuda", "Group walk, wgpu"]);
        assert!(rows_of(REPORT, &[Select { workload: Some("uniform*".into()), executor: None }]).is_empty());
    }

    #[test]
    fn rows_summaries_are_read() {
        let summary = r#"{"page": "p", "rows": [
          {"workload": "Morton keys 1M", "executor": "cpu:rayon (2 threads)", "median_ms": 9.6, "p10_ms": 6.8,
           "p90_ms": 14.6, "gpu": null, "host": "dev machine", "commit": "166ed465020f", "date": "2026-11-29"},
          {"workload": "gather 64M", "executor": "cuda:0", "median_ms": null, "range_ms": [1.56, 1.72],
           "spread": "no median", "gpu": "H200", "commit": null, "date": "2026-11-29", "derived_as_recorded": "x"},
          {"workload": "uniform 3D 1x1M", "executor": "cpu f32", "metric": "reference_over_ours", "ratio": 30.74,
           "rounds": [29.93, 30.74, 33.5], "median_ms": null, "session": "session 6", "host": "h", "commit": "b3f7227",
           "date": "2026-11-30"}
        ]}"#;
        let rows = rows_of(summary, &[]);
        let note = Column { label: "note".into(), value: ColumnValue::Note };
        let expected = "\
| what | executor | GPU / host | commit | date | median ms | [p10, p90] ms | note |
|---|---|---|---|---|---|---|---|
| Morton keys 1M | cpu:rayon (2 threads) | dev machine | 166ed46 | 2026-11-29 | 9.6 | [6.8, 14.6] |  |
| gather 64M | cuda:0 | H200 | not recorded | 2026-11-29 | - |  | x; 1.56-1.72 ms (no median) |
| uniform 3D 1x1M | cpu f32 | h | b3f7227 | 2026-11-30 | - |  | session 6; reference / ours 30.74x (rounds 29.93 / 30.74 / 33.50) |
";
        assert_eq!(render::table(&rows, &[note]), expected);
        // Only rows with a median are drawn.
        assert_eq!(render::svg(&rows).matches("<rect").count(), 1);
    }

    #[test]
    fn numbers_and_dates_have_one_spelling() {
        let cases = [
            (67.779518, "67.78"),
            (0.08752, "0.08752"),
            (9.6, "9.600"),
            (328.0, "328.0"),
            (3561.388817, "3561"),
            (12345.6, "12346"),
            (0.0584, "0.05840"),
            (9.99996, "10.00"),
            (999.96, "1000"),
            (1.0998, "1.100"),
            (-0.5, "-0.5000"),
            (0.0, "0"),
        ];
        for (x, s) in cases {
            assert_eq!(render::num(x), s, "{x}");
        }
        // Transcribed figures keep the digits they were recorded with.
        for (x, s) in [(9.6, "9.6"), (328.0, "328"), (28.742, "28.742"), (0.0809, "0.0809")] {
            assert_eq!(render::recorded(x), s, "{x}");
        }
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
        assert_eq!(utc_date(1_796_187_375), "2026-12-02");
        assert_eq!(utc_date(1_796_168_048), "2026-12-01");
    }

    #[test]
    fn globs() {
        assert!(glob("* octree hilbert LC scratch", "uniform 2M octree hilbert LC scratch"));
        assert!(!glob("* octree hilbert LC scratch", "uniform 2M octree hilbert LC step scratchy"));
        assert!(glob("whole step, Group* walk, cuda*", "whole step, Group64 walk, cuda:0 NVIDIA H200"));
        assert!(glob("exact", "exact") && !glob("exact", "exactly"));
        assert!(glob("a*a", "aa") && !glob("a*a", "a"));
        assert!(glob("*", ""));
    }

    #[test]
    fn manifest_names_only_files_beside_the_pages() {
        let bad = r#"{"pages": [{"page": "p.md", "sources": ["../../etc/passwd"]}]}"#;
        assert!(parse_manifest(bad).unwrap_err().to_string().contains("not a file name"));
        let twice = r#"{"pages": [{"page": "p.md", "sources": ["a.json"]}, {"page": "p.md", "sources": ["b.json"]}]}"#;
        assert!(parse_manifest(twice).unwrap_err().to_string().contains("twice"));
        let unknown =
            r#"{"pages": [{"page": "p.md", "sources": ["a.json"], "columns": [{"label": "x", "value": "bogus"}]}]}"#;
        assert!(format!("{:#}", parse_manifest(unknown).unwrap_err()).contains("unknown column value"));
    }
}
