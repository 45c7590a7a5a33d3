//! Swapchains replayed offscreen: each swapchain image is an image of the same format,
//! size and usage (plus transfer source); a present copies the presented image out
//! when frames are checked or dumped, and hashes it.

use std::collections::HashMap;
use std::path::Path;

use ash::vk;
use trace_format::frame_checksum::readback::{self, ReadBack};

use super::memory::Memory;
use super::DeviceError;

/// A swapchain as the replay stands it in.
pub struct Swapchain {
    /// Its images' format.
    pub format: vk::Format,
    /// Their size.
    pub extent: vk::Extent2D,
    /// Their usage, as the program asked.
    pub usage: vk::ImageUsageFlags,
    /// Whether the program may view the images in other formats than theirs
    /// (`VK_SWAPCHAIN_CREATE_MUTABLE_FORMAT_BIT_KHR`: Zink views them as sRGB or not).
    pub mutable_format: bool,
    /// The images, in the program's order.
    pub images: Vec<(vk::Image, vk::DeviceMemory)>,
}

/// `VkSwapchainCreateInfoKHR`'s members the replay uses, from its recorded bytes.
pub fn swapchain_of(bytes: &[u8]) -> Option<Swapchain> {
    let info = crate::swapchain::SwapchainInfo::of_bytes(bytes)?;
    Some(Swapchain {
        format: vk::Format::from_raw(info.format as i32),
        extent: vk::Extent2D {
            width: info.extent[0],
            height: info.extent[1],
        },
        usage: vk::ImageUsageFlags::from_raw(info.usage),
        mutable_format: vk::SwapchainCreateFlagsKHR::from_raw(info.flags)
            .contains(vk::SwapchainCreateFlagsKHR::MUTABLE_FORMAT),
        images: Vec::new(),
    })
}

/// Creates `count` images standing in for a swapchain's.
pub fn create_images(
    device: &ash::Device,
    memory: &Memory,
    s: &mut Swapchain,
    count: usize,
    seq: u64,
) -> Result<(), DeviceError> {
    let fail = |what: &str, e: vk::Result| DeviceError::Call {
        seq,
        command: format!("vkGetSwapchainImagesKHR ({what})"),
        reason: e.to_string(),
    };
    while s.images.len() < count {
        let flags = if s.mutable_format {
            vk::ImageCreateFlags::MUTABLE_FORMAT
        } else {
            vk::ImageCreateFlags::empty()
        };
        let info = vk::ImageCreateInfo::default()
            .flags(flags)
            .image_type(vk::ImageType::TYPE_2D)
            .format(s.format)
            .extent(vk::Extent3D {
                width: s.extent.width,
                height: s.extent.height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(s.usage | vk::ImageUsageFlags::TRANSFER_SRC);
        // SAFETY: a live device; `info` lives across the calls.
        unsafe {
            let image = device
                .create_image(&info, None)
                .map_err(|e| fail("an image", e))?;
            let req = device.get_image_memory_requirements(image);
            let type_index =
                memory
                    .local_type(req.memory_type_bits)
                    .ok_or_else(|| DeviceError::Missing {
                        what: "memory type for the swapchain's images".into(),
                        seq: Some(seq),
                    })?;
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(type_index);
            let mem = device
                .allocate_memory(&alloc, None)
                .map_err(|e| fail("memory", e))?;
            device
                .bind_image_memory(image, mem, 0)
                .map_err(|e| fail("binding", e))?;
            s.images.push((image, mem));
        }
    }
    Ok(())
}

/// An image a frame showed: where it is, in what layout, format and size.
#[derive(Clone, Copy, Debug)]
pub struct Shown {
    /// The image.
    pub image: vk::Image,
    /// Its layout now (it is left in it).
    pub layout: vk::ImageLayout,
    /// Its format.
    pub format: vk::Format,
    /// Its first mip level's size.
    pub extent: vk::Extent2D,
}

/// One frame read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameImage {
    /// Its width and height.
    pub extent: (u32, u32),
    /// Its format.
    pub format: vk::Format,
    /// Its texels, rows packed.
    pub texels: Vec<u8>,
}

impl FrameImage {
    /// The frame's checksum: CRC-32 of its packed texels.
    pub fn checksum(&self) -> u32 {
        trace_format::frame_checksum::checksum(&self.texels)
    }

    /// Writes it as an 8-bit RGBA PNG (formats with 4 bytes of 8-bit channels).
    pub fn write_png(&self, path: &Path) -> Result<(), String> {
        let bgra = matches!(
            self.format,
            vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB
        );
        let rgba = matches!(
            self.format,
            vk::Format::R8G8B8A8_UNORM | vk::Format::R8G8B8A8_SRGB
        );
        if !bgra && !rgba {
            return Err(format!(
                "frames of format {:?} are not written as PNG",
                self.format
            ));
        }
        let mut pixels = self.texels.clone();
        for px in pixels.chunks_exact_mut(4) {
            if bgra {
                px.swap(0, 2);
            }
            // Presented alpha is not shown: write the picture opaque.
            px[3] = 255;
        }
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut encoder =
            png::Encoder::new(std::io::BufWriter::new(file), self.extent.0, self.extent.1);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        encoder
            .write_header()
            .and_then(|mut w| w.write_image_data(&pixels))
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// What reading frames back needs: a command pool, a buffer and a fence, made once.
pub struct Readback {
    pool: vk::CommandPool,
    fence: vk::Fence,
    buffer: Option<(vk::Buffer, vk::DeviceMemory, *mut u8, u64)>,
}

impl Readback {
    /// Creates the pool and fence on `family`.
    pub fn new(device: &ash::Device, family: u32) -> Result<Self, vk::Result> {
        // SAFETY: a live device.
        unsafe {
            let pool = device.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )?;
            let fence = device.create_fence(&vk::FenceCreateInfo::default(), None)?;
            Ok(Readback {
                pool,
                fence,
                buffer: None,
            })
        }
    }

    /// Copies `shown` (left in its layout) out and returns its texels.
    pub fn read(
        &mut self,
        device: &ash::Device,
        queue: vk::Queue,
        memory: &Memory,
        shown: &Shown,
    ) -> Result<FrameImage, String> {
        let Shown {
            image,
            layout,
            format,
            extent,
        } = *shown;
        let texel = trace_format::frame_checksum::texel_size(format.as_raw() as u32)
            .ok_or_else(|| format!("frames of format {format:?} cannot be read back"))?;
        let size = u64::from(extent.width) * u64::from(extent.height) * texel;
        // SAFETY: a live device and queue; every object below is the replay's own.
        unsafe {
            if self.buffer.is_none_or(|b| b.3 < size) {
                if let Some((buffer, mem, _, _)) = self.buffer.take() {
                    device.destroy_buffer(buffer, None);
                    device.free_memory(mem, None);
                }
                let buffer = device
                    .create_buffer(
                        &vk::BufferCreateInfo::default()
                            .size(size)
                            .usage(vk::BufferUsageFlags::TRANSFER_DST),
                        None,
                    )
                    .map_err(|e| e.to_string())?;
                let req = device.get_buffer_memory_requirements(buffer);
                let type_index = memory
                    .host_type(req.memory_type_bits)
                    .ok_or("no host-visible memory for reading frames back")?;
                let mem = device
                    .allocate_memory(
                        &vk::MemoryAllocateInfo::default()
                            .allocation_size(req.size)
                            .memory_type_index(type_index),
                        None,
                    )
                    .map_err(|e| e.to_string())?;
                device
                    .bind_buffer_memory(buffer, mem, 0)
                    .map_err(|e| e.to_string())?;
                let mapped = device
                    .map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                    .map_err(|e| e.to_string())? as *mut u8;
                self.buffer = Some((buffer, mem, mapped, size));
            }
            let Some((buffer, _, mapped, _)) = self.buffer else {
                return Err("no readback buffer".into());
            };
            let cmd = device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.pool)
                        .command_buffer_count(1),
                )
                .map_err(|e| e.to_string())?[0];
            device
                .begin_command_buffer(
                    cmd,
                    &vk::CommandBufferBeginInfo::default()
                        .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                )
                .map_err(|e| e.to_string())?;
            readback::record(
                device,
                cmd,
                &[ReadBack {
                    image,
                    layout,
                    extent,
                    offset: 0,
                }],
                buffer,
            );
            device.end_command_buffer(cmd).map_err(|e| e.to_string())?;
            let cmds = [cmd];
            device
                .queue_submit(
                    queue,
                    &[vk::SubmitInfo::default().command_buffers(&cmds)],
                    self.fence,
                )
                .map_err(|e| e.to_string())?;
            device
                .wait_for_fences(&[self.fence], true, u64::MAX)
                .map_err(|e| e.to_string())?;
            device
                .reset_fences(&[self.fence])
                .map_err(|e| e.to_string())?;
            device.free_command_buffers(self.pool, &cmds);
            let texels = std::slice::from_raw_parts(mapped, size as usize).to_vec();
            Ok(FrameImage {
                extent: (extent.width, extent.height),
                format,
                texels,
            })
        }
    }

    /// Destroys what it made.
    pub fn destroy(&mut self, device: &ash::Device) {
        // SAFETY: the device is idle.
        unsafe {
            if let Some((buffer, mem, _, _)) = self.buffer.take() {
                device.destroy_buffer(buffer, None);
                device.free_memory(mem, None);
            }
            device.destroy_fence(self.fence, None);
            device.destroy_command_pool(self.pool, None);
        }
    }
}

/// Every swapchain, by recorded id.
pub type Swapchains = HashMap<u64, Swapchain>;
