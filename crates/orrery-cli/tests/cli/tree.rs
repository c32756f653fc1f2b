//! `orrery tree`: its statistics agree with orrery-tree-build's own build of the same
//! points, and `--output` writes readable, consistent arrays.

use orrery_core::sfc::Curve;
use orrery_core::{PositionsView, Real};
use orrery_tree_build::{Criterion, Rebalance, Shape, build, input};

use crate::common::{f32_rows, npy_bytes, plummer, read_npy, run, run_json, write_f64_npy};

/// The library's LeafCount tree of the points (in their bounding box): (leaves, depth,
/// passes).
fn library_tree<T: Real>(
    cols: &[Vec<T>; 3],
    shape: Shape,
    criterion: impl Fn(&orrery_core::Aabb<T>) -> Criterion,
) -> (u64, u64, u64) {
    let view = PositionsView::new(&cols[0], &cols[1], &cols[2]).expect("points");
    let sorted = input::sort_particles(view, None, shape).expect("sort");
    let (tree, run) = build(&sorted.keys, sorted.layout, &Rebalance::new(criterion(&sorted.bbox))).expect("build");
    (tree.leaves().len() as u64, u64::from(tree.leaves().depth()), u64::from(run.passes))
}

fn stats_triple(json: &serde_json::Value) -> (u64, u64, u64) {
    (
        json["leaves"].as_u64().expect("leaves"),
        json["depth"].as_u64().expect("depth"),
        json["passes"].as_u64().expect("passes"),
    )
}

#[test]
fn a_generated_set_matches_the_library_for_every_shape_and_criterion() {
    let cols = plummer(3000, 7);
    let cases: [(&[&str], Shape, bool); 4] = [
        (&[], Shape::Octree(Curve::Hilbert), false),
        (&["--curve", "morton"], Shape::Octree(Curve::Morton), false),
        (&["--binary"], Shape::Binary, false),
        (&["--criterion", "nf-count", "--threshold", "20000"], Shape::Octree(Curve::Hilbert), true),
    ];
    for (extra, shape, nf) in cases {
        let mut args =
            vec!["tree", "--generate", "plummer", "--n", "3000", "--seed", "7", "--executor", "cpu", "--json"];
        args.extend_from_slice(extra);
        let json = run_json(&args);
        let expected = library_tree(&cols, shape, |bbox| {
            if nf {
                Criterion::nf_count(shape, bbox).expect("nf").with_threshold(20000)
            } else {
                Criterion::leaf_count(16)
            }
        });
        assert_eq!(stats_triple(&json), expected, "{extra:?}");
        assert_eq!(json["points"], 3000);
        assert_eq!(json["converged"], true);
        assert_eq!(json["precision"], "f64");
        let phases: Vec<&str> =
            json["phases"].as_array().expect("phases").iter().map(|p| p["phase"].as_str().unwrap()).collect();
        assert_eq!(phases, ["keys", "sort", "rebalance", "view"]);
    }
}

#[test]
fn the_bucket_is_honoured_and_the_text_report_names_the_leaf_count() {
    let cols = plummer(2000, 3);
    let expected = library_tree(&cols, Shape::Octree(Curve::Hilbert), |_| Criterion::leaf_count(64));
    let (code, stdout, stderr) =
        run(["tree", "--generate", "plummer", "--n", "2000", "--seed", "3", "--bucket", "64", "--executor", "cpu"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.lines().any(|l| l == format!("leaves: {}", expected.0)), "{stdout}");
    assert!(stderr.starts_with("executor: cpu"), "{stderr}");
}

#[test]
fn an_f64_npy_file_matches_the_library() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cols = plummer(2500, 11);
    let path = write_f64_npy(&dir.path().join("points.npy"), &cols);
    let json = run_json(["tree", "--input", &path, "--executor", "cpu", "--json"]);
    assert_eq!(stats_triple(&json), library_tree(&cols, Shape::Octree(Curve::Hilbert), |_| Criterion::leaf_count(16)));
    assert_eq!(json["precision"], "f64");
}

#[test]
fn an_f32_npy_file_is_built_in_f32_and_matches_the_library() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cols: [Vec<f32>; 3] = plummer(2500, 12).map(|c| c.iter().map(|&v| v as f32).collect());
    let path = dir.path().join("points32.npy");
    std::fs::write(&path, npy_bytes("<f4", false, &[2500, 3], &f32_rows(&cols))).expect("write");
    let json = run_json(["tree", "--input", path.to_str().unwrap(), "--executor", "cpu", "--json", "--binary"]);
    assert_eq!(stats_triple(&json), library_tree(&cols, Shape::Binary, |_| Criterion::leaf_count(16)));
    assert_eq!(json["precision"], "f32");
}

#[test]
fn big_endian_and_fortran_order_files_give_the_same_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cols = plummer(1500, 5);
    let c_order = write_f64_npy(&dir.path().join("c.npy"), &cols);
    let rows = &cols;
    let big: Vec<u8> = (0..1500).flat_map(|i| (0..3).flat_map(move |a| rows[a][i].to_be_bytes())).collect();
    let fortran: Vec<u8> = cols.iter().flat_map(|c| c.iter().flat_map(|v| v.to_le_bytes())).collect();
    let big_path = dir.path().join("big.npy");
    let fortran_path = dir.path().join("fortran.npy");
    std::fs::write(&big_path, npy_bytes(">f8", false, &[1500, 3], &big)).expect("write");
    std::fs::write(&fortran_path, npy_bytes("<f8", true, &[1500, 3], &fortran)).expect("write");
    let reference = stats_triple(&run_json(["tree", "--input", &c_order, "--executor", "cpu", "--json"]));
    for path in [&big_path, &fortran_path] {
        let json = run_json(["tree", "--input", path.to_str().unwrap(), "--executor", "cpu", "--json"]);
        assert_eq!(stats_triple(&json), reference, "{}", path.display());
    }
}

#[test]
fn output_writes_sorted_boundaries_from_zero_and_counts_summing_to_n() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("tree-out");
    let json = run_json([
        "tree",
        "--generate",
        "hernquist",
        "--n",
        "4000",
        "--executor",
        "cpu",
        "--json",
        "--output",
        out.to_str().unwrap(),
    ]);
    let leaves: Vec<u64> = read_npy(&out.join("leaves.npy"));
    let counts: Vec<u32> = read_npy(&out.join("counts.npy"));
    let order: Vec<u32> = read_npy(&out.join("order.npy"));
    assert_eq!(leaves[0], 0);
    assert!(leaves.windows(2).all(|w| w[0] < w[1]), "boundaries are strictly increasing");
    assert_eq!(leaves.len(), counts.len() + 1);
    assert_eq!(counts.len() as u64, json["leaves"].as_u64().unwrap());
    assert_eq!(counts.iter().map(|&c| u64::from(c)).sum::<u64>(), 4000);
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..4000).collect::<Vec<u32>>(), "order is a permutation");
    let nodes = json["nodes"].as_u64().unwrap() as usize;
    assert_eq!(read_npy::<u32>(&out.join("view_parents.npy")).len(), nodes);
    assert_eq!(read_npy::<f64>(&out.join("view_centres.npy")).len(), 3 * nodes);
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["leaves"], json["leaves"]);
}

#[test]
fn an_existing_output_directory_needs_force_and_is_left_untouched_without_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("existing");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let args = ["tree", "--generate", "uniform", "--n", "500", "--executor", "cpu", "--output", out.to_str().unwrap()];
    let (code, _, stderr) = run(args);
    crate::common::assert_one_line_error(code, &stderr, "--force");
    let names: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["keep.txt"]);
    assert_eq!(std::fs::read_to_string(out.join("keep.txt")).unwrap(), "mine");

    let mut forced = args.to_vec();
    forced.push("--force");
    let (code, _, stderr) = run(&forced);
    assert_eq!(code, 0, "{stderr}");
    assert!(out.join("leaves.npy").exists());
    assert_eq!(std::fs::read_to_string(out.join("keep.txt")).unwrap(), "mine", "other files are kept");
}

#[test]
fn auto_never_takes_a_software_adapter() {
    let (_, info, _) = run(["info"]);
    let hardware_wgpu = info.contains("(hardware)");
    let cuda = info.lines().any(|l| l.trim_start().starts_with("device 0: ") && !l.contains("cannot open"));
    let (code, _, stderr) = run(["tree", "--generate", "uniform", "--n", "300", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    // (Mesa's GL driver may print its own lines while wgpu enumerates adapters.)
    let report = stderr.lines().find(|l| l.starts_with("executor: ")).unwrap_or_default();
    assert!(report.starts_with("executor: ") && report.contains("auto"), "{report}");
    if !hardware_wgpu && !cuda {
        assert!(report.starts_with("executor: cpu"), "no GPU here, so auto must take the CPU: {report}");
    }
}
