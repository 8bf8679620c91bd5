//! The C side of the ABI: every `tests/c/*.c` is compiled with gcc (C99, every warning an
//! error, AddressSanitizer and UndefinedBehaviorSanitizer) against the static library cargo
//! built for this test run, and must exit 0; the frame example is compiled the same way and
//! run on a small crowd; the header is compiled once as C++ (where g++ exists); README's
//! example is the tested one, and its link lines, run as written, build programs that run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crate's directory.
fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory of the test binary: cargo's `deps/`, where it also writes the library
/// it built for this run (the copy one level up is refreshed only by `cargo build`).
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .expect("the test binary's directory")
        .to_path_buf()
}

/// The static library, built by cargo with this test (the crate's `staticlib` type).
fn static_lib() -> PathBuf {
    let lib = deps_dir().join("libspatix_capi.a");
    assert!(
        lib.exists(),
        "{} is missing: cargo builds it with the crate's tests",
        lib.display()
    );
    lib
}

/// A scratch directory for the compiled programs.
fn scratch() -> PathBuf {
    let dir = deps_dir().join("spatix-capi-c");
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    dir
}

/// Compiles `source` into `out` with the sanitizers, linked with the static library.
fn compile(source: &Path, out: &Path) {
    let status = Command::new("gcc")
        .args([
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-g",
            "-O1",
        ])
        .args([
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined",
        ])
        .arg("-I")
        .arg(crate_dir().join("include"))
        .arg(source)
        .arg(static_lib())
        .args([
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ])
        .arg("-o")
        .arg(out)
        .status()
        .expect("gcc runs (the C tests need gcc)");
    assert!(status.success(), "gcc failed on {}", source.display());
}

/// Runs a compiled program with `args`; it must exit 0.
fn run(program: &Path, args: &[&str]) {
    let output = Command::new(program)
        .args(args)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .output()
        .expect("the compiled C program runs");
    print!("{}", String::from_utf8_lossy(&output.stdout));
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "{} failed: {}",
        program.display(),
        output.status
    );
}

#[test]
fn c_tests_pass_under_asan() {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(crate_dir().join("tests/c"))
        .expect("tests/c")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .collect();
    sources.sort();
    assert!(!sources.is_empty(), "no C tests found");
    for source in sources {
        let out = scratch().join(source.file_stem().expect("a file name"));
        compile(&source, &out);
        run(&out, &[]);
    }
}

#[test]
fn frame_example_runs_under_asan() {
    let out = scratch().join("frame");
    compile(&crate_dir().join("examples/c/frame.c"), &out);
    run(&out, &["2000", "3"]);
}

#[test]
fn header_compiles_as_cpp() {
    let header = crate_dir().join("include/spatix.h");
    match Command::new("g++")
        .args([
            "-x",
            "c++",
            "-std=c++11",
            "-fsyntax-only",
            "-Wall",
            "-Wextra",
            "-Werror",
        ])
        .arg(&header)
        .status()
    {
        Ok(status) => assert!(status.success(), "g++ refused {}", header.display()),
        Err(e) => println!("note: g++ not found ({e}); the header was not compiled as C++"),
    }
}

#[test]
fn readme_shows_the_tested_example() {
    let example = std::fs::read_to_string(crate_dir().join("tests/c/readme_example.c"))
        .expect("tests/c/readme_example.c");
    let body: Vec<&str> = example
        .lines()
        .filter(|l| !l.starts_with("/* The README"))
        .collect();
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).expect("README.md");
    assert!(
        readme.contains(body.join("\n").trim()),
        "README's C example differs from tests/c/readme_example.c"
    );
}

/// The lines of the first `sh` block after README's C example, in the section `## From C and
/// C++`.
fn readme_link_lines() -> String {
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).expect("README.md");
    let section = readme
        .split("\n## From C and C++\n")
        .nth(1)
        .expect("README has a section `## From C and C++`");
    let after_c = section
        .split("\n```c\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```\n").nth(1))
        .expect("a C example in README's C section");
    after_c
        .split("\n```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("an sh block after README's C example")
        .to_owned()
}

/// README's link lines, pasted into a shell as written: in a directory laid out as the
/// repository (the header where README says, `target/release` the libraries cargo built for
/// this run, `app.c` README's example), both programs build and print their line.
#[test]
fn readme_link_lines_build_and_run() {
    let lines = readme_link_lines();
    assert!(
        lines.contains("-Wl,-rpath,") && lines.contains("libspatix_capi.a"),
        "README links the static and the shared library: {lines}"
    );
    let shared = deps_dir().join("libspatix_capi.so");
    assert!(shared.exists(), "{} is missing", shared.display());
    let root = scratch().join("readme");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("crates/spatix-capi")).expect("the scratch repository");
    std::fs::create_dir_all(root.join("target")).expect("the scratch target");
    std::os::unix::fs::symlink(
        crate_dir().join("include"),
        root.join("crates/spatix-capi/include"),
    )
    .expect("link the header's directory");
    std::os::unix::fs::symlink(deps_dir(), root.join("target/release"))
        .expect("link the libraries' directory");
    std::fs::copy(
        crate_dir().join("tests/c/readme_example.c"),
        root.join("app.c"),
    )
    .expect("README's example as app.c");
    let output = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &lines])
        .current_dir(&root)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "README's lines failed: {}\n{stdout}{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let line = "agents 2 and 1 touch";
    assert_eq!(stdout, format!("{line}\n").repeat(2), "{lines}");
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).expect("README.md");
    assert!(
        readme.contains(&format!("prints `{line}`")),
        "README says what they print"
    );
}
