//! Descriptor update templates: their entries noted at creation, and the data of a
//! template update rebuilt in the program's layout from GFXReconstruct's grouped
//! descriptors, recorded as the capture layer records it (`capture-layer/src/templates.rs`).

use std::collections::HashMap;

use super::{arg, out_handle, DecodedCall, Value};
use crate::generated::trace::VulkanParamT;

/// A descriptor update template's entries: (descriptor type, count, offset, stride).
type TemplateEntries = Vec<(u32, u32, usize, usize)>;

/// Every template created so far, by handle.
#[derive(Default)]
pub(super) struct Templates {
    entries: HashMap<u64, TemplateEntries>,
}

impl Templates {
    /// Notes the template `call` creates, if it creates one.
    pub(super) fn note(&mut self, call: &DecodedCall) {
        if let Some((handle, entries)) = Self::created(call) {
            self.entries.insert(handle, entries);
        }
    }

    /// A template's handle and entries, where `call` creates one.
    fn created(call: &DecodedCall) -> Option<(u64, TemplateEntries)> {
        if !call
            .command
            .name
            .starts_with("vkCreateDescriptorUpdateTemplate")
            || call.result != 0
        {
            return None;
        }
        let info = arg(call, "pCreateInfo").structure()?;
        let entries = info
            .get("pDescriptorUpdateEntries")
            .structures()
            .iter()
            .map(|e| {
                (
                    e.u32("descriptorType"),
                    e.u32("descriptorCount"),
                    e.word("offset") as usize,
                    e.word("stride") as usize,
                )
            })
            .collect();
        Some((out_handle(call, "pDescriptorUpdateTemplate"), entries))
    }

    /// Template data rebuilt in the program's layout from GFXReconstruct's grouped
    /// descriptors, recorded as the layer records it: a nested parameter per byte run
    /// the template reads.
    pub(super) fn data(&self, template: u64, v: &Value) -> VulkanParamT {
        let Value::Template {
            images,
            buffers,
            texel_views,
        } = v
        else {
            return VulkanParamT::default();
        };
        let Some(entries) = self.entries.get(&template) else {
            return VulkanParamT::default();
        };
        let kind = |ty: u32| match ty {
            0..=4 | 10 => 0, // samplers, images, input attachments
            6..=9 => 1,      // buffers
            1000138000 => 3, // inline uniform blocks
            _ => 2,          // texel buffer views (and acceleration structures)
        };
        let sizes = [24usize, 24, 8];
        let mut next = [0usize; 3];
        let sources = [images, buffers, texel_views];
        let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
        let mut data: Vec<u8> = Vec::new();
        for &(ty, count, offset, stride) in entries {
            let k = kind(ty);
            if k == 3 {
                continue;
            }
            let size = sizes[k];
            for i in 0..count as usize {
                let at = offset.saturating_add(i.saturating_mul(stride));
                let Some(src) = sources[k].get(next[k] * size..(next[k] + 1) * size) else {
                    break;
                };
                next[k] += 1;
                if at > 1 << 24 {
                    continue;
                }
                if data.len() < at + size {
                    data.resize(at + size, 0);
                }
                data[at..at + size].copy_from_slice(src);
                runs.push(at..at + size);
            }
        }
        runs.sort_unstable_by_key(|r| r.start);
        let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
        for r in runs {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        VulkanParamT {
            value: 1,
            nested: Some(
                merged
                    .into_iter()
                    .map(|r| VulkanParamT {
                        value: r.start as u64,
                        bytes: Some(data[r].to_vec()),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }
    }
}
