//! Where `--out` and `sim --render` write: standard output for `-`, an input file refused,
//! regular files replaced only when complete, FIFOs, devices and symbolic links written in
//! place, errors naming the user's path, and nothing left behind on failure or Ctrl-C.

use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{Scratch, assert_success, spatix, stderr, stdout};

const BOXES: &str = "id,min_x,min_y,max_x,max_y\n1,0,0,1,1\n2,1,1,2,2\n";
const PAIRS: &str = "a,b\n1,2\n";

/// Runs `spatix pairs BOXES -o OUT`.
fn pairs_to(boxes: &Path, out: &Path) -> std::process::Output {
    spatix(&[
        "pairs".as_ref(),
        boxes.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ])
}

#[test]
fn out_dash_is_standard_output() {
    let dir = Scratch::new("out-dash");
    let boxes = dir.write("boxes.csv", BOXES);
    let output = spatix(&["pairs", boxes.to_str().unwrap(), "--out", "-"]);
    assert_success(&output);
    assert_eq!(stdout(&output), PAIRS);
    assert_eq!(dir.files(), ["boxes.csv"], "no file named -");
}

#[test]
fn out_naming_an_input_is_refused_before_any_work() {
    let dir = Scratch::new("out-input");
    let boxes = dir.write("boxes.csv", BOXES);
    let queries = dir.write("queries.csv", BOXES);
    let link = dir.path("link.csv");
    symlink(&boxes, &link).unwrap();
    let attempts = [
        pairs_to(&boxes, &boxes),
        pairs_to(&boxes, &link),
        spatix(&[
            "query".as_ref(),
            boxes.as_os_str(),
            queries.as_os_str(),
            "--out".as_ref(),
            queries.as_os_str(),
        ]),
    ];
    for (output, out) in attempts.iter().zip([&boxes, &link, &queries]) {
        assert_eq!(output.status.code(), Some(2), "{}", stderr(output));
        let message = format!("{}: --out names the input file", out.display());
        assert!(stderr(output).starts_with(&message), "{}", stderr(output));
        assert!(output.stdout.is_empty());
    }
    assert_eq!(fs::read_to_string(&boxes).unwrap(), BOXES);
    assert_eq!(fs::read_to_string(&queries).unwrap(), BOXES);
    assert_eq!(dir.files(), ["boxes.csv", "link.csv", "queries.csv"]);
}

#[test]
fn a_symbolic_link_is_written_through_and_stays_a_link() {
    let dir = Scratch::new("out-symlink");
    let boxes = dir.write("boxes.csv", BOXES);
    let target = dir.write("target.csv", "old\n");
    let link = dir.path("link.csv");
    symlink(&target, &link).unwrap();
    assert_success(&pairs_to(&boxes, &link));
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), PAIRS);
    assert_eq!(dir.files(), ["boxes.csv", "link.csv", "target.csv"]);
}

#[test]
fn a_fifo_is_written_in_place() {
    let dir = Scratch::new("out-fifo");
    let boxes = dir.write("boxes.csv", BOXES);
    let fifo = dir.path("fifo");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || fs::read_to_string(fifo).expect("reading the FIFO"))
    };
    assert_success(&pairs_to(&boxes, &fifo));
    assert_eq!(reader.join().unwrap(), PAIRS);
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(dir.files(), ["boxes.csv", "fifo"]);
}

#[test]
fn a_device_is_written_in_place() {
    let dir = Scratch::new("out-device");
    let boxes = dir.write("boxes.csv", BOXES);
    assert_success(&pairs_to(&boxes, Path::new("/dev/null")));
    assert!(
        fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[test]
fn a_missing_directory_is_reported_with_the_users_path() {
    let dir = Scratch::new("out-missing");
    let boxes = dir.write("boxes.csv", BOXES);
    let out = dir.path("no-such-dir").join("out.csv");
    let output = pairs_to(&boxes, &out);
    assert_eq!(output.status.code(), Some(1));
    let message = stderr(&output);
    assert!(
        message.starts_with(&format!("spatix: writing {}: ", out.display())),
        "{message}"
    );
    assert!(!message.contains(".tmp"), "{message}");
}

/// Waits up to a minute for `child`; kills it and fails if it is still running.
fn wait_briefly(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{what}: still running after a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts a simulation of days that renders its last frame to `out`.
fn endless_sim(out: &Path, stderr: Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_spatix"))
        .args([
            "sim",
            "--agents",
            "2000",
            "--frames",
            "100000000",
            "--render",
        ])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

#[test]
fn sim_render_checks_its_path_before_simulating() {
    let dir = Scratch::new("render-missing");
    let out = dir.path("no-such-dir").join("last.png");
    // Days of simulation: only a check before it can end this within the minute.
    let mut child = endless_sim(&out, Stdio::piped());
    let status = wait_briefly(&mut child, "sim --render into a missing directory");
    assert_eq!(status.code(), Some(1));
    let mut message = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut message).unwrap();
    assert!(
        message.contains(&format!("writing {}", out.display())),
        "{message}"
    );
}

#[test]
fn ctrl_c_removes_the_temporary_file() {
    let dir = Scratch::new("ctrl-c");
    let out = dir.path("last.png");
    let mut child = endless_sim(&out, Stdio::null());
    // The PNG's temporary file is opened before the simulation starts.
    let start = Instant::now();
    while dir.files().is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no temporary file"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = wait_briefly(&mut child, "sim after Ctrl-C");
    assert_eq!(status.code(), Some(130));
    assert!(dir.files().is_empty(), "left behind: {:?}", dir.files());
}
