//! Bad arguments: clap's usage errors (exit code 2) and orrery's own (exit code 1), never
//! a panic.

use crate::common::{assert_one_line_error, run};

fn usage_error(args: &[&str]) {
    let (code, _, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}: {stderr}");
    assert!(stderr.starts_with("error:"), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn usage_errors_keep_clap_exit_code() {
    usage_error(&["tree", "--generate", "plummer", "--n", "0", "--executor", "cpu"]);
    usage_error(&["tree", "--generate", "plummer", "--n", "-5"]);
    usage_error(&["tree", "--generate", "plummer"]);
    usage_error(&["tree", "--generate", "plummer", "--n", "10", "--executor", "tpu"]);
    usage_error(&["tree", "--generate", "galaxy", "--n", "10"]);
    usage_error(&["tree"]);
    usage_error(&["tree", "--input", "a.npy", "--generate", "uniform", "--n", "5"]);
    usage_error(&["tree", "--generate", "uniform", "--n", "10", "--bucket", "0"]);
    usage_error(&["tree", "--generate", "uniform", "--n", "10", "--binary", "--curve", "morton"]);
    usage_error(&["tree", "--generate", "uniform", "--n", "10", "--force"]);
    usage_error(&["balltree", "--generate", "uniform", "--n", "10", "--batches", "0"]);
    usage_error(&["frobnicate"]);
}

#[test]
fn inconsistent_options_are_one_error_line() {
    let (code, _, stderr) =
        run(["tree", "--generate", "uniform", "--n", "10", "--threshold", "5", "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, "--threshold applies to --criterion nf-count");
    let (code, _, stderr) = run([
        "tree",
        "--generate",
        "uniform",
        "--n",
        "10",
        "--criterion",
        "nf-count",
        "--bucket",
        "5",
        "--executor",
        "cpu",
    ]);
    assert_one_line_error(code, &stderr, "--bucket applies to --criterion leaf-count");
}

#[test]
fn an_unavailable_explicit_executor_is_an_error_line_or_works() {
    // Without a CUDA device this is an error line; on a GPU machine it builds.
    let (code, stdout, stderr) = run(["tree", "--generate", "uniform", "--n", "200", "--executor", "cuda"]);
    if code == 0 {
        assert!(stdout.contains("leaves: "), "{stdout}");
    } else {
        assert_one_line_error(code, &stderr, "--executor cuda");
    }
}

#[test]
fn a_zero_thread_pool_is_refused() {
    usage_error(&["tree", "--generate", "uniform", "--n", "10", "--executor", "cpu", "--threads", "0"]);
}

#[test]
fn an_own_thread_pool_builds_the_same_tree() {
    let a = crate::common::run_json(["tree", "--generate", "plummer", "--n", "3000", "--executor", "cpu", "--json"]);
    let b = crate::common::run_json([
        "tree",
        "--generate",
        "plummer",
        "--n",
        "3000",
        "--executor",
        "cpu",
        "--threads",
        "1",
        "--json",
    ]);
    assert_eq!(a["leaves"], b["leaves"]);
    assert!(b["executor"].as_str().unwrap().contains("1 thread"), "{}", b["executor"]);
}
