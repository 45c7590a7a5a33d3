//! Known, explained differences between the model and NVK: a file of
//! `KIND METHOD -- REASON` lines (`#` starts a comment). KIND is `data` (both push the
//! method, with different data), `nvk-only`, `model-only`, or `any`; METHOD is a
//! method's label as reports print it (spaces and all), where `*` matches any run of
//! characters; REASON says why, and is required.

use std::path::{Path, PathBuf};

/// How a method differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Both sides push it, with different data.
    Data,
    /// Only NVK pushes it.
    NvkOnly,
    /// Only the model pushes it.
    ModelOnly,
}

impl Kind {
    /// Its name in reports and allow files.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Data => "data",
            Kind::NvkOnly => "nvk-only",
            Kind::ModelOnly => "model-only",
        }
    }
}

/// Whether an allow rule's reason is of class `gap`: a difference the model should not
/// have (the other classes name what the trace cannot carry or a chosen NVK version).
pub fn is_gap(reason: &str) -> bool {
    reason.trim_start().starts_with("gap:")
}

/// One line of an allow file.
#[derive(Clone, Debug)]
struct Rule {
    kind: Option<Kind>,
    pattern: String,
    reason: String,
    /// Its line in the file, from 1.
    line: usize,
}

/// The differences a verification accepts, with their reasons.
#[derive(Clone, Debug, Default)]
pub struct AllowList {
    rules: Vec<Rule>,
}

/// Why an allow file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AllowError {
    /// Reading failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is not `KIND METHOD -- REASON`.
    #[error("{path}:{line}: {what}")]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        what: String,
    },
}

impl AllowList {
    /// Reads an allow file.
    pub fn read(path: &Path) -> Result<AllowList, AllowError> {
        let text = std::fs::read_to_string(path).map_err(|source| AllowError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        AllowList::parse(&text).map_err(|(line, what)| AllowError::Line {
            path: path.to_path_buf(),
            line,
            what,
        })
    }

    /// Parses an allow file's text; an error gives the line (from 1) and what is wrong.
    pub fn parse(text: &str) -> Result<AllowList, (usize, String)> {
        let mut rules = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = match line.find(" #") {
                Some(at) => &line[..at],
                None if line.trim_start().starts_with('#') => "",
                None => line,
            }
            .trim();
            if line.is_empty() {
                continue;
            }
            let (kind, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let kind = match kind {
                "data" => Some(Kind::Data),
                "nvk-only" => Some(Kind::NvkOnly),
                "model-only" => Some(Kind::ModelOnly),
                "any" => None,
                other => {
                    return Err((
                        n + 1,
                        format!("kind {other:?}: expected data, nvk-only, model-only or any"),
                    ))
                }
            };
            let (pattern, reason) = rest.split_once(" -- ").unwrap_or((rest, ""));
            let (pattern, reason) = (pattern.trim().to_string(), reason.trim().to_string());
            if pattern.is_empty() || reason.is_empty() {
                return Err((n + 1, "expected KIND METHOD -- REASON".to_string()));
            }
            rules.push(Rule {
                kind,
                pattern,
                reason,
                line: n + 1,
            });
        }
        Ok(AllowList { rules })
    }

    /// The reason a difference of `kind` in the method labelled `label` is accepted.
    pub fn reason(&self, kind: Kind, label: &str) -> Option<&str> {
        self.rule(kind, label)
            .map(|i| self.rules[i].reason.as_str())
    }

    /// The first rule (by its place in the file) that accepts a difference of `kind` in
    /// the method labelled `label`.
    pub fn rule(&self, kind: Kind, label: &str) -> Option<usize> {
        self.rules
            .iter()
            .position(|r| r.kind.is_none_or(|k| k == kind) && glob(&r.pattern, label))
    }

    /// The file line of rule `i`.
    pub fn line(&self, i: usize) -> usize {
        self.rules.get(i).map_or(0, |r| r.line)
    }

    /// Rules in the file.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether the file had no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        // No `*`: the whole text.
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_by_kind_and_label_and_needs_a_reason() {
        let list = AllowList::parse(
            "# known\n\
             data SET_SHADER_PROGRAM_ADDRESS_* -- program addresses are the model's own\n\
             any  method 0x1234 -- a method NVK 25.0.7 pushes that the model does not\n",
        )
        .expect("parses");
        assert_eq!(list.len(), 2);
        assert!(list
            .reason(Kind::Data, "SET_SHADER_PROGRAM_ADDRESS_A")
            .is_some());
        assert!(list
            .reason(Kind::NvkOnly, "SET_SHADER_PROGRAM_ADDRESS_A")
            .is_none());
        assert!(list.reason(Kind::ModelOnly, "method 0x1234").is_some());
        assert!(list.reason(Kind::ModelOnly, "method 0x12340").is_none());
        assert!(list.reason(Kind::Data, "method 0x1234").is_some());
        assert!(glob("* (subchannel 4)", "LAUNCH_DMA (subchannel 4)"));
        assert!(!glob("* (subchannel 4)", "LAUNCH_DMA (subchannel 1)"));
        assert!(glob("SET_*_POOL_*", "SET_TEX_HEADER_POOL_A"));
        assert!(glob("A", "A") && !glob("A", "AB") && glob("A*", "AB"));
        assert!(AllowList::parse("data SET_X").is_err());
        assert!(AllowList::parse("data SET_X --").is_err());
        assert_eq!(
            AllowList::parse("\nsome X -- y").expect_err("bad kind").0,
            2
        );
    }
}
