//! Queries through the encoder and the GPU model: occlusion, timestamp and pipeline
//! statistics, with and without multiview.

use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::{CommandEncoder, Device, QueryPool, QueryType};

const POOL_ADDR: u64 = 0x40_0000;

fn setup(arch: Arch) -> (Device, Gpu) {
    let device = Device::for_arch(arch);
    let mut gpu = Gpu::new(arch);
    gpu.execute(device.init_push().unwrap().words()).unwrap();
    (device, gpu)
}

/// Addresses a query slot owns: its availability word and its reports.
fn owned(pool: &QueryPool, q: u32) -> Vec<std::ops::Range<u64>> {
    let a = pool.available_addr(q);
    let r = pool.report_addr(q, 0);
    vec![a..a + 4, r..r + 16 * u64::from(pool.reports_per_query())]
}

fn run(arch: Arch, kind: QueryType, mask: u32, q: u32) -> (Gpu, QueryPool, driver::nvk::Recorded) {
    let (device, mut gpu) = setup(arch);
    let pool = QueryPool {
        addr: POOL_ADDR,
        kind,
        count: 8,
    };
    let mut enc = CommandEncoder::new(&device);
    enc.reset_query_pool(&pool, 0, 8);
    let reset_writes = 8;
    enc.begin_rendering(mask);
    let recorded = if kind == QueryType::Timestamp {
        enc.draw(6, 1, 0, 0);
        enc.write_timestamp(&pool, q)
    } else {
        enc.begin_query(&pool, q);
        enc.draw(6, 1, 0, 0);
        enc.end_query(&pool, q)
    };
    enc.end_rendering();
    gpu.execute(enc.finish().words()).unwrap();
    // Nothing lands outside the slots the query owns, past the reset.
    let n = mask.count_ones().max(1);
    let allowed: Vec<_> = (q..q + n).flat_map(|s| owned(&pool, s)).collect();
    for w in &gpu.state.reports[reset_writes..] {
        assert!(
            allowed.iter().any(|r| r.contains(&w.addr)),
            "{arch:?} {kind:?}: write at {:#x} outside slots {q}..{}",
            w.addr,
            q + n
        );
    }
    (gpu, pool, recorded)
}

#[test]
fn occlusion_under_multiview_puts_the_result_first_and_zeros_after() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let (gpu, pool, recorded) = run(arch, QueryType::Occlusion, 0b1111, 2);
        let mem = &gpu.state.memory;
        // Four views of 6 vertices, counted by the model's pixel counter.
        assert_eq!(pool.results(mem, 2), Some(vec![24]), "{arch:?}");
        for slot in 3..6 {
            assert_eq!(
                pool.results(mem, slot),
                Some(vec![0]),
                "{arch:?} slot {slot}"
            );
        }
        for slot in [0, 1, 6, 7] {
            assert_eq!(
                pool.results(mem, slot),
                None,
                "{arch:?} slot {slot} is untouched"
            );
        }
        assert_eq!((recorded.queries, recorded.zero_queries), (1, 3));
    }
}

#[test]
fn timestamps_under_multiview() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let (gpu, pool, recorded) = run(arch, QueryType::Timestamp, 0b0101_0000, 4);
        let mem = &gpu.state.memory;
        let first = pool.results(mem, 4).unwrap()[0];
        assert!(first > 0, "{arch:?}");
        assert_eq!(pool.results(mem, 5), Some(vec![0]));
        assert_eq!(pool.results(mem, 6), None);
        assert_eq!(recorded.zero_queries, 1);
    }
}

#[test]
fn pipeline_statistics_under_multiview() {
    for arch in [Arch::Turing, Arch::Fermi] {
        // Vertex and fragment shader invocations.
        let flags = (1 << 2) | (1 << 7);
        let (gpu, pool, _) = run(arch, QueryType::PipelineStatistics(flags), 0b101, 0);
        let mem = &gpu.state.memory;
        // The model counts hardware draws: two views, two draws, per statistic.
        assert_eq!(pool.results(mem, 0), Some(vec![2, 2]), "{arch:?}");
        assert_eq!(pool.results(mem, 1), Some(vec![0, 0]));
        assert_eq!(pool.results(mem, 2), None);
    }
}

#[test]
fn without_multiview_a_query_takes_one_slot() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let (gpu, pool, recorded) = run(arch, QueryType::Occlusion, 0, 0);
        assert_eq!(pool.results(&gpu.state.memory, 0), Some(vec![6]));
        assert_eq!(pool.results(&gpu.state.memory, 1), None);
        assert_eq!(recorded.zero_queries, 0);
    }
}

#[test]
fn reset_makes_queries_unavailable_again() {
    let (device, mut gpu) = setup(Arch::Turing);
    let pool = QueryPool {
        addr: POOL_ADDR,
        kind: QueryType::Timestamp,
        count: 4,
    };
    let mut enc = CommandEncoder::new(&device);
    enc.write_timestamp(&pool, 1);
    gpu.execute(enc.finish().words()).unwrap();
    assert!(pool.results(&gpu.state.memory, 1).is_some());
    let mut enc = CommandEncoder::new(&device);
    enc.reset_query_pool(&pool, 0, 4);
    gpu.execute(enc.finish().words()).unwrap();
    assert!(pool.results(&gpu.state.memory, 1).is_none());
}
