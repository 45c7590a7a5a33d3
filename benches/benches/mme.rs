//! Simulated MME instructions per second on each instruction set, on a macro shaped
//! like NVK's draw macro: parameters loaded (begin and draw index spilled to shadow
//! scratch), draw parameters written to the root table, then the 32-bit view-mask loop
//! running an instance loop per set view. Run with view mask 0b1111 and 8 instances.
//! Target: at least 100 million simulated instructions per second per core on Turing.

use std::hint::black_box;

use benches::mme_macros::{draw_macro, BenchMachine};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use driver::mme::{fermi, tu104, Arch, DEFAULT_BUDGET};

fn bench(c: &mut Criterion) {
    let turing = tu104::Sim::new("draw", &draw_macro(Arch::Turing)).unwrap();
    let fermi = fermi::Sim::new("draw", &draw_macro(Arch::Fermi)).unwrap();
    let turing_count = turing
        .run(&mut BenchMachine::new(), DEFAULT_BUDGET)
        .unwrap()
        .instructions;
    let fermi_count = fermi
        .run(&mut BenchMachine::new(), DEFAULT_BUDGET)
        .unwrap()
        .instructions;
    let methods = {
        let mut m = BenchMachine::new();
        turing.run(&mut m, DEFAULT_BUDGET).unwrap();
        m.methods
    };
    println!(
        "draw-shaped macro, view mask 0b1111, 8 instances: {turing_count} instructions on Turing, {fermi_count} on Fermi, {methods} method writes"
    );

    let mut group = c.benchmark_group("mme_draw_macro");
    group.throughput(Throughput::Elements(turing_count));
    let mut machine = BenchMachine::new();
    group.bench_function("turing", |b| {
        b.iter(|| {
            machine.next = 0;
            black_box(turing.run(&mut machine, DEFAULT_BUDGET).unwrap())
        })
    });
    group.throughput(Throughput::Elements(fermi_count));
    group.bench_function("fermi", |b| {
        b.iter(|| {
            machine.next = 0;
            black_box(fermi.run(&mut machine, DEFAULT_BUDGET).unwrap())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
