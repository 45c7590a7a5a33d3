//! Beginning and ending rendering (`nvk_cmd_draw.c`): the colour and depth/stencil
//! targets, the surface clip, the sample layout, load-op clears and the resolve's
//! cache invalidation; conditional rendering's predicate (`nvk_cmd_draw.c`'s
//! conditional-rendering entry points).
//!
//! Render passes reach NVK as dynamic rendering (Mesa's common render-pass code begins
//! one rendering per subpass), so a replay calls [`CommandEncoder::begin_rendering`]
//! for both.

use super::clear::{ClearAttachment, ClearRect};
use super::encoder::{CommandEncoder, Recorded};
use super::image::{Image, TargetFormat, ViewRange};
use crate::chipset::classes::MAXWELL_B;
use crate::class::copy::{self, LaunchDma, RemapComponents, RemapSource};
use crate::class::{self, RenderEnableMode, RenderEnableOverride};
use crate::mme::Arch;
use crate::push::{SUBC_3D, SUBC_COMPUTE, SUBC_COPY};

/// Colour targets NVK binds at every rendering (`NVK_MAX_RTS`).
pub const MAX_RTS: u32 = 8;

/// `VK_RENDERING_SUSPENDING_BIT`.
pub const RENDERING_SUSPENDING: u32 = 0x2;
/// `VK_RENDERING_RESUMING_BIT`.
pub const RENDERING_RESUMING: u32 = 0x4;

/// Where the model copies a conditional rendering's predicate: command-buffer memory
/// ([`super::UPLOAD_MEMORY`]), as NVK's temporary is, streamed and naming no object.
const COND_RENDER_TEMP: u64 = 0x1_00c0_0000;

/// `VkRect2D`: the render area.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct RenderArea {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// A colour attachment of a rendering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColorAttachment {
    /// The image its view shows.
    pub image: Image,
    /// The view's format and first level and layer.
    pub view: ViewRange,
    /// The clear value's four words, for `VK_ATTACHMENT_LOAD_OP_CLEAR`.
    pub clear: Option<[u32; 4]>,
    /// How it resolves at the end (`VkResolveModeFlagBits`: 0 for none, else
    /// `pColorAttachments[i].resolveMode`; a render pass's subpass resolve averages a
    /// float or normalized colour and takes an integer's first sample, as
    /// vk_render_pass converts it).
    pub resolve_mode: u32,
    /// Where it resolves to: the resolve view's image and range
    /// (`pColorAttachments[i].resolveImageView`, a subpass's resolve attachment).
    /// `None` draws the resolve into the attachment's own image, one sample a pixel.
    pub resolve_to: Option<(Image, ViewRange)>,
    /// `VK_ATTACHMENT_LOAD_OP_LOAD`: its contents are read at the beginning.
    pub loads: bool,
    /// `VK_ATTACHMENT_STORE_OP_STORE`: its contents are written back at the end.
    pub stores: bool,
}

/// The depth/stencil attachment of a rendering (one image for both aspects).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthStencilAttachment {
    /// The image its view shows.
    pub image: Image,
    /// The view's format and first level and layer.
    pub view: ViewRange,
    /// The depth clear value's bits, for a depth `LOAD_OP_CLEAR`.
    pub depth_clear: Option<u32>,
    /// The stencil clear value, for a stencil `LOAD_OP_CLEAR`.
    pub stencil_clear: Option<u32>,
    /// How its depth aspect resolves at the end (`pDepthAttachment->resolveMode`; 0
    /// for none).
    pub depth_resolve_mode: u32,
    /// How its stencil aspect resolves at the end (`pStencilAttachment->resolveMode`).
    pub stencil_resolve_mode: u32,
    /// Where it resolves to (`resolveImageView` of the depth attachment, else of the
    /// stencil attachment); `None` as for [`ColorAttachment::resolve_to`].
    pub resolve_to: Option<(Image, ViewRange)>,
    /// Whether it is the rendering's depth attachment (`pDepthAttachment` with a view:
    /// NVK's `render->depth_att.vk_format` is set), and its stencil attachment
    /// (`pStencilAttachment`). A render pass's attachment is either where its format
    /// has the aspect (vk_render_pass). NVK enables the depth and stencil tests only
    /// for an attachment the rendering has (nvk_flush_ds_state).
    pub aspects: DepthStencilAspects,
}

/// Which of a rendering's depth and stencil attachments an image stands as.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DepthStencilAspects {
    /// As the depth attachment.
    pub depth: bool,
    /// As the stencil attachment.
    pub stencil: bool,
}

impl DepthStencilAspects {
    /// Both, where the format `vk_format` has them (vk_render_pass's conversion of a
    /// subpass's depth/stencil attachment; a `VkFormat` outside the depth/stencil
    /// formats has neither).
    pub fn of_format(vk_format: u32) -> Self {
        // VK_FORMAT_D16_UNORM (124) to VK_FORMAT_D32_SFLOAT_S8_UINT (130).
        DepthStencilAspects {
            depth: matches!(vk_format, 124..=126 | 128..=130),
            stencil: matches!(vk_format, 127..=130),
        }
    }
}

/// `VkRenderingInfo` as the model needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderingInfo {
    /// `VkRenderingFlags` (suspending and resuming matter).
    pub flags: u32,
    /// The render area.
    pub area: RenderArea,
    /// Layers rendered without multiview.
    pub layer_count: u32,
    /// The view mask; 0 without multiview.
    pub view_mask: u32,
    /// The colour attachments, `None` where the view is null.
    pub colors: Vec<Option<ColorAttachment>>,
    /// The depth/stencil attachment.
    pub depth_stencil: Option<DepthStencilAttachment>,
}

impl RenderingInfo {
    /// A rendering with no attachments and `view_mask`, as a shader writing only to
    /// storage would begin.
    pub fn views(view_mask: u32) -> Self {
        RenderingInfo {
            layer_count: 1,
            view_mask,
            ..RenderingInfo::default()
        }
    }

    /// Layers the targets are bound with: up to the last view with multiview.
    fn target_layers(&self) -> u32 {
        if self.view_mask != 0 {
            32 - self.view_mask.leading_zeros()
        } else {
            self.layer_count
        }
    }

    /// Whether the hardware renders straight to every colour attachment: no
    /// depth/stencil, and every colour target linear with its level 128-byte aligned
    /// in address and row stride. Mirrors nvk_rendering_linear. When it does not, a
    /// linear attachment is rendered through its tiled shadow.
    fn renders_linear(&self) -> bool {
        self.depth_stencil.is_none()
            && self.colors.iter().flatten().all(|c| {
                // A tiled target decides it without its level laid out.
                c.image.linear && {
                    let level = c.image.level(c.view.base_mip_level);
                    c.image.addr.wrapping_add(level.offset) % 128 == 0
                        && level.row_stride % 128 == 0
                }
            })
    }

    /// The colour attachments rendered through their tiled shadows, given whether
    /// the rendering [renders linear](Self::renders_linear).
    fn shadowed(&self, linear: bool) -> impl Iterator<Item = &ColorAttachment> {
        self.colors
            .iter()
            .flatten()
            .filter(move |c| !linear && c.image.linear)
    }
}

/// What ending a rendering needs from its beginning.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct RenderingEnd {
    flags: u32,
    area: RenderArea,
    /// Linear attachments rendered through tiled shadows that store their contents:
    /// copied back at the end.
    shadow_stores: Vec<ColorAttachment>,
    /// The resolves vk_meta_resolve_rendering makes, in its order.
    resolves: Vec<Resolve>,
    layers: u32,
}

/// One of vk_meta_resolve_rendering's resolves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Resolve {
    /// What it draws into: a single-sample rendering of the resolved aspects into the
    /// resolve view (vk_meta_resolve_attachment's `res_view`: its image, format, level
    /// and layer).
    target: RenderingInfo,
    /// The aspects it resolves (`VkImageAspectFlags`: colour 1, depth 2, stencil 4).
    aspects: u32,
    /// The colour's or depth's resolve mode, and the stencil's, as it passes them to
    /// vk_meta_resolve_image (NONE for an aspect it does not resolve).
    resolve_mode: u32,
    stencil_resolve_mode: u32,
    /// The pass writes stencil alone, a bit at a time through discards, into a
    /// stencil cleared first (do_blit, without stencil export).
    stencil_as_discard: bool,
    /// The first pass of its vk_meta_resolve_attachment (which pushes the source's
    /// descriptors).
    first_pass: bool,
}

impl RenderingEnd {
    /// Mirrors what vk_meta_resolve_rendering will resolve: each colour attachment
    /// with a resolve mode, then depth and stencil in one vk_meta_resolve_attachment
    /// where both resolve (the model's attachment is one view for both), else whichever
    /// does; do_blit draws depth in a pass of its own and stencil in another, a bit at
    /// a time through discards (vk_meta without stencil export).
    fn of(info: &RenderingInfo, linear: bool) -> Self {
        let target = |colors, depth_stencil| RenderingInfo {
            area: info.area,
            layer_count: info.target_layers(),
            colors,
            depth_stencil,
            ..RenderingInfo::default()
        };
        let single = |image: Image| Image {
            samples: 1,
            ..image
        };
        let mut resolves: Vec<Resolve> = info
            .colors
            .iter()
            .flatten()
            .filter(|c| c.resolve_mode != 0)
            .map(|c| {
                let (image, view) = c.resolve_to.unwrap_or((single(c.image), c.view));
                let color = ColorAttachment {
                    image,
                    view,
                    clear: None,
                    resolve_mode: 0,
                    resolve_to: None,
                    loads: false,
                    stores: true,
                };
                Resolve {
                    target: target(vec![Some(color)], None),
                    aspects: 1,
                    resolve_mode: c.resolve_mode,
                    stencil_resolve_mode: 0,
                    stencil_as_discard: false,
                    first_pass: true,
                }
            })
            .collect();
        if let Some(d) = info.depth_stencil {
            let depth_mode = if d.aspects.depth {
                d.depth_resolve_mode
            } else {
                0
            };
            let stencil_mode = if d.aspects.stencil {
                d.stencil_resolve_mode
            } else {
                0
            };
            // One vk_meta_resolve_attachment of the aspects that resolve, with both
            // modes; do_blit then writes depth in one pass and stencil in another, a
            // bit at a time.
            let pass = |depth: bool, stencil: bool, first_pass: bool| {
                let (image, view) = d.resolve_to.unwrap_or((single(d.image), d.view));
                let ds = DepthStencilAttachment {
                    image,
                    view,
                    depth_clear: None,
                    // The stencil written bit by bit starts cleared.
                    stencil_clear: stencil.then_some(0),
                    depth_resolve_mode: 0,
                    stencil_resolve_mode: 0,
                    resolve_to: None,
                    aspects: DepthStencilAspects { depth, stencil },
                };
                Resolve {
                    target: target(Vec::new(), Some(ds)),
                    aspects: u32::from(depth) * 2 + u32::from(stencil) * 4,
                    resolve_mode: depth_mode,
                    stencil_resolve_mode: stencil_mode,
                    stencil_as_discard: stencil,
                    first_pass,
                }
            };
            if depth_mode != 0 {
                resolves.push(pass(true, false, true));
            }
            if stencil_mode != 0 {
                resolves.push(pass(false, true, depth_mode == 0));
            }
        }
        RenderingEnd {
            flags: info.flags,
            area: info.area,
            shadow_stores: info
                .shadowed(linear)
                .filter(|c| c.stores)
                .copied()
                .collect(),
            resolves,
            layers: info.target_layers(),
        }
    }
}

impl CommandEncoder<'_> {
    /// vkCmdBeginRendering. Mirrors nvk_CmdBeginRendering: the view mask into scratch,
    /// the surface clip, all eight colour targets (null ones bound disabled, so no
    /// pointer is left from an earlier rendering), the depth target or none, the
    /// null fragment-shading-rate index surface on Turing (the model's renderings have
    /// no such attachment), the sample layout when there is an attachment, then the
    /// load-op clears through vkCmdClearAttachments' path with rendering forced on.
    /// Each colour attachment is mapped to its own location. A linear attachment the
    /// hardware cannot render to directly (nvk_rendering_linear) is bound as its tiled
    /// shadow, and one that loads is first copied into it (nvk_linear_render_copy).
    pub fn begin_rendering(&mut self, info: &RenderingInfo) -> Recorded {
        let before = self.push.len();
        let linear = info.renders_linear();
        self.rendering_end = RenderingEnd::of(info, linear);
        self.set_color_attachments(info.colors.len() as u32);
        self.state_mut().dirty_render_pass();
        self.set_view_mask(info.view_mask);
        let area = info.area;
        self.push.inc(
            SUBC_3D,
            class::SET_SURFACE_CLIP_HORIZONTAL,
            &[
                (area.x as u32 & 0xffff) | (area.width << 16),
                (area.y as u32 & 0xffff) | (area.height << 16),
            ],
        );
        let layers = info.target_layers();
        let mut samples = None;
        for i in 0..MAX_RTS {
            match info.colors.get(i as usize).copied().flatten() {
                Some(mut c) => {
                    samples = Some(c.image.samples);
                    if !linear && c.image.linear {
                        c.image = c.image.tiled_shadow();
                    }
                    self.bind_color_target(i, &c, layers);
                }
                None => self.bind_null_color_target(i, layers),
            }
        }
        match info.depth_stencil {
            Some(ds) => {
                samples = Some(ds.image.samples);
                self.bind_depth_target(&ds, layers);
            }
            None => self.push.immd_or_mthd(SUBC_3D, class::SET_ZT_SELECT, 0),
        }
        if self.device_arch() == Arch::Turing {
            // No fragment-shading-rate attachment in the model's renderings: NVK binds
            // a null index surface. VOLTA_A has no such methods.
            self.push.inc(
                SUBC_3D,
                class::SET_SHADING_RATE_INDEX_SURFACE_ADDRESS_A,
                &[0; 8],
            );
        }
        self.render_samples = samples.unwrap_or(0);
        // NVK's `render->depth_att.vk_format`, which the rasterizer's clip control
        // reads.
        self.ds_aspects = info
            .depth_stencil
            .as_ref()
            .map_or_else(Default::default, |ds| ds.aspects);
        self.float_depth = info
            .depth_stencil
            .as_ref()
            .is_some_and(|ds| ds.aspects.depth && matches!(ds.view.format, 126 | 130));
        if let Some(samples) = samples {
            let eng3d = self.chipset().eng3d;
            super::state::push_sample_layout(&mut self.push, eng3d, samples);
        }
        if info.flags & RENDERING_RESUMING == 0 {
            for c in info.shadowed(linear).filter(|c| c.loads) {
                self.linear_render_copy(c, &info.area, true);
            }
            self.load_op_clears(info);
        }
        self.recorded(before)
    }

    fn bind_color_target(&mut self, i: u32, c: &ColorAttachment, layers: u32) {
        let level = c.image.level(c.view.base_mip_level);
        let format = TargetFormat::of_vk(c.view.format);
        let addr = c.image.addr
            + level.offset
            + u64::from(c.view.base_array_layer) * u64::from(level.array_stride);
        let words = if c.image.linear {
            // LAYOUT_PITCH: the width is the row pitch in bytes.
            [
                (addr >> 32) as u32,
                addr as u32,
                level.row_stride,
                level.height,
                format.hw,
                class::COLOR_TARGET_MEMORY_LAYOUT_PITCH,
                1,
                0,
                0,
            ]
        } else {
            let third = if c.image.three_d() {
                class::COLOR_TARGET_MEMORY_THIRD_DIMENSION_IS_DEPTH
            } else {
                0
            };
            [
                (addr >> 32) as u32,
                addr as u32,
                level.row_stride / format.bytes.max(1),
                level.height,
                format.hw,
                (level.block_height_log2 << 4) | third,
                layers,
                level.array_stride >> 2,
                0,
            ]
        };
        self.push
            .inc(SUBC_3D, class::set_color_target_a(i as u16), &words);
        // NIL leaves colour images uncompressed.
        self.push
            .immd_or_mthd(SUBC_3D, class::set_color_compression(i as u16), 0);
    }

    fn bind_null_color_target(&mut self, i: u32, layers: u32) {
        self.push.inc(
            SUBC_3D,
            class::set_color_target_a(i as u16),
            &[
                0,
                0,
                64,
                0,
                class::COLOR_TARGET_FORMAT_DISABLED,
                0,
                layers,
                0,
                0,
            ],
        );
        self.push
            .immd_or_mthd(SUBC_3D, class::set_color_compression(i as u16), 1);
    }

    fn bind_depth_target(&mut self, ds: &DepthStencilAttachment, layers: u32) {
        let level = ds.image.level(ds.view.base_mip_level);
        let format = TargetFormat::of_vk(ds.view.format);
        let addr = ds.image.addr + level.offset;
        self.push.inc(
            SUBC_3D,
            class::SET_ZT_A,
            &[
                (addr >> 32) as u32,
                addr as u32,
                format.hw,
                level.block_height_log2 << 4,
                level.array_stride >> 2,
            ],
        );
        self.push.immd_or_mthd(SUBC_3D, class::SET_ZT_SELECT, 1);
        self.push.inc(
            SUBC_3D,
            class::SET_ZT_SIZE_A,
            &[
                level.row_stride / format.bytes.max(1),
                level.height,
                (ds.view.base_array_layer + layers) & 0xffff,
            ],
        );
        self.push
            .immd_or_mthd(SUBC_3D, class::SET_ZT_LAYER, ds.view.base_array_layer);
        self.push.immd_or_mthd(SUBC_3D, class::SET_Z_COMPRESSION, 0);
        if self.chipset().eng3d >= MAXWELL_B {
            self.push.immd_or_mthd(SUBC_3D, class::SET_ZT_SPARSE, 0);
        }
    }

    /// The load-op clears: one clear of the render area for every attachment that
    /// loads with CLEAR, with rendering forced on around it.
    fn load_op_clears(&mut self, info: &RenderingInfo) {
        let mut clears: Vec<ClearAttachment> = info
            .colors
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let value = c.as_ref()?.clear?;
                Some(ClearAttachment {
                    aspect_mask: 1,
                    color_attachment: i as u32,
                    value,
                })
            })
            .collect();
        if let Some(ds) = info.depth_stencil {
            let mut att = ClearAttachment::default();
            if let Some(depth) = ds.depth_clear {
                att.aspect_mask |= 2;
                att.value[0] = depth;
            }
            if let Some(stencil) = ds.stencil_clear {
                att.aspect_mask |= 4;
                att.value[1] = stencil;
            }
            if att.aspect_mask != 0 {
                clears.push(att);
            }
        }
        if clears.is_empty() {
            return;
        }
        let rect = ClearRect {
            x: info.area.x,
            y: info.area.y,
            width: info.area.width,
            height: info.area.height,
            base_array_layer: 0,
            layer_count: if info.view_mask != 0 {
                1
            } else {
                info.layer_count
            },
        };
        self.push.mthd(
            SUBC_3D,
            class::SET_RENDER_ENABLE_OVERRIDE,
            RenderEnableOverride::AlwaysRender as u32,
        );
        self.clear_attachments(&clears, &[rect]);
        self.push.mthd(
            SUBC_3D,
            class::SET_RENDER_ENABLE_OVERRIDE,
            RenderEnableOverride::UseRenderEnable as u32,
        );
    }

    /// vkCmdEndRendering. Mirrors nvk_CmdEndRendering: unless suspending, each linear
    /// attachment rendered through its tiled shadow that stores is copied back
    /// (nvk_linear_render_copy); with a resolve (and not suspending), the texture
    /// cache is invalidated, then nvk_meta_resolve_rendering
    /// resolves each attachment inside NVK's meta bracket: vk_meta's resolve is a
    /// rendering of the resolve target with a rectangle drawn per layer.
    pub fn end_rendering(&mut self) -> Recorded {
        let before = self.push.len();
        let end = std::mem::take(&mut self.rendering_end);
        if end.flags & RENDERING_SUSPENDING == 0 {
            for c in &end.shadow_stores {
                self.linear_render_copy(c, &end.area, false);
            }
        }
        let samples = self.render_samples;
        self.render_samples = 0;
        // nvk_CmdEndRendering forgets the view mask but leaves it in shadow scratch: the
        // next rendering writes it again before any macro reads it.
        self.view_mask = 0;
        if !end.resolves.is_empty() && end.flags & RENDERING_SUSPENDING == 0 {
            self.push
                .immd_or_mthd(SUBC_3D, class::INVALIDATE_TEXTURE_DATA_CACHE, 0);
            self.meta_begin_gfx();
            for resolve in &end.resolves {
                // vk_meta_resolve_rendering resolves the render area onto itself.
                let target = &resolve.target;
                let image = match (target.colors.iter().flatten().next(), &target.depth_stencil) {
                    (Some(c), _) => c.image,
                    (None, Some(ds)) => ds.image,
                    (None, None) => continue,
                };
                let a = target.area;
                self.meta_blit(&super::meta::MetaBlit {
                    rendering: target.clone(),
                    layers: end.layers,
                    push: super::meta::BlitPush::resolve([a.x, a.y], [a.x, a.y]),
                    writes_depth: resolve.aspects & 2 != 0,
                    stencil_as_discard: resolve.stencil_as_discard,
                    fragment: super::meta::MetaFragment {
                        resolve_mode: resolve.resolve_mode,
                        stencil_resolve_mode: resolve.stencil_resolve_mode,
                        src_samples: samples,
                        dim: super::meta::SamplerDim::Multisampled,
                        aspects: resolve.aspects,
                        color_type: super::meta::NumericType::of_vk(image.format),
                        stencil_as_discard: resolve.stencil_as_discard,
                    },
                    first_pass: resolve.first_pass,
                });
            }
            self.meta_end_gfx();
        }
        self.recorded(before)
    }

    /// vkCmdBeginConditionalRenderingEXT with the predicate at `addr`. Mirrors
    /// nvk_CmdBeginConditionalRenderingEXT: the hardware compares 64 bits, so the copy
    /// engine first copies the 32-bit predicate into both halves of a temporary in the
    /// command buffer's memory (nvk_cmd_buffer_cond_render_alloc: 64 bytes of its own
    /// for each begin, an address that names no object); then the 3D and compute
    /// classes render if it is (or, `inverted`, is not) non-zero.
    pub fn begin_conditional_rendering(&mut self, addr: u64, inverted: bool) -> Recorded {
        let before = self.push.len();
        let scratch = COND_RENDER_TEMP;
        self.push.inc(
            SUBC_COPY,
            copy::OFFSET_IN_UPPER,
            &[
                (addr >> 32) as u32,
                addr as u32,
                (scratch >> 32) as u32,
                scratch as u32,
                4,
                4,
                4,
                1,
            ],
        );
        let remap = RemapComponents {
            dst: [
                RemapSource::SrcX,
                RemapSource::SrcX,
                RemapSource::NoWrite,
                RemapSource::NoWrite,
            ],
            component_size: 1,
            src_components: 1,
            dst_components: 2,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::SET_REMAP_COMPONENTS, remap.pack());
        let launch = LaunchDma {
            pipelined: true,
            flush: true,
            src_pitch: true,
            dst_pitch: true,
            multi_line: true,
            remap: true,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::LAUNCH_DMA, launch.pack());
        let mode = if inverted {
            RenderEnableMode::RenderIfEqual
        } else {
            RenderEnableMode::RenderIfNotEqual
        };
        self.set_render_enable(scratch, mode);
        self.recorded(before)
    }

    /// vkCmdEndConditionalRenderingEXT: rendering on again in both classes. Mirrors
    /// nvk_CmdEndConditionalRenderingEXT.
    pub fn end_conditional_rendering(&mut self) -> Recorded {
        let before = self.push.len();
        self.set_render_enable(0, RenderEnableMode::True);
        self.recorded(before)
    }

    fn set_render_enable(&mut self, addr: u64, mode: RenderEnableMode) {
        let words = [(addr >> 32) as u32, addr as u32 & 0xffff_fff0, mode as u32];
        self.push.inc(SUBC_3D, class::SET_RENDER_ENABLE_A, &words);
        self.push
            .inc(SUBC_COMPUTE, class::SET_RENDER_ENABLE_A, &words);
    }
}
