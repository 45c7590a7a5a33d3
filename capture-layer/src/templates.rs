//! Descriptor update templates: how many bytes of a program's data each one reads, so
//! that `vkUpdateDescriptorSetWithTemplate` and `vkCmdPushDescriptorSetWithTemplate`
//! record the data (their `pData` has no length of its own).

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::VulkanParamT;

use crate::generic::{bytes_of, value};

/// Every live template's data size.
static SIZES: RwLock<Option<HashMap<u64, usize>>> = RwLock::new(None);

/// Bytes one descriptor of `ty` takes in template data.
fn descriptor_size(ty: vk::DescriptorType) -> usize {
    match ty {
        vk::DescriptorType::SAMPLER
        | vk::DescriptorType::COMBINED_IMAGE_SAMPLER
        | vk::DescriptorType::SAMPLED_IMAGE
        | vk::DescriptorType::STORAGE_IMAGE
        | vk::DescriptorType::INPUT_ATTACHMENT => std::mem::size_of::<vk::DescriptorImageInfo>(),
        vk::DescriptorType::UNIFORM_BUFFER
        | vk::DescriptorType::STORAGE_BUFFER
        | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC
        | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC => {
            std::mem::size_of::<vk::DescriptorBufferInfo>()
        }
        // Texel buffer views and acceleration structures: a handle each.
        _ => 8,
    }
}

/// The bytes of data a template with these entries reads.
pub fn data_size(entries: &[vk::DescriptorUpdateTemplateEntry]) -> usize {
    entries
        .iter()
        .filter(|e| e.descriptor_count > 0)
        .map(|e| {
            if e.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK {
                // descriptorCount counts bytes.
                e.offset + e.descriptor_count as usize
            } else {
                e.offset
                    + (e.descriptor_count as usize - 1) * e.stride
                    + descriptor_size(e.descriptor_type)
            }
        })
        .max()
        .unwrap_or(0)
}

/// Notes a template the program created.
///
/// # Safety
/// `info` must be the create info the template was made from.
pub unsafe fn created(
    template: vk::DescriptorUpdateTemplate,
    info: *const vk::DescriptorUpdateTemplateCreateInfo,
) {
    let Some(info) = info.as_ref() else {
        return;
    };
    let entries = if info.p_descriptor_update_entries.is_null() {
        &[][..]
    } else {
        std::slice::from_raw_parts(
            info.p_descriptor_update_entries,
            info.descriptor_update_entry_count as usize,
        )
    };
    let size = data_size(entries);
    let mut sizes = SIZES.write().unwrap_or_else(PoisonError::into_inner);
    sizes
        .get_or_insert_with(HashMap::new)
        .insert(template.as_raw(), size);
}

/// Forgets a template the program destroyed.
pub fn destroyed(template: vk::DescriptorUpdateTemplate) {
    let mut sizes = SIZES.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(m) = sizes.as_mut() {
        m.remove(&template.as_raw());
    }
}

/// The data a template update reads, as a parameter.
///
/// # Safety
/// `data` must hold what `template` reads.
pub unsafe fn data(
    template: vk::DescriptorUpdateTemplate,
    data: *const std::ffi::c_void,
) -> VulkanParamT {
    let size = SIZES
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(|m| m.get(&template.as_raw()).copied());
    match size {
        Some(size) => bytes_of(data as *const u8, size),
        None => value(data as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_reads_up_to_its_last_entry_s_last_descriptor() {
        let entries = [
            vk::DescriptorUpdateTemplateEntry {
                dst_binding: 0,
                dst_array_element: 0,
                descriptor_count: 2,
                descriptor_type: vk::DescriptorType::UNIFORM_BUFFER,
                offset: 0,
                stride: 24,
            },
            vk::DescriptorUpdateTemplateEntry {
                dst_binding: 1,
                dst_array_element: 0,
                descriptor_count: 3,
                descriptor_type: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
                offset: 48,
                stride: 32,
            },
        ];
        // The second entry's third image info ends at 48 + 2 * 32 + 24.
        assert_eq!(data_size(&entries), 136);
        assert_eq!(data_size(&entries[..1]), 48);
        assert_eq!(data_size(&[]), 0);
    }
}
