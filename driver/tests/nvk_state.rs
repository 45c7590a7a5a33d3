//! NVK's graphics state through the encoder, on both MME generations: the methods a
//! dynamic-state change puts before the next draw, in NVK's order and with NVK's
//! values (`nvk_flush_*_state`), an unchanged state never re-emitted, and the cost
//! split by state group.

use driver::class;
use driver::mme::Arch;
use driver::nvk::state::{Rect, StateGroup, StencilOps, Viewport};
use driver::nvk::{CommandEncoder, Device};
use driver::push::{self, MethodWrite};

/// The method writes of `words`.
fn methods(words: &[u32]) -> Vec<(u16, u32)> {
    push::parse(words)
        .map(|w| {
            let MethodWrite { mthd, data, .. } = w.expect("the encoder's words parse");
            (mthd, data)
        })
        .collect()
}

/// An encoder whose first draw has already flushed the initial state, so what a test
/// sets next is all the next draw flushes.
fn settled(device: &Device) -> CommandEncoder<'_> {
    let mut enc = CommandEncoder::new(device);
    enc.draw(3, 1, 0, 0);
    enc.take_push();
    enc
}

/// The state methods `enc`'s next draw emits, before its macro call.
fn next_draw_state(enc: &mut CommandEncoder<'_>) -> Vec<(u16, u32)> {
    let recorded = enc.draw(3, 1, 0, 0);
    let words = enc.take_push();
    let all = methods(words.words());
    let state = recorded.state.total_methods() as usize;
    assert!(
        all[state].0 >= class::CALL_MME_MACRO,
        "the draw macro follows the state: {all:x?}"
    );
    all[..state].to_vec()
}

const ARCHES: [Arch; 2] = [Arch::Turing, Arch::Fermi];

#[test]
fn a_viewport_change_emits_nvk_viewport_methods_once() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        let vp = Viewport {
            x: 0.0,
            y: 0.0,
            width: 640.0,
            height: 480.0,
            min_depth: 0.0,
            max_depth: 1.0,
        };
        enc.state_mut().set_viewports(0, &[vp]);
        let f = |v: f32| v.to_bits();
        assert_eq!(
            next_draw_state(&mut enc),
            vec![
                (class::set_viewport_scale_x(0), f(320.0)),
                (class::set_viewport_scale_x(0) + 4, f(240.0)),
                (class::set_viewport_scale_x(0) + 8, f(1.0)),
                (class::set_viewport_scale_x(0) + 12, f(320.0)),
                (class::set_viewport_scale_x(0) + 16, f(240.0)),
                (class::set_viewport_scale_x(0) + 20, f(0.0)),
                (class::set_viewport_clip_horizontal(0), 640 << 16),
                (class::set_viewport_clip_horizontal(0) + 4, 480 << 16),
                (class::set_viewport_clip_horizontal(0) + 8, f(0.0)),
                (class::set_viewport_clip_horizontal(0) + 12, f(1.0)),
                (
                    class::set_viewport_coordinate_swizzle(0),
                    class::VIEWPORT_SWIZZLE_IDENTITY
                ),
            ],
            "{arch:?}"
        );
        // The same viewport again changes nothing: the next draw emits no state.
        enc.state_mut().set_viewports(0, &[vp]);
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}");
    }
}

#[test]
fn scissors_depth_stencil_and_raster_state_take_nvk_encodings() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        let s = enc.state_mut();
        s.set_scissors(
            0,
            &[Rect {
                x: 8,
                y: 16,
                width: 100,
                height: 50,
            }],
        );
        s.set_depth_test_enable(true);
        s.set_depth_compare_op(3); // VK_COMPARE_OP_LESS_OR_EQUAL
        s.set_cull_mode(2); // VK_CULL_MODE_BACK_BIT
        s.set_front_face(1); // VK_FRONT_FACE_CLOCKWISE
        s.set_stencil_op(
            3,
            StencilOps {
                fail: 0,
                pass: 2,
                depth_fail: 1,
                compare: 7,
            },
        );
        let got = next_draw_state(&mut enc);
        // In NVK's flush order: viewport group, rasterizer, then depth/stencil.
        assert_eq!(
            got,
            vec![
                (class::set_scissor_enable(0), 1),
                (class::set_scissor_enable(0) + 4, 8 | (108 << 16)),
                (class::set_scissor_enable(0) + 8, 16 | (66 << 16)),
                (class::OGL_SET_CULL, 1),
                (class::OGL_SET_CULL_FACE, 0x405),
                (class::OGL_SET_FRONT_FACE, 0x900),
                (class::SET_DEPTH_TEST, 1),
                (class::SET_DEPTH_FUNC, 0x203),
                (class::SET_STENCIL_OP_FAIL, 1),
                (class::SET_STENCIL_OP_FAIL + 4, 2),
                (class::SET_STENCIL_OP_FAIL + 8, 3),
                (class::SET_STENCIL_OP_FAIL + 12, 0x207),
                (class::SET_BACK_STENCIL_OP_FAIL, 1),
                (class::SET_BACK_STENCIL_OP_FAIL + 4, 2),
                (class::SET_BACK_STENCIL_OP_FAIL + 8, 3),
                (class::SET_BACK_STENCIL_OP_FAIL + 12, 0x207),
            ],
            "{arch:?}"
        );
    }
}

#[test]
fn a_draw_s_state_cost_is_split_by_group() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        enc.state_mut().set_blend_constants([0.5, 0.25, 0.0, 1.0]);
        enc.state_mut().set_depth_write_enable(true);
        let recorded = enc.draw(3, 1, 0, 0);
        let group = |g: StateGroup| {
            let i = StateGroup::ALL.iter().position(|x| *x == g).unwrap();
            (recorded.state.methods[i], recorded.state.dwords[i])
        };
        // Four blend constants under one header; one immediate depth write.
        assert_eq!(group(StateGroup::Blend), (4, 5), "{arch:?}");
        assert_eq!(group(StateGroup::DepthStencil), (1, 1), "{arch:?}");
        assert_eq!(group(StateGroup::Viewport), (0, 0), "{arch:?}");
        assert_eq!(recorded.dwords as u32, 6 + 7, "state, then the draw macro");
    }
}

#[test]
fn binding_a_pipeline_re_emits_only_what_it_keeps_static() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        // Every state of this model dynamic except the blend constants (VkDynamicState 4).
        let all_but_blend_constants: Vec<u32> = driver::nvk::state::StateBit::VK_DYNAMIC_STATES
            .into_iter()
            .filter(|s| *s != 4)
            .collect();
        enc.state_mut().bind_pipeline(7, &all_but_blend_constants);
        let got = next_draw_state(&mut enc);
        assert_eq!(
            got.iter().map(|(m, _)| *m).collect::<Vec<_>>(),
            (0..4)
                .map(|i| class::SET_BLEND_CONST_RED + 4 * i)
                .collect::<Vec<_>>(),
            "{arch:?}"
        );
        // The same pipeline again: nothing.
        enc.state_mut().bind_pipeline(7, &all_but_blend_constants);
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}");
    }
}

#[test]
fn the_first_draw_of_a_command_buffer_flushes_every_group() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        let first = enc.draw(3, 1, 0, 0);
        // Every dynamic-state group the flush emits (root table updates come with their
        // commands; no shaders are bound, so none and no constant buffers are pushed).
        for (i, g) in StateGroup::ALL.iter().enumerate() {
            let flushed = !matches!(
                g,
                StateGroup::Descriptors | StateGroup::Shaders | StateGroup::ConstantBuffers
            );
            assert_eq!(
                first.state.dwords[i] > 0,
                flushed,
                "{arch:?} {g:?}: {first:?}"
            );
        }
        // No scissors set: all 16 are disabled, one immediate each.
        let words = enc.finish();
        let disabled = methods(words.words())
            .into_iter()
            .filter(|(m, d)| {
                (class::SET_SCISSOR_ENABLE..class::set_scissor_enable(16)).contains(m)
                    && (m - class::SET_SCISSOR_ENABLE) % 16 == 0
                    && *d == 0
            })
            .count();
        assert_eq!(disabled, 16, "{arch:?}");
    }
}

#[test]
fn descriptor_binds_and_push_constants_write_the_root_table_as_nvk_pushes_it() {
    use driver::nvk::root;
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        // A new set at 1 with one dynamic offset: the set's address, the dynamic buffer,
        // then every set's first dynamic buffer, each under its own increment-once header.
        let first = enc.bind_descriptor_sets(1, &[0xabcd_0000_1234], &[256], None);
        let words = enc.take_push();
        let lcb = class::LOAD_CONSTANT_BUFFER;
        let offset = class::LOAD_CONSTANT_BUFFER_OFFSET;
        assert_eq!(
            methods(words.words()),
            vec![
                (offset, root::DESCRIPTOR_SETS + 8),
                (lcb, 0x1234),
                (lcb, 0xabcd),
                (offset, root::DYNAMIC_BUFFERS),
                (lcb, 256),
                (lcb, 0),
                (lcb, 0),
                (lcb, 0),
                (offset, root::SET_DYNAMIC_BUFFER_START),
                // Sets 2..8 start after the one dynamic buffer.
                (lcb, 0x0101_0000),
                (lcb, 0x0101_0101),
            ],
            "{arch:?}"
        );
        assert_eq!(first.dwords, 4 + 6 + 4, "{arch:?}");
        // The same set again: its address is not rewritten.
        let again = enc.bind_descriptor_sets(1, &[0xabcd_0000_1234], &[256], None);
        assert_eq!(again.dwords, 6 + 4, "{arch:?}");
        enc.take_push();
        // Push constants: one header, the offset, the words.
        let pc = enc.push_constants(8, &[1, 2, 3]);
        let words = enc.take_push();
        assert_eq!(pc.dwords, 5, "{arch:?}");
        assert_eq!(
            methods(words.words()),
            vec![
                (offset, root::PUSH_CONSTANTS + 8),
                (lcb, 1),
                (lcb, 2),
                (lcb, 3)
            ],
            "{arch:?}"
        );
    }
}

#[test]
fn barriers_push_nvk_s_waits_and_invalidations() {
    use driver::nvk::Barrier;
    use driver::push::{SUBC_3D, SUBC_COMPUTE};
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        // Colour output → fragment shader reads: wait for idle, invalidate textures.
        enc.pipeline_barrier(&[Barrier {
            src_stages: 0x400,
            src_access: 0x100,
            dst_stages: 0x80,
            dst_access: 0x20,
        }]);
        let words = enc.take_push();
        let writes: Vec<_> = push::parse(words.words()).map(Result::unwrap).collect();
        let got: Vec<(u8, u16, u32)> = writes.iter().map(|w| (w.subc, w.mthd, w.data)).collect();
        assert_eq!(
            got,
            vec![
                (SUBC_3D, class::WAIT_FOR_IDLE, 0),
                (SUBC_3D, class::INVALIDATE_TEXTURE_DATA_CACHE_NO_WFI, 0),
            ],
            "{arch:?}"
        );
        assert_eq!(words.len(), 2, "two immediates");
        // Compute storage writes → indirect reads: flush on compute, the MME's data
        // and the compute QMDs invalidated; MME_DMA_SYSMEMBAR on Turing only.
        enc.pipeline_barrier(&[Barrier {
            src_stages: 0x800,
            src_access: 0x40,
            dst_stages: 0x2,
            dst_access: 0x1,
        }]);
        let words = enc.take_push();
        let got: Vec<(u8, u16)> = push::parse(words.words())
            .map(|w| w.map(|w| (w.subc, w.mthd)).unwrap())
            .collect();
        let mut want = vec![
            (SUBC_COMPUTE, class::INVALIDATE_SHADER_CACHES),
            (SUBC_3D, class::SET_REFERENCE),
        ];
        if arch == Arch::Turing {
            want.push((SUBC_3D, class::MME_DMA_SYSMEMBAR));
        }
        want.push((SUBC_COMPUTE, class::INVALIDATE_SKED_CACHES));
        assert_eq!(got, want, "{arch:?}");
        // An execution dependency alone pushes nothing.
        let r = enc.pipeline_barrier(&[Barrier {
            src_stages: 0x10000,
            src_access: 0,
            dst_stages: 0x10000,
            dst_access: 0,
        }]);
        assert_eq!(r.dwords, 0, "{arch:?}");
    }
}

#[test]
fn write_masks_go_through_set_write_mask_on_both_generations() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut gpu = driver::gpu::Gpu::new(arch);
        gpu.execute(device.init_push().unwrap().words()).unwrap();
        let mut enc = settled(&device);
        enc.set_color_attachments(2);
        enc.state_mut().set_write_masks(0, &[0xf, 0x3]);
        let r = enc.draw(3, 1, 0, 0);
        // One call: increment-once header, the count and the mask.
        let blend = StateGroup::ALL
            .iter()
            .position(|g| *g == StateGroup::Blend)
            .unwrap();
        assert_eq!(r.state.dwords[blend], 3, "{arch:?}");
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        let from_macro: Vec<(u16, u32)> = gpu
            .state
            .method_log
            .take()
            .unwrap()
            .into_iter()
            .filter(|m| {
                m.from_macro
                    && (m.mthd == class::SET_SINGLE_CT_WRITE_CONTROL
                        || (class::SET_CT_WRITE..class::SET_CT_WRITE + 32).contains(&m.mthd))
            })
            .map(|m| (m.mthd, m.data))
            .collect();
        // R, G, B, A to bits 0, 4, 8, 12 per target; NVK's common-mask test (mask + 0xf
        // against the first target's bits) never holds, so single-target control is 0.
        assert_eq!(
            from_macro,
            vec![
                (class::SET_CT_WRITE, 0x1111),
                (class::SET_CT_WRITE + 4, 0x0011),
                (class::SET_SINGLE_CT_WRITE_CONTROL, 0),
            ],
            "{arch:?}"
        );
    }
}
