//! Reading the program's arguments safely: null pointers and zero counts are empty.

use std::ffi::{c_char, CStr};

use ash::vk::Handle;

/// `len` elements at `ptr`, or none when `ptr` is null.
///
/// # Safety
/// A non-null `ptr` must point to `len` valid elements, as the Vulkan call requires.
pub unsafe fn slice<'a, T>(ptr: *const T, len: u32) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(ptr, len as usize)
    }
}

/// Non-dispatchable handles as their raw values, without copying them (ash's handles
/// are transparent `u64`s).
///
/// # Safety
/// As [`slice`].
pub unsafe fn raw_handles<'a, H: Handle + Copy>(ptr: *const H, len: u32) -> &'a [u64] {
    const { assert!(std::mem::size_of::<H>() == std::mem::size_of::<u64>()) };
    slice(ptr.cast::<u64>(), len)
}

/// A C string, or `None` when null.
///
/// # Safety
/// A non-null `ptr` must be a terminated string.
pub unsafe fn string(ptr: *const c_char) -> Option<String> {
    (!ptr.is_null()).then(|| CStr::from_ptr(ptr).to_string_lossy().into_owned())
}

/// C strings, skipping null entries.
///
/// # Safety
/// As [`slice`] and [`string`].
pub unsafe fn strings(ptr: *const *const c_char, len: u32) -> Vec<String> {
    slice(ptr, len).iter().filter_map(|s| string(*s)).collect()
}

/// Handles as the trace stores them.
///
/// # Safety
/// As [`slice`].
pub unsafe fn handles<H: Handle + Copy>(ptr: *const H, len: u32) -> Vec<u64> {
    slice(ptr, len).iter().map(|h| h.as_raw()).collect()
}

/// The first structure of type `s_type` in a `pNext` chain.
///
/// # Safety
/// `chain` must be a valid `pNext` chain and `T` the structure `s_type` names.
pub unsafe fn find_in_chain<'a, T>(
    mut chain: *const std::ffi::c_void,
    s_type: ash::vk::StructureType,
) -> Option<&'a T> {
    while !chain.is_null() {
        let base = &*(chain as *const ash::vk::BaseInStructure);
        if base.s_type == s_type {
            return Some(&*(chain as *const T));
        }
        chain = base.p_next as *const std::ffi::c_void;
    }
    None
}
