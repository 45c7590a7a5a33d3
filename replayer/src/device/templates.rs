//! Descriptor update templates: the data a template update passes holds handles at the
//! places the template's entries say; the replay rewrites them with its own.

use crate::handles::HandleMap;

use ash::vk;
use smallvec::{smallvec, SmallVec};
use trace_format::generic_params::Param;

use super::call::{CallContext, CallError};
use super::patch::PatchError;

/// One `VkDescriptorUpdateTemplateEntry`, as recorded.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// `dstBinding`.
    pub(crate) binding: u32,
    /// `dstArrayElement`.
    pub(crate) array_element: u32,
    /// `descriptorCount`.
    pub(crate) count: u32,
    /// `descriptorType`.
    pub(crate) ty: vk::DescriptorType,
    /// Where the first descriptor's data is in the update's data.
    pub(crate) offset: usize,
    /// Bytes from one descriptor's data to the next.
    pub(crate) stride: usize,
}

/// Every template's entries, by recorded id.
pub type Templates = HandleMap<Vec<Entry>>;

/// Reads the entries of a recorded `vkCreateDescriptorUpdateTemplate`: the create
/// info's nested `pDescriptorUpdateEntries` (32 bytes each), and the template's id.
pub fn created(p: &[Param<'_>]) -> Option<(u64, Vec<Entry>)> {
    let id = p
        .get(3)?
        .bytes()?
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
        .chunks_exact(32)
        .map(|e| Entry {
            binding: word(e, 0),
            array_element: word(e, 4),
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

/// The largest data a recorded template update is rebuilt to (its runs' extent), so that
/// a hostile offset cannot size an allocation.
pub const MAX_DATA_BYTES: usize = 16 << 20;

/// A recorded run of template data: its offset and bytes.
fn run(r: Param<'_>) -> (u64, &[u8]) {
    let (offset, bytes) = r.value_and_bytes();
    (offset, bytes.unwrap_or_default())
}

/// The recorded data of a template update as the program passed it: the bytes in full
/// (traces before sparse recording), or each recorded run at its offset in zeroed data
/// (bytes no entry reads stay zero).
pub(crate) fn recorded_data(data: Param<'_>) -> Result<Vec<u8>, CallError> {
    if let Some(bytes) = data.bytes() {
        return Ok(bytes.to_vec());
    }
    let Some(runs) = data.nested() else {
        return Err(CallError::Patch(super::patch::PatchError::Unrecorded {
            structure: "template update",
            member: "pData",
        }));
    };
    let mut extent = 0usize;
    for (offset, bytes) in runs.iter().map(run) {
        let end = usize::try_from(offset)
            .ok()
            .and_then(|o| o.checked_add(bytes.len()))
            .filter(|&end| end <= MAX_DATA_BYTES)
            .ok_or(PatchError::DataRun {
                offset,
                len: bytes.len(),
                limit: MAX_DATA_BYTES,
            })?;
        extent = extent.max(end);
    }
    let mut copy = vec![0u8; extent];
    for (offset, bytes) in runs.iter().map(run) {
        // In range: every run was checked above.
        let at = offset as usize;
        copy[at..at + bytes.len()].copy_from_slice(bytes);
    }
    Ok(copy)
}

/// A template update's recorded data read in place: the bytes in full, or each run at
/// its offset, bytes between runs reading as zero up to the last run's end, as
/// [`recorded_data`] rebuilds them (without zeroing and copying the whole).
pub(crate) struct RecordedRuns<'a> {
    /// Inline up to eight runs (Zink's template pushes record five).
    runs: SmallVec<[(usize, &'a [u8]); 8]>,
    extent: usize,
}

impl<'a> RecordedRuns<'a> {
    /// The runs of `data`; `None` where nothing was recorded or a run reaches past
    /// [`MAX_DATA_BYTES`].
    pub fn of(data: Param<'a>) -> Option<Self> {
        if let Some(bytes) = data.bytes() {
            return Some(RecordedRuns {
                runs: smallvec![(0, bytes)],
                extent: bytes.len(),
            });
        }
        let list = data.nested()?;
        let mut runs = SmallVec::with_capacity(list.len());
        let mut extent = 0usize;
        for (offset, bytes) in list.iter().map(run) {
            let at = usize::try_from(offset).ok()?;
            let end = at
                .checked_add(bytes.len())
                .filter(|&e| e <= MAX_DATA_BYTES)?;
            extent = extent.max(end);
            runs.push((at, bytes));
        }
        Some(RecordedRuns { runs, extent })
    }

    /// The `N` little-endian u64s from byte `at` (a `VkDescriptorBufferInfo`: 3);
    /// `None` when they reach past the data's end.
    pub fn u64s_at<const N: usize>(&self, at: usize) -> Option<[u64; N]> {
        let end = at.checked_add(8 * N).filter(|&e| e <= self.extent)?;
        let mut words = [0u64; N];
        // The latest run that touches the words: when it holds them all, no later run
        // covers any of their bytes, and they are read straight from it.
        let latest = self
            .runs
            .iter()
            .rev()
            .find(|(start, bytes)| *start < end && at < start + bytes.len());
        let held = latest.and_then(|(start, bytes)| {
            let from = at.checked_sub(*start)?;
            bytes.get(from..from + 8 * N)
        });
        match held {
            Some(held) => {
                for (word, bytes) in words.iter_mut().zip(held.chunks_exact(8)) {
                    *word = bytes.try_into().map_or(0, u64::from_le_bytes);
                }
            }
            None => {
                for (i, word) in words.iter_mut().enumerate() {
                    *word = self.u64_byte_by_byte(at + 8 * i);
                }
            }
        }
        Some(words)
    }

    /// The u64 at byte `at` (within the data) gathered byte by byte, each from the
    /// latest run over it, as in the rebuilt copy; bytes no run covers are 0.
    fn u64_byte_by_byte(&self, at: usize) -> u64 {
        let mut word = [0u8; 8];
        for (i, byte) in (at..at + 8).zip(word.iter_mut()) {
            if let Some((start, bytes)) = self
                .runs
                .iter()
                .rev()
                .find(|(start, bytes)| (*start..start + bytes.len()).contains(&i))
            {
                *byte = bytes[i - start];
            }
        }
        u64::from_le_bytes(word)
    }
}

/// The recorded data of a template update, rebuilt with the replay's handles.
pub fn rebuild(
    cx: &mut CallContext<'_>,
    entries: &[Entry],
    data: Param<'_>,
) -> Result<*const std::ffi::c_void, CallError> {
    let mut copy = recorded_data(data)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::generated::trace::VulkanParamT;
    use trace_format::generic_params;

    /// `param` as the reader hands it out of a packed record, to `check`.
    fn read<R>(param: &VulkanParamT, check: impl FnOnce(Param<'_>) -> R) -> R {
        let bytes = generic_params::packed(std::slice::from_ref(param));
        let params = generic_params::ParamList::packed(&bytes).unwrap();
        check(params.get(0).unwrap())
    }

    fn piece(offset: u64, bytes: &[u8]) -> VulkanParamT {
        let mut p = VulkanParamT::default();
        p.value = offset;
        p.bytes = Some(bytes.to_vec());
        p
    }

    #[test]
    fn sparse_data_is_rebuilt_with_each_run_at_its_offset() {
        let mut data = VulkanParamT::default();
        data.nested = Some(vec![piece(4, &[1, 2, 3]), piece(12, &[9])]);
        let rebuilt = read(&data, recorded_data).unwrap();
        assert_eq!(rebuilt, [0, 0, 0, 0, 1, 2, 3, 0, 0, 0, 0, 0, 9]);
    }

    #[test]
    fn whole_data_of_older_traces_is_taken_as_it_is() {
        let data = piece(0, &[5, 6, 7]);
        assert_eq!(read(&data, recorded_data).unwrap(), [5, 6, 7]);
    }

    #[test]
    fn runs_read_in_place_as_the_rebuilt_copy_reads() {
        let mut data = VulkanParamT::default();
        data.nested = Some(vec![
            piece(4, &[1, 2, 3, 4, 5, 6, 7, 8]),
            piece(16, &[9, 9, 9, 9, 9, 9, 9, 9]),
            piece(8, &[0xaa]),
            // A run holding whole descriptors, and one written over it in part.
            piece(24, &(1..=40).collect::<Vec<u8>>()),
            piece(50, &[0xbb; 3]),
        ]);
        let whole = read(&data, recorded_data).unwrap();
        let dense = |at: usize| {
            whole
                .get(at..at + 8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        };
        read(&data, |p| {
            let runs = RecordedRuns::of(p).unwrap();
            for at in 0..whole.len() + 2 {
                assert_eq!(runs.u64s_at::<1>(at).map(|[w]| w), dense(at), "at {at}");
                let three = (|| Some([dense(at)?, dense(at + 8)?, dense(at + 16)?]))();
                assert_eq!(runs.u64s_at::<3>(at), three, "three words at {at}");
            }
        });
    }

    #[test]
    fn a_run_far_past_any_template_is_refused_without_allocating() {
        let mut data = VulkanParamT::default();
        data.nested = Some(vec![piece(u64::MAX - 1, &[1, 2])]);
        let error = read(&data, recorded_data).unwrap_err().to_string();
        assert!(error.contains("reaches past"), "{error}");
    }
}
