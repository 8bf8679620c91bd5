//! Every kind of bad input: `FILE:LINE: reason` on standard error, exit code 2, nothing on
//! standard output, and no output file left behind (an old one is left untouched).

use std::fs;

use crate::common::{Scratch, spatix, stderr};

const BOX_HEADER: &str = "id,min_x,min_y,max_x,max_y\n";

/// Runs `args` (with `--out` into the scratch directory, over an existing file) and checks that
/// it fails on `file`:`line` (line 0: on `file` as a whole, `FILE: reason`) with a reason
/// containing `reason`.
pub(crate) fn assert_rejected(dir: &Scratch, args: &[&str], file: &str, line: u64, reason: &str) {
    let out = dir.write("out.csv", "old results\n");
    let before = dir.files();
    let mut full: Vec<&str> = args.to_vec();
    full.extend(["--out", out.to_str().unwrap()]);
    let output = spatix(&full);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
    assert!(output.stdout.is_empty(), "{args:?}");
    let path = dir.path(file);
    let prefix = match line {
        0 => format!("{}: ", path.display()),
        line => format!("{}:{line}: ", path.display()),
    };
    assert!(
        message.starts_with(&prefix),
        "{args:?}: expected {prefix:?}, got {message:?}"
    );
    assert!(
        message.contains(reason),
        "{args:?}: expected {reason:?} in {message:?}"
    );
    assert_eq!(message.lines().count(), 1, "one line: {message:?}");
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        "old results\n",
        "{args:?}"
    );
    assert_eq!(dir.files(), before, "{args:?}: no file left behind");

    // Without --out: nothing at all on standard output.
    let output = spatix(args);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(stderr(&output).starts_with(&prefix));
}

/// A boxes file with `body` after the header fails `pairs` at `line` with `reason`.
fn assert_bad_boxes(name: &str, body: &str, line: u64, reason: &str) {
    let dir = Scratch::new(&format!("bad-{name}"));
    let file = dir.write("boxes.csv", &format!("{BOX_HEADER}{body}"));
    assert_rejected(
        &dir,
        &["pairs", file.to_str().unwrap()],
        "boxes.csv",
        line,
        reason,
    );
}

#[test]
fn a_malformed_line_is_rejected() {
    assert_bad_boxes(
        "malformed",
        "1,0,0,1,1\n2,0,zero,1,1\n",
        3,
        "min_y: \"zero\" is not a number",
    );
    assert_bad_boxes(
        "bad-id",
        "1,0,0,1,1\n-2,0,0,1,1\n",
        3,
        "id: \"-2\" is not an unsigned",
    );
    assert_bad_boxes(
        "empty-field",
        "1,0,0,1,\n",
        2,
        "max_y: \"\" is not a number",
    );
    assert_bad_boxes("extra-field", "1,0,0,1,1,9\n", 2, "expected 5 fields");
}

#[test]
fn a_nan_or_an_infinity_is_rejected() {
    assert_bad_boxes(
        "nan",
        "1,0,0,1,1\n\n2,NaN,0,1,1\n",
        4,
        "min_x: NaN is not a finite number",
    );
    assert_bad_boxes(
        "inf",
        "1,0,0,inf,1\n",
        2,
        "max_x: inf is not a finite number",
    );
}

#[test]
fn an_inverted_box_is_rejected() {
    assert_bad_boxes(
        "inverted",
        "1,0,0,1,1\n2,0,5,1,4\n",
        3,
        "inverted box: min_y 5 is greater than max_y 4",
    );
}

#[test]
fn a_missing_column_is_rejected() {
    let dir = Scratch::new("bad-header");
    let file = dir.write("boxes.csv", "id,min_x,min_y,max_x\n1,0,0,1\n");
    assert_rejected(
        &dir,
        &["pairs", file.to_str().unwrap()],
        "boxes.csv",
        1,
        "missing column max_y",
    );
    // Other columns are ignored, but not in place of a needed one.
    let file = dir.write("boxes.csv", "id,min_x,min_y,max_x,max_z,colour\n");
    assert_rejected(
        &dir,
        &["pairs", file.to_str().unwrap()],
        "boxes.csv",
        1,
        "missing column max_y",
    );
    let file = dir.write("boxes.csv", "id,min_x,min_y,max_x,min_x\n");
    assert_rejected(
        &dir,
        &["pairs", file.to_str().unwrap()],
        "boxes.csv",
        1,
        "column min_x appears twice",
    );
    assert_bad_boxes(
        "short-line",
        "1,0,0,1,1\n2,0,0,1\n",
        3,
        "expected 5 fields (id,min_x,min_y,max_x,max_y), found 4",
    );
}

#[test]
fn a_duplicate_id_is_rejected() {
    assert_bad_boxes(
        "duplicate",
        "7,0,0,1,1\n8,0,0,1,1\n9,0,0,1,1\n8,5,5,6,6\n7,0,0,2,2\n",
        5,
        "duplicate id 8 (first on line 3)",
    );
}

#[test]
fn an_empty_file_is_rejected() {
    let dir = Scratch::new("bad-empty");
    for content in ["", "\n\n  \n"] {
        let file = dir.write("boxes.csv", content);
        assert_rejected(
            &dir,
            &["pairs", file.to_str().unwrap()],
            "boxes.csv",
            1,
            "empty file",
        );
    }
}

#[test]
fn a_file_that_does_not_exist_is_rejected() {
    let dir = Scratch::new("bad-missing");
    let file = dir.path("nowhere.csv");
    assert_rejected(
        &dir,
        &["pairs", file.to_str().unwrap()],
        "nowhere.csv",
        0,
        "os error 2",
    );
}

#[test]
fn bad_query_files_are_rejected_before_any_output() {
    let dir = Scratch::new("bad-queries");
    let boxes = dir.write("boxes.csv", &format!("{BOX_HEADER}1,0,0,1,1\n"));
    let points = dir.write("points.csv", "id,x,y\n1,0,0\n2,1,1\n");
    // The first queries are fine and would produce results: none may be written.
    let queries = dir.write("queries.csv", &format!("{BOX_HEADER}1,0,0,1,1\n2,0,0,1\n"));
    let args = ["query", boxes.to_str().unwrap(), queries.to_str().unwrap()];
    assert_rejected(&dir, &args, "queries.csv", 3, "expected 5 fields");
    let queries = dir.write("queries.csv", "id,x,y\n1,0,0\n2,0,nan\n");
    let args = ["knn", points.to_str().unwrap(), queries.to_str().unwrap()];
    assert_rejected(
        &dir,
        &args,
        "queries.csv",
        3,
        "y: nan is not a finite number",
    );
    dir.write("queries.csv", "id,x,y\n1,0,0\n1,1,1\n");
    assert_rejected(
        &dir,
        &args,
        "queries.csv",
        3,
        "duplicate id 1 (first on line 2)",
    );
    // A boxes file given where query points are expected (knn's data may be boxes).
    let args = ["knn", points.to_str().unwrap(), boxes.to_str().unwrap()];
    assert_rejected(&dir, &args, "boxes.csv", 1, "missing column x, y");
}

#[test]
fn text_that_is_not_utf8_is_rejected() {
    let dir = Scratch::new("bad-utf8");
    let file = dir.path("boxes.csv");
    fs::write(
        &file,
        b"id,min_x,min_y,max_x,max_y\n1,0,0,1,1\n2,\xff,0,1,1\n",
    )
    .unwrap();
    assert_rejected(
        &dir,
        &["pairs", file.to_str().unwrap()],
        "boxes.csv",
        3,
        "not valid UTF-8",
    );
}
