//! Writes a results file of N synthetic draw rows, for `scripts/bench-report`.
//! Usage: make_results N OUT.msr

use trace_format::generated::results::{DrawKind, DrawRow, RunInfoT};
use trace_format::{ResultsWriter, WriterOptions};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("usage: make_results N OUT.msr");
    let out = args.next().expect("usage: make_results N OUT.msr");
    let mut w = ResultsWriter::create(out.as_ref(), RunInfoT::default(), &WriterOptions::default())
        .expect("create");
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for seq in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let views = (x % 5) as u8;
        let kind = DrawKind((x >> 8) as u8 % 7);
        let row = DrawRow::new(
            seq,
            x >> 60,
            (seq / 10_000) as u32,
            (seq / 1000) as u32,
            0,
            kind,
            views,
            (1u32 << views) - 1,
            1 + (x >> 20) as u32 % 4,
            3 + (x >> 24) as u32 % 3000,
            1,
            60 + (x >> 32) as u32 % 400,
            20 + (x >> 40) as u32 % 50,
            7,
            u32::from(views.max(1)),
            0,
            0,
            100 + (x >> 44) % 900,
            2000 + (x >> 48) % 8000,
            (x >> 52) % 3000,
            0,
        );
        w.push_draw(row).expect("row");
    }
    w.finish(&[]).expect("finish");
}
