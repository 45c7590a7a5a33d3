//! NVK's graphics state through the encoder, on both MME generations: the methods a
//! dynamic-state change puts before the next draw, in NVK's order and with NVK's
//! values (`nvk_flush_*_state`), an unchanged state never re-emitted, and the cost
//! split by state group.

use driver::class;
use driver::mme::Arch;
use driver::nvk::image::{Image, ImageType, ViewRange};
use driver::nvk::rendering::{DepthStencilAspects, DepthStencilAttachment, RenderArea};
use driver::nvk::state::{DynamicStates, PipelineGroups, Rect, StateGroup, StencilOps, Viewport};
use driver::nvk::{CommandEncoder, Device, RenderingInfo};
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
    // As a rendering begins: its attachment map set, what depends on it dirty.
    enc.set_color_attachments(1);
    enc.state_mut().dirty_render_pass();
    enc.draw(3, 1, 0, 0);
    enc.take_push();
    enc
}

/// `VK_FORMAT_D32_SFLOAT`.
const D32_SFLOAT: u32 = 126;

/// As [`settled`], inside a rendering of a depth attachment (`D32_SFLOAT`, 640x480) and
/// no colour attachment: NVK enables the depth tests only where the rendering has one.
fn settled_with_depth(device: &Device) -> CommandEncoder<'_> {
    let mut enc = CommandEncoder::new(device);
    let image = Image {
        format: D32_SFLOAT,
        extent: [640, 480, 1],
        array_layers: 1,
        mip_levels: 1,
        samples: 1,
        linear: false,
        image_type: ImageType::D2,
        views_2d: false,
        addr: 0x20_0000_0000,
    };
    enc.begin_rendering(&RenderingInfo {
        area: RenderArea {
            x: 0,
            y: 0,
            width: 640,
            height: 480,
        },
        layer_count: 1,
        depth_stencil: Some(DepthStencilAttachment {
            image,
            view: ViewRange {
                format: D32_SFLOAT,
                ..ViewRange::default()
            },
            depth_clear: None,
            stencil_clear: None,
            depth_resolve_mode: 0,
            stencil_resolve_mode: 0,
            resolve_to: None,
            aspects: DepthStencilAspects::of_format(D32_SFLOAT),
        }),
        ..RenderingInfo::default()
    });
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
        let mut enc = settled_with_depth(&device);
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

/// Mesa keeps stencil masks and references in 8 bits (`vk_stencil_test_face_state`):
/// a program's 0xffffffff masks push 0xff (bgfx, MAME's renderer, sets them so), and
/// setting 0x1ff after 0xff changes nothing.
#[test]
fn stencil_masks_and_references_are_eight_bits() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled_with_depth(&device);
        let s = enc.state_mut();
        s.set_stencil_compare_mask(3, u32::MAX);
        s.set_stencil_write_mask(3, u32::MAX);
        s.set_stencil_reference(3, 0x1_01);
        let got = next_draw_state(&mut enc);
        let pushed = |mthd| {
            got.iter()
                .filter(|(m, _)| *m == mthd)
                .map(|(_, d)| *d)
                .collect::<Vec<_>>()
        };
        assert_eq!(pushed(class::SET_STENCIL_FUNC_MASK), [0xff], "{arch:?}");
        assert_eq!(pushed(class::SET_STENCIL_MASK), [0xff], "{arch:?}");
        assert_eq!(pushed(class::SET_STENCIL_FUNC_REF), [0x01], "{arch:?}");

        enc.state_mut().set_stencil_compare_mask(3, 0x1ff);
        let got = next_draw_state(&mut enc);
        assert!(
            !got.iter().any(|(m, _)| *m == class::SET_STENCIL_FUNC_MASK),
            "{arch:?}: {got:x?}"
        );
    }
}

/// Mesa holds the vertex input by location and binding (`vk_vertex_input_state`):
/// attributes given out of location order (bgfx gives them so) are pushed in it.
#[test]
fn vertex_attributes_are_pushed_in_location_order() {
    use driver::nvk::state::{VertexAttribute, VertexBinding};
    const R32G32_SFLOAT: u32 = 103;
    const R8G8B8A8_UNORM: u32 = 37;
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        let attribute = |location, format, offset| VertexAttribute {
            location,
            binding: 0,
            format,
            offset,
        };
        let binding = VertexBinding {
            binding: 0,
            stride: 12,
            input_rate: 0,
            divisor: 1,
        };
        enc.state_mut().set_vertex_input(
            &[binding],
            &[
                attribute(1, R32G32_SFLOAT, 0),
                attribute(0, R8G8B8A8_UNORM, 8),
            ],
        );
        let got = next_draw_state(&mut enc);
        let attributes: Vec<u16> = got
            .iter()
            .map(|(m, _)| *m)
            .filter(|m| {
                (class::SET_VERTEX_ATTRIBUTE_A..class::SET_VERTEX_ATTRIBUTE_A + 128).contains(m)
            })
            .collect();
        assert_eq!(
            attributes,
            [
                class::SET_VERTEX_ATTRIBUTE_A,
                class::SET_VERTEX_ATTRIBUTE_A + 4
            ],
            "{arch:?}"
        );
    }
}

#[test]
fn depth_and_stencil_tests_stay_off_without_the_attachments() {
    // nvk_flush_ds_state: a test enabled is pushed enabled only where the rendering has
    // the attachment it tests (a blit's colour pass under an application's depth test).
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        let s = enc.state_mut();
        s.set_depth_test_enable(true);
        s.set_depth_write_enable(true);
        s.set_depth_bounds_test_enable(true);
        s.set_stencil_test_enable(true);
        let got = next_draw_state(&mut enc);
        let pushed = |mthd| got.iter().find(|(m, _)| *m == mthd).map(|(_, v)| *v);
        for mthd in [
            class::SET_DEPTH_TEST,
            class::SET_DEPTH_WRITE,
            class::SET_DEPTH_BOUNDS_TEST,
            class::SET_STENCIL_TEST,
        ] {
            assert_eq!(pushed(mthd), Some(0), "{arch:?}: {mthd:#x} in {got:x?}");
        }
        // With a depth attachment (and no stencil one) the depth tests go on.
        let mut enc = settled_with_depth(&device);
        let s = enc.state_mut();
        s.set_depth_test_enable(true);
        s.set_stencil_test_enable(true);
        let got = next_draw_state(&mut enc);
        let pushed = |mthd| got.iter().find(|(m, _)| *m == mthd).map(|(_, v)| *v);
        assert_eq!(pushed(class::SET_DEPTH_TEST), Some(1), "{arch:?}");
        assert_eq!(pushed(class::SET_STENCIL_TEST), Some(0), "{arch:?}");
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
        assert_eq!(recorded.dwords as u32, 6 + 6, "state, then the draw macro");
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
        enc.state_mut().bind_pipeline(
            7,
            &DynamicStates::new(all_but_blend_constants.clone()),
            PipelineGroups::ALL,
        );
        let got = next_draw_state(&mut enc);
        assert_eq!(
            got.iter().map(|(m, _)| *m).collect::<Vec<_>>(),
            (0..4)
                .map(|i| class::SET_BLEND_CONST_RED + 4 * i)
                .collect::<Vec<_>>(),
            "{arch:?}"
        );
        // The same pipeline again: nothing.
        enc.state_mut().bind_pipeline(
            7,
            &DynamicStates::new(all_but_blend_constants.clone()),
            PipelineGroups::ALL,
        );
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}");
    }
}

#[test]
fn a_command_buffer_flushes_only_what_was_set_until_execute_commands_dirties_everything() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = CommandEncoder::new(&device);
        // Nothing set yet: Mesa's dynamic state starts with no value set or dirty, so
        // the first draw flushes no state (NVK 25.0.7).
        let first = enc.draw(3, 1, 0, 0);
        assert_eq!(first.state.total_dwords(), 0, "{arch:?}: {first:?}");
        // A viewport set: that alone.
        enc.state_mut().set_viewports(
            0,
            &[Viewport {
                width: 64.0,
                height: 64.0,
                max_depth: 1.0,
                ..Viewport::default()
            }],
        );
        let viewport = enc.draw(3, 1, 0, 0);
        for (i, g) in StateGroup::ALL.iter().enumerate() {
            assert_eq!(
                viewport.state.dwords[i] > 0,
                *g == StateGroup::Viewport,
                "{arch:?} {g:?}: {viewport:?}"
            );
        }
        enc.take_push();
        // After vkCmdExecuteCommands every dynamic-state group the flush emits and every
        // pipeline slot, disabled (root table updates come with their commands; no
        // shaders are bound, so no constant buffers are pushed).
        enc.invalidate_state();
        let after = enc.draw(3, 1, 0, 0);
        for (i, g) in StateGroup::ALL.iter().enumerate() {
            let flushed = !matches!(g, StateGroup::Descriptors | StateGroup::ConstantBuffers);
            assert_eq!(
                after.state.dwords[i] > 0,
                flushed,
                "{arch:?} {g:?}: {after:?}"
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
        let first = enc.bind_descriptor_sets(1, &[0xabcd_0000_1234], &[256], None, None, None);
        let words = enc.take_push();
        let lcb = class::LOAD_CONSTANT_BUFFER;
        let offset = class::LOAD_CONSTANT_BUFFER_OFFSET;
        assert_eq!(
            methods(words.words()),
            vec![
                // struct nvk_buffer_address: the address, the set's size (the
                // model's placeholder), a zero word.
                (offset, root::DESCRIPTOR_SETS + 16),
                (lcb, 0x1234),
                (lcb, 0xabcd),
                (lcb, 4096),
                (lcb, 0),
                (offset, root::DYNAMIC_BUFFERS),
                (lcb, 256),
                (lcb, 0),
                (lcb, 0),
                (lcb, 0),
                (offset, root::SET_DYNAMIC_BUFFER_START),
                // Sets 2..32 start after the one dynamic buffer.
                (lcb, 0x0101_0000),
                (lcb, 0x0101_0101),
                (lcb, 0x0101_0101),
                (lcb, 0x0101_0101),
                (lcb, 0x0101_0101),
                (lcb, 0x0101_0101),
                (lcb, 0x0101_0101),
                (lcb, 0x0101_0101),
            ],
            "{arch:?}"
        );
        assert_eq!(first.dwords, 6 + 6 + 10, "{arch:?}");
        // The same set again: its address is not rewritten.
        let again = enc.bind_descriptor_sets(1, &[0xabcd_0000_1234], &[256], None, None, None);
        assert_eq!(again.dwords, 6 + 10, "{arch:?}");
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
        // One call (increment-once header, the count and the mask). The attachment
        // map is Mesa's default (every attachment at its own location) before and
        // after: no SET_CT_SELECT.
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

#[test]
fn dynamic_state_numbers_follow_the_registry() {
    use driver::nvk::state::StateBit::*;
    // VkDynamicState values as vk.xml numbers them (extension 456's offsets for the
    // extended dynamic state 3 ones), with the bits Mesa gives each.
    let registry: [(&str, u32, &[driver::nvk::state::StateBit]); 12] = [
        (
            "RASTERIZATION_SAMPLES_EXT",
            1_000_455_005,
            &[MsRasterizationSamples],
        ),
        (
            "CONSERVATIVE_RASTERIZATION_MODE_EXT",
            1_000_455_014,
            &[RsConservativeMode],
        ),
        (
            "EXTRA_PRIMITIVE_OVERESTIMATION_SIZE_EXT",
            1_000_455_015,
            &[RsExtraPrimitiveOverestimationSize],
        ),
        ("DEPTH_CLIP_ENABLE_EXT", 1_000_455_016, &[RsDepthClipEnable]),
        (
            "SAMPLE_LOCATIONS_ENABLE_EXT",
            1_000_455_017,
            &[MsSampleLocationsEnable],
        ),
        ("COLOR_BLEND_ADVANCED_EXT", 1_000_455_018, &[]),
        (
            "PROVOKING_VERTEX_MODE_EXT",
            1_000_455_019,
            &[RsProvokingVertex],
        ),
        ("LINE_RASTERIZATION_MODE_EXT", 1_000_455_020, &[RsLineMode]),
        (
            "LINE_STIPPLE_ENABLE_EXT",
            1_000_455_021,
            &[RsLineStippleEnable],
        ),
        (
            "DEPTH_CLIP_NEGATIVE_ONE_TO_ONE_EXT",
            1_000_455_022,
            &[VpDepthClipNegativeOneToOne],
        ),
        ("SAMPLE_LOCATIONS_EXT", 1_000_143_000, &[MsSampleLocations]),
        ("FRAGMENT_SHADING_RATE_KHR", 1_000_226_000, &[Fsr]),
    ];
    for (name, value, bits) in registry {
        assert_eq!(
            driver::nvk::state::StateBit::of_vk_dynamic_state(value),
            bits,
            "VK_DYNAMIC_STATE_{name}"
        );
    }
}

#[test]
fn a_rendering_selects_the_color_targets_once() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        // vkCmdBeginRendering with three attachments: the first three locations are
        // set (as they were, Mesa's default map), the five past them keep theirs; the
        // map is dirty with the rendering (nvk_cmd_buffer_dirty_render_pass), so the
        // next draw selects all eight locations, each its own target.
        enc.set_color_attachments(3);
        enc.state_mut().dirty_render_pass();
        let got = next_draw_state(&mut enc);
        let want = 8 | (0..8).fold(0, |w, l| w | (l << (4 + 3 * l)));
        assert!(
            got.contains(&(class::SET_CT_SELECT, want)),
            "{arch:?}: {got:x?}"
        );
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}: unchanged");
    }
}

#[test]
fn the_rasterization_samples_set_the_sample_layout_and_locations() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        enc.state_mut().set_rasterization_samples(4);
        let got = next_draw_state(&mut enc);
        // No attachment gives the rendering a sample count, so the draw sets the
        // sample layout (2X2) first.
        assert_eq!(got[0], (class::SET_ANTI_ALIAS, 2), "{arch:?}");
        // The standard 4x locations in sixteenths: (6,2), (14,6), (2,10), (10,14).
        let locations = 0xea_a2_6e_26;
        let root = got
            .iter()
            .position(|m| {
                *m == (
                    class::LOAD_CONSTANT_BUFFER_OFFSET,
                    driver::nvk::root::DRAW_SAMPLE_LOCATIONS,
                )
            })
            .expect("the root table's sample locations");
        assert_eq!(got[root + 1].1, locations, "{arch:?}");
        assert_eq!(got[root + 2].1, 0, "{arch:?}");
        let positions: Vec<(u16, u32)> = (0..4)
            .map(|i| (class::SET_ANTI_ALIAS_SAMPLE_POSITIONS + 4 * i, locations))
            .collect();
        assert_eq!(got[root + 3..root + 7], positions[..], "{arch:?}");
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}: unchanged");
    }
}

#[test]
fn conservative_rasterization_is_enabled_and_disabled() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        enc.state_mut().set_conservative_mode(1);
        enc.state_mut().set_extra_primitive_overestimation_size(0.5);
        // Bloat 2 (half a pixel in quarters), pre-snap both, a 512 uncertainty region.
        assert_eq!(
            next_draw_state(&mut enc),
            vec![
                (
                    class::SET_CONSERVATIVE_RASTER_CONTROL,
                    2 | (1 << 8) | (1 << 12) | (3 << 16)
                ),
                (class::SET_CONSERVATIVE_RASTER, 1),
            ],
            "{arch:?}"
        );
        enc.state_mut().set_conservative_mode(0);
        assert_eq!(
            next_draw_state(&mut enc),
            vec![(class::SET_CONSERVATIVE_RASTER, 0)],
            "{arch:?}"
        );
    }
}

#[test]
fn a_fragment_shading_rate_is_set_on_turing_only() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        // 2x2 fragments, both combiners KEEP: every index maps to PS_X1_PER_2X2 (8).
        enc.state_mut().set_fragment_shading_rate((2, 2), [0, 0]);
        let got = next_draw_state(&mut enc);
        if arch == Arch::Fermi {
            assert_eq!(got, vec![], "VOLTA_A has no variable-rate shading");
            continue;
        }
        assert_eq!(got.len(), 16 * 2 + 1, "{got:x?}");
        for j in 0..16u16 {
            let a = class::set_variable_pixel_rate_shading_index_to_rate_a(j);
            assert_eq!(got[2 * j as usize], (a, 0x8888_8888));
            assert_eq!(got[2 * j as usize + 1], (a + 4, 0x8888_8888));
        }
        let call = class::call_mme_macro(driver::nvk::Macro::SetShadingRateControl.id());
        assert_eq!(got[32], (call, 0x0001_0001), "the macro turns it on");
        enc.state_mut().set_fragment_shading_rate((1, 1), [0, 0]);
        assert_eq!(next_draw_state(&mut enc), vec![(call, 0x0001_0000)]);
    }
}

#[test]
fn a_pipeline_without_an_attachment_masks_its_writes() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        enc.set_color_attachments(2);
        next_draw_state(&mut enc);
        // A pipeline whose rendering has a format for attachment 0 only.
        enc.state_mut().set_rp_attachments(0b01);
        let write_mask = class::call_mme_macro(driver::nvk::Macro::SetWriteMask.id());
        assert_eq!(
            next_draw_state(&mut enc),
            vec![(write_mask, 2), (write_mask + 4, 0xf)],
            "{arch:?}: attachment 1 writes nothing"
        );
        enc.state_mut().set_rp_attachments(0b01);
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}: unchanged");
    }
}

#[test]
fn a_pipeline_resets_the_states_the_trace_holds_no_value_for() {
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        enc.state_mut()
            .bind_pipeline(1, &DynamicStates::new([1_000_455_014]), PipelineGroups::ALL);
        enc.state_mut().set_conservative_mode(1);
        next_draw_state(&mut enc);
        // A pipeline that keeps conservative rasterization static turns it off (the
        // default: the trace has no VkPipelineRasterizationConservativeStateCreateInfoEXT).
        enc.state_mut()
            .bind_pipeline(2, &DynamicStates::default(), PipelineGroups::ALL);
        let got = next_draw_state(&mut enc);
        assert!(
            got.contains(&(class::SET_CONSERVATIVE_RASTER, 0)),
            "{arch:?}: {got:x?}"
        );
        // Another pipeline keeping it static leaves it off: nothing for it.
        enc.state_mut()
            .bind_pipeline(3, &DynamicStates::default(), PipelineGroups::ALL);
        let got = next_draw_state(&mut enc);
        assert!(
            !got.iter()
                .any(|(m, _)| *m == class::SET_CONSERVATIVE_RASTER),
            "{arch:?}: {got:x?}"
        );
    }
}

#[test]
fn a_pipeline_with_the_same_static_state_emits_nothing_and_one_that_differs_only_its_change() {
    use driver::nvk::state::DynamicState;
    const CULL_BACK: u32 = 2;
    for arch in ARCHES {
        let device = Device::for_arch(arch);
        let mut enc = settled(&device);
        let values = DynamicState {
            cull_mode: CULL_BACK,
            depth_test_enable: true,
            depth_write_enable: true,
            ..DynamicState::default()
        };
        enc.state_mut().bind_pipeline_with_state(
            1,
            &DynamicStates::default(),
            &values,
            PipelineGroups::ALL,
        );
        let first = next_draw_state(&mut enc);
        assert!(
            first.contains(&(class::OGL_SET_CULL, 1)),
            "{arch:?}: {first:x?}"
        );
        // Another pipeline with the same values: Mesa copies them, nothing changed.
        enc.state_mut().bind_pipeline_with_state(
            2,
            &DynamicStates::default(),
            &values,
            PipelineGroups::ALL,
        );
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}");
        // One that culls nothing: the cull enable alone.
        let no_cull = DynamicState {
            cull_mode: 0,
            ..values.clone()
        };
        enc.state_mut().bind_pipeline_with_state(
            3,
            &DynamicStates::default(),
            &no_cull,
            PipelineGroups::ALL,
        );
        assert_eq!(
            next_draw_state(&mut enc),
            vec![(class::OGL_SET_CULL, 0)],
            "{arch:?}"
        );
        // A pipeline that makes the cull mode dynamic keeps what the command set.
        enc.state_mut().set_cull_mode(CULL_BACK);
        next_draw_state(&mut enc);
        const CULL_MODE: u32 = 1_000_267_000;
        enc.state_mut().bind_pipeline_with_state(
            4,
            &DynamicStates::new([CULL_MODE]),
            &no_cull,
            PipelineGroups::ALL,
        );
        assert_eq!(next_draw_state(&mut enc), vec![], "{arch:?}");
    }
}
