//! Zeroed bytes on the host that cost memory only where they are written: anonymous
//! pages the kernel fills with zeros when first touched. A captured allocation holds
//! its contents here while no resource on the replay device is bound in it (an image
//! the replay device lays out otherwise lives in memory of its own), so a trace's
//! allocations are not made twice on the device.

/// `len` zeroed bytes in an anonymous mapping of their own.
pub struct HostBytes {
    ptr: *mut u8,
    len: usize,
}

impl HostBytes {
    /// Maps `len` zeroed bytes (at least one page), reserving no swap for them; `None`
    /// when the address space has no room.
    pub fn zeroed(len: u64) -> Option<HostBytes> {
        let len = usize::try_from(len).ok()?.max(1);
        // SAFETY: a fresh private anonymous mapping, aliased by nothing.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (ptr != libc::MAP_FAILED).then_some(HostBytes {
            ptr: ptr.cast(),
            len,
        })
    }

    /// Where the bytes start; `len` bytes are readable and writable from there.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for HostBytes {
    fn drop(&mut self) {
        // SAFETY: the mapping `zeroed` made, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_start_as_zeros_and_keep_what_is_written() {
        let bytes = HostBytes::zeroed(3 * 4096 + 5).unwrap();
        let p = bytes.as_mut_ptr();
        // SAFETY: within the mapping's length.
        unsafe {
            assert_eq!(*p.add(3 * 4096 + 4), 0);
            *p.add(4097) = 7;
            assert_eq!(*p.add(4097), 7);
            assert_eq!(*p.add(4096), 0);
        }
    }

    #[test]
    fn a_mapping_past_the_address_space_is_refused() {
        assert!(HostBytes::zeroed(u64::MAX / 2).is_none());
    }
}
