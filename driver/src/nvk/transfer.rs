//! Transfers through the copy engine (`nvk_cmd_copy.c`): vkCmdUpdateBuffer's copy of
//! the data NVK uploads into the command buffer, and the rectangle copies between a
//! linear render target and its tiled shadow. (Buffer copies and fills go through
//! NVK's meta compute path on a queue with compute: see `dispatch.rs`.)

use super::encoder::{CommandEncoder, Recorded};
use super::image::{Image, TargetFormat};
use super::rendering::{ColorAttachment, RenderArea};
use crate::class::copy::{self, LaunchDma, RemapComponents, RemapSource};
use crate::push::SUBC_COPY;

/// One side of a copy-engine rectangle copy (`nouveau_copy_buffer`): a level of one
/// layer of an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CopySurface {
    /// The layer's level address.
    addr: u64,
    /// Bytes per row.
    row_stride: u32,
    /// Bytes per element.
    bpp: u32,
    /// Block-linear: the block's log2 height in GOBs and the level's height in rows;
    /// `None` for a pitch surface.
    tiled: Option<(u32, u32)>,
    /// The rectangle's first element, x and y.
    origin: [u32; 2],
}

impl CopySurface {
    /// Level `mip` of layer `layer` of `image`, from `origin` (`nouveau_copy_rect_image`).
    fn of_image(image: &Image, mip: u32, layer: u32, origin: [u32; 2]) -> CopySurface {
        let level = image.level(mip);
        CopySurface {
            addr: image
                .addr
                .wrapping_add(level.offset)
                .wrapping_add(u64::from(layer) * u64::from(level.array_stride)),
            row_stride: level.row_stride,
            bpp: TargetFormat::of_vk(image.format).bytes.max(1),
            tiled: (!image.linear).then_some((level.block_height_log2, level.height)),
            origin,
        }
    }
}

/// The component size a copy of `bpp`-byte elements remaps with
/// (`nouveau_copy_remap_format`): any size up to four bytes that divides the element.
fn remap_component_size(bpp: u32) -> u32 {
    if bpp % 3 == 0 {
        (bpp / 3).max(1)
    } else {
        bpp.clamp(1, 4)
    }
}

/// The model's upload memory for vkCmdUpdateBuffer's data (after the compute
/// uploads').
const UPLOAD_BASE: u64 = 0x1_0080_0000;

impl CommandEncoder<'_> {
    /// vkCmdUpdateBuffer of `size` bytes to `dst`. Mirrors nvk_CmdUpdateBuffer: the
    /// data uploaded to the command buffer (counted as memory words; the replay writes
    /// it to the destination itself), then one pipelined copy-engine line.
    pub fn update_buffer(&mut self, dst: u64, size: u32) -> Recorded {
        let before = self.push.len();
        let src = UPLOAD_BASE;
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
        self.push.inc(SUBC_COPY, copy::LINE_LENGTH_IN, &[size, 1]);
        let launch = LaunchDma {
            pipelined: true,
            flush: true,
            src_pitch: true,
            dst_pitch: true,
            multi_line: true,
            remap: false,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::LAUNCH_DMA, launch.pack());
        Recorded {
            memory_words: size.div_ceil(4),
            ..self.recorded(before)
        }
    }
}

impl CommandEncoder<'_> {
    /// Copies `extent` elements of one layer from `src` to `dst`, each element moved as
    /// components of the format's remap size. Mirrors nouveau_copy_rect with a remap:
    /// `SET_REMAP_COMPONENTS`, the addresses, pitches and line size, each block-linear
    /// side's block, size and origin (the PASCAL_DMA_COPY_B origin methods every class
    /// the model runs has), then a non-pipelined launch. A pitch side's origin is
    /// folded into its address.
    fn copy_rect(&mut self, src: &CopySurface, dst: &CopySurface, extent: [u32; 2]) {
        let component_size = remap_component_size(src.bpp);
        let remap = RemapComponents {
            dst: [
                RemapSource::SrcX,
                RemapSource::SrcY,
                RemapSource::SrcZ,
                RemapSource::SrcW,
            ],
            component_size,
            src_components: src.bpp / component_size,
            dst_components: dst.bpp / component_size,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::SET_REMAP_COMPONENTS, remap.pack());
        let start = |s: &CopySurface| match s.tiled {
            Some(_) => s.addr,
            None => s.addr.wrapping_add(
                u64::from(s.origin[0]) * u64::from(s.bpp)
                    + u64::from(s.origin[1]) * u64::from(s.row_stride),
            ),
        };
        let (src_addr, dst_addr) = (start(src), start(dst));
        self.push.inc(
            SUBC_COPY,
            copy::OFFSET_IN_UPPER,
            &[
                (src_addr >> 32) as u32,
                src_addr as u32,
                (dst_addr >> 32) as u32,
                dst_addr as u32,
                src.row_stride,
                dst.row_stride,
                extent[0],
                extent[1],
            ],
        );
        for (side, block, origin) in [
            (src, copy::SET_SRC_BLOCK_SIZE, copy::SRC_ORIGIN_X),
            (dst, copy::SET_DST_BLOCK_SIZE, copy::DST_ORIGIN_X),
        ] {
            if let Some((height_log2, rows)) = side.tiled {
                // The copy engine has no tile width: the width is the row stride in
                // elements. A 2D layer: depth 1, layer 0.
                self.push.inc(
                    SUBC_COPY,
                    block,
                    &[
                        copy::block_size(height_log2),
                        side.row_stride / side.bpp,
                        rows,
                        1,
                        0,
                    ],
                );
                self.push.inc(SUBC_COPY, origin, &side.origin);
            }
        }
        let launch = LaunchDma {
            pipelined: false,
            flush: true,
            src_pitch: src.tiled.is_none(),
            dst_pitch: dst.tiled.is_none(),
            multi_line: true,
            remap: true,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::LAUNCH_DMA, launch.pack());
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
        let origin = [area.x.max(0) as u32, area.y.max(0) as u32];
        let side = |image: &Image| {
            CopySurface::of_image(image, view.base_mip_level, view.base_array_layer, origin)
        };
        self.copy_rect(&side(&src), &side(&dst), [area.width, area.height]);
    }
}
