//! A minimal line-based preprocessor for WGSL sources.
//!
//! WGSL has no generics, no conditional compilation and no includes, yet the same
//! kernel must exist with and without subgroup operations (naga rejects subgroup
//! built-ins unless the device has [`wgpu::Features::SUBGROUP`]) and for several
//! element types. Directives are WGSL line comments, so an unprocessed file is still
//! valid WGSL for editors and linters:
//!
//! | directive             | meaning                                                    |
//! |-----------------------|------------------------------------------------------------|
//! | `//#if NAME`          | keep the following lines when `NAME` is defined           |
//! | `//#if !NAME`         | keep them when `NAME` is not defined                       |
//! | `//#elif NAME`        | `else if`, same syntax as `//#if`                          |
//! | `//#else`, `//#endif` | as in C                                                    |
//! | `//#include NAME`     | splice the snippet `NAME` (e.g. `core/common`) here, once  |
//!
//! The executor defines `SUBGROUP` when the device runs subgroup operations, so kernels
//! of algorithm crates can carry both paths too. Defines are plain names; there is no
//! substitution, so a line reads the same before and after preprocessing.

use std::collections::HashSet;

/// Resolves `//#include` names to WGSL snippets.
pub type IncludeResolver<'a> = &'a dyn Fn(&str) -> Option<&'static str>;

/// Preprocesses `source` with the given `defines`.
///
/// # Errors
/// A message naming the line when directives are unbalanced or an include is unknown.
pub fn preprocess(source: &str, defines: &[&str], includes: IncludeResolver<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(source.len());
    let mut included = HashSet::new();
    expand(source, "<source>", defines, includes, &mut included, &mut out)?;
    Ok(out)
}

/// One open `//#if` block.
struct Frame {
    /// Whether the enclosing block emits lines.
    parent_active: bool,
    /// Whether some branch of this block has been taken.
    taken: bool,
    /// Whether the current branch emits lines.
    active: bool,
}

fn condition(expr: &str, defines: &[&str]) -> bool {
    let expr = expr.trim();
    match expr.strip_prefix('!') {
        Some(name) => !defines.contains(&name.trim()),
        None => defines.contains(&expr),
    }
}

fn expand(
    source: &str,
    file: &str,
    defines: &[&str],
    includes: IncludeResolver<'_>,
    included: &mut HashSet<String>,
    out: &mut String,
) -> Result<(), String> {
    let mut stack: Vec<Frame> = Vec::new();
    for (number, line) in source.lines().enumerate() {
        let active = stack.last().is_none_or(|f| f.active);
        let trimmed = line.trim_start();
        let Some(directive) = trimmed.strip_prefix("//#") else {
            if active {
                out.push_str(line);
            }
            out.push('\n');
            continue;
        };
        let at = || format!("{file}:{}", number + 1);
        let (word, rest) = directive.split_once(char::is_whitespace).unwrap_or((directive, ""));
        match word {
            "if" => {
                let take = active && condition(rest, defines);
                stack.push(Frame { parent_active: active, taken: take, active: take });
            }
            "elif" => {
                let frame = stack.last_mut().ok_or_else(|| format!("{}: //#elif without //#if", at()))?;
                let take = frame.parent_active && !frame.taken && condition(rest, defines);
                frame.active = take;
                frame.taken |= take;
            }
            "else" => {
                let frame = stack.last_mut().ok_or_else(|| format!("{}: //#else without //#if", at()))?;
                frame.active = frame.parent_active && !frame.taken;
                frame.taken = true;
            }
            "endif" => {
                stack.pop().ok_or_else(|| format!("{}: //#endif without //#if", at()))?;
            }
            "include" => {
                let name = rest.trim();
                if active && included.insert(name.to_owned()) {
                    let snippet = includes(name).ok_or_else(|| format!("{}: unknown include {name:?}", at()))?;
                    expand(snippet, name, defines, includes, included, out)?;
                }
            }
            other => return Err(format!("{}: unknown directive //#{other}", at())),
        }
        // Directive lines become empty lines so that line numbers in naga's messages
        // still point into the original file (for the top-level source).
        out.push('\n');
    }
    if stack.is_empty() { Ok(()) } else { Err(format!("{file}: {} unclosed //#if", stack.len())) }
}

#[cfg(test)]
mod tests {
    use super::preprocess;

    fn none(_: &str) -> Option<&'static str> {
        None
    }

    fn kept(out: &str) -> Vec<&str> {
        out.lines().filter(|l| !l.is_empty()).collect()
    }

    #[test]
    fn if_else_selects_one_branch() {
        let src = "a\n//#if X\nb\n//#elif Y\nc\n//#else\nd\n//#endif\ne\n";
        assert_eq!(kept(&preprocess(src, &["X"], &none).unwrap()), ["a", "b", "e"]);
        assert_eq!(kept(&preprocess(src, &["Y"], &none).unwrap()), ["a", "c", "e"]);
        assert_eq!(kept(&preprocess(src, &["X", "Y"], &none).unwrap()), ["a", "b", "e"]);
        assert_eq!(kept(&preprocess(src, &[], &none).unwrap()), ["a", "d", "e"]);
    }

    #[test]
    fn nested_blocks_inside_a_dropped_branch_stay_dropped() {
        let src = "//#if X\n//#if Y\nb\n//#else\nc\n//#endif\n//#endif\n//#if !X\nn\n//#endif\n";
        assert_eq!(kept(&preprocess(src, &["Y"], &none).unwrap()), ["n"]);
        assert_eq!(kept(&preprocess(src, &["X"], &none).unwrap()), ["c"]);
    }

    #[test]
    fn includes_are_spliced_once() {
        let inc = |name: &str| (name == "lib").then_some("fn f() {}\n");
        let out = preprocess("//#include lib\n//#include lib\nx\n", &[], &inc).unwrap();
        assert_eq!(kept(&out), ["fn f() {}", "x"]);
    }

    #[test]
    fn unbalanced_and_unknown_directives_are_errors() {
        assert!(preprocess("//#if X\n", &[], &none).unwrap_err().contains("unclosed"));
        assert!(preprocess("//#endif\n", &[], &none).unwrap_err().contains("without"));
        assert!(preprocess("//#include nope\n", &[], &none).unwrap_err().contains("unknown include"));
        assert!(preprocess("//#pragma\n", &[], &none).unwrap_err().contains("unknown directive"));
    }
}
