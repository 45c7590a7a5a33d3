//! Pipeline barriers (`nvk_cmd_buffer.c`'s `nvk_CmdPipelineBarrier2`; version 1 goes
//! through Mesa's common conversion to it).

use driver::nvk::{Barrier, CommandEncoder};

use crate::generic::GenericCmd;

/// Whether `cmd` is a barrier this group executes.
pub(super) fn handles(cmd: &GenericCmd) -> bool {
    barriers(cmd).is_some()
}

/// Pushes `cmd`'s barrier; `false` when it is not this group's.
pub(super) fn apply(enc: &mut CommandEncoder<'_>, cmd: &GenericCmd) -> bool {
    match barriers(cmd) {
        Some(b) => {
            enc.pipeline_barrier(&b);
            true
        }
        None => false,
    }
}

/// The memory dependencies of a barrier command.
fn barriers(cmd: &GenericCmd) -> Option<Vec<Barrier>> {
    Some(match cmd {
        GenericCmd::CmdPipelineBarrier2(c) => c
            .dependency_info_nested
            .iter()
            .flat_map(|n| {
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
                memory.chain(buffers).chain(images).collect::<Vec<_>>()
            })
            .map(|(src_stages, src_access, dst_stages, dst_access)| Barrier {
                src_stages,
                src_access,
                dst_stages,
                dst_access,
            })
            .collect(),
        GenericCmd::CmdPipelineBarrier(c) => {
            let (src, dst) = (u64::from(c.src_stage_mask), u64::from(c.dst_stage_mask));
            let access = c
                .memory_barriers
                .iter()
                .map(|b| (b.src_access_mask, b.dst_access_mask))
                .chain(
                    c.buffer_memory_barriers
                        .iter()
                        .map(|b| (b.src_access_mask, b.dst_access_mask)),
                )
                .chain(
                    c.image_memory_barriers
                        .iter()
                        .map(|b| (b.src_access_mask, b.dst_access_mask)),
                );
            access
                .map(|(s, d)| Barrier {
                    src_stages: src,
                    src_access: u64::from(s),
                    dst_stages: dst,
                    dst_access: u64::from(d),
                })
                .collect()
        }
        _ => return None,
    })
}
