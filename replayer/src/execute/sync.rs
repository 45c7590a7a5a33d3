//! Synchronization: events (`nvk_event.c`), and the dependencies of pipeline barriers
//! (`nvk_cmd_buffer.c`'s `nvk_CmdPipelineBarrier2`), which get rows of their own; the
//! version-1 commands go through Mesa's common conversion to the version-2 ones.

use driver::nvk::{Barrier, CommandEncoder};

use trace_format::generic_params::Param;

use crate::generated::decode::{
    BufferMemoryBarrier, BufferMemoryBarrier2, DependencyInfo, DependencyInfoNested,
    ImageMemoryBarrier, ImageMemoryBarrier2, MemoryBarrier, MemoryBarrier2,
};
use crate::generic::read::Field;
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

/// The command buffer and memory dependencies of a recorded `vkCmdPipelineBarrier2`,
/// read from its parameters where they lie: the stage and access masks every memory,
/// buffer and image barrier begins with (bytes 16 to 48 of each), and nothing else of
/// them, as [`dependency_barriers`] takes them from the whole decoded command (a test
/// compares the two on a real program's barriers). `None` where the parameters are not
/// shaped as the command's: the decoder then says what is wrong.
pub(crate) fn pipeline_barrier2_of(params: &[Param<'_>]) -> Option<(u64, Vec<Barrier>)> {
    let [command_buffer, info] = params else {
        return None;
    };
    let infos = info.bytes().unwrap_or_default();
    if infos.len() % DependencyInfo::SIZE != 0 {
        return None;
    }
    let arrays: smallvec::SmallVec<[Param<'_>; 3]> = info
        .nested()
        .map(|n| n.iter().collect())
        .unwrap_or_default();
    if arrays.len() != 3 * (infos.len() / DependencyInfo::SIZE) {
        return None;
    }
    let mut barriers = Vec::new();
    for (i, array) in arrays.iter().enumerate() {
        let size = [
            MemoryBarrier2::SIZE,
            BufferMemoryBarrier2::SIZE,
            ImageMemoryBarrier2::SIZE,
        ][i % 3];
        let bytes = array.bytes().unwrap_or_default();
        if bytes.len() % size != 0 {
            return None;
        }
        barriers.extend(bytes.chunks_exact(size).map(|b| Barrier {
            src_stages: u64::field(b, 16),
            src_access: u64::field(b, 24),
            dst_stages: u64::field(b, 32),
            dst_access: u64::field(b, 40),
        }));
    }
    Some((command_buffer.value(), barriers))
}

/// The command buffer and memory dependencies of a recorded `vkCmdPipelineBarrier`,
/// read from its parameters where they lie: the command's stage masks with the access
/// masks every memory, buffer and image barrier holds at bytes 16 to 24, as
/// [`v1_barriers`] takes them from the whole decoded command (a test compares the two).
/// `None` where the parameters are not shaped as the command's: the decoder then says
/// what is wrong.
pub(crate) fn pipeline_barrier_of(params: &[Param<'_>]) -> Option<(u64, Vec<Barrier>)> {
    let [command_buffer, src, dst, _, _, memory, _, buffers, _, images] = params else {
        return None;
    };
    let (src_stages, dst_stages) = (u64::from(src.value() as u32), u64::from(dst.value() as u32));
    let arrays = [
        (memory, MemoryBarrier::SIZE),
        (buffers, BufferMemoryBarrier::SIZE),
        (images, ImageMemoryBarrier::SIZE),
    ];
    let mut barriers = Vec::new();
    for (array, size) in arrays {
        let bytes = array.bytes().unwrap_or_default();
        if bytes.len() % size != 0 {
            return None;
        }
        barriers.extend(bytes.chunks_exact(size).map(|b| Barrier {
            src_stages,
            src_access: u64::from(u32::field(b, 16)),
            dst_stages,
            dst_access: u64::from(u32::field(b, 20)),
        }));
    }
    Some((command_buffer.value(), barriers))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generic::read::params_of;
    use std::path::Path;
    use trace_format::TraceReader;

    /// Calls `f` with the parameters of every `command` the sample `name` records
    /// generically; returns how many there were.
    fn each_recorded(name: &str, command: &str, mut f: impl FnMut(&[Param<'_>])) -> usize {
        let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../samples")
            .join(name);
        let mut seen = 0;
        for chunk in TraceReader::open(&trace).expect("the sample opens") {
            let chunk = chunk.expect("its chunks read");
            for call in chunk.records().filter_map(|r| r.call_as_vulkan_call()) {
                if trace_format::names::generic_command(&call) == Some(command) {
                    f(&params_of(&call).expect("its parameters read"));
                    seen += 1;
                }
            }
        }
        seen
    }

    /// Every `vkCmdPipelineBarrier2` glxgears recorded through Zink: its masks read where
    /// they lie are those of the command decoded whole, in the same order.
    #[test]
    fn barrier_masks_read_in_place_equal_those_of_the_decoded_command() {
        let name = "vkCmdPipelineBarrier2";
        let compared = each_recorded("glxgears-zink-lavapipe.mscope", name, |params| {
            let in_place = pipeline_barrier2_of(params).expect("a barrier as recorded");
            let Ok(Some(GenericCmd::CmdPipelineBarrier2(c))) = crate::generic::decode(name, params)
            else {
                panic!("the barrier decodes");
            };
            let decoded = dependency_barriers(&c.dependency_info_nested);
            assert!(!decoded.is_empty());
            assert_eq!(in_place, (c.command_buffer, decoded));
            assert_eq!(
                pipeline_barrier2_of(&params[..1]),
                None,
                "one parameter short"
            );
        });
        assert_eq!(compared, 1623, "the sample's barriers");
    }

    /// Every `vkCmdPipelineBarrier` of the samples that record them (the compute
    /// scene's memory and image barriers on NVIDIA, vkcube's image barrier on lavapipe):
    /// its dependencies read where they lie are those of the command decoded whole.
    #[test]
    fn version_1_barriers_read_in_place_equal_those_of_the_decoded_command() {
        let name = "vkCmdPipelineBarrier";
        let mut compared = [0; 3];
        for sample in ["compute-nvidia.mscope", "vkcube-lavapipe.mscope"] {
            each_recorded(sample, name, |params| {
                let in_place = pipeline_barrier_of(params).expect("a barrier as recorded");
                let cmd = crate::generic::decode(name, params)
                    .expect("the barrier decodes")
                    .expect("a decoder for it");
                let GenericCmd::CmdPipelineBarrier(c) = &cmd else {
                    panic!("decoded as another command: {cmd:?}");
                };
                let kinds = [
                    c.memory_barriers.len(),
                    c.buffer_memory_barriers.len(),
                    c.image_memory_barriers.len(),
                ];
                for (n, k) in compared.iter_mut().zip(kinds) {
                    *n += k;
                }
                let decoded = pipeline_barriers(&cmd).expect("a barrier's dependencies");
                assert!(!decoded.is_empty());
                assert_eq!(in_place, (c.command_buffer, decoded));
                assert_eq!(pipeline_barrier_of(&params[..9]), None, "one short");
            });
        }
        assert!(
            compared[0] > 0 && compared[2] > 0,
            "memory and image barriers compared: {compared:?}"
        );
    }

    /// A `vkCmdPipelineBarrier` of every kind of barrier, each access mask its own
    /// (no sample records a buffer barrier): read in place as decoded, in order.
    #[test]
    fn a_version_1_barrier_of_every_kind_reads_in_place_as_decoded() {
        use trace_format::generic_params::ParamWriter;
        let barrier = |size: usize, src: u32, dst: u32| {
            let mut b = vec![0u8; size];
            b[16..20].copy_from_slice(&src.to_le_bytes());
            b[20..24].copy_from_slice(&dst.to_le_bytes());
            b
        };
        let memory = barrier(MemoryBarrier::SIZE, 0x1, 0x2);
        let buffers = [
            barrier(BufferMemoryBarrier::SIZE, 0x4, 0x8),
            barrier(BufferMemoryBarrier::SIZE, 0x10, 0x20),
        ]
        .concat();
        let images = barrier(ImageMemoryBarrier::SIZE, 0x40, 0x80);
        let mut packed = Vec::new();
        ParamWriter::params(&mut packed, |list| {
            for value in [0xcb, 0x400, 0x800, 0] {
                list.node(value);
            }
            for (count, array) in [(1, &memory), (2, &buffers), (1, &images)] {
                list.node(count);
                list.node(0x1000).bytes(array);
            }
        });
        let mut params = crate::generic::read::Params::new();
        crate::generic::read::gather_packed(&packed, &mut params).expect("the parameters read");
        let cmd = crate::generic::decode("vkCmdPipelineBarrier", &params)
            .expect("the barrier decodes")
            .expect("a decoder for it");
        let decoded = pipeline_barriers(&cmd).expect("a barrier's dependencies");
        let in_place = pipeline_barrier_of(&params).expect("a barrier as recorded");
        assert_eq!(in_place, (0xcb, decoded));
        let access: Vec<_> = in_place
            .1
            .iter()
            .map(|b| (b.src_access, b.dst_access))
            .collect();
        assert_eq!(access, [(0x1, 0x2), (0x4, 0x8), (0x10, 0x20), (0x40, 0x80)]);
        assert!(in_place
            .1
            .iter()
            .all(|b| (b.src_stages, b.dst_stages) == (0x400, 0x800)));
    }
}
