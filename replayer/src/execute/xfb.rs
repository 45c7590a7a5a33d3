//! Transform feedback (`nvk_cmd_draw.c`'s transform-feedback entry points): buffer
//! binds, begin and end with their counter buffers.

use driver::gpu::Memory;
use driver::nvk::CommandEncoder;

use crate::generic::GenericCmd;
use crate::objects::Objects;

/// `VK_WHOLE_SIZE`.
const WHOLE_SIZE: u64 = u64::MAX;

/// Whether `cmd` is a transform-feedback command this group executes.
pub(super) fn handles(cmd: &GenericCmd) -> bool {
    matches!(
        cmd,
        GenericCmd::CmdBindTransformFeedbackBuffersEXT(_)
            | GenericCmd::CmdBeginTransformFeedbackEXT(_)
            | GenericCmd::CmdEndTransformFeedbackEXT(_)
    )
}

/// The counter buffers' addresses (`None` for a null handle or one never bound).
fn counters(objects: &Objects, buffers: &[u64], offsets: &[u64]) -> Vec<Option<u64>> {
    buffers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let offset = offsets.get(i).copied().unwrap_or(0);
            (*b != 0).then(|| objects.buffer_addr(*b, offset)).flatten()
        })
        .collect()
}

/// Pushes `cmd`; `false` when it is not this group's.
pub(super) fn apply(
    enc: &mut CommandEncoder<'_>,
    cmd: &GenericCmd,
    objects: &Objects,
    memory: &Memory,
) -> bool {
    match cmd {
        GenericCmd::CmdBindTransformFeedbackBuffersEXT(c) => {
            let buffers: Vec<(u64, u32)> = c
                .buffers
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let offset = c.offsets.get(i).copied().unwrap_or(0);
                    let (addr, whole) = objects.buffer_range(*b, offset);
                    let size = match c.sizes.get(i).copied() {
                        Some(s) if s != WHOLE_SIZE => s.min(u64::from(u32::MAX)) as u32,
                        _ => whole,
                    };
                    (addr, size)
                })
                .collect();
            enc.bind_transform_feedback_buffers(c.first_binding, &buffers);
        }
        GenericCmd::CmdBeginTransformFeedbackEXT(c) => {
            let counters = counters(objects, &c.counter_buffers, &c.counter_buffer_offsets);
            enc.begin_transform_feedback(c.first_counter_buffer, &counters, memory);
        }
        GenericCmd::CmdEndTransformFeedbackEXT(c) => {
            let counters = counters(objects, &c.counter_buffers, &c.counter_buffer_offsets);
            enc.end_transform_feedback(c.first_counter_buffer, &counters);
        }
        _ => return false,
    }
    true
}
