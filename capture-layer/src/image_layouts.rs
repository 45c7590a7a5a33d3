//! The layout each image is in after the work submitted so far, for reading back the
//! image an offscreen program names at a frame boundary (`VkFrameBoundaryEXT::pImages`):
//! a copy must transition it from the layout it is in.
//!
//! Command buffers note the layouts their render passes leave images in (the
//! attachments' final layouts) and their image barriers' new layouts, in recording
//! order; a submit applies its command buffers' notes. Render passes, framebuffers and
//! views are noted as they are created; the per-command notes start only once a
//! program names an image at a frame boundary, so programs that do not pay nothing.

use foldhash::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use ash::vk;
use ash::vk::Handle;

/// What reading an image back needs to know of it.
#[derive(Clone, Copy, Debug)]
pub struct ImageInfo {
    /// Its format.
    pub format: vk::Format,
    /// Its first mip level's size.
    pub extent: vk::Extent2D,
    /// Whether it can be copied from.
    pub copyable: bool,
}

#[derive(Default)]
struct State {
    images: HashMap<u64, ImageInfo>,
    view_image: HashMap<u64, u64>,
    framebuffer_views: HashMap<u64, Vec<u64>>,
    pass_final_layouts: HashMap<u64, Vec<vk::ImageLayout>>,
    /// Per command buffer: (image, layout) in recording order.
    pending: HashMap<u64, Vec<(u64, vk::ImageLayout)>>,
    current: HashMap<u64, vk::ImageLayout>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);
static TRACKING: AtomicBool = AtomicBool::new(false);

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    f(guard.get_or_insert_with(State::default))
}

/// Starts following command buffers' layout changes (a program named an image at a
/// frame boundary).
pub fn start() {
    TRACKING.store(true, Ordering::Relaxed);
}

fn tracking() -> bool {
    TRACKING.load(Ordering::Relaxed)
}

/// Notes an image's format, size and whether it can be copied from.
pub fn image_created(image: vk::Image, info: &vk::ImageCreateInfo) {
    let entry = ImageInfo {
        format: info.format,
        extent: vk::Extent2D {
            width: info.extent.width,
            height: info.extent.height,
        },
        copyable: info.usage.contains(vk::ImageUsageFlags::TRANSFER_SRC)
            && info.samples == vk::SampleCountFlags::TYPE_1
            && info.image_type == vk::ImageType::TYPE_2D,
    };
    with(|s| s.images.insert(image.as_raw(), entry));
}

/// What is known of `image`.
pub fn image_info(image: vk::Image) -> Option<ImageInfo> {
    with(|s| s.images.get(&image.as_raw()).copied())
}

/// Notes a view's image.
pub fn view_created(view: vk::ImageView, image: vk::Image) {
    with(|s| s.view_image.insert(view.as_raw(), image.as_raw()));
}

/// Notes a framebuffer's attachments.
pub fn framebuffer_created(framebuffer: vk::Framebuffer, views: &[vk::ImageView]) {
    with(|s| {
        s.framebuffer_views.insert(
            framebuffer.as_raw(),
            views.iter().map(|v| v.as_raw()).collect(),
        )
    });
}

/// Notes a render pass's attachments' final layouts.
pub fn render_pass_created(
    pass: vk::RenderPass,
    final_layouts: impl Iterator<Item = vk::ImageLayout>,
) {
    let layouts = final_layouts.collect();
    with(|s| s.pass_final_layouts.insert(pass.as_raw(), layouts));
}

/// Forgets a destroyed image, view, framebuffer or render pass (so the notes do not
/// grow with a program that makes and destroys them every frame).
pub fn destroyed(ty: vk::ObjectType, handle: u64) {
    match ty {
        vk::ObjectType::IMAGE => with(|s| {
            s.images.remove(&handle);
            s.current.remove(&handle);
        }),
        vk::ObjectType::IMAGE_VIEW => with(|s| {
            s.view_image.remove(&handle);
        }),
        vk::ObjectType::FRAMEBUFFER => with(|s| {
            s.framebuffer_views.remove(&handle);
        }),
        vk::ObjectType::RENDER_PASS => with(|s| {
            s.pass_final_layouts.remove(&handle);
        }),
        _ => {}
    }
}

/// Forgets freed command buffers' notes.
///
/// # Safety
/// `cbs` must point to `count` handles (or be null).
pub unsafe fn freed(cbs: *const vk::CommandBuffer, count: u32) {
    if tracking() && !cbs.is_null() {
        let cbs = std::slice::from_raw_parts(cbs, count as usize);
        with(|s| {
            for cb in cbs {
                s.pending.remove(&cb.as_raw());
            }
        });
    }
}

/// A command buffer begins recording: its earlier notes are dropped.
pub fn begin(cb: vk::CommandBuffer) {
    if tracking() {
        with(|s| s.pending.remove(&cb.as_raw()));
    }
}

/// A render pass instance begins: its attachments will be in their final layouts.
pub fn render_pass_begun(
    cb: vk::CommandBuffer,
    pass: vk::RenderPass,
    framebuffer: vk::Framebuffer,
) {
    if !tracking() {
        return;
    }
    with(|s| {
        let (Some(views), Some(layouts)) = (
            s.framebuffer_views.get(&framebuffer.as_raw()),
            s.pass_final_layouts.get(&pass.as_raw()),
        ) else {
            return;
        };
        let changes: Vec<(u64, vk::ImageLayout)> = views
            .iter()
            .zip(layouts)
            .filter_map(|(v, l)| s.view_image.get(v).map(|i| (*i, *l)))
            .collect();
        s.pending.entry(cb.as_raw()).or_default().extend(changes);
    });
}

/// An image barrier moves `image` to `layout`.
pub fn barrier(cb: vk::CommandBuffer, image: vk::Image, layout: vk::ImageLayout) {
    if tracking() && layout != vk::ImageLayout::UNDEFINED {
        with(|s| {
            s.pending
                .entry(cb.as_raw())
                .or_default()
                .push((image.as_raw(), layout))
        });
    }
}

/// The image barriers of `vkCmdPipelineBarrier`.
///
/// # Safety
/// `barriers` must point to `count` barriers.
pub unsafe fn image_barriers(
    cb: vk::CommandBuffer,
    barriers: *const vk::ImageMemoryBarrier,
    count: u32,
) {
    if tracking() && !barriers.is_null() {
        for b in std::slice::from_raw_parts(barriers, count as usize) {
            barrier(cb, b.image, b.new_layout);
        }
    }
}

/// The image barriers of `vkCmdPipelineBarrier2`.
///
/// # Safety
/// `info` must be a valid dependency info.
pub unsafe fn dependency_info(cb: vk::CommandBuffer, info: *const vk::DependencyInfo) {
    let Some(info) = info.as_ref().filter(|_| tracking()) else {
        return;
    };
    if !info.p_image_memory_barriers.is_null() {
        for b in std::slice::from_raw_parts(
            info.p_image_memory_barriers,
            info.image_memory_barrier_count as usize,
        ) {
            barrier(cb, b.image, b.new_layout);
        }
    }
}

/// Command buffers were submitted: the layouts they leave images in are current.
pub fn submitted(cbs: impl Iterator<Item = vk::CommandBuffer>) {
    if !tracking() {
        return;
    }
    with(|s| {
        for cb in cbs {
            if let Some(changes) = s.pending.get(&cb.as_raw()) {
                for (image, layout) in changes.clone() {
                    s.current.insert(image, layout);
                }
            }
        }
    });
}

/// The layout `image` is in after what was submitted, where known.
pub fn layout_of(image: vk::Image) -> Option<vk::ImageLayout> {
    with(|s| s.current.get(&image.as_raw()).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_submitted_render_pass_leaves_its_attachment_in_its_final_layout_and_a_barrier_moves_it() {
        let (image, view) = (vk::Image::from_raw(0x1000), vk::ImageView::from_raw(0x2000));
        let (pass, framebuffer) = (
            vk::RenderPass::from_raw(0x3000),
            vk::Framebuffer::from_raw(0x4000),
        );
        let (a, b) = (
            vk::CommandBuffer::from_raw(0x5000),
            vk::CommandBuffer::from_raw(0x6000),
        );
        view_created(view, image);
        framebuffer_created(framebuffer, &[view]);
        render_pass_created(
            pass,
            [vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL].into_iter(),
        );
        start();
        begin(a);
        render_pass_begun(a, pass, framebuffer);
        begin(b);
        barrier(b, image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL);
        // Recorded, not submitted: nothing known yet.
        assert_eq!(layout_of(image), None);
        submitted([a].into_iter());
        assert_eq!(
            layout_of(image),
            Some(vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL)
        );
        submitted([b].into_iter());
        assert_eq!(
            layout_of(image),
            Some(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
        );
        // Recorded again: the old notes go.
        begin(b);
        submitted([b].into_iter());
        assert_eq!(
            layout_of(image),
            Some(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
        );
    }
}
