//! The checked-in header `include/spatix.h` and the generated `src/f64.rs` are what their
//! generators make of the current source; `SPATIX_BLESS=1` rewrites them instead of failing.

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
