//! The form of messages: `FILE: reason` when no line is at fault, the subcommand's usage for a
//! bad option, numbers in their shortest form (an exponent for large and small magnitudes),
//! counts with the right noun, and help that describes each subcommand's own options.

use std::fs;

use crate::common::{Scratch, assert_success, spatix, stderr, stdout};

const BOX_HEADER: &str = "id,min_x,min_y,max_x,max_y\n";

#[test]
fn errors_without_a_line_name_only_the_file() {
    let dir = Scratch::new("msg-no-line");
    let missing = dir.path("nowhere.csv");
    let folder = dir.path("folder");
    fs::create_dir(&folder).unwrap();
    let boxes = dir.write("boxes.csv", &format!("{BOX_HEADER}1,0,0,1,1\n"));
    for (args, file, reason) in [
        (
            vec!["pairs", missing.to_str().unwrap()],
            &missing,
            "os error 2",
        ),
        (
            vec!["pairs", folder.to_str().unwrap()],
            &folder,
            "os error 21",
        ),
        (
            vec![
                "pairs",
                boxes.to_str().unwrap(),
                "--out",
                boxes.to_str().unwrap(),
            ],
            &boxes,
            "--out names the input file",
        ),
    ] {
        let output = spatix(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        let prefix = format!("{}: ", file.display());
        assert!(message.starts_with(&prefix), "{args:?}: {message}");
        assert!(message.contains(reason), "{args:?}: {message}");
    }
}

#[test]
fn a_bad_option_value_shows_the_subcommands_usage() {
    let dir = Scratch::new("msg-usage");
    let boxes = dir.write("boxes.csv", &format!("{BOX_HEADER}1,0,0,1,1\n"));
    let png = dir.path("x.png");
    let b = boxes.to_str().unwrap();
    for (args, usage) in [
        (
            vec!["pairs", b, "--index", "kd-tree"],
            "Usage: spatix pairs ",
        ),
        (
            vec!["query", b, b, "--index", "kd-tree"],
            "Usage: spatix query ",
        ),
        (
            vec![
                "sim",
                "--render",
                png.to_str().unwrap(),
                "--render-every",
                "2",
            ],
            "Usage: spatix sim ",
        ),
    ] {
        let output = spatix(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(usage), "{args:?}: {message}");
        assert_eq!(message.matches("error:").count(), 1, "{message}");
    }
}

/// Whether `text` holds a run of more than 17 digits (a number printed in full).
fn has_long_number(text: &str) -> bool {
    text.split(|c: char| !c.is_ascii_digit())
        .any(|run| run.len() > 17)
}

#[test]
fn large_and_small_numbers_print_in_shortest_form() {
    let dir = Scratch::new("msg-numbers");
    let inverted = dir.write("inverted.csv", &format!("{BOX_HEADER}1,2e300,0,1e300,1\n"));
    let output = spatix(&["pairs", inverted.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("min_x 2e300 is greater than max_x 1e300"),
        "{}",
        stderr(&output)
    );

    let points = dir.write("points.csv", "id,x,y\n1,0,0\n2,1e-300,0\n3,0.5,0\n4,3,4\n");
    let queries = dir.write("queries.csv", "id,x,y\n1,1e300,0\n2,0,0\n");
    let output = spatix(&[
        "knn",
        points.to_str().unwrap(),
        queries.to_str().unwrap(),
        "-k",
        "4",
    ]);
    assert_success(&output);
    let text = stdout(&output);
    assert!(!has_long_number(&text), "{text}");
    let distances: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').next().unwrap())
        .collect();
    // The ordinary ones as before (`5`, `0.5`), the others with an exponent; each reads back
    // as the same f64.
    assert_eq!(distances[0], "1e300", "{text}");
    assert_eq!(&distances[4..], ["0", "1e-300", "0.5", "5"], "{text}");
    for d in &distances {
        let value: f64 = d.parse().unwrap();
        assert_eq!(d.parse::<f64>().unwrap().to_bits(), value.to_bits());
    }

    let boxes = dir.write(
        "far.csv",
        &format!("{BOX_HEADER}1,0,0,1e300,1e300\n2,-1e300,-1e300,0,0\n3,5,5,6,6\n"),
    );
    for kind in ["grid", "quadtree", "sweep", "loose-grid"] {
        let output = spatix(&["pairs", boxes.to_str().unwrap(), "--index", kind]);
        assert_success(&output);
        assert!(!has_long_number(&stderr(&output)), "{}", stderr(&output));
    }
}

#[test]
fn counts_take_the_singular_for_one() {
    let dir = Scratch::new("msg-counts");
    let boxes = dir.write("boxes.csv", &format!("{BOX_HEADER}1,0,0,1,1\n2,1,1,2,2\n"));
    let output = spatix(&["pairs", boxes.to_str().unwrap()]);
    assert_success(&output);
    assert!(
        stderr(&output).contains(": 1 pair among 2 boxes,"),
        "{}",
        stderr(&output)
    );

    let one = dir.write("one.csv", &format!("{BOX_HEADER}1,0,0,1,1\n"));
    let output = spatix(&["query", one.to_str().unwrap(), one.to_str().unwrap()]);
    assert_success(&output);
    assert!(
        stderr(&output).contains(": 1 result for 1 query among 1 box,"),
        "{}",
        stderr(&output)
    );

    let points = dir.write("points.csv", "id,x,y\n1,0,0\n2,1,1\n");
    let output = spatix(&["knn", points.to_str().unwrap(), points.to_str().unwrap()]);
    assert_success(&output);
    assert!(
        stderr(&output).contains(": 2 results for 2 queries among 2 points,"),
        "{}",
        stderr(&output)
    );

    let gif = dir.path("one.gif");
    let output = spatix(&[
        "sim",
        "--agents",
        "1",
        "--frames",
        "1",
        "--verify-every",
        "1",
        "--render",
        gif.to_str().unwrap(),
    ]);
    assert_success(&output);
    let table = stdout(&output);
    assert!(table.starts_with("spatix sim: 1 agent ("), "{table}");
    assert!(table.contains(" world, 1 frame, 1 thread"), "{table}");
    assert!(table.contains("1 frame checked"), "{table}");
    assert!(table.contains("(1 frame)"), "{table}");
    assert!(
        stderr(&output).ends_with(", 0 pairs\n"),
        "{}",
        stderr(&output)
    );
}

/// The help of `command` for `--index`, and for `--threads`.
fn help(command: &str) -> (String, String) {
    let output = spatix(&[command, "--help"]);
    assert_success(&output);
    let text = stdout(&output);
    let option = |name: &str| {
        let start = text.find(&format!("--{name} <")).expect("the option");
        let rest = &text[start..];
        let end = rest[2..].find("\n  -").map_or(rest.len(), |e| e + 2);
        rest[..end].to_owned()
    };
    (option("index"), option("threads"))
}

#[test]
fn each_subcommands_help_lists_what_it_accepts() {
    for (command, threads_do) in [
        ("pairs", "one thread"),
        ("query", "query boxes on N threads"),
        ("knn", "nearest points on N threads"),
    ] {
        let (index, threads) = help(command);
        assert_eq!(
            index.contains("- kd-tree:"),
            command == "knn",
            "{command}: {index}"
        );
        assert!(index.contains("- packed:"), "{command}: {index}");
        assert!(threads.contains(threads_do), "{command}: {threads}");
        for other in ["pairs", "query", "knn"] {
            if other != command {
                assert!(!threads.contains(other), "{command}: {threads}");
            }
        }
    }
}

#[test]
fn sims_threads_help_names_the_structures_that_use_one() {
    let output = spatix(&["sim", "--help"]);
    assert_success(&output);
    let text = stdout(&output);
    let threads = &text[text.find("--threads <").expect("the option")..];
    let threads = &threads[..threads.find("\n  -").expect("the next option")];
    assert!(
        threads.contains("but brute-force, which runs on one"),
        "{threads}"
    );
}
