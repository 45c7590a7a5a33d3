//! What the generated hooks (`generated::commands`) share: finding the next layer's
//! function by slot, and encoding parameters into a `VulkanCall` record (packed:
//! [`trace_format::generic_params`], in a compact record).

use std::ffi::{c_char, CStr};

use ash::vk;
use ash::vk::Handle;
use trace_format::direct::DirectField;
use trace_format::generated::trace::{Call, VulkanParamT};
use trace_format::generic_params;

use crate::dispatch;
use crate::recorder::{self, Scope};

/// The most bytes one parameter records: a guard against a count the program got wrong.
const MAX_PARAM_BYTES: usize = 64 << 20;

/// The next layer's function in instance-level slot `slot`, as type `F`.
///
/// # Safety
/// `handle` must be a live instance or physical device; `F` the slot's function type.
pub unsafe fn instance_next<F: Copy>(handle: impl Handle, slot: usize) -> Option<F> {
    let data = dispatch::instance_of(handle)?;
    cast(*data.generated.get(slot)?)
}

/// The next layer's function in device-level slot `slot`, as type `F`.
///
/// # Safety
/// `handle` must be a live device, queue or command buffer; `F` the slot's function type.
pub unsafe fn device_next<F: Copy>(handle: impl Handle, slot: usize) -> Option<F> {
    let data = dispatch::device_of(handle)?;
    cast(*data.generated.get(slot)?)
}

unsafe fn cast<F: Copy>(f: vk::PFN_vkVoidFunction) -> Option<F> {
    let f = f?;
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&f));
    Some(std::mem::transmute_copy(&f))
}

/// Records `name` with the parameters `params` builds, if `scope` is wanted now.
pub fn record(scope: Scope, result: i32, name: &str, params: impl FnOnce() -> Vec<VulkanParamT>) {
    if let Some(packed) = packed_if_wanted(scope, params) {
        push_call(scope, result, name, &packed);
    }
}

/// Records the command `name`, recorded into `command_buffer`, with the parameters
/// `params` makes, in its command buffer's order (see [`recorder::record_command`]).
pub fn record_command(
    command_buffer: vk::CommandBuffer,
    name: &str,
    params: impl FnOnce() -> Vec<VulkanParamT>,
) {
    if let Some(packed) = packed_if_wanted(Scope::Command, params) {
        push_command(command_buffer.as_raw(), name, &packed);
    }
}

/// The parameters `params` builds, packed, if a call of `scope` is recorded now.
fn packed_if_wanted(scope: Scope, params: impl FnOnce() -> Vec<VulkanParamT>) -> Option<Vec<u8>> {
    if !recorder::wants(scope) {
        return None;
    }
    recorder::built(|| generic_params::packed(&params()))
}

/// Records the generic call `name` with its `packed` parameters as a compact record:
/// no flatbuffers builder on the program's thread, and none of its tables for a reader
/// to verify.
#[inline(never)]
fn push_call(scope: Scope, result: i32, name: &str, packed: &[u8]) {
    recorder::record_direct(scope, result, Call::VulkanCall, &fields(name, packed));
}

/// [`push_call`] for a command recorded into `command_buffer`, in its order.
#[inline(never)]
fn push_command(command_buffer: u64, name: &str, packed: &[u8]) {
    recorder::record_command_direct(command_buffer, Call::VulkanCall, || fields(name, packed));
}

/// A `VulkanCall`'s fields in the schema's order: its name, no parameter tables, the
/// packed parameters.
fn fields<'a>(name: &'a str, packed: &'a [u8]) -> [DirectField<'a>; 3] {
    [
        DirectField::Str(name),
        DirectField::Absent,
        DirectField::Bytes(packed),
    ]
}

/// A scalar or handle.
pub fn value(v: u64) -> VulkanParamT {
    let mut p = VulkanParamT::default();
    p.value = v;
    p
}

/// `len` bytes at `ptr` (none when null).
///
/// # Safety
/// A non-null `ptr` must be readable for `len` bytes.
pub unsafe fn bytes_of(ptr: *const u8, len: usize) -> VulkanParamT {
    let mut p = value(ptr as u64);
    if !ptr.is_null() && len > 0 {
        p.bytes = Some(std::slice::from_raw_parts(ptr, len.min(MAX_PARAM_BYTES)).to_vec());
    }
    p
}

/// `count` elements of `T` at `ptr`, as bytes, with the bytes of each that `gaps`
/// names (`(offset, length)`: a structure's padding, which the program never writes)
/// stored as zeros: a trace holds what the program passed, not what its stack held
/// before.
///
/// # Safety
/// A non-null `ptr` must point to `count` elements.
pub unsafe fn elements<T>(ptr: *const T, count: usize, gaps: &[(u16, u16)]) -> VulkanParamT {
    gapped_bytes_of(ptr as *const u8, std::mem::size_of::<T>(), count, gaps)
}

/// [`bytes_of`] the `count` elements of `size` bytes at `ptr`, each one's `gaps` zeroed.
///
/// # Safety
/// As [`bytes_of`]'s, for `count * size` bytes.
unsafe fn gapped_bytes_of(
    ptr: *const u8,
    size: usize,
    count: usize,
    gaps: &[(u16, u16)],
) -> VulkanParamT {
    let mut p = bytes_of(ptr, count.saturating_mul(size));
    if let Some(bytes) = p.bytes.as_mut() {
        zero_gaps(bytes, size, gaps);
    }
    p
}

/// The gaps (padding) of the structure `s_type` names, as [`elements`] takes them.
pub fn gaps_of(s_type: vk::StructureType) -> &'static [(u16, u16)] {
    crate::generated::commands::struct_layout(s_type).map_or(&[], |(_, gaps)| gaps)
}

/// Zeros the `gaps` of each `size`-byte element of `bytes` (the last one may be cut
/// short).
fn zero_gaps(bytes: &mut [u8], size: usize, gaps: &[(u16, u16)]) {
    if gaps.is_empty() || size == 0 {
        return;
    }
    for element in bytes.chunks_mut(size) {
        for &(offset, len) in gaps {
            let start = usize::from(offset);
            let end = (start + usize::from(len)).min(element.len());
            if let Some(gap) = element.get_mut(start..end) {
                gap.fill(0);
            }
        }
    }
}

/// A terminated string, without its terminator.
///
/// # Safety
/// A non-null `ptr` must be a terminated string.
pub unsafe fn string(ptr: *const c_char) -> VulkanParamT {
    let mut p = value(ptr as u64);
    if !ptr.is_null() {
        p.bytes = Some(CStr::from_ptr(ptr).to_bytes().to_vec());
    }
    p
}

/// `count` terminated strings, each followed by a NUL.
///
/// # Safety
/// A non-null `ptr` must point to `count` strings or nulls.
pub unsafe fn strings(ptr: *const *const c_char, count: usize) -> VulkanParamT {
    let mut p = value(ptr as u64);
    if !ptr.is_null() {
        let mut bytes = Vec::new();
        for s in std::slice::from_raw_parts(ptr, count) {
            if !s.is_null() {
                bytes.extend_from_slice(CStr::from_ptr(*s).to_bytes());
            }
            bytes.push(0);
        }
        p.bytes = Some(bytes);
    }
    p
}

/// The longest `pNext` chain followed, against a chain that loops.
const MAX_CHAIN: usize = 64;

/// `count` structures of `T` at `ptr`, as bytes (their `gaps` zeroed, as [`elements`] does), with
/// each one's `pNext` chain (each link's padding zeroed too).
///
/// # Safety
/// A non-null `ptr` must point to `count` structures that begin with `sType` and
/// `pNext`, whose chains are valid.
pub unsafe fn chained<T>(ptr: *const T, count: usize, gaps: &[(u16, u16)]) -> VulkanParamT {
    let mut p = elements(ptr, count, gaps);
    if ptr.is_null() {
        return p;
    }
    let mut chain = Vec::new();
    for i in 0..count.min(MAX_CHAIN) {
        let base = &*(ptr.add(i) as *const vk::BaseInStructure);
        let mut next = base.p_next;
        let mut depth = 0;
        while !next.is_null() && depth < MAX_CHAIN {
            let s = &*next;
            let (size, gaps) =
                crate::generated::commands::struct_layout(s.s_type).unwrap_or((0, &[]));
            let mut link = gapped_bytes_of(next as *const u8, size, 1, gaps);
            link.value = ((i as u64) << 32) | u64::from(s.s_type.as_raw() as u32);
            if size > 0 {
                link.nested = crate::generated::commands::chain_nested(s.s_type, next.cast());
            }
            chain.push(link);
            next = s.p_next;
            depth += 1;
        }
    }
    if !chain.is_empty() {
        p.chain = Some(chain);
    }
    p
}

/// `param` (the `count` structures at `ptr`) with what each structure's pointer members
/// point to, read by `nested`: for each element in turn, its members in order.
///
/// # Safety
/// A non-null `ptr` must point to `count` valid structures.
pub unsafe fn with_nested<T>(
    mut param: VulkanParamT,
    ptr: *const T,
    count: usize,
    nested: unsafe fn(&T) -> Vec<VulkanParamT>,
) -> VulkanParamT {
    if ptr.is_null() || count == 0 {
        return param;
    }
    let mut all = Vec::new();
    for i in 0..count.min(MAX_NESTED_ELEMENTS) {
        all.extend(nested(&*ptr.add(i)));
    }
    param.nested = Some(all);
    param
}

/// What an embedded structure's pointer members point to, as one parameter.
pub fn group(nested: Vec<VulkanParamT>) -> VulkanParamT {
    let mut p = value(0);
    p.nested = Some(nested);
    p
}

/// The most array elements whose nested pointers are followed.
const MAX_NESTED_ELEMENTS: usize = 4096;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;

    /// A structure as a program's stack may hold it: every byte it does not set (its
    /// padding) left as it was.
    fn on_dirty_stack<T>(set: impl FnOnce(*mut T)) -> MaybeUninit<T> {
        let mut s = MaybeUninit::<T>::uninit();
        // SAFETY: the bytes of `s` are written whole, then its fields through `set`.
        unsafe { std::ptr::write_bytes(s.as_mut_ptr().cast::<u8>(), 0xa5, size_of::<T>()) };
        set(s.as_mut_ptr());
        s
    }

    #[test]
    fn a_structures_padding_is_recorded_as_zeros() {
        let info = on_dirty_stack::<vk::FenceCreateInfo>(|f| unsafe {
            std::ptr::addr_of_mut!((*f).s_type).write(vk::StructureType::FENCE_CREATE_INFO);
            std::ptr::addr_of_mut!((*f).p_next).write(std::ptr::null());
            std::ptr::addr_of_mut!((*f).flags).write(vk::FenceCreateFlags::SIGNALED);
        });
        let (size, gaps) =
            crate::generated::commands::struct_layout(vk::StructureType::FENCE_CREATE_INFO)
                .expect("a chained structure");
        assert_eq!((size, gaps), (24, &[(4, 4), (20, 4)][..]));
        let recorded = unsafe { chained(info.as_ptr(), 1, gaps) };
        let mut expected = [0u8; 24];
        expected[..4].copy_from_slice(&8u32.to_le_bytes());
        expected[16..20].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(recorded.bytes.as_deref(), Some(&expected[..]));
    }

    #[test]
    fn every_element_and_a_cut_last_one_have_their_gaps_zeroed() {
        let mut bytes = vec![0xffu8; 2 * 8 + 5];
        zero_gaps(&mut bytes, 8, &[(1, 2), (6, 2)]);
        let element = [0xff, 0, 0, 0xff, 0xff, 0xff, 0, 0];
        assert_eq!(&bytes[..8], element);
        assert_eq!(&bytes[8..16], element);
        assert_eq!(&bytes[16..], &element[..5]);
    }

    #[test]
    fn a_chained_links_padding_is_zeroed_too() {
        let link = on_dirty_stack::<vk::ExportFenceCreateInfo>(|e| unsafe {
            std::ptr::addr_of_mut!((*e).s_type).write(vk::StructureType::EXPORT_FENCE_CREATE_INFO);
            std::ptr::addr_of_mut!((*e).p_next).write(std::ptr::null());
            std::ptr::addr_of_mut!((*e).handle_types)
                .write(vk::ExternalFenceHandleTypeFlags::OPAQUE_FD);
        });
        let info = on_dirty_stack::<vk::FenceCreateInfo>(|f| unsafe {
            std::ptr::addr_of_mut!((*f).s_type).write(vk::StructureType::FENCE_CREATE_INFO);
            std::ptr::addr_of_mut!((*f).p_next).write(link.as_ptr().cast());
            std::ptr::addr_of_mut!((*f).flags).write(vk::FenceCreateFlags::empty());
        });
        let recorded = unsafe { chained(info.as_ptr(), 1, &[(4, 4), (20, 4)]) };
        let chain = recorded.chain.expect("the link is recorded");
        let bytes = chain[0].bytes.as_deref().expect("its bytes");
        assert_eq!(bytes.len(), 24);
        assert_eq!(&bytes[4..8], [0; 4], "after sType");
        assert_eq!(&bytes[20..24], [0; 4], "after handleTypes");
        assert_eq!(&bytes[16..20], 1u32.to_le_bytes());
    }
}
