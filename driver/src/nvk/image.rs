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
    /// The render-target format of `VkFormat` `format`: NIL's `nil_format_to_color_target`
    /// or `nil_format_to_depth_stencil` of the format `vk_format_to_pipe_format` gives,
    /// and the element size the image is laid out in ([`block_of_vk`]). A format NIL
    /// cannot render to (no valid trace renders to one) is taken as A8R8G8B8.
    pub fn of_vk(format: u32) -> TargetFormat {
        let bytes = block_of_vk(format).bytes;
        match depth_stencil_target(format) {
            Some(hw) => TargetFormat {
                bytes,
                hw,
                depth_stencil: true,
            },
            None => TargetFormat {
                bytes,
                hw: color_target(format).unwrap_or(CT_A8R8G8B8),
                depth_stencil: false,
            },
        }
    }
}

/// `SET_COLOR_TARGET_FORMAT`'s A8R8G8B8.
const CT_A8R8G8B8: u32 = 0xcf;

/// `SET_COLOR_TARGET_FORMAT` of a colour `VkFormat` NIL renders to (its format table's
/// colour-target column, through the pipe format each `VkFormat` is).
fn color_target(format: u32) -> Option<u32> {
    Some(match format {
        4 => 0xe8,             // R5G6B5_UNORM_PACK16: R5G6B5
        8 => 0xe9,             // A1R5G5B5_UNORM_PACK16: A1R5G5B5
        9 => 0xf3,             // R8_UNORM: R8
        10 => 0xf4,            // R8_SNORM: RN8
        13 => 0xf6,            // R8_UINT: RU8
        14 => 0xf5,            // R8_SINT: RS8
        16 => 0xea,            // R8G8_UNORM: G8R8
        17 => 0xeb,            // R8G8_SNORM: GN8RN8
        20 => 0xed,            // R8G8_UINT: GU8RU8
        21 => 0xec,            // R8G8_SINT: GS8RS8
        37 | 51 => 0xd5,       // R8G8B8A8_UNORM, A8B8G8R8_UNORM_PACK32: A8B8G8R8
        38 | 52 => 0xd7,       // R8G8B8A8_SNORM: AN8BN8GN8RN8
        41 | 55 => 0xd9,       // R8G8B8A8_UINT: AU8BU8GU8RU8
        42 | 56 => 0xd8,       // R8G8B8A8_SINT: AS8BS8GS8RS8
        43 | 57 => 0xd6,       // R8G8B8A8_SRGB: A8BL8GL8RL8
        44 => 0xcf,            // B8G8R8A8_UNORM: A8R8G8B8
        50 => 0xd0,            // B8G8R8A8_SRGB: A8RL8GL8BL8
        58 => 0xdf,            // A2R10G10B10_UNORM_PACK32: A2R10G10B10
        64 => 0xd1,            // A2B10G10R10_UNORM_PACK32: A2B10G10R10
        68 => 0xd2,            // A2B10G10R10_UINT_PACK32: AU2BU10GU10RU10
        70 => 0xee,            // R16_UNORM: R16
        71 => 0xef,            // R16_SNORM: RN16
        74 => 0xf1,            // R16_UINT: RU16
        75 => 0xf0,            // R16_SINT: RS16
        76 => 0xf2,            // R16_SFLOAT: RF16
        77 => 0xda,            // R16G16_UNORM: R16_G16
        78 => 0xdb,            // R16G16_SNORM: RN16_GN16
        81 => 0xdd,            // R16G16_UINT: RU16_GU16
        82 => 0xdc,            // R16G16_SINT: RS16_GS16
        83 => 0xde,            // R16G16_SFLOAT: RF16_GF16
        91 => 0xc6,            // R16G16B16A16_UNORM: R16_G16_B16_A16
        92 => 0xc7,            // R16G16B16A16_SNORM: RN16_GN16_BN16_AN16
        95 => 0xc9,            // R16G16B16A16_UINT: RU16_GU16_BU16_AU16
        96 => 0xc8,            // R16G16B16A16_SINT: RS16_GS16_BS16_AS16
        97 => 0xca,            // R16G16B16A16_SFLOAT: RF16_GF16_BF16_AF16
        98 => 0xe4,            // R32_UINT: RU32
        99 => 0xe3,            // R32_SINT: RS32
        100 => 0xe5,           // R32_SFLOAT: RF32
        101 => 0xcd,           // R32G32_UINT: RU32_GU32
        102 => 0xcc,           // R32G32_SINT: RS32_GS32
        103 => 0xcb,           // R32G32_SFLOAT: RF32_GF32
        107 => 0xc2,           // R32G32B32A32_UINT: RU32_GU32_BU32_AU32
        108 => 0xc1,           // R32G32B32A32_SINT: RS32_GS32_BS32_AS32
        109 => 0xc0,           // R32G32B32A32_SFLOAT: RF32_GF32_BF32_AF32
        122 => 0xe0,           // B10G11R11_UFLOAT_PACK32: BF10GF11RF11
        1_000_470_001 => 0xf7, // A8_UNORM: A8
        _ => return None,
    })
}

/// `SET_ZT_FORMAT` of a depth/stencil `VkFormat` (D16_UNORM_S8_UINT, which NVK does not
/// offer, as D24_UNORM_S8_UINT).
fn depth_stencil_target(format: u32) -> Option<u32> {
    Some(match format {
        124 => 0x13,       // D16_UNORM: Z16
        125 => 0x15,       // X8_D24_UNORM_PACK32: X8Z24
        126 => 0x0a,       // D32_SFLOAT: ZF32
        127 => 0x17,       // S8_UINT: S8
        128 | 129 => 0x16, // D16_UNORM_S8_UINT, D24_UNORM_S8_UINT: S8Z24
        130 => 0x19,       // D32_SFLOAT_S8_UINT: ZF32_X24S8
        _ => return None,
    })
}

/// An image's dimensionality (`VkImageType`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ImageType {
    /// `VK_IMAGE_TYPE_1D`.
    D1,
    /// `VK_IMAGE_TYPE_2D`.
    #[default]
    D2,
    /// `VK_IMAGE_TYPE_3D`.
    D3,
}

impl ImageType {
    /// The type of `VkImageType` `value`; an unknown value is taken as 2D.
    pub fn of_vk(value: u32) -> ImageType {
        match value {
            0 => ImageType::D1,
            2 => ImageType::D3,
            _ => ImageType::D2,
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
    /// Mip levels (`VkImageCreateInfo::mipLevels`).
    pub mip_levels: u32,
    /// Samples per pixel.
    pub samples: u32,
    /// `VK_IMAGE_TILING_LINEAR`: a pitch-linear image.
    pub linear: bool,
    /// 1D, 2D or 3D.
    pub image_type: ImageType,
    /// Viewed as 2D (NIL's `NIL_IMAGE_USAGE_2D_VIEW_BIT`): a 3D image's blocks are one
    /// GOB deep.
    pub views_2d: bool,
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
    /// log2 of the block depth in GOBs (0 but for a block-linear 3D level).
    pub block_depth_log2: u32,
    /// Elements across, rows and slices (1 but for a 3D level): the level's extent in
    /// elements (`nil_image_level_extent_px` through `nil_extent4d_px_to_el`).
    pub extent_el: [u32; 3],
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
    /// An image the trace never created, standing in where a command names one: one
    /// layer, level and sample, block-linear, unbound.
    pub fn stand_in(format: u32, extent: [u32; 3]) -> Image {
        Image {
            format,
            extent,
            array_layers: 1,
            mip_levels: 1,
            samples: 1,
            linear: false,
            image_type: ImageType::D2,
            views_2d: false,
            addr: 0,
        }
    }

    /// Whether NVK 25.0.7 lays an image of `VkImageCreateFlags` `flags`, usage `usage`,
    /// 3D or not, in format `format` out for 2D views (nvk_image_init): created
    /// 2D-array or 2D-view compatible, or a 3D storage image (NVK treats those as 2D
    /// arrays), or a 3D depth/stencil image (cleared as a 2D array).
    pub fn views_2d_for(flags: u32, usage: u32, three_d: bool, format: u32) -> bool {
        const ARRAY_2D_COMPATIBLE: u32 = 0x20;
        const VIEW_2D_COMPATIBLE: u32 = 0x2_0000;
        const USAGE_STORAGE: u32 = 0x8;
        flags & (ARRAY_2D_COMPATIBLE | VIEW_2D_COMPATIBLE) != 0
            || usage & USAGE_STORAGE != 0
            || (three_d && TargetFormat::of_vk(format).depth_stencil)
    }

    /// What a linear image needs of its memory on NVK (nvk_get_image_memory_requirements
    /// of NIL's linear layout, `Image::new_linear`): its rows 128 bytes apart — 256 on
    /// Kepler and the first Maxwell, whose image storage wants 256-byte-aligned
    /// addresses —, as many bytes as its rows take, aligned as its rows are.
    pub fn linear_memory_needs(&self, eng3d: u16) -> super::MemoryNeeds {
        use crate::chipset::classes::{KEPLER_A, MAXWELL_B};
        let alignment: u32 = if (KEPLER_A..MAXWELL_B).contains(&eng3d) {
            256
        } else {
            128
        };
        let element = block_of_vk(self.format);
        let grid = self.sample_grid();
        let row_bytes = self
            .level_row_elements(0, element, grid)
            .saturating_mul(element.bytes);
        let rows = self.level_rows(0, element, grid);
        super::MemoryNeeds {
            size: u64::from(round_up(row_bytes, alignment)) * u64::from(rows),
            alignment: u64::from(alignment),
        }
    }

    /// Whether the image is 3D (`VK_IMAGE_TYPE_3D`).
    pub fn three_d(&self) -> bool {
        self.image_type == ImageType::D3
    }

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

    /// Level `mip`'s layout, as NIL lays the image out (`nil_image_init` for a
    /// uncompressed colour or depth format): block-linear levels of 64-byte-wide GOBs
    /// eight rows high, each level's rows aligned to its block height (level 0's
    /// `Tiling::choose`, at most 32 GOBs, clamped to the level as the hardware does),
    /// 3D levels' slices to their block depth; a linear level's rows 128-byte aligned.
    /// Layers hold every level; the array stride is that size aligned to a level 0
    /// block.
    pub fn level(&self, mip: u32) -> Level {
        let levels = self.mip_levels.clamp(1, 16);
        let mip = mip.min(levels - 1);
        let depth0 = if self.three_d() {
            self.extent[2].max(1)
        } else {
            1
        };
        // The format's element and the sample grid, looked up once for every level.
        let element = block_of_vk(self.format);
        let grid = self.sample_grid();
        // Level 0's block height and depth in GOBs (log2); one GOB deep for 2D views.
        let block0 = self.block_log2(self.level_rows(0, element, grid), depth0);
        let block0 = (block0.0, if self.views_2d { 0 } else { block0.1 });
        let mut offset = 0u64;
        let mut chosen = None;
        for m in 0..levels {
            let rows = self.level_rows(m, element, grid);
            let depth = (depth0 >> m).max(1);
            let elements = self.level_row_elements(m, element, grid);
            let row_bytes = elements.saturating_mul(element.bytes);
            let (row_stride, block, aligned_rows, aligned_depth) = if self.linear {
                (round_up(row_bytes, 128), (0, 0), rows, 1)
            } else {
                let (h, d) = self.block_log2(rows, depth);
                let block = (h.min(block0.0), d.min(block0.1));
                (
                    round_up(row_bytes, GOB_WIDTH),
                    block,
                    round_up(rows, GOB_HEIGHT << block.0),
                    round_up(depth, 1 << block.1),
                )
            };
            if m == mip {
                chosen = Some(Level {
                    offset,
                    row_stride,
                    height: rows,
                    block_height_log2: block.0,
                    block_depth_log2: block.1,
                    extent_el: [elements, rows, depth],
                    array_stride: 0,
                });
            }
            offset = offset.saturating_add(
                u64::from(row_stride) * u64::from(aligned_rows) * u64::from(aligned_depth),
            );
        }
        let block_bytes = if self.linear {
            1
        } else {
            u64::from(GOB_WIDTH * GOB_HEIGHT) << (block0.0 + block0.1)
        };
        let mut level = chosen.unwrap_or(Level {
            offset: 0,
            row_stride: 0,
            height: 0,
            block_height_log2: 0,
            block_depth_log2: 0,
            extent_el: [0; 3],
            array_stride: 0,
        });
        level.array_stride = u32::try_from(offset.next_multiple_of(block_bytes))
            .unwrap_or(!(GOB_WIDTH * GOB_HEIGHT - 1));
        level
    }

    /// Level `m`'s rows: of samples (`grid`, the image's [`sample_grid`](Self::sample_grid)),
    /// or of blocks (`element`, the format's) for a compressed format.
    fn level_rows(&self, m: u32, element: Block, grid: (u32, u32)) -> u32 {
        let rows = (self.extent[1] >> m).max(1).saturating_mul(grid.1);
        rows.div_ceil(element.height.max(1))
    }

    /// Level `m`'s elements a row: samples (`grid`), or blocks (`element`) for a
    /// compressed format.
    fn level_row_elements(&self, m: u32, element: Block, grid: (u32, u32)) -> u32 {
        let width = (self.extent[0] >> m).max(1).saturating_mul(grid.0);
        width.div_ceil(element.width.max(1))
    }

    /// Bytes per element of the image's format.
    pub fn element_bytes(&self) -> u32 {
        block_of_vk(self.format).bytes.max(1)
    }

    /// The block height and depth (log2, in GOBs) that cover `rows` and `depth`, at
    /// most 32 GOBs each (`Tiling::clamp` of `Tiling::choose`'s 2^5).
    fn block_log2(&self, rows: u32, depth: u32) -> (u32, u32) {
        let ceil_log2 = |x: u32| x.max(1).next_power_of_two().trailing_zeros();
        (
            ceil_log2(rows.div_ceil(GOB_HEIGHT)).min(5),
            ceil_log2(depth).min(5),
        )
    }
}

use super::format::{block_of_vk, Block};

/// `x` rounded up to a multiple of `m` (a power of two), saturating: an image past
/// Vulkan's size limits (a hostile trace's) lays out at the largest multiple.
fn round_up(x: u32, m: u32) -> u32 {
    x.checked_next_multiple_of(m).unwrap_or(!(m - 1))
}
