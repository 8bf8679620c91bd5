//! The checked-in header `include/spatix.h` and the generated `src/f64.rs` and `src/kinds.rs`
//! are what their generators make of the current source and of spatix's list of structures;
//! `SPATIX_BLESS=1` rewrites them instead of failing.

use std::path::{Path, PathBuf};

/// The crate's directory.
fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Fails (or, with `SPATIX_BLESS=1`, rewrites `path`) when `path` does not hold `wanted`.
fn check(path: &Path, wanted: &str) {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == wanted {
        return;
    }
    if std::env::var_os("SPATIX_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(path, wanted).expect("write the regenerated file");
        return;
    }
    panic!(
        "{} is out of date with the crate's source; regenerate it with\n  \
         SPATIX_BLESS=1 cargo test -p spatix-capi --test header",
        path.display()
    );
}

/// `f32.rs` with the precision replaced in every name: `f64.rs`.
fn f64_source(f32_source: &str) -> String {
    f32_source
        .replace("`f32.rs`", "@SOURCE@")
        .replace("f32", "f64")
        .replace("F32", "F64")
        .replace("@SOURCE@", "`f32.rs`")
}

#[test]
fn f64_entry_points_are_generated_from_f32() {
    let src = crate_dir().join("src");
    let f32 = std::fs::read_to_string(src.join("f32.rs")).expect("read src/f32.rs");
    check(&src.join("f64.rs"), &f64_source(&f32));
}

/// `text` as `///` lines of at most 100 columns, indented by four spaces.
fn doc_lines(text: &str) -> String {
    let mut out = String::new();
    let mut line = String::from("    ///");
    for word in text.split_whitespace() {
        if line.len() + 1 + word.len() > 100 {
            out.push_str(&line);
            out.push('\n');
            line = String::from("    ///");
        }
        line.push(' ');
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// `src/kinds.rs` for the listed structures: each kind keeps the number `current` (the file
/// as it is) gives it, and a structure new to the list takes the next free one, so that a C
/// program's kinds keep their meaning.
fn kinds_source(current: &str) -> String {
    let numbered: Vec<(String, i32)> = current
        .lines()
        .filter_map(|line| {
            let (name, number) = line.trim().trim_end_matches(',').split_once(" = ")?;
            Some((name.to_owned(), number.parse().ok()?))
        })
        .collect();
    let mut next = numbered.iter().map(|(_, n)| *n).max().unwrap_or(0) + 1;
    let mut kinds: Vec<(i32, &str, &str)> = spatix::LISTED
        .iter()
        .map(|&(name, about)| {
            let number = numbered.iter().find(|(n, _)| n == name).map_or_else(
                || {
                    next += 1;
                    next - 1
                },
                |(_, n)| *n,
            );
            (number, name, about)
        })
        .collect();
    kinds.sort_unstable();
    let mut out = String::from(
        "//! Generated from `spatix::for_each_structure!` by\n\
         //! `SPATIX_BLESS=1 cargo test -p spatix-capi --test header` (which fails when it drifts):\n\
         //! do not edit. A kind keeps its number; a new structure takes the next one.\n\
         \n\
         /// Which structure an index is: every structure of spatix but its brute-force oracle.\n\
         #[repr(i32)]\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq)]\n\
         pub enum SpatixKind {\n",
    );
    for (number, name, about) in &kinds {
        out.push_str(&doc_lines(about));
        out.push_str(&format!("    {name} = {number},\n"));
    }
    out.push_str(&format!(
        "}}\n\
         \n\
         impl SpatixKind {{\n    \
             /// Every kind, with the name of its structure's type.\n    \
             pub(crate) const ALL: [(Self, &'static str); {}] = [\n",
        kinds.len()
    ));
    for (_, name, _) in &kinds {
        out.push_str(&format!("        (Self::{name}, \"{name}\"),\n"));
    }
    out.push_str(&format!(
        "    ];\n\
         }}\n\
         \n\
         /// How many kinds there are: `SpatixKind`'s values are 1 to `SPATIX_KIND_COUNT`.\n\
         pub const SPATIX_KIND_COUNT: i32 = {};\n",
        kinds.len()
    ));
    out
}

#[test]
fn kinds_are_generated_from_the_list() {
    let path = crate_dir().join("src/kinds.rs");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    check(&path, &kinds_source(&current));
}

#[test]
fn header_matches_cbindgen() {
    let dir = crate_dir();
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    let header = String::from_utf8(out).expect("the header is UTF-8");
    check(&dir.join("include/spatix.h"), &header);
}

#[test]
fn readme_lists_every_kind() {
    let header = std::fs::read_to_string(crate_dir().join("include/spatix.h")).expect("the header");
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).expect("README.md");
    let kinds: Vec<&str> = header
        .lines()
        .filter_map(|line| line.trim().split_once(" = ").map(|(name, _)| name))
        .filter(|name| name.starts_with("SPATIX_KIND_"))
        .collect();
    assert_eq!(kinds.len(), spatix::LISTED.len(), "{kinds:?}");
    for kind in kinds {
        assert!(
            readme.contains(&format!("| `{kind}` |")),
            "README's C table lacks {kind}"
        );
    }
}
