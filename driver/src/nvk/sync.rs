//! Barriers: the waits for idle, cache flushes and invalidations NVK pushes for a
//! dependency's source and destination scopes (`nvk_cmd_flush_wait_dep`,
//! `nvk_cmd_invalidate_deps`, called by `nvk_CmdPipelineBarrier2`; version 1 barriers
//! reach it through Mesa's common conversion).
//!
//! Stage masks are expanded as Mesa's `vk_expand_src/dst_stage_flags2` do
//! (ALL_COMMANDS, ALL_GRAPHICS, ALL_TRANSFER, VERTEX_INPUT, the pre-rasterization
//! stages), and access masks filtered as `vk_filter_src/dst_access_flags2` do: MEMORY_
//! and SHADER_ bits expanded, then only the writes (source) or reads (destination) the
//! stages can make kept (the Vulkan registry's supported stages of each access).

use super::encoder::{CommandEncoder, Recorded};
use crate::chipset::classes::MAXWELL_COMPUTE_B;
use crate::class;
use crate::mme::Arch;
use crate::push::{SUBC_3D, SUBC_COMPUTE};

/// One memory dependency: `VkMemoryBarrier2`'s masks (buffer and image barriers give
/// theirs the same way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Barrier {
    pub src_stages: u64,
    pub src_access: u64,
    pub dst_stages: u64,
    pub dst_access: u64,
}

/// `VkPipelineStageFlagBits2` the barriers read.
#[allow(missing_docs)]
pub mod stage {
    pub const TOP_OF_PIPE: u64 = 0x1;
    pub const DRAW_INDIRECT: u64 = 0x2;
    pub const VERTEX_INPUT: u64 = 0x4;
    pub const VERTEX_SHADER: u64 = 0x8;
    pub const TESS_CONTROL: u64 = 0x10;
    pub const TESS_EVAL: u64 = 0x20;
    pub const GEOMETRY: u64 = 0x40;
    pub const FRAGMENT: u64 = 0x80;
    pub const EARLY_FRAGMENT_TESTS: u64 = 0x100;
    pub const LATE_FRAGMENT_TESTS: u64 = 0x200;
    pub const COLOR_ATTACHMENT_OUTPUT: u64 = 0x400;
    pub const COMPUTE: u64 = 0x800;
    pub const ALL_TRANSFER: u64 = 0x1000;
    pub const BOTTOM_OF_PIPE: u64 = 0x2000;
    pub const HOST: u64 = 0x4000;
    pub const ALL_GRAPHICS: u64 = 0x8000;
    pub const ALL_COMMANDS: u64 = 0x1_0000;
    pub const COMMAND_PREPROCESS: u64 = 0x2_0000;
    pub const CONDITIONAL_RENDERING: u64 = 0x4_0000;
    pub const TASK: u64 = 0x8_0000;
    pub const MESH: u64 = 0x10_0000;
    pub const RAY_TRACING: u64 = 0x20_0000;
    pub const FRAGMENT_SHADING_RATE_ATTACHMENT: u64 = 0x40_0000;
    pub const FRAGMENT_DENSITY_PROCESS: u64 = 0x80_0000;
    pub const TRANSFORM_FEEDBACK: u64 = 0x100_0000;
    pub const ACCELERATION_STRUCTURE_BUILD: u64 = 0x200_0000;
    pub const COPY: u64 = 0x1_0000_0000;
    pub const RESOLVE: u64 = 0x2_0000_0000;
    pub const BLIT: u64 = 0x4_0000_0000;
    pub const CLEAR: u64 = 0x8_0000_0000;
    pub const INDEX_INPUT: u64 = 0x10_0000_0000;
    pub const VERTEX_ATTRIBUTE_INPUT: u64 = 0x20_0000_0000;
    pub const PRE_RASTERIZATION: u64 = 0x40_0000_0000;
    /// The graphics stages ALL_GRAPHICS stands for (every bit below COMPUTE but the
    /// host and transfer ones, the v2 input stages, conditional rendering, transform
    /// feedback and the shading-rate and density stages).
    pub const GRAPHICS: u64 = 0x7fe
        | INDEX_INPUT
        | VERTEX_ATTRIBUTE_INPUT
        | TASK
        | MESH
        | PRE_RASTERIZATION
        | CONDITIONAL_RENDERING
        | TRANSFORM_FEEDBACK
        | FRAGMENT_SHADING_RATE_ATTACHMENT
        | FRAGMENT_DENSITY_PROCESS;
    /// Every shader stage.
    pub const SHADERS: u64 = SHADERS_GRAPHICS | COMPUTE | RAY_TRACING;
    pub const SHADERS_GRAPHICS: u64 =
        VERTEX_SHADER | TESS_CONTROL | TESS_EVAL | GEOMETRY | FRAGMENT | TASK | MESH;
}

/// `VkAccessFlagBits2` the barriers read.
#[allow(missing_docs)]
pub mod access {
    pub const INDIRECT_COMMAND_READ: u64 = 0x1;
    pub const UNIFORM_READ: u64 = 0x8;
    pub const INPUT_ATTACHMENT_READ: u64 = 0x10;
    pub const SHADER_READ: u64 = 0x20;
    pub const SHADER_WRITE: u64 = 0x40;
    pub const COLOR_ATTACHMENT_READ: u64 = 0x80;
    pub const COLOR_ATTACHMENT_WRITE: u64 = 0x100;
    pub const DEPTH_STENCIL_ATTACHMENT_READ: u64 = 0x200;
    pub const DEPTH_STENCIL_ATTACHMENT_WRITE: u64 = 0x400;
    pub const TRANSFER_READ: u64 = 0x800;
    pub const TRANSFER_WRITE: u64 = 0x1000;
    pub const MEMORY_READ: u64 = 0x8000;
    pub const MEMORY_WRITE: u64 = 0x1_0000;
    pub const COMMAND_PREPROCESS_WRITE: u64 = 0x4_0000;
    pub const CONDITIONAL_RENDERING_READ: u64 = 0x10_0000;
    pub const TRANSFORM_FEEDBACK_WRITE: u64 = 0x200_0000;
    pub const TRANSFORM_FEEDBACK_COUNTER_READ: u64 = 0x400_0000;
    pub const SHADER_SAMPLED_READ: u64 = 0x1_0000_0000;
    pub const SHADER_STORAGE_READ: u64 = 0x2_0000_0000;
    pub const SHADER_STORAGE_WRITE: u64 = 0x4_0000_0000;
    pub const DESCRIPTOR_BUFFER_READ: u64 = 0x200_0000_0000;
    pub const INDEX_READ: u64 = 0x2;
    pub const VERTEX_ATTRIBUTE_READ: u64 = 0x4;
    pub const HOST_READ: u64 = 0x2000;
    pub const HOST_WRITE: u64 = 0x4000;
    pub const COMMAND_PREPROCESS_READ: u64 = 0x2_0000;
    pub const TRANSFORM_FEEDBACK_COUNTER_WRITE: u64 = 0x800_0000;
    pub const SHADER_BINDING_TABLE_READ: u64 = 0x100_0000_0000;
}

/// What a dependency makes NVK do (`enum nvk_barrier`).
mod barrier {
    pub const RENDER_WFI: u32 = 1 << 0;
    pub const COMPUTE_WFI: u32 = 1 << 1;
    pub const FLUSH_SHADER_DATA: u32 = 1 << 2;
    pub const INVALIDATE_SHADER_DATA: u32 = 1 << 3;
    pub const INVALIDATE_TEX_DATA: u32 = 1 << 4;
    pub const INVALIDATE_CONSTANT: u32 = 1 << 5;
    pub const INVALIDATE_MME_DATA: u32 = 1 << 6;
    pub const INVALIDATE_QMD_DATA: u32 = 1 << 7;
}

/// The stages a mask stands for (`vk_expand_src_stage_flags2` with `src`, else
/// `vk_expand_dst_stage_flags2`).
fn expand_stages(stages: u64, src: bool) -> u64 {
    let mut s = stages;
    let catch_all = if src {
        stage::BOTTOM_OF_PIPE
    } else {
        stage::TOP_OF_PIPE
    };
    if s & (stage::ALL_COMMANDS | catch_all) != 0 {
        return u64::MAX;
    }
    if s & stage::ALL_GRAPHICS != 0 {
        s |= stage::GRAPHICS;
    }
    if s & stage::ALL_TRANSFER != 0 {
        s |= stage::COPY | stage::RESOLVE | stage::BLIT | stage::CLEAR;
    }
    if s & stage::VERTEX_INPUT != 0 {
        s |= stage::INDEX_INPUT | stage::VERTEX_ATTRIBUTE_INPUT;
    }
    if s & stage::PRE_RASTERIZATION != 0 {
        s |= stage::VERTEX_SHADER
            | stage::TESS_CONTROL
            | stage::TESS_EVAL
            | stage::GEOMETRY
            | stage::TASK
            | stage::MESH;
    }
    s
}

/// The reads `stages` can make (`vk_read_access2_for_pipeline_stage_flags2`: each
/// read access's supported stages in the Vulkan registry).
fn reads_of(stages: u64) -> u64 {
    let mut a = 0;
    let mut allow = |when: u64, access: u64| {
        if stages & when != 0 {
            a |= access;
        }
    };
    allow(
        stage::DRAW_INDIRECT | stage::ACCELERATION_STRUCTURE_BUILD,
        access::INDIRECT_COMMAND_READ,
    );
    allow(stage::VERTEX_INPUT | stage::INDEX_INPUT, access::INDEX_READ);
    allow(
        stage::VERTEX_INPUT | stage::VERTEX_ATTRIBUTE_INPUT,
        access::VERTEX_ATTRIBUTE_READ,
    );
    allow(
        stage::SHADERS,
        access::UNIFORM_READ
            | access::SHADER_READ
            | access::SHADER_SAMPLED_READ
            | access::SHADER_STORAGE_READ
            | access::DESCRIPTOR_BUFFER_READ,
    );
    allow(stage::RAY_TRACING, access::SHADER_BINDING_TABLE_READ);
    allow(stage::ACCELERATION_STRUCTURE_BUILD, access::SHADER_READ);
    allow(stage::FRAGMENT, access::INPUT_ATTACHMENT_READ);
    allow(
        stage::COLOR_ATTACHMENT_OUTPUT,
        access::COLOR_ATTACHMENT_READ,
    );
    allow(
        stage::EARLY_FRAGMENT_TESTS | stage::LATE_FRAGMENT_TESTS,
        access::DEPTH_STENCIL_ATTACHMENT_READ,
    );
    allow(
        stage::ALL_TRANSFER
            | stage::COPY
            | stage::RESOLVE
            | stage::BLIT
            | stage::ACCELERATION_STRUCTURE_BUILD,
        access::TRANSFER_READ,
    );
    allow(stage::HOST, access::HOST_READ);
    allow(stage::COMMAND_PREPROCESS, access::COMMAND_PREPROCESS_READ);
    allow(
        stage::CONDITIONAL_RENDERING,
        access::CONDITIONAL_RENDERING_READ,
    );
    allow(
        stage::DRAW_INDIRECT | stage::TRANSFORM_FEEDBACK,
        access::TRANSFORM_FEEDBACK_COUNTER_READ,
    );
    a
}

/// The writes `stages` can make (`vk_write_access2_for_pipeline_stage_flags2`).
fn writes_of(stages: u64) -> u64 {
    let mut a = 0;
    let mut allow = |when: u64, access: u64| {
        if stages & when != 0 {
            a |= access;
        }
    };
    allow(
        stage::SHADERS,
        access::SHADER_WRITE | access::SHADER_STORAGE_WRITE,
    );
    allow(
        stage::COLOR_ATTACHMENT_OUTPUT,
        access::COLOR_ATTACHMENT_WRITE,
    );
    allow(
        stage::EARLY_FRAGMENT_TESTS | stage::LATE_FRAGMENT_TESTS,
        access::DEPTH_STENCIL_ATTACHMENT_WRITE,
    );
    allow(
        stage::ALL_TRANSFER
            | stage::COPY
            | stage::RESOLVE
            | stage::BLIT
            | stage::CLEAR
            | stage::ACCELERATION_STRUCTURE_BUILD,
        access::TRANSFER_WRITE,
    );
    allow(stage::HOST, access::HOST_WRITE);
    allow(stage::COMMAND_PREPROCESS, access::COMMAND_PREPROCESS_WRITE);
    allow(
        stage::TRANSFORM_FEEDBACK,
        access::TRANSFORM_FEEDBACK_WRITE | access::TRANSFORM_FEEDBACK_COUNTER_WRITE,
    );
    a
}

/// A source access mask as `vk_filter_src_access_flags2` leaves it for `stages`
/// (expanded): MEMORY_WRITE standing for every write the stages make, SHADER_WRITE
/// for storage writes, and only those writes kept.
fn filter_src_access(stages: u64, access: u64) -> u64 {
    let writes = writes_of(stages);
    let mut a = access;
    if a & access::MEMORY_WRITE != 0 {
        a |= writes;
    }
    if a & access::SHADER_WRITE != 0 {
        a |= access::SHADER_STORAGE_WRITE;
    }
    a & writes
}

/// A destination access mask as `vk_filter_dst_access_flags2` leaves it: MEMORY_READ
/// standing for every read the stages make, SHADER_READ for sampled, storage and
/// binding-table reads, and only those reads kept.
fn filter_dst_access(stages: u64, access: u64) -> u64 {
    let reads = reads_of(stages);
    let mut a = access;
    if a & access::MEMORY_READ != 0 {
        a |= reads;
    }
    if a & access::SHADER_READ != 0 {
        a |= access::SHADER_SAMPLED_READ
            | access::SHADER_STORAGE_READ
            | access::SHADER_BINDING_TABLE_READ;
    }
    a & reads
}

/// Mirrors nvk_barrier_flushes_waits: what finishing the source scope takes.
fn flushes_waits(stages: u64, access: u64) -> u32 {
    let stages = expand_stages(stages, true);
    let access = filter_src_access(stages, access);
    let mut b = 0;
    if access & access::SHADER_STORAGE_WRITE != 0 {
        b |= barrier::FLUSH_SHADER_DATA;
        if stages & stage::SHADERS_GRAPHICS != 0 {
            b |= barrier::RENDER_WFI;
        }
        if stages & stage::COMPUTE != 0 {
            b |= barrier::COMPUTE_WFI;
        }
    }
    if access
        & (access::COLOR_ATTACHMENT_WRITE
            | access::DEPTH_STENCIL_ATTACHMENT_WRITE
            | access::TRANSFORM_FEEDBACK_WRITE)
        != 0
    {
        b |= barrier::RENDER_WFI;
    }
    if access & access::TRANSFER_WRITE != 0
        && stages & (stage::RESOLVE | stage::BLIT | stage::CLEAR) != 0
    {
        b |= barrier::RENDER_WFI;
    }
    if access & access::COMMAND_PREPROCESS_WRITE != 0 {
        b |= barrier::FLUSH_SHADER_DATA | barrier::COMPUTE_WFI;
    }
    b
}

/// Mirrors nvk_barrier_invalidates: what the destination scope needs invalidated.
fn invalidates(stages: u64, access: u64) -> u32 {
    let stages = expand_stages(stages, false);
    let access = filter_dst_access(stages, access);
    let mut b = 0;
    if access
        & (access::INDIRECT_COMMAND_READ
            | access::TRANSFORM_FEEDBACK_COUNTER_READ
            | access::CONDITIONAL_RENDERING_READ
            | access::DESCRIPTOR_BUFFER_READ)
        != 0
    {
        b |= barrier::INVALIDATE_MME_DATA;
    }
    if access & access::INDIRECT_COMMAND_READ != 0 {
        b |= barrier::INVALIDATE_CONSTANT | barrier::INVALIDATE_QMD_DATA;
    }
    if access & (access::UNIFORM_READ | access::DESCRIPTOR_BUFFER_READ) != 0 {
        b |= barrier::INVALIDATE_SHADER_DATA | barrier::INVALIDATE_CONSTANT;
    }
    if access & (access::INPUT_ATTACHMENT_READ | access::SHADER_SAMPLED_READ) != 0 {
        b |= barrier::INVALIDATE_TEX_DATA;
    }
    if access & access::SHADER_STORAGE_READ != 0 {
        b |= barrier::INVALIDATE_SHADER_DATA;
    }
    if access & access::TRANSFER_READ != 0 && stages & (stage::RESOLVE | stage::BLIT) != 0 {
        b |= barrier::INVALIDATE_TEX_DATA;
    }
    b
}

impl CommandEncoder<'_> {
    /// vkCmdPipelineBarrier(2): one dependency of `barriers`. Mirrors
    /// nvk_CmdPipelineBarrier2: nvk_cmd_flush_wait_dep (waiting) then
    /// nvk_cmd_invalidate_deps.
    pub fn pipeline_barrier(&mut self, barriers: &[Barrier]) -> Recorded {
        let before = self.push.len();
        self.flush_wait_dep(barriers, true);
        self.invalidate_deps(barriers);
        self.recorded(before)
    }

    /// Mirrors nvk_cmd_flush_wait_dep.
    pub(super) fn flush_wait_dep(&mut self, barriers: &[Barrier], wait: bool) {
        let b = barriers
            .iter()
            .fold(0, |b, d| b | flushes_waits(d.src_stages, d.src_access));
        let p = &mut self.push;
        if b & barrier::FLUSH_SHADER_DATA != 0 {
            // INVALIDATE_SHADER_CACHES { data: TRUE, flush_data: TRUE }.
            let flush = (1 << 4) | (1 << 2);
            if b & barrier::RENDER_WFI != 0 {
                p.immd_or_mthd(SUBC_3D, class::INVALIDATE_SHADER_CACHES, flush);
            }
            if b & barrier::COMPUTE_WFI != 0 {
                p.immd_or_mthd(SUBC_COMPUTE, class::INVALIDATE_SHADER_CACHES, flush);
            }
        } else if b & barrier::RENDER_WFI != 0 && wait {
            p.immd_or_mthd(SUBC_3D, class::WAIT_FOR_IDLE, 0);
        }
    }

    /// Mirrors nvk_cmd_invalidate_deps. NVK tests the shader-data and constant
    /// invalidations with `SHADER_DATA & CONSTANT` — two different bits, so
    /// `INVALIDATE_SHADER_CACHES_NO_WFI` is never pushed; the model does as NVK does
    /// (the two bits are still worked out, as NVK does).
    pub(super) fn invalidate_deps(&mut self, barriers: &[Barrier]) {
        let b = barriers
            .iter()
            .fold(0, |b, d| b | invalidates(d.dst_stages, d.dst_access));
        let turing = self.device_arch() == Arch::Turing;
        let sked = self.chipset().eng3d >= MAXWELL_COMPUTE_B;
        let p = &mut self.push;
        if b & barrier::INVALIDATE_TEX_DATA != 0 {
            p.immd_or_mthd(SUBC_3D, class::INVALIDATE_TEXTURE_DATA_CACHE_NO_WFI, 0);
        }
        // NVK's INVALIDATE_SHADER_CACHES_NO_WFI branch tests `SHADER_DATA & CONSTANT`,
        // which is zero: it never runs, and neither does it here.
        if b & barrier::INVALIDATE_MME_DATA != 0 {
            p.immd_or_mthd(SUBC_3D, class::SET_REFERENCE, 0);
            if turing {
                p.immd_or_mthd(SUBC_3D, class::MME_DMA_SYSMEMBAR, 0);
            }
        }
        // NVK compares the 3D class with MAXWELL_COMPUTE_B, a compute class number:
        // from PASCAL_A on, not Maxwell B's 3D class.
        if b & barrier::INVALIDATE_QMD_DATA != 0 && sked {
            p.immd_or_mthd(SUBC_COMPUTE, class::INVALIDATE_SKED_CACHES, 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_render_to_sample_dependency_waits_and_invalidates_textures() {
        // COLOR_ATTACHMENT_OUTPUT / COLOR_ATTACHMENT_WRITE → FRAGMENT / SHADER_READ.
        let d = Barrier {
            src_stages: 0x400,
            src_access: access::COLOR_ATTACHMENT_WRITE,
            dst_stages: stage::FRAGMENT,
            dst_access: access::SHADER_READ,
        };
        assert_eq!(
            flushes_waits(d.src_stages, d.src_access),
            barrier::RENDER_WFI
        );
        assert_eq!(
            invalidates(d.dst_stages, d.dst_access),
            barrier::INVALIDATE_TEX_DATA | barrier::INVALIDATE_SHADER_DATA
        );
        // A storage write from compute to an indirect draw: flush, both waits on
        // compute only, MME data, constants and QMDs invalidated.
        assert_eq!(
            flushes_waits(stage::COMPUTE, access::SHADER_WRITE),
            barrier::FLUSH_SHADER_DATA | barrier::COMPUTE_WFI
        );
        assert_eq!(
            invalidates(0x2, access::INDIRECT_COMMAND_READ),
            barrier::INVALIDATE_MME_DATA
                | barrier::INVALIDATE_CONSTANT
                | barrier::INVALIDATE_QMD_DATA
        );
        // An execution-only dependency costs nothing.
        assert_eq!(flushes_waits(stage::ALL_COMMANDS, 0), 0);
        assert_eq!(invalidates(stage::ALL_COMMANDS, 0), 0);
    }

    #[test]
    fn memory_access_stands_only_for_what_the_stages_can_do() {
        // MEMORY_READ into the colour output reads only attachments: nothing to
        // invalidate (vk_filter_dst_access_flags2).
        assert_eq!(
            invalidates(stage::COLOR_ATTACHMENT_OUTPUT, access::MEMORY_READ),
            0
        );
        // Into the fragment shader it reads no indirect commands: no QMD data.
        assert_eq!(
            invalidates(stage::FRAGMENT, access::MEMORY_READ) & barrier::INVALIDATE_QMD_DATA,
            0
        );
        // Into DRAW_INDIRECT it does.
        assert_ne!(
            invalidates(stage::DRAW_INDIRECT, access::MEMORY_READ) & barrier::INVALIDATE_QMD_DATA,
            0
        );
        // A colour write named for a transfer stage is no write of it: nothing to wait
        // for (vk_filter_src_access_flags2).
        assert_eq!(
            flushes_waits(stage::COPY, access::COLOR_ATTACHMENT_WRITE),
            0
        );
        // MEMORY_WRITE from the colour output waits for rendering.
        assert_eq!(
            flushes_waits(stage::COLOR_ATTACHMENT_OUTPUT, access::MEMORY_WRITE),
            barrier::RENDER_WFI
        );
    }
}
