//! The trace list `macroscope ci` checks: a TOML file naming traces (paths or globs,
//! relative to the file) and, per trace and GPU, the costs a replay is expected to
//! give, with any change allowed on purpose and its reason. `--update` rewrites the
//! expectations in place, keeping the file's comments and order, so the change is a
//! reviewable diff.
//!
//! ```toml
//! [[trace]]
//! path = "samples/*.mscope"          # a path or a glob (`*`, `?` in any part)
//! note = "the samples"
//! chipsets = ["tu102", "gv100"]      # the GPUs to replay on (default: these two)
//! frames = [0, 59]                   # optional: only these frames
//! counts = "counts/{name}.{mme}.counts"   # optional: every row's counts, diffed
//!
//! [trace.expect."samples/multiview-nvidia.mscope".tu102]
//! nvk = "25.0.7"
//! draws = 18
//! rows = 18
//! hw_draws = 60
//! methods = 4480
//! dwords = 5302
//! mme_instructions = 5848
//! allow = [{ metric = "methods", to = 4481, reason = "…" }]
//!
//! [trace.expect."samples/multiview-nvidia.mscope".tu102.groups]
//! viewport = [120, 160, 0]           # methods, dwords, MME instructions
//!
//! [trace.checksums."samples/vkcube-lavapipe.mscope"]
//! "llvmpipe (LLVM 15.0.6, 256 bits)" = ["1f2e3d4c", …]   # per frame, on that device
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml_edit::{value, Array, DocumentMut, InlineTable, Item, Table};
use trace_format::results::STATE_GROUPS;

use super::measure::{Measured, GROUP_PARTS, METRICS};

/// The GPUs a trace is replayed on when its entry names none: one of each MME
/// generation.
pub const DEFAULT_CHIPSETS: [&str; 2] = ["tu102", "gv100"];

/// Why a trace list cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// Reading or writing it failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not TOML, or not a trace list.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong and where.
        message: String,
    },
}

/// One `[[trace]]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its place in the list, from 0.
    pub index: usize,
    /// The path or glob, relative to the list.
    pub path: String,
    /// What it is, for the summary.
    pub note: Option<String>,
    /// The GPUs to replay it on (names or ids, as `replay --chipset` takes).
    pub chipsets: Vec<String>,
    /// Only these frames (inclusive).
    pub frames: Option<(u64, u64)>,
    /// The counts file per trace and GPU, `{name}` the trace's file stem, `{chipset}`
    /// the GPU as the entry names it and `{mme}` its MME generation (`turing`,
    /// `fermi`), relative to the list.
    pub counts: Option<String>,
}

/// An allowed change: the value a total may now have, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allowed {
    /// The total ([`METRICS`]) or `groups.GROUP.PART`.
    pub metric: String,
    /// The value it may have.
    pub to: u64,
    /// Why it changed.
    pub reason: String,
}

/// What one trace is expected to cost on one GPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expected {
    /// The NVK release the model followed when the numbers were taken.
    pub nvk: Option<String>,
    /// Per [`METRICS`] name present.
    pub totals: BTreeMap<String, u64>,
    /// Per state group present: methods, dwords, MME instructions.
    pub groups: BTreeMap<String, [u64; 3]>,
    /// Changes allowed on purpose.
    pub allow: Vec<Allowed>,
}

/// A trace list, as read and as `--update` rewrites it.
pub struct TraceList {
    path: PathBuf,
    dir: PathBuf,
    doc: DocumentMut,
    /// Its entries, in order.
    pub entries: Vec<Entry>,
}

const ENTRY_KEYS: [&str; 7] = [
    "path",
    "note",
    "chipsets",
    "frames",
    "counts",
    "expect",
    "checksums",
];
const EXPECT_KEYS: [&str; 3] = ["nvk", "groups", "allow"];

impl TraceList {
    /// Reads and checks the list at `path`.
    pub fn load(path: &Path) -> Result<TraceList, ListError> {
        let text = std::fs::read_to_string(path).map_err(|source| ListError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let invalid = |message: String| ListError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let doc: DocumentMut = text
            .parse()
            .map_err(|e| invalid(format!("not TOML: {e}")))?;
        for (key, _) in doc.iter() {
            if key != "trace" {
                return Err(invalid(format!(
                    "unknown key `{key}` at the top (a list holds `[[trace]]` entries)"
                )));
            }
        }
        let mut entries = Vec::new();
        if let Some(item) = doc.get("trace") {
            let tables = item.as_array_of_tables().ok_or_else(|| {
                invalid("`trace` must be an array of tables (`[[trace]]`)".into())
            })?;
            for (index, t) in tables.iter().enumerate() {
                entries.push(
                    entry(index, t).map_err(|m| invalid(format!("trace {}: {m}", index + 1)))?,
                );
            }
        }
        if entries.is_empty() {
            return Err(invalid(
                "names no trace (add a `[[trace]]` with a `path`)".into(),
            ));
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let list = TraceList {
            path: path.to_path_buf(),
            dir,
            doc,
            entries,
        };
        // Every expectation in the file reads, before any replay starts.
        for e in &list.entries {
            if let Some(files) = list.table(e.index, "expect") {
                for (file, chipsets) in files.iter() {
                    let chipsets = chipsets.as_table_like().ok_or_else(|| {
                        invalid(format!(
                            "trace {}: expect.\"{file}\" is not a table",
                            e.index + 1
                        ))
                    })?;
                    for (chipset, _) in chipsets.iter() {
                        list.expected(e.index, file, chipset)?;
                    }
                }
            }
        }
        Ok(list)
    }

    /// The list's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `relative` (a path in the list) as a path to open.
    pub fn resolve(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// The traces entry `entry` names: its path, or its glob's matches, as written
    /// relative to the list, sorted.
    pub fn traces(&self, entry: &Entry) -> Result<Vec<String>, ListError> {
        super::glob::expand(&self.dir, &entry.path).map_err(|source| ListError::Io {
            path: self.dir.join(&entry.path),
            source,
        })
    }

    /// The counts file of `trace` on `chipset` (whose MME generation is `mme`) for
    /// entry `entry`, if it keeps one.
    pub fn counts_file(
        &self,
        entry: &Entry,
        trace: &str,
        chipset: &str,
        mme: &str,
    ) -> Option<PathBuf> {
        let pattern = entry.counts.as_ref()?;
        let name = Path::new(trace)
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        Some(
            self.resolve(
                &pattern
                    .replace("{name}", &name)
                    .replace("{chipset}", chipset)
                    .replace("{mme}", mme),
            ),
        )
    }

    fn table(&self, entry: usize, key: &str) -> Option<&dyn toml_edit::TableLike> {
        self.doc["trace"]
            .as_array_of_tables()?
            .get(entry)?
            .get(key)?
            .as_table_like()
    }

    /// What `trace` (as [`traces`](Self::traces) names it) is expected to cost on
    /// `chipset` (as the entry names it); `None` when the list does not say yet.
    pub fn expected(
        &self,
        entry: usize,
        trace: &str,
        chipset: &str,
    ) -> Result<Option<Expected>, ListError> {
        let Some(t) = self
            .table(entry, "expect")
            .and_then(|t| t.get(trace))
            .and_then(|t| t.as_table_like())
            .and_then(|t| t.get(chipset))
        else {
            return Ok(None);
        };
        let at = format!("trace {}: expect.\"{trace}\".{chipset}", entry + 1);
        let invalid = |m: String| ListError::Invalid {
            path: self.path.clone(),
            message: format!("{at}: {m}"),
        };
        let t = t
            .as_table_like()
            .ok_or_else(|| invalid("is not a table".into()))?;
        let mut e = Expected::default();
        for (key, item) in t.iter() {
            match key {
                "nvk" => {
                    e.nvk = Some(
                        item.as_str()
                            .ok_or_else(|| invalid("`nvk` must be a string".into()))?
                            .to_string(),
                    )
                }
                "groups" => {
                    let groups = item
                        .as_table_like()
                        .ok_or_else(|| invalid("`groups` must be a table".into()))?;
                    for (group, parts) in groups.iter() {
                        if !STATE_GROUPS.contains(&group) {
                            return Err(invalid(format!(
                                "unknown state group `{group}` (one of: {})",
                                STATE_GROUPS.join(", ")
                            )));
                        }
                        let parts = parts
                            .as_array()
                            .filter(|a| a.len() == 3)
                            .and_then(|a| {
                                let v: Vec<u64> = a.iter().filter_map(non_negative).collect();
                                <[u64; 3]>::try_from(v).ok()
                            })
                            .ok_or_else(|| {
                                invalid(format!(
                                    "groups.{group} must be [methods, dwords, mme_instructions]"
                                ))
                            })?;
                        e.groups.insert(group.to_string(), parts);
                    }
                }
                "allow" => {
                    let items = item
                        .as_array()
                        .ok_or_else(|| invalid("`allow` must be an array of tables".into()))?;
                    for a in items.iter() {
                        e.allow
                            .push(allowed(a).map_err(|m| invalid(format!("allow: {m}")))?);
                    }
                }
                metric if METRICS.contains(&metric) => {
                    let n = item
                        .as_value()
                        .and_then(non_negative)
                        .ok_or_else(|| invalid(format!("`{metric}` must be a whole number")))?;
                    e.totals.insert(metric.to_string(), n);
                }
                other => {
                    return Err(invalid(format!(
                        "unknown key `{other}` (one of: {}, {})",
                        METRICS.join(", "),
                        EXPECT_KEYS.join(", ")
                    )))
                }
            }
        }
        Ok(Some(e))
    }

    /// Writes `measured` as what `trace` is expected to cost on `chipset` under NVK
    /// `nvk`, dropping the allowed changes it takes in.
    pub fn set_expected(
        &mut self,
        entry: usize,
        trace: &str,
        chipset: &str,
        measured: &Measured,
        nvk: &str,
    ) {
        let Some(t) = self.entry_mut(entry) else {
            return;
        };
        let expect = implicit_table(t, "expect");
        let per_trace = implicit_table(expect, trace);
        let mut e = Table::new();
        e.insert("nvk", value(nvk));
        for (name, v) in METRICS.iter().zip(measured.totals) {
            e.insert(name, value(v as i64));
        }
        let mut groups = Table::new();
        for (name, parts) in STATE_GROUPS.iter().zip(measured.groups) {
            if parts != [0; 3] {
                let mut a = Array::new();
                for p in parts {
                    a.push(p as i64);
                }
                groups.insert(name, value(a));
            }
        }
        if !groups.is_empty() {
            e.insert("groups", Item::Table(groups));
        }
        per_trace.insert(chipset, Item::Table(e));
    }

    /// The frame checksums `trace` is expected to read back on `device`.
    pub fn checksums(&self, entry: usize, trace: &str, device: &str) -> Option<Vec<u32>> {
        let list = self
            .table(entry, "checksums")?
            .get(trace)?
            .as_table_like()?
            .get(device)?
            .as_array()?;
        list.iter()
            .map(|v| v.as_str().and_then(|s| u32::from_str_radix(s, 16).ok()))
            .collect()
    }

    /// Writes the frame checksums `trace` reads back on `device`.
    pub fn set_checksums(&mut self, entry: usize, trace: &str, device: &str, frames: &[u32]) {
        let Some(t) = self.entry_mut(entry) else {
            return;
        };
        let per_trace = implicit_table(implicit_table(t, "checksums"), trace);
        let mut a = Array::new();
        for f in frames {
            a.push(format!("{f:08x}"));
        }
        per_trace.insert(device, value(a));
    }

    fn entry_mut(&mut self, entry: usize) -> Option<&mut Table> {
        self.doc
            .get_mut("trace")?
            .as_array_of_tables_mut()?
            .get_mut(entry)
    }

    /// Writes the list back to its file.
    pub fn save(&self) -> Result<(), ListError> {
        std::fs::write(&self.path, self.doc.to_string()).map_err(|source| ListError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// Table `key` of `t`, made (as a header-less parent of the tables below it) if absent.
fn implicit_table<'t>(t: &'t mut Table, key: &str) -> &'t mut Table {
    let item = t.entry(key).or_insert_with(|| {
        let mut new = Table::new();
        new.set_implicit(true);
        Item::Table(new)
    });
    if !item.is_table() {
        let mut new = Table::new();
        new.set_implicit(true);
        *item = Item::Table(new);
    }
    item.as_table_mut().expect("made a table just above")
}

fn non_negative(v: &toml_edit::Value) -> Option<u64> {
    v.as_integer().and_then(|n| u64::try_from(n).ok())
}

fn entry(index: usize, t: &Table) -> Result<Entry, String> {
    for (key, _) in t.iter() {
        if !ENTRY_KEYS.contains(&key) {
            return Err(format!(
                "unknown key `{key}` (one of: {})",
                ENTRY_KEYS.join(", ")
            ));
        }
    }
    let string = |key: &str| -> Result<Option<String>, String> {
        match t.get(key) {
            None => Ok(None),
            Some(i) => i
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| format!("`{key}` must be a string")),
        }
    };
    let path = string("path")?.ok_or("has no `path`")?;
    let chipsets = match t.get("chipsets") {
        None => DEFAULT_CHIPSETS.iter().map(|c| c.to_string()).collect(),
        Some(i) => i
            .as_array()
            .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect())
            .filter(|v: &Vec<String>| !v.is_empty())
            .ok_or("`chipsets` must be a list of GPU names or ids")?,
    };
    let frames = match t.get("frames") {
        None => None,
        Some(i) => {
            let v: Option<Vec<u64>> = i
                .as_array()
                .map(|a| a.iter().filter_map(non_negative).collect());
            match v.as_deref() {
                Some([first, last]) if first <= last => Some((*first, *last)),
                _ => return Err("`frames` must be [first, last], first ≤ last".into()),
            }
        }
    };
    Ok(Entry {
        index,
        path,
        note: string("note")?,
        chipsets,
        frames,
        counts: string("counts")?,
    })
}

fn allowed(v: &toml_edit::Value) -> Result<Allowed, String> {
    let t: &InlineTable = v
        .as_inline_table()
        .ok_or("each must be { metric, to, reason }")?;
    let metric = t
        .get("metric")
        .and_then(|v| v.as_str())
        .ok_or("`metric` missing")?
        .to_string();
    let valid = METRICS.contains(&metric.as_str())
        || metric.strip_prefix("groups.").is_some_and(|g| {
            g.split_once('.').is_some_and(|(group, part)| {
                STATE_GROUPS.contains(&group) && GROUP_PARTS.contains(&part)
            })
        });
    if !valid {
        return Err(format!(
            "unknown metric `{metric}` (one of: {}, or groups.GROUP.{})",
            METRICS.join(", "),
            GROUP_PARTS.join("|")
        ));
    }
    let to = t.get("to").and_then(non_negative).ok_or("`to` missing")?;
    let reason = t
        .get("reason")
        .and_then(|v| v.as_str())
        .filter(|r| !r.trim().is_empty())
        .ok_or("a change is allowed only with its `reason`")?
        .to_string();
    Ok(Allowed { metric, to, reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(text: &str) -> Result<TraceList, ListError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("traces.toml");
        std::fs::write(&path, text).unwrap();
        TraceList::load(&path)
    }

    #[test]
    fn bad_lists_are_refused_naming_what_and_where() {
        for (text, says) in [
            ("[[trace]]\nnote = \"x\"\n", "trace 1: has no `path`"),
            ("[[trace]]\npath = \"a\"\nchipset = \"tu102\"\n", "unknown key `chipset`"),
            ("[[trace]]\npath = \"a\"\nframes = [3, 1]\n", "`frames` must be"),
            ("traces = 1\n", "unknown key `traces`"),
            ("", "names no trace"),
            ("[[trace]]\npath = \"a\"\n[trace.expect.\"a\".tu102]\nmethods = -1\n", "`methods` must be a whole number"),
            ("[[trace]]\npath = \"a\"\n[trace.expect.\"a\".tu102]\nmethod = 1\n", "unknown key `method`"),
            ("[[trace]]\npath = \"a\"\n[trace.expect.\"a\".tu102.groups]\nblend = [1, 2]\n", "groups.blend must be"),
            (
                "[[trace]]\npath = \"a\"\n[trace.expect.\"a\".tu102]\nallow = [{ metric = \"methods\", to = 3 }]\n",
                "allowed only with its `reason`",
            ),
            ("[[trace\n", "not TOML"),
        ] {
            let e = list(text).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(says), "{text:?}: {e}");
        }
    }

    #[test]
    fn an_update_keeps_the_comments_and_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("traces.toml");
        std::fs::write(
            &path,
            "# the samples\n[[trace]]\npath = \"a.mscope\" # one trace\nchipsets = [\"tu102\"]\n",
        )
        .unwrap();
        let mut l = TraceList::load(&path).unwrap();
        assert_eq!(l.expected(0, "a.mscope", "tu102").unwrap(), None);
        let mut m = Measured {
            totals: [1, 2, 3, 4, 5, 6],
            ..Measured::default()
        };
        m.groups[1] = [7, 8, 9];
        l.set_expected(0, "a.mscope", "tu102", &m, "25.0.7");
        l.set_checksums(0, "a.mscope", "llvmpipe", &[0xabc, 1]);
        l.save().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# the samples\n"), "{text}");
        assert!(text.contains("# one trace"), "{text}");
        assert!(text.contains("[trace.expect.\"a.mscope\".tu102]"), "{text}");
        let l = TraceList::load(&path).unwrap();
        let e = l.expected(0, "a.mscope", "tu102").unwrap().unwrap();
        assert_eq!(e.nvk.as_deref(), Some("25.0.7"));
        assert_eq!(e.totals["mme_instructions"], 6);
        assert_eq!(e.groups["viewport"], [7, 8, 9]);
        assert_eq!(l.checksums(0, "a.mscope", "llvmpipe"), Some(vec![0xabc, 1]));
    }
}
