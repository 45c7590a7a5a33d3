//! What a `FrameChecksum` record's checksum is, for the capture layer that records it
//! and the replay that compares with it: CRC-32 of a presented image's texels (mip 0,
//! layer 0), rows packed, in one of the formats below.

/// Bytes per texel of the formats frames are checksummed in, by `VkFormat` value;
/// `None` for the others (their frames get no checksum).
pub fn texel_size(format: u32) -> Option<u64> {
    Some(match format {
        // B8G8R8A8_UNORM, B8G8R8A8_SRGB, R8G8B8A8_UNORM, R8G8B8A8_SRGB,
        // A2R10G10B10_UNORM_PACK32, A2B10G10R10_UNORM_PACK32.
        44 | 50 | 37 | 43 | 58 | 64 => 4,
        // R16G16B16A16_UNORM, R16G16B16A16_SFLOAT.
        91 | 97 => 8,
        // R5G6B5_UNORM_PACK16, B5G6R5_UNORM_PACK16.
        4 | 5 => 2,
        _ => return None,
    })
}

/// The checksum of an image's packed texels.
pub fn checksum(texels: &[u8]) -> u32 {
    crc32fast::hash(texels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_swapchain_formats_have_four_byte_texels() {
        assert_eq!(texel_size(44), Some(4));
        assert_eq!(texel_size(50), Some(4));
        assert_eq!(texel_size(97), Some(8));
        // A depth format is no frame.
        assert_eq!(texel_size(126), None);
    }
}
