//! What the run ran on, and when.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// The machine, the compiler, the date and the load, for the report's header.
#[derive(Clone, Debug)]
pub(crate) struct Machine {
    pub(crate) description: String,
    pub(crate) date: String,
    pub(crate) load: String,
}

/// The first value of `key` in a `/proc` file of `key : value` lines.
fn proc_value(file: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// The 1-minute load average, from `/proc/loadavg`.
pub(crate) fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next().map(str::to_string)
}

/// The date of a Unix day number (days since 1970-01-01), as `YYYY-MM-DD` (proleptic
/// Gregorian; Howard Hinnant's `civil_from_days`).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

impl Machine {
    /// Reads the CPU, core count, memory and compiler; `load_at_start` is the load average
    /// before the run.
    pub(crate) fn describe(load_at_start: Option<String>) -> Self {
        let cpu = proc_value("/proc/cpuinfo", "model name").unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map_or(0, usize::from);
        let memory = proc_value("/proc/meminfo", "MemTotal")
            .and_then(|v| v.trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or("unknown memory".into(), |kb| {
                format!("{:.0} GiB", kb / 1024.0 / 1024.0)
            });
        let rustc = Command::new("rustc")
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map_or("rustc (version unknown)".into(), |v| v.trim().to_string());
        let days = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 86_400);
        let load = format!(
            "Load average (1 min) {} at the start, {} at the end: {}",
            load_at_start.as_deref().unwrap_or("?"),
            load_average().as_deref().unwrap_or("?"),
            "the machine is shared, so absolute times are noisy; ratios within one run are the \
             comparison."
        );
        Self {
            description: format!("{cpu}, {cores} cores, {memory}; {rustc}, release profile"),
            date: civil_date(days as i64),
            load,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(civil_date(20_000), "2024-10-04");
    }
}
