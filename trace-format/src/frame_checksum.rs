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

/// The commands that read a frame's image back for its checksum, recorded alike by the
/// capture layer and the device replay (so both checksum the same bytes).
#[cfg(feature = "vulkan")]
pub mod readback {
    use ash::vk;

    /// An image read back: mip 0, layer 0, in `layout` before and after the copy, its
    /// texels copied rows packed to `offset` in the buffer.
    #[derive(Clone, Copy, Debug)]
    pub struct ReadBack {
        /// The image.
        pub image: vk::Image,
        /// The layout it is in, and is left in.
        pub layout: vk::ImageLayout,
        /// Its size.
        pub extent: vk::Extent2D,
        /// Where its texels go in the buffer.
        pub offset: u64,
    }

    /// Records into `cb` (begun) the copies of `images` into `buffer`, after all
    /// earlier work on the queue: each image moved to `TRANSFER_SRC_OPTIMAL` and back to
    /// its layout, the buffer made visible to the host.
    ///
    /// # Safety
    /// `cb` must be a command buffer of `device` in the recording state; each image's
    /// texels must fit in `buffer` at its offset.
    pub unsafe fn record(
        device: &ash::Device,
        cb: vk::CommandBuffer,
        images: &[ReadBack],
        buffer: vk::Buffer,
    ) {
        let range = vk::ImageSubresourceRange {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            base_mip_level: 0,
            level_count: 1,
            base_array_layer: 0,
            layer_count: 1,
        };
        let barrier = |image, from, to, src, dst| {
            vk::ImageMemoryBarrier::default()
                .old_layout(from)
                .new_layout(to)
                .src_access_mask(src)
                .dst_access_mask(dst)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image)
                .subresource_range(range)
        };
        let transfer = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
        let to_transfer: Vec<_> = images
            .iter()
            .map(|i| {
                barrier(
                    i.image,
                    i.layout,
                    transfer,
                    vk::AccessFlags::MEMORY_WRITE,
                    vk::AccessFlags::TRANSFER_READ,
                )
            })
            .collect();
        device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::ALL_COMMANDS,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &[],
            &[],
            &to_transfer,
        );
        for i in images {
            let region = vk::BufferImageCopy::default()
                .buffer_offset(i.offset)
                .image_subresource(vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    base_array_layer: 0,
                    layer_count: 1,
                })
                .image_extent(vk::Extent3D {
                    width: i.extent.width,
                    height: i.extent.height,
                    depth: 1,
                });
            device.cmd_copy_image_to_buffer(cb, i.image, transfer, buffer, &[region]);
        }
        let back: Vec<_> = images
            .iter()
            .map(|i| {
                barrier(
                    i.image,
                    transfer,
                    i.layout,
                    vk::AccessFlags::TRANSFER_READ,
                    vk::AccessFlags::MEMORY_READ,
                )
            })
            .collect();
        device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ)],
            &[],
            &back,
        );
    }
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
