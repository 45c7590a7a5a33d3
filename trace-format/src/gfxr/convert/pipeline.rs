//! Graphics pipelines as the capture layer records them (`capture-layer/src/hooks/pipelines.rs`):
//! stages, topology, layout, rendering formats, libraries and the static state.

use super::pipeline_state::pipeline_state;
use super::{s_type, StructValue};
use crate::generated::trace::*;
use crate::pipeline_parts::{FRAGMENT_SHADER, PRE_RASTERIZATION_SHADERS, VERTEX_INPUT_INTERFACE};

fn stage(s: &StructValue) -> ShaderStageT {
    let spec = s.get("pSpecializationInfo").structure();
    ShaderStageT {
        flags: s.u32("flags"),
        stage: s.u32("stage"),
        module: s.word("module"),
        entry_point: Some(s.get("pName").string()),
        specialization_entries: Some(spec.map_or_else(Vec::new, |sp| {
            sp.get("pMapEntries")
                .structures()
                .iter()
                .map(|e| SpecializationEntryT {
                    constant_id: e.u32("constantID"),
                    offset: e.u32("offset"),
                    size: e.word("size"),
                })
                .collect()
        })),
        specialization_data: Some(
            spec.map_or_else(Vec::new, |sp| sp.get("pData").bytes().to_vec()),
        ),
    }
}

/// One pipeline of a `vkCreateGraphicsPipelines` call, made as `handle`.
pub(super) fn pipeline(p: &StructValue, handle: u64) -> GraphicsPipelineT {
    let libraries = p
        .find(s_type::PIPELINE_LIBRARY_CREATE_INFO_KHR)
        .map_or_else(Vec::new, |l| l.get("pLibraries").words64());
    let library_parts = p
        .find(s_type::GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT)
        .map_or(0, |g| g.u32("flags"));
    let defines = |part: u32| {
        if library_parts != 0 {
            library_parts & part != 0
        } else {
            libraries.is_empty()
        }
    };
    let rendering = p.find(s_type::PIPELINE_RENDERING_CREATE_INFO).map(|r| {
        Box::new(PipelineRenderingT {
            view_mask: r.u32("viewMask"),
            color_attachment_formats: Some(r.get("pColorAttachmentFormats").words32()),
            depth_attachment_format: r.u32("depthAttachmentFormat"),
            stencil_attachment_format: r.u32("stencilAttachmentFormat"),
        })
    });
    let dynamic_states = p
        .get("pDynamicState")
        .structure()
        .map_or_else(Vec::new, |d| d.get("pDynamicStates").words32());
    let assembly = p
        .get("pInputAssemblyState")
        .structure()
        .filter(|_| defines(VERTEX_INPUT_INTERFACE));
    let tessellation = p
        .get("pTessellationState")
        .structure()
        .filter(|_| defines(PRE_RASTERIZATION_SHADERS));
    GraphicsPipelineT {
        pipeline: handle,
        flags: p.u32("flags"),
        stages: Some(if defines(PRE_RASTERIZATION_SHADERS | FRAGMENT_SHADER) {
            p.get("pStages").structures().iter().map(stage).collect()
        } else {
            Vec::new()
        }),
        topology: assembly.map_or(0, |a| a.u32("topology")),
        primitive_restart_enable: assembly.is_some_and(|a| a.u32("primitiveRestartEnable") != 0),
        patch_control_points: tessellation.map_or(0, |t| t.u32("patchControlPoints")),
        layout: p.word("layout"),
        render_pass: p.word("renderPass"),
        subpass: p.u32("subpass"),
        rendering,
        state: Some(Box::new(pipeline_state(p, &defines, &dynamic_states))),
        dynamic_states: Some(dynamic_states),
        libraries: Some(libraries),
        library_parts,
    }
}
