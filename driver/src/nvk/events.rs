//! Events (`nvk_event.c`): setting and resetting one writes its word with a report
//! semaphore at the pipeline location the source stages reach; waiting acquires it
//! with a host semaphore, then invalidates what the dependency reads.

use super::encoder::{CommandEncoder, Recorded};
use super::Barrier;
use crate::class::{
    self, PipelineLocation, Report, ReportSemaphoreD, SemaphoreOperation, StructureSize,
};
use crate::push::SUBC_3D;

/// `VK_EVENT_SET`: the word of a set event.
pub const EVENT_SET: u32 = 3;
/// `VK_EVENT_RESET`: the word of a reset event.
pub const EVENT_RESET: u32 = 4;

/// `NV906F_SEMAPHORED` for an acquire of exactly the payload: `OPERATION_ACQUIRE` (1),
/// `ACQUIRE_SWITCH_ENABLED` (12), `RELEASE_SIZE_4BYTE` (24).
const HOST_ACQUIRE_SWITCH_4BYTE: u32 = 1 | (1 << 12) | (1 << 24);

/// Where in the pipeline a semaphore after `stages` (`VkPipelineStageFlags2`) is
/// written. Mirrors vk_stage_flags_to_nv9097_pipeline_location: the latest stage
/// named decides; transfers, colour output, bottom of pipe and every-stage masks wait
/// for everything.
pub fn pipeline_location(stages: u64) -> PipelineLocation {
    const ALL: u64 = 0x400 // COLOR_ATTACHMENT_OUTPUT
        | 0x1000 // ALL_TRANSFER
        | 0x2000 // BOTTOM_OF_PIPE
        | 0x8000 // ALL_GRAPHICS
        | 0x10000 // ALL_COMMANDS
        | (0xf << 32); // COPY, RESOLVE, BLIT, CLEAR
    let steps: [(u64, PipelineLocation); 9] = [
        (ALL, PipelineLocation::All),
        (0x200, PipelineLocation::DepthTest), // LATE_FRAGMENT_TESTS
        (0x80, PipelineLocation::PixelShader), // FRAGMENT_SHADER
        (0x100, PipelineLocation::Zcull),     // EARLY_FRAGMENT_TESTS
        (0x100_0000, PipelineLocation::StreamingOutput), // TRANSFORM_FEEDBACK
        (0x40 | (1 << 38), PipelineLocation::GeometryShader), // GEOMETRY, PRE_RASTERIZATION
        (0x20, PipelineLocation::Tessellation), // TESSELLATION_EVALUATION
        (0x10, PipelineLocation::TessellationInit), // TESSELLATION_CONTROL
        (0x8, PipelineLocation::VertexShader), // VERTEX_SHADER
    ];
    for (bits, location) in steps {
        if stages & bits != 0 {
            return location;
        }
    }
    // VERTEX_INPUT, INDEX_INPUT, VERTEX_ATTRIBUTE_INPUT.
    if stages & (0x4 | (0x3 << 36)) != 0 {
        return PipelineLocation::DataAssembler;
    }
    PipelineLocation::None
}

impl CommandEncoder<'_> {
    fn event_release(&mut self, addr: u64, value: u32, stages: u64) {
        let d = ReportSemaphoreD {
            operation: SemaphoreOperation::Release,
            flush_disable: false,
            release_after_writes: true,
            pipeline_location: pipeline_location(stages),
            report: Report::None,
            structure_size: StructureSize::OneWord,
        };
        self.push.inc(
            SUBC_3D,
            class::SET_REPORT_SEMAPHORE_A,
            &[(addr >> 32) as u32, addr as u32, value, d.pack()],
        );
    }

    /// vkCmdSetEvent2 (and vkCmdSetEvent, as Mesa converts it) with the event's word at
    /// `addr`. Mirrors nvk_CmdSetEvent2: the dependency's flushes (without a wait for
    /// idle), then the event's word released as set where the source stages finish.
    pub fn set_event(&mut self, addr: u64, barriers: &[Barrier], src_stages: u64) -> Recorded {
        let before = self.push.len();
        self.flush_wait_dep(barriers, false);
        self.event_release(addr, EVENT_SET, src_stages);
        self.recorded(before)
    }

    /// vkCmdResetEvent2. Mirrors nvk_CmdResetEvent2: the word released as reset.
    pub fn reset_event(&mut self, addr: u64, stages: u64) -> Recorded {
        let before = self.push.len();
        self.event_release(addr, EVENT_RESET, stages);
        self.recorded(before)
    }

    /// vkCmdWaitEvents2 (and vkCmdWaitEvents). Mirrors nvk_CmdWaitEvents2: a host
    /// semaphore acquire of each event's word as set, then the dependencies'
    /// invalidations.
    pub fn wait_events(&mut self, addrs: &[u64], barriers: &[Barrier]) -> Recorded {
        let before = self.push.len();
        for addr in addrs {
            self.push.inc(
                SUBC_3D,
                class::HOST_SEMAPHORE_A,
                &[
                    (addr >> 32) as u32,
                    (*addr as u32) >> 2,
                    EVENT_SET,
                    HOST_ACQUIRE_SWITCH_4BYTE,
                ],
            );
        }
        self.invalidate_deps(barriers);
        self.recorded(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_stage_picks_the_location() {
        assert_eq!(pipeline_location(0x2000), PipelineLocation::All);
        assert_eq!(pipeline_location(0x80 | 0x8), PipelineLocation::PixelShader);
        assert_eq!(pipeline_location(0x8), PipelineLocation::VertexShader);
        assert_eq!(pipeline_location(0x4), PipelineLocation::DataAssembler);
        // Compute and top of pipe: no location.
        assert_eq!(pipeline_location(0x800 | 0x1), PipelineLocation::None);
    }
}
