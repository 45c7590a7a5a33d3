//! `macroscope verify` against real NVK: the NVIDIA samples replayed on NVK 25.0.7 under
//! Mesa's no-op kernel (`scripts/nvk-oracle`) on a Turing and a pre-Turing chipset: the
//! graphics samples equal to NVK out of the box (no allow file) but for what the trace
//! cannot carry, the compute sample with its gaps named by
//! `samples/nvk-25.0.7.allow`; a model with one method dropped from one state group
//! fails, naming that method; a model that draws into another object's address fails
//! on the address's correspondence; a draw the model lacks stands alone and the rest
//! pair.
//!
//! Needs the oracle's root (`scripts/nvk-oracle --setup`, as root) and the tap library
//! (`cargo build -p nvk-tap`). Without them the tests say so and pass, unless
//! MACROSCOPE_REQUIRE_NVK is set (scripts/test sets it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use driver::chipset::Chipset;
use driver::mme::Arch;
use driver::nvk::state::StateGroup;
use driver::push::{self, HeaderKind, MethodHeader};
use replayer::verify::allow::{AllowList, Kind};
use replayer::verify::{self, tap};
use replayer::{ReplayOptions, Tape, TapeLabel};
use trace_format::ReadOptions;

const ALLOW: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/nvk-25.0.7.allow");

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/{name}-nvidia.mscope"))
}

/// Whether the oracle can run here; panics if it must and cannot.
fn oracle_ready() -> bool {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/nvk-oracle");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_macroscope"))
        .parent()
        .unwrap();
    match verify::oracle::ready(&script, bin_dir) {
        Ok(()) => true,
        Err(why) => {
            assert!(
                std::env::var_os("MACROSCOPE_REQUIRE_NVK").is_none(),
                "the NVK oracle tests must run here: {why}"
            );
            eprintln!("skipping the NVK oracle tests: {why}");
            false
        }
    }
}

fn macroscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(args)
        .output()
        .unwrap()
}

/// `draws: NVK n, model m` from a report.
fn draw_counts(report: &str) -> (u64, u64) {
    let line = report
        .lines()
        .find(|l| l.starts_with("draws:"))
        .unwrap_or_else(|| panic!("no draws line in {report}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    (numbers[0], numbers[1])
}

#[test]
fn every_nvidia_sample_matches_nvk_on_both_mme_generations_but_for_explained_differences() {
    if !oracle_ready() {
        return;
    }
    for name in ["storm", "multiview", "indirect", "tessellation", "compute"] {
        for chipset in ["0x162", "0x140"] {
            let trace = sample(name);
            let out = macroscope(&[
                "verify",
                trace.to_str().unwrap(),
                "--chipset",
                chipset,
                "--allow",
                ALLOW,
            ]);
            let report = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{name} {chipset}: {out:?}");
            assert!(
                report.contains("every difference explained"),
                "{name} {chipset}: {report}"
            );
            let (nvk, model) = draw_counts(&report);
            assert!(nvk > 0 && nvk == model, "{name} {chipset}: {report}");
            // NVK's own macros ran on the simulator without a failure.
            assert!(!report.contains("macro runs that failed"), "{report}");
        }
    }
    // Out of the box, with no allow file, every sample is NVK's but for what the
    // trace cannot carry: the compute sample's transfers on the copy engine and its
    // blit through vk_meta included.
    for name in ["storm", "multiview", "indirect", "tessellation", "compute"] {
        for chipset in ["0x162", "0x140"] {
            let trace = sample(name);
            let out = macroscope(&["verify", trace.to_str().unwrap(), "--chipset", chipset]);
            let report = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{name} {chipset}: {report}");
            assert!(
                report.contains("equal but for the trace 100.00%"),
                "{name} {chipset}: {report}"
            );
        }
    }
}

/// LibreOffice Calc drawn by Skia on Vulkan reads its colour target as an input
/// attachment while it draws to it, in a version-1 render pass that keeps the target in
/// GENERAL: Mesa's common render-pass code moves it into the feedback-loop layout and
/// back, and NVK waits and invalidates the texture cache at the pass's end. The model
/// once missed both in the draws that follow such a pass; out of the box the sample is
/// NVK's draw for draw on both MME generations.
#[test]
fn a_pass_reading_its_colour_target_as_input_is_nvks_draw_for_draw() {
    if oracle_ready() {
        assert_nvks_out_of_the_box("libreoffice-skia-lavapipe", 481);
    }
}

/// Asserts that sample `name` verifies out of the box (no allow file) as NVK's on
/// both MME generations, draw for draw, with `draws` draws on each side.
fn assert_nvks_out_of_the_box(name: &str, draws: u64) {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/{name}.mscope"));
    for chipset in ["0x162", "0x140"] {
        let out = macroscope(&["verify", trace.to_str().unwrap(), "--chipset", chipset]);
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name} {chipset}: {report}");
        let summary = report
            .lines()
            .find(|l| l.starts_with("summary:"))
            .unwrap_or_else(|| panic!("{name} {chipset}: no summary in {report}"));
        assert!(
            summary.contains("equal but for the trace 100.00%")
                && summary.ends_with("unexplained 0"),
            "{name} {chipset}: {summary}"
        );
        let (nvk, model) = draw_counts(&report);
        assert!(nvk == draws && model == nvk, "{name} {chipset}: {report}");
    }
}

/// The resolve scene: a version-2 render pass, four samples a pixel, whose colour,
/// depth and stencil resolve at its end (`VkSubpassDescriptionDepthStencilResolve`)
/// and whose depth and stencil are in layouts of their own. NVK resolves them through
/// vk_meta: depth in a pass of its own, stencil in another, a bit at a time through
/// eight draws. Out of the box the model is NVK's draw for draw on both MME
/// generations (the other generations: below).
#[test]
fn a_render_pass_resolving_depth_and_stencil_is_nvks_draw_for_draw() {
    // Two draws and ten resolve draws a frame (colour, depth, eight stencil bits).
    if oracle_ready() {
        assert_nvks_out_of_the_box("resolve-lavapipe", 36);
    }
}

/// The subpasses scene's sample: a pass of three subpasses chained through input
/// attachments, then a multiview pass whose second subpass adds view 1 to view 0. NVK
/// clears the new view in a rendering of its own as that subpass begins (Mesa's
/// `load_attachment`); a model that left it out was 90 % equal on both chipsets (the
/// second subpass's draws differed). On every generation too (below).
#[test]
fn a_multiview_subpass_adding_a_view_clears_it_alone_as_nvk_does() {
    // Ten draws a frame: six in the chained pass, four in the multiview pass.
    if oracle_ready() {
        assert_nvks_out_of_the_box("subpasses-lavapipe", 30);
    }
}

/// One GPU of each generation NVK 25.0.7 drives, beside the Turing and Volta ones
/// above: Kepler GK104, Maxwell GM107 and GM200, Pascal GP104, Ampere GA102, Ada AD102.
const OTHER_GENERATIONS: [&str; 6] = ["gk104", "gm107", "gm200", "gp104", "ga102", "ad102"];

#[test]
fn every_sample_is_nvks_draw_for_draw_on_a_gpu_of_every_generation() {
    if !oracle_ready() {
        return;
    }
    for chipset in OTHER_GENERATIONS {
        for name in [
            "storm-nvidia",
            "multiview-nvidia",
            "indirect-nvidia",
            "tessellation-nvidia",
            "compute-nvidia",
            "vkcube-lavapipe",
            "glxgears-zink-lavapipe",
            "resolve-lavapipe",
            "subpasses-lavapipe",
        ] {
            if chipset == "gk104" && name.starts_with("glxgears") {
                // NVK 25.0.7 cannot create Zink's pipelines on Kepler (its codegen
                // compiler fails them): there is nothing to compare with.
                continue;
            }
            let trace =
                Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/{name}.mscope"));
            let out = macroscope(&["verify", trace.to_str().unwrap(), "--chipset", chipset]);
            let report = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{name} on {chipset}: {report}");
            let summary = report
                .lines()
                .find(|l| l.starts_with("summary:"))
                .unwrap_or_else(|| panic!("{name} on {chipset}: no summary in {report}"));
            assert!(
                summary.contains("equal but for the trace 100.00%")
                    && summary.ends_with("unexplained 0"),
                "{name} on {chipset}: {summary}"
            );
            // The NVK that ran is the release the model follows, and the report says so.
            assert!(
                report.contains("NVK:             25.0.7") && !report.contains("note: NVK"),
                "{name} on {chipset}: {report}"
            );
            // The GPU the report names is the one asked for.
            assert!(
                summary.to_ascii_lowercase().contains(chipset),
                "{name} on {chipset}: {summary}"
            );
        }
    }
}

/// The macros whose binaries the model builds word for word as NVK 25.0.7 does, per
/// MME generation (chipset). The rest: the model's `copy_query_results` (25.0.7 has
/// none); before Turing also the count draws NVK leaves empty there.
const EQUAL_MACROS: [(&str, &[&str]); 2] = [
    (
        "0x162",
        &[
            "add_cs_invocations",
            "bind_cbuf_desc",
            "bind_ib",
            "bind_vb",
            "clear",
            "dispatch_indirect",
            "draw",
            "draw_indexed",
            "draw_indexed_indirect",
            "draw_indexed_indirect_count",
            "draw_indirect",
            "draw_indirect_count",
            "select_cb0",
            "set_anti_alias",
            "set_conservative_raster_state",
            "set_priv_reg",
            "set_shading_rate_control",
            "set_tess_params",
            "set_vb_enables",
            "set_vb_stride",
            "set_viewport_min_max_z",
            "set_write_mask",
            "set_z_clamp",
            "write_cs_invocations",
            "xfb_counter_load",
            "xfb_draw_indirect",
        ],
    ),
    (
        "0x140",
        &[
            "add_cs_invocations",
            "bind_cbuf_desc",
            "bind_ib",
            "bind_vb",
            "clear",
            "dispatch_indirect",
            "draw",
            "draw_indexed",
            "draw_indexed_indirect",
            "draw_indirect",
            "select_cb0",
            "set_conservative_raster_state",
            "set_anti_alias",
            "set_priv_reg",
            "set_shading_rate_control",
            "set_tess_params",
            "set_vb_enables",
            "set_vb_stride",
            "set_viewport_min_max_z",
            "set_write_mask",
            "set_z_clamp",
            "write_cs_invocations",
            "xfb_counter_load",
            "xfb_draw_indirect",
        ],
    ),
];

#[test]
fn the_models_macros_are_nvks_word_for_word_on_both_mme_generations() {
    if !oracle_ready() {
        return;
    }
    for (chipset, names) in EQUAL_MACROS {
        let out = macroscope(&[
            "verify",
            sample("storm").to_str().unwrap(),
            "--chipset",
            chipset,
            "--allow",
            ALLOW,
        ]);
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{chipset}: {out:?}");
        let macros: Vec<&str> = report
            .lines()
            .skip_while(|l| !l.starts_with("macros ("))
            .take_while(|l| !l.is_empty())
            .collect();
        for name in names {
            let line = macros
                .iter()
                .find(|l| l.split_whitespace().next() == Some(name))
                .unwrap_or_else(|| panic!("{chipset}: no macro {name} in {report}"));
            assert!(line.ends_with("equal"), "{chipset}: {line}");
        }
        // With NVK's binaries the model's draws cost what NVK's real macros cost.
        let mme = report
            .lines()
            .find(|l| l.starts_with("MME instructions:"))
            .unwrap();
        let numbers: Vec<u64> = mme
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let (nvk, model) = (numbers[0], numbers[1]);
        assert!(nvk.abs_diff(model) * 1000 <= nvk, "{chipset}: {mme}");
    }
}

/// `tape` with the first method of the first run of `group`'s words left out (its run
/// pushed again one method a header), as a model that forgot that method would push.
fn without_first_method_of(tape: &Tape, group: StateGroup) -> (Tape, push::MethodWrite) {
    let mut out = Tape::default();
    let mut dropped = None;
    let mut start = 0;
    for &(end, label) in &tape.spans {
        let words = &tape.words[start..end];
        start = end;
        if dropped.is_none() && label == TapeLabel::Group(group) {
            let mut methods = push::parse(words).map(Result::unwrap);
            dropped = methods.next();
            for m in methods {
                out.words
                    .push(MethodHeader::new(HeaderKind::Incrementing, m.subc, m.mthd, 1).0);
                out.words.push(m.data);
            }
        } else {
            out.words.extend_from_slice(words);
        }
        out.spans.push((out.words.len(), label));
    }
    (out, dropped.expect("the trace flushes that group"))
}

#[test]
fn a_model_that_drops_one_method_of_one_state_group_fails_naming_it() {
    if !oracle_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (tap, tape) = tap_and_tape(dir.path(), "storm");
    let allow = AllowList::read(Path::new(ALLOW)).unwrap();
    // The model as it is: every difference explained.
    let whole = verify::compare(&tap, &tape, Chipset::for_arch(Arch::Turing), &allow, &[]).unwrap();
    assert_eq!(whole.unexplained(), 0);
    // The same model without the viewport group's first method.
    let (broken, dropped) = without_first_method_of(&tape, StateGroup::Viewport);
    let v = verify::compare(&tap, &broken, Chipset::for_arch(Arch::Turing), &allow, &[]).unwrap();
    assert!(v.unexplained() > 0);
    let label = verify::label(
        verify::segment::Method {
            subc: dropped.subc,
            mthd: dropped.mthd,
            data: dropped.data,
        },
        verify::segment::Field::Plain,
        None,
    );
    let named = v
        .differences
        .iter()
        .find(|d| d.reason.is_none())
        .expect("an unexplained difference");
    assert_eq!(
        (named.kind, named.method.as_str()),
        (Kind::NvkOnly, label.as_str())
    );
    // It is in the first draw's viewport state, NVK's value beside it.
    assert_eq!(named.first.0, 0);
    assert_eq!(named.first.2, Some(dropped.data));
}

/// `tape` with its words rewritten by `rewrite(index, method, data)` for every method
/// (`index` counts them through the tape), each method pushed a header.
fn rewritten(tape: &Tape, mut rewrite: impl FnMut(usize, u16, u32) -> u32) -> Tape {
    let mut out = Tape::default();
    let mut start = 0;
    let mut index = 0;
    for &(end, label) in &tape.spans {
        for m in push::parse(&tape.words[start..end]).map(Result::unwrap) {
            let data = rewrite(index, m.mthd, m.data);
            index += 1;
            out.words
                .push(MethodHeader::new(HeaderKind::Incrementing, m.subc, m.mthd, 1).0);
            out.words.push(data);
        }
        start = end;
        out.spans.push((out.words.len(), label));
    }
    out
}

fn tap_and_tape(dir: &Path, name: &str) -> (tap::Tap, Tape) {
    let tap_file = dir.join(format!("{name}.tap"));
    let trace = sample(name);
    let out = macroscope(&[
        "verify",
        trace.to_str().unwrap(),
        "--keep-tap",
        tap_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(Arch::Turing),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    (
        tap::read_tap(&tap_file).unwrap(),
        verify::model_tape(&trace, &options).unwrap(),
    )
}

#[test]
fn a_model_drawing_into_another_objects_address_fails_on_its_correspondence() {
    if !oracle_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (tap, tape) = tap_and_tape(dir.path(), "storm");
    let none = AllowList::default();
    assert_eq!(
        verify::compare(&tap, &tape, Chipset::for_arch(Arch::Turing), &none, &[])
            .unwrap()
            .unexplained(),
        0
    );
    // The storm's draws bind one colour target (A then B) once per render pass. The
    // second time, the model binds an address 1 MiB on, as if it drew into another
    // image; both sides still push an address, so only the correspondence tells.
    let color_target_b = driver::class::SET_COLOR_TARGET_A + 4;
    let mut seen = 0;
    let broken = rewritten(&tape, |_, mthd, data| {
        if mthd != color_target_b {
            return data;
        }
        seen += 1;
        if seen == 2 {
            data.wrapping_add(0x10_0000)
        } else {
            data
        }
    });
    assert!(seen >= 3, "the storm binds its colour target {seen} times");
    let v = verify::compare(&tap, &broken, Chipset::for_arch(Arch::Turing), &none, &[]).unwrap();
    assert!(v.unexplained() > 0);
    assert!(v.address_conflicts.0 > 0);
    assert_eq!(v.address_conflicts.1[0].family, "colour target");
    assert!(v
        .differences
        .iter()
        .any(|d| d.reason.is_none() && d.method.starts_with("SET_COLOR_TARGET_B(j)")));
}

#[test]
fn a_draw_the_model_lacks_stands_alone_and_the_rest_pair() {
    if !oracle_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The multiview scene's draws differ from their neighbours (a draw alike to its
    // neighbours but for the objects it reads is told apart by its addresses alone,
    // which alignment leaves out).
    let (tap, tape) = tap_and_tape(dir.path(), "multiview");
    // The model without the 5th draw's own call (its row's words).
    let mut out = Tape::default();
    let (mut start, mut draws) = (0, 0);
    for &(end, label) in &tape.spans {
        let is_draw = matches!(label, TapeLabel::Row { kind, .. }
            if trace_format::names::is_draw_kind(kind));
        draws += usize::from(is_draw);
        if !(is_draw && draws == 5) {
            out.words.extend_from_slice(&tape.words[start..end]);
            out.spans.push((out.words.len(), label));
        }
        start = end;
    }
    let v = verify::compare(
        &tap,
        &out,
        Chipset::for_arch(Arch::Turing),
        &AllowList::default(),
        &[],
    )
    .unwrap();
    assert_eq!(v.draw_counts.0, v.draw_counts.1 + 1);
    assert_eq!(v.unpaired_draws(), (1, 0), "one of NVK's draws alone");
    assert_eq!(v.paired_draws(), v.draw_counts.1);
    // Paired by position, every draw from the 5th on would differ (13 of 17); lined
    // up, only the draws beside the gap (one takes the lacking draw's state) and one
    // more are not NVK's.
    assert!(
        v.faithful_draws() + 4 >= v.paired_draws(),
        "{} of {} paired draws equal",
        v.faithful_draws(),
        v.paired_draws()
    );
}

#[test]
fn a_trace_that_makes_no_device_is_refused_saying_so() {
    if !oracle_ready() {
        return;
    }
    // What a capture leaves when the program dies before making its device: the
    // container's header and nothing else.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.mscope");
    trace_format::TraceWriter::create(&empty, &trace_format::WriterOptions::default())
        .unwrap()
        .finish()
        .unwrap();
    let out = macroscope(&["verify", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the trace makes no Vulkan device, so there is nothing to compare"),
        "{stderr}"
    );
    assert!(!stderr.contains("No such file"), "{stderr}");
}

/// A trace kept anywhere is verified from any working directory: the oracle's root
/// saw only the working directory, the repository and /tmp, so a trace in another
/// folder was "No such file or directory" there, and a working directory of `/` hid
/// the root's own system. Here a sample is copied to a folder of none of those (with a
/// space in its name) and verified from `/`.
#[test]
fn a_trace_outside_the_working_directory_and_tmp_is_verified_from_anywhere() {
    if !oracle_ready() {
        return;
    }
    // /var/tmp: neither /tmp nor the repository (a clone may lie in /tmp), nor `/`.
    let parent = tempfile::tempdir_in("/var/tmp").unwrap();
    let folder = parent.path().join("kept traces");
    std::fs::create_dir(&folder).unwrap();
    let trace = folder.join("multiview.mscope");
    std::fs::copy(sample("multiview"), &trace).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .current_dir("/")
        .args(["verify", trace.to_str().unwrap(), "--chipset", "0x162"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = report.lines().find(|l| l.starts_with("summary:"));
    assert!(
        summary.is_some_and(|s| s.contains("equal but for the trace 100.00%")),
        "{report}"
    );
}
