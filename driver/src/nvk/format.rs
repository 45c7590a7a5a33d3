//! A Vulkan format's element: its size in bytes and, for a block-compressed format,
//! the pixels one element covers (`util_format_get_blocksize`,
//! `util_format_get_blockwidth` and `util_format_get_blockheight` of the format NIL
//! lays the image out in). NIL measures levels, offsets and copies in elements
//! (`nil_extent4d_px_to_el`), so every layout and copy the model computes goes
//! through this table.

/// One element of a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Bytes per element.
    pub bytes: u32,
    /// Pixels an element covers across (1 for an uncompressed format).
    pub width: u32,
    /// Pixels an element covers down.
    pub height: u32,
}

impl Block {
    const fn texel(bytes: u32) -> Block {
        Block {
            bytes,
            width: 1,
            height: 1,
        }
    }

    const fn compressed(bytes: u32, width: u32, height: u32) -> Block {
        Block {
            bytes,
            width,
            height,
        }
    }

    /// Pixels `[x, y]` in elements, rounded up (`nil_extent4d_px_to_el`).
    pub fn elements(&self, px: [u32; 2]) -> [u32; 2] {
        [
            px[0].div_ceil(self.width.max(1)),
            px[1].div_ceil(self.height.max(1)),
        ]
    }

    /// An offset of `px` pixels in elements (`nil_offset4d_px_to_el`: offsets lie on
    /// element boundaries).
    pub fn element_offset(&self, px: [u32; 2]) -> [u32; 2] {
        [px[0] / self.width.max(1), px[1] / self.height.max(1)]
    }
}

/// The ASTC block sizes in `VkFormat` order, each as UNORM then SRGB.
const ASTC: [(u32, u32); 14] = [
    (4, 4),
    (5, 4),
    (5, 5),
    (6, 5),
    (6, 6),
    (8, 5),
    (8, 6),
    (8, 8),
    (10, 5),
    (10, 6),
    (10, 8),
    (10, 10),
    (12, 10),
    (12, 12),
];

/// The element of `VkFormat` `format`. Depth/stencil formats take the size of the
/// one plane NVK gives them before Blackwell (D24S8 as Z24S8, D32S8 as
/// Z32_FLOAT_S8X24); an unknown format is taken as four bytes.
pub fn block_of_vk(format: u32) -> Block {
    match format {
        1 => Block::texel(1),                     // R4G4_UNORM_PACK8
        2..=8 => Block::texel(2),                 // 4444, 565, 5551 packs
        9..=15 => Block::texel(1),                // R8
        16..=22 => Block::texel(2),               // R8G8
        23..=36 => Block::texel(3),               // R8G8B8, B8G8R8
        37..=69 => Block::texel(4),               // RGBA8, BGRA8, ABGR8, A2 10-bit
        70..=76 => Block::texel(2),               // R16
        77..=83 => Block::texel(4),               // R16G16
        84..=90 => Block::texel(6),               // R16G16B16
        91..=97 => Block::texel(8),               // R16G16B16A16
        98..=100 => Block::texel(4),              // R32
        101..=103 => Block::texel(8),             // R32G32
        104..=106 => Block::texel(12),            // R32G32B32
        107..=109 => Block::texel(16),            // R32G32B32A32
        110..=112 => Block::texel(8),             // R64
        113..=115 => Block::texel(16),            // R64G64
        116..=118 => Block::texel(24),            // R64G64B64
        119..=121 => Block::texel(32),            // R64G64B64A64
        122 | 123 => Block::texel(4),             // B10G11R11, E5B9G9R9
        124 => Block::texel(2),                   // D16_UNORM
        125 | 126 => Block::texel(4),             // X8_D24, D32_SFLOAT
        127 => Block::texel(1),                   // S8_UINT
        128 | 129 => Block::texel(4),             // D16S8 (as Z24S8), D24S8
        130 => Block::texel(8),                   // D32_SFLOAT_S8_UINT
        131..=134 => Block::compressed(8, 4, 4),  // BC1
        135..=138 => Block::compressed(16, 4, 4), // BC2, BC3
        139 | 140 => Block::compressed(8, 4, 4),  // BC4
        141..=146 => Block::compressed(16, 4, 4), // BC5, BC6H, BC7
        147..=150 => Block::compressed(8, 4, 4),  // ETC2 RGB8, RGB8A1
        151 | 152 => Block::compressed(16, 4, 4), // ETC2 RGBA8
        153 | 154 => Block::compressed(8, 4, 4),  // EAC R11
        155 | 156 => Block::compressed(16, 4, 4), // EAC R11G11
        157..=184 => {
            let (w, h) = ASTC[((format - 157) / 2) as usize];
            Block::compressed(16, w, h)
        }
        1_000_340_000 | 1_000_340_001 => Block::texel(2), // A4R4G4B4, A4B4G4R4
        1_000_470_000 => Block::texel(2),                 // A1B5G5R5_UNORM_PACK16
        1_000_470_001 => Block::texel(1),                 // A8_UNORM
        _ => Block::texel(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_formats_count_their_blocks() {
        // BC1_RGBA_UNORM_BLOCK: 8 bytes a 4×4 block; a 10×6 level is 3×2 blocks.
        let bc1 = block_of_vk(133);
        assert_eq!(bc1.bytes, 8);
        assert_eq!(bc1.elements([10, 6]), [3, 2]);
        // ASTC_12x12_SRGB_BLOCK is the last ASTC format.
        assert_eq!(block_of_vk(184), Block::compressed(16, 12, 12));
        assert_eq!(block_of_vk(109).bytes, 16);
        assert_eq!(block_of_vk(130).bytes, 8);
    }
}
