//! The macros NVK keeps for classes before Volta (`SET_Z_CLAMP`,
//! `SET_VIEWPORT_MIN_MAX_Z`, `SET_CONSERVATIVE_RASTER_STATE`) and for private
//! registers (`SET_PRIV_REG`), and `SELECT_CB0`, run on both MME generations: the
//! methods each emits from a given scratch state.

use driver::class;
use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::{Device, Macro, Scratch};
use driver::push::{PushBuffer, SUBC_3D};

const CLIP_MIN_Z: u16 = 0x0c08;
const MINUS_INF: u32 = 0xff80_0000;
const PLUS_INF: u32 = 0x7f80_0000;

fn scratch(slot: u16) -> u16 {
    class::set_mme_shadow_scratch(slot)
}

/// Runs `m` with `params` after the scratch writes `init`; returns what it emitted.
fn run(arch: Arch, init: &[(u16, u32)], m: Macro, params: &[u32]) -> (Gpu, Vec<(u16, u32)>) {
    let device = Device::for_arch(arch);
    let mut gpu = Gpu::new(arch);
    gpu.execute(device.init_push().unwrap().words()).unwrap();
    let mut p = PushBuffer::new();
    for (slot, value) in init {
        p.mthd(SUBC_3D, scratch(*slot), *value);
    }
    p.inc_once(SUBC_3D, class::call_mme_macro(m.id()), params);
    gpu.state.method_log = Some(Vec::new());
    gpu.execute(p.words()).unwrap();
    let emitted = gpu
        .state
        .method_log
        .take()
        .unwrap()
        .into_iter()
        .filter(|w| w.from_macro)
        .map(|w| (w.mthd, w.data))
        .collect();
    (gpu, emitted)
}

#[test]
fn z_clamp_on_writes_every_viewports_kept_range_and_off_writes_infinities() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let vp0 = Scratch::Viewport0MinZ as u16;
        // Viewport 3 keeps [0.25, 0.75].
        let init = [(vp0 + 6, 0.25f32.to_bits()), (vp0 + 7, 0.75f32.to_bits())];
        let (_, on) = run(arch, &init, Macro::SetZClamp, &[1]);
        assert_eq!(on[0], (scratch(Scratch::ZClamp as u16), 1), "{arch:?}");
        let clips: Vec<(u16, u32)> = on[1..].to_vec();
        assert_eq!(clips.len(), 32, "{arch:?}");
        assert_eq!(clips[6], (CLIP_MIN_Z + 48, 0.25f32.to_bits()), "{arch:?}");
        assert_eq!(clips[7], (CLIP_MIN_Z + 52, 0.75f32.to_bits()), "{arch:?}");

        let init = [(Scratch::ZClamp as u16, 1)];
        let (_, off) = run(arch, &init, Macro::SetZClamp, &[0]);
        assert_eq!(off.len(), 33, "{arch:?}");
        assert!(off[1..]
            .chunks(2)
            .all(|c| c[0].1 == MINUS_INF && c[1].1 == PLUS_INF));
        // Unchanged: nothing at all.
        let (_, same) = run(arch, &init, Macro::SetZClamp, &[1]);
        assert!(same.is_empty(), "{arch:?}");
    }
}

#[test]
fn viewport_min_max_z_is_kept_and_written_while_clamping() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let vp0 = Scratch::Viewport0MinZ as u16;
        let (min, max) = (0.1f32.to_bits(), 0.9f32.to_bits());
        let (_, unclamped) = run(arch, &[], Macro::SetViewportMinMaxZ, &[2, min, max]);
        assert_eq!(
            unclamped,
            [(scratch(vp0 + 4), min), (scratch(vp0 + 5), max)],
            "{arch:?}"
        );
        let init = [(Scratch::ZClamp as u16, 1)];
        let (_, clamped) = run(arch, &init, Macro::SetViewportMinMaxZ, &[2, min, max]);
        assert_eq!(
            clamped[2..],
            [(CLIP_MIN_Z + 32, min), (CLIP_MIN_Z + 36, max)],
            "{arch:?}"
        );
    }
}

#[test]
fn conservative_raster_state_goes_through_the_falcon_once_per_change() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let state = 2 << 23;
        let (gpu, emitted) = run(arch, &[], Macro::SetConservativeRasterState, &[state]);
        let mthds: Vec<u16> = emitted.iter().map(|(m, _)| *m).collect();
        let falcon = scratch(Scratch::Falcon0 as u16);
        assert_eq!(
            mthds[..6],
            [
                scratch(Scratch::ConservativeRasterState as u16),
                class::WAIT_FOR_IDLE,
                falcon,
                falcon + 4,
                falcon + 8,
                class::SET_FALCON04,
            ],
            "{arch:?}"
        );
        assert_eq!(emitted[5].1, 0x41_8800, "{arch:?}");
        assert_eq!(emitted[3].1, state, "{arch:?}");
        // The falcon answered: the wait ends after one no-op.
        assert_eq!(mthds[6..], [class::NO_OPERATION], "{arch:?}");
        assert_eq!(gpu.state.scratch(Scratch::Falcon0), 1);
        let init = [(Scratch::ConservativeRasterState as u16, state)];
        let (_, again) = run(arch, &init, Macro::SetConservativeRasterState, &[state]);
        assert!(again.is_empty(), "{arch:?}");
    }
}

#[test]
fn select_cb0_selects_the_root_table_kept_in_scratch() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let init = [
            (Scratch::Cb0AddrHi as u16, 0x12),
            (Scratch::Cb0AddrLo as u16, 0x3400_0000),
        ];
        let (_, emitted) = run(arch, &init, Macro::SelectCb0, &[0]);
        assert_eq!(
            emitted,
            [
                (
                    class::SET_CONSTANT_BUFFER_SELECTOR_A,
                    driver::nvk::root::SIZE
                ),
                (class::SET_CONSTANT_BUFFER_SELECTOR_A + 4, 0x12),
                (class::SET_CONSTANT_BUFFER_SELECTOR_A + 8, 0x3400_0000),
            ],
            "{arch:?}"
        );
    }
}
