//! The traces a list entry's path names: the path itself, or where a part holds `*`
//! or `?`, every file whose path matches, part by part.

use std::path::Path;

/// The files `pattern` (relative to `dir`, `/`-separated) names, relative to `dir`
/// and sorted; a pattern without wildcards names itself whether or not it exists (the
/// replay then says it is missing).
pub fn expand(dir: &Path, pattern: &str) -> std::io::Result<Vec<String>> {
    if !pattern.contains(['*', '?']) {
        return Ok(vec![pattern.to_string()]);
    }
    // An absolute pattern starts from the root, its first (empty) part left out.
    let (mut found, rest) = match pattern.strip_prefix('/') {
        Some(rest) => (vec!["/".to_string()], rest),
        None => (vec![String::new()], pattern),
    };
    let parts: Vec<&str> = rest.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for prefix in &found {
            let join = |name: &str| {
                if prefix.is_empty() {
                    name.to_string()
                } else if prefix == "/" {
                    format!("/{name}")
                } else {
                    format!("{prefix}/{name}")
                }
            };
            if !part.contains(['*', '?']) {
                next.push(join(part));
                continue;
            }
            let here = if prefix.is_empty() {
                dir.to_path_buf()
            } else {
                dir.join(prefix)
            };
            let Ok(listing) = std::fs::read_dir(&here) else {
                continue;
            };
            for item in listing {
                let item = item?;
                let name = item.file_name().to_string_lossy().into_owned();
                let kind_fits = if last {
                    item.path().is_file()
                } else {
                    item.path().is_dir()
                };
                if kind_fits && matches(part, &name) {
                    next.push(join(&name));
                }
            }
        }
        found = next;
    }
    found.sort();
    Ok(found)
}

/// Whether `name` matches `pattern`: `*` any run of characters, `?` one.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // The classic two-pointer match with one backtrack point per `*`.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_within_a_part() {
        assert!(matches("*.mscope", "vkcube-lavapipe.mscope"));
        assert!(matches("*-nvidia.*", "storm-nvidia.mscope"));
        assert!(matches("a?c", "abc"));
        assert!(!matches("*.mscope", "multiview-lavapipe.gfxr"));
        assert!(!matches("a?c", "ac"));
        assert!(matches("*", ""));
    }

    #[test]
    fn a_glob_lists_the_files_it_matches_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("s/x")).unwrap();
        for f in ["s/b.mscope", "s/a.mscope", "s/c.gfxr", "s/x/d.mscope"] {
            std::fs::write(dir.path().join(f), b"").unwrap();
        }
        assert_eq!(
            expand(dir.path(), "s/*.mscope").unwrap(),
            ["s/a.mscope", "s/b.mscope"]
        );
        assert_eq!(expand(dir.path(), "s/*/d.*").unwrap(), ["s/x/d.mscope"]);
        assert_eq!(
            expand(dir.path(), "s/none.mscope").unwrap(),
            ["s/none.mscope"]
        );
        let absolute = format!("{}/s/a.*", dir.path().display());
        assert_eq!(
            expand(Path::new("elsewhere"), &absolute).unwrap(),
            [format!("{}/s/a.mscope", dir.path().display())]
        );
    }
}
