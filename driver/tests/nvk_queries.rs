//! Queries through the encoder and the GPU model: occlusion, timestamp and pipeline
//! statistics, with and without multiview.

use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::{CommandEncoder, Device, QueryPool, QueryType, RenderingInfo};

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
    enc.begin_rendering(&RenderingInfo::views(mask));
    let recorded = if kind == QueryType::Timestamp {
        enc.draw(6, 1, 0, 0);
        enc.write_timestamp(&pool, q, 0x2000)
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
    enc.write_timestamp(&pool, 1, 0x2000);
    gpu.execute(enc.finish().words()).unwrap();
    assert!(pool.results(&gpu.state.memory, 1).is_some());
    let mut enc = CommandEncoder::new(&device);
    enc.reset_query_pool(&pool, 0, 4);
    gpu.execute(enc.finish().words()).unwrap();
    assert!(pool.results(&gpu.state.memory, 1).is_none());
}

const DST: u64 = 0x50_0000;

#[test]
fn copy_results_writes_what_a_reader_of_the_pool_sees() {
    use driver::nvk::copy_queries::{RESULT_64_BIT, RESULT_PARTIAL, RESULT_WITH_AVAILABILITY};
    let (device, mut gpu) = setup(Arch::Turing);
    let pool = QueryPool {
        addr: POOL_ADDR,
        kind: QueryType::Occlusion,
        count: 8,
    };
    let mut enc = CommandEncoder::new(&device);
    enc.reset_query_pool(&pool, 0, 8);
    enc.begin_rendering(&RenderingInfo::views(0b1111));
    enc.begin_query(&pool, 2);
    enc.draw(6, 1, 0, 0);
    enc.end_query(&pool, 2);
    enc.end_rendering();
    // Queries 1..7, 64-bit results with availability, 16 bytes apart.
    let flags = RESULT_64_BIT | RESULT_WITH_AVAILABILITY;
    let recorded = enc
        .copy_query_pool_results_mme(&pool, 1, 6, DST, 16, flags)
        .expect("Turing copies");
    assert!(recorded.dwords > 0);
    gpu.execute(enc.finish().words()).unwrap();
    let mem = &gpu.state.memory;
    let row = |i: u64| (mem.read_u64(DST + 16 * i), mem.read_u64(DST + 16 * i + 8));
    // Query 1: unavailable, no PARTIAL: the result is not written, availability 0 is.
    assert_eq!(row(0), (0, 0));
    assert_eq!(row(1), (24, 1), "the multiview query's result");
    for i in 2..5 {
        assert_eq!(row(i), (0, 1), "the other views' queries");
    }
    assert_eq!(row(5), (0, 0), "query 6: unavailable");

    // 32-bit results with PARTIAL: written even when unavailable.
    let mut enc = CommandEncoder::new(&device);
    let flags = RESULT_PARTIAL | RESULT_WITH_AVAILABILITY;
    enc.copy_query_pool_results_mme(&pool, 2, 1, DST + 0x1000, 8, flags)
        .unwrap();
    gpu.execute(enc.finish().words()).unwrap();
    let mem = &gpu.state.memory;
    assert_eq!(
        (mem.read_u32(DST + 0x1000), mem.read_u32(DST + 0x1004)),
        (24, 1)
    );
}

#[test]
fn copy_results_of_timestamps() {
    let (device, mut gpu) = setup(Arch::Turing);
    let pool = QueryPool {
        addr: POOL_ADDR,
        kind: QueryType::Timestamp,
        count: 2,
    };
    let mut enc = CommandEncoder::new(&device);
    enc.write_timestamp(&pool, 0, 0x2000);
    enc.copy_query_pool_results_mme(
        &pool,
        0,
        1,
        DST,
        8,
        driver::nvk::copy_queries::RESULT_64_BIT,
    )
    .unwrap();
    gpu.execute(enc.finish().words()).unwrap();
    let want = pool.results(&gpu.state.memory, 0).unwrap()[0];
    assert!(want > 0);
    assert_eq!(gpu.state.memory.read_u64(DST), want);
}

#[test]
fn copy_results_dispatch_nvks_copy_shader_on_both_generations() {
    use driver::class;
    use driver::nvk::copy_queries::RESULT_WAIT;
    use driver::push::SUBC_COMPUTE;
    for arch in [Arch::Turing, Arch::Fermi] {
        let (device, mut gpu) = setup(arch);
        let pool = QueryPool {
            addr: POOL_ADDR,
            kind: QueryType::Occlusion,
            count: 40,
        };
        let mut enc = CommandEncoder::new(&device);
        // The MME path reads memory: Turing only.
        assert_eq!(
            enc.copy_query_pool_results_mme(&pool, 0, 1, DST, 8, 0)
                .is_some(),
            arch == Arch::Turing
        );
        let mut enc = CommandEncoder::new(&device);
        let plain = enc.copy_query_pool_results(&pool, 0, 33, 0);
        // Override on, SEND_PCAS_A, SEND_SIGNALING_PCAS_B, override off.
        assert_eq!(plain.dwords, 5, "{arch:?}");
        // With WAIT: a host semaphore acquire (header and four words) per query first.
        let waiting = enc.copy_query_pool_results(&pool, 0, 3, RESULT_WAIT);
        assert_eq!(waiting.dwords, 3 * 5 + 5, "{arch:?}");
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        let launches = gpu
            .state
            .method_log
            .take()
            .unwrap()
            .iter()
            .filter(|m| m.subc == SUBC_COMPUTE && m.mthd == class::SEND_PCAS_A)
            .count();
        assert_eq!(launches, 2, "{arch:?}");
    }
}

/// Every report-semaphore D word `enc`'s commands push on the 3D class, in order.
fn report_words(gpu: &mut Gpu, enc: CommandEncoder<'_>) -> Vec<u32> {
    use driver::class;
    gpu.state.method_log = Some(Vec::new());
    gpu.execute(enc.finish().words()).unwrap();
    gpu.state
        .method_log
        .take()
        .unwrap()
        .iter()
        .filter(|m| m.subc == 0 && m.mthd == class::SET_REPORT_SEMAPHORE_D)
        .map(|m| m.data)
        .collect()
}

#[test]
fn every_pipeline_statistic_reports_what_nvk_reports_for_it() {
    use driver::nvk::Scratch;
    for arch in [Arch::Turing, Arch::Fermi] {
        let (device, mut gpu) = setup(arch);
        // All eleven statistics, compute invocations last.
        let pool = QueryPool {
            addr: POOL_ADDR,
            kind: QueryType::PipelineStatistics(0x7ff),
            count: 1,
        };
        let mut enc = CommandEncoder::new(&device);
        enc.begin_query(&pool, 0);
        enc.bind_compute_pipeline(16);
        enc.dispatch([2, 1, 1]);
        enc.end_query(&pool, 0);
        let words = report_words(&mut gpu, enc);
        let report = |w: u32| (w >> 23) & 0x1f;
        let location = |w: u32| (w >> 12) & 0xf;
        // Ten 3D statistics at begin (compute's goes through WRITE_CS_INVOCATIONS).
        let reports: Vec<u32> = words[..10].iter().map(|w| report(*w)).collect();
        assert_eq!(
            reports,
            [1, 3, 5, 7, 9, 0xf, 0x11, 0x13, 0x1b, 0x1d],
            "{arch:?}"
        );
        // Data assembler, vertex shader, ..., tessellation.
        assert_eq!(location(words[0]), 1, "{arch:?}");
        assert_eq!(location(words[7]), 0xa, "{arch:?}");
        // The compute statistic's end value: the invocations counted since.
        let end = pool.report_addr(0, 2 * 10 + 1);
        assert_eq!(gpu.state.memory.read_u32(end), 32, "{arch:?}");
        assert_eq!(gpu.state.scratch(Scratch::CsInvocationsLo), 32, "{arch:?}");
    }
}

#[test]
fn transform_feedback_and_primitives_generated_queries_report_their_stream() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let (device, mut gpu) = setup(arch);
        let mut enc = CommandEncoder::new(&device);
        let xfb = QueryPool {
            addr: POOL_ADDR,
            kind: QueryType::TransformFeedbackStream,
            count: 1,
        };
        let generated = QueryPool {
            addr: POOL_ADDR + 0x1000,
            kind: QueryType::PrimitivesGenerated,
            count: 1,
        };
        enc.begin_query_indexed(&xfb, 0, 2);
        enc.begin_query_indexed(&generated, 0, 3);
        let words = report_words(&mut gpu, enc);
        let report_stream = |w: u32| ((w >> 23) & 0x1f, (w >> 5) & 7);
        assert_eq!(
            words.iter().map(|w| report_stream(*w)).collect::<Vec<_>>(),
            [(0xb, 2), (0xd, 2), (0x12, 3)],
            "{arch:?}"
        );
        assert_eq!(xfb.reports_per_query(), 4);
    }
}
