//! The browser drawn on ratatui's TestBackend over results replayed from a sample trace
//! on both MME generations, asserting on the text a user would read.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use driver::mme::Arch;
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use replayer::{replay, ReplayOptions};
use trace_format::generated::results::{DrawKind, DrawRow};
use trace_format::synthetic::{write_synthetic, SyntheticShape};
use trace_format::{ReadOptions, ResultsReader, TraceWriter, WriterOptions};
use tui::app::{App, Mode, Pane};

struct Fixture {
    _dir: tempfile::TempDir,
    turing: PathBuf,
    fermi: PathBuf,
}

/// A 4-frame, 4-view sample trace replayed on Turing (A) and Fermi (B).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("sample.mscope");
    let writer = TraceWriter::create(&trace, &WriterOptions::default()).unwrap();
    let shape = SyntheticShape {
        frames: 4,
        draws_per_frame: 120,
        view_mask: 0b1111,
    };
    write_synthetic(writer, &shape).unwrap();
    let mut results = Vec::new();
    for (arch, name) in [(Arch::Turing, "turing.msr"), (Arch::Fermi, "fermi.msr")] {
        let out = dir.path().join(name);
        let options = ReplayOptions {
            chipset: driver::chipset::Chipset::for_arch(arch),
            frames: None,
            repeat: 1,
            read: ReadOptions::default(),
            mme_budget: replayer::DEFAULT_MME_BUDGET,
            remember_macro_runs: true,
        };
        replay(&trace, &out, &options, &mut |_, _| {}).unwrap();
        results.push(out);
    }
    Fixture {
        turing: results[0].clone(),
        fermi: results[1].clone(),
        _dir: dir,
    }
}

fn rows(path: &Path) -> Vec<DrawRow> {
    ResultsReader::open(path)
        .unwrap()
        .flat_map(|c| c.unwrap().draws().copied().collect::<Vec<_>>())
        .collect()
}

fn open(results: &Path, baseline: Option<&Path>) -> App {
    let mut app = App::open(results, baseline).unwrap();
    // Let indexing finish so totals are final.
    app.a.index.wait();
    if let Some(b) = &mut app.b {
        b.index.wait();
    }
    app.tick();
    app
}

fn screen(app: &mut App) -> String {
    screen_of_size(app, 150, 50)
}

fn screen_of_size(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| app.draw(f)).unwrap();
    let buffer = terminal.backend().buffer();
    let mut text = String::new();
    for y in 0..buffer.area.height {
        for x in 0..buffer.area.width {
            text.push_str(buffer[(x, y)].symbol());
        }
        text.push('\n');
    }
    text
}

fn press(app: &mut App, keys: &str) {
    for c in keys.chars() {
        let code = match c {
            '\n' => KeyCode::Enter,
            '\t' => KeyCode::Tab,
            '\x08' => KeyCode::Backspace,
            c => KeyCode::Char(c),
        };
        app.key(KeyEvent::new(code, KeyModifiers::NONE));
    }
}

/// The cells of the draw table's data lines, split on whitespace, from the screen.
fn table_lines(text: &str) -> Vec<Vec<String>> {
    let lines: Vec<&str> = text.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.contains("seq") && l.contains("kind") && l.contains("host ns"))
        .expect("draw table header on screen");
    lines[header + 1..]
        .iter()
        .take_while(|l| !l.contains('└'))
        .map(|l| {
            // The table is the left pane: stop at its right border.
            let left = l.split('│').nth(1).unwrap_or("");
            left.split_whitespace().map(str::to_string).collect()
        })
        .filter(|cells: &Vec<String>| !cells.is_empty())
        .collect()
}

#[test]
fn first_screen_shows_frames_submits_and_the_first_draws() {
    let f = fixture();
    let rows = rows(&f.turing);
    let mut app = open(&f.turing, None);
    let text = screen(&mut app);
    assert!(
        text.contains("Frames · mme-instructions per frame"),
        "{text}"
    );
    assert!(text.contains("frame 0 of 4 · 120 rows"), "{text}");
    // The status bar names the GPU the model drove.
    assert!(text.contains("· TU102 ·"), "{text}");
    let frame0: u64 = rows
        .iter()
        .filter(|r| r.frame() == 0)
        .map(|r| u64::from(r.mme_instructions()))
        .sum();
    assert!(
        text.contains(&format!("mme-instructions {}", tui::format::count(frame0))),
        "{text}"
    );
    assert!(text.contains("Submits of frame 0 (1)"), "{text}");
    assert!(text.contains("Rows of frame 0 · 120 of 120"), "{text}");
    let table = table_lines(&text);
    assert!(table.len() > 10);
    for (cells, row) in table.iter().zip(&rows) {
        assert_eq!(cells[0], row.seq().to_string());
        assert_eq!(cells[4], "4", "views of #{}", row.seq());
        assert_eq!(cells[7], tui::format::count(row.mme_instructions().into()));
    }
    assert!(text.contains(&format!("Draw #{}", rows[0].seq())), "{text}");
    assert!(
        text.contains("p50") && text.contains("p99.9") && text.contains("max"),
        "{text}"
    );
    assert!(
        text.contains(&format!("{} rows", tui::format::count(rows.len() as u64))),
        "{text}"
    );
    // The share of the trace's commands the driver model executed, as `replay` said.
    assert!(text.contains("100.0% of vkCmd* modelled"), "{text}");
}

#[test]
fn moving_between_frames_and_draws_updates_the_panes() {
    let f = fixture();
    let rows = rows(&f.turing);
    let mut app = open(&f.turing, None);
    press(&mut app, "jj");
    assert!(screen(&mut app).contains(&format!("Draw #{}", rows[2].seq())));
    press(&mut app, "l");
    let text = screen(&mut app);
    let first_of_frame1 = rows.iter().find(|r| r.frame() == 1).unwrap();
    assert!(text.contains("Rows of frame 1"), "{text}");
    assert!(
        text.contains(&format!("Draw #{}", first_of_frame1.seq())),
        "{text}"
    );
    press(&mut app, "G");
    let last_of_frame1 = rows.iter().rfind(|r| r.frame() == 1).unwrap();
    assert!(screen(&mut app).contains(&format!("Draw #{}", last_of_frame1.seq())));
    press(&mut app, "\t");
    assert_eq!(app.focus, Pane::Detail);
}

#[test]
fn filter_keeps_only_matching_draws() {
    let f = fixture();
    let rows = rows(&f.turing);
    let mut app = open(&f.turing, None);
    press(&mut app, "/indexed mme>=256\n");
    let text = screen(&mut app);
    let expected = rows
        .iter()
        .filter(|r| {
            r.frame() == 0 && r.kind() == DrawKind::DrawIndexed
                || r.frame() == 0 && r.kind() == DrawKind::DrawIndexedIndirect
        })
        .filter(|r| r.mme_instructions() >= 256)
        .count();
    assert!(expected > 0 && expected < 120);
    assert!(
        text.contains(&format!("Rows of frame 0 · {expected} of 120")),
        "{text}"
    );
    assert!(text.contains("filter `indexed mme>=256`"), "{text}");
    for cells in table_lines(&text) {
        assert!(
            cells[2] == "vkCmdDrawIndexed" || cells[2] == "vkCmdDrawIndexedIndirect",
            "{cells:?}"
        );
    }
    // `/` opens the filter with its text, to edit: clear it and type a bad one.
    press(&mut app, "/");
    assert_eq!(app.editing.as_deref(), Some("indexed mme>=256"));
    press(&mut app, &"\x08".repeat(16));
    press(&mut app, "colour=2\n");
    let text = screen(&mut app);
    assert!(text.contains("`colour` is not a field"), "{text}");
    // The last good filter stays.
    assert!(
        text.contains(&format!("Rows of frame 0 · {expected} of 120")),
        "{text}"
    );
    press(&mut app, "/");
    press(&mut app, &"\x08".repeat(16));
    press(&mut app, "\n");
    assert!(screen(&mut app).contains("Rows of frame 0 · 120 of 120"));
}

#[test]
fn sorting_by_mme_puts_the_costliest_draw_first() {
    let f = fixture();
    let rows = rows(&f.turing);
    let mut app = open(&f.turing, None);
    // order → seq → kind → views → instances → mme
    press(&mut app, "sssss");
    let text = screen(&mut app);
    assert!(text.contains("sort mme ↓"), "{text}");
    let table = table_lines(&text);
    let max = rows
        .iter()
        .filter(|r| r.frame() == 0)
        .map(|r| r.mme_instructions())
        .max()
        .unwrap();
    assert_eq!(table[0][7], tui::format::count(max.into()));
    let values: Vec<u64> = table
        .iter()
        .map(|c| c[7].replace(',', "").parse().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] >= w[1]), "{values:?}");
    press(&mut app, "S");
    let table = table_lines(&screen(&mut app));
    let min = rows
        .iter()
        .filter(|r| r.frame() == 0)
        .map(|r| r.mme_instructions())
        .min()
        .unwrap();
    assert_eq!(table[0][7], tui::format::count(min.into()));
}

#[test]
fn c_finds_the_costliest_draw_of_the_costliest_frame() {
    let f = fixture();
    let rows = rows(&f.turing);
    let mut app = open(&f.turing, None);
    press(&mut app, "m"); // methods
    press(&mut app, "M"); // back to mme-instructions
    press(&mut app, "c");
    let mut by_frame = std::collections::BTreeMap::<u32, u64>::new();
    for r in &rows {
        *by_frame.entry(r.frame()).or_default() += u64::from(r.mme_instructions());
    }
    let (&frame, _) = by_frame
        .iter()
        .max_by_key(|(f, v)| (**v, std::cmp::Reverse(**f)))
        .unwrap();
    let costliest = rows
        .iter()
        .filter(|r| r.frame() == frame)
        .max_by_key(|r| r.mme_instructions())
        .unwrap();
    let text = screen(&mut app);
    assert_eq!(app.frame, frame);
    assert!(text.contains(&format!("Rows of frame {frame}")), "{text}");
    let (_, selected) = app.selected_row().unwrap();
    assert_eq!(selected.mme_instructions(), costliest.mme_instructions());
    assert!(
        text.contains(&format!("Draw #{}", selected.seq())),
        "{text}"
    );
}

#[test]
fn baseline_shows_b_and_the_difference() {
    let f = fixture();
    let a = rows(&f.turing);
    let b = rows(&f.fermi);
    let mut app = open(&f.turing, Some(&f.fermi));
    let text = screen(&mut app);
    // The detail pane compares the selected draw with B's.
    let (a0, b0) = (a[0].mme_instructions(), b[0].mme_instructions());
    assert_ne!(a0, b0, "the MME generations should differ");
    assert!(
        text.contains(&format!("B {}", tui::format::count(b0.into()))),
        "{text}"
    );
    press(&mut app, "b");
    assert_eq!(app.mode, Mode::B);
    let text = screen(&mut app);
    assert!(text.contains("B (baseline)"), "{text}");
    assert_eq!(table_lines(&text)[0][7], tui::format::count(b0.into()));
    press(&mut app, "b");
    assert_eq!(app.mode, Mode::Delta);
    let text = screen(&mut app);
    assert!(text.contains("A − B"), "{text}");
    let table = table_lines(&text);
    for (cells, (ra, rb)) in table.iter().zip(a.iter().zip(&b)) {
        let delta = i64::from(ra.mme_instructions()) - i64::from(rb.mme_instructions());
        let shown = cells.last().unwrap().replace(',', "");
        assert_eq!(shown.parse::<i64>().unwrap(), delta, "{cells:?}");
    }
    // A − B per frame in the caption.
    let sum = |rows: &[DrawRow]| -> i64 {
        rows.iter()
            .filter(|r| r.frame() == 0)
            .map(|r| i64::from(r.mme_instructions()))
            .sum()
    };
    let frame_delta = sum(&a) - sum(&b);
    let caption = if frame_delta < 0 {
        format!(
            "mme-instructions -{}",
            tui::format::count(frame_delta.unsigned_abs())
        )
    } else {
        format!(
            "mme-instructions {}",
            tui::format::count(frame_delta as u64)
        )
    };
    assert!(text.contains(&caption), "{caption}\n{text}");
    press(&mut app, "b");
    assert_eq!(app.mode, Mode::A);
}

#[test]
fn enter_without_a_tracer_says_why_there_is_no_method_stream() {
    // The CLI hands in a tracer that replays the trace (tested end to end in tmux).
    let f = fixture();
    let mut app = open(&f.turing, None);
    assert!(screen(&mut app).contains("Enter traces it through the driver model"));
    press(&mut app, "\n");
    assert_eq!(app.focus, Pane::Detail);
    assert!(screen(&mut app).contains("no driver model to trace with here"));
}

#[test]
fn help_opens_and_closes_and_q_quits() {
    let f = fixture();
    let mut app = open(&f.turing, None);
    press(&mut app, "?");
    let text = screen(&mut app);
    assert!(
        text.contains("Keys") && text.contains("costliest frame"),
        "{text}"
    );
    press(&mut app, "?");
    assert!(!screen(&mut app).contains("costliest frame, then"));
    press(&mut app, "q");
    assert!(app.quit);
    let mut app = open(&f.turing, None);
    app.key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.quit);
}

#[test]
fn a_small_terminal_gets_a_message_not_a_panic() {
    let f = fixture();
    let mut app = open(&f.turing, None);
    let text = screen_of_size(&mut app, 40, 10);
    assert!(text.contains("needs a terminal of at"), "{text}");
}

#[test]
fn a_truncated_results_file_shows_what_it_has_and_the_error() {
    let f = fixture();
    let bytes = std::fs::read(&f.turing).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.msr");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let mut app = open(&cut, None);
    let text = screen(&mut app);
    assert!(text.contains("Rows of frame 0"), "{text}");
    assert!(
        text.contains("cut.msr: chunk"),
        "the error names the file and chunk:\n{text}"
    );
    let not_results = dir.path().join("not.msr");
    std::fs::write(&not_results, b"hello").unwrap();
    let err = App::open(&not_results, None)
        .err()
        .expect("not a results file");
    assert!(err.is_bad_input());
}

#[test]
fn the_mouse_wheel_scrolls_the_pane_under_the_pointer() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let f = fixture();
    let mut app = open(&f.turing, None);
    screen(&mut app);
    let wheel = |kind, area: ratatui::layout::Rect| MouseEvent {
        kind,
        column: area.x + area.width / 2,
        row: area.y + area.height / 2,
        modifiers: KeyModifiers::NONE,
    };
    let draws = app.areas.draws;
    app.mouse(wheel(MouseEventKind::ScrollDown, draws));
    assert_eq!(app.selected, 3);
    app.mouse(wheel(MouseEventKind::ScrollUp, draws));
    assert_eq!(app.selected, 0);
    let frames = app.areas.frames;
    app.mouse(wheel(MouseEventKind::ScrollDown, frames));
    assert_eq!(app.frame, 1);
    assert!(screen(&mut app).contains("Rows of frame 1"));
    // Focus stays where the keyboard left it.
    assert_eq!(app.focus, Pane::Draws);
}

/// A results file of one frame whose draws draw `elements` vertices each, costing ten
/// MME instructions a vertex, as replayed from the trace with digest `hash`.
fn one_frame_results(path: &Path, hash: &str, elements: &[u32]) {
    use trace_format::generated::results::{RunInfoT, SubmitRow};
    use trace_format::ResultsWriter;
    let mut run = RunInfoT::default();
    run.trace_hash = Some(hash.to_string());
    run.repetitions = 1;
    let mut w = ResultsWriter::create(path, run, &WriterOptions::default()).unwrap();
    for (i, e) in elements.iter().enumerate() {
        let row = DrawRow::new(
            10 + i as u64,
            0,
            0,
            0,
            0,
            DrawKind::Draw,
            1,
            0,
            1,
            *e,
            1,
            10 * e,
            4,
            8,
            1,
            0,
            0,
            5,
            6,
            0,
            0,
        );
        w.push_draw(row).unwrap();
    }
    let n = elements.len() as u32;
    w.push_submit(SubmitRow::new(99, 0, 0, 0, n, n, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        .unwrap();
    w.finish(&[]).unwrap();
}

#[test]
fn a_baseline_from_another_trace_matches_draws_by_what_they_draw() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.msr"), dir.path().join("b.msr"));
    // A has one draw more than B, third in the frame.
    one_frame_results(&a, "crc32:0000aaaa:100", &[3, 4, 99, 5, 6]);
    one_frame_results(&b, "crc32:0000bbbb:90", &[3, 4, 5, 6]);
    let mut app = open(&a, Some(&b));
    assert!(
        screen(&mut app).contains("different traces: draws are matched by what they draw"),
        "{}",
        screen(&mut app)
    );
    press(&mut app, "bb");
    assert_eq!(app.mode, Mode::Delta);
    let text = screen(&mut app);
    let deltas: Vec<String> = table_lines(&text)
        .iter()
        .map(|cells| cells.last().cloned().unwrap_or_default())
        .collect();
    // Every other draw finds its counterpart with no change; the inserted one is added.
    assert_eq!(deltas, ["0", "0", "added", "0", "0"], "{text}");

    // The other way round, B's extra draw is counted in the title.
    let mut app = open(&b, Some(&a));
    press(&mut app, "bb");
    let text = screen(&mut app);
    assert!(text.contains("1 only in B"), "{text}");
}

#[test]
fn a_row_whose_call_failed_is_marked_and_its_detail_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("small.mscope");
    let writer = TraceWriter::create(&trace, &WriterOptions::default()).unwrap();
    let shape = SyntheticShape {
        frames: 1,
        draws_per_frame: 6,
        view_mask: 0b11,
    };
    write_synthetic(writer, &shape).unwrap();
    let out = dir.path().join("tight.msr");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(Arch::Turing),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        // Too few instructions for any draw macro to finish.
        mme_budget: 20,
        remember_macro_runs: true,
    };
    replay(&trace, &out, &options, &mut |_, _| {}).unwrap();
    let mut app = open(&out, None);
    // Wide enough that the reason fits on one line of the detail pane.
    let text = screen_of_size(&mut app, 400, 50);
    assert!(text.contains("!vkCmd"), "{text}");
    assert!(
        text.contains("failed: macro `") && text.contains("budget of 20 instructions"),
        "{text}"
    );
}

#[test]
fn t_shows_the_frames_passes_with_their_label_regions() {
    use trace_format::generated::results::{DrawPlace, RunInfoT, SubmitRow};
    use trace_format::results::RowState;
    use trace_format::ResultsWriter;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("placed.msr");
    let mut run = RunInfoT::default();
    run.repetitions = 1;
    let mut w = ResultsWriter::create(&path, run, &WriterOptions::default()).unwrap();
    w.name_pass(1, 0, "vkCmdBeginRenderPass \"gbuffer\" 64x64");
    w.name_pass(2, 0, "vkCmdBeginRendering 64x64");
    w.name_label(1, "frame/shadows");
    w.name_label(2, "frame/lights");
    // Three draws in the first pass (two shadows, one lights), one in the second
    // under no label: ten MME instructions a vertex.
    for (i, (pass, label, elements)) in [(1, 1, 3), (1, 1, 6), (1, 2, 9), (2, 0, 12)]
        .into_iter()
        .enumerate()
    {
        let row = DrawRow::new(
            10 + i as u64,
            0,
            0,
            0,
            0,
            DrawKind::Draw,
            1,
            0,
            1,
            elements,
            1,
            10 * elements,
            4,
            8,
            1,
            0,
            0,
            5,
            6,
            0,
            0,
        );
        w.push_placed_row(
            row,
            RowState::default(),
            0,
            None,
            0,
            DrawPlace::new(pass, label),
        )
        .unwrap();
    }
    w.push_submit(SubmitRow::new(99, 0, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        .unwrap();
    w.finish(&[]).unwrap();

    let mut app = open(&path, None);
    assert!(!screen(&mut app).contains("Passes and labels"));
    press(&mut app, "t");
    let text = screen(&mut app);
    assert!(text.contains("Passes and labels of frame 0"), "{text}");
    // The pane's lines, each cut at the pane's right border.
    let find = |name: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split('│').nth(1).unwrap_or(""))
            .find(|l| l.contains(name))
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .unwrap_or_else(|| panic!("{name} not in {text}"))
    };
    // A pass's line sums its regions; each region is beneath it.
    let gbuffer = find("\"gbuffer\"");
    assert!(
        gbuffer.ends_with(&["3".to_string(), "180".to_string()]),
        "{gbuffer:?}"
    );
    let shadows = find("frame/shadows");
    assert!(
        shadows.ends_with(&["2".to_string(), "90".to_string()]),
        "{shadows:?}"
    );
    let lights = find("frame/lights");
    assert!(
        lights.ends_with(&["1".to_string(), "90".to_string()]),
        "{lights:?}"
    );
    let rendering = find("vkCmdBeginRendering");
    assert!(
        rendering.ends_with(&["1".to_string(), "120".to_string()]),
        "{rendering:?}"
    );
    // The selected draw's panel says where it ran (on a screen wide enough for it).
    let wide = screen_of_size(&mut app, 240, 50);
    assert!(
        wide.contains("\"gbuffer\" 64x64 · label frame/shadows"),
        "{wide}"
    );
    press(&mut app, "t");
    assert!(screen(&mut app).contains("Submits of frame 0"));
}
