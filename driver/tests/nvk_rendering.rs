//! Beginning and ending rendering as NVK emits it (nvk_CmdBeginRendering,
//! nvk_CmdEndRendering, the conditional-rendering entry points), run on both MME
//! generations: the method stream a render pass's begin writes, its load-op clears
//! through the `CLEAR` macro, the resolve's cache invalidation, and the copy-engine
//! predicate copy of conditional rendering.

use driver::class::{self, copy};
use driver::gpu::LoggedMethod;
use driver::mme::Arch;
use driver::nvk::image::{Image, ImageType, ViewRange};
use driver::nvk::rendering::{
    ColorAttachment, DepthStencilAspects, DepthStencilAttachment, RenderArea,
};
use driver::nvk::{CommandEncoder, Device, Macro, RenderingInfo, Scratch};
use driver::push::{SUBC_3D, SUBC_COMPUTE, SUBC_COPY};

mod common;
use common::run_encoded as run;

const B8G8R8A8_UNORM: u32 = 44;
const D32_SFLOAT: u32 = 126;

fn image(format: u32, samples: u32) -> Image {
    Image {
        format,
        extent: [640, 480, 1],
        array_layers: 4,
        mip_levels: 1,
        samples,
        linear: false,
        image_type: ImageType::D2,
        views_2d: false,
        addr: 0x20_0000_0000,
    }
}

fn color(clear: Option<[u32; 4]>, resolve: bool) -> ColorAttachment {
    ColorAttachment {
        image: image(B8G8R8A8_UNORM, 1),
        view: ViewRange {
            format: B8G8R8A8_UNORM,
            ..ViewRange::default()
        },
        clear,
        // VK_RESOLVE_MODE_AVERAGE_BIT for a resolving UNORM colour.
        resolve_mode: if resolve { 2 } else { 0 },
        resolve_to: None,
        loads: clear.is_none(),
        stores: true,
    }
}

fn depth(clear: Option<u32>) -> DepthStencilAttachment {
    DepthStencilAttachment {
        image: image(D32_SFLOAT, 1),
        view: ViewRange {
            format: D32_SFLOAT,
            ..ViewRange::default()
        },
        depth_clear: clear,
        stencil_clear: None,
        depth_resolve_mode: 0,
        stencil_resolve_mode: 0,
        resolve_to: None,
        aspects: DepthStencilAspects::of_format(D32_SFLOAT),
    }
}

fn rendering(view_mask: u32, colors: Vec<Option<ColorAttachment>>) -> RenderingInfo {
    RenderingInfo {
        flags: 0,
        area: RenderArea {
            x: 0,
            y: 0,
            width: 640,
            height: 480,
        },
        layer_count: 1,
        view_mask,
        colors,
        depth_stencil: Some(depth(Some(1.0f32.to_bits()))),
    }
}

fn writes_of(log: &[LoggedMethod], subc: u8, mthd: u16) -> Vec<u32> {
    log.iter()
        .filter(|m| m.subc == subc && m.mthd == mthd)
        .map(|m| m.data)
        .collect()
}

#[test]
fn a_rendering_binds_eight_colour_targets_the_depth_target_and_the_sample_layout() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let info = rendering(0, vec![Some(color(None, false))]);
        let log = run(arch, |enc| {
            enc.begin_rendering(&info);
        });
        let pushed: Vec<u16> = log
            .iter()
            .filter(|m| !m.from_macro)
            .map(|m| m.mthd)
            .collect();
        // The view mask, then the surface clip.
        assert_eq!(
            pushed[..3],
            [
                class::set_mme_shadow_scratch(Scratch::ViewMask as u16),
                class::SET_SURFACE_CLIP_HORIZONTAL,
                class::SET_SURFACE_CLIP_HORIZONTAL + 4,
            ],
            "{arch:?}"
        );
        assert_eq!(writes_of(&log, SUBC_3D, 0x0ff4), [640 << 16], "{arch:?}");
        // All eight targets, each with its nine methods and its compression.
        for i in 0..8u16 {
            let a = class::set_color_target_a(i);
            for m in 0..class::COLOR_TARGET_METHODS as u16 {
                assert_eq!(
                    writes_of(&log, SUBC_3D, a + 4 * m).len(),
                    1,
                    "{arch:?} RT {i}"
                );
            }
            let format = writes_of(&log, SUBC_3D, a + 16)[0];
            let compression = writes_of(&log, SUBC_3D, class::set_color_compression(i));
            if i == 0 {
                // B8G8R8A8_UNORM is A8R8G8B8; a 640-wide row is 640 elements.
                assert_eq!(format, 0xcf, "{arch:?}");
                assert_eq!(writes_of(&log, SUBC_3D, a + 8), [640], "{arch:?}");
                assert_eq!(writes_of(&log, SUBC_3D, a)[0], 0x20, "{arch:?}");
                assert_eq!(compression, [0], "{arch:?}");
            } else {
                assert_eq!(format, class::COLOR_TARGET_FORMAT_DISABLED, "{arch:?}");
                assert_eq!(compression, [1], "{arch:?}");
            }
        }
        // The depth target: ZF32, selected, its size and layer.
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_ZT_A + 8),
            [0x0a],
            "{arch:?}"
        );
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_ZT_SELECT),
            [1],
            "{arch:?}"
        );
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_ZT_SIZE_A + 8),
            [1],
            "{arch:?}"
        );
        // One sample: mode 1X1 and the SET_ANTI_ALIAS macro, which finds the state
        // a new command buffer has and emits nothing.
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_ANTI_ALIAS),
            [0],
            "{arch:?}"
        );
        let call = class::call_mme_macro(Macro::SetAntiAlias.id());
        assert_eq!(writes_of(&log, SUBC_3D, call), [0xf0 << 16], "{arch:?}");
        assert!(
            !log.iter()
                .any(|m| m.from_macro && m.mthd == class::SET_HYBRID_ANTI_ALIAS_CONTROL),
            "{arch:?}"
        );
        // With the depth target's load op CLEAR: rendering forced on around one
        // CLEAR_SURFACE of depth.
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_RENDER_ENABLE_OVERRIDE),
            [1, 0],
            "{arch:?}"
        );
        assert_eq!(
            writes_of(&log, SUBC_3D, class::CLEAR_SURFACE),
            [0b1],
            "{arch:?}"
        );
    }
}

#[test]
fn load_op_clears_go_through_the_clear_macro_once_per_view() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let info = rendering(
            0b101,
            vec![
                Some(color(Some([1, 2, 3, 4]), false)),
                None,
                Some(color(Some([5, 6, 7, 8]), false)),
            ],
        );
        let log = run(arch, |enc| {
            enc.begin_rendering(&info);
        });
        // Targets span the views up to the last one: 3 layers.
        assert_eq!(
            writes_of(&log, SUBC_3D, class::set_color_target_a(0) + 24),
            [3],
            "{arch:?}"
        );
        // Attachment 0 with depth, then attachment 2; each for views 0 and 2.
        let clears = writes_of(&log, SUBC_3D, class::CLEAR_SURFACE);
        let layer = |payload: u32| payload >> 10;
        let target = |payload: u32| (payload >> 6) & 0xf;
        assert_eq!(clears.len(), 4, "{arch:?}");
        assert_eq!(
            clears
                .iter()
                .map(|p| (target(*p), layer(*p), p & 1))
                .collect::<Vec<_>>(),
            [(0, 0, 1), (0, 2, 1), (2, 0, 0), (2, 2, 0)],
            "{arch:?}"
        );
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_COLOR_CLEAR_VALUE),
            [1, 5],
            "{arch:?}"
        );
    }
}

#[test]
fn a_resumed_rendering_does_not_clear_and_a_resolve_invalidates_the_texture_cache_and_draws() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let mut resumed = rendering(0, vec![Some(color(Some([0; 4]), true))]);
        resumed.flags = driver::nvk::rendering::RENDERING_RESUMING;
        let log = run(arch, |enc| {
            enc.begin_rendering(&resumed);
            enc.end_rendering();
        });
        assert!(writes_of(&log, SUBC_3D, class::CLEAR_SURFACE).is_empty());
        assert_eq!(
            writes_of(&log, SUBC_3D, class::INVALIDATE_TEXTURE_DATA_CACHE),
            [0],
            "{arch:?}"
        );
        // nvk_meta_resolve_rendering: vk_meta's shaders bound (vertex and pixel slots)
        // and one rectangle drawn into the resolve target, inside NVK 25.0.7's meta
        // bracket: rendering forced on and statistics off, then both undone.
        assert_eq!(writes_of(&log, SUBC_3D, class::BEGIN).len(), 1, "{arch:?}");
        let shader_slot = |ty: u16| class::SET_PIPELINE_SHADER + class::PIPELINE_SLOT_STRIDE * ty;
        assert_eq!(writes_of(&log, SUBC_3D, shader_slot(1)), [1 | 1 << 4]);
        assert_eq!(writes_of(&log, SUBC_3D, shader_slot(5)), [1 | 5 << 4]);
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_RENDER_ENABLE_OVERRIDE),
            [1, 0],
            "{arch:?}"
        );
        assert_eq!(
            writes_of(&log, SUBC_3D, class::SET_STATISTICS_COUNTER),
            [0, 0x7fff],
            "{arch:?}"
        );
        // vk_meta_draw_volume: a vertex buffer of six 16-byte vertices bound (its
        // binding, address and size after the macro call), then bound back to the
        // application's (none) at the bracket's end.
        let bind_vb_data = class::CALL_MME_DATA + 8 * driver::nvk::Macro::BindVb.id();
        let sizes: Vec<u32> = writes_of(&log, SUBC_3D, bind_vb_data)
            .chunks(3)
            .map(|c| c[2])
            .collect();
        assert_eq!(sizes, [96, 0], "{arch:?}");
        let plain = rendering(0, vec![Some(color(None, false))]);
        let log = run(arch, |enc| {
            enc.begin_rendering(&plain);
            enc.end_rendering();
        });
        assert!(writes_of(&log, SUBC_3D, class::INVALIDATE_TEXTURE_DATA_CACHE).is_empty());
        assert!(writes_of(&log, SUBC_3D, class::BEGIN).is_empty());
    }
}

#[test]
fn a_rendering_makes_the_next_draw_flush_blend_and_depth_state_again() {
    let device = Device::for_arch(Arch::Turing);
    let mut enc = CommandEncoder::new(&device);
    let info = rendering(0, vec![Some(color(None, false))]);
    enc.begin_rendering(&info);
    enc.draw(3, 1, 0, 0);
    let second = enc.draw(3, 1, 0, 0);
    enc.end_rendering();
    enc.begin_rendering(&info);
    let after_rendering = enc.draw(3, 1, 0, 0);
    assert_eq!(second.state.total_dwords(), 0, "nothing changed");
    assert!(
        after_rendering.state.dwords[4] > 0 && after_rendering.state.dwords[3] > 0,
        "blend and depth/stencil re-emitted: {:?}",
        after_rendering.state
    );
}

#[test]
fn conditional_rendering_copies_the_predicate_and_sets_both_classes() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let log = run(arch, |enc| {
            enc.begin_conditional_rendering(0x30_0000_0040, false);
            enc.draw(3, 1, 0, 0);
            enc.end_conditional_rendering();
        });
        assert_eq!(
            writes_of(&log, SUBC_COPY, copy::OFFSET_IN_UPPER),
            [0x30],
            "{arch:?}"
        );
        assert_eq!(
            writes_of(&log, SUBC_COPY, copy::LAUNCH_DMA),
            [0x785],
            "{arch:?}"
        );
        // RENDER_IF_NOT_EQUAL, then TRUE at the end, on the 3D and compute classes.
        for subc in [SUBC_3D, SUBC_COMPUTE] {
            assert_eq!(
                writes_of(&log, subc, class::SET_RENDER_ENABLE_A + 8),
                [4, 1],
                "{arch:?}"
            );
        }
    }
}

#[test]
fn the_sample_layout_follows_the_attachments_samples() {
    let mut info = rendering(0, vec![Some(color(None, false))]);
    if let Some(c) = &mut info.colors[0] {
        c.image.samples = 4;
    }
    if let Some(d) = &mut info.depth_stencil {
        d.image.samples = 4;
    }
    let log = run(Arch::Turing, |enc| {
        enc.begin_rendering(&info);
    });
    // 2X2, its two-pass masks in scratch, and SET_ANTI_ALIAS with log2(4) at 7:4.
    assert_eq!(writes_of(&log, SUBC_3D, class::SET_ANTI_ALIAS), [2]);
    let masks = class::set_mme_shadow_scratch(Scratch::SampleMasks2Pass0 as u16);
    assert_eq!(writes_of(&log, SUBC_3D, masks), [0x000a_0005]);
    let call = class::call_mme_macro(Macro::SetAntiAlias.id());
    assert_eq!(writes_of(&log, SUBC_3D, call), [(0xf0 << 16) | 0x20]);
    // Four samples in one pass: the hybrid control says one pass.
    assert_eq!(
        log.iter()
            .filter(|m| m.from_macro && m.mthd == class::SET_HYBRID_ANTI_ALIAS_CONTROL)
            .map(|m| m.data)
            .collect::<Vec<_>>(),
        [1]
    );
}

/// A linear 640×480 B8G8R8A8 colour attachment (rows of 2,560 bytes).
fn linear_color(loads: bool, stores: bool) -> ColorAttachment {
    let mut c = color(None, false);
    c.image.linear = true;
    c.image.array_layers = 1;
    c.loads = loads;
    c.stores = stores;
    c
}

/// A rendering of the render area (16, 8) 256×128.
fn partial(colors: Vec<Option<ColorAttachment>>, depth_stencil: bool) -> RenderingInfo {
    RenderingInfo {
        area: RenderArea {
            x: 16,
            y: 8,
            width: 256,
            height: 128,
        },
        depth_stencil: depth_stencil.then(|| depth(None)),
        ..rendering(0, colors)
    }
}

#[test]
fn a_linear_target_beside_a_depth_target_renders_through_its_tiled_shadow() {
    const SHADOW: u64 = 0x20_0000_0000 + driver::nvk::image::LINEAR_SHADOW_OFFSET;
    for arch in [Arch::Turing, Arch::Fermi] {
        let info = partial(vec![Some(linear_color(true, true))], true);
        let log = run(arch, |enc| {
            enc.begin_rendering(&info);
            enc.draw(3, 1, 0, 0);
            enc.end_rendering();
        });
        // The target is the block-linear shadow (32 GOBs high for 480 rows).
        let target = class::set_color_target_a(0);
        assert_eq!(writes_of(&log, SUBC_3D, target), [(SHADOW >> 32) as u32]);
        assert_eq!(writes_of(&log, SUBC_3D, target + 4), [SHADOW as u32]);
        assert_eq!(writes_of(&log, SUBC_3D, target + 20), [5 << 4], "{arch:?}");
        // nvk_linear_render_copy in, then out: four-byte elements as one component,
        // the linear side's address at the area's origin, the tiled side's block,
        // size and origin, non-pipelined launches with remapping.
        assert_eq!(
            writes_of(&log, SUBC_COPY, copy::SET_REMAP_COMPONENTS),
            [0x0003_3210, 0x0003_3210]
        );
        let origin = 0x20_0000_0000u64 + 16 * 4 + 8 * 2560;
        let lines = |src: u64, dst: u64| {
            [
                (src >> 32) as u32,
                src as u32,
                (dst >> 32) as u32,
                dst as u32,
                2560,
                2560,
                256,
                128,
            ]
        };
        let transfers: Vec<u32> = (0..8)
            .flat_map(|i| writes_of(&log, SUBC_COPY, copy::OFFSET_IN_UPPER + 4 * i))
            .collect();
        let mut expected = Vec::new();
        for i in 0..8 {
            expected.push(lines(origin, SHADOW)[i]);
            expected.push(lines(SHADOW, origin)[i]);
        }
        assert_eq!(transfers, expected, "{arch:?}");
        let block = [0x1050, 640, 480, 1, 0];
        for (base, origin_x) in [
            (copy::SET_DST_BLOCK_SIZE, copy::DST_ORIGIN_X),
            (copy::SET_SRC_BLOCK_SIZE, copy::SRC_ORIGIN_X),
        ] {
            let written: Vec<u32> = (0..5)
                .flat_map(|i| writes_of(&log, SUBC_COPY, base + 4 * i))
                .collect();
            assert_eq!(written, block, "{arch:?}");
            assert_eq!(writes_of(&log, SUBC_COPY, origin_x), [16]);
            assert_eq!(writes_of(&log, SUBC_COPY, origin_x + 4), [8]);
        }
        assert_eq!(
            writes_of(&log, SUBC_COPY, copy::LAUNCH_DMA),
            [0x686, 0x706],
            "{arch:?}"
        );
        // In before the draw, out after it (in push-buffer order: a macro runs when
        // its call's parameters end).
        let at = |subc: u8, mthd: u16| {
            log.iter()
                .filter(|m| !m.from_macro)
                .enumerate()
                .filter(|(_, m)| m.subc == subc && m.mthd == mthd)
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        };
        let launches = at(SUBC_COPY, copy::LAUNCH_DMA);
        let draws = at(SUBC_3D, class::call_mme_macro(Macro::Draw.id()));
        assert!(
            launches[0] < draws[0] && draws[0] < launches[1],
            "{arch:?}: {launches:?} {draws:?}"
        );
    }
}

#[test]
fn a_rendering_of_linear_targets_alone_renders_to_them_and_copies_nothing() {
    let info = partial(vec![Some(linear_color(true, true))], false);
    let log = run(Arch::Turing, |enc| {
        enc.begin_rendering(&info);
        enc.end_rendering();
    });
    let target = class::set_color_target_a(0);
    assert_eq!(writes_of(&log, SUBC_3D, target), [0x20]);
    assert_eq!(
        writes_of(&log, SUBC_3D, target + 8),
        [2560],
        "the row pitch"
    );
    assert_eq!(
        writes_of(&log, SUBC_3D, target + 20),
        [class::COLOR_TARGET_MEMORY_LAYOUT_PITCH]
    );
    assert!(log.iter().all(|m| m.subc != SUBC_COPY));
}

#[test]
fn a_shadowed_target_is_copied_only_where_it_loads_and_stores() {
    let launches = |info: &RenderingInfo| {
        let log = run(Arch::Turing, |enc| {
            enc.begin_rendering(info);
            enc.end_rendering();
        });
        writes_of(&log, SUBC_COPY, copy::LAUNCH_DMA)
    };
    // DONT_CARE in, STORE out: only the copy back.
    assert_eq!(
        launches(&partial(vec![Some(linear_color(false, true))], true)),
        [0x706]
    );
    // LOAD in, DONT_CARE out: only the copy in.
    assert_eq!(
        launches(&partial(vec![Some(linear_color(true, false))], true)),
        [0x686]
    );
    // A resuming rendering does not load, a suspending one does not store.
    let mut resumed = partial(vec![Some(linear_color(true, true))], true);
    resumed.flags = driver::nvk::rendering::RENDERING_RESUMING;
    assert_eq!(launches(&resumed), [0x706]);
    resumed.flags |= driver::nvk::rendering::RENDERING_SUSPENDING;
    assert!(launches(&resumed).is_empty());
}

#[test]
fn a_blit_draws_with_vk_meta_s_pipeline_state_and_the_application_s_comes_back() {
    use driver::nvk::meta::{BlitPush, MetaBlit};
    for arch in [Arch::Turing, Arch::Fermi] {
        let app = rendering(0, vec![Some(color(None, false))]);
        // The blit's colour pass: a rendering of its destination alone.
        let destination = RenderingInfo {
            depth_stencil: None,
            ..rendering(0, vec![Some(color(None, false))])
        };
        let log = run(arch, |enc| {
            enc.begin_rendering(&app);
            let s = enc.state_mut();
            s.set_cull_mode(2); // VK_CULL_MODE_BACK_BIT
            s.set_front_face(1); // VK_FRONT_FACE_CLOCKWISE
            s.set_depth_test_enable(true);
            enc.draw(3, 1, 0, 0);
            enc.end_rendering();
            enc.meta_begin_gfx();
            enc.meta_blit(&MetaBlit {
                rendering: destination.clone(),
                layers: 1,
                push: BlitPush::default(),
                writes_depth: false,
                stencil_as_discard: false,
                fragment: Default::default(),
                first_pass: true,
            });
            enc.meta_end_gfx();
            enc.begin_rendering(&app);
            enc.draw(3, 1, 0, 0);
        });
        let pushed = |mthd| {
            log.iter()
                .filter(|m| m.subc == SUBC_3D && m.mthd == mthd && !m.from_macro)
                .map(|m| m.data)
                .collect::<Vec<_>>()
        };
        // The application's draw, the blit's (vk_meta's pipeline: no culling, counter-
        // clockwise front faces; no depth attachment, so no depth test), the
        // application's again with its state restored (nvk_meta_end).
        assert_eq!(pushed(class::OGL_SET_CULL), [1, 0, 1], "{arch:?}");
        assert_eq!(
            pushed(class::OGL_SET_FRONT_FACE),
            [0x900, 0x901, 0x900],
            "{arch:?}"
        );
        assert_eq!(pushed(class::SET_DEPTH_TEST), [1, 0, 1], "{arch:?}");
    }
}

/// vk_meta builds a blit's and a resolve's fragment shaders from different keys, and
/// NVK compiles each apart (Chromium's Skia resolves, then blits): the model draws
/// each kind of pass with a fragment shader of its own, and a kind again with the
/// same one.
#[test]
fn a_resolve_and_a_blit_draw_with_fragment_shaders_of_their_own() {
    let (blit, resolve) = blit_and_resolve();
    let log = run(Arch::Turing, |enc| {
        for fragment in [blit, resolve] {
            meta_pass(enc, fragment);
        }
        meta_pass(enc, blit);
    });
    let fragments = pixel_programs(&log);
    assert_eq!(fragments.len(), 3, "{fragments:x?}");
    assert_ne!(fragments[0], fragments[1]);
    assert_eq!(fragments[0], fragments[2]);
}

/// vk_meta keeps its pipelines in the device: a kind of pass draws with the same
/// fragment shader in every command buffer, and two kinds with two shaders even when
/// each is the first its command buffer draws (Godot blits mip chains in one command
/// buffer and resolves its multisampled frame in another).
#[test]
fn a_kind_of_meta_pass_keeps_its_fragment_shader_from_one_command_buffer_to_the_next() {
    let (blit, resolve) = blit_and_resolve();
    let arch = Arch::Turing;
    let device = Device::for_arch(arch);
    let mut gpu = driver::gpu::Gpu::new(arch);
    gpu.execute(device.init_push().unwrap().words()).unwrap();
    let mut fragment_of = |fragment| {
        let mut enc = CommandEncoder::new(&device);
        meta_pass(&mut enc, fragment);
        gpu.state.method_log = Some(Vec::new());
        gpu.execute(enc.finish().words()).unwrap();
        pixel_programs(&gpu.state.method_log.take().unwrap())
    };
    let first_blit = fragment_of(blit);
    let resolved = fragment_of(resolve);
    let blit_again = fragment_of(blit);
    assert_eq!(first_blit.len(), 1, "{first_blit:x?}");
    assert_eq!(resolved.len(), 1, "{resolved:x?}");
    assert_ne!(first_blit, resolved);
    assert_eq!(first_blit, blit_again);
}

/// A colour target's format and width are NIL's for every format it renders to, not
/// only a game's usual ones (Blender draws into R16_UINT and R8G8B8A8_SRGB targets):
/// the format from NIL's table, the width the row in elements of the format's size.
#[test]
fn a_colour_target_takes_nils_format_and_its_width_in_elements() {
    const R16_UINT: u32 = 74;
    const R8G8B8A8_UINT: u32 = 41;
    const R8G8B8A8_SRGB: u32 = 43;
    const R32G32B32A32_UINT: u32 = 107;
    // (VkFormat, SET_COLOR_TARGET_FORMAT: RU16, AU8BU8GU8RU8, A8BL8GL8RL8,
    // RU32_GU32_BU32_AU32).
    let cases = [
        (R16_UINT, 0xf1),
        (R8G8B8A8_UINT, 0xd9),
        (R8G8B8A8_SRGB, 0xd6),
        (R32G32B32A32_UINT, 0xc2),
    ];
    for (format, hw) in cases {
        let target = ColorAttachment {
            image: Image {
                extent: [672, 482, 1],
                ..image(format, 1)
            },
            view: ViewRange {
                format,
                ..ViewRange::default()
            },
            ..color(None, false)
        };
        let info = RenderingInfo {
            depth_stencil: None,
            ..rendering(0, vec![Some(target)])
        };
        let log = run(Arch::Turing, |enc| {
            enc.begin_rendering(&info);
        });
        let a = class::set_color_target_a(0);
        let (width, format_method) = (a + 8, a + 16);
        assert_eq!(writes_of(&log, SUBC_3D, format_method), [hw], "{format}");
        // 672 elements fill whole GOB rows in each of these formats.
        assert_eq!(writes_of(&log, SUBC_3D, width), [672], "{format}");
    }
}

/// vk_meta samples a 1D source as a 1D array (vk_image_sampler_dim), which is a
/// fragment shader of its own: OpenTTD through Zink blits from 1D images and from 2D
/// images into the same format, and NVK draws the two kinds with two shaders.
#[test]
fn a_blit_from_a_1d_image_draws_with_a_fragment_shader_of_its_own() {
    use driver::nvk::meta::{MetaFragment, SamplerDim};
    let blit_from = |image_type| {
        let source = Image {
            image_type,
            extent: [256, 1, 1],
            ..image(B8G8R8A8_UNORM, 1)
        };
        MetaFragment {
            aspects: 1,
            dim: SamplerDim::of(&source),
            ..MetaFragment::default()
        }
    };
    let log = run(Arch::Turing, |enc| {
        for image_type in [ImageType::D2, ImageType::D1, ImageType::D2] {
            meta_pass(enc, blit_from(image_type));
        }
    });
    let fragments = pixel_programs(&log);
    assert_eq!(fragments.len(), 3, "{fragments:x?}");
    assert_ne!(fragments[0], fragments[1], "a 1D source's blit");
    assert_eq!(fragments[0], fragments[2], "a 2D source's blit again");
}

/// Two kinds of vk_meta pass: a colour blit, and an averaging resolve of four samples.
fn blit_and_resolve() -> (
    driver::nvk::meta::MetaFragment,
    driver::nvk::meta::MetaFragment,
) {
    use driver::nvk::meta::{MetaFragment, NumericType, SamplerDim, RESOLVE_AVERAGE};
    let blit = MetaFragment {
        aspects: 1,
        ..MetaFragment::default()
    };
    let resolve = MetaFragment {
        resolve_mode: RESOLVE_AVERAGE,
        src_samples: 4,
        dim: SamplerDim::Multisampled,
        color_type: NumericType::Float,
        ..blit
    };
    (blit, resolve)
}

/// Records one vk_meta pass of `fragment`'s kind into a colour target.
fn meta_pass(enc: &mut CommandEncoder<'_>, fragment: driver::nvk::meta::MetaFragment) {
    use driver::nvk::meta::{BlitPush, MetaBlit};
    enc.meta_begin_gfx();
    enc.meta_blit(&MetaBlit {
        rendering: RenderingInfo {
            depth_stencil: None,
            ..rendering(0, vec![Some(color(None, false))])
        },
        layers: 1,
        push: BlitPush::resolve([0, 0], [0, 0]),
        writes_depth: false,
        stencil_as_discard: false,
        fragment,
        first_pass: true,
    });
    enc.meta_end_gfx();
}

/// The pixel shader programs bound, in order: SET_PIPELINE_PROGRAM_ADDRESS_B of the
/// last pipeline slot written.
fn pixel_programs(log: &[LoggedMethod]) -> Vec<u32> {
    let stride = class::PIPELINE_SLOT_STRIDE;
    let address_b = class::SET_PIPELINE_PROGRAM_ADDRESS_A + 4;
    let slot_of = |mthd: u16| (mthd - address_b) / stride;
    let programs: Vec<(u16, u32)> = log
        .iter()
        .filter(|m| m.subc == SUBC_3D && !m.from_macro)
        .filter(|m| m.mthd >= address_b && (m.mthd - address_b) % stride == 0)
        .filter(|m| (m.mthd - address_b) / stride < 6)
        .map(|m| (slot_of(m.mthd), m.data))
        .collect();
    let Some(pixel) = programs.iter().map(|(slot, _)| *slot).max() else {
        return Vec::new();
    };
    programs
        .iter()
        .filter(|(slot, _)| *slot == pixel)
        .map(|(_, addr)| *addr)
        .collect()
}

/// A rendering's resolve draws with the mode the program gave its attachment
/// (vk_meta_resolve_rendering passes `resolveMode` into vk_meta's key): a float
/// colour resolved by its first sample draws with another fragment shader than one
/// averaged, and the same mode again with the same one.
#[test]
fn an_end_of_rendering_resolve_draws_with_the_attachments_resolve_mode() {
    use driver::nvk::meta::{RESOLVE_AVERAGE, RESOLVE_SAMPLE_ZERO};
    let resolving = |mode: u32| {
        let mut c = color(None, true);
        c.image = image(B8G8R8A8_UNORM, 4);
        c.resolve_mode = mode;
        RenderingInfo {
            depth_stencil: None,
            ..rendering(0, vec![Some(c)])
        }
    };
    let log = run(Arch::Turing, |enc| {
        for mode in [RESOLVE_AVERAGE, RESOLVE_SAMPLE_ZERO, RESOLVE_AVERAGE] {
            enc.begin_rendering(&resolving(mode));
            enc.end_rendering();
        }
    });
    let fragments = pixel_programs(&log);
    assert_eq!(fragments.len(), 3, "{fragments:x?}");
    assert_ne!(fragments[0], fragments[1]);
    assert_eq!(fragments[0], fragments[2]);
}

/// vk_meta_resolve_rendering draws each resolve into the attachment's resolve view:
/// Qt Quick 3D renders its scene into a 4-sample image and resolves it into another
/// image of the same memory block, and NVK's resolve targets that image, not the
/// multisampled one.
#[test]
fn an_end_of_rendering_resolve_draws_into_the_resolve_view() {
    let resolved = Image {
        addr: 0x30_0000_0000,
        ..image(B8G8R8A8_UNORM, 1)
    };
    let mut c = color(None, true);
    c.image = image(B8G8R8A8_UNORM, 4);
    c.resolve_to = Some((resolved, c.view));
    let info = RenderingInfo {
        depth_stencil: None,
        ..rendering(0, vec![Some(c)])
    };
    let log = run(Arch::Turing, |enc| {
        enc.begin_rendering(&info);
        enc.end_rendering();
    });
    // SET_COLOR_TARGET_A holds an address's high bits: the rendering's target (the
    // multisampled image), then the resolve's.
    let targets = writes_of(&log, SUBC_3D, class::set_color_target_a(0));
    assert_eq!(targets.first(), Some(&0x20), "{targets:x?}");
    assert_eq!(targets.last(), Some(&0x30), "{targets:x?}");
}

/// A descriptor set whose layout holds no descriptors has no memory in its pool, so
/// NVK's root table gives it address 0, and nvk_meta_end writes that entry back as it
/// was: a set 0 of no descriptor bytes bound before a vk_meta pass is address 0 again
/// after it, not its handle (SDL 3's GPU renderer binds such a set around its clears).
#[test]
fn a_set_of_no_descriptors_is_address_0_again_after_a_meta_pass() {
    use driver::nvk::root;
    let (blit, _) = blit_and_resolve();
    let handle = 0x5eed_0040u64;
    for arch in [Arch::Turing, Arch::Fermi] {
        let log = run(arch, |enc| {
            enc.bind_descriptor_sets(0, &[handle], &[], None, Some(&[0]), None);
            meta_pass(enc, blit);
        });
        let (offset, _) = root::set_address(0, 0, 0);
        // The words written into the root table's set 0 entry, in order.
        let mut at = None;
        let mut set0 = Vec::new();
        for m in log.iter().filter(|m| m.subc == SUBC_3D && !m.from_macro) {
            if m.mthd == class::LOAD_CONSTANT_BUFFER_OFFSET {
                at = Some(m.data);
            } else if (class::LOAD_CONSTANT_BUFFER..class::LOAD_CONSTANT_BUFFER + 64)
                .contains(&m.mthd)
            {
                if let Some(o) = at {
                    if (offset..offset + 16).contains(&o) {
                        set0.push(m.data);
                    }
                    at = Some(o + 4);
                }
            }
        }
        assert!(set0.len() >= 8, "{arch:?}: bound and restored: {set0:x?}");
        assert!(
            !set0.contains(&(handle as u32)),
            "{arch:?}: the set's handle in the root table: {set0:x?}"
        );
    }
}
