//! Decoded GFXReconstruct calls into the records the capture layer makes for the same
//! calls: typed records for the calls the layer hooks by hand (mirroring each hook in
//! `capture-layer/src/hooks/`), `VulkanCall` records for the rest (by the generated
//! rules, see [`super::generic`]). Handles keep GFXReconstruct's ids.

use std::collections::HashMap;

mod commands;
mod pipeline;
mod pipeline_state;
mod setup;
mod templates;

use super::generic;
use super::params::{DecodedCall, StructValue, Value};
use super::tables::Rule;
use crate::generated::trace::*;
use crate::generic_params;
use templates::Templates;

/// `VkStructureType` values the conversion looks for in chains.
pub(super) mod s_type {
    pub const RENDER_PASS_MULTIVIEW_CREATE_INFO: u32 = 1000053000;
    pub const SUBPASS_DESCRIPTION_DEPTH_STENCIL_RESOLVE: u32 = 1000199001;
    pub const ATTACHMENT_REFERENCE_STENCIL_LAYOUT: u32 = 1000241001;
    pub const ATTACHMENT_DESCRIPTION_STENCIL_LAYOUT: u32 = 1000241002;
    pub const PHYSICAL_DEVICE_MULTIVIEW_FEATURES: u32 = 1000053001;
    pub const PHYSICAL_DEVICE_VULKAN_1_1_FEATURES: u32 = 49;
    pub const MEMORY_ALLOCATE_FLAGS_INFO: u32 = 1000060000;
    pub const COMMAND_BUFFER_INHERITANCE_RENDERING_INFO: u32 = 1000044004;
    pub const PIPELINE_RENDERING_CREATE_INFO: u32 = 1000044002;
    pub const PIPELINE_LIBRARY_CREATE_INFO_KHR: u32 = 1000290000;
    pub const GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT: u32 = 1000320002;
}

/// `VkObjectType` of each `vkDestroy*` the layer records as `DestroyObject`.
const DESTROYED: &[(&str, u32)] = &[
    ("vkDestroyBuffer", 9),
    ("vkDestroyImage", 10),
    ("vkDestroyImageView", 14),
    ("vkDestroyShaderModule", 15),
    ("vkDestroyPipelineLayout", 17),
    ("vkDestroyRenderPass", 18),
    ("vkDestroyPipeline", 19),
    ("vkDestroyFramebuffer", 24),
    ("vkDestroyCommandPool", 25),
    ("vkDestroyQueryPool", 12),
];

/// One record to write: its call and its result.
pub struct Converted {
    /// The call.
    pub call: CallT,
    /// The `VkResult` it carries.
    pub result: i32,
}

/// What the conversion keeps between calls.
#[derive(Default)]
pub struct Converter {
    /// Each descriptor update template's entries.
    templates: Templates,
    /// Each mapped memory object's mapping offset.
    maps: HashMap<u64, u64>,
    /// Where each buffer is bound: its memory object and offset.
    buffers: HashMap<u64, (u64, u64)>,
    /// Each physical device's properties, as the program last read them.
    properties: HashMap<u64, StructValue>,
    /// Calls converted without a typed record the layer would have made.
    pub skipped: HashMap<&'static str, u64>,
}

/// Parameter `name` of `call` (null where the command has none of that name).
fn arg<'a>(call: &'a DecodedCall, name: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    call.command
        .params
        .iter()
        .position(|p| p.name == name)
        .and_then(|i| call.params.get(i))
        .unwrap_or(&NULL)
}

/// Parameter `name` as a word.
fn word(call: &DecodedCall, name: &str) -> u64 {
    arg(call, name).word()
}

/// Parameter `name` as a 32-bit word.
fn u32_of(call: &DecodedCall, name: &str) -> u32 {
    word(call, name) as u32
}

/// The first handle an output pointer holds.
fn out_handle(call: &DecodedCall, name: &str) -> u64 {
    arg(call, name).words64().first().copied().unwrap_or(0)
}
/// A record per structure `v` points to (the bind infos of `vkBind*Memory2`, the draws
/// of `vkCmdDrawMulti*EXT`: the layer records each as its own call).
fn each(v: &Value, record: impl Fn(&StructValue) -> CallT) -> Vec<Converted> {
    v.structures()
        .iter()
        .map(|s| Converted {
            call: record(s),
            result: 0,
        })
        .collect()
}

/// `call` as the one record, its result set by [`Converter::convert`].
fn one(call: CallT) -> Vec<Converted> {
    vec![Converted { call, result: 0 }]
}
impl Converter {
    /// The records the capture layer makes for `call` (none for a call it does not
    /// record, such as one that failed).
    pub fn convert(&mut self, call: &DecodedCall) -> Vec<Converted> {
        let result = call.result as u32 as i32;
        let mut out = self.typed(call);
        let name = call.command.name;
        if out.is_none() && call.command.generic {
            out = Some(one(self.generic(call)));
        }
        let mut out = out.unwrap_or_else(|| {
            *self.skipped.entry(name).or_default() += 1;
            Vec::new()
        });
        for c in &out {
            if let CallT::BindBufferMemory(b) = &c.call {
                self.buffers.insert(b.buffer, (b.memory, b.offset));
            }
        }
        // The layer records set-up calls with their result; commands and submits with 0.
        if !name.starts_with("vkCmd") && !name.starts_with("vkQueue") {
            for c in &mut out {
                if !matches!(c.call, CallT::PhysicalDeviceInfo(_)) {
                    c.result = result;
                }
            }
        }
        out
    }

    /// A generic `VulkanCall` record, as the layer's generated hook makes it.
    fn generic(&mut self, call: &DecodedCall) -> CallT {
        let params: Vec<VulkanParamT> = call
            .command
            .params
            .iter()
            .zip(&call.params)
            .map(|(p, v)| {
                if p.rule == Rule::TemplateData {
                    let template = call
                        .command
                        .params
                        .iter()
                        .position(|q| q.name == "descriptorUpdateTemplate")
                        .and_then(|i| call.params.get(i))
                        .map_or(0, Value::word);
                    self.templates.data(template, v)
                } else {
                    generic::param(v, p.kind, p.rule)
                }
            })
            .collect();
        self.templates.note(call);
        if call
            .command
            .name
            .starts_with("vkGetPhysicalDeviceProperties")
        {
            let pd = word(call, "physicalDevice");
            if let Some(p) = arg(call, "pProperties").structure() {
                let p = if p.get("properties").structure().is_some() {
                    p.get("properties").structure().cloned()
                } else {
                    Some(p.clone())
                };
                if let Some(p) = p {
                    self.properties.insert(pd, p);
                }
            }
        }
        CallT::VulkanCall(Box::new(generic_params::packed_call(
            call.command.name,
            &params,
        )))
    }

    /// The bytes of a memory fill, as the layer records them: offset into the memory
    /// object (GFXReconstruct gives it into the mapping).
    pub fn memory_contents(&self, memory: u64, offset: u64, data: Vec<u8>) -> CallT {
        let base = self.maps.get(&memory).copied().unwrap_or(0);
        CallT::MemoryContents(Box::new(MemoryContentsT {
            memory,
            offset: base.saturating_add(offset),
            data: Some(data),
        }))
    }

    /// A buffer's initial contents (a trimmed capture's state snapshot) as the memory
    /// contents of where it is bound; `None` for a buffer bound nowhere.
    pub fn buffer_contents(&self, buffer: u64, data: Vec<u8>) -> Option<CallT> {
        let &(memory, offset) = self.buffers.get(&buffer)?;
        Some(CallT::MemoryContents(Box::new(MemoryContentsT {
            memory,
            offset,
            data: Some(data),
        })))
    }

    /// The typed records of a call the layer hooks by hand; `None` for the others.
    fn typed(&mut self, call: &DecodedCall) -> Option<Vec<Converted>> {
        let name = call.command.name;
        if let Some(&(_, object_type)) = DESTROYED.iter().find(|(n, _)| *n == name) {
            return Some(one(CallT::DestroyObject(Box::new(DestroyObjectT {
                device: word(call, "device"),
                object_type,
                handle: call.params.get(1).map_or(0, Value::word),
            }))));
        }
        setup::convert(self, call).or_else(|| commands::convert(call))
    }
}

#[cfg(test)]
mod tests {
    use super::s_type;
    use crate::gfxr::tables::s_type_of;

    #[test]
    fn the_structure_types_looked_for_are_the_registry_s() {
        for (value, name) in [
            (
                s_type::RENDER_PASS_MULTIVIEW_CREATE_INFO,
                "VkRenderPassMultiviewCreateInfo",
            ),
            (
                s_type::PHYSICAL_DEVICE_MULTIVIEW_FEATURES,
                "VkPhysicalDeviceMultiviewFeatures",
            ),
            (
                s_type::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                "VkPhysicalDeviceVulkan11Features",
            ),
            (
                s_type::MEMORY_ALLOCATE_FLAGS_INFO,
                "VkMemoryAllocateFlagsInfo",
            ),
            (
                s_type::COMMAND_BUFFER_INHERITANCE_RENDERING_INFO,
                "VkCommandBufferInheritanceRenderingInfo",
            ),
            (
                s_type::PIPELINE_RENDERING_CREATE_INFO,
                "VkPipelineRenderingCreateInfo",
            ),
            (
                s_type::PIPELINE_LIBRARY_CREATE_INFO_KHR,
                "VkPipelineLibraryCreateInfoKHR",
            ),
            (
                s_type::GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT,
                "VkGraphicsPipelineLibraryCreateInfoEXT",
            ),
        ] {
            assert_eq!(value, s_type_of(name), "{name}");
        }
    }
}
