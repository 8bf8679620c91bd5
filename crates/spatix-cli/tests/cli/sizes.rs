//! Options that size what the command allocates: a size beyond what the structures hold or
//! the system can allocate is a usage error naming it (exit code 2), never an abort.

use crate::common::{Scratch, assert_success, stderr, stdout};

/// Runs `spatix` with `args` in an address space of 4 GiB, so that what does not fit fails the
/// same way on every machine.
fn spatix_in_4_gib(args: &[&str]) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 4194304 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_spatix"))
        .args(args)
        .output()
        .expect("sh runs")
}

/// Checks a refusal: exit code 2, the subcommand's usage, a reason containing `reason`, no
/// abort, nothing on standard output.
fn assert_refused(args: &[&str], reason: &str) {
    let output = spatix_in_4_gib(args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
    assert!(output.stdout.is_empty(), "{args:?}");
    assert!(
        message.contains(reason),
        "{args:?}: {reason:?} in {message}"
    );
    assert!(message.contains("Usage: spatix sim"), "{args:?}: {message}");
    assert!(!message.contains("backtrace"), "{args:?}: {message}");
    assert!(
        !message.contains("memory allocation"),
        "{args:?}: {message}"
    );
}

#[test]
fn agents_beyond_memory_are_refused_naming_the_size() {
    assert_refused(
        &["sim", "--agents", "4000000000", "--frames", "1"],
        "--agents 4000000000 needs about ",
    );
    let message = stderr(&spatix_in_4_gib(&["sim", "--agents", "4000000000"]));
    assert!(message.contains(" GB of memory"), "{message}");
}

#[test]
fn agents_beyond_what_a_structure_holds_are_refused() {
    assert_refused(
        &["sim", "--agents", "4294967295", "--frames", "1"],
        "4294967294",
    );
}

#[test]
fn frames_beyond_memory_are_refused_naming_the_size() {
    assert_refused(
        &["sim", "--agents", "10", "--frames", "4000000000"],
        "--frames 4000000000 needs about ",
    );
}

#[test]
fn the_largest_picture_and_k_run_within_bounds() {
    let dir = Scratch::new("sizes-picture");
    let gif = dir.path("big.gif");
    let output = spatix_in_4_gib(&[
        "sim",
        "--agents",
        "50",
        "--frames",
        "1",
        "--render",
        gif.to_str().unwrap(),
        "--size",
        "8192x8192",
    ]);
    assert_success(&output);
    let points = dir.write("points.csv", "id,x,y\n1,0,0\n2,3,4\n");
    let output = spatix_in_4_gib(&[
        "knn",
        points.to_str().unwrap(),
        points.to_str().unwrap(),
        "-k",
        "4294967295",
    ]);
    assert_success(&output);
    assert_eq!(
        stdout(&output),
        "query_id,rank,id,distance\n1,1,1,0\n1,2,2,5\n2,1,2,0\n2,2,1,5\n"
    );
}
