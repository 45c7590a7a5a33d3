//! Compute dispatches as NVK encodes them (nvk_CmdDispatchBase,
//! nvk_CmdDispatchIndirect), on both MME generations: the launch on the compute
//! class, the invocation statistic `ADD_CS_INVOCATIONS` keeps, and `DISPATCH_INDIRECT`
//! writing the group counts it reads into the root table and the QMD.

use driver::class;
use driver::gpu::{Gpu, LoggedMethod};
use driver::mme::Arch;
use driver::nvk::dispatch::QMD_DWORDS;
use driver::nvk::{root, CommandEncoder, Device, Macro, Scratch};
use driver::push::{SUBC_3D, SUBC_COMPUTE};

const INDIRECT_ADDR: u64 = 0x30_0000_0000;

fn gpu(device: &Device, arch: Arch) -> Gpu {
    let mut gpu = Gpu::new(arch);
    gpu.execute(device.init_push().unwrap().words()).unwrap();
    gpu
}

fn invocations(gpu: &Gpu) -> u64 {
    (u64::from(gpu.state.scratch(Scratch::CsInvocationsHi)) << 32)
        | u64::from(gpu.state.scratch(Scratch::CsInvocationsLo))
}

#[test]
fn a_dispatch_counts_its_invocations_and_launches_its_qmd() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device, arch);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_compute_pipeline(64);
        let first = enc.dispatch([4, 2, 1]);
        let second = enc.dispatch([1, 1, 3]);
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        let log: Vec<LoggedMethod> = gpu.state.method_log.take().unwrap();
        assert_eq!(invocations(&gpu), 64 * 8 + 64 * 3, "{arch:?}");
        // Per dispatch: the macro call with two words, SEND_PCAS_A, SEND_SIGNALING_PCAS_B.
        assert_eq!(first.dwords, 3 + 2 + 1, "{arch:?}");
        assert_eq!(second.dwords, first.dwords, "{arch:?}");
        assert_eq!(first.memory_words, root::SIZE / 4 + QMD_DWORDS, "{arch:?}");
        let launches: Vec<u32> = log
            .iter()
            .filter(|m| m.subc == SUBC_COMPUTE && m.mthd == class::SEND_SIGNALING_PCAS_B)
            .map(|m| m.data)
            .collect();
        assert_eq!(launches, [3, 3], "{arch:?}");
        let qmds: Vec<u32> = log
            .iter()
            .filter(|m| m.subc == SUBC_COMPUTE && m.mthd == class::SEND_PCAS_A)
            .map(|m| m.data)
            .collect();
        assert_eq!(qmds.len(), 2, "{arch:?}");
        assert_ne!(qmds[0], qmds[1], "each dispatch uploads its own QMD");
    }
}

#[test]
fn an_indirect_dispatch_writes_the_group_counts_into_the_root_table_and_the_qmd() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device, arch);
        gpu.state.memory.write_words(INDIRECT_ADDR, &[3, 5, 7]);
        let mut enc = CommandEncoder::new(&device);
        enc.bind_compute_pipeline(32);
        enc.dispatch_indirect(INDIRECT_ADDR, &gpu.state.memory);
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        let log: Vec<LoggedMethod> = gpu.state.method_log.take().unwrap();
        // Before Turing NVK 25.0.7 adds the products into registers it allocates
        // without clearing (they still hold the addresses the stores freed), so the
        // statistic is not the product there; verify holds the model to NVK's
        // instructions word for word instead.
        if arch == Arch::Turing {
            assert_eq!(invocations(&gpu), 3 * 5 * 7 * 32);
        }
        // The call's parameters: (group counts on Fermi,) root, QMD, local size.
        let call = class::call_mme_macro(Macro::DispatchIndirect.id());
        let params: Vec<u32> = log
            .iter()
            .filter(|m| m.subc == SUBC_3D && (call..call + 8).contains(&m.mthd))
            .map(|m| m.data)
            .collect();
        let at = if arch == Arch::Turing { 2 } else { 3 };
        let addr = |i: usize| (u64::from(params[at + i]) << 32) | u64::from(params[at + i + 1]);
        let (root_addr, qmd_addr) = (addr(0), addr(2));
        let read = |a: u64| {
            (0..3)
                .map(|i| gpu.state.memory.read_u32(a + 4 * i))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            read(root_addr + u64::from(root::CS_GROUP_COUNT)),
            [3, 5, 7],
            "{arch:?}"
        );
        assert_eq!(read(qmd_addr + 48), [3, 5, 7], "{arch:?}");
        // The address the macro wrote through was restored: the launch follows.
        assert!(log
            .iter()
            .any(|m| m.subc == SUBC_COMPUTE && m.mthd == class::SEND_PCAS_A));
    }
}

#[test]
fn the_meta_path_forces_compute_rendering_on_and_back() {
    let device = Device::for_arch(Arch::Turing);
    let mut enc = CommandEncoder::new(&device);
    assert_eq!(enc.meta_begin_compute().dwords, 1);
    enc.dispatch([1, 1, 1]);
    assert_eq!(enc.meta_end_compute().dwords, 1);
    let mut gpu = gpu(&device, Arch::Turing);
    gpu.state.method_log = Some(Vec::new());
    gpu.execute(enc.finish().words()).unwrap();
    let overrides: Vec<u32> = gpu
        .state
        .method_log
        .take()
        .unwrap()
        .iter()
        .filter(|m| m.subc == SUBC_COMPUTE && m.mthd == class::SET_RENDER_ENABLE_OVERRIDE)
        .map(|m| m.data)
        .collect();
    assert_eq!(overrides, [1, 0]);
}

#[test]
fn update_buffer_is_one_copy_engine_line_from_uploaded_data() {
    use driver::class::copy;
    use driver::push::SUBC_COPY;
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device, arch);
        let mut enc = CommandEncoder::new(&device);
        let r = enc.update_buffer(0x30_0000_0040, 100);
        // OFFSET_IN..OUT (header and 4), LINE_LENGTH_IN and LINE_COUNT (3), LAUNCH_DMA.
        assert_eq!(r.dwords, 5 + 3 + 1, "{arch:?}");
        assert_eq!(r.memory_words, 25, "{arch:?}");
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        let log: Vec<LoggedMethod> = gpu.state.method_log.take().unwrap();
        let copy_writes: Vec<(u16, u32)> = log
            .iter()
            .filter(|m| m.subc == SUBC_COPY)
            .map(|m| (m.mthd, m.data))
            .collect();
        assert_eq!(copy_writes[2], (copy::OFFSET_OUT_UPPER, 0x30), "{arch:?}");
        assert_eq!(copy_writes[4], (copy::LINE_LENGTH_IN, 100), "{arch:?}");
        assert_eq!(copy_writes.last().map(|w| w.0), Some(copy::LAUNCH_DMA));
    }
}
