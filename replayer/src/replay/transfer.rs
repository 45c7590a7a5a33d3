//! Transfers, clears and compute work (NVK's nvk_cmd_copy.c, nvk_cmd_clear.c,
//! nvk_cmd_dispatch.c, nvk_cmd_meta.c).

use super::*;

impl Pass<'_> {
    /// Encodes work other than a draw: a dispatch, a transfer (NVK 25.0.7 records
    /// buffer copies, fills, image copies and copies between buffers and images on
    /// the copy engine: nvk_cmd_copy.c), a blit or resolve through the meta path, a
    /// clear or a barrier.
    pub(super) fn encode_work(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        seq: u64,
        args: &WorkArgs,
    ) -> DrawShape {
        let memory = &self.gpu.state.memory;
        let shape = |kind, elements: u64, count: u32, r: Recorded| DrawShape {
            seq,
            kind,
            instance_count: 1,
            element_count: elements.min(u64::from(u32::MAX)) as u32,
            indirect_draw_count: count,
            state: r.state,
            memory_words: r.memory_words,
        };
        // A copy-engine transfer's row: its launches as elements, its regions as
        // the commands it made.
        let transfer = |kind, regions: usize, r: Recorded| {
            shape(kind, u64::from(r.launches), regions as u32, r)
        };
        match args {
            WorkArgs::Direct(groups) => {
                let r = enc.dispatch(*groups);
                let n = groups
                    .iter()
                    .fold(1u64, |n, g| n.saturating_mul(u64::from(*g)));
                shape(results::DrawKind::Dispatch, n, 1, r)
            }
            WorkArgs::Indirect { buffer, offset } => {
                let addr = self.objects.buffer_addr(*buffer, *offset).unwrap_or(0);
                let groups = (0..3).fold(1u64, |n, i| {
                    n.saturating_mul(u64::from(memory.read_u32(addr.wrapping_add(4 * i))))
                });
                let r = enc.dispatch_indirect(addr, memory);
                shape(results::DrawKind::DispatchIndirect, groups, 1, r)
            }
            WorkArgs::CopyBuffer { src, dst, regions } => {
                let src = self.objects.buffer_addr(*src, 0).unwrap_or(0);
                let dst = self.objects.buffer_addr(*dst, 0).unwrap_or(0);
                let mut total = Recorded::default();
                for [src_offset, dst_offset, size] in regions {
                    total.add(enc.copy_buffer(
                        src.wrapping_add(*src_offset),
                        dst.wrapping_add(*dst_offset),
                        *size,
                    ));
                }
                transfer(results::DrawKind::CopyBuffer, regions.len(), total)
            }
            WorkArgs::FillBuffer {
                buffer,
                offset,
                size,
                data,
            } => {
                // VK_WHOLE_SIZE: to the buffer's end, rounded down to whole words
                // (vk_buffer_range).
                let (addr, rest) = self.objects.buffer_range(*buffer, *offset);
                let size = if *size == u64::MAX {
                    u64::from(rest) & !3
                } else {
                    *size
                };
                let r = enc.fill_buffer(addr, size, *data);
                transfer(results::DrawKind::FillBuffer, 1, r)
            }
            WorkArgs::BufferImageCopy {
                to_image,
                buffer,
                image,
                regions,
            } => {
                let addr = self.objects.buffer_addr(*buffer, 0).unwrap_or(0);
                let image = self.image_or_stand_in(*image);
                let r = enc.copy_buffer_image(&image, addr, regions, *to_image);
                let kind = if *to_image {
                    results::DrawKind::CopyBufferToImage
                } else {
                    results::DrawKind::CopyImageToBuffer
                };
                transfer(kind, regions.len(), r)
            }
            WorkArgs::ImageCopy { src, dst, regions } => {
                let (src, dst) = (self.image_or_stand_in(*src), self.image_or_stand_in(*dst));
                let r = enc.copy_image(&src, &dst, regions);
                transfer(results::DrawKind::CopyImage, regions.len(), r)
            }
            WorkArgs::ImageTransfer {
                op,
                src,
                dst,
                regions,
            } => {
                let r = self.image_transfer(enc, *op, *src, *dst, regions);
                let kind = match op {
                    ImageOp::BlitImage => results::DrawKind::BlitImage,
                    ImageOp::ResolveImage => results::DrawKind::ResolveImage,
                };
                shape(kind, 0, regions.len() as u32, r)
            }
            WorkArgs::PipelineBarrier(barriers) => {
                let r = enc.pipeline_barrier(barriers);
                shape(results::DrawKind::PipelineBarrier, 0, 0, r)
            }
            WorkArgs::ClearAttachments { attachments, rects } => {
                let r = enc.clear_attachments(attachments, rects);
                shape(results::DrawKind::ClearAttachments, 0, 0, r)
            }
            WorkArgs::ClearImage {
                image,
                depth_stencil,
                value,
                ranges,
            } => {
                let r = self.clear_image(enc, *image, *depth_stencil, *value, ranges);
                let kind = if *depth_stencil {
                    results::DrawKind::ClearDepthStencilImage
                } else {
                    results::DrawKind::ClearColorImage
                };
                shape(kind, 0, 0, r)
            }
        }
    }

    /// The image `handle` names, or a 1×1 B8G8R8A8 stand-in for one the trace never
    /// created.
    pub(super) fn image_or_stand_in(&self, handle: u64) -> Image {
        self.objects
            .image(handle)
            .unwrap_or(Image::stand_in(44, [1, 1, 1]))
    }

    /// An image blit or resolve as NVK 25.0.7 records it (nvk_CmdBlitImage2,
    /// nvk_CmdResolveImage2: vk_meta_blit_image and vk_meta_resolve_image inside the
    /// meta bracket): for each region, where each destination pixel reads in the
    /// source (compute_off_scale on each axis; a 3D source's slices, else the layers'
    /// distance), then a pass of do_blit for the destination's colour or depth and,
    /// apart, one for its stencil.
    pub(super) fn image_transfer(
        &self,
        enc: &mut CommandEncoder<'_>,
        op: ImageOp,
        src: u64,
        dst: u64,
        regions: &[BlitRegion],
    ) -> Recorded {
        let resolving = op == ImageOp::ResolveImage;
        const DEPTH: u32 = 0x2;
        const STENCIL: u32 = 0x4;
        let src_image = self.image_or_stand_in(src);
        let dst_image = self.image_or_stand_in(dst);
        let mut total = Recorded::default();
        total.add(enc.meta_begin_gfx());
        for r in regions {
            let level_size =
                |axis: usize| (src_image.extent[axis] >> r.src.mip_level.min(31)).max(1);
            let coord = |v: i32| v.max(0) as u32;
            let axis = |a: usize| {
                BlitPush::off_scale(
                    level_size(a),
                    [coord(r.src_offsets[0][a]), coord(r.src_offsets[1][a])],
                    [coord(r.dst_offsets[0][a]), coord(r.dst_offsets[1][a])],
                )
            };
            let (x, y, mut push) = if resolving {
                // vk_meta_resolve_image: texels fetched at the destination pixel moved
                // by the offsets' difference; no layer delta.
                let [s, d] = [r.src_offsets[0], r.dst_offsets[0]];
                let corners = |a: usize| [coord(r.dst_offsets[0][a]), coord(r.dst_offsets[1][a])];
                let push = BlitPush::resolve([s[0], s[1]], [d[0], d[1]]);
                (corners(0), corners(1), push)
            } else {
                let ((x, x_off, x_scale), (y, y_off, y_scale)) = (axis(0), axis(1));
                let push = BlitPush {
                    xy: [x_off, y_off, x_scale, y_scale],
                    ..BlitPush::default()
                };
                (x, y, push)
            };
            // The destination's layers (VK_REMAINING_ARRAY_LAYERS: those past its first).
            let dst_layers = if r.dst.layer_count == u32::MAX {
                dst_image
                    .array_layers
                    .saturating_sub(r.dst.base_array_layer)
                    .max(1)
            } else {
                r.dst.layer_count
            };
            let (first_layer, layers) = if resolving {
                (0, dst_layers)
            } else if src_image.three_d() {
                let (z, z_off, z_scale) = axis(2);
                push.z = [z_off, z_scale];
                (z[0], z[1].saturating_sub(z[0]))
            } else {
                push.arr_delta = r.dst.base_array_layer.wrapping_sub(r.src.base_array_layer) as i32;
                (0, dst_layers)
            };
            let view = ViewRange {
                format: dst_image.format,
                base_mip_level: r.dst.mip_level,
                base_array_layer: r.dst.base_array_layer,
            };
            let area = RenderArea {
                x: x[0] as i32,
                y: y[0] as i32,
                width: x[1] - x[0],
                height: y[1] - y[0],
            };
            // do_blit's passes: colour or depth first, stencil alone after.
            let aspects = r.dst.aspects;
            let mut passes = vec![aspects & !STENCIL];
            if aspects & STENCIL != 0 {
                passes.push(STENCIL);
            }
            let color_type = NumericType::of_vk(dst_image.format);
            let src_float_color = !TargetFormat::of_vk(src_image.format).depth_stencil
                && NumericType::of_vk(src_image.format) == NumericType::Float;
            let resolve_mode = implied_resolve_mode(src_float_color);
            for (n, pass) in passes.into_iter().filter(|p| *p != 0).enumerate() {
                let stencil_as_discard = pass == STENCIL;
                let fragment = MetaFragment {
                    resolve_mode: if resolving { resolve_mode } else { 0 },
                    stencil_resolve_mode: if resolving { RESOLVE_SAMPLE_ZERO } else { 0 },
                    src_samples: src_image.samples,
                    dim: SamplerDim::of(&src_image),
                    aspects: pass,
                    color_type,
                    stencil_as_discard,
                };
                let mut info = RenderingInfo {
                    area,
                    layer_count: first_layer + layers,
                    ..RenderingInfo::default()
                };
                if TargetFormat::of_vk(dst_image.format).depth_stencil {
                    info.depth_stencil = Some(DepthStencilAttachment {
                        image: dst_image,
                        view,
                        depth_clear: None,
                        // The stencil written bit by bit starts cleared.
                        stencil_clear: stencil_as_discard.then_some(0),
                        depth_resolve_mode: 0,
                        stencil_resolve_mode: 0,
                        resolve_to: None,
                        // do_blit's rendering: the attachments of the pass's aspects.
                        aspects: DepthStencilAspects {
                            depth: pass & DEPTH != 0,
                            stencil: pass & STENCIL != 0,
                        },
                    });
                } else {
                    info.colors = vec![Some(ColorAttachment {
                        image: dst_image,
                        view,
                        clear: None,
                        resolve_mode: 0,
                        resolve_to: None,
                        loads: false,
                        stores: true,
                    })];
                }
                total.add(enc.meta_blit(&MetaBlit {
                    rendering: info,
                    layers,
                    push,
                    writes_depth: pass & DEPTH != 0,
                    stencil_as_discard,
                    fragment,
                    first_pass: n == 0,
                }));
            }
        }
        total.add(enc.meta_end_gfx());
        total
    }

    /// vkCmdClearColorImage and vkCmdClearDepthStencilImage as nvk_cmd_clear.c's
    /// clear_image does them: for every range and mip level, a rendering of the level
    /// with the image as its only attachment, loaded with CLEAR, begun and ended. An
    /// image the trace never created is taken as a 1×1 one of its kind.
    pub(super) fn clear_image(
        &self,
        enc: &mut CommandEncoder<'_>,
        image: u64,
        depth_stencil: bool,
        value: [u32; 4],
        ranges: &[[u32; 5]],
    ) -> Recorded {
        let desc = self.objects.image(image).unwrap_or(Image::stand_in(
            if depth_stencil { 126 } else { 44 },
            [1, 1, 1],
        ));
        let mut total = Recorded::default();
        for &[aspects, base_level, levels, base_layer, layers] in ranges {
            // VK_REMAINING_MIP_LEVELS and VK_REMAINING_ARRAY_LAYERS.
            let levels = if levels == u32::MAX {
                16
            } else {
                levels.min(16)
            };
            let layers = if layers == u32::MAX {
                desc.array_layers.saturating_sub(base_layer).max(1)
            } else {
                layers
            };
            for level in base_level..base_level.saturating_add(levels) {
                let (w, h) = (desc.extent[0] >> level, desc.extent[1] >> level);
                if w == 0 && h == 0 {
                    break;
                }
                let view = ViewRange {
                    format: desc.format,
                    base_mip_level: level,
                    base_array_layer: base_layer,
                };
                let mut info = RenderingInfo {
                    area: RenderArea {
                        x: 0,
                        y: 0,
                        width: w.max(1),
                        height: h.max(1),
                    },
                    layer_count: layers,
                    ..RenderingInfo::default()
                };
                if depth_stencil {
                    info.depth_stencil = Some(DepthStencilAttachment {
                        image: desc,
                        view,
                        depth_clear: (aspects & 2 != 0).then_some(value[0]),
                        stencil_clear: (aspects & 4 != 0).then_some(value[1]),
                        depth_resolve_mode: 0,
                        stencil_resolve_mode: 0,
                        resolve_to: None,
                        aspects: DepthStencilAspects {
                            depth: aspects & 2 != 0,
                            stencil: aspects & 4 != 0,
                        },
                    });
                } else {
                    info.colors = vec![Some(ColorAttachment {
                        image: desc,
                        view,
                        clear: Some(value),
                        resolve_mode: 0,
                        resolve_to: None,
                        loads: false,
                        stores: true,
                    })];
                }
                for r in [enc.begin_rendering(&info), enc.end_rendering()] {
                    total.dwords += r.dwords;
                }
            }
        }
        total
    }
}
