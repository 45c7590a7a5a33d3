//! `macroscope ci` on the samples: a list written by `--update` checks clean on both
//! MME generations; a changed model or expectation fails naming the trace, the state
//! group and the rows; `--update` makes it pass again; shards split the list without
//! overlap; the JUnit report is valid against the schema CI systems read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use analyzer::ci::{changes, moved_rows, Expected, Measured};
use driver::chipset::Chipset;
use driver::mme::Arch;
use driver::nvk::{lengthen_for_tests, Macro};
use replayer::{replay, ReplayOptions, DEFAULT_MME_BUDGET};
use trace_format::ReadOptions;

const SAMPLES: [&str; 6] = [
    "multiview-nvidia.mscope",
    "glxgears-zink-lavapipe.mscope",
    "compute-nvidia.mscope",
    "secondary-lavapipe.mscope",
    "tessellation-nvidia.mscope",
    "indirect-lavapipe-zstd.gfxr",
];

fn macroscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(args)
        .output()
        .unwrap()
}

/// A trace list over copies of the samples in `dir`, every sample on both MME
/// generations, the glxgears one with a counts file.
fn sample_list(dir: &Path) -> PathBuf {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    for s in SAMPLES {
        std::fs::copy(samples.join(s), dir.join("traces").join(s)).unwrap();
    }
    let list = dir.join("traces.toml");
    std::fs::write(
        &list,
        "# The samples on both MME generations.\n\
         [[trace]]\n\
         path = \"traces/*.mscope\"\n\
         note = \"the samples\"\n\
         chipsets = [\"tu102\", \"gv100\"]\n\
         \n\
         [[trace]]\n\
         path = \"traces/indirect-lavapipe-zstd.gfxr\" # read through an import\n\
         chipsets = [\"tu102\"]\n\
         counts = \"expected/{name}.{chipset}.counts\"\n",
    )
    .unwrap();
    list
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The (trace, target) pairs of a summary's table.
fn checked(o: &Output) -> BTreeSet<(String, String)> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("| traces/"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect()
}

#[test]
fn a_list_updated_from_a_run_checks_clean_and_a_moved_group_fails_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let list = sample_list(dir.path());
    let list_arg = list.to_str().unwrap();

    // Nothing expected yet: exit 1, every check says so.
    let first = macroscope(&["ci", list_arg]);
    assert_eq!(first.status.code(), Some(1), "{}", text(&first));
    assert!(
        text(&first).contains("11 checks: 11 no expectation"),
        "{}",
        text(&first)
    );

    // --update writes the expectations and the counts file, keeping the comments.
    let update = macroscope(&["ci", list_arg, "--update"]);
    assert_eq!(update.status.code(), Some(0), "{}", text(&update));
    let written = std::fs::read_to_string(&list).unwrap();
    assert!(written.starts_with("# The samples on both MME generations."));
    assert!(written.contains("# read through an import"));
    assert!(written.contains("[trace.expect.\"traces/multiview-nvidia.mscope\".gv100]"));
    let counts = dir
        .path()
        .join("expected/indirect-lavapipe-zstd.tu102.counts");
    assert!(counts.is_file());

    // Checked again: clean, with a JUnit report and a summary file.
    let junit = dir.path().join("junit.xml");
    let summary = dir.path().join("summary.md");
    let again = macroscope(&[
        "ci",
        list_arg,
        "--jobs",
        "2",
        "--junit",
        junit.to_str().unwrap(),
        "--summary",
        summary.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        text(&again).contains("11 checks: 11 as expected"),
        "{}",
        text(&again)
    );
    assert_eq!(checked(&again).len(), 11);
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        String::from_utf8_lossy(&again.stdout)
    );
    assert_valid_junit(dir.path(), &junit);

    // The list as a model with one method fewer in the viewport group of glxgears'
    // draw would have written it: the check fails naming the trace and the group.
    let edited = std::fs::read_to_string(&list).unwrap();
    let key = "[trace.expect.\"traces/glxgears-zink-lavapipe.mscope\".tu102.groups]\n";
    let at = edited.find(key).unwrap() + key.len();
    let line_end = at + edited[at..].find("viewport = [").unwrap();
    let (head, tail) = edited.split_at(line_end);
    let rest = tail.strip_prefix("viewport = [").unwrap();
    let (methods, rest) = rest.split_once(',').unwrap();
    let fewer: u64 = methods.parse::<u64>().unwrap() - 1;
    std::fs::write(&list, format!("{head}viewport = [{fewer},{rest}")).unwrap();
    // And the counts file as if one draw had one method fewer.
    let rows = std::fs::read_to_string(&counts).unwrap();
    let draw = rows.lines().position(|l| l.starts_with("draw ")).unwrap();
    let mut lines: Vec<String> = rows.lines().map(str::to_string).collect();
    let methods_at = lines[draw].find(" methods=").unwrap() + " methods=".len();
    let end = methods_at + lines[draw][methods_at..].find(' ').unwrap();
    let n: u64 = lines[draw][methods_at..end].parse().unwrap();
    lines[draw].replace_range(methods_at..end, &(n + 1).to_string());
    std::fs::write(&counts, lines.join("\n") + "\n").unwrap();

    let changed = macroscope(&["ci", list_arg, "--junit", junit.to_str().unwrap()]);
    assert_eq!(changed.status.code(), Some(1), "{}", text(&changed));
    let out = text(&changed);
    assert!(out.contains("11 checks: 9 as expected, 2 changed"), "{out}");
    assert!(
        out.contains("## traces/glxgears-zink-lavapipe.mscope on tu102: changed"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "| groups.viewport.methods | {fewer} | {} |",
            fewer + 1
        )),
        "{out}"
    );
    assert!(out.contains("rows that moved (1 of 1)"), "{out}");
    assert!(out.contains(&format!("methods: {} → {n}", n + 1)), "{out}");
    assert_valid_junit(dir.path(), &junit);
    assert!(std::fs::read_to_string(&junit)
        .unwrap()
        .contains("<failure type=\"changed\""));

    // Updated, it passes.
    assert_eq!(
        macroscope(&["ci", list_arg, "--update"]).status.code(),
        Some(0)
    );
    let fixed = macroscope(&["ci", list_arg]);
    assert_eq!(fixed.status.code(), Some(0), "{}", text(&fixed));
}

#[test]
fn shards_check_each_trace_once() {
    let dir = tempfile::tempdir().unwrap();
    let list = sample_list(dir.path());
    let whole = checked(&macroscope(&["ci", list.to_str().unwrap()]));
    assert_eq!(whole.len(), 11);
    let mut seen = Vec::new();
    for i in 1..=3 {
        let shard = format!("{i}/3");
        let o = macroscope(&["ci", list.to_str().unwrap(), "--shard", &shard]);
        // A shard may hold no trace: that is said, not passed silently.
        if o.status.code() == Some(2) {
            assert!(text(&o).contains("no trace falls in shard"), "{}", text(&o));
            continue;
        }
        seen.extend(checked(&o));
    }
    let unique: BTreeSet<_> = seen.iter().cloned().collect();
    assert_eq!(
        unique.len(),
        seen.len(),
        "a check ran in two shards: {seen:?}"
    );
    assert_eq!(unique, whole);
    // --only: the traces whose path matches.
    let only = macroscope(&["ci", list.to_str().unwrap(), "--only", "*/multiview-*"]);
    assert_eq!(only.status.code(), Some(1), "{}", text(&only));
    let picked: Vec<_> = checked(&only).into_iter().map(|c| c.0).collect();
    assert_eq!(picked, ["traces/multiview-nvidia.mscope"; 2]);
    // Bad input is exit 2 with what was wrong.
    for (args, says) in [
        (vec!["--shard", "4/3"], "no shard"),
        (vec!["--shard", "0/2"], "no shard"),
        (vec!["--only", "nothing*"], "no trace matches nothing*"),
    ] {
        let mut all = vec!["ci", list.to_str().unwrap()];
        all.extend(args);
        let o = macroscope(&all);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
    }
    std::fs::write(&list, "[[trace]]\npath = \"x\"\nchipsets = [\"nv50\"]\n").unwrap();
    let o = macroscope(&["ci", list.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("trace 1"), "{}", text(&o));
    std::fs::write(
        &list,
        "[[trace]]\npath = \"missing.mscope\"\nchipsets = [\"tu102\"]\n",
    )
    .unwrap();
    let o = macroscope(&["ci", list.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("missing.mscope"), "{}", text(&o));
}

/// The JUnit report against the schema Jenkins and GitLab read (tests/ci/junit.xsd),
/// with xmllint where it is installed.
fn assert_valid_junit(dir: &Path, junit: &Path) {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ci/junit.xsd");
    let lint = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(junit)
        .current_dir(dir)
        .output();
    match lint {
        Ok(o) => assert!(o.status.success(), "{}", text(&o)),
        Err(_) => assert!(
            std::env::var_os("MACROSCOPE_REQUIRE_XMLLINT").is_none(),
            "xmllint is not installed"
        ),
    }
}

/// A model whose viewport-group macro runs one instruction more: the check the list
/// makes names that group and every draw it moved, on both MME generations.
#[test]
fn a_changed_model_moves_the_group_and_rows_its_change_touches() {
    let dir = tempfile::tempdir().unwrap();
    let sample =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/glxgears-zink-lavapipe.mscope");
    for arch in [Arch::Turing, Arch::Fermi] {
        let options = ReplayOptions {
            chipset: Chipset::for_arch(arch),
            frames: None,
            repeat: 1,
            read: ReadOptions::default(),
            mme_budget: DEFAULT_MME_BUDGET,
            remember_macro_runs: true,
        };
        let (base, new) = (dir.path().join("base.msr"), dir.path().join("new.msr"));
        lengthen_for_tests(None);
        replay(&sample, &base, &options, &mut |_, _| {}).unwrap();
        lengthen_for_tests(Some(Macro::SetVbStride));
        replay(&sample, &new, &options, &mut |_, _| {}).unwrap();
        lengthen_for_tests(None);

        let was = Measured::of(&base).unwrap();
        let mut expected = Expected::default();
        for (name, v) in analyzer::ci::measure::METRICS.iter().zip(was.totals) {
            expected.totals.insert(name.to_string(), v);
        }
        for (group, parts) in trace_format::results::STATE_GROUPS.iter().zip(was.groups) {
            expected.groups.insert(group.to_string(), parts);
        }
        let now = Measured::of(&new).unwrap();
        let moved: Vec<String> = changes(&expected, &now, driver::nvk::MODELLED_NVK)
            .into_iter()
            .map(|c| c.what)
            .collect();
        assert_eq!(
            moved,
            ["mme_instructions", "groups.vertex-input.mme_instructions"],
            "{arch:?}"
        );
        let counts = |p: &Path| {
            let mut t = Vec::new();
            analyzer::counts::export_counts(p, &mut t).unwrap();
            String::from_utf8(t).unwrap()
        };
        let (rows, count, lengths) = moved_rows(&counts(&base), &counts(&new), 5);
        assert_eq!(lengths, None);
        // Each draw that set a vertex stride moved, and only in the MME instructions.
        assert!(count > 0, "{arch:?}");
        for r in rows {
            assert!(
                r.fields
                    .iter()
                    .all(|f| f.starts_with("mme:") || f.starts_with("vertex-input:")),
                "{arch:?}: {r:?}"
            );
        }
    }
}

/// The committed list (samples/traces.toml) holds what the model costs today, on both
/// MME generations, row by row: a change to the model that moves a cost fails here
/// until the list is updated with it.
#[test]
fn the_sample_list_checks_clean_on_both_mme_generations() {
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/traces.toml");
    let o = macroscope(&["ci", list.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("32 checks: 32 as expected"), "{out}");
    for target in ["| tu102 |", "| gv100 |"] {
        assert_eq!(out.matches(target).count(), 16, "{out}");
    }
}

/// `--device`: each trace replayed on this machine's Vulkan device, its frames held
/// against the checksums the list keeps for that device.
#[test]
fn frames_read_back_on_this_device_are_held_against_their_checksums() {
    if !Path::new("/usr/share/vulkan/icd.d").is_dir() {
        assert!(
            std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
            "no Vulkan driver"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    std::fs::copy(
        samples.join("vkcube-lavapipe.mscope"),
        dir.path().join("vkcube.mscope"),
    )
    .unwrap();
    let list = dir.path().join("traces.toml");
    std::fs::write(
        &list,
        "[[trace]]\npath = \"vkcube.mscope\"\nchipsets = [\"tu102\"]\n",
    )
    .unwrap();
    let list_arg = list.to_str().unwrap();
    let update = macroscope(&["ci", list_arg, "--device", "--update"]);
    assert_eq!(update.status.code(), Some(0), "{}", text(&update));
    let written = std::fs::read_to_string(&list).unwrap();
    assert!(
        written.contains("[trace.checksums.\"vkcube.mscope\"]"),
        "{written}"
    );
    let again = macroscope(&["ci", list_arg, "--device"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(
        text(&again).contains("2 checks: 2 as expected"),
        "{}",
        text(&again)
    );

    // One frame's checksum as another device build would have read it back.
    let table = written.find("[trace.checksums.").unwrap();
    let at = table + written[table..].find("= [\"").unwrap() + 4;
    let mut changed = written.clone();
    let old = &written[at..at + 8];
    let new = format!("{:08x}", u32::from_str_radix(old, 16).unwrap() ^ 1);
    changed.replace_range(at..at + 8, &new);
    std::fs::write(&list, changed).unwrap();
    let o = macroscope(&["ci", list_arg, "--device"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("| frame 0 crc32 | {new} | {old} |")),
        "{}",
        text(&o)
    );
}
