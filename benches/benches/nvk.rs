//! API draws encoded and executed per second through NVK's command encoder and the GPU
//! model, for view masks 0, 0b11 and 0b1111, on both MME generations. Each iteration
//! records 1,000 vkCmdDraw calls (one instance each) and executes them.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::{CommandEncoder, Device, RenderingInfo};

const DRAWS: u32 = 1000;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("nvk_draws");
    group.throughput(Throughput::Elements(u64::from(DRAWS)));
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = Gpu::new(arch);
        gpu.execute(device.init_push().unwrap().words()).unwrap();
        for mask in [0u32, 0b11, 0b1111] {
            group.bench_function(format!("{}/mask_{mask:#b}", arch.name()), |b| {
                b.iter(|| {
                    let mut enc = CommandEncoder::new(&device);
                    enc.begin_rendering(&RenderingInfo::views(mask));
                    for i in 0..DRAWS {
                        enc.draw(3, 1, i, 0);
                    }
                    gpu.state.clear_records();
                    gpu.execute(enc.finish().words()).unwrap();
                    assert_eq!(
                        gpu.state.draws.len() as u32,
                        DRAWS * mask.count_ones().max(1)
                    );
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
