//! The trace's order when threads record at once: each command buffer's commands stay
//! in the order they were recorded, also when a command buffer changes threads in the
//! middle of its recording, and the numbers count up without gaps.
//!
//! The recorder is one per process: this file holds one test.

use std::sync::mpsc;

use macroscope_capture::recorder::{self, Scope};
use trace_format::direct::DirectField;
use trace_format::generated::trace::Call;
use trace_format::TraceReader;

/// A `vkCmdDraw` into `cb` whose vertex count says where it was recorded.
fn draw(cb: u64, step: u32) {
    let fields = [
        DirectField::U64(cb),
        DirectField::U32(step),
        DirectField::U32(1),
        DirectField::U32(0),
        DirectField::U32(0),
    ];
    recorder::record_command_direct(cb, Call::CmdDraw, || fields);
}

const HANDED: u64 = 0x10;
const PHASE: u32 = 3_000;

#[test]
fn command_buffers_keep_their_order_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("order.mscope");
    std::env::set_var("MACROSCOPE_CAPTURE_FILE", &path);
    std::env::set_var("MACROSCOPE_LOG", "error");
    recorder::start();
    assert!(recorder::recording());

    // Thread A records the first part of one command buffer and stays alive with those
    // records in its block; thread B records the second part and ends (its block goes
    // over first); A records the third. Nothing numbered happens between the parts, so
    // only the hand-over between threads orders them. Beside them, two threads record
    // their own command buffers, and a third makes numbered calls after that.
    let (parted, wait_for_a) = mpsc::channel();
    let (go_on, a_waits) = mpsc::channel::<()>();
    let a = std::thread::spawn(move || {
        (0..PHASE).for_each(|i| draw(HANDED, i));
        parted.send(()).unwrap();
        a_waits.recv().unwrap();
        (2 * PHASE..3 * PHASE).for_each(|i| draw(HANDED, i));
    });
    let others: Vec<_> = [0x20u64, 0x30]
        .into_iter()
        .map(|cb| {
            std::thread::spawn(move || {
                (0..3 * PHASE).for_each(|i| draw(cb, i));
            })
        })
        .collect();
    wait_for_a.recv().unwrap();
    std::thread::spawn(|| (PHASE..2 * PHASE).for_each(|i| draw(HANDED, i)))
        .join()
        .unwrap();
    go_on.send(()).unwrap();
    a.join().unwrap();
    others.into_iter().for_each(|t| t.join().unwrap());
    std::thread::spawn(|| {
        for i in 0..100u64 {
            draw(0x40, i as u32);
            recorder::record_direct(Scope::Setup, 0, Call::FrameBoundary, &[DirectField::U64(i)]);
        }
    })
    .join()
    .unwrap();
    recorder::finish();

    let mut seqs = Vec::new();
    let mut steps: std::collections::BTreeMap<u64, Vec<u32>> = Default::default();
    for chunk in TraceReader::open(&path).unwrap() {
        for record in chunk.unwrap().records() {
            seqs.push(record.envelope().seq());
            if let Some(d) = record.call_as_cmd_draw() {
                steps
                    .entry(d.command_buffer())
                    .or_default()
                    .push(d.vertex_count());
            }
        }
    }
    assert!(
        seqs.iter().enumerate().all(|(i, s)| *s == i as u64),
        "gapless numbers"
    );
    assert_eq!(steps.len(), 4);
    for (cb, steps) in &steps {
        let recorded = if *cb == 0x40 { 100 } else { 3 * PHASE };
        assert_eq!(steps.len() as u32, recorded, "command buffer {cb:#x}");
        let out_of_order = steps.windows(2).position(|w| w[0] >= w[1]);
        assert_eq!(out_of_order, None, "command buffer {cb:#x} out of order");
    }
}
