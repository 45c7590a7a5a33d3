//! The `macroscope` binary as a user runs it: sample, info, dump, replay, report and
//! bad input; on synthetic traces and on a scene captured through the layer (the
//! NVIDIA-captured multiview sample).

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn macroscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn sample(dir: &Path, frames: u32) -> String {
    let path = dir.join("s.mscope").display().to_string();
    let out = macroscope(&[
        "sample",
        "-o",
        &path,
        "--frames",
        &frames.to_string(),
        "--draws",
        "500",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    path
}

#[test]
fn info_summarizes_a_sample_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), 4);
    let out = macroscope(&["info", &path]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("frames:      4\n"), "{text}");
    assert!(
        text.contains("index:       footer with 4 chunk entries"),
        "{text}"
    );
    // 500 draws a frame: 7 in 10 indexed.
    let indexed = text
        .lines()
        .find(|l| l.trim_start().starts_with("vkCmdDrawIndexed "))
        .unwrap();
    assert_eq!(indexed.split_whitespace().nth(1), Some("1400"), "{text}");
    assert!(text.contains("ratio "), "{text}");
}

#[test]
fn a_view_mask_reads_as_written_in_binary_hex_or_decimal() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, mask: &str| {
        let path = dir.path().join(name);
        let out = macroscope(&[
            "sample",
            "-o",
            path.to_str().unwrap(),
            "--frames",
            "1",
            "--draws",
            "20",
            "--view-mask",
            mask,
        ]);
        assert!(out.status.success(), "{mask}: {}", stderr(&out));
        std::fs::read(path).unwrap()
    };
    let decimal = write("decimal.mscope", "11");
    assert_eq!(write("binary.mscope", "0b1011"), decimal);
    assert_eq!(write("hex.mscope", "0xb"), decimal);
    assert_ne!(write("other.mscope", "0b1111"), decimal);

    let bad = macroscope(&["sample", "-o", "unused.mscope", "--view-mask", "0b12"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("'0b12'"), "{}", stderr(&bad));
    assert!(!Path::new("unused.mscope").exists());
}

#[test]
fn dump_json_gives_one_object_per_record_and_frames_select() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), 3);
    let all = macroscope(&["dump", "--json", &path]);
    assert!(all.status.success(), "{}", stderr(&all));
    let lines: Vec<serde_json::Value> = stdout(&all)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["seq"], i as u64);
    }
    let boundaries: Vec<_> = lines
        .iter()
        .filter(|l| l["call"] == "frame boundary")
        .map(|l| l["args"]["frame"].clone())
        .collect();
    assert_eq!(boundaries, vec![0, 1, 2]);

    let one = macroscope(&["dump", "--json", "--frames", "1-1", &path]);
    let frame1: Vec<serde_json::Value> = stdout(&one)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(frame1.iter().all(|l| l["frame"] == 1));
    assert_eq!(
        frame1.len(),
        lines.iter().filter(|l| l["frame"] == 1).count()
    );
    assert_eq!(frame1.last().unwrap()["call"], "frame boundary");

    let text = macroscope(&["dump", "--frames", "2", &path]);
    assert!(stdout(&text).lines().all(|l| l.contains(" frame 2 ")));
    let missing = macroscope(&["dump", "--frames", "9", &path]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("frame 9 is not in this file"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn dump_prints_packed_parameters_as_the_tables_they_stand_for() {
    use trace_format::generated::trace::{CallT, VulkanCallT, VulkanParamT};
    use trace_format::generic_params;
    use trace_format::trace::CallMeta;
    use trace_format::{TraceWriter, WriterOptions};
    // vkCmdSetViewport(cb, 0, 1, a viewport), and a structure with a chained one and
    // a nested array, recorded once as tables and once packed.
    let mut viewport = VulkanParamT::default();
    (viewport.value, viewport.bytes) = (0x7000, Some((0..24).collect()));
    let mut link = VulkanParamT::default();
    (link.value, link.bytes) = (1_000_314_000, Some(vec![9; 16]));
    let mut nested = VulkanParamT::default();
    nested.bytes = Some(vec![1, 2, 3]);
    viewport.chain = Some(vec![link]);
    viewport.nested = Some(vec![nested, VulkanParamT::default()]);
    let params = [7u64, 0, 1].map(|v| {
        let mut p = VulkanParamT::default();
        p.value = v;
        p
    });
    let params: Vec<VulkanParamT> = params.into_iter().chain([viewport]).collect();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("generic.mscope");
    let mut w = TraceWriter::create(&trace, &WriterOptions::default()).unwrap();
    let mut tables = VulkanCallT::default();
    (tables.command, tables.params) = (Some("vkCmdSetViewport".into()), Some(params.clone()));
    let packed = generic_params::packed_call("vkCmdSetViewport", &params);
    for call in [tables, packed] {
        w.append(CallMeta::default(), &CallT::VulkanCall(Box::new(call)))
            .unwrap();
    }
    w.finish().unwrap();
    let out = macroscope(&["dump", "--json", trace.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let args: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["args"].clone())
        .collect();
    assert_eq!(args.len(), 2);
    assert_eq!(args[1], args[0], "packed as tables");
    assert_eq!(args[0]["params"][3]["chain"][0]["value"], 1_000_314_000);
    assert!(args[1].get("packed").is_none());
}

#[test]
fn info_on_a_truncated_trace_names_the_offset_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), 3);
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.mscope");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let out = macroscope(&["info", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("torn write"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Chunks are frames here: the summary of the whole ones before the torn one still comes first.
    let torn: u64 = err
        .split("cut.mscope: chunk ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(torn >= 1, "{err}");
    assert!(
        stdout(&out).contains(&format!("frames:      {torn}\n")),
        "{}",
        stdout(&out)
    );
}

#[test]
fn info_on_a_corrupted_trace_names_the_offset_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), 3);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    let bad = dir.path().join("bad.mscope");
    std::fs::write(&bad, &bytes).unwrap();
    let out = macroscope(&["info", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("checksum mismatch"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("at offset"), "{}", stderr(&out));

    let not_a_trace = dir.path().join("notes.txt");
    std::fs::write(&not_a_trace, "hello").unwrap();
    let out = macroscope(&["info", not_a_trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("notes.txt: header at offset 0"),
        "{}",
        stderr(&out)
    );

    let out = macroscope(&["info", dir.path().join("absent.mscope").to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a missing file is not bad input"
    );
}

#[test]
fn a_writer_killed_mid_capture_leaves_its_whole_chunks_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("killed.mscope");
    let mut child = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args([
            "sample",
            "-o",
            path.to_str().unwrap(),
            "--frames",
            "1000000",
            "--draws",
            "200",
        ])
        .spawn()
        .unwrap();
    // Wait for a few chunks to land, then SIGKILL: no destructor, no footer.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&path).map_or(0, |m| m.len()) < 200_000
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();

    let out = macroscope(&["info", path.to_str().unwrap()]);
    let text = stdout(&out);
    assert!(text.contains("index:       none"), "{text}");
    let frames: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("frames:"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(frames >= 2, "{text}");
    // Either the kill fell between chunks (clean) or inside one (a torn-chunk error).
    match out.status.code() {
        Some(0) => {}
        Some(2) => assert!(stderr(&out).contains("torn write"), "{}", stderr(&out)),
        other => panic!("exit {other:?}: {}", stderr(&out)),
    }
}

#[test]
fn replay_writes_results_and_prints_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), 2);
    let out = dir.path().join("r.msr");
    let run = macroscope(&[
        "replay",
        &path,
        "-o",
        out.to_str().unwrap(),
        "--mme",
        "fermi",
        "--repeat",
        "2",
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let text = stdout(&run);
    assert!(
        text.contains("on GV100 (0x140, Volta): 2 frames, 2 submits, 1000 draws"),
        "{text}"
    );
    assert!(
        run.stderr.is_empty(),
        "no progress bar or warnings off a terminal: {}",
        stderr(&run)
    );
    let info = macroscope(&["info", out.to_str().unwrap()]);
    assert!(
        stdout(&info).contains("draw rows:   2000"),
        "{}",
        stdout(&info)
    );
    assert!(
        stdout(&info).contains("repetitions: 2"),
        "{}",
        stdout(&info)
    );

    // Cut inside the first chunk: nothing replayed, so no results file is named.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.mscope");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let bad = macroscope(&["replay", cut.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(!stderr(&bad).contains("r.msr"), "{}", stderr(&bad));
    // Cut in the last of 4 frames: the rows of the whole ones are kept, and named.
    let longer = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(sample(longer.path(), 4)).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() * 7 / 8]).unwrap();
    let bad = macroscope(&["replay", cut.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("rows before the error are in") && stderr(&bad).contains("r.msr"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn report_compare_and_export_on_replayed_results() {
    let dir = tempfile::tempdir().unwrap();
    let trace = sample(dir.path(), 2);
    let at = |name: &str| dir.path().join(name).display().to_string();
    for (out, mme) in [("a.msr", "turing"), ("b.msr", "turing"), ("f.msr", "fermi")] {
        let run = macroscope(&[
            "replay",
            &trace,
            "-o",
            &at(out),
            "--mme",
            mme,
            "--repeat",
            "3",
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
    }
    let plots = at("plots");
    let report = macroscope(&[
        "report",
        &at("a.msr"),
        "--by",
        "view-count",
        "--top",
        "3",
        "--plot",
        &plots,
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
    let text = stdout(&report);
    assert!(
        text.contains("p99.9")
            && text.contains("mme-instructions")
            && text.contains("costliest draws"),
        "{text}"
    );
    for name in [
        "histogram-mme-instructions.svg",
        "histogram-mme-instructions.png",
        "frames.png",
        "view-count.svg",
    ] {
        assert!(dir.path().join("plots").join(name).is_file(), "{name}");
    }

    // The same driver twice: counts identical, no regression.
    let same = macroscope(&[
        "compare",
        &at("a.msr"),
        &at("b.msr"),
        "--metric",
        "mme-instructions",
        "--metric",
        "hw-draws",
    ]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    assert!(stdout(&same).contains("no regression"));
    // Fermi runs more MME instructions than Turing for the same draws: a "regression".
    let worse = macroscope(&[
        "compare",
        &at("a.msr"),
        &at("f.msr"),
        "--metric",
        "mme-instructions",
    ]);
    assert_eq!(worse.status.code(), Some(1), "{}", stdout(&worse));
    assert!(stdout(&worse).contains("REGRESSED"));
    let bad = macroscope(&["compare", &at("a.msr"), &trace]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));

    let json = at("t.json");
    let export = macroscope(&["export", &at("a.msr"), "--format", "perfetto", "-o", &json]);
    assert!(export.status.success(), "{}", stderr(&export));
    let value: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let slices = value["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "draw")
        .count();
    assert_eq!(slices, 3 * 1000);
}

#[test]
fn shaders_lists_modules_with_what_the_passes_find_and_dumps_them() {
    let dir = tempfile::tempdir().unwrap();
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/multiview-nvidia.mscope"
    );
    let dump = dir.path().join("spv");
    let out = macroscope(&["shaders", trace, "--dump", dump.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Vertex") && text.contains("Fragment"),
        "{text}"
    );
    assert!(text.contains("lowered 1 load(s)"), "{text}");
    let mut files: Vec<String> = std::fs::read_dir(&dump)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    // Two modules, the fragment shader's ViewIndex and UBO lowered forms.
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(files.iter().any(|f| f.ends_with(".view-index.spv")));
    assert!(files.iter().any(|f| f.ends_with(".ubo.spv")));
    assert!(text.contains("1 chained"), "{text}");
    let tess = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/tessellation-nvidia.mscope"
    );
    let tess_dump = dir.path().join("tess");
    let text = stdout(&macroscope(&[
        "shaders",
        tess,
        "--dump",
        tess_dump.to_str().unwrap(),
    ]));
    assert!(std::fs::read_dir(&tess_dump).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".gs-count.spv")));
    // The shrink shader emits three vertices in a counted loop.
    let geometry = text.lines().find(|l| l.contains("Geometry")).unwrap();
    assert!(geometry.trim_end().ends_with(" 3"), "{text}");
}

/// The multiview scene as captured through the layer on NVIDIA's driver: 3 frames.
const CAPTURED_SCENE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/samples/multiview-nvidia.mscope"
);

/// The lines of `text` after the one equal to `title`, up to the next unindented one.
fn section<'t>(text: &'t str, title: &str) -> Vec<&'t str> {
    text.lines()
        .skip_while(|l| *l != title)
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect()
}

#[test]
fn info_names_commands_as_vulkan_does_and_sets_other_records_apart() {
    let out = macroscope(&["info", CAPTURED_SCENE]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let commands = section(&text, "commands:");
    let others = section(&text, "other records:");
    assert!(commands.len() > 20, "{text}");
    for line in &commands {
        assert!(line.trim_start().starts_with("vk"), "{line}");
    }
    // Typed and generic records alike: draws, submits, destroyed objects.
    for name in [
        "vkCmdDraw ",
        "vkQueueSubmit ",
        "vkDestroyPipeline ",
        "vkCreateRenderPass ",
    ] {
        assert!(
            commands.iter().any(|l| l.trim_start().starts_with(name)),
            "{name}: {text}"
        );
    }
    let other_names: Vec<&str> = others
        .iter()
        .map(|l| l.trim().rsplit_once(' ').unwrap().0.trim_end())
        .collect();
    assert!(other_names.contains(&"frame boundary"), "{text}");
    assert!(other_names.contains(&"memory contents"), "{text}");
    assert!(other_names.iter().all(|n| !n.starts_with("vk")), "{text}");
    // Counts by count, in one column sized to the longest name.
    let ends: Vec<usize> = commands.iter().chain(&others).map(|l| l.len()).collect();
    assert!(ends.iter().all(|e| *e == ends[0]), "{text}");
    let counts: Vec<u64> = commands
        .iter()
        .map(|l| l.split_whitespace().last().unwrap().parse().unwrap())
        .collect();
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{text}");
}

#[test]
fn frames_are_the_frames_the_program_rendered_in_info_replay_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let info = stdout(&macroscope(&["info", CAPTURED_SCENE]));
    assert!(info.contains("frames:      3\n"), "{info}");
    assert!(info.contains("setup:       "), "{info}");
    assert!(info.contains("teardown:    "), "{info}");
    assert!(!info.contains("partial"), "{info}");

    let results = dir.path().join("mv.msr").display().to_string();
    let replay = macroscope(&["replay", CAPTURED_SCENE, "-o", &results]);
    assert!(replay.status.success(), "{}", stderr(&replay));
    let text = stdout(&replay);
    assert!(
        text.contains("on TU102 (0x162, Turing): 3 frames, 3 submits, 18 draws"),
        "{text}"
    );

    let report = stdout(&macroscope(&["report", &results, "--by", "frame"]));
    assert!(report.contains("3 frames, 18 draws, 3 submits"), "{report}");
    assert!(
        report.contains("frame 000002") && !report.contains("frame 000003"),
        "{report}"
    );
    assert!(report.contains("vkCmdDraw "), "{report}");
    let results_info = stdout(&macroscope(&["info", &results]));
    assert!(results_info.contains("frames:      3\n"), "{results_info}");
}

#[test]
fn replay_says_how_much_of_the_trace_the_model_executed_and_what_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("mv.msr").display().to_string();
    let replay = macroscope(&["replay", CAPTURED_SCENE, "-o", &results]);
    let text = stdout(&replay);
    let coverage = text
        .lines()
        .find(|l| l.starts_with("driver model executed "))
        .unwrap_or_else(|| panic!("{text}"));
    let words: Vec<&str> = coverage.split_whitespace().collect();
    let (executed, recorded): (u64, u64) = (words[3].parse().unwrap(), words[5].parse().unwrap());
    // The multiview scene's command buffers hold only what the model executes.
    assert!(recorded > 100 && executed == recorded, "{coverage}");
    assert!(coverage.ends_with("(100.0%)"), "{coverage}");
    assert!(!text.contains("skipped vkCmd* calls"), "{text}");
    // The calls that are no commands (setup, teardown, frame ends) are summed up.
    assert!(text.contains("(-v lists them all)"), "{text}");

    let verbose = stdout(&macroscope(&[
        "replay",
        CAPTURED_SCENE,
        "-o",
        &results,
        "-v",
    ]));
    let all = section(&verbose, "skipped calls, by count:");
    // Destroying an object is no skip: the model forgets it, so that its handle can
    // name a new object.
    assert!(
        !all.iter()
            .any(|l| l.trim_start().starts_with("vkDestroyPipeline ")),
        "{verbose}"
    );
    assert!(
        all.iter()
            .any(|l| l.trim_start().starts_with("vkCreateFence ")),
        "{verbose}"
    );
    assert!(
        all.iter()
            .any(|l| l.trim_start().starts_with("frame boundary ")),
        "{verbose}"
    );
    assert!(!verbose.contains("-v lists"), "{verbose}");
}

#[test]
fn errors_say_each_cause_once_and_point_only_at_results_that_exist() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nonexistent.mscope").display().to_string();
    let info = macroscope(&["info", &missing]);
    assert_eq!(info.status.code(), Some(1));
    let err = stderr(&info);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(err.contains("nonexistent.mscope"), "{err}");

    let out = dir.path().join("out.msr");
    let replay = macroscope(&["replay", &missing, "-o", out.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(1));
    let err = stderr(&replay);
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert!(!err.contains("out.msr"), "no results were written: {err}");
    assert!(!out.exists());

    // A results file left by an earlier run is not this run's.
    std::fs::copy(sample(dir.path(), 1), dir.path().join("old.mscope")).unwrap();
    let first = macroscope(&[
        "replay",
        &dir.path().join("old.mscope").display().to_string(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(first.status.success(), "{}", stderr(&first));
    std::thread::sleep(Duration::from_millis(20));
    let again = macroscope(&["replay", &missing, "-o", out.to_str().unwrap()]);
    assert!(!stderr(&again).contains("out.msr"), "{}", stderr(&again));
}

#[test]
fn compare_judges_counts_exactly_and_calls_timings_of_one_repetition_inconclusive() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    // Pairs of replays of the same trace by the same build: never a regression, by
    // default and at threshold 0.
    for pair in 0..5 {
        let (a, b) = (at(&format!("a{pair}.msr")), at(&format!("b{pair}.msr")));
        for out in [&a, &b] {
            let run = macroscope(&["replay", CAPTURED_SCENE, "-o", out]);
            assert!(run.status.success(), "{}", stderr(&run));
        }
        for extra in [&[][..], &["--threshold", "0"][..]] {
            let mut args = vec!["compare", a.as_str(), b.as_str()];
            args.extend_from_slice(extra);
            let same = macroscope(&args);
            assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
        }
    }
    // A timing with one repetition a side cannot be judged: exit 125 for git bisect.
    let timing = macroscope(&[
        "compare",
        &at("a0.msr"),
        &at("b0.msr"),
        "--metric",
        "execute-ns",
    ]);
    assert_eq!(timing.status.code(), Some(125), "{}", stdout(&timing));
    assert!(
        stdout(&timing).contains("inconclusive"),
        "{}",
        stdout(&timing)
    );
    // The Fermi MME runs more instructions for the same draws: a count regression.
    let fermi = at("f.msr");
    let run = macroscope(&["replay", CAPTURED_SCENE, "-o", &fermi, "--mme", "fermi"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let worse = macroscope(&["compare", &at("a0.msr"), &fermi]);
    assert_eq!(worse.status.code(), Some(1), "{}", stdout(&worse));
    assert!(stdout(&worse).contains("REGRESSED"), "{}", stdout(&worse));
}

#[test]
fn report_by_state_group_splits_the_draws_cost_and_names_older_files() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("mv.msr").display().to_string();
    let run = macroscope(&["replay", CAPTURED_SCENE, "-o", &results]);
    assert!(run.status.success(), "{}", stderr(&run));
    let report = stdout(&macroscope(&["report", &results, "--by", "state-group"]));
    let rows = section_rows(&report, "group ");
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "vertex-input",
            "viewport",
            "rasterizer",
            "depth-stencil",
            "blend",
            "descriptors",
            "shaders",
            "constant-buffers",
            "draw"
        ],
        "{report}"
    );
    // The multiview scene binds descriptor sets and pushes constants before its draws.
    let descriptors = rows.iter().find(|r| r.starts_with("descriptors")).unwrap();
    let dwords: u64 = descriptors
        .split_whitespace()
        .nth(3)
        .unwrap()
        .parse()
        .unwrap();
    assert!(dwords > 0, "{report}");
}

/// The lines after the header starting with `header`, up to the first blank one.
fn section_rows<'t>(text: &'t str, header: &str) -> Vec<&'t str> {
    text.lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

#[test]
fn replay_strict_fails_naming_the_first_call_the_model_could_not_execute() {
    use trace_format::generated::trace::{CallT, VulkanCallT, VulkanParamT};
    use trace_format::trace::CallMeta;
    use trace_format::{TraceWriter, WriterOptions};
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("odd.mscope");
    let mut w = TraceWriter::create(&trace, &WriterOptions::default()).unwrap();
    let mut call = VulkanCallT::default();
    call.command = Some("vkCmdSetViewport".into());
    // Four parameters, one viewport counted and its bytes missing: it does not decode.
    let mut params: Vec<VulkanParamT> = (0..4).map(|_| VulkanParamT::default()).collect();
    params[2].value = 1;
    call.params = Some(params);
    w.append(CallMeta::default(), &CallT::VulkanCall(Box::new(call)))
        .unwrap();
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
    let (trace, results) = (
        trace.display().to_string(),
        dir.path().join("odd.msr").display().to_string(),
    );

    let lenient = macroscope(&["replay", &trace, "-o", &results]);
    assert!(lenient.status.success(), "{}", stderr(&lenient));
    let strict = macroscope(&["replay", &trace, "-o", &results, "--strict"]);
    assert_eq!(strict.status.code(), Some(2), "{}", stderr(&strict));
    let why = stderr(&strict);
    assert!(
        why.contains("--strict") && why.contains("vkCmdSetViewport (does not decode"),
        "{why}"
    );
    // The results are written all the same.
    assert!(Path::new(&results).is_file());
}

#[test]
fn a_runaway_draw_fails_alone_and_strict_makes_it_fatal() {
    use trace_format::generated::trace::{
        BeginCommandBufferT, CallT, CmdDrawT, QueueSubmitT, SubmitInfoT,
    };
    use trace_format::trace::CallMeta;
    use trace_format::{TraceWriter, WriterOptions};
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("runaway.mscope");
    let mut w = TraceWriter::create(&trace, &WriterOptions::default()).unwrap();
    let mut begin = BeginCommandBufferT::default();
    begin.command_buffer = 1;
    let mut calls = vec![CallT::BeginCommandBuffer(Box::new(begin))];
    for instances in [u32::MAX, 1] {
        let mut draw = CmdDrawT::default();
        draw.command_buffer = 1;
        draw.vertex_count = 3;
        draw.instance_count = instances;
        calls.push(CallT::CmdDraw(Box::new(draw)));
    }
    let mut info = SubmitInfoT::default();
    info.command_buffers = Some(vec![1]);
    let mut submit = QueueSubmitT::default();
    submit.submits = Some(vec![info]);
    calls.push(CallT::QueueSubmit(Box::new(submit)));
    for c in &calls {
        w.append(CallMeta::default(), c).unwrap();
    }
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
    let (trace, results) = (
        trace.display().to_string(),
        dir.path().join("runaway.msr").display().to_string(),
    );
    let args = ["replay", &trace, "-o", &results, "--mme-budget", "200000"];

    let replay = macroscope(&args);
    assert!(replay.status.success(), "{}", stderr(&replay));
    let text = stdout(&replay);
    assert!(text.contains("2 draws"), "{text}");
    assert!(
        text.contains("1 call(s) could not be finished")
            && text.contains("1 × past its instruction budget")
            && text.contains("macro `draw`"),
        "{text}"
    );
    let report = stdout(&macroscope(&["report", &results]));
    assert!(
        report.contains("1 row(s) are calls the GPU model could not finish"),
        "{report}"
    );

    let strict = macroscope(&[&args[..], &["--strict"]].concat());
    assert_eq!(strict.status.code(), Some(2), "{}", stderr(&strict));
    assert!(
        stderr(&strict).contains("could not finish call #"),
        "{}",
        stderr(&strict)
    );
}

#[test]
fn compare_says_where_the_change_is_as_text_markdown_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let (turing, again, fermi) = (at("t.msr"), at("t2.msr"), at("f.msr"));
    for (out, mme) in [(&turing, "turing"), (&again, "turing"), (&fermi, "fermi")] {
        let run = macroscope(&["replay", CAPTURED_SCENE, "-o", out, "--mme", mme]);
        assert!(run.status.success(), "{}", stderr(&run));
    }
    // The Fermi MME: the draws' MME instructions change, grouped and listed; before
    // Turing NVK maps no uniform buffer into a constant buffer, so the binds that
    // follow a descriptor bind (methods, dwords) change too.
    let json = macroscope(&["compare", &turing, &fermi, "--format", "json", "--top", "3"]);
    assert_eq!(json.status.code(), Some(1), "{}", stderr(&json));
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["verdict"], "regressed");
    let changed = v["changes"]["metrics"].as_array().unwrap();
    let names: Vec<&str> = changed
        .iter()
        .map(|m| m["metric"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["mme-instructions", "methods", "dwords"], "{v}");
    let mme = &changed[0];
    let by_kind = mme["groups"]["kind"].as_array().unwrap();
    let hurt: u64 = by_kind.iter().map(|g| g["hurt"].as_u64().unwrap()).sum();
    let helped: u64 = by_kind.iter().map(|g| g["helped"].as_u64().unwrap()).sum();
    assert!(hurt > helped, "{v}");
    assert_eq!(mme["top"].as_array().map(Vec::len), Some(3), "{v}");
    assert!(mme["top"][0]["new"].as_u64() > mme["top"][0]["base"].as_u64());
    // Fewer constant-buffer methods: every changed draw helped there.
    let methods = &changed[1]["groups"]["state group"];
    let cbufs = methods
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "constant-buffers")
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        cbufs["helped"].as_u64() > Some(0) && cbufs["hurt"] == 0,
        "{v}"
    );
    assert_eq!(v["changes"]["added_count"], 0);

    let markdown = stdout(&macroscope(&[
        "compare", &turing, &fermi, "--format", "markdown",
    ]));
    assert!(
        markdown.starts_with("### macroscope compare: REGRESSED")
            && markdown.contains("| group | helped | hurt | base | new | change |")
            && markdown.contains("Largest changes:"),
        "{markdown}"
    );

    // Two replays by the same build: nothing changed, nothing to list.
    let same = macroscope(&["compare", &turing, &again, "--format", "json"]);
    assert_eq!(same.status.code(), Some(0), "{}", stdout(&same));
    let v: serde_json::Value = serde_json::from_str(&stdout(&same)).unwrap();
    assert_eq!(v["verdict"], "ok");
    assert_eq!(v["changes"]["metrics"].as_array().map(Vec::len), Some(0));
}

#[test]
fn report_of_a_run_of_frames_gives_each_frames_cost_and_the_draws_that_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/glxgears-zink-lavapipe.mscope");
    let results = dir.path().join("gears.msr").display().to_string();
    let run = macroscope(&["replay", trace.to_str().unwrap(), "-o", &results]);
    assert!(run.status.success(), "{}", stderr(&run));
    let report = macroscope(&["report", &results]);
    assert!(report.status.success(), "{}", stderr(&report));
    let text = String::from_utf8_lossy(&report.stdout);
    // A row of the per-frame table: mean, p50, p90, max and the frame of the max.
    let spread = |name: &str| -> (f64, Vec<u64>) {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name) && l.contains('.'))
            .unwrap_or_else(|| panic!("no per-frame `{name}` row in\n{text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let rest = words[2..].iter().map(|w| w.parse().unwrap()).collect();
        (words[1].parse().unwrap(), rest)
    };
    // glxgears draws its twelve gear parts each of its 60 frames.
    let (mean, draws) = spread("draws");
    assert_eq!(
        (mean, draws[0], draws[1], draws[2]),
        (12.0, 12, 12, 12),
        "{text}"
    );
    // Each frame's dwords: the frames' mean times 60 is every row's dwords together.
    let (mean_dwords, dwords) = spread("dwords");
    assert!(dwords[0] <= dwords[1] && dwords[1] <= dwords[2], "{text}");
    let total_dwords: u64 = text
        .lines()
        .skip_while(|l| !l.starts_with("by Kind"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().nth(3).unwrap().parse::<u64>().unwrap())
        .sum();
    // (The mean is printed to a tenth.)
    assert!(
        (mean_dwords * 60.0 - total_dwords as f64).abs() <= 3.0,
        "{mean_dwords} × 60 against {total_dwords}\n{text}"
    );
    // The same gear drawn again is the same work: the report counts such repeats.
    let repeats = text
        .lines()
        .find(|l| l.starts_with("draws that repeat the draw before them"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(repeats.contains(" of 720 ("), "{repeats}");
}

#[test]
fn replay_on_a_chosen_gpu_records_it_and_a_cross_generation_compare_shows_each_groups_cost() {
    let dir = tempfile::tempdir().unwrap();
    let (ampere, pascal) = (dir.path().join("ampere.msr"), dir.path().join("pascal.msr"));
    let (ampere, pascal) = (ampere.to_str().unwrap(), pascal.to_str().unwrap());
    let run = macroscope(&["replay", CAPTURED_SCENE, "-o", ampere, "--chipset", "ga102"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let ampere_summary = stdout(&run);
    assert!(
        stdout(&run).contains("on GA102 (0x172, Ampere)"),
        "{}",
        stdout(&run)
    );
    let run = macroscope(&["replay", CAPTURED_SCENE, "-o", pascal, "--chipset", "0x134"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let info = macroscope(&["info", pascal]);
    assert!(
        stdout(&info).contains("gpu:         GP104 (0x134, Pascal)"),
        "{}",
        stdout(&info)
    );
    let report = macroscope(&["report", ampere]);
    assert!(
        stdout(&report).contains("GPU GA102 (0x172, Ampere)"),
        "{}",
        stdout(&report)
    );
    // A replay through the model times nothing on a GPU: no row of zeros for it.
    assert!(
        !stdout(&report).lines().any(|l| l.starts_with("gpu-ns")),
        "{}",
        stdout(&report)
    );
    // Pascal's pre-Turing MME runs more instructions for the same draws, and the
    // comparison says which state groups cost what on each GPU.
    let compare = macroscope(&["compare", ampere, pascal]);
    let text = stdout(&compare);
    // replay's MME instructions in its rows are what compare sums.
    let in_rows = ampere_summary
        .split(" in its rows")
        .next()
        .and_then(|s| s.rsplit('(').next())
        .unwrap_or_default()
        .to_string();
    let compared = text
        .lines()
        .find(|l| l.starts_with("mme-instructions"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_default();
    assert!(
        in_rows.parse::<u64>().is_ok_and(|n| n > 0),
        "{ampere_summary}"
    );
    assert_eq!(in_rows, compared, "{ampere_summary}\n{text}");
    assert!(
        text.contains(
            "base (GPU GA102 (0x172, Ampere), NVK 25.0.7) -> new (GPU GP104 (0x134, Pascal), NVK 25.0.7)"
        ),
        "{text}"
    );
    assert!(section_rows(&text, "per state group").len() > 2, "{text}");
    // A GPU NVK does not drive, and one whose MME --mme contradicts, are refused.
    let bad = macroscope(&["replay", CAPTURED_SCENE, "-o", ampere, "--chipset", "gb202"]);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("ga102 (0x172)"), "{}", stderr(&bad));
    let both = [
        "replay",
        CAPTURED_SCENE,
        "-o",
        ampere,
        "--chipset",
        "gp104",
        "--mme",
        "turing",
    ];
    let bad = macroscope(&both);
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("GP104"), "{}", stderr(&bad));
}
