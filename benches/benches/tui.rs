//! `macroscope tui` on a results file of one million draw rows (100 frames of 10,000):
//! opening it and painting the first screen (target: under 300 ms), moving a page down
//! the draw table and repainting (scrolling without lag), and the background index
//! pass over the whole file. Painted on ratatui's TestBackend at 160×50.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use trace_format::synthetic::write_synthetic_results;
use tui::App;

const ROWS: u64 = 1_000_000;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("million.msr");
    write_synthetic_results(&path, ROWS, 10_000).unwrap();
    let mut terminal = Terminal::new(TestBackend::new(160, 50)).unwrap();

    let mut group = c.benchmark_group("tui_1m_draws");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("open_and_first_paint", |b| {
        b.iter(|| {
            let mut app = App::open(&path, None).unwrap();
            terminal.draw(|f| app.draw(f)).unwrap();
            black_box(&app);
        })
    });
    group.bench_function("index_whole_file", |b| {
        b.iter(|| {
            let mut app = App::open(&path, None).unwrap();
            app.a.index.wait();
            let rows = app.a.index.get().rows;
            assert_eq!(rows, ROWS);
            black_box(rows)
        })
    });

    let mut app = App::open(&path, None).unwrap();
    app.a.index.wait();
    app.tick();
    // Back and forth, so every step moves (the ends clamp), over rows from many chunks.
    let key = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let mut step = 0u64;
    group.bench_function("page_down_and_repaint", |b| {
        b.iter(|| {
            step += 1;
            let code = if (step / 100) % 2 == 0 {
                KeyCode::PageDown
            } else {
                KeyCode::PageUp
            };
            app.key(key(code));
            terminal.draw(|f| app.draw(f)).unwrap();
        })
    });
    group.bench_function("next_frame_and_repaint", |b| {
        b.iter(|| {
            step += 1;
            let code = if (step / 60) % 2 == 0 {
                KeyCode::Char('l')
            } else {
                KeyCode::Char('h')
            };
            app.key(key(code));
            terminal.draw(|f| app.draw(f)).unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
