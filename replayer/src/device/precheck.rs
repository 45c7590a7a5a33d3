//! One look over the whole trace before the replay: every image it will create, checked
//! against the replay device before anything is submitted (format with type, tiling,
//! usage and flags), and how many frames it ends (for loops over every frame).

use std::path::Path;

use ash::vk;
use trace_format::generated::trace::Call;
use trace_format::{ReadOptions, TraceReader};

use super::DeviceError;

/// One image the trace creates.
struct ImageUse {
    seq: u64,
    format: vk::Format,
    ty: vk::ImageType,
    tiling: vk::ImageTiling,
    usage: vk::ImageUsageFlags,
    flags: vk::ImageCreateFlags,
}

/// What the look over the trace found.
#[derive(Default)]
pub struct Prescan {
    images: Vec<ImageUse>,
    /// The frames the trace ends: its frame boundaries.
    pub frames: u64,
}

/// Reads the whole trace once for what the replay must know before it starts.
pub fn scan(trace: &Path) -> Result<Prescan, DeviceError> {
    let mut out = Prescan::default();
    for chunk in TraceReader::open_with(trace, &ReadOptions::parallel())? {
        for record in chunk?.records() {
            if record.call_type() == Call::FrameBoundary {
                out.frames += 1;
                continue;
            }
            if record.call_type() != Call::CreateImage {
                continue;
            }
            if let Some(c) = record.call_as_create_image() {
                out.images.push(ImageUse {
                    seq: record.envelope().seq(),
                    format: vk::Format::from_raw(c.format() as i32),
                    ty: vk::ImageType::from_raw(c.image_type() as i32),
                    tiling: vk::ImageTiling::from_raw(c.tiling() as i32),
                    usage: vk::ImageUsageFlags::from_raw(c.usage()),
                    flags: vk::ImageCreateFlags::from_raw(c.flags()),
                });
            }
        }
    }
    Ok(out)
}

/// Checks that `physical` can make every image the trace creates; the first it
/// cannot make is named with its call.
pub fn check(
    prescan: &Prescan,
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> Result<(), DeviceError> {
    let mut seen = std::collections::HashSet::new();
    for image in &prescan.images {
        let key = (
            image.format,
            image.ty,
            image.tiling,
            image.usage,
            image.flags,
        );
        if !seen.insert(key) {
            continue;
        }
        // SAFETY: a plain query of a live physical device.
        let supported = unsafe {
            instance.get_physical_device_image_format_properties(
                physical,
                image.format,
                image.ty,
                image.tiling,
                image.usage,
                image.flags,
            )
        };
        if supported.is_err() {
            return Err(DeviceError::Missing {
                what: format!(
                    "format {:?} for a {:?} {:?} image used as {:?}",
                    image.format, image.ty, image.tiling, image.usage
                ),
                seq: Some(image.seq),
            });
        }
    }
    Ok(())
}
