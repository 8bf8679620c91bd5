//! Runs the real `spatix` binary: every subcommand, every `--index`, results against
//! `BruteForce`, saved indexes against their CSV files, every kind of bad input, and the
//! pictures decoded.

mod bad_input;
mod batch;
mod common;
mod formats;
mod messages;
mod output;
mod saved;
mod sim;
mod sizes;
mod view;

use common::{spatix, stdout};

const ABOUT: &str = "2D spatial indexes for collision detection and proximity queries";

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
    for command in ["sim", "pairs", "query", "knn", "build"] {
        assert!(help.contains(&format!("  {command} ")), "{command}: {help}");
    }
}

#[test]
fn no_arguments_prints_the_help_and_succeeds() {
    let output = spatix::<&str>(&[]);
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
