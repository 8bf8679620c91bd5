//! `spatix build` and the batch commands on the index it saves: the same output, byte for
//! byte, as from the CSV file, for every structure it saves, in both precisions, on one
//! thread and several; and saved indexes that are damaged or of no use to the command refused
//! with `FILE: reason`, exit code 2 and no output.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use crate::bad_input::assert_rejected;
use spatix_workload::Rng;

use crate::common::{
    Scratch, assert_success, boxes, boxes_csv, points, points_csv, spatix, stderr, stdout,
};

/// Every structure `--index` names: `build` saves each.
fn saved_kinds() -> Vec<String> {
    [
        "packed",
        "kd-tree",
        "brute-force",
        "quadtree",
        "loose-quadtree",
        "mxcif",
        "grid",
        "loose-grid",
        "point-grid",
        "hierarchical",
        "sweep",
        "layered",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// README's list of the structures `build` saves (the sentence "Every structure saves: ..."),
/// the list above and the binary's `--index` values for the batch commands are the same
/// structures, in the same order.
#[test]
fn readme_lists_every_saved_kind() {
    let readme = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md"))
        .expect("README.md");
    let sentence = readme
        .split("Every structure saves: ")
        .nth(1)
        .and_then(|rest| rest.split('.').next())
        .expect("README's sentence \"Every structure saves: ...\"");
    let listed: Vec<String> = sentence
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    assert_eq!(listed, saved_kinds(), "README's saved kinds");
    assert_eq!(
        crate::common::batch_index_kinds(),
        saved_kinds(),
        "the binary's"
    );
}

/// Runs `spatix` with `args`, and `precision` (`--f32` or nothing) after them; it must succeed.
fn run_ok(args: &[&OsStr], precision: Option<&str>) -> String {
    let mut args = args.to_vec();
    args.extend(precision.map(OsStr::new));
    let output = spatix(&args);
    assert_success(&output);
    stdout(&output)
}

/// `build`s `data` (with `extra` arguments) into `index` with `--index kind`.
fn build(data: &Path, index: &Path, kind: &str, extra: &[&str], precision: Option<&str>) {
    let mut args = vec![
        OsStr::new("build"),
        data.as_os_str(),
        OsStr::new("--out"),
        index.as_os_str(),
        OsStr::new("--index"),
        OsStr::new(kind),
    ];
    args.extend(extra.iter().map(OsStr::new));
    run_ok(&args, precision);
    assert!(fs::metadata(index).unwrap().len() > 0);
}

#[test]
fn query_and_pairs_from_a_saved_index_equal_those_from_the_csv() {
    let dir = Scratch::new("saved-boxes");
    let data = dir.write("boxes.csv", &boxes_csv(&boxes(500, 11)));
    let queries = dir.write("queries.csv", &boxes_csv(&boxes(120, 12)));
    let index = dir.path("index.spatix");
    let os = |s: &'static str| OsStr::new(s);
    for kind in saved_kinds().iter().filter(|k| *k != "kd-tree") {
        for precision in [None, Some("--f32")] {
            build(&data, &index, kind, &[], precision);
            for (command, rest) in [
                ("pairs", vec![]),
                ("query", vec![queries.as_os_str()]),
                ("query", vec![queries.as_os_str(), os("--threads"), os("3")]),
            ] {
                let run = |file: &Path| {
                    let mut args = vec![os(command), file.as_os_str()];
                    args.extend(rest.iter().copied());
                    args.extend([os("--index"), OsStr::new(kind)]);
                    run_ok(&args, precision)
                };
                let expected = run(&data);
                assert!(
                    expected.lines().count() > 100,
                    "{command}: results to compare"
                );
                let what = format!("{command} {rest:?} --index {kind} {precision:?}");
                assert_eq!(run(&index), expected, "{what}");
                // Without --index (nor --f32): the file says which structure and precision.
                let mut args = vec![os(command), index.as_os_str()];
                args.extend(rest.iter().copied());
                assert_eq!(run_ok(&args, None), expected, "{what}, no options");
            }
        }
    }
}

#[test]
fn knn_from_a_saved_index_equals_knn_from_the_csv() {
    let dir = Scratch::new("saved-points");
    let data = dir.write("points.csv", &points_csv(&points(400, 21)));
    let queries = dir.write("queries.csv", &points_csv(&points(60, 22)));
    let index = dir.path("index.spatix");
    for kind in saved_kinds() {
        for precision in [None, Some("--f32")] {
            build(&data, &index, &kind, &["--points"], precision);
            for threads in ["1", "3"] {
                let run = |file: &Path| {
                    let args: Vec<&OsStr> = vec![
                        "knn".as_ref(),
                        file.as_os_str(),
                        queries.as_os_str(),
                        "-k".as_ref(),
                        "5".as_ref(),
                        "--threads".as_ref(),
                        threads.as_ref(),
                        "--index".as_ref(),
                        kind.as_ref(),
                    ];
                    run_ok(&args, precision)
                };
                let expected = run(&data);
                assert_eq!(expected.lines().count(), 1 + 60 * 5);
                let what = format!("--index {kind} {precision:?} --threads {threads}");
                assert_eq!(run(&index), expected, "{what}");
            }
        }
    }
}

/// `knn` reads a CSV file of boxes as it reads a saved index of boxes: the same answers
/// (distances to the boxes) under every box structure and both precisions, the packed index
/// by default, and the summary counts boxes for both; `--index kd-tree` is refused for boxes
/// from the CSV file as from the saved one.
#[test]
fn knn_reads_boxes_from_a_csv_as_from_a_saved_index() {
    let dir = Scratch::new("saved-knn-boxes");
    let data = dir.write("boxes.csv", &boxes_csv(&boxes(300, 71)));
    let queries = dir.write("queries.csv", &points_csv(&points(40, 72)));
    let index = dir.path("index.spatix");
    for kind in saved_kinds().into_iter().filter(|k| k != "kd-tree") {
        for precision in [None, Some("--f32")] {
            build(&data, &index, &kind, &[], precision);
            let run = |file: &Path, kind: Option<&str>| {
                let mut args: Vec<&OsStr> = vec![
                    "knn".as_ref(),
                    file.as_os_str(),
                    queries.as_os_str(),
                    "-k".as_ref(),
                    "4".as_ref(),
                ];
                args.extend(
                    kind.iter()
                        .flat_map(|k| [OsStr::new("--index"), OsStr::new(k)]),
                );
                args.extend(precision.map(OsStr::new));
                let output = spatix(&args);
                assert_success(&output);
                assert!(
                    stderr(&output).contains("among 300 boxes"),
                    "{}",
                    stderr(&output)
                );
                stdout(&output)
            };
            let expected = run(&data, Some(&kind));
            assert_eq!(expected.lines().count(), 1 + 40 * 4);
            let what = format!("--index {kind} {precision:?}");
            assert_eq!(run(&index, Some(&kind)), expected, "{what}");
            assert_eq!(run(&index, None), expected, "{what}, no --index");
            if kind == "packed" {
                assert_eq!(
                    run(&data, None),
                    expected,
                    "packed is knn's default for boxes"
                );
            }
        }
    }
    build(&data, &index, "packed", &[], None);
    for file in [&data, &index] {
        let name = file.file_name().unwrap().to_str().unwrap();
        let args = ["knn", file.to_str().unwrap(), queries.to_str().unwrap()];
        let args = [&args[..], &["--index", "kd-tree"]].concat();
        let reason = if file == &data {
            "holds boxes (id,min_x,min_y,max_x,max_y): --index kd-tree holds points only"
        } else {
            "holds a packed index, not the --index kd-tree asked for"
        };
        assert_rejected(&dir, &args, name, 0, reason);
    }
}

#[test]
fn kd_tree_indexes_are_built_from_points_by_default() {
    let dir = Scratch::new("saved-default");
    let data = dir.write("points.csv", &points_csv(&points(50, 31)));
    let queries = dir.write("queries.csv", &points_csv(&points(5, 32)));
    let index = dir.path("index.spatix");
    let data_s = data.to_str().unwrap();
    let index_s = index.to_str().unwrap();
    let output = spatix(&["build", data_s, "--points", "--out", index_s]);
    assert_success(&output);
    assert!(
        stderr(&output).contains("50 points in"),
        "{}",
        stderr(&output)
    );
    let queries_s = queries.to_str().unwrap();
    let from_index = spatix(&["knn", index_s, queries_s, "-k", "3"]);
    assert_success(&from_index);
    assert!(stderr(&from_index).contains("index: kd-tree"));
    assert_eq!(
        stdout(&from_index),
        stdout(&spatix(&["knn", data_s, queries_s, "-k", "3"]))
    );
}

/// A saved index of boxes and a queries file in a scratch directory, for the refusals.
fn damaged(name: &str) -> (Scratch, Vec<u8>) {
    let dir = Scratch::new(name);
    let data = dir.write("boxes.csv", &boxes_csv(&boxes(200, 41)));
    dir.write("queries.csv", &boxes_csv(&boxes(20, 42)));
    let index = dir.path("index.spatix");
    build(&data, &index, "grid", &[], None);
    let bytes = fs::read(&index).unwrap();
    fs::remove_file(&index).unwrap();
    fs::remove_file(&data).unwrap();
    (dir, bytes)
}

/// `query` and `pairs` on `bytes` saved as bad.spatix fail with `bad.spatix: ...reason...`.
fn assert_refused(dir: &Scratch, bytes: &[u8], reason: &str) {
    let bad = dir.path("bad.spatix");
    fs::write(&bad, bytes).unwrap();
    let (bad, queries) = (bad.to_str().unwrap(), dir.path("queries.csv"));
    let queries = queries.to_str().unwrap();
    assert_rejected(dir, &["query", bad, queries], "bad.spatix", 0, reason);
    assert_rejected(
        dir,
        &["query", bad, queries, "--threads", "2"],
        "bad.spatix",
        0,
        reason,
    );
    assert_rejected(dir, &["pairs", bad], "bad.spatix", 0, reason);
    fs::remove_file(dir.path("bad.spatix")).unwrap();
}

#[test]
fn damaged_saved_indexes_are_refused() {
    let (dir, bytes) = damaged("saved-damaged");
    // A bit flipped in the format version, and in the value type ("u64" read as "u74"):
    // the checksum is checked before the header is read past the version.
    for (at, reason) in [
        (7, "corrupt bytes: format version"),
        (18, "corrupt bytes: checksum mismatch"),
    ] {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x01 << (at % 7);
        assert_refused(&dir, &flipped, reason);
    }
    assert_refused(
        &dir,
        &bytes[..10],
        "corrupt bytes: cut short: 10 bytes, less than a header and a checksum",
    );
    for cut in [50, bytes.len() / 2, bytes.len() - 1] {
        assert_refused(&dir, &bytes[..cut], "corrupt bytes: checksum mismatch");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_refused(&dir, &longer, "corrupt bytes: checksum mismatch");
}

/// How many single bits of each saved index [`every_flipped_bit_is_refused`] flips.
const FLIPS: usize = 200;

/// Every structure `build` saves, [`FLIPS`] random single bits of its file flipped one at a
/// time (a fixed seed per structure): every damaged file is refused by the command that
/// reads it (`knn` for the kd-tree, `query` for the others) with exit code 2, no output and
/// `FILE: corrupt bytes: ...` saying that the checksum does not match (or, for the version's
/// bits, which version it is; the magic's bits make a file that is read as CSV and refused
/// at its first line).
#[test]
fn every_flipped_bit_is_refused() {
    let dir = Scratch::new("saved-flipped");
    let boxes_file = dir.write("boxes.csv", &boxes_csv(&boxes(300, 61)));
    let points_file = dir.write("points.csv", &points_csv(&points(300, 62)));
    let queries = dir.write("queries.csv", &boxes_csv(&boxes(5, 63)));
    let near = dir.write("near.csv", &points_csv(&points(5, 64)));
    let bad = dir.path("bad.spatix");
    let mut refused = Vec::new();
    for (seed, kind) in (0u64..).zip(saved_kinds()) {
        let index = dir.path("index.spatix");
        let (data, command, queries) = if kind == "kd-tree" {
            (&points_file, "knn", &near)
        } else {
            (&boxes_file, "query", &queries)
        };
        build(data, &index, &kind, &[], None);
        let bytes = fs::read(&index).unwrap();
        let mut rng = Rng::new(seed);
        let mut count = 0;
        for _ in 0..FLIPS {
            let bit = rng.below(bytes.len() * 8);
            let mut flipped = bytes.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            fs::write(&bad, &flipped).unwrap();
            let output = spatix(&[OsStr::new(command), bad.as_os_str(), queries.as_os_str()]);
            let message = stderr(&output);
            let expected = match bit / 8 {
                0..6 => format!("{}:1: ", bad.display()),
                // Version 3's lowest bit flipped is version 2, which is read, and its checksum
                // is not the bytes'.
                6 if bit % 8 == 0 => format!("{}: corrupt bytes: checksum mismatch", bad.display()),
                6..8 => format!("{}: corrupt bytes: format version ", bad.display()),
                _ => format!("{}: corrupt bytes: checksum mismatch", bad.display()),
            };
            assert!(
                output.status.code() == Some(2)
                    && output.stdout.is_empty()
                    && message.starts_with(&expected)
                    && message.lines().count() == 1,
                "{kind}, bit {bit} flipped: {:?} {message:?}",
                output.status.code()
            );
            count += 1;
        }
        refused.push(count);
    }
    assert_eq!(
        refused,
        vec![FLIPS; saved_kinds().len()],
        "refused per kind"
    );
}

#[test]
fn files_that_are_no_index_are_read_as_csv_and_refused() {
    let (dir, _) = damaged("saved-not-index");
    for (content, line, reason) in [
        (&b""[..], 1, "empty file"),
        (&b"\x00\x01SPATIX\xff"[..], 1, "missing column"),
        (&b"SPATI"[..], 1, "missing column"),
    ] {
        let bad = dir.path("bad.spatix");
        fs::write(&bad, content).unwrap();
        let queries = dir.path("queries.csv");
        let args = ["query", bad.to_str().unwrap(), queries.to_str().unwrap()];
        assert_rejected(&dir, &args, "bad.spatix", line, reason);
        let args = ["pairs", args[1]];
        assert_rejected(&dir, &args, "bad.spatix", line, reason);
    }
}

#[test]
fn saved_indexes_the_command_cannot_use_are_refused() {
    let dir = Scratch::new("saved-unusable");
    let points_file = dir.write("points.csv", &points_csv(&points(30, 51)));
    let boxes_file = dir.write("boxes.csv", &boxes_csv(&boxes(30, 52)));
    let queries = dir.write("queries.csv", &boxes_csv(&boxes(5, 53)));
    let (tree, grid) = (dir.path("tree.spatix"), dir.path("grid.spatix"));
    build(&points_file, &tree, "kd-tree", &[], None);
    build(&boxes_file, &grid, "grid", &[], None);
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let (tree, grid, queries) = (s(&tree), s(&grid), s(&queries));
    let kd = "holds a kd-tree (points only): pairs takes boxes";
    assert_rejected(&dir, &["pairs", &tree], "tree.spatix", 0, kd);
    let kd = "holds a kd-tree (points only): query takes boxes";
    assert_rejected(&dir, &["query", &tree, &queries], "tree.spatix", 0, kd);
    let other = "holds a grid index, not the --index loose-grid asked for";
    let args = ["query", &grid, &queries, "--index", "loose-grid"];
    assert_rejected(&dir, &args, "grid.spatix", 0, other);
    let precision = "holds coordinates of 8 bytes, not the f32 that --f32 asks for";
    assert_rejected(
        &dir,
        &["pairs", &grid, "--f32"],
        "grid.spatix",
        0,
        precision,
    );
    let again = "a saved index already: build reads a CSV file";
    let again_file = s(&dir.path("again.spatix"));
    let output = spatix(&["build", &grid, "--out", &again_file, "--index", "grid"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).starts_with(&format!("{grid}: {again}")));
    assert!(!dir.path("again.spatix").exists(), "no index left behind");
}

#[test]
fn build_refuses_bad_input_and_leaves_no_file() {
    let dir = Scratch::new("saved-bad-input");
    let data = dir.write(
        "boxes.csv",
        "id,min_x,min_y,max_x,max_y\n1,0,0,1,1\n2,0,0,x,1\n",
    );
    let index = dir.path("index.spatix");
    let output = spatix(&[
        "build",
        data.to_str().unwrap(),
        "--out",
        index.to_str().unwrap(),
        "--index",
        "grid",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    assert!(
        message.starts_with(&format!("{}:3: ", data.display())),
        "{message}"
    );
    assert_eq!(dir.files(), ["boxes.csv"], "no index left behind");
}
