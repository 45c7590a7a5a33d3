//! Images as render targets: a Vulkan format's render-target format and element size,
//! and the level layout NIL (NVK's image layout library) gives an image, simplified to
//! what binding a target needs.
//!
//! The layout is NIL's shape, not its every rule: block-linear levels are 64-byte GOBs
//! eight rows high, a row padded to whole GOBs, the block height the smallest power of
//! two of GOBs (up to 32) that covers the level; multisampled levels are the sample
//! grid's size (`nil_image_level_extent_sa`). The methods and their count that follow
//! from it are NVK's; addresses and strides are the model's.

/// A Vulkan format's render-target encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetFormat {
    /// Bytes per element.
    pub bytes: u32,
    /// `SET_COLOR_TARGET_FORMAT` for colour formats, `SET_ZT_FORMAT` for depth/stencil.
    pub hw: u32,
    /// Whether it has depth or stencil.
    pub depth_stencil: bool,
}

impl TargetFormat {
    /// The render-target format of `VkFormat` `format` (NIL's
    /// `nil_format_to_color_target` / `nil_format_to_depth_stencil` for the formats
    /// games render to; any other colour format is taken as a four-byte A8R8G8B8).
    pub fn of_vk(format: u32) -> TargetFormat {
        let color = |bytes, hw| TargetFormat {
            bytes,
            hw,
            depth_stencil: false,
        };
        let zs = |bytes, hw| TargetFormat {
            bytes,
            hw,
            depth_stencil: true,
        };
        match format {
            4 => color(2, 0xe8),       // R5G6B5_UNORM_PACK16: R5G6B5
            9 => color(1, 0xf3),       // R8_UNORM: R8
            16 => color(2, 0xea),      // R8G8_UNORM: G8R8
            37 | 41 => color(4, 0xd5), // R8G8B8A8_UNORM/UINT: A8B8G8R8
            43 => color(4, 0xd6),      // R8G8B8A8_SRGB: A8BL8GL8RL8
            44 => color(4, 0xcf),      // B8G8R8A8_UNORM: A8R8G8B8
            50 => color(4, 0xd0),      // B8G8R8A8_SRGB: A8RL8GL8BL8
            64 => color(4, 0xd1),      // A2B10G10R10_UNORM_PACK32
            76 => color(2, 0xf2),      // R16_SFLOAT: RF16
            83 => color(4, 0xde),      // R16G16_SFLOAT: RF16_GF16
            97 => color(8, 0xca),      // R16G16B16A16_SFLOAT
            100 => color(4, 0xe5),     // R32_SFLOAT: RF32
            103 => color(8, 0xcb),     // R32G32_SFLOAT
            109 => color(16, 0xc0),    // R32G32B32A32_SFLOAT
            122 => color(4, 0xe0),     // B10G11R11_UFLOAT_PACK32: BF10GF11RF11
            124 => zs(2, 0x13),        // D16_UNORM: Z16
            125 => zs(4, 0x15),        // X8_D24_UNORM_PACK32: X8Z24
            126 => zs(4, 0x0a),        // D32_SFLOAT: ZF32
            127 => zs(1, 0x17),        // S8_UINT: S8
            128 | 129 => zs(4, 0x16),  // D16_UNORM_S8_UINT, D24_UNORM_S8_UINT: S8Z24
            130 => zs(8, 0x19),        // D32_SFLOAT_S8_UINT: ZF32_X24S8
            _ => color(4, 0xcf),
        }
    }
}

/// What the model knows of an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Image {
    /// `VkFormat`.
    pub format: u32,
    /// Width, height and depth of level 0.
    pub extent: [u32; 3],
    /// Array layers.
    pub array_layers: u32,
    /// Samples per pixel.
    pub samples: u32,
    /// `VK_IMAGE_TILING_LINEAR`: a pitch-linear image.
    pub linear: bool,
    /// `VK_IMAGE_TYPE_3D`.
    pub three_d: bool,
    /// Its address in GPU memory (0 when the trace never bound it).
    pub addr: u64,
}

/// An image view's subresource.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ViewRange {
    /// `VkFormat` of the view.
    pub format: u32,
    /// First mip level.
    pub base_mip_level: u32,
    /// First array layer.
    pub base_array_layer: u32,
}

/// One mip level's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Bytes from the image's start.
    pub offset: u64,
    /// Bytes per row.
    pub row_stride: u32,
    /// Rows, in samples.
    pub height: u32,
    /// log2 of the block height in GOBs (0 for a linear level).
    pub block_height_log2: u32,
    /// Bytes between array layers.
    pub array_stride: u32,
}

/// Where the model places a linear image's tiled shadow: this far past the image.
/// NVK allocates the shadow itself (`ensure_linear_tiled_shadow_mem_locked`), at an
/// address the trace cannot show; the offset is a placeholder, the methods that
/// address it are NVK's.
pub const LINEAR_SHADOW_OFFSET: u64 = 1 << 40;

/// GOB width in bytes.
const GOB_WIDTH: u32 = 64;
/// GOB height in rows.
const GOB_HEIGHT: u32 = 8;

impl Image {
    /// The sample grid of one pixel (`nil_sample_layout`'s width and height).
    pub fn sample_grid(&self) -> (u32, u32) {
        match self.samples {
            2 => (2, 1),
            4 => (2, 2),
            8 => (4, 2),
            16 => (4, 4),
            _ => (1, 1),
        }
    }

    /// The block-linear copy NVK renders to in place of this linear image when a
    /// rendering cannot render to it directly (`nvk_image`'s `linear_tiled_shadow`).
    pub fn tiled_shadow(&self) -> Image {
        Image {
            linear: false,
            addr: self.addr.wrapping_add(LINEAR_SHADOW_OFFSET),
            ..*self
        }
    }

    /// Level `mip`'s layout (`nil_image_level` and `nil_image_level_extent_sa`).
    pub fn level(&self, mip: u32) -> Level {
        let bytes = TargetFormat::of_vk(self.format).bytes;
        let (sx, sy) = self.sample_grid();
        let mut offset = 0u64;
        let mut level = None;
        for m in 0..=mip.min(15) {
            let w = (self.extent[0] >> m).max(1).saturating_mul(sx);
            let h = (self.extent[1] >> m).max(1).saturating_mul(sy);
            let (row_stride, block_height_log2, rows) = if self.linear {
                (round_up(w.saturating_mul(bytes), 128), 0, h)
            } else {
                let gobs_high = h.div_ceil(GOB_HEIGHT).max(1);
                let log2 = gobs_high.next_power_of_two().trailing_zeros().min(5);
                let rows = round_up(h, GOB_HEIGHT << log2);
                (round_up(w.saturating_mul(bytes), GOB_WIDTH), log2, rows)
            };
            let size = u64::from(row_stride) * u64::from(rows);
            level = Some(Level {
                offset,
                row_stride,
                height: h,
                block_height_log2,
                array_stride: 0,
            });
            offset += size;
        }
        let mut level = level.unwrap_or(Level {
            offset: 0,
            row_stride: 0,
            height: 0,
            block_height_log2: 0,
            array_stride: 0,
        });
        // Layers hold every level; the stride is the whole chain, 4 KiB aligned.
        level.array_stride =
            u32::try_from(self.chain_size().saturating_add(0xfff) & !0xfff).unwrap_or(!0xfff);
        level
    }

    /// Bytes of every mip level of one layer.
    fn chain_size(&self) -> u64 {
        let bytes = u64::from(TargetFormat::of_vk(self.format).bytes);
        let (sx, sy) = self.sample_grid();
        let levels = 1 + self.extent[0].max(self.extent[1]).max(1).ilog2();
        (0..levels)
            .map(|m| {
                let w = u64::from((self.extent[0] >> m).max(1)) * u64::from(sx);
                let h = u64::from((self.extent[1] >> m).max(1)) * u64::from(sy);
                (w * bytes)
                    .next_multiple_of(64)
                    .saturating_mul(h.next_multiple_of(8))
            })
            .fold(0, u64::saturating_add)
    }
}

/// `x` rounded up to a multiple of `m` (a power of two), saturating: an image past
/// Vulkan's size limits (a hostile trace's) lays out at the largest multiple.
fn round_up(x: u32, m: u32) -> u32 {
    x.checked_next_multiple_of(m).unwrap_or(!(m - 1))
}
