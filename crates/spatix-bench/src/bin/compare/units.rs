//! How the report writes element counts and durations: shared by the runner's titles, the
//! tables and the plots, and importing nothing of the binary's.

/// `10k`, `100k`, `1M`.
pub(crate) fn n_label(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}k", n / 1_000),
        n => n.to_string(),
    }
}

/// A duration in milliseconds with three significant digits (seconds from 10 s).
pub(crate) fn duration(seconds: f64) -> String {
    let ms = seconds * 1e3;
    match ms {
        ms if ms < 1.0 => format!("{ms:.3} ms"),
        ms if ms < 10.0 => format!("{ms:.2} ms"),
        ms if ms < 1000.0 => format!("{ms:.1} ms"),
        ms if ms < 10_000.0 => format!("{ms:.0} ms"),
        ms => format!("{:.1} s", ms / 1e3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_durations() {
        assert_eq!(n_label(10_000), "10k");
        assert_eq!(n_label(1_000_000), "1M");
        assert_eq!(n_label(600), "600");
        assert_eq!(duration(0.000_123_4), "0.123 ms");
        assert_eq!(duration(0.004_56), "4.56 ms");
        assert_eq!(duration(0.456), "456.0 ms");
        assert_eq!(duration(4.56), "4560 ms");
        assert_eq!(duration(45.6), "45.6 s");
    }
}
