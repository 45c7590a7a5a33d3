//! NVK's vertex- and index-buffer macros (`BIND_VB`, `BIND_IB`) on both MME
//! generations: NVK's own test cases for `BIND_VB` (`nvk_mme_bind_vb_tests`: initial
//! scratch, parameters, and its check of the methods), and the index buffer's size,
//! limit, restart index and index size per format, as data rows run by one runner.

use driver::class;
use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::nvk::{CommandEncoder, Device, Macro, Scratch};
use driver::push::{PushBuffer, SUBC_3D};

/// Runs `m` with `params` after writing `init` (scratch slot, value) on `arch`; returns
/// the methods the macro emitted.
fn run(arch: Arch, init: &[(Scratch, u32)], m: Macro, params: &[u32]) -> Vec<(u16, u32)> {
    let init: Vec<(u16, u32)> = init
        .iter()
        .map(|(slot, value)| (class::set_mme_shadow_scratch(*slot as u16), *value))
        .collect();
    run_after_methods(arch, &init, m, params)
}

/// Shadow scratch written before a macro runs.
type Init = &'static [(Scratch, u32)];

const ZERO_PAGE: [(Scratch, u32); 2] = [
    (Scratch::ZeroAddrHi, 0xff3),
    (Scratch::ZeroAddrLo, 0xff35_6000),
];

/// NVK's nvk_mme_bind_vb_test_check, for stream 3.
fn check_bind_vb(arch: Arch, init: &[(Scratch, u32)], params: [u32; 4], got: &[(u16, u32)]) {
    let [vb, hi, lo, mut size] = params;
    if hi == 0 && lo == 0 {
        size = 0;
    }
    let location = class::SET_VERTEX_STREAM_A_LOCATION_A + 16 * vb as u16;
    assert_eq!((got[0].0, got[1].0), (location, location + 4), "{arch:?}");
    match arch {
        Arch::Turing => {
            assert_eq!((got[0].1, got[1].1), (hi, lo), "{arch:?}");
            let size_a = class::SET_VERTEX_STREAM_SIZE_A + 8 * 3;
            assert_eq!(got[2..4], [(size_a, 0), (size_a + 4, size)], "{arch:?}");
        }
        Arch::Fermi => {
            let mut addr = (u64::from(hi) << 32) | u64::from(lo);
            if size == 0 {
                addr = (u64::from(init[0].1) << 32) | u64::from(init[1].1);
            }
            assert_eq!(
                (got[0].1, got[1].1),
                ((addr >> 32) as u32, addr as u32),
                "{arch:?}"
            );
            let limit = (addr + u64::from(size)).wrapping_sub(1);
            let limit_a = class::SET_VERTEX_STREAM_LIMIT_A_A + 8 * 3;
            assert_eq!(
                got[2..4],
                [(limit_a, (limit >> 32) as u32), (limit_a + 4, limit as u32)],
                "{arch:?}"
            );
        }
    }
    assert_eq!(got.len(), 4, "{arch:?}: {got:x?}");
}

#[test]
fn bind_vb_passes_nvk_s_test_cases_on_both_generations() {
    // nvk_mme_bind_vb_tests: (initial scratch, parameters).
    let cases: [(Init, [u32; 4]); 3] = [
        (&[], [3, 0xff3, 0xff4a_b000, 0x10000]),
        (&ZERO_PAGE, [3, 0xff3, 0xff4a_b000, 0]),
        (&ZERO_PAGE, [3, 0, 0, 0x800]),
    ];
    for arch in [Arch::Turing, Arch::Fermi] {
        for (init, params) in cases {
            let got = run(arch, init, Macro::BindVb, &params);
            check_bind_vb(arch, init, params, &got);
        }
    }
}

#[test]
fn bind_ib_sets_the_range_restart_index_and_index_size() {
    // (index type, restart index, SET_INDEX_BUFFER_E).
    let formats = [
        (1, u32::MAX, 2),         // VK_INDEX_TYPE_UINT32
        (0, 0xffff, 1),           // VK_INDEX_TYPE_UINT16
        (1_000_265_000, 0xff, 0), // VK_INDEX_TYPE_UINT8_KHR
        (57, 0xffff, 1),          // DXGI_FORMAT_R16_UINT
        (62, 0xff, 0),            // DXGI_FORMAT_R8_UINT
    ];
    for arch in [Arch::Turing, Arch::Fermi] {
        for (format, restart, size_code) in formats {
            let got = run(
                arch,
                &ZERO_PAGE,
                Macro::BindIb,
                &[0x12, 0x3400_0000, 0x600, format],
            );
            let a = class::SET_INDEX_BUFFER_A;
            let range = match arch {
                Arch::Turing => vec![
                    (a, 0x12),
                    (a + 4, 0x3400_0000),
                    (class::SET_INDEX_BUFFER_SIZE_A, 0),
                    (class::SET_INDEX_BUFFER_SIZE_A + 4, 0x600),
                ],
                // A, B, then the limit address in C, D.
                Arch::Fermi => vec![
                    (a, 0x12),
                    (a + 4, 0x3400_0000),
                    (a + 8, 0x12),
                    (a + 12, 0x3400_05ff),
                ],
            };
            let mut want = range;
            want.push((class::SET_DA_PRIMITIVE_RESTART_INDEX, restart));
            want.push((class::SET_INDEX_BUFFER_E, size_code));
            assert_eq!(got, want, "{arch:?} format {format}");
        }
        // A null buffer binds nothing: size 0, and before Turing the zero page.
        let got = run(arch, &ZERO_PAGE, Macro::BindIb, &[0, 0, 0x600, 0]);
        match arch {
            Arch::Turing => assert_eq!(got[3], (class::SET_INDEX_BUFFER_SIZE_A + 4, 0)),
            Arch::Fermi => assert_eq!(
                got[0..2],
                [
                    (class::SET_INDEX_BUFFER_A, 0xff3),
                    (class::SET_INDEX_BUFFER_A + 4, 0xff35_6000)
                ]
            ),
        }
    }
}

#[test]
fn the_encoder_binds_each_vertex_buffer_with_one_macro_call() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        let r = enc.bind_vertex_buffers(1, &[(0x1_0000, 256), (0x2_0000, 512)]);
        // Two increment-once headers with four parameters each.
        assert_eq!(r.dwords, 10, "{arch:?}");
        let r = enc.bind_index_buffer(0x3_0000, 1024, 1);
        assert_eq!(r.dwords, 5, "{arch:?}");
        let mut gpu = Gpu::new(arch);
        gpu.execute(device.init_push().unwrap().words()).unwrap();
        let cost = gpu.execute_measured(enc.finish().words()).unwrap();
        assert!(cost.mme_instructions > 0, "{arch:?}");
        assert_eq!(
            gpu.state
                .shadow(class::SET_VERTEX_STREAM_A_LOCATION_A + 16 * 2 + 4),
            0x2_0000,
            "{arch:?}"
        );
    }
}

/// Runs `m` with `params` after writing the methods `init`; returns what it emitted.
fn run_after_methods(arch: Arch, init: &[(u16, u32)], m: Macro, params: &[u32]) -> Vec<(u16, u32)> {
    let device = Device::for_arch(arch);
    let mut gpu = Gpu::new(arch);
    gpu.execute(device.init_push().unwrap().words()).unwrap();
    let mut p = PushBuffer::new();
    for (mthd, value) in init {
        p.mthd(SUBC_3D, *mthd, *value);
    }
    gpu.execute(p.words()).unwrap();
    let mut call = PushBuffer::new();
    call.inc_once(SUBC_3D, class::call_mme_macro(m.id()), params);
    gpu.state.method_log = Some(Vec::new());
    gpu.execute(call.words()).unwrap();
    gpu.state
        .method_log
        .take()
        .unwrap()
        .into_iter()
        .filter(|w| w.from_macro)
        .map(|w| (w.mthd, w.data))
        .collect()
}

#[test]
fn set_vb_enables_rewrites_only_the_streams_whose_bit_changed() {
    let format = |j: u16| class::SET_VERTEX_STREAM_A_FORMAT + 16 * j;
    let scratch = class::set_mme_shadow_scratch(Scratch::VbEnables as u16);
    for arch in [Arch::Turing, Arch::Fermi] {
        // Streams 0 and 2 enabled (bit 12 set, strides 16, 32, 48); now 1 and 2.
        let init = [
            (scratch, 0b101),
            (format(0), 0x1000 | 16),
            (format(1), 32),
            (format(2), 0x1000 | 48),
        ];
        let got = run_after_methods(arch, &init, Macro::SetVbEnables, &[0b110]);
        assert_eq!(
            got,
            vec![(scratch, 0b110), (format(0), 16), (format(1), 0x1000 | 32)],
            "{arch:?}"
        );
    }
}

#[test]
fn set_vb_stride_writes_a_stream_s_format_only_when_its_stride_changes() {
    let format = class::SET_VERTEX_STREAM_A_FORMAT + 16 * 2;
    for arch in [Arch::Turing, Arch::Fermi] {
        let init = [(format, 0x1000 | 48)];
        let changed = run_after_methods(arch, &init, Macro::SetVbStride, &[(2 << 16) | 64]);
        assert_eq!(changed, vec![(format, 0x1000 | 64)], "{arch:?}");
        let same = run_after_methods(arch, &init, Macro::SetVbStride, &[(2 << 16) | 48]);
        assert_eq!(same, vec![], "{arch:?}");
    }
}

#[test]
fn vertex_input_flushes_enables_attributes_and_strides_before_the_draw() {
    use driver::nvk::state::{VertexAttribute, VertexBinding};
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        enc.draw(3, 1, 0, 0);
        enc.take_push();
        let bindings = [VertexBinding {
            binding: 0,
            stride: 20,
            input_rate: 0,
            divisor: 1,
        }];
        let attributes = [
            VertexAttribute {
                location: 0,
                binding: 0,
                format: 106,
                offset: 0,
            },
            VertexAttribute {
                location: 1,
                binding: 0,
                format: 103,
                offset: 12,
            },
        ];
        enc.state_mut().set_vertex_input(&bindings, &attributes);
        let first = enc.draw(3, 1, 0, 0);
        // SET_VB_ENABLES (2), two attributes (2 each), instancing and divisor (1 each),
        // SET_VB_STRIDE (2); then the draw macro.
        assert_eq!(first.state.dwords[0], 2 + 4 + 2 + 2, "{arch:?}");
        enc.take_push();
        // The same input again: Mesa 25.0.7's vkCmdSetVertexInputEXT dirties the
        // attributes and strides always, the enabled streams only when they change.
        enc.state_mut().set_vertex_input(&bindings, &attributes);
        assert_eq!(enc.draw(3, 1, 0, 0).state.dwords[0], 4 + 2 + 2, "{arch:?}");
        enc.take_push();
        // Nothing set: nothing flushed.
        assert_eq!(enc.draw(3, 1, 0, 0).state.dwords[0], 0, "{arch:?}");
    }
}

#[test]
fn set_tess_params_passes_nvk_s_test_cases_on_both_generations() {
    let scratch = class::set_mme_shadow_scratch(Scratch::TessParams as u16);
    let tess = class::SET_TESSELLATION_PARAMETERS;
    // nvk_mme_set_tess_params_tests: (initial TESS_PARAMS, parameter, expected methods).
    type Case = (u32, u32, Vec<(u16, u32)>);
    let cases: [Case; 4] = [
        // Nothing changes: nothing written.
        (0, 0xffff_0000, vec![]),
        // TRIANGLE, INTEGER, TRIANGLES_CW, upper left.
        (0, 0xffff_0201, vec![(scratch, 0x0201), (tess, 0x0201)]),
        // Lower left flips CW to CCW...
        (0x0201, 0x1000_1000, vec![(scratch, 0x1201), (tess, 0x0301)]),
        // ... and CCW to CW.
        (0x0301, 0x1000_1000, vec![(scratch, 0x1301), (tess, 0x0201)]),
    ];
    for arch in [Arch::Turing, Arch::Fermi] {
        for (init, param, want) in &cases {
            let got = run_after_methods(arch, &[(scratch, *init)], Macro::SetTessParams, &[*param]);
            assert_eq!(&got, want, "{arch:?} init {init:#x} param {param:#x}");
        }
    }
}

#[test]
fn set_shading_rate_control_passes_nvk_s_test_cases_on_turing() {
    let scratch = class::set_mme_shadow_scratch(Scratch::ShadingRateControl as u16);
    // nvk_mme_set_shading_rate_control_tests: (initial scratch, parameter); NVK's
    // check wants the scratch stored, then all sixteen viewports' control written
    // with both bits' AND.
    for (param, stored, enable) in [(0x0003_0003, 3, 1), (0x0003_0001, 1, 0)] {
        let got = run_after_methods(
            Arch::Turing,
            &[(scratch, 0)],
            Macro::SetShadingRateControl,
            &[param],
        );
        let mut want = vec![(scratch, stored)];
        want.extend((0..16).map(|j| {
            (
                class::SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL + 16 * j,
                enable,
            )
        }));
        assert_eq!(got, want, "param {param:#x}");
    }
    // Before Turing NVK builds it empty, and so does the model: it changes nothing.
    let got = run(
        Arch::Fermi,
        &[],
        Macro::SetShadingRateControl,
        &[0x0003_0003],
    );
    assert_eq!(got, vec![]);
}

#[test]
fn set_anti_alias_passes_nvk_s_test_cases_on_both_generations() {
    use driver::nvk::root;
    let s = |slot: Scratch| class::set_mme_shadow_scratch(slot as u16);
    let aa = s(Scratch::AntiAlias);
    let two = |i: u16| class::set_mme_shadow_scratch(Scratch::SampleMasks2Pass0 as u16 + i);
    let four = |i: u16| class::set_mme_shadow_scratch(Scratch::SampleMasks4Pass0 as u16 + i);
    let lcb = |i: u16| class::load_constant_buffer(i);
    // As NVK's cases list them: LOAD_CONSTANT_BUFFER(0) to (3), the method advancing.
    let masks = |words: [u32; 4]| -> Vec<(u16, u32)> {
        let mut v = vec![(class::LOAD_CONSTANT_BUFFER_OFFSET, root::DRAW_SAMPLE_MASKS)];
        v.extend((0..4).zip(words).map(|(i, w)| (lcb(i), w)));
        v
    };
    let one_sample_a_pass = [0x02_0001, 0x08_0004, 0x20_0010, 0x80_0040];
    // nvk_mme_set_anti_alias_tests: (initial scratch, parameter, expected methods).
    type Case = (Vec<(u16, u32)>, u32, Vec<(u16, u32)>);
    let cases: Vec<Case> = vec![
        // No change: nothing.
        (vec![(aa, 0)], 0xffff_0000, vec![]),
        // Single sample, minSampleShading 1.0.
        (
            vec![(aa, 0xf)],
            0xffff_0000,
            [
                vec![(aa, 0), (class::SET_HYBRID_ANTI_ALIAS_CONTROL, 0x1)],
                masks(one_sample_a_pass),
            ]
            .concat(),
        ),
        // Single sample, minSampleShading 0.25.
        (
            vec![(aa, 0xf)],
            0xffff_0002,
            [
                vec![(aa, 0x2), (class::SET_HYBRID_ANTI_ALIAS_CONTROL, 0x1)],
                masks(one_sample_a_pass),
            ]
            .concat(),
        ),
        // 8 samples, minSampleShading 0.5: four passes.
        (
            vec![
                (aa, 0x1),
                (four(0), 0x03_0003),
                (four(1), 0x0c_000c),
                (four(2), 0x30_0030),
                (four(3), 0xc0_00c0),
            ],
            0x00f0_0030,
            [
                vec![(aa, 0x31), (class::SET_HYBRID_ANTI_ALIAS_CONTROL, 0x14)],
                masks([0x03_0003, 0x0c_000c, 0x30_0030, 0xc0_00c0]),
            ]
            .concat(),
        ),
        // 8 samples, minSampleShading 0.25: two passes.
        (
            vec![
                (aa, 0x30),
                (two(0), 0x0f_000f),
                (two(1), 0x0f_000f),
                (two(2), 0xf0_00f0),
                (two(3), 0xf0_00f0),
            ],
            0x000f_0002,
            [
                vec![(aa, 0x32), (class::SET_HYBRID_ANTI_ALIAS_CONTROL, 0x12)],
                masks([0x0f_000f, 0x0f_000f, 0xf0_00f0, 0xf0_00f0]),
            ]
            .concat(),
        ),
    ];
    for arch in [Arch::Turing, Arch::Fermi] {
        for (init, param, want) in &cases {
            let got = run_after_methods(arch, init, Macro::SetAntiAlias, &[*param]);
            assert_eq!(&got, want, "{arch:?} param {param:#x}");
        }
    }
}

#[test]
fn clear_passes_nvk_s_test_cases_on_both_generations() {
    let view_mask = class::set_mme_shadow_scratch(Scratch::ViewMask as u16);
    let clear = class::CLEAR_SURFACE;
    // nvk_mme_clear_tests: five layers without a view mask; views 0, 1 and 3.
    type Case = (u32, Vec<u32>, Vec<(u16, u32)>);
    let cases: [Case; 2] = [
        (
            0,
            vec![0x3c, 5],
            [0x003c, 0x043c, 0x083c, 0x0c3c, 0x103c]
                .map(|d| (clear, d))
                .to_vec(),
        ),
        (
            0xb,
            vec![0x3c],
            [0x03c, 0x43c, 0xc3c].map(|d| (clear, d)).to_vec(),
        ),
    ];
    for arch in [Arch::Turing, Arch::Fermi] {
        for (mask, params, want) in &cases {
            let got = run_after_methods(arch, &[(view_mask, *mask)], Macro::Clear, params);
            assert_eq!(&got, want, "{arch:?} view mask {mask:#x}");
        }
    }
}

#[test]
fn clear_attachments_sets_values_and_clears_each_rectangle_as_nvk_does() {
    use driver::nvk::clear::{ClearAttachment, ClearRect};
    for arch in [Arch::Turing, Arch::Fermi] {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        let color = ClearAttachment {
            aspect_mask: 1,
            color_attachment: 1,
            value: [1, 2, 3, 4],
        };
        let depth = ClearAttachment {
            aspect_mask: 2,
            color_attachment: 0,
            value: [0.5f32.to_bits(), 0, 0, 0],
        };
        let rect = ClearRect {
            x: 0,
            y: 0,
            width: 64,
            height: 32,
            base_array_layer: 0,
            layer_count: 2,
        };
        let r = enc.clear_attachments(&[color, depth], &[rect]);
        // Control (1), Z value (2: a float too wide for an immediate), colour values
        // (5), rectangle (3), CLEAR with payload and layer count (3).
        assert_eq!(r.dwords, 1 + 2 + 5 + 3 + 3, "{arch:?}");
        let mut gpu = Gpu::new(arch);
        gpu.execute(device.init_push().unwrap().words()).unwrap();
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        let clears: Vec<u32> = gpu
            .state
            .method_log
            .take()
            .unwrap()
            .into_iter()
            .filter(|m| m.mthd == class::CLEAR_SURFACE)
            .map(|m| m.data)
            .collect();
        // Z, RGBA of target 1, two layers.
        let payload = 1 | (0xf << 2) | (1 << 6);
        assert_eq!(clears, vec![payload, payload | 1 << 10], "{arch:?}");
    }
}
