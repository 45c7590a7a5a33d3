//! Descriptor update templates: the data a template update passes holds handles at the
//! places the template's entries say; the replay rewrites them with its own.

use std::collections::HashMap;

use ash::vk;
use trace_format::generated::trace::VulkanParam;

use super::call::{CallContext, CallError};

/// One `VkDescriptorUpdateTemplateEntry`, as recorded.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    count: u32,
    ty: vk::DescriptorType,
    offset: usize,
    stride: usize,
}

/// Every template's entries, by recorded id.
pub type Templates = HashMap<u64, Vec<Entry>>;

/// Reads the entries of a recorded `vkCreateDescriptorUpdateTemplate`: the create
/// info's nested `pDescriptorUpdateEntries` (32 bytes each), and the template's id.
pub fn created(p: &[VulkanParam<'_>]) -> Option<(u64, Vec<Entry>)> {
    let id = p
        .get(3)?
        .bytes()?
        .bytes()
        .get(..8)?
        .try_into()
        .ok()
        .map(u64::from_le_bytes)?;
    let entries = p.get(1)?.nested()?.iter().next()?.bytes()?;
    let word = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .and_then(|s| s.try_into().ok())
            .map_or(0, u32::from_le_bytes)
    };
    let long = |b: &[u8], at: usize| {
        b.get(at..at + 8)
            .and_then(|s| s.try_into().ok())
            .map_or(0, u64::from_le_bytes)
    };
    let entries = entries
        .bytes()
        .chunks_exact(32)
        .map(|e| Entry {
            count: word(e, 8),
            ty: vk::DescriptorType::from_raw(word(e, 12) as i32),
            offset: long(e, 16) as usize,
            stride: long(e, 24) as usize,
        })
        .collect();
    Some((id, entries))
}

/// The handles in one descriptor of `ty`: (offset, type) of each.
fn handles_of(ty: vk::DescriptorType) -> &'static [(usize, vk::ObjectType)] {
    match ty {
        vk::DescriptorType::SAMPLER
        | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
        | vk::DescriptorType::SAMPLED_IMAGE
        | vk::DescriptorType::STORAGE_IMAGE
        | vk::DescriptorType::INPUT_ATTACHMENT => &[
            (0, vk::ObjectType::SAMPLER),
            (8, vk::ObjectType::IMAGE_VIEW),
        ],
        vk::DescriptorType::UNIFORM_BUFFER
        | vk::DescriptorType::STORAGE_BUFFER
        | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
        | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC => &[(0, vk::ObjectType::BUFFER)],
        vk::DescriptorType::UNIFORM_TEXEL_BUFFER | vk::DescriptorType::STORAGE_TEXEL_BUFFER => {
            &[(0, vk::ObjectType::BUFFER_VIEW)]
        }
        vk::DescriptorType::ACCELERATION_STRUCTURE_KHR => {
            &[(0, vk::ObjectType::ACCELERATION_STRUCTURE_KHR)]
        }
        _ => &[],
    }
}

/// The recorded data of a template update, rebuilt with the replay's handles; null
/// where the capture had no template size (a template made before capture began).
pub fn rebuild(
    cx: &mut CallContext<'_>,
    entries: &[Entry],
    data: VulkanParam<'_>,
) -> Result<*const std::ffi::c_void, CallError> {
    let Some(bytes) = data.bytes() else {
        return Err(CallError::Patch(super::patch::PatchError::Unrecorded {
            structure: "template update",
            member: "pData",
        }));
    };
    let mut copy = bytes.bytes().to_vec();
    for e in entries {
        for i in 0..e.count as usize {
            let at = e.offset + i * e.stride;
            for &(offset, ty) in handles_of(e.ty) {
                let Some(slot) = copy.get_mut(at + offset..at + offset + 8) else {
                    continue;
                };
                let id = u64::from_le_bytes(slot.try_into().unwrap_or_default());
                let handle = cx.handles.get(ty, id).unwrap_or_else(|| {
                    cx.arena.unknown_handles += 1;
                    0
                });
                slot.copy_from_slice(&handle.to_le_bytes());
            }
        }
    }
    Ok(cx.arena.copy(&copy) as *const std::ffi::c_void)
}
