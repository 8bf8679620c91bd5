//! Runs the real `spatix` binary.

use std::process::{Command, Output};

const ABOUT: &str = "2D spatial indexes for collision detection and proximity queries";

fn spatix(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spatix"))
        .args(args)
        .output()
        .expect("the spatix binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

#[test]
fn version_prints_the_crate_version() {
    let output = spatix(&["--version"]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stdout(&output).trim(),
        format!("spatix {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn help_describes_the_tool() {
    let output = spatix(&["--help"]);
    assert_eq!(output.status.code(), Some(0));
    let help = stdout(&output);
    assert!(help.contains(ABOUT), "{help}");
    assert!(help.contains("Usage: spatix"), "{help}");
}

#[test]
fn no_arguments_prints_the_help_and_succeeds() {
    let output = spatix(&[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), stdout(&spatix(&["--help"])));
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    let output = spatix(&["--no-such-flag"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--no-such-flag"), "{stderr}");
}
