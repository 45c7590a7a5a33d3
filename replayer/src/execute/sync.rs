//! Synchronization: events (`nvk_event.c`), and the dependencies of pipeline barriers
//! (`nvk_cmd_buffer.c`'s `nvk_CmdPipelineBarrier2`), which get rows of their own; the
//! version-1 commands go through Mesa's common conversion to the version-2 ones.

use driver::nvk::{Barrier, CommandEncoder};

use crate::generated::decode::{
    BufferMemoryBarrier, DependencyInfoNested, ImageMemoryBarrier, MemoryBarrier,
};
use crate::generic::GenericCmd;
use crate::objects::Objects;

/// The memory dependencies of a pipeline barrier command (which gets a row of its
/// own), `None` for other commands.
pub(crate) fn pipeline_barriers(cmd: &GenericCmd) -> Option<Vec<Barrier>> {
    Some(match cmd {
        GenericCmd::CmdPipelineBarrier2(c) => dependency_barriers(&c.dependency_info_nested),
        GenericCmd::CmdPipelineBarrier(c) => v1_barriers(
            c.src_stage_mask,
            c.dst_stage_mask,
            &c.memory_barriers,
            &c.buffer_memory_barriers,
            &c.image_memory_barriers,
        ),
        _ => return None,
    })
}

/// Whether `cmd` is an event command this group executes.
pub(super) fn handles(cmd: &GenericCmd) -> bool {
    matches!(
        cmd,
        GenericCmd::CmdSetEvent(_)
            | GenericCmd::CmdSetEvent2(_)
            | GenericCmd::CmdResetEvent(_)
            | GenericCmd::CmdResetEvent2(_)
            | GenericCmd::CmdWaitEvents(_)
            | GenericCmd::CmdWaitEvents2(_)
    )
}

/// Pushes the event command `cmd`; `false` when it is not this group's.
pub(super) fn apply(enc: &mut CommandEncoder<'_>, cmd: &GenericCmd, objects: &mut Objects) -> bool {
    match cmd {
        GenericCmd::CmdSetEvent2(c) => {
            let barriers = dependency_barriers(&c.dependency_info_nested);
            let stages = barriers.iter().fold(0, |s, b| s | b.src_stages);
            enc.set_event(objects.event_addr(c.event), &barriers, stages);
        }
        // Mesa's vk_common_CmdSetEvent: a memory barrier of the stages, no access.
        GenericCmd::CmdSetEvent(c) => {
            let stages = u64::from(c.stage_mask);
            let barrier = Barrier {
                src_stages: stages,
                src_access: 0,
                dst_stages: stages,
                dst_access: 0,
            };
            enc.set_event(objects.event_addr(c.event), &[barrier], stages);
        }
        GenericCmd::CmdResetEvent2(c) => {
            enc.reset_event(objects.event_addr(c.event), c.stage_mask);
        }
        GenericCmd::CmdResetEvent(c) => {
            enc.reset_event(objects.event_addr(c.event), u64::from(c.stage_mask));
        }
        GenericCmd::CmdWaitEvents2(c) => {
            let addrs: Vec<u64> = c.events.iter().map(|e| objects.event_addr(*e)).collect();
            enc.wait_events(&addrs, &dependency_barriers(&c.dependency_infos_nested));
        }
        GenericCmd::CmdWaitEvents(c) => {
            let addrs: Vec<u64> = c.events.iter().map(|e| objects.event_addr(*e)).collect();
            let barriers = v1_barriers(
                c.src_stage_mask,
                c.dst_stage_mask,
                &c.memory_barriers,
                &c.buffer_memory_barriers,
                &c.image_memory_barriers,
            );
            enc.wait_events(&addrs, &barriers);
        }
        _ => return false,
    }
    true
}

/// The memory dependencies of `VkDependencyInfo`s: every memory, buffer and image
/// barrier's stages and access.
fn dependency_barriers(infos: &[DependencyInfoNested]) -> Vec<Barrier> {
    let mut barriers = Vec::new();
    for n in infos {
        let memory = n.p_memory_barriers.iter().map(|b| {
            (
                b.src_stage_mask,
                b.src_access_mask,
                b.dst_stage_mask,
                b.dst_access_mask,
            )
        });
        let buffers = n.p_buffer_memory_barriers.iter().map(|b| {
            (
                b.src_stage_mask,
                b.src_access_mask,
                b.dst_stage_mask,
                b.dst_access_mask,
            )
        });
        let images = n.p_image_memory_barriers.iter().map(|b| {
            (
                b.src_stage_mask,
                b.src_access_mask,
                b.dst_stage_mask,
                b.dst_access_mask,
            )
        });
        barriers.extend(memory.chain(buffers).chain(images).map(
            |(src_stages, src_access, dst_stages, dst_access)| Barrier {
                src_stages,
                src_access,
                dst_stages,
                dst_access,
            },
        ));
    }
    barriers
}

/// The memory dependencies of a version-1 barrier or wait: the command's stage masks
/// with each barrier's access masks.
fn v1_barriers(
    src_stage_mask: u32,
    dst_stage_mask: u32,
    memory: &[MemoryBarrier],
    buffers: &[BufferMemoryBarrier],
    images: &[ImageMemoryBarrier],
) -> Vec<Barrier> {
    let (src, dst) = (u64::from(src_stage_mask), u64::from(dst_stage_mask));
    memory
        .iter()
        .map(|b| (b.src_access_mask, b.dst_access_mask))
        .chain(
            buffers
                .iter()
                .map(|b| (b.src_access_mask, b.dst_access_mask)),
        )
        .chain(
            images
                .iter()
                .map(|b| (b.src_access_mask, b.dst_access_mask)),
        )
        .map(|(s, d)| Barrier {
            src_stages: src,
            src_access: u64::from(s),
            dst_stages: dst,
            dst_access: u64::from(d),
        })
        .collect()
}
