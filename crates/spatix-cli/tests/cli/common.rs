//! Running the binary, scratch directories and generated input files.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use spatix_workload::Rng;

/// Runs `spatix` with `args`.
pub(crate) fn spatix<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spatix"))
        .args(args)
        .output()
        .expect("the spatix binary runs")
}

/// Standard output as text.
pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Standard error as text.
pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// Asserts that the command succeeded, showing its error output if not.
pub(crate) fn assert_success(output: &Output) {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
}

/// The structures `--index` of the command `args` accepts, as listed by the binary's own
/// error message for a bad value, which must include `known`.
fn listed_kinds(args: &[&str], known: &[&str]) -> Vec<String> {
    let mut args = args.to_vec();
    args.extend(["--index", "no-such-structure"]);
    let output = spatix(&args);
    assert_eq!(output.status.code(), Some(2));
    let text = stderr(&output);
    let list = text
        .split("[possible values: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("no list of structures in {text}"));
    let kinds: Vec<String> = list.split(", ").map(str::to_owned).collect();
    for known in known {
        assert!(
            kinds.iter().any(|k| k == known),
            "{known} missing from {kinds:?}"
        );
    }
    kinds
}

/// Every structure `sim --index` accepts (the dynamic ones).
pub(crate) fn index_kinds() -> Vec<String> {
    let known = [
        "brute-force",
        "quadtree",
        "grid",
        "loose-grid",
        "layered",
        "sweep",
    ];
    listed_kinds(&["sim"], &known)
}

/// Every structure `--index` of the batch commands accepts (the static ones too).
pub(crate) fn batch_index_kinds() -> Vec<String> {
    let known = ["kd-tree", "packed", "brute-force", "grid", "layered"];
    listed_kinds(&["knn", "p.csv", "q.csv"], &known)
}

/// Every structure `pairs` and `query` accept: the batch ones but the kd-tree (points only).
pub(crate) fn box_index_kinds() -> Vec<String> {
    let mut kinds = batch_index_kinds();
    kinds.retain(|k| k != "kd-tree");
    kinds
}

/// A fresh, empty directory for one test, removed when dropped.
pub(crate) struct Scratch(PathBuf);

impl Scratch {
    pub(crate) fn new(name: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a scratch directory");
        Self(dir)
    }

    /// A path in the directory.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes a file in the directory and returns its path.
    pub(crate) fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.path(name);
        fs::write(&path, content).expect("a scratch file");
        path
    }

    /// The names of the files in the directory, sorted.
    pub(crate) fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.0)
            .expect("the scratch directory")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// One generated element: an id and a box (min x, min y, max x, max y).
pub(crate) type Element = (u64, [f64; 4]);

/// `n` boxes with distinct random u64 ids over a 100 x 100 square, coordinates on a half-unit
/// lattice so that touching edges, zero-size boxes and coincident boxes all occur.
pub(crate) fn boxes(n: usize, seed: u64) -> Vec<Element> {
    let mut rng = Rng::new(seed);
    let mut half = |hi: usize| rng.below(hi) as f64 * 0.5;
    let mut out: Vec<Element> = (0..n)
        .map(|_| {
            let (x, y) = (half(200), half(200));
            let (w, h) = (half(16), half(16));
            (0, [x, y, x + w, y + h])
        })
        .collect();
    for (i, e) in out.iter_mut().enumerate() {
        e.0 = Rng::new(seed ^ i as u64).next_u64();
    }
    out
}

/// `n` points with distinct ids on a 20 x 20 integer lattice: many share a position and many
/// are at the same distance from an integer query point (ties).
pub(crate) fn points(n: usize, seed: u64) -> Vec<Element> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let (x, y) = (rng.below(20) as f64, rng.below(20) as f64);
            (1000 + 7 * i as u64, [x, y, x, y])
        })
        .collect()
}

/// The CSV text of boxes, with the header.
pub(crate) fn boxes_csv(elements: &[Element]) -> String {
    let mut text = "id,min_x,min_y,max_x,max_y\n".to_owned();
    for (id, [a, b, c, d]) in elements {
        writeln!(text, "{id},{a},{b},{c},{d}").expect("writing to a string");
    }
    text
}

/// The CSV text of points, with the header.
pub(crate) fn points_csv(elements: &[Element]) -> String {
    let mut text = "id,x,y\n".to_owned();
    for (id, [x, y, ..]) in elements {
        writeln!(text, "{id},{x},{y}").expect("writing to a string");
    }
    text
}
