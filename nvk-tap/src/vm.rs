//! The GPU virtual address space as the driver binds it: which buffer object backs
//! each address, and a read-only CPU view of each object, so that a push buffer named
//! by its GPU address can be read.

use std::collections::{BTreeMap, HashMap};

/// One `VM_BIND` mapping: `range` bytes of buffer object `handle` from `bo_offset`.
#[derive(Clone, Copy)]
struct Binding {
    range: u64,
    handle: u32,
    bo_offset: u64,
}

/// A buffer object mapped into this process for reading.
struct View {
    ptr: *const u8,
    size: usize,
}

/// The address space of one device file.
#[derive(Default)]
pub struct AddressSpace {
    /// Bindings by their first GPU address.
    bindings: BTreeMap<u64, Binding>,
    views: HashMap<u32, View>,
}

impl AddressSpace {
    /// Records a `VM_BIND` map operation.
    pub fn map(&mut self, addr: u64, range: u64, handle: u32, bo_offset: u64) {
        self.unmap(addr, range);
        self.bindings.insert(
            addr,
            Binding {
                range,
                handle,
                bo_offset,
            },
        );
    }

    /// Records a `VM_BIND` unmap operation: bindings starting inside the range go.
    pub fn unmap(&mut self, addr: u64, range: u64) {
        let gone: Vec<u64> = self
            .bindings
            .range(addr..addr.saturating_add(range.max(1)))
            .map(|(a, _)| *a)
            .collect();
        for a in gone {
            self.bindings.remove(&a);
        }
    }

    /// A buffer object's handle was closed: its view goes (the handle may be reused
    /// for another object).
    pub fn close(&mut self, handle: u32) {
        if let Some(view) = self.views.remove(&handle) {
            // SAFETY: the view was mapped by `view_of` with this size and is no longer
            // referenced.
            unsafe { libc::munmap(view.ptr as *mut libc::c_void, view.size) };
        }
        self.bindings.retain(|_, b| b.handle != handle);
    }

    /// Copies `len` bytes at GPU address `va` into words, or `None` when no binding
    /// covers them or the object cannot be mapped.
    pub fn read(&mut self, fd: i32, va: u64, len: u64) -> Option<Vec<u32>> {
        let (&start, &binding) = self.bindings.range(..=va).next_back()?;
        let within = va - start;
        if within.checked_add(len)? > binding.range {
            return None;
        }
        let view = self.view_of(fd, binding.handle)?;
        let offset = usize::try_from(binding.bo_offset.checked_add(within)?).ok()?;
        let len = usize::try_from(len).ok()?;
        if offset.checked_add(len)? > view.size {
            return None;
        }
        // SAFETY: `offset + len` lies inside the mapped view.
        let bytes = unsafe { std::slice::from_raw_parts(view.ptr.add(offset), len) };
        Some(
            bytes
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect(),
        )
    }

    /// The object's view, mapping it on first use through the device file (the shim's
    /// `mmap` serves the object's memory, shared with the driver's own mapping).
    fn view_of(&mut self, fd: i32, handle: u32) -> Option<&View> {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.views.entry(handle) {
            let mut info = crate::uapi::GemInfo {
                handle,
                ..Default::default()
            };
            // SAFETY: `info` is a `drm_nouveau_gem_info` the ioctl fills.
            let rc = unsafe {
                crate::next_ioctl(
                    fd,
                    crate::uapi::gem_info_request(),
                    &mut info as *mut _ as *mut libc::c_void,
                )
            };
            if rc != 0 {
                return None;
            }
            let size = usize::try_from(info.size).ok()?;
            let offset = libc::off_t::try_from(info.map_handle).ok()?;
            // SAFETY: a fresh read-only shared mapping of the object; nothing else
            // aliases it mutably through this pointer.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    size,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    fd,
                    offset,
                )
            };
            if ptr == libc::MAP_FAILED {
                return None;
            }
            slot.insert(View {
                ptr: ptr as *const u8,
                size,
            });
        }
        self.views.get(&handle)
    }
}

// SAFETY: the views are read-only mappings owned by the address space; the tap uses
// them under its lock only.
unsafe impl Send for AddressSpace {}
