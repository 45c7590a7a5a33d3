//! Descriptor update templates: which bytes of a program's data each one reads, so
//! that `vkUpdateDescriptorSetWithTemplate` and `vkCmdPushDescriptorSetWithTemplate`
//! record the data (their `pData` has no length of its own).
//!
//! The data is recorded sparse: only the byte runs the template's entries read, each as
//! a nested parameter (its offset in `value`, its bytes in `bytes`). Programs often hand
//! a template a pointer into a large structure of their own (Zink passes its context,
//! whose descriptor arrays lie 27 KB apart): the runs are what the driver reads, a few
//! dozen bytes where the whole extent would be kilobytes a call.

use foldhash::{HashMap, HashMapExt};
use std::ops::Range;
use std::sync::{PoisonError, RwLock};

use ash::vk;
use ash::vk::Handle;
use trace_format::generic_params::{NodeWriter, ParamWriter};

/// Every live template's byte runs.
static RUNS: RwLock<Option<HashMap<u64, Vec<Range<usize>>>>> = RwLock::new(None);

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

/// The byte runs of data a template with these entries reads: sorted, with runs that
/// touch or overlap merged.
pub fn data_runs(entries: &[vk::DescriptorUpdateTemplateEntry]) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = entries
        .iter()
        .flat_map(|e| {
            let (count, size) = if e.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK {
                // descriptorCount counts bytes, read as one run.
                (1, e.descriptor_count as usize)
            } else {
                (
                    e.descriptor_count as usize,
                    descriptor_size(e.descriptor_type),
                )
            };
            (0..count).map(move |i| {
                let start = e.offset.saturating_add(i.saturating_mul(e.stride));
                start..start.saturating_add(size)
            })
        })
        .filter(|r| !r.is_empty())
        .collect();
    runs.sort_unstable_by_key(|r| r.start);
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(runs.len());
    for run in runs {
        match merged.last_mut() {
            Some(last) if run.start <= last.end => last.end = last.end.max(run.end),
            _ => merged.push(run),
        }
    }
    merged
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
    let runs = data_runs(entries);
    let mut all = RUNS.write().unwrap_or_else(PoisonError::into_inner);
    all.get_or_insert_with(HashMap::new)
        .insert(template.as_raw(), runs);
}

/// Forgets a template the program destroyed.
pub fn destroyed(template: vk::DescriptorUpdateTemplate) {
    let mut all = RUNS.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(m) = all.as_mut() {
        m.remove(&template.as_raw());
    }
}

/// The data a template update reads, as a parameter: the pointer in `value`, and a
/// nested parameter per byte run (its offset in `value`, the bytes in `bytes`); the
/// pointer alone for a template the layer never saw made.
///
/// # Safety
/// `data` must hold what `template` reads.
pub unsafe fn data<'w>(
    p: &'w mut ParamWriter<'_>,
    template: vk::DescriptorUpdateTemplate,
    data: *const std::ffi::c_void,
) -> NodeWriter<'w> {
    let all = RUNS.read().unwrap_or_else(PoisonError::into_inner);
    let mut param = p.node(data as u64);
    let Some(runs) = all.as_ref().and_then(|m| m.get(&template.as_raw())) else {
        return param;
    };
    if !data.is_null() {
        let base = data as *const u8;
        param.nested(|pieces| {
            for run in runs {
                let mut piece = pieces.node(run.start as u64);
                if !run.is_empty() {
                    piece.bytes(std::slice::from_raw_parts(base.add(run.start), run.len()));
                }
            }
        });
    }
    param
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(
        count: u32,
        ty: vk::DescriptorType,
        offset: usize,
        stride: usize,
    ) -> vk::DescriptorUpdateTemplateEntry {
        vk::DescriptorUpdateTemplateEntry {
            dst_binding: 0,
            dst_array_element: 0,
            descriptor_count: count,
            descriptor_type: ty,
            offset,
            stride,
        }
    }

    #[test]
    fn a_template_reads_each_descriptor_s_bytes_and_no_others() {
        let entries = [
            // Two buffer infos back to back: one run.
            entry(2, vk::DescriptorType::UNIFORM_BUFFER, 0, 24),
            // Three image infos 32 bytes apart: 24 read of each 32.
            entry(3, vk::DescriptorType::COMBINED_IMAGE_SAMPLER, 4096, 32),
        ];
        assert_eq!(
            data_runs(&entries),
            [0..48, 4096..4120, 4128..4152, 4160..4184]
        );
        assert_eq!(data_runs(&[]), Vec::<Range<usize>>::new());
    }

    #[test]
    fn runs_are_sorted_and_merged_where_entries_touch_or_overlap() {
        let entries = [
            entry(1, vk::DescriptorType::STORAGE_BUFFER, 100, 0),
            entry(1, vk::DescriptorType::UNIFORM_BUFFER, 80, 0),
            entry(16, vk::DescriptorType::INLINE_UNIFORM_BLOCK, 0, 0),
            entry(0, vk::DescriptorType::SAMPLER, 500, 8),
        ];
        // 80..104 and 100..124 overlap; an empty entry reads nothing.
        assert_eq!(data_runs(&entries), [0..16, 80..124]);
    }

    #[test]
    fn an_update_records_the_runs_with_their_offsets() {
        let template = vk::DescriptorUpdateTemplate::from_raw(0x7e57);
        let entries = [entry(2, vk::DescriptorType::UNIFORM_BUFFER, 8, 40)];
        let info =
            vk::DescriptorUpdateTemplateCreateInfo::default().descriptor_update_entries(&entries);
        let program: Vec<u8> = (0..96).collect();
        // SAFETY: `info` is a valid create info.
        unsafe { created(template, &info) };
        let params = crate::generic::trees(|p| {
            // SAFETY: `program` holds what the template reads.
            unsafe { data(p, template, program.as_ptr().cast()) };
        });
        destroyed(template);
        let [param] = &params.expect("the parameter reads back")[..] else {
            panic!("one parameter");
        };
        assert_eq!(param.value, program.as_ptr() as u64);
        let runs = param.nested.clone().expect("runs");
        let runs: Vec<(u64, Vec<u8>)> = runs
            .into_iter()
            .map(|r| (r.value, r.bytes.unwrap_or_default()))
            .collect();
        assert_eq!(
            runs,
            [(8, program[8..32].to_vec()), (48, program[48..72].to_vec())]
        );
        assert!(param.bytes.is_none());
    }
}
