//! NVK's draws through the encoder and the GPU model, on both MME generations: exactly
//! one hardware draw per set view bit per instance, in ascending view order, with the
//! layer and the view index equal to the bit.

use driver::gpu::{Gpu, GpuError, HwDraw, Memory};
use driver::mme::Arch;
use driver::nvk::state::Viewport;
use driver::nvk::{CommandEncoder, Device, DrawKind, IndirectArgs, RenderingInfo};

const MASKS: [u32; 7] = [0, 1, 0b11, 0b1111, 8, 0x8001, 0xffff_ffff];
const INSTANCES: [u32; 3] = [0, 1, 3];
const INDIRECT_ADDR: u64 = 0x20_0000;
const COUNT_ADDR: u64 = 0x30_0000;

/// A GPU set up by the device's init push buffer.
fn gpu(device: &Device) -> Gpu {
    let mut gpu = Gpu::new(device.arch());
    gpu.execute(device.init_push().expect("macros build").words())
        .expect("init runs");
    gpu
}

/// The one API draw of `kind`, with `instances` instances of 6 vertices from 9.
fn record(enc: &mut CommandEncoder, memory: &mut Memory, kind: DrawKind, instances: u32) {
    let stride = 32u32;
    match kind {
        DrawKind::Draw => {
            enc.draw(6, instances, 9, 2);
        }
        DrawKind::DrawIndexed => {
            enc.draw_indexed(6, instances, 9, -4, 2);
        }
        DrawKind::DrawIndirect | DrawKind::DrawIndirectCount => {
            memory.write_words(INDIRECT_ADDR, &[6, instances, 9, 2]);
            memory.write_u32(COUNT_ADDR, 1);
            let count_addr = (kind == DrawKind::DrawIndirectCount).then_some(COUNT_ADDR);
            enc.draw_indirect(
                kind,
                IndirectArgs {
                    addr: INDIRECT_ADDR,
                    draw_count: 1,
                    stride,
                    count_addr,
                },
                memory,
            );
        }
        DrawKind::DrawIndexedIndirect | DrawKind::DrawIndexedIndirectCount => {
            memory.write_words(INDIRECT_ADDR, &[6, instances, 9, (-4i32) as u32, 2]);
            memory.write_u32(COUNT_ADDR, 1);
            let count_addr = (kind == DrawKind::DrawIndexedIndirectCount).then_some(COUNT_ADDR);
            enc.draw_indirect(
                kind,
                IndirectArgs {
                    addr: INDIRECT_ADDR,
                    draw_count: 1,
                    stride,
                    count_addr,
                },
                memory,
            );
        }
        DrawKind::DrawIndirectByteCount => {
            // 16 + 6 vertices of 12 bytes written: (88 - 16) / 12 = 6.
            memory.write_u32(COUNT_ADDR, 16 + 6 * 12);
            enc.draw_indirect_byte_count(instances, 2, COUNT_ADDR, 16, 12, memory);
        }
    }
}

/// The draws NVK 25.0.7 starts for one API draw under `mask`: one per view and
/// instance, except that its draw macros loop over instances with Mesa's mme_loop,
/// which on Turing is the LOOP instruction and runs once for an instance count of 0.
fn expected(arch: Arch, kind: DrawKind, mask: u32, instances: u32) -> Vec<(u32, u32, u32, u32)> {
    let instances = match arch {
        Arch::Turing => instances.max(1),
        Arch::Fermi => instances,
    };
    let views: Vec<u32> = if mask == 0 {
        vec![0]
    } else {
        (0..32).filter(|v| mask & (1 << v) != 0).collect()
    };
    let first = if kind == DrawKind::DrawIndirectByteCount {
        0
    } else {
        9
    };
    views
        .iter()
        .flat_map(|&v| (0..instances).map(move |i| (v, v, i, first)))
        .collect()
}

fn observed(draws: &[HwDraw]) -> Vec<(u32, u32, u32, u32)> {
    draws
        .iter()
        .map(|d| (d.layer, d.view_index, d.instance, d.first))
        .collect()
}

/// Runs one draw; checks the hardware draws; returns them.
fn check(arch: Arch, kind: DrawKind, mask: u32, instances: u32) -> Result<Vec<HwDraw>, String> {
    let device = Device::for_arch(arch);
    let mut gpu = gpu(&device);
    let mut enc = CommandEncoder::new(&device);
    enc.begin_rendering(&RenderingInfo::views(mask));
    record(&mut enc, &mut gpu.state.memory, kind, instances);
    enc.end_rendering();
    gpu.execute(enc.finish().words())
        .map_err(|e: GpuError| e.to_string())?;
    let want = expected(arch, kind, mask, instances);
    let got = observed(&gpu.state.draws);
    if got != want {
        return Err(format!(
            "{arch:?} {kind:?} mask {mask:#x} x{instances}: got {got:?}, want {want:?}"
        ));
    }
    for d in &gpu.state.draws {
        if d.count != 6 || d.indexed != kind.indexed() {
            return Err(format!("{arch:?} {kind:?}: draw {d:?}"));
        }
    }
    Ok(gpu.state.draws.clone())
}

#[test]
fn every_draw_command_expands_to_one_hardware_draw_per_view_and_instance() {
    for arch in [Arch::Turing, Arch::Fermi] {
        for kind in DrawKind::ALL {
            for mask in MASKS {
                for instances in INSTANCES {
                    check(arch, kind, mask, instances).unwrap();
                }
            }
        }
    }
}

#[test]
fn draw_parameters_reach_the_base_registers_and_input_attachments_read_the_view() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let draws = check(arch, DrawKind::DrawIndexed, 0b1010, 2).unwrap();
        for d in &draws {
            assert_eq!(d.base_vertex, (-4i32) as u32);
            assert_eq!(d.base_instance, 2);
            assert_eq!(
                d.input_attachment_layer, d.view_index,
                "multiview input attachments read layer = ViewIndex"
            );
        }
        // vkCmdDraw's first vertex goes to SET_VERTEX_ARRAY_START (and the root
        // table); NVK leaves the hardware's base vertex at 0.
        let draws = check(arch, DrawKind::Draw, 0, 1).unwrap();
        assert_eq!((draws[0].base_vertex, draws[0].first), (0, 9));
        assert_eq!(draws[0].input_attachment_layer, 0);
    }
}

#[test]
fn a_render_pass_with_subpass_masks_5_10_5_10() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device);
        let mut enc = CommandEncoder::new(&device);
        let masks = [5u32, 10, 5, 10];
        // Mesa's common render-pass code begins one rendering a subpass.
        for (s, mask) in masks.iter().enumerate() {
            enc.begin_rendering(&RenderingInfo::views(*mask));
            enc.draw(4, 1, 4 * s as u32, 0);
            enc.end_rendering();
        }
        gpu.execute(enc.finish().words()).unwrap();
        let layers: Vec<(u32, u32)> = gpu.state.draws.iter().map(|d| (d.first, d.layer)).collect();
        assert_eq!(
            layers,
            vec![
                (0, 0),
                (0, 2),
                (4, 1),
                (4, 3),
                (8, 0),
                (8, 2),
                (12, 1),
                (12, 3)
            ],
            "{arch:?}"
        );
    }
}

#[test]
fn indirect_draws_run_every_command_with_its_draw_index() {
    for arch in [Arch::Turing, Arch::Fermi] {
        for kind in [DrawKind::DrawIndirect, DrawKind::DrawIndexedIndirectCount] {
            let device = Device::for_arch(arch);
            let mut gpu = gpu(&device);
            let per = if kind.indexed() { 5 } else { 4 };
            for d in 0..3u32 {
                let mut cmd = vec![3 + d, 2, 10 * d, 0];
                if kind.indexed() {
                    cmd.push(0);
                }
                gpu.state
                    .memory
                    .write_words(INDIRECT_ADDR + u64::from(d) * 40, &cmd[..per]);
            }
            // The count buffer says 3; the maximum says 5: three draws.
            gpu.state.memory.write_u32(COUNT_ADDR, 3);
            let mut enc = CommandEncoder::new(&device);
            enc.begin_rendering(&RenderingInfo::views(0b11));
            let count_addr = (kind == DrawKind::DrawIndexedIndirectCount).then_some(COUNT_ADDR);
            let draw_count = if count_addr.is_some() { 5 } else { 3 };
            enc.draw_indirect(
                kind,
                IndirectArgs {
                    addr: INDIRECT_ADDR,
                    draw_count,
                    stride: 40,
                    count_addr,
                },
                &gpu.state.memory,
            );
            gpu.execute(enc.finish().words()).unwrap();
            let got: Vec<(u32, u32, u32, u32)> = gpu
                .state
                .draws
                .iter()
                .map(|d| (d.draw_id, d.view_index, d.instance, d.count))
                .collect();
            let mut want = Vec::new();
            for d in 0..3 {
                for v in 0..2 {
                    for i in 0..2 {
                        want.push((d, v, i, 3 + d));
                    }
                }
            }
            assert_eq!(got, want, "{arch:?} {kind:?}");
        }
    }
}

#[test]
fn regression_view_loop_before_the_parameter_loads_is_caught() {
    // NVK's first attempt looped over the view mask around the whole draw, so each
    // iteration loaded parameters that were passed only once. Build that macro, load it
    // in place of the draw macro, and show that the checks above reject it.
    use driver::class;
    use driver::mme::{fermi, tu104, Builder, Cmp, Value};
    use driver::nvk::{Macro, Scratch};
    for arch in [Arch::Turing, Arch::Fermi] {
        let mut b = Builder::new(arch);
        let view = b.mov(Value::Zero);
        b.while_(Cmp::Ne, view, Value::Imm(32), |b| {
            let mask = b.load_scratch(Scratch::ViewMask as u16);
            let has = b.bfe(mask, view, 1);
            b.free_reg(mask);
            b.if_(Cmp::Ne, has, Value::Zero, |b| {
                b.free_reg(has);
                let begin = b.load();
                let draw_index = b.load();
                b.free_reg(draw_index);
                let count = b.load();
                let instances = b.load();
                b.free_reg(instances);
                let first = b.load();
                let first_instance = b.load();
                b.free_reg(first_instance);
                b.mthd(class::SET_RT_LAYER);
                b.emit(view);
                b.mthd(class::BEGIN);
                b.emit(begin);
                b.mthd(class::SET_VERTEX_ARRAY_START);
                b.emit(first);
                b.emit(count);
                b.mthd(class::END);
                b.emit(Value::Zero);
            });
            b.add_to(view, view, Value::Imm(1));
        });
        let program = b.finish().unwrap();
        let words = match arch {
            Arch::Turing => tu104::assemble(&program).unwrap(),
            Arch::Fermi => fermi::assemble(&program).unwrap(),
        };
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device);
        let mut p = driver::push::PushBuffer::new();
        driver::nvk::upload_macro(&mut p, Macro::Draw.id(), 0x3000, &words);
        gpu.execute(p.words()).unwrap();
        let mut enc = CommandEncoder::new(&device);
        enc.begin_rendering(&RenderingInfo::views(0b1111));
        enc.draw(6, 1, 9, 0);
        let result = gpu.execute(enc.finish().words());
        let caught = match result {
            Err(e) => e
                .to_string()
                .contains("loaded a parameter that was not given"),
            Ok(()) => observed(&gpu.state.draws) != expected(arch, DrawKind::Draw, 0b1111, 1),
        };
        assert!(caught, "{arch:?}: the buggy macro passed the checks");
    }
}

#[test]
fn macros_fit_pre_turing_registers_and_instruction_counts_differ() {
    let mut counts = Vec::new();
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device);
        let mut enc = CommandEncoder::new(&device);
        enc.begin_rendering(&RenderingInfo::views(0b1111));
        enc.draw(3, 8, 0, 0);
        gpu.execute(enc.finish().words()).unwrap();
        assert_eq!(gpu.state.draws.len(), 32);
        counts.push(gpu.last_macro.unwrap().instructions);
    }
    assert_ne!(
        counts[0], counts[1],
        "Turing and Fermi run different instruction counts"
    );
}

#[test]
fn max_multiview_view_count_is_32() {
    assert_eq!(driver::nvk::MAX_MULTIVIEW_VIEW_COUNT, 32);
}

#[test]
fn per_draw_costs_are_reported() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device);
        let mut enc = CommandEncoder::new(&device);
        enc.begin_rendering(&RenderingInfo::views(0b11));
        let setup = enc.finish();
        gpu.execute(setup.words()).unwrap();
        let mut enc = CommandEncoder::new(&device);
        // The command buffer's first draw flushes the state set before it first.
        enc.state_mut().set_viewports(
            0,
            &[Viewport {
                width: 64.0,
                height: 64.0,
                max_depth: 1.0,
                ..Viewport::default()
            }],
        );
        let first = enc.draw(3, 2, 0, 0);
        assert!(first.state.total_dwords() > 0, "{first:?}");
        let flushed = gpu.execute_measured(enc.take_push().words()).unwrap();
        assert_eq!(
            flushed.methods,
            flushed.macro_methods + 5 + first.state.total_methods() as u64,
            "the state's methods, then the five parameters (NVK's: the draw index, then vkCmdDraw's)"
        );
        // The next draw, with nothing changed, is the draw macro alone.
        let recorded = enc.draw(3, 2, 0, 0);
        let cost = gpu.execute_measured(enc.finish().words()).unwrap();
        assert_eq!(recorded.state.total_dwords(), 0);
        assert_eq!(
            recorded.dwords, 6,
            "one increment-once header and five parameters"
        );
        assert_eq!(cost.hw_draws, 4);
        assert!(cost.mme_instructions > 20, "{cost:?}");
        // Per instance: BEGIN, first, count, END; per view: three; and the draw parameters.
        assert!(cost.macro_methods >= 4 * 4 + 2 * 3, "{cost:?}");
        assert_eq!(
            cost.methods,
            cost.macro_methods + 5,
            "the five parameters arrive as methods"
        );
    }
}

#[test]
fn push_constants_land_in_the_root_table() {
    let device = Device::for_arch(Arch::Turing);
    let mut gpu = gpu(&device);
    let mut enc = CommandEncoder::new(&device);
    enc.push_constants(8, &[0x11, 0x22, 0x33]);
    gpu.execute(enc.finish().words()).unwrap();
    let base = device.root_table_addr + u64::from(driver::nvk::root::PUSH_CONSTANTS) + 8;
    let got: Vec<u32> = (0..3)
        .map(|i| gpu.state.memory.read_u32(base + 4 * i))
        .collect();
    assert_eq!(got, vec![0x11, 0x22, 0x33]);
}

#[test]
fn a_macro_that_fails_is_named_as_nvk_names_it() {
    // A draw macro run out of parameters stops; the error names `draw`, not its id.
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut gpu = gpu(&device);
        let mut p = driver::push::PushBuffer::new();
        p.inc_once(
            driver::push::SUBC_3D,
            driver::class::call_mme_macro(driver::nvk::Macro::Draw.id()),
            &[0],
        );
        let err = gpu.execute(p.words()).unwrap_err().to_string();
        assert!(err.contains("`draw`"), "{arch:?}: {err}");
        assert_eq!(driver::gpu::macro_name(250), "macro 250");
    }
}
