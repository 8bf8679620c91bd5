//! CSV as common tools write it (RFC 4180): quoted names and fields, `""` escapes, commas and
//! line ends inside quotes, extra columns; line numbers stay exact and bad data is still
//! refused.

use crate::common::{Scratch, assert_success, spatix, stderr, stdout};

#[test]
fn quoted_fields_and_extra_columns_are_read() {
    let dir = Scratch::new("csv-tools");
    // R's write.csv: quoted names, a row-name column with an empty name, quoted strings.
    let r = dir.write(
        "r.csv",
        "\"\",\"id\",\"label\",\"min_x\",\"min_y\",\"max_x\",\"max_y\"\n\
         \"1\",10,\"a, b\",0,0,1,1\n\"2\",20,\"say \"\"hi\"\"\",0.5,0.5,2,2\n",
    );
    // pandas with QUOTE_ALL and CRLF; a GIS export with a multi-line WKT column.
    let pandas = dir.write(
        "pandas.csv",
        "\"max_y\",\"min_x\",\"id\",\"min_y\",\"max_x\"\r\n\"1\",\"0\",\"10\",\"0\",\"1\"\r\n\
         \"2\",\" 0.5\",\"20\",\"0.5\",\"2\"\r\n",
    );
    let gis = dir.write(
        "gis.csv",
        "WKT,id,min_x,min_y,max_x,max_y,name,name\n\
         \"POLYGON ((0 0,\n1 0,1 1,0 0))\",10,0,0,1,1,x,y\n\
         ,20,0.5,0.5,2,2,\"\",\"\"\"\"\n",
    );
    for file in [&r, &pandas, &gis] {
        let output = spatix(&["pairs", file.to_str().unwrap()]);
        assert_success(&output);
        assert_eq!(stdout(&output), "a,b\n10,20\n", "{}", file.display());
    }
}

/// `pairs FILE` fails at `line` with a reason containing `reason`.
fn assert_refused(dir: &Scratch, content: &str, line: u64, reason: &str) {
    let file = dir.write("boxes.csv", content);
    let output = spatix(&["pairs", file.to_str().unwrap()]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{content:?}: {message}");
    assert!(output.stdout.is_empty());
    let prefix = format!("{}:{line}: ", file.display());
    assert!(
        message.starts_with(&prefix),
        "{content:?}: {prefix} in {message}"
    );
    assert!(
        message.contains(reason),
        "{content:?}: {reason} in {message}"
    );
}

#[test]
fn line_numbers_stay_exact_across_quoted_line_ends() {
    let dir = Scratch::new("csv-lines");
    let header = "id,note,min_x,min_y,max_x,max_y\n";
    // A record spanning lines 2-4, then a bad one on line 5.
    let body = "1,\"one\ntwo\nthree\",0,0,1,1\n2,x,0,0,one,1\n";
    assert_refused(
        &dir,
        &format!("{header}{body}"),
        5,
        "max_x: \"one\" is not a number",
    );
    // A bad record that spans lines: reported where it starts.
    let body = "1,x,0,0,1,1\n2,\"a\nb\",0,zero,1,1\n";
    assert_refused(
        &dir,
        &format!("{header}{body}"),
        3,
        "min_y: \"zero\" is not a number",
    );
    // A quote never closed: where its record starts.
    let body = "1,x,0,0,1,1\n2,\"open,0,0,1,1\n3,x,0,0,1,1\n";
    assert_refused(&dir, &format!("{header}{body}"), 3, "quoted field");
    // Text after a closing quote.
    let body = "1,\"a\"b,0,0,1,1\n";
    assert_refused(
        &dir,
        &format!("{header}{body}"),
        2,
        "after the closing quote",
    );
}

#[test]
fn bad_data_in_quotes_is_still_refused() {
    let dir = Scratch::new("csv-strict");
    let header = "\"id\",\"min_x\",\"min_y\",\"max_x\",\"max_y\"\n";
    for (body, line, reason) in [
        (
            "\"1\",\"0\",\"0\",\"1\",\"NaN\"\n",
            2,
            "max_y: NaN is not a finite number",
        ),
        ("\"1\",\"0\",\"5\",\"1\",\"4\"\n", 2, "inverted box"),
        (
            "\"1\",\"0\",\"0\",\"1\",\"1\"\n\"1\",\"0\",\"0\",\"1\",\"1\"\n",
            3,
            "duplicate id 1",
        ),
        (
            "\"x\",\"0\",\"0\",\"1\",\"1\"\n",
            2,
            "id: \"x\" is not an unsigned",
        ),
        ("\"1\",\"0\",\"0\",\"1\"\n", 2, "expected 5 fields"),
    ] {
        assert_refused(&dir, &format!("{header}{body}"), line, reason);
    }
    assert_refused(
        &dir,
        "id,\"min_x\",min_y,max_x,max_y,\"min_x\"\n",
        1,
        "column min_x appears twice",
    );
    assert_refused(
        &dir,
        "\"id\",\"min_x\",\"min_y\",\"max_x\",note\n",
        1,
        "missing column max_y",
    );
}
