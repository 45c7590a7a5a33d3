//! The capture layer's own cost per recorded call, apart from any driver: laying a
//! `vkCmdDraw` out straight into the calling thread's block in its command buffer's
//! order (`direct`, the path hot commands take), the same as a numbered call
//! (`direct_numbered`: one atomic increment of the shared counter more), against
//! encoding it with a flatbuffers builder (`builder`) and building it through the
//! object API (`object_api`, the path the other typed hooks take), and the direct path
//! from four threads at once, each into its own command buffer (their calls per second
//! together: no cache line is written by more than one of them on the hot path). The trace is written to a temporary
//! file as in a real capture. `direct_thread_cpu` counts the calling thread's CPU time
//! alone: what a program pays where the merger and the compressors have cores of
//! their own.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use macroscope_capture::recorder::{self, Scope};
use trace_format::direct::DirectField;
use trace_format::generated::trace::{Call, CallT, CmdDraw, CmdDrawArgs, CmdDrawT};

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    // The recorder reads its settings from the environment once, as the layer does.
    std::env::set_var("MACROSCOPE_CAPTURE_FILE", dir.path().join("bench.mscope"));
    std::env::set_var("MACROSCOPE_LOG", "off");
    recorder::start();
    assert!(recorder::recording());

    let mut group = c.benchmark_group("capture_record_draw");
    group.throughput(Throughput::Elements(1));
    let mut n = 0u32;
    group.bench_function("direct", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            recorder::record_command_direct(0x55aa, Call::CmdDraw, || draw(0x55aa, black_box(n)));
        })
    });
    group.bench_function("direct_numbered", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            recorder::record_direct(
                Scope::Command,
                0,
                Call::CmdDraw,
                &draw(0x55aa, black_box(n)),
            );
        })
    });
    group.bench_function("builder", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            recorder::record_with(Scope::Command, 0, |fbb| {
                let args = CmdDrawArgs {
                    command_buffer: 0x55aa,
                    vertex_count: black_box(n),
                    instance_count: 1,
                    first_vertex: 0,
                    first_instance: 0,
                };
                (Call::CmdDraw, CmdDraw::create(fbb, &args).as_union_value())
            })
        })
    });
    group.bench_function("object_api", |b| {
        b.iter(|| {
            n = n.wrapping_add(1);
            recorder::record(Scope::Command, 0, || {
                let mut draw = CmdDrawT::default();
                draw.command_buffer = 0x55aa;
                draw.vertex_count = black_box(n);
                draw.instance_count = 1;
                Some(CallT::CmdDraw(Box::new(draw)))
            })
        })
    });
    // The calling thread's own CPU time (what the program pays on a machine with cores
    // to spare for the merger and the compressors; on a small one they share its core).
    group.bench_function("direct_thread_cpu", |b| {
        b.iter_custom(|iters| {
            let start = thread_cpu_time();
            for i in 0..iters {
                let fields = draw(0x55aa, black_box(i as u32));
                recorder::record_command_direct(0x55aa, Call::CmdDraw, || fields);
            }
            thread_cpu_time() - start
        })
    });
    group.bench_function("direct_four_threads", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            std::thread::scope(|s| {
                for t in 0..4u64 {
                    s.spawn(move || {
                        for i in (t..iters).step_by(4) {
                            let cb = 0x55aa + t;
                            let fields = draw(cb, black_box(i as u32));
                            recorder::record_command_direct(cb, Call::CmdDraw, || fields);
                        }
                    });
                }
            });
            start.elapsed()
        })
    });
    group.finish();
    recorder::finish();
}

/// The calling thread's CPU time so far.
fn thread_cpu_time() -> std::time::Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// A `vkCmdDraw`'s fields, in schema order.
fn draw(command_buffer: u64, vertex_count: u32) -> [DirectField<'static>; 5] {
    [
        DirectField::U64(command_buffer),
        DirectField::U32(vertex_count),
        DirectField::U32(1),
        DirectField::U32(0),
        DirectField::U32(0),
    ]
}

criterion_group!(benches, bench);
criterion_main!(benches);
