//! Transfers through the copy engine (`nvk_cmd_copy.c` of NVK 25.0.7): buffer copies,
//! fills and updates, copies between buffers and images and between images, and the
//! rectangle copies between a linear render target and its tiled shadow. NVK 25.0.7
//! records every one of them on the copy engine's subchannel, each transfer launched
//! non-pipelined (later NVK pipelines the application's transfers and copies images
//! through vk_meta instead).

use super::encoder::{CommandEncoder, Recorded};
use super::format::{block_of_vk, Block};
use super::image::Image;
use super::rendering::{ColorAttachment, RenderArea};
use crate::chipset::classes::PASCAL_DMA_COPY_B;
use crate::class::copy::{self, LaunchDma, RemapComponents, RemapSource};
use crate::push::SUBC_COPY;

/// `VK_IMAGE_ASPECT_DEPTH_BIT`.
const ASPECT_DEPTH: u32 = 0x2;
/// `VK_IMAGE_ASPECT_STENCIL_BIT`.
const ASPECT_STENCIL: u32 = 0x4;
/// `VK_REMAINING_ARRAY_LAYERS`.
const REMAINING_LAYERS: u32 = u32::MAX;
/// The most bytes one buffer-copy line moves (nvk_CmdCopyBuffer2's `1 << 17`).
const MAX_COPY_LINE: u64 = 1 << 17;
/// A fill's widest line and most lines, in four-byte words (nvk_CmdFillBuffer's
/// `max_dim`).
const FILL_MAX_DIM: u64 = 1 << 15;

/// One side of a copy-engine rectangle copy (`struct nouveau_copy_buffer`): a buffer
/// seen as rows of elements, or a level of an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CopySurface {
    /// The buffer's address at the copy's offset, or the level's address.
    pub addr: u64,
    /// A 3D image: slices are addressed through the layer method, not the address.
    pub three_d: bool,
    /// The copy's first element: x, y, slice and array layer.
    pub offset_el: [u32; 4],
    /// The level's extent in elements: across, rows, slices.
    pub extent_el: [u32; 3],
    /// Bytes per element.
    pub bpp: u32,
    /// Bytes per row.
    pub row_stride: u32,
    /// Bytes between array layers (or a buffer's images).
    pub array_stride: u64,
    /// A block-linear level's block height and depth (log2, in GOBs); `None` for a
    /// pitch surface.
    pub tiling: Option<(u32, u32)>,
}

impl CopySurface {
    /// A buffer region laid out as `vk_image_buffer_copy_layout` lays it out (rows of
    /// `row_stride` bytes, images `image_stride` apart) (`nouveau_copy_rect_buffer`).
    pub fn of_buffer(addr: u64, bpp: u32, row_stride: u32, image_stride: u64) -> CopySurface {
        CopySurface {
            addr,
            three_d: false,
            offset_el: [0; 4],
            extent_el: [0; 3],
            bpp,
            row_stride,
            array_stride: image_stride,
            tiling: None,
        }
    }

    /// Level `mip` of `image` from pixel `offset` and layer `base_layer`, its elements
    /// `bpp` bytes (`nouveau_copy_rect_image`).
    pub fn of_image(
        image: &Image,
        mip: u32,
        base_layer: u32,
        offset: [i32; 3],
        bpp: u32,
    ) -> CopySurface {
        let level = image.level(mip);
        let block = block_of_vk(image.format);
        let (sx, sy) = image.sample_grid();
        let px = |v: i32| v.max(0) as u32;
        let [x, y] = block.element_offset([px(offset[0]) * sx, px(offset[1]) * sy]);
        let z = if image.three_d() { px(offset[2]) } else { 0 };
        CopySurface {
            addr: image.addr.wrapping_add(level.offset),
            three_d: image.three_d(),
            offset_el: [x, y, z, base_layer],
            extent_el: level.extent_el,
            bpp,
            row_stride: level.row_stride,
            array_stride: u64::from(level.array_stride),
            tiling: (!image.linear).then_some((level.block_height_log2, level.block_depth_log2)),
        }
    }
}

/// A copy's component remap (`struct nouveau_copy_remap`): the component size and
/// where each destination component comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Remap {
    /// Bytes per component (1 to 4).
    pub component_size: u32,
    /// X, Y, Z and W's sources.
    pub dst: [RemapSource; 4],
}

impl Remap {
    /// A plain copy of elements of `bpp` bytes (`nouveau_copy_remap_format`): any
    /// component size up to four bytes that divides the element.
    pub fn of_element(bpp: u32) -> Remap {
        let component_size = if bpp % 3 == 0 {
            (bpp / 3).max(1)
        } else {
            bpp.clamp(1, 4)
        };
        Remap::sized(
            component_size,
            [
                RemapSource::SrcX,
                RemapSource::SrcY,
                RemapSource::SrcZ,
                RemapSource::SrcW,
            ],
        )
    }

    fn sized(component_size: u32, dst: [RemapSource; 4]) -> Remap {
        Remap {
            component_size,
            dst,
        }
    }
}

/// One rectangle copy (`struct nouveau_copy`): both sides, the remap (none: a byte
/// copy of equal elements) and the extent in elements (across, rows, slices, layers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RectCopy {
    /// The source.
    pub src: CopySurface,
    /// The destination.
    pub dst: CopySurface,
    /// The remap.
    pub remap: Option<Remap>,
    /// Elements across, rows, slices and array layers.
    pub extent_el: [u32; 4],
}

/// An image subresource a copy names (`VkImageSubresourceLayers`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subresource {
    /// `aspectMask`.
    pub aspects: u32,
    /// `mipLevel`.
    pub mip_level: u32,
    /// `baseArrayLayer`.
    pub base_array_layer: u32,
    /// `layerCount` (`VK_REMAINING_ARRAY_LAYERS` allowed).
    pub layer_count: u32,
}

impl Subresource {
    /// The layers it names of `image` (`vk_image_subresource_layer_count`).
    fn layers(&self, image: &Image) -> u32 {
        if self.layer_count == REMAINING_LAYERS {
            image
                .array_layers
                .saturating_sub(self.base_array_layer)
                .max(1)
        } else {
            self.layer_count
        }
    }
}

/// One region of a copy between a buffer and an image (`VkBufferImageCopy2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferImageRegion {
    /// `bufferOffset`.
    pub buffer_offset: u64,
    /// `bufferRowLength` (0: the extent's width).
    pub buffer_row_length: u32,
    /// `bufferImageHeight` (0: the extent's height).
    pub buffer_image_height: u32,
    /// `imageSubresource`.
    pub subresource: Subresource,
    /// `imageOffset`.
    pub image_offset: [i32; 3],
    /// `imageExtent`.
    pub image_extent: [u32; 3],
}

/// One region of an image copy (`VkImageCopy2`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageCopyRegion {
    /// `srcSubresource`.
    pub src: Subresource,
    /// `srcOffset`.
    pub src_offset: [i32; 3],
    /// `dstSubresource`.
    pub dst: Subresource,
    /// `dstOffset`.
    pub dst_offset: [i32; 3],
    /// `extent`, in the source's pixels.
    pub extent: [u32; 3],
}

/// The element of the aspect `aspects` of `format` as a buffer holds it
/// (`vk_format_get_blocksize` of `vk_format_get_aspect_format`): depth of a packed
/// depth/stencil format as its own depth format, stencil as one byte.
fn aspect_block(format: u32, aspects: u32) -> Block {
    let packed = matches!(format, 128..=130);
    match (packed, aspects) {
        (true, ASPECT_STENCIL) => block_of_vk(127),
        (true, ASPECT_DEPTH) => match format {
            128 => block_of_vk(124),
            129 => block_of_vk(125),
            _ => block_of_vk(126),
        },
        _ => block_of_vk(format),
    }
}

/// `extent` sanitized for `image`'s type (`vk_image_sanitize_extent`): a 2D image's
/// copies are one slice deep.
fn sanitize_extent(image: &Image, extent: [u32; 3]) -> [u32; 3] {
    if image.three_d() {
        extent
    } else {
        [extent[0], extent[1], 1]
    }
}

/// `px` pixels (across, down, slices, layers) of `image` in elements
/// (`nil_extent4d_px_to_el`): samples across and down, then blocks.
fn extent_el(image: &Image, px: [u32; 4]) -> [u32; 4] {
    let (sx, sy) = image.sample_grid();
    let [w, h] =
        block_of_vk(image.format).elements([px[0].saturating_mul(sx), px[1].saturating_mul(sy)]);
    [w, h, px[2], px[3]]
}

/// The remap NVK 25.0.7 copies an aspect of a packed depth/stencil format with, from a
/// buffer into the image (`to_image`) or out of it; `None` for a format without one.
/// D32S8's stencil aspect is staged through NVK's `stencil_copy_temp` image, which the
/// model does not lay out: its copies take the depth aspect's shape.
fn depth_stencil_remap(format: u32, aspects: u32, to_image: bool) -> Option<Remap> {
    use RemapSource::{NoWrite, SrcW, SrcX, SrcY, SrcZ};
    match (format, aspects) {
        (130, _) => Some(Remap::sized(4, [SrcX, NoWrite, NoWrite, NoWrite])),
        (129, ASPECT_DEPTH) => Some(Remap::sized(1, [SrcX, SrcY, SrcZ, NoWrite])),
        (129, ASPECT_STENCIL) if to_image => {
            Some(Remap::sized(1, [NoWrite, NoWrite, NoWrite, SrcX]))
        }
        (129, ASPECT_STENCIL) => Some(Remap::sized(1, [SrcW, NoWrite, NoWrite, NoWrite])),
        _ => None,
    }
}

/// The model's upload memory for vkCmdUpdateBuffer's data (after the compute
/// uploads').
const UPLOAD_BASE: u64 = 0x1_0080_0000;

impl CommandEncoder<'_> {
    /// vkCmdUpdateBuffer of `size` bytes to `dst`. Mirrors nvk_CmdUpdateBuffer: the
    /// data uploaded to the command buffer (counted as memory words; the replay writes
    /// it to the destination itself), then one copy-engine line.
    pub fn update_buffer(&mut self, dst: u64, size: u32) -> Recorded {
        let before = self.push.len();
        self.copy_line(UPLOAD_BASE, dst, size);
        Recorded {
            memory_words: size.div_ceil(4),
            launches: 1,
            ..self.recorded(before)
        }
    }

    /// vkCmdCopyBuffer2's region of `size` bytes from `src` to `dst`. Mirrors
    /// nvk_CmdCopyBuffer2: one copy-engine line for each 128 KiB.
    pub fn copy_buffer(&mut self, src: u64, dst: u64, size: u64) -> Recorded {
        let before = self.push.len();
        let (mut done, mut launches) = (0u64, 0u32);
        while done < size {
            let bytes = (size - done).min(MAX_COPY_LINE);
            self.copy_line(src.wrapping_add(done), dst.wrapping_add(done), bytes as u32);
            done += bytes;
            launches += 1;
        }
        Recorded {
            launches,
            ..self.recorded(before)
        }
    }

    /// One line of `bytes` bytes between pitch surfaces, launched non-pipelined (the
    /// body of nvk_CmdCopyBuffer2's loop and of nvk_CmdUpdateBuffer).
    fn copy_line(&mut self, src: u64, dst: u64, bytes: u32) {
        self.push.inc(
            SUBC_COPY,
            copy::OFFSET_IN_UPPER,
            &[
                (src >> 32) as u32,
                src as u32,
                (dst >> 32) as u32,
                dst as u32,
            ],
        );
        self.push.inc(SUBC_COPY, copy::LINE_LENGTH_IN, &[bytes, 1]);
        let launch = LaunchDma {
            pipelined: false,
            flush: true,
            src_pitch: true,
            dst_pitch: true,
            multi_line: true,
            remap: false,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::LAUNCH_DMA, launch.pack());
    }

    /// vkCmdFillBuffer of `size` bytes (already resolved from `VK_WHOLE_SIZE`) at
    /// `dst` with `data`. Mirrors nvk_CmdFillBuffer: the remap writes constant A into
    /// every word; lines of up to 32 Ki words, up to 32 Ki lines a launch.
    pub fn fill_buffer(&mut self, dst: u64, size: u64, data: u32) -> Recorded {
        let before = self.push.len();
        self.push
            .immd_or_mthd(SUBC_COPY, copy::SET_REMAP_CONST_A, data);
        let remap = RemapComponents {
            dst: [RemapSource::ConstA; 4],
            component_size: 4,
            src_components: 1,
            dst_components: 1,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::SET_REMAP_COMPONENTS, remap.pack());
        let pitch = (FILL_MAX_DIM * 4) as u32;
        self.push.inc(SUBC_COPY, copy::PITCH_IN, &[pitch, pitch]);
        let (mut addr, mut left, mut launches) = (dst, size, 0u32);
        while left >= 4 {
            let (width, height) = if left >= FILL_MAX_DIM * FILL_MAX_DIM * 4 {
                (FILL_MAX_DIM, FILL_MAX_DIM)
            } else if left >= FILL_MAX_DIM * 4 {
                (FILL_MAX_DIM, left / (FILL_MAX_DIM * 4))
            } else {
                (left / 4, 1)
            };
            self.push.inc(
                SUBC_COPY,
                copy::OFFSET_OUT_UPPER,
                &[(addr >> 32) as u32, addr as u32],
            );
            self.push.inc(
                SUBC_COPY,
                copy::LINE_LENGTH_IN,
                &[width as u32, height as u32],
            );
            let launch = LaunchDma {
                pipelined: false,
                flush: true,
                src_pitch: true,
                dst_pitch: true,
                multi_line: height > 1,
                remap: true,
            };
            self.push
                .immd_or_mthd(SUBC_COPY, copy::LAUNCH_DMA, launch.pack());
            let bytes = width * height * 4;
            addr = addr.wrapping_add(bytes);
            left -= bytes;
            launches += 1;
        }
        Recorded {
            launches,
            ..self.recorded(before)
        }
    }

    /// vkCmdCopyBufferToImage2 (`to_image`) or vkCmdCopyImageToBuffer2's regions
    /// between the buffer at `buffer` and `image`. Mirrors nvk_CmdCopyBufferToImage2 and
    /// nvk_CmdCopyImageToBuffer2: per region, the buffer laid out as
    /// `vk_image_buffer_copy_layout` says, one rectangle copy with the aspect's remap.
    pub fn copy_buffer_image(
        &mut self,
        image: &Image,
        buffer: u64,
        regions: &[BufferImageRegion],
        to_image: bool,
    ) -> Recorded {
        let (before, mut launches) = (self.push.len(), 0u32);
        for r in regions {
            let sub = &r.subresource;
            let extent = sanitize_extent(image, r.image_extent);
            let block = aspect_block(image.format, sub.aspects);
            let row_length = if r.buffer_row_length == 0 {
                extent[0]
            } else {
                r.buffer_row_length
            };
            let image_height = if r.buffer_image_height == 0 {
                extent[1]
            } else {
                r.buffer_image_height
            };
            let [row_el, rows] = block.elements([row_length, image_height]);
            let row_stride = row_el.saturating_mul(block.bytes);
            let memory = CopySurface::of_buffer(
                buffer.wrapping_add(r.buffer_offset),
                block.bytes,
                row_stride,
                u64::from(rows) * u64::from(row_stride),
            );
            let surface = CopySurface::of_image(
                image,
                sub.mip_level,
                sub.base_array_layer,
                r.image_offset,
                image.element_bytes(),
            );
            let remap = depth_stencil_remap(image.format, sub.aspects, to_image)
                .or(Some(Remap::of_element(image.element_bytes())));
            let (src, dst) = if to_image {
                (memory, surface)
            } else {
                (surface, memory)
            };
            let extent_el = extent_el(image, [extent[0], extent[1], extent[2], sub.layers(image)]);
            launches += self.copy_rect(&RectCopy {
                src,
                dst,
                remap,
                extent_el,
            });
        }
        Recorded {
            launches,
            ..self.recorded(before)
        }
    }

    /// vkCmdCopyImage2's regions from `src` to `dst`. Mirrors nvk_CmdCopyImage2: one
    /// rectangle copy a region, remapped by the source's format (one aspect of a
    /// packed depth/stencil format alone; both aspects as plain bytes).
    pub fn copy_image(
        &mut self,
        src: &Image,
        dst: &Image,
        regions: &[ImageCopyRegion],
    ) -> Recorded {
        use RemapSource::{NoWrite, SrcW, SrcX, SrcY, SrcZ};
        let (before, mut launches) = (self.push.len(), 0u32);
        for r in regions {
            let extent = sanitize_extent(src, r.extent);
            let remap = match (src.format, r.src.aspects) {
                (129, ASPECT_DEPTH) => Some(Remap::sized(1, [SrcX, SrcY, SrcZ, NoWrite])),
                (129, ASPECT_STENCIL) => Some(Remap::sized(1, [NoWrite, NoWrite, NoWrite, SrcW])),
                (130, ASPECT_DEPTH) => Some(Remap::sized(4, [SrcX, NoWrite, NoWrite, NoWrite])),
                (130, ASPECT_STENCIL) => Some(Remap::sized(4, [NoWrite, SrcY, NoWrite, NoWrite])),
                (129 | 130, _) => None,
                _ => Some(Remap::of_element(src.element_bytes())),
            };
            let side = |image: &Image, sub: &Subresource, offset| {
                CopySurface::of_image(
                    image,
                    sub.mip_level,
                    sub.base_array_layer,
                    offset,
                    image.element_bytes(),
                )
            };
            let extent_el = extent_el(src, [extent[0], extent[1], extent[2], r.src.layers(src)]);
            launches += self.copy_rect(&RectCopy {
                src: side(src, &r.src, r.src_offset),
                dst: side(dst, &r.dst, r.dst_offset),
                remap,
                extent_el,
            });
        }
        Recorded {
            launches,
            ..self.recorded(before)
        }
    }

    /// One rectangle copy, a launch for each slice or layer. Mirrors nouveau_copy_rect:
    /// the remap (its X and Y then count elements, else bytes); per layer the
    /// addresses (a layer's and a pitch side's origin folded in), pitches and line
    /// size, each block-linear side's block, size, layer and origin (the
    /// PASCAL_DMA_COPY_B origin methods, which every copy class the model runs has),
    /// then a non-pipelined launch. Returns the launches.
    pub fn copy_rect(&mut self, c: &RectCopy) -> u32 {
        let (src_bw, dst_bw) = match c.remap {
            Some(remap) => {
                let size = remap.component_size.max(1);
                let pack = RemapComponents {
                    dst: remap.dst,
                    component_size: size,
                    src_components: c.src.bpp / size,
                    dst_components: c.dst.bpp / size,
                };
                self.push
                    .immd_or_mthd(SUBC_COPY, copy::SET_REMAP_COMPONENTS, pack.pack());
                (1, 1)
            }
            None => (c.src.bpp, c.dst.bpp),
        };
        let layers = c.extent_el[2].max(c.extent_el[3]);
        for z in 0..layers {
            let start = |s: &CopySurface| {
                let mut addr = s.addr;
                if !s.three_d {
                    addr = addr.wrapping_add(
                        u64::from(z.wrapping_add(s.offset_el[3])).wrapping_mul(s.array_stride),
                    );
                }
                if s.tiling.is_none() {
                    addr = addr.wrapping_add(
                        u64::from(s.offset_el[0]) * u64::from(s.bpp)
                            + u64::from(s.offset_el[1]) * u64::from(s.row_stride),
                    );
                }
                addr
            };
            let (src_addr, dst_addr) = (start(&c.src), start(&c.dst));
            self.push.inc(
                SUBC_COPY,
                copy::OFFSET_IN_UPPER,
                &[
                    (src_addr >> 32) as u32,
                    src_addr as u32,
                    (dst_addr >> 32) as u32,
                    dst_addr as u32,
                    c.src.row_stride,
                    c.dst.row_stride,
                    c.extent_el[0].wrapping_mul(src_bw),
                    c.extent_el[1],
                ],
            );
            // From PASCAL_DMA_COPY_B the origin is two methods; before it one, 16 bits
            // a coordinate.
            let origin_xy = self.chipset().copy >= PASCAL_DMA_COPY_B;
            let (src_origin, dst_origin) = if origin_xy {
                (copy::SRC_ORIGIN_X, copy::DST_ORIGIN_X)
            } else {
                (copy::SET_SRC_ORIGIN, copy::SET_DST_ORIGIN)
            };
            for (side, bw, block, origin) in [
                (&c.src, src_bw, copy::SET_SRC_BLOCK_SIZE, src_origin),
                (&c.dst, dst_bw, copy::SET_DST_BLOCK_SIZE, dst_origin),
            ] {
                let Some((height_log2, depth_log2)) = side.tiling else {
                    continue;
                };
                // The copy engine has no tile width: the width is the row stride in
                // elements.
                let layer = if side.three_d {
                    z.wrapping_add(side.offset_el[2])
                } else {
                    0
                };
                self.push.inc(
                    SUBC_COPY,
                    block,
                    &[
                        copy::block_size(height_log2, depth_log2),
                        (side.row_stride / side.bpp.max(1)).wrapping_mul(bw),
                        side.extent_el[1],
                        side.extent_el[2],
                        layer,
                    ],
                );
                let (x, y) = (side.offset_el[0].wrapping_mul(bw), side.offset_el[1]);
                if origin_xy {
                    self.push.inc(SUBC_COPY, origin, &[x, y]);
                } else {
                    self.push
                        .mthd(SUBC_COPY, origin, (x & 0xffff) | (y & 0xffff) << 16);
                }
            }
            let launch = LaunchDma {
                pipelined: false,
                flush: true,
                src_pitch: c.src.tiling.is_none(),
                dst_pitch: c.dst.tiling.is_none(),
                multi_line: true,
                remap: c.remap.is_some(),
            };
            self.push
                .immd_or_mthd(SUBC_COPY, copy::LAUNCH_DMA, launch.pack());
        }
        layers
    }

    /// Copies the render area of a linear colour attachment into its tiled shadow
    /// (`to_shadow`, at the beginning of a rendering that loads it) or back (at the end
    /// of one that stores it). Mirrors nvk_linear_render_copy: one rectangle copy of
    /// the view's level and first layer.
    pub(super) fn linear_render_copy(
        &mut self,
        attachment: &ColorAttachment,
        area: &RenderArea,
        to_shadow: bool,
    ) {
        let linear = attachment.image;
        let shadow = linear.tiled_shadow();
        let (src, dst) = if to_shadow {
            (linear, shadow)
        } else {
            (shadow, linear)
        };
        let view = attachment.view;
        let offset = [area.x, area.y, 0];
        let side = |image: &Image| {
            CopySurface::of_image(
                image,
                view.base_mip_level,
                view.base_array_layer,
                offset,
                image.element_bytes(),
            )
        };
        let extent_el = extent_el(&src, [area.width, area.height, 1, 1]);
        let _launches = self.copy_rect(&RectCopy {
            src: side(&src),
            dst: side(&dst),
            remap: Some(Remap::of_element(src.element_bytes())),
            extent_el,
        });
    }
}
