//! `spatix pairs`, `query` and `knn` on generated files, every `--index`, against
//! `BruteForce`.

use core::ops::ControlFlow;
use std::fmt::Write as _;
use std::fs;

use spatix::prelude::*;
use spatix::{Aabb, BruteForce, Point};

use crate::common::{
    Element, Scratch, assert_success, batch_index_kinds, box_index_kinds, boxes, boxes_csv, points,
    points_csv, spatix, stderr, stdout,
};

fn oracle(elements: &[Element]) -> BruteForce<f64, u64> {
    let mut index = BruteForce::new();
    for (id, [a, b, c, d]) in elements {
        let aabb = Aabb::new(Point::new(*a, *b), Point::new(*c, *d)).expect("a valid box");
        index.insert(aabb, *id).expect("inserted");
    }
    index
}

/// The pairs of a `pairs` output, checked for form, sorted.
fn parse_pairs(text: &str) -> Vec<(u64, u64)> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("a,b"));
    let mut pairs: Vec<(u64, u64)> = lines
        .map(|line| {
            let (a, b) = line.split_once(',').expect("two fields");
            let pair = (a.parse().expect("an id"), b.parse().expect("an id"));
            assert!(pair.0 < pair.1, "{line}: a < b");
            pair
        })
        .collect();
    pairs.sort_unstable();
    pairs
}

#[test]
fn pairs_equal_brute_force_for_every_index() {
    let dir = Scratch::new("pairs");
    let elements = boxes(400, 1);
    let file = dir.write("boxes.csv", &boxes_csv(&elements));
    let mut expected = Vec::new();
    let _ = oracle(&elements).for_each_pair(|a, b| {
        expected.push((*a.value.min(b.value), *a.value.max(b.value)));
        ControlFlow::Continue(())
    });
    expected.sort_unstable();
    assert!(expected.len() > 100, "the data must have pairs");
    let mut unique = expected.clone();
    unique.dedup();
    assert_eq!(unique.len(), expected.len());

    let default = spatix(&["pairs".as_ref(), file.as_os_str()]);
    assert_success(&default);
    assert_eq!(
        parse_pairs(&stdout(&default)),
        expected,
        "the default index"
    );
    assert!(
        stderr(&default).contains("index: packed"),
        "packed by default"
    );
    for kind in box_index_kinds() {
        let output = spatix(&[
            "pairs".as_ref(),
            file.as_os_str(),
            "--index".as_ref(),
            kind.as_ref(),
        ]);
        assert_success(&output);
        assert_eq!(parse_pairs(&stdout(&output)), expected, "--index {kind}");
        let summary = stderr(&output);
        assert!(
            summary.contains(&format!("{} pairs among 400 boxes", expected.len())),
            "{summary}"
        );
        assert!(summary.contains(&format!("index: {kind}")), "{summary}");
    }
}

#[test]
fn query_equals_brute_force_for_every_index() {
    let dir = Scratch::new("query");
    let elements = boxes(300, 2);
    let queries: Vec<Element> = boxes(40, 3)
        .into_iter()
        .enumerate()
        .map(|(i, (_, [a, b, c, d]))| (i as u64, [a - 5.0, b - 5.0, c + 5.0, d + 5.0]))
        .collect();
    let data = dir.write("boxes.csv", &boxes_csv(&elements));
    let query_file = dir.write("queries.csv", &boxes_csv(&queries));
    let brute = oracle(&elements);
    let mut expected = "query_id,id\n".to_owned();
    let mut results = 0;
    for (query_id, [a, b, c, d]) in &queries {
        let area = Aabb::new(Point::new(*a, *b), Point::new(*c, *d)).expect("a valid box");
        let mut ids = Vec::new();
        let _ = brute.query(&area, |item| {
            ids.push(*item.value);
            ControlFlow::Continue(())
        });
        ids.sort_unstable();
        results += ids.len();
        for id in ids {
            writeln!(expected, "{query_id},{id}").expect("writing to a string");
        }
    }
    assert!(results > 40, "the queries must find boxes");

    for kind in box_index_kinds() {
        let out = dir.path(&format!("result-{kind}.csv"));
        let output = spatix(&[
            "query".as_ref(),
            data.as_os_str(),
            query_file.as_os_str(),
            "--index".as_ref(),
            kind.as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        assert_success(&output);
        assert!(output.stdout.is_empty(), "results go to --out only");
        assert_eq!(
            fs::read_to_string(&out).expect("the output"),
            expected,
            "--index {kind}"
        );
        let summary = stderr(&output);
        assert!(
            summary.contains(&format!("{results} results for 40 queries")),
            "{summary}"
        );
    }
    for threads in [None, Some("2")] {
        let mut args = vec![
            "query",
            data.to_str().unwrap(),
            query_file.to_str().unwrap(),
        ];
        args.extend(threads.map(|n| ["--threads", n]).into_iter().flatten());
        let output = spatix(&args);
        assert_success(&output);
        assert_eq!(stdout(&output), expected, "packed, --threads {threads:?}");
        assert!(
            stderr(&output).contains("index: packed"),
            "packed by default"
        );
    }
}

/// The expected `knn` output: ascending distance, ties by ascending id.
fn knn_expected(elements: &[Element], queries: &[Element], k: usize) -> String {
    let mut text = "query_id,rank,id,distance\n".to_owned();
    for (query_id, [qx, qy, ..]) in queries {
        let mut all: Vec<(f64, u64)> = elements
            .iter()
            .map(|(id, [x, y, ..])| ((x - qx) * (x - qx) + (y - qy) * (y - qy), *id))
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (rank, (d2, id)) in all.iter().take(k).enumerate() {
            writeln!(text, "{query_id},{},{id},{}", rank + 1, d2.sqrt()).expect("writing");
        }
    }
    text
}

#[test]
fn knn_equals_brute_force_for_every_index_with_ties_broken_by_id() {
    let dir = Scratch::new("knn");
    let elements = points(300, 4);
    let queries: Vec<Element> = points(30, 5)
        .into_iter()
        .enumerate()
        .map(|(i, (_, c))| (i as u64 * 3, c))
        .chain([(7, [-3.5, 40.25, -3.5, 40.25])])
        .collect();
    let data = dir.write("points.csv", &points_csv(&elements));
    let query_file = dir.write("queries.csv", &points_csv(&queries));
    for k in [1usize, 6, 500] {
        let expected = knn_expected(&elements, &queries, k);
        let k = k.to_string();
        let knn = |extra: &[&str]| {
            let mut args = vec!["knn", data.to_str().unwrap(), query_file.to_str().unwrap()];
            args.extend(["-k", &k]);
            args.extend(extra);
            spatix(&args)
        };
        let default = knn(&[]);
        assert_success(&default);
        assert_eq!(stdout(&default), expected, "-k {k}, the default index");
        assert!(
            stderr(&default).contains("index: kd-tree"),
            "kd-tree by default"
        );
        for kind in batch_index_kinds() {
            let output = knn(&["--index", &kind]);
            assert_success(&output);
            assert_eq!(stdout(&output), expected, "-k {k} --index {kind}");
        }
        // On several threads, in blocks of queries: the same lines in the same order.
        for kind in ["kd-tree", "packed", "grid"] {
            let output = knn(&["--index", kind, "--threads", "2"]);
            assert_success(&output);
            assert_eq!(
                stdout(&output),
                expected,
                "-k {k} --index {kind} --threads 2"
            );
        }
    }
}

/// `query` and `knn` on two threads write exactly what they write on one, over more queries
/// than one block of a threaded run (4096) and lattice points whose k-th neighbours tie.
#[test]
fn two_threads_write_what_one_writes() {
    let dir = Scratch::new("threads");
    let data = dir.write("boxes.csv", &boxes_csv(&boxes(400, 11)));
    let windows = dir.write("windows.csv", &boxes_csv(&boxes(4500, 12)));
    let sites = dir.write("points.csv", &points_csv(&points(400, 13)));
    let spots = dir.write("spots.csv", &points_csv(&points(4500, 14)));
    let run = |args: &[&str]| {
        let output = spatix(args);
        assert_success(&output);
        stdout(&output)
    };
    for kind in ["packed", "grid", "quadtree"] {
        let args = [
            "query",
            data.to_str().unwrap(),
            windows.to_str().unwrap(),
            "--index",
            kind,
        ];
        let one = run(&args);
        assert!(one.lines().count() > 4500, "the windows must find boxes");
        let two = run(&[&args[..], &["--threads", "2"]].concat());
        assert_eq!(one, two, "query --index {kind}");
    }
    for kind in ["kd-tree", "packed", "grid"] {
        for k in ["1", "8"] {
            let args = [
                "knn",
                sites.to_str().unwrap(),
                spots.to_str().unwrap(),
                "-k",
                k,
                "--index",
                kind,
            ];
            let one = run(&args);
            let two = run(&[&args[..], &["--threads", "2"]].concat());
            assert_eq!(one, two, "knn -k {k} --index {kind}");
        }
    }
}

#[test]
fn the_kd_tree_refuses_boxes_before_reading_them() {
    let dir = Scratch::new("kd-boxes");
    let boxes = dir.write("boxes.csv", "id,min_x,min_y,max_x,max_y\n1,0,0,1,1\n");
    for command in ["pairs", "query"] {
        let mut args = vec![command, boxes.to_str().unwrap()];
        if command == "query" {
            args.push(boxes.to_str().unwrap());
        }
        args.extend(["--index", "kd-tree"]);
        let output = spatix(&args);
        assert_eq!(output.status.code(), Some(2), "{command}");
        assert!(
            stderr(&output).contains("kd-tree holds points only"),
            "{command}"
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn files_without_elements_give_just_the_header() {
    let dir = Scratch::new("no-elements");
    let boxes = dir.write("boxes.csv", "id,min_x,min_y,max_x,max_y\n");
    let points = dir.write("points.csv", "id,x,y\n\n");
    let queries = dir.write("queries.csv", "id,x,y\n1,0,0\n");
    for kind in batch_index_kinds() {
        let k = kind.as_str();
        if k != "kd-tree" {
            let pairs = spatix(&["pairs", boxes.to_str().unwrap(), "--index", k]);
            assert_success(&pairs);
            assert_eq!(stdout(&pairs), "a,b\n");
        }
        let knn = spatix(&[
            "knn",
            points.to_str().unwrap(),
            queries.to_str().unwrap(),
            "--index",
            k,
        ]);
        assert_success(&knn);
        assert_eq!(stdout(&knn), "query_id,rank,id,distance\n");
    }
}

#[test]
fn columns_in_any_order_spaces_crlf_and_large_ids_are_read() {
    let dir = Scratch::new("format");
    let max = u64::MAX;
    let boxes = dir.write(
        "boxes.csv",
        &format!(
            "\u{feff}max_y, id ,min_x,max_x,min_y\r\n\r\n 2 ,{max}, 0,2,0\r\n3,5,1.5,1e1,1\r\n"
        ),
    );
    let output = spatix(&["pairs", boxes.to_str().unwrap()]);
    assert_success(&output);
    assert_eq!(stdout(&output), format!("a,b\n5,{max}\n"));
}

#[test]
fn the_output_file_replaces_an_old_one_only_when_complete() {
    let dir = Scratch::new("replace");
    let boxes = dir.write(
        "boxes.csv",
        "id,min_x,min_y,max_x,max_y\n1,0,0,1,1\n2,1,1,2,2\n",
    );
    let out = dir.write("out.csv", "old\n");
    let output = spatix(&[
        "pairs",
        boxes.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_success(&output);
    assert_eq!(fs::read_to_string(&out).unwrap(), "a,b\n1,2\n");
    assert_eq!(dir.files(), ["boxes.csv", "out.csv"]);
}

#[test]
fn an_output_that_cannot_be_put_in_place_fails_and_leaves_nothing() {
    let dir = Scratch::new("unwritable");
    let boxes = dir.write("boxes.csv", "id,min_x,min_y,max_x,max_y\n1,0,0,1,1\n");
    let taken = dir.path("taken");
    fs::create_dir(&taken).unwrap();
    let output = spatix(&[
        "pairs",
        boxes.to_str().unwrap(),
        "-o",
        taken.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).starts_with(&format!("spatix: writing {}: ", taken.display())));
    assert_eq!(dir.files(), ["boxes.csv", "taken"]);
}

/// The index's bytes per element that a batch command's summary reports.
fn bytes_per_element(summary: &str) -> f64 {
    let before = summary
        .split(" bytes per element")
        .next()
        .expect("a summary");
    let number = before.rsplit(' ').next().expect("a number");
    number
        .parse()
        .unwrap_or_else(|_| panic!("bytes per element in {summary}"))
}

/// Runs `pairs` on `elements` with `--index kind`; checks the pairs against brute force and
/// returns the index's bytes per element.
fn pairs_checked(dir: &Scratch, name: &str, elements: &[Element], kind: &str) -> f64 {
    let data = dir.write(name, &boxes_csv(elements));
    let output = spatix(&["pairs", data.to_str().unwrap(), "--index", kind]);
    assert_success(&output);
    let mut expected = Vec::new();
    let _ = oracle(elements).for_each_pair(|a, b| {
        expected.push((*a.value.min(b.value), *a.value.max(b.value)));
        ControlFlow::Continue(())
    });
    expected.sort_unstable();
    assert_eq!(
        parse_pairs(&stdout(&output)),
        expected,
        "{name} --index {kind}"
    );
    bytes_per_element(&stderr(&output))
}

#[test]
fn stray_elements_cost_no_more_memory_and_change_no_answer() {
    let dir = Scratch::new("stray");
    let ordinary = boxes(3000, 21);
    let with = |extra: &[[f64; 4]]| {
        let mut all = ordinary.clone();
        all.extend(extra.iter().enumerate().map(|(i, b)| (1 + i as u64, *b)));
        all
    };
    let one_far_box = with(&[[1e9, 1e9, 1e9 + 2.0, 1e9 + 2.0]]);
    let three_far_points = with(&[
        [-5e29, -5e29, -5e29, -5e29],
        [5e29, 5e29, 5e29, 5e29],
        [5e29, -5e29, 5e29, -5e29],
    ]);
    for kind in box_index_kinds() {
        let base = pairs_checked(&dir, "base.csv", &ordinary, &kind);
        for (name, set) in [
            ("far-box.csv", &one_far_box),
            ("far-points.csv", &three_far_points),
        ] {
            let bytes = pairs_checked(&dir, name, set, &kind);
            assert!(
                bytes <= 2.0 * base,
                "--index {kind}, {name}: {bytes} bytes per element, {base} without the strays"
            );
        }
    }
}

#[test]
fn one_box_far_out_is_fine_for_every_index() {
    // Three boxes, one at 1e300: every structure sizes itself from the file (the leveled
    // grids once refused it, "more than 2^28 cells: use a larger cell_size").
    let dir = Scratch::new("far-out");
    let elements: Vec<Element> = vec![
        (1, [0.0, 0.0, 1.0, 1.0]),
        (2, [0.5, 0.5, 2.0, 2.0]),
        (3, [1e300, 1e300, 1e300, 1e300]),
    ];
    for kind in batch_index_kinds() {
        if kind != "kd-tree" {
            pairs_checked(&dir, "boxes.csv", &elements, &kind);
        }
    }
}

#[test]
fn extreme_coordinates_work_with_every_index() {
    let dir = Scratch::new("extreme");
    let elements: Vec<Element> = vec![
        (1, [-1e308, -1e308, -1e308, -1e308]),
        (2, [1e308, 1e308, 1e308, 1e308]),
        (3, [-1e308, 0.0, 5e307, 1.0]),
        (4, [0.0, 0.0, 1.0, 1.0]),
        (5, [1e200, 0.0, 1e200, 0.0]),
        (6, [1e-300, 1e-300, 2e-300, 2e-300]),
    ];
    let points: Vec<Element> = vec![
        (1, [0.0, 0.0, 0.0, 0.0]),
        (2, [1e200, 0.0, 1e200, 0.0]),
        (3, [-1.7e308, 1.7e308, -1.7e308, 1.7e308]),
        (4, [1e-300, 0.0, 1e-300, 0.0]),
        (5, [2e-300, 0.0, 2e-300, 0.0]),
    ];
    let data = dir.write("points.csv", &points_csv(&points));
    let queries = dir.write(
        "queries.csv",
        "id,x,y\n1,1e200,1e200\n2,0,0\n3,1.7e308,-1.7e308\n",
    );
    for kind in batch_index_kinds() {
        // The kd-tree holds points only: pairs of boxes go to every other structure.
        if kind != "kd-tree" {
            pairs_checked(&dir, "boxes.csv", &elements, &kind);
        }
        let output = spatix(&[
            "knn",
            data.to_str().unwrap(),
            queries.to_str().unwrap(),
            "-k",
            "5",
            "--index",
            &kind,
        ]);
        assert_success(&output);
        let ranked: Vec<String> = stdout(&output)
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(2).expect("an id").to_owned())
            .collect();
        // From (1e200, 1e200): (1e200, 0) first, then the origin and the tiny ones (tied at
        // 1.414e200, by id), then the far corner. From the origin: the tiny ones in order of
        // their distance, then 1e200. From (1.7e308, -1.7e308) every distance exceeds MAX:
        // all are reported as inf, and the command breaks those ties by id.
        let expected = [
            "2", "1", "4", "5", "3", "1", "4", "5", "2", "3", "1", "2", "3", "4", "5",
        ];
        assert_eq!(ranked, expected, "--index {kind}");
    }
}
