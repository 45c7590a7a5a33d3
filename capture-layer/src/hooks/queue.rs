//! Submits and presents: memory the program wrote is recorded before each submit, and
//! every present ends a frame.

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::*;

use super::objects::record_all_changes;
use super::util::{handles, slice};
use crate::recorder::{self, record, Scope};
use crate::{dispatch, frame_boundary};

/// `vkQueueSubmit`.
pub unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo,
    fence: vk::Fence,
) -> vk::Result {
    let Some(d) = dispatch::device_of(queue) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    record_all_changes(d);
    record(Scope::Frame, 0, || {
        let submits = slice(submits, count)
            .iter()
            .map(|s| {
                table!(SubmitInfoT {
                    wait_semaphores: Some(handles(s.p_wait_semaphores, s.wait_semaphore_count)),
                    wait_dst_stage_masks: Some(
                        slice(s.p_wait_dst_stage_mask, s.wait_semaphore_count)
                            .iter()
                            .map(|m| u64::from(m.as_raw()))
                            .collect(),
                    ),
                    command_buffers: Some(handles(s.p_command_buffers, s.command_buffer_count)),
                    signal_semaphores: Some(handles(
                        s.p_signal_semaphores,
                        s.signal_semaphore_count
                    )),
                })
            })
            .collect();
        Some(CallT::QueueSubmit(Box::new(table!(QueueSubmitT {
            queue: queue.as_raw(),
            submits: Some(submits),
            fence: fence.as_raw(),
        }))))
    });
    // What other threads recorded before the submit goes into the trace with it.
    recorder::sync();
    // Frame-boundary markers: noted, and taken off where the layer provides them.
    let mut ends_frame = false;
    let mut shown = Vec::new();
    let mut down: Vec<vk::SubmitInfo> = slice(submits, count).to_vec();
    for s in &mut down {
        let (marker, rest) = frame_boundary::find(s.p_next);
        ends_frame |= marker.ends;
        shown.extend(marker.images);
        if d.emulates_frame_boundary {
            s.p_next = rest;
        }
    }
    let r = (d.fns.fp_v1_0().queue_submit)(queue, count, down.as_ptr(), fence);
    crate::image_layouts::submitted(
        down.iter()
            .flat_map(|s| slice(s.p_command_buffers, s.command_buffer_count))
            .copied(),
    );
    if ends_frame {
        crate::frame_checksums::at_boundary(d, queue, &shown);
        crate::frame_checksums::before_frame_end(d);
        recorder::end_frame();
    }
    r
}

unsafe fn submit2(queue: vk::Queue, count: u32, submits: *const vk::SubmitInfo2, fence: vk::Fence) {
    record(Scope::Frame, 0, || {
        let submits = slice(submits, count)
            .iter()
            .map(|s| {
                let waits = slice(s.p_wait_semaphore_infos, s.wait_semaphore_info_count);
                table!(SubmitInfoT {
                    wait_semaphores: Some(waits.iter().map(|w| w.semaphore.as_raw()).collect()),
                    wait_dst_stage_masks: Some(
                        waits.iter().map(|w| w.stage_mask.as_raw()).collect()
                    ),
                    command_buffers: Some(
                        slice(s.p_command_buffer_infos, s.command_buffer_info_count)
                            .iter()
                            .map(|c| c.command_buffer.as_raw())
                            .collect(),
                    ),
                    signal_semaphores: Some(
                        slice(s.p_signal_semaphore_infos, s.signal_semaphore_info_count)
                            .iter()
                            .map(|w| w.semaphore.as_raw())
                            .collect(),
                    ),
                })
            })
            .collect();
        Some(CallT::QueueSubmit(Box::new(table!(QueueSubmitT {
            queue: queue.as_raw(),
            submits: Some(submits),
            fence: fence.as_raw(),
        }))))
    });
    // What other threads recorded before the submit goes into the trace with it.
    recorder::sync();
}

/// Hooks for `vkQueueSubmit2`, core and KHR.
macro_rules! submit2_hooks {
    ($($hook:ident, $name:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`")]
        pub unsafe extern "system" fn $hook(
            queue: vk::Queue,
            count: u32,
            submits: *const vk::SubmitInfo2,
            fence: vk::Fence,
        ) -> vk::Result {
            let Some(d) = dispatch::device_of(queue) else {
                return vk::Result::ERROR_DEVICE_LOST;
            };
            let Some(next) = d.ext::<vk::PFN_vkQueueSubmit2>(const { super::extension_slot($name) }) else {
                return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
            };
            record_all_changes(&d);
            submit2(queue, count, submits, fence);
            let mut ends_frame = false;
            let mut shown = Vec::new();
            let mut down: Vec<vk::SubmitInfo2> = slice(submits, count).to_vec();
            for s in &mut down {
                let (marker, rest) = frame_boundary::find(s.p_next);
                ends_frame |= marker.ends;
                shown.extend(marker.images);
                if d.emulates_frame_boundary {
                    s.p_next = rest;
                }
            }
            let r = next(queue, count, down.as_ptr(), fence);
            crate::image_layouts::submitted(
                down.iter()
                    .flat_map(|s| slice(s.p_command_buffer_infos, s.command_buffer_info_count))
                    .map(|c| c.command_buffer),
            );
            if ends_frame {
                crate::frame_checksums::at_boundary(&d, queue, &shown);
                crate::frame_checksums::before_frame_end(&d);
                recorder::end_frame();
            }
            r
        }
    )*};
}

submit2_hooks! {
    queue_submit2, c"vkQueueSubmit2";
    queue_submit2_khr, c"vkQueueSubmit2KHR";
}

/// `vkQueuePresentKHR`: ends the frame.
pub unsafe extern "system" fn queue_present_khr(
    queue: vk::Queue,
    info: *const vk::PresentInfoKHR,
) -> vk::Result {
    let Some(d) = dispatch::device_of(queue) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let Some(next) =
        d.ext::<vk::PFN_vkQueuePresentKHR>(const { super::extension_slot(c"vkQueuePresentKHR") })
    else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    let i = &*info;
    record(Scope::Frame, 0, || {
        Some(CallT::QueuePresent(Box::new(table!(QueuePresentT {
            queue: queue.as_raw(),
            wait_semaphores: Some(handles(i.p_wait_semaphores, i.wait_semaphore_count)),
            swapchains: Some(handles(i.p_swapchains, i.swapchain_count)),
            image_indices: Some(slice(i.p_image_indices, i.swapchain_count).to_vec()),
        }))))
    });
    // The frame's read-back waited for the program's semaphores: the present waits
    // for the read-back.
    let r = match crate::frame_checksums::at_present(d, queue, i) {
        Some(copied) => {
            let waits = [copied];
            let mut after_copy = *i;
            after_copy.wait_semaphore_count = 1;
            after_copy.p_wait_semaphores = waits.as_ptr();
            next(queue, &after_copy)
        }
        None => next(queue, info),
    };
    crate::frame_checksums::before_frame_end(d);
    recorder::end_frame();
    r
}
