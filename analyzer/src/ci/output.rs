//! What `macroscope ci` found, written for people (Markdown) and for CI systems
//! (JUnit XML, as GitLab, Jenkins and GitHub's test reporters read it).

use std::fmt::Write as _;

use super::check::{Change, MovedRow};

/// How one check (a trace on one GPU, or its frames on one device) came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every value as the list expects.
    AsExpected,
    /// Values changed, each as the list allows.
    Allowed,
    /// A value changed that the list does not allow.
    Changed,
    /// The list holds no expectation for it yet (`--update` writes one).
    New,
    /// It could not be checked: the trace is missing or damaged, or the replay failed.
    Failed,
    /// The list's expectation was rewritten (`--update`).
    Updated,
}

impl Verdict {
    /// How the summary says it.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::AsExpected => "as expected",
            Verdict::Allowed => "allowed change",
            Verdict::Changed => "changed",
            Verdict::New => "no expectation",
            Verdict::Failed => "failed",
            Verdict::Updated => "updated",
        }
    }

    /// Whether it fails the run.
    pub fn fails(self) -> bool {
        matches!(self, Verdict::Changed | Verdict::New | Verdict::Failed)
    }
}

/// One check's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckResult {
    /// The trace, as the list names it.
    pub trace: String,
    /// The GPU it was replayed on (`tu102`), or `frames on DEVICE`.
    pub target: String,
    /// The list entry's note.
    pub note: Option<String>,
    /// How it came out.
    pub verdict: Verdict,
    /// Seconds it took.
    pub seconds: f64,
    /// The values that differ.
    pub changes: Vec<Change>,
    /// Rows that moved (the first few), from the counts file.
    pub moved: Vec<MovedRow>,
    /// How many rows moved in all.
    pub moved_count: usize,
    /// Rows expected and replayed, when they differ in number.
    pub row_counts: Option<(usize, usize)>,
    /// Why it failed, for [`Verdict::Failed`].
    pub error: Option<String>,
}

/// Counts per verdict over `results`, in [`Verdict`] order as the summary lists them.
fn tally(results: &[CheckResult]) -> Vec<(Verdict, usize)> {
    [
        Verdict::AsExpected,
        Verdict::Allowed,
        Verdict::Updated,
        Verdict::Changed,
        Verdict::New,
        Verdict::Failed,
    ]
    .into_iter()
    .map(|v| (v, results.iter().filter(|r| r.verdict == v).count()))
    .filter(|(_, n)| *n > 0)
    .collect()
}

/// The summary line: how many checks, and how many came out each way.
pub fn headline(results: &[CheckResult]) -> String {
    let parts: Vec<String> = tally(results)
        .into_iter()
        .map(|(v, n)| format!("{n} {}", v.word()))
        .collect();
    format!("{} checks: {}", results.len(), parts.join(", "))
}

/// A Markdown table cell: `|` escaped, on one line.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown summary: every check in a table, then each one that did not come out
/// as expected with what moved.
pub fn markdown(title: &str, results: &[CheckResult], wall_seconds: f64, jobs: usize) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# macroscope ci: {}\n", cell(title));
    let _ = writeln!(
        md,
        "{} ({wall_seconds:.1} s on {jobs} job(s))\n",
        headline(results)
    );
    let _ = writeln!(md, "| trace | on | verdict | seconds | note |");
    let _ = writeln!(md, "|---|---|---|---:|---|");
    for r in results {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.2} | {} |",
            cell(&r.trace),
            cell(&r.target),
            r.verdict.word(),
            r.seconds,
            cell(r.note.as_deref().unwrap_or(""))
        );
    }
    for r in results.iter().filter(|r| r.verdict != Verdict::AsExpected) {
        let _ = writeln!(
            md,
            "\n## {} on {}: {}\n",
            cell(&r.trace),
            cell(&r.target),
            r.verdict.word()
        );
        if let Some(e) = &r.error {
            let _ = writeln!(md, "{}\n", cell(e));
        }
        if !r.changes.is_empty() {
            let _ = writeln!(md, "| value | expected | replayed | allowed because |");
            let _ = writeln!(md, "|---|---:|---:|---|");
            for c in &r.changes {
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {} |",
                    cell(&c.what),
                    cell(&c.expected),
                    cell(&c.measured),
                    cell(c.allowed.as_deref().unwrap_or(""))
                );
            }
        }
        if let Some((want, got)) = r.row_counts {
            let _ = writeln!(md, "\nrows: {want} expected, {got} replayed");
        }
        if r.moved_count > 0 {
            let _ = writeln!(
                md,
                "\nrows that moved ({} of {}):\n",
                r.moved.len(),
                r.moved_count
            );
            for m in &r.moved {
                let _ = writeln!(
                    md,
                    "- row {} ({}): {}",
                    m.row,
                    cell(&m.at),
                    cell(&m.fields.join(", "))
                );
            }
        }
    }
    md
}

/// `s` as XML text or attribute value.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot hold.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// The JUnit XML report: one test suite, a test case per check (class: the trace,
/// name: what it ran on); a changed value is a failure, a check that could not run an
/// error.
pub fn junit(title: &str, results: &[CheckResult], wall_seconds: f64) -> String {
    let failures = results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Changed | Verdict::New))
        .count();
    let errors = results
        .iter()
        .filter(|r| r.verdict == Verdict::Failed)
        .count();
    let mut x = String::new();
    let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        x,
        r#"<testsuites name="macroscope ci" tests="{}" failures="{failures}" errors="{errors}" time="{wall_seconds:.3}">"#,
        results.len()
    );
    let _ = writeln!(
        x,
        r#"  <testsuite name="{}" tests="{}" failures="{failures}" errors="{errors}" skipped="0" time="{wall_seconds:.3}">"#,
        xml(title),
        results.len()
    );
    for r in results {
        let _ = write!(
            x,
            r#"    <testcase classname="{}" name="{}" time="{:.3}""#,
            xml(&r.trace),
            xml(&r.target),
            r.seconds
        );
        let details = details(r);
        match r.verdict {
            Verdict::Changed | Verdict::New => {
                let _ = writeln!(
                    x,
                    ">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>",
                    xml(r.verdict.word()),
                    xml(&message(r)),
                    xml(&details)
                );
            }
            Verdict::Failed => {
                let _ = writeln!(
                    x,
                    ">\n      <error type=\"failed\" message=\"{}\">{}</error>\n    </testcase>",
                    xml(&message(r)),
                    xml(&details)
                );
            }
            Verdict::AsExpected | Verdict::Allowed | Verdict::Updated if !details.is_empty() => {
                let _ = writeln!(
                    x,
                    ">\n      <system-out>{}</system-out>\n    </testcase>",
                    xml(&details)
                );
            }
            _ => {
                let _ = writeln!(x, "/>");
            }
        }
    }
    let _ = writeln!(x, "  </testsuite>\n</testsuites>");
    x
}

/// One line saying what went wrong.
fn message(r: &CheckResult) -> String {
    if let Some(e) = &r.error {
        return e.clone();
    }
    match r.verdict {
        Verdict::New => "the list holds no expectation for it (run with --update)".into(),
        _ => {
            let moved: Vec<&str> = r
                .changes
                .iter()
                .filter(|c| c.allowed.is_none())
                .map(|c| c.what.as_str())
                .collect();
            format!("{} value(s) changed: {}", moved.len(), moved.join(", "))
        }
    }
}

/// Every change and moved row, one a line.
fn details(r: &CheckResult) -> String {
    let mut d = String::new();
    for c in &r.changes {
        let _ = write!(d, "{}: {} -> {}", c.what, c.expected, c.measured);
        if let Some(why) = &c.allowed {
            let _ = write!(d, " (allowed: {why})");
        }
        d.push('\n');
    }
    for m in &r.moved {
        let _ = writeln!(d, "row {} ({}): {}", m.row, m.at, m.fields.join(", "));
    }
    if r.moved_count > r.moved.len() {
        let _ = writeln!(d, "... {} rows moved in all", r.moved_count);
    }
    d
}
