//! The one name a user reads for each record: the Vulkan command's name for calls,
//! typed or generic, and a name that cannot be mistaken for a command for the records
//! that are not calls.
//!
//! A typed record stands for a command family: `vkQueueSubmit` and `vkQueueSubmit2`
//! are both a `QueueSubmit` record, `vkCmdBeginRenderPass2` a `CmdBeginRenderPass`,
//! multi-draws their draws. Such a record is named by the family's first form
//! (`vkQueueSubmit`), except where the record says which form it was
//! (`vkCreateRenderPass2`). A destroyed object is named by the `vkDestroy*` command
//! of its object type.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::generated::results::DrawKind;
use crate::generated::trace::{Call, Record};

/// What kind of record a name belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordClass {
    /// A Vulkan command the program called.
    Command,
    /// Something the layer recorded that is not a call: memory contents, a frame
    /// boundary, what the physical device reported.
    Other,
}

/// A record's name and class.
pub fn record_name<'a>(record: &Record<'a>) -> (Cow<'a, str>, RecordClass) {
    let call = record.call_type();
    let name = match call {
        Call::VulkanCall => match record
            .call_as_vulkan_call()
            .and_then(|c| generic_command(&c))
        {
            Some(command) => Cow::Borrowed(command),
            None => Cow::Borrowed("vkUnknownCommand"),
        },
        Call::DestroyObject => Cow::Borrowed(
            record
                .call_as_destroy_object()
                .map_or("vkDestroyObject", |d| destroy_command(d.object_type())),
        ),
        Call::CreateRenderPass
            if record
                .call_as_create_render_pass()
                .is_some_and(|c| c.version() == 2) =>
        {
            Cow::Borrowed("vkCreateRenderPass2")
        }
        _ => call_name(call),
    };
    (name, class_of(call))
}

/// The command a generic record (`VulkanCall`) stands for: its name, or the name its
/// id gives (format version 5 on); `None` for neither, or an id this build does not
/// know.
pub fn generic_command<'a>(call: &crate::generated::trace::VulkanCall<'a>) -> Option<&'a str> {
    call.command().or_else(|| command_of_id(call.command_id()))
}

/// The command numbered `id` in `trace-format/schema/commands.txt` (the first is 1), an
/// append-only list: the names generic records give by number.
pub fn command_of_id(id: u32) -> Option<&'static str> {
    let index = usize::try_from(id).ok()?.checked_sub(1)?;
    crate::generated::COMMAND_NAMES.get(index).copied()
}

/// The number [`command_of_id`] gives `name` by, if the list holds it.
pub fn command_id(name: &str) -> Option<u32> {
    static IDS: OnceLock<std::collections::HashMap<&'static str, u32>> = OnceLock::new();
    IDS.get_or_init(|| {
        let names = crate::generated::COMMAND_NAMES.iter();
        names.zip(1..).map(|(n, id)| (*n, id)).collect()
    })
    .get(name)
    .copied()
}

/// Whether records of this call type are Vulkan commands.
pub fn class_of(call: Call) -> RecordClass {
    match call {
        Call::NONE
        | Call::MemoryContents
        | Call::FrameBoundary
        | Call::FrameChecksum
        | Call::PhysicalDeviceInfo => RecordClass::Other,
        _ => RecordClass::Command,
    }
}

/// The Vulkan command a results row of `kind` comes from (one table for the trace's
/// draw calls and the results' rows).
pub fn row_kind_name(kind: DrawKind) -> &'static str {
    match kind {
        DrawKind::Draw => "vkCmdDraw",
        DrawKind::DrawIndexed => "vkCmdDrawIndexed",
        DrawKind::DrawIndirect => "vkCmdDrawIndirect",
        DrawKind::DrawIndexedIndirect => "vkCmdDrawIndexedIndirect",
        DrawKind::DrawIndirectCount => "vkCmdDrawIndirectCount",
        DrawKind::DrawIndexedIndirectCount => "vkCmdDrawIndexedIndirectCount",
        DrawKind::DrawIndirectByteCount => "vkCmdDrawIndirectByteCountEXT",
        DrawKind::Dispatch => "vkCmdDispatch",
        DrawKind::DispatchIndirect => "vkCmdDispatchIndirect",
        DrawKind::CopyBuffer => "vkCmdCopyBuffer",
        DrawKind::FillBuffer => "vkCmdFillBuffer",
        DrawKind::ClearAttachments => "vkCmdClearAttachments",
        DrawKind::ClearColorImage => "vkCmdClearColorImage",
        DrawKind::ClearDepthStencilImage => "vkCmdClearDepthStencilImage",
        DrawKind::CopyImage => "vkCmdCopyImage",
        DrawKind::CopyBufferToImage => "vkCmdCopyBufferToImage",
        DrawKind::CopyImageToBuffer => "vkCmdCopyImageToBuffer",
        DrawKind::BlitImage => "vkCmdBlitImage",
        DrawKind::ResolveImage => "vkCmdResolveImage",
        DrawKind::PipelineBarrier => "vkCmdPipelineBarrier",
        _ => "unknown row kind",
    }
}

/// Whether results rows of `kind` are draws (as opposed to dispatches, transfers,
/// clears and barriers, which get rows of their own kinds).
pub fn is_draw_kind(kind: DrawKind) -> bool {
    (DrawKind::Draw.0..=DrawKind::DrawIndirectByteCount.0).contains(&kind.0)
}

/// The name of a call type, without looking at the record: the Vulkan command of a
/// typed record, or what a non-call record is. Unknown types (from a newer version)
/// are named by their number.
pub fn call_name(call: Call) -> Cow<'static, str> {
    let name = match call {
        Call::CreateInstance => "vkCreateInstance",
        Call::DestroyInstance => "vkDestroyInstance",
        Call::PhysicalDeviceInfo => "physical device info",
        Call::CreateDevice => "vkCreateDevice",
        Call::DestroyDevice => "vkDestroyDevice",
        Call::GetDeviceQueue => "vkGetDeviceQueue",
        Call::AllocateMemory => "vkAllocateMemory",
        Call::FreeMemory => "vkFreeMemory",
        Call::MapMemory => "vkMapMemory",
        Call::UnmapMemory => "vkUnmapMemory",
        Call::FlushMappedMemoryRanges => "vkFlushMappedMemoryRanges",
        Call::MemoryContents => "memory contents",
        Call::CreateBuffer => "vkCreateBuffer",
        Call::BindBufferMemory => "vkBindBufferMemory",
        Call::CreateImage => "vkCreateImage",
        Call::BindImageMemory => "vkBindImageMemory",
        Call::CreateImageView => "vkCreateImageView",
        Call::DestroyObject => "vkDestroyObject",
        Call::CreateRenderPass => "vkCreateRenderPass",
        Call::CreateFramebuffer => "vkCreateFramebuffer",
        Call::CmdBeginRenderPass => "vkCmdBeginRenderPass",
        Call::CmdNextSubpass => "vkCmdNextSubpass",
        Call::CmdEndRenderPass => "vkCmdEndRenderPass",
        Call::CmdBeginRendering => "vkCmdBeginRendering",
        Call::CmdEndRendering => "vkCmdEndRendering",
        Call::CreateShaderModule => "vkCreateShaderModule",
        Call::CreatePipelineLayout => "vkCreatePipelineLayout",
        Call::CreateGraphicsPipelines => "vkCreateGraphicsPipelines",
        Call::CreateCommandPool => "vkCreateCommandPool",
        Call::AllocateCommandBuffers => "vkAllocateCommandBuffers",
        Call::BeginCommandBuffer => "vkBeginCommandBuffer",
        Call::EndCommandBuffer => "vkEndCommandBuffer",
        Call::ResetCommandBuffer => "vkResetCommandBuffer",
        Call::CmdExecuteCommands => "vkCmdExecuteCommands",
        Call::CmdBindPipeline => "vkCmdBindPipeline",
        Call::CmdBindDescriptorSets => "vkCmdBindDescriptorSets",
        Call::CmdBindVertexBuffers => "vkCmdBindVertexBuffers",
        Call::CmdBindIndexBuffer => "vkCmdBindIndexBuffer",
        Call::CmdPushConstants => "vkCmdPushConstants",
        Call::CmdDraw => row_kind_name(DrawKind::Draw),
        Call::CmdDrawIndexed => row_kind_name(DrawKind::DrawIndexed),
        Call::CmdDrawIndirect => row_kind_name(DrawKind::DrawIndirect),
        Call::CmdDrawIndexedIndirect => row_kind_name(DrawKind::DrawIndexedIndirect),
        Call::CmdDrawIndirectCount => row_kind_name(DrawKind::DrawIndirectCount),
        Call::CmdDrawIndexedIndirectCount => row_kind_name(DrawKind::DrawIndexedIndirectCount),
        Call::CmdDrawIndirectByteCount => row_kind_name(DrawKind::DrawIndirectByteCount),
        Call::CreateQueryPool => "vkCreateQueryPool",
        Call::CmdBeginQuery => "vkCmdBeginQuery",
        Call::CmdEndQuery => "vkCmdEndQuery",
        Call::CmdWriteTimestamp => "vkCmdWriteTimestamp",
        Call::CmdResetQueryPool => "vkCmdResetQueryPool",
        Call::CmdCopyQueryPoolResults => "vkCmdCopyQueryPoolResults",
        Call::QueueSubmit => "vkQueueSubmit",
        Call::QueuePresent => "vkQueuePresentKHR",
        Call::FrameBoundary => "frame boundary",
        Call::FrameChecksum => "frame checksum",
        Call::CmdSetPrimitiveTopology => "vkCmdSetPrimitiveTopology",
        Call::CmdUpdateBuffer => "vkCmdUpdateBuffer",
        Call::CmdBeginConditionalRendering => "vkCmdBeginConditionalRenderingEXT",
        Call::CmdEndConditionalRendering => "vkCmdEndConditionalRenderingEXT",
        Call::VulkanCall => "vkUnknownCommand",
        Call::NONE => "empty record",
        other => return Cow::Owned(format!("unknown record type {}", other.0)),
    };
    Cow::Borrowed(name)
}

/// The `vkDestroy*` (or `vkFree*`) command that destroys an object of this
/// `VkObjectType`.
pub fn destroy_command(object_type: u32) -> &'static str {
    match object_type {
        1 => "vkDestroyInstance",
        3 => "vkDestroyDevice",
        5 => "vkDestroySemaphore",
        6 => "vkFreeCommandBuffers",
        7 => "vkDestroyFence",
        8 => "vkFreeMemory",
        9 => "vkDestroyBuffer",
        10 => "vkDestroyImage",
        11 => "vkDestroyEvent",
        12 => "vkDestroyQueryPool",
        13 => "vkDestroyBufferView",
        14 => "vkDestroyImageView",
        15 => "vkDestroyShaderModule",
        16 => "vkDestroyPipelineCache",
        17 => "vkDestroyPipelineLayout",
        18 => "vkDestroyRenderPass",
        19 => "vkDestroyPipeline",
        20 => "vkDestroyDescriptorSetLayout",
        21 => "vkDestroySampler",
        22 => "vkDestroyDescriptorPool",
        23 => "vkFreeDescriptorSets",
        24 => "vkDestroyFramebuffer",
        25 => "vkDestroyCommandPool",
        1_000_000_000 => "vkDestroySurfaceKHR",
        1_000_001_000 => "vkDestroySwapchainKHR",
        1_000_085_000 => "vkDestroyDescriptorUpdateTemplate",
        1_000_156_000 => "vkDestroySamplerYcbcrConversion",
        1_000_295_000 => "vkDestroyPrivateDataSlot",
        _ => "vkDestroyObject",
    }
}

/// Whether a Vulkan command name records commands into a command buffer (`vkCmd*`).
pub fn is_recorded_command(name: &str) -> bool {
    name.starts_with("vkCmd")
}

/// Whether records of `call` are recorded commands ([`is_recorded_command`] of its
/// [`call_name`]), from a table made on first use: a replay asks for every record.
pub fn is_recorded_command_call(call: Call) -> bool {
    static COMMANDS: OnceLock<[bool; 256]> = OnceLock::new();
    COMMANDS.get_or_init(|| std::array::from_fn(|i| is_recorded_command(&call_name(Call(i as u8)))))
        [usize::from(call.0)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_a_recorded_command_as_its_name_says() {
        for i in 0..=u8::MAX {
            let call = Call(i);
            assert_eq!(
                is_recorded_command_call(call),
                is_recorded_command(&call_name(call)),
                "{}",
                call_name(call)
            );
        }
        assert!(is_recorded_command_call(Call::CmdDraw));
        assert!(!is_recorded_command_call(Call::CreateBuffer));
    }

    #[test]
    fn every_known_call_type_has_a_vulkan_name_or_a_non_command_name() {
        for call in Call::ENUM_VALUES {
            let name = call_name(*call);
            match class_of(*call) {
                RecordClass::Command => assert!(name.starts_with("vk"), "{name}"),
                RecordClass::Other => {
                    assert!(!name.starts_with("vk") && name.contains(' '), "{name}")
                }
            }
        }
        assert_eq!(call_name(Call(250)), "unknown record type 250");
    }

    #[test]
    fn destroyed_objects_are_named_by_their_destroy_command() {
        assert_eq!(destroy_command(9), "vkDestroyBuffer");
        assert_eq!(destroy_command(25), "vkDestroyCommandPool");
        assert_eq!(destroy_command(4242), "vkDestroyObject");
    }
}
