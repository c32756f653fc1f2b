//! Resource use per entry point, read from ptxas's verbose report (`--ptxas-options=-v`,
//! which NVRTC passes on when it compiles to a CUBIN for a real architecture), and the
//! table `cargo xtask kernels` prints.
//!
//! The report of one entry looks like this (CUDA 13):
//!
//! ```text
//! ptxas info    : Compiling entry function 'scan_exclusive_u32' for 'sm_90'
//! ptxas info    : Function properties for scan_exclusive_u32
//!     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//! ptxas info    : Used 64 registers, used 1 barriers, 4224 bytes smem, 400 bytes cmem[0]
//! ```
//!
//! ptxas leaves out the `smem` item when an entry has no static shared memory, so a
//! `Used` line without it means 0 bytes (a missing `barriers` item stays unknown). Dynamic shared memory is chosen at launch and
//! never appears. `Function properties` of a non-inlined device function (`.func`) are
//! not an entry's and are ignored.

use std::fmt::Write as _;

/// What ptxas reported for one entry point.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    /// The entry point.
    pub entry: String,
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Bytes of the stack frame per thread.
    pub stack: Option<u32>,
    /// Bytes of spill stores per thread.
    pub spill_stores: Option<u32>,
    /// Bytes of spill loads per thread.
    pub spill_loads: Option<u32>,
    /// Bytes of static shared memory per block.
    pub shared: Option<u32>,
    /// Named barriers used.
    pub barriers: Option<u32>,
}

/// The number before `unit` in `text` (`"64 registers"`, `"4224 bytes smem"`).
fn number_before(text: &str, unit: &str) -> Option<u32> {
    let at = text.find(unit)?;
    text[..at].split([',', ':']).next_back()?.split_whitespace().next_back()?.parse().ok()
}

/// Every entry point ptxas reported on in `log`, in its order.
pub fn parse(log: &str) -> Vec<Resources> {
    let mut out: Vec<Resources> = Vec::new();
    // The entry being compiled, and whose properties the next stack line gives.
    let mut current: Option<usize> = None;
    let mut properties_of_current = false;
    for line in log.lines() {
        let info = line.trim_start().strip_prefix("ptxas info").map(|l| l.trim_start().trim_start_matches(':').trim());
        match info {
            Some(l) if l.starts_with("Compiling entry function") => {
                let name = l.split('\'').nth(1).unwrap_or_default().to_owned();
                out.push(Resources { entry: name, ..Resources::default() });
                current = Some(out.len() - 1);
                properties_of_current = false;
            }
            Some(l) if l.starts_with("Function properties for") => {
                let name = l.trim_start_matches("Function properties for").trim();
                properties_of_current = current.is_some_and(|i| out[i].entry == name);
            }
            Some(l) if l.starts_with("Used") => {
                if let Some(r) = current.map(|i| &mut out[i]) {
                    r.registers = number_before(l, "registers");
                    r.barriers = number_before(l, "barriers");
                    r.shared = number_before(l, "bytes smem").or(Some(0));
                }
            }
            None if properties_of_current && line.contains("stack frame") => {
                if let Some(r) = current.map(|i| &mut out[i]) {
                    r.stack = number_before(line, "bytes stack frame");
                    r.spill_stores = number_before(line, "bytes spill stores");
                    r.spill_loads = number_before(line, "bytes spill loads");
                }
                properties_of_current = false;
            }
            // Other reports (gmem, compile time) and lines.
            Some(_) | None => {}
        }
    }
    out
}

/// One row of the table: a module, an architecture, and an entry's resources (`None`
/// where ptxas reported nothing for an entry of the PTX).
#[derive(Debug, Clone)]
pub struct Row {
    /// Module label.
    pub module: String,
    /// Entry point.
    pub entry: String,
    /// Architecture.
    pub arch: String,
    /// The report, when there is one.
    pub resources: Option<Resources>,
}

fn cell(v: Option<u32>) -> String {
    v.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

/// The table of `rows`, aligned, with a header.
pub fn table(rows: &[Row]) -> String {
    let header = ["module", "entry", "arch", "regs", "spill st/ld", "stack", "static smem", "barriers"];
    let mut cells: Vec<[String; 8]> = Vec::with_capacity(rows.len());
    for r in rows {
        let (regs, spill, stack, smem, bars) = match &r.resources {
            Some(x) => (
                cell(x.registers),
                format!("{}/{}", cell(x.spill_stores), cell(x.spill_loads)),
                cell(x.stack),
                cell(x.shared),
                cell(x.barriers),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
        };
        cells.push([r.module.clone(), r.entry.clone(), r.arch.clone(), regs, spill, stack, smem, bars]);
    }
    let mut widths = header.map(str::len);
    for c in &cells {
        for (w, s) in widths.iter_mut().zip(c) {
            *w = (*w).max(s.len());
        }
    }
    let mut out = String::new();
    let mut line = |c: &[String]| {
        let mut l = String::new();
        for (i, (s, w)) in c.iter().zip(widths).enumerate() {
            // Names left-aligned, numbers right-aligned.
            if i < 3 {
                let _ = write!(l, "{s:<w$}  ");
            } else {
                let _ = write!(l, "{s:>w$}  ");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&header.map(str::to_owned));
    for c in &cells {
        line(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'scan_exclusive_u32' for 'sm_90'
ptxas info    : Function properties for scan_exclusive_u32
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 4224 bytes smem, 400 bytes cmem[0]
ptxas info    : Compile time = 12.5 ms
ptxas info    : Function properties for helper
    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Compiling entry function 'plain' for 'sm_90'
ptxas info    : Function properties for plain
    24 bytes stack frame, 36 bytes spill stores, 40 bytes spill loads
ptxas info    : Used 80 registers, 380 bytes cmem[0]
";

    #[test]
    fn entries_get_registers_spills_and_shared_memory() {
        let r = parse(LOG);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0],
            Resources {
                entry: "scan_exclusive_u32".into(),
                registers: Some(64),
                stack: Some(0),
                spill_stores: Some(0),
                spill_loads: Some(0),
                shared: Some(4224),
                barriers: Some(1),
            }
        );
        // No smem item: no static shared memory; the device function's spills are not its.
        assert_eq!(
            r[1],
            Resources {
                entry: "plain".into(),
                registers: Some(80),
                stack: Some(24),
                spill_stores: Some(36),
                spill_loads: Some(40),
                shared: Some(0),
                barriers: None,
            }
        );
    }

    #[test]
    fn a_log_without_a_report_gives_nothing() {
        assert!(parse("").is_empty());
        assert!(parse("warning: something\nptxas info : Compile time = 1 ms\n").is_empty());
    }

    #[test]
    fn the_table_says_where_there_is_no_report() {
        let rows = [
            Row { module: "m".into(), entry: "a".into(), arch: "sm_90".into(), resources: parse(LOG).pop() },
            Row { module: "m".into(), entry: "b".into(), arch: "sm_90".into(), resources: None },
        ];
        let t = table(&rows);
        assert_eq!(t.lines().count(), 3);
        assert!(t.lines().nth(1).is_some_and(|l| l.contains("36/40") && l.contains("80")));
        assert!(t.lines().nth(2).is_some_and(|l| l.ends_with('-')));
    }
}
