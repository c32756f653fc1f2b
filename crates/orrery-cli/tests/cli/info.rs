//! `orrery info` runs anywhere and says something about every executor family.

use crate::common::run;

#[test]
fn info_lists_every_family_and_succeeds() {
    let (code, stdout, stderr) = run(["info"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    for heading in ["CUDA", "wgpu adapters", "CPU"] {
        assert!(stdout.lines().any(|l| l == heading), "{heading} missing:\n{stdout}");
    }
    assert!(stdout.contains("threads: "), "{stdout}");
    assert!(stdout.contains("instruction set: "), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn info_reports_the_instruction_set_cap() {
    let out = crate::common::orrery(["info"]).env("ORRERY_MAX_CPU_ISA", "baseline").output().expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(stdout.contains("instruction set: baseline"), "{stdout}");
    let out = crate::common::orrery(["info"]).env("ORRERY_MAX_CPU_ISA", "avx9000").output().expect("runs");
    assert!(out.status.success(), "a bad cap is reported, not fatal");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ORRERY_MAX_CPU_ISA"));
}
