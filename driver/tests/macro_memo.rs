//! Remembered macro runs: a call replayed from what an earlier run emitted costs and
//! does exactly what simulating it does, also when the state or memory it reads has
//! changed in between, on both MME generations.

use driver::class;
use driver::gpu::{Gpu, HwDraw, LoggedMethod, ReportWrite};
use driver::mme::{tu104, Arch, Builder, Value};
use driver::nvk::{CommandEncoder, Device, DrawKind, IndirectArgs, RenderingInfo};
use driver::push::{PushBuffer, SUBC_3D};

const INDIRECT_ADDR: u64 = 0x20_0000;

/// What a GPU did: every method executed, every draw and report, the totals.
#[derive(Debug, PartialEq)]
struct Observed {
    methods: Vec<LoggedMethod>,
    draws: Vec<HwDraw>,
    reports: Vec<ReportWrite>,
    counters: driver::gpu::Counters,
}

/// A GPU set up by the device's init push buffer, logging every method, remembering
/// macro runs or not.
fn gpu(device: &Device, remember: bool) -> Gpu {
    let mut gpu = unlogged_gpu(device, remember);
    gpu.state.method_log = Some(Vec::new());
    gpu
}

/// [`gpu`] without a method log, as a replay runs it.
fn unlogged_gpu(device: &Device, remember: bool) -> Gpu {
    let mut gpu = Gpu::new(device.arch());
    gpu.set_macro_memo(remember);
    gpu.execute(device.init_push().expect("macros build").words())
        .expect("init runs");
    gpu
}

fn observed(gpu: &Gpu) -> Observed {
    Observed {
        methods: gpu.state.method_log.clone().unwrap_or_default(),
        draws: gpu.state.draws.clone(),
        reports: gpu.state.reports.clone(),
        counters: gpu.state.counters,
    }
}

/// Repeated draws of each kind, the same and with changed parameters, under two view
/// masks; then the same indirect draw twice with its arguments rewritten in between.
fn storm(gpu: &mut Gpu, device: &Device) {
    for mask in [0, 0b101] {
        let mut enc = CommandEncoder::new(device);
        enc.begin_rendering(&RenderingInfo::views(mask));
        for _ in 0..4 {
            enc.draw(3, 1, 0, 0);
        }
        for _ in 0..2 {
            enc.draw(3, 1, 7, 0);
            enc.draw_indexed(6, 2, 0, -1, 0);
        }
        enc.draw(3, 1, 0, 0);
        enc.end_rendering();
        gpu.execute(enc.finish().words()).expect("the draws run");
    }
    for args in [[6, 2, 9, 1], [4, 3, 0, 0], [4, 3, 0, 0]] {
        gpu.state.memory.write_words(INDIRECT_ADDR, &args);
        let mut enc = CommandEncoder::new(device);
        enc.begin_rendering(&RenderingInfo::views(0));
        enc.draw_indirect(
            DrawKind::DrawIndirect,
            IndirectArgs {
                addr: INDIRECT_ADDR,
                draw_count: 1,
                stride: 16,
                count_addr: None,
            },
            &gpu.state.memory,
        );
        enc.end_rendering();
        gpu.execute(enc.finish().words())
            .expect("the indirect draw runs");
    }
}

#[test]
fn repeated_draws_replayed_from_remembered_runs_match_the_simulator_on_both_generations() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut simulated = gpu(&device, false);
        let mut remembered = gpu(&device, true);
        storm(&mut simulated, &device);
        storm(&mut remembered, &device);
        assert_eq!(simulated.remembered_calls(), 0);
        assert!(
            remembered.remembered_calls() >= 8,
            "{arch:?}: only {} calls remembered",
            remembered.remembered_calls()
        );
        assert_eq!(observed(&remembered), observed(&simulated), "{arch:?}");
        // The indirect draws read their rewritten arguments.
        let draws = &remembered.state.draws;
        let last: Vec<(u32, u32)> = draws[draws.len() - 8..]
            .iter()
            .map(|d| (d.count, d.first))
            .collect();
        let mut want = vec![(6, 9); 2];
        want.extend([(4, 0); 6]);
        assert_eq!(last, want, "{arch:?}");

        // Without a method log, as a replay runs, remembered runs write their methods
        // again in bulk: the same draws, reports, counts and state.
        let mut simulated = unlogged_gpu(&device, false);
        let mut remembered = unlogged_gpu(&device, true);
        storm(&mut simulated, &device);
        storm(&mut remembered, &device);
        assert!(remembered.remembered_calls() >= 8, "{arch:?}");
        assert_eq!(observed(&remembered), observed(&simulated), "{arch:?}");
        let shadows = |gpu: &Gpu| {
            (0..0x4000u16)
                .step_by(4)
                .map(|m| gpu.state.shadow(m))
                .collect::<Vec<_>>()
        };
        assert_eq!(shadows(&remembered), shadows(&simulated), "{arch:?}");
    }
}

/// Macro 0x30: writes its first parameter into the selected constant buffer (where the
/// model's constant-buffer offset points), then reads the buffer's first dword back
/// through `MME_DMA_READ_FIFOED` and emits it to shadow scratch 40.
fn write_then_read_macro(cb_addr: u64) -> Vec<u32> {
    let mut b = Builder::new(Arch::Turing);
    let value = b.load();
    b.mthd(class::load_constant_buffer(0));
    b.emit(value);
    b.read_fifoed(
        Value::Imm((cb_addr >> 32) as u32),
        Value::Imm(cb_addr as u32),
        Value::Imm(1),
    );
    let read = b.load();
    b.mthd(class::set_mme_shadow_scratch(40));
    b.emit(read);
    tu104::assemble(&b.finish().expect("the macro builds")).expect("it assembles")
}

#[test]
fn a_run_that_reads_memory_it_wrote_is_simulated_again() {
    const CB: u64 = 0x40_0000;
    const ID: u16 = 0x30;
    let device = Device::for_arch(Arch::Turing);
    let mut results = Vec::new();
    for remember in [false, true] {
        let mut gpu = gpu(&device, remember);
        let mut p = PushBuffer::new();
        driver::nvk::upload_macro(&mut p, ID, 0x3800, &write_then_read_macro(CB));
        p.mthds(
            SUBC_3D,
            class::SET_CONSTANT_BUFFER_SELECTOR_A,
            &[0x100, (CB >> 32) as u32, CB as u32],
        );
        gpu.execute(p.words()).expect("the setup runs");
        let mut scratch = Vec::new();
        // The first call writes at offset 4 and reads what offset 0 held (5); the second,
        // with the offset set back to 0, must read the 7 it wrote itself, although its
        // parameters, the state it reads and the memory it read are those of the first.
        for (offset, before) in [(4, 5), (0, 5)] {
            let mut p = PushBuffer::new();
            p.mthd(SUBC_3D, class::LOAD_CONSTANT_BUFFER_OFFSET, 0);
            p.mthd(SUBC_3D, class::load_constant_buffer(0), before);
            p.mthd(SUBC_3D, class::LOAD_CONSTANT_BUFFER_OFFSET, offset);
            p.mthd(SUBC_3D, class::CALL_MME_MACRO + 8 * ID, 7);
            gpu.execute(p.words()).expect("the macro runs");
            scratch.push(gpu.state.shadow(class::set_mme_shadow_scratch(40)));
        }
        assert_eq!(scratch, [5, 7], "remembering runs: {remember}");
        results.push(observed(&gpu));
    }
    assert_eq!(results[0], results[1]);
}
