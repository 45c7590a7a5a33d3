//! The device: its 3D class, and the push buffer that sets a channel up — every macro
//! uploaded through the MME RAM methods, the root descriptor table bound as constant
//! buffer 0 of every stage.

use std::sync::{Arc, Mutex, PoisonError};

use super::descriptors::BufferDescriptor;
use super::meta::MetaFragment;
use super::{Macro, Scratch};
use crate::chipset::classes::TURING_A;
use crate::chipset::Chipset;
use crate::class;
use crate::mme::{fermi, tu104, Arch, BuildError, LowerError};
use crate::push::{PushBuffer, SUBC_3D};

/// Why a device could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// A macro failed to build.
    #[error("macro {name}: {source}")]
    Build {
        /// The macro.
        name: &'static str,
        /// Why.
        source: BuildError,
    },
    /// A macro failed to lower.
    #[error("macro {name}: {source}")]
    Lower {
        /// The macro.
        name: &'static str,
        /// Why.
        source: LowerError,
    },
}

/// What a resource needs of the memory it is bound to (`VkMemoryRequirements`' size
/// and alignment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryNeeds {
    /// Bytes from the bind offset.
    pub size: u64,
    /// What the bind offset must be a multiple of.
    pub alignment: u64,
}

impl MemoryNeeds {
    /// Whether a resource with these needs may be bound at `offset` of an allocation of
    /// `allocation` bytes (vkBindBufferMemory's and vkBindImageMemory's valid usage:
    /// the offset a multiple of the alignment, the size within the allocation past it).
    pub fn fit_at(&self, offset: u64, allocation: u64) -> bool {
        offset % self.alignment.max(1) == 0
            && offset
                .checked_add(self.size)
                .is_some_and(|end| end <= allocation)
    }
}

/// A GPU as the driver sees it.
#[derive(Clone, Debug)]
pub struct Device {
    /// The chipset: its classes decide what each generation pushes.
    pub chipset: Chipset,
    /// Where the root descriptor table lives in GPU memory.
    pub root_table_addr: u64,
    /// The kinds of vk_meta pass drawn on the device, in the order of their first
    /// draw: vk_meta keeps its pipelines in the device, so a kind of pass draws with
    /// one fragment shader in every command buffer (clones of the device share them).
    meta_fragments: Arc<Mutex<Vec<MetaFragment>>>,
}

impl Device {
    /// The model's root table address.
    pub const ROOT_TABLE_ADDR: u64 = 0x1_0000_0000;
    /// The model's zero page, where pre-Turing binds empty vertex and index buffers.
    pub const ZERO_PAGE_ADDR: u64 = 0x1_0001_0000;

    /// A device of this chipset.
    pub fn for_chipset(chipset: Chipset) -> Device {
        Device {
            chipset,
            root_table_addr: Self::ROOT_TABLE_ADDR,
            meta_fragments: Arc::default(),
        }
    }

    /// The place of `kind` among the kinds of vk_meta pass drawn on the device, a new
    /// one taking the next place. Mirrors vk_meta_lookup_pipeline finding a pass's
    /// pipeline by its key in the device's cache (`vk_meta_device`), and the pipeline
    /// made at the first draw of its kind staying there.
    pub fn meta_fragment_place(&self, kind: &MetaFragment) -> usize {
        let mut kinds = self
            .meta_fragments
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match kinds.iter().position(|k| k == kind) {
            Some(place) => place,
            None => {
                kinds.push(*kind);
                kinds.len() - 1
            }
        }
    }

    /// A device whose MME is `arch`: the generation's representative GPU (a Turing
    /// TU102, or a Volta GV100 before Turing).
    pub fn for_arch(arch: Arch) -> Device {
        Device::for_chipset(Chipset::for_arch(arch))
    }

    /// The 3D class number (NVK's `cls_eng3d`).
    pub fn eng3d(&self) -> u16 {
        self.chipset.eng3d
    }

    /// The alignment of a constant buffer's address and size
    /// ([`Chipset::min_cbuf_alignment`]).
    pub fn min_cbuf_alignment(&self) -> u32 {
        self.chipset.min_cbuf_alignment()
    }

    /// The alignment NVK asks of a buffer's memory offset and size, from its
    /// `VkBufferUsageFlags` and `VkBufferCreateFlags` (nvk_get_buffer_alignment): 16
    /// bytes, a constant buffer's alignment for uniform buffers, a page for sparse and
    /// capture-replay buffers.
    pub fn buffer_alignment(&self, usage: u32, flags: u32) -> u64 {
        const UNIFORM_BUFFER: u32 = 0x10;
        const SPARSE_BINDING: u32 = 0x1;
        const DEVICE_ADDRESS_CAPTURE_REPLAY: u32 = 0x10;
        let mut alignment = 16;
        if usage & UNIFORM_BUFFER != 0 {
            alignment = alignment.max(u64::from(self.min_cbuf_alignment()));
        }
        if flags & (SPARSE_BINDING | DEVICE_ADDRESS_CAPTURE_REPLAY) != 0 {
            alignment = alignment.max(4096);
        }
        alignment
    }

    /// What a buffer of `size` bytes needs of the memory it is bound to: its size
    /// rounded up to its alignment, and that alignment
    /// (nvk_GetDeviceBufferMemoryRequirements).
    pub fn buffer_memory_needs(&self, size: u64, usage: u32, flags: u32) -> MemoryNeeds {
        let alignment = self.buffer_alignment(usage, flags);
        MemoryNeeds {
            size: size.div_ceil(alignment).saturating_mul(alignment),
            alignment,
        }
    }

    /// Whether uniform buffer descriptors are bindless constant buffers, from TURING_A
    /// on (nvk_use_bindless_cbuf).
    pub fn uses_bindless_cbuf(&self) -> bool {
        self.chipset.eng3d >= TURING_A
    }

    /// A uniform buffer's descriptor for `range` bytes at `addr`: both aligned to the
    /// constant-buffer alignment (the address down, the range up). Mirrors ubo_desc.
    pub fn uniform_buffer_descriptor(&self, addr: u64, range: u64) -> BufferDescriptor {
        let align = self.min_cbuf_alignment();
        let addr = addr / u64::from(align) * u64::from(align);
        let range = range.min(u64::from(u32::MAX - align)) as u32;
        let range = range.div_ceil(align) * align;
        if self.uses_bindless_cbuf() {
            BufferDescriptor::bindless_cbuf(addr, range)
        } else {
            BufferDescriptor::address(addr, range)
        }
    }

    /// A storage buffer's descriptor for `range` bytes at `addr`: the address aligned
    /// down to NVK's storage-buffer alignment (16 bytes), the range up to its bounds
    /// check's (4 bytes). Mirrors ssbo_desc.
    pub fn storage_buffer_descriptor(&self, addr: u64, range: u64) -> BufferDescriptor {
        const MIN_SSBO_ALIGNMENT: u64 = 16;
        const BOUNDS_CHECK_ALIGNMENT: u32 = 4;
        let addr = addr / MIN_SSBO_ALIGNMENT * MIN_SSBO_ALIGNMENT;
        let range = range.min(u64::from(u32::MAX - BOUNDS_CHECK_ALIGNMENT)) as u32;
        BufferDescriptor::address(
            addr,
            range.div_ceil(BOUNDS_CHECK_ALIGNMENT) * BOUNDS_CHECK_ALIGNMENT,
        )
    }

    /// The MME instruction set.
    pub fn arch(&self) -> Arch {
        self.chipset.arch()
    }

    /// The encoded words of `m` for this device.
    pub fn macro_words(&self, m: Macro) -> Result<Vec<u32>, DeviceError> {
        let program = m
            .build_on(self.chipset)
            .map_err(|source| DeviceError::Build {
                name: m.name(),
                source,
            })?;
        let lowered = match self.arch() {
            Arch::Turing => tu104::assemble(&program),
            Arch::Fermi => fermi::assemble(&program),
        };
        lowered.map_err(|source| DeviceError::Lower {
            name: m.name(),
            source,
        })
    }

    /// The channel set-up: macros uploaded, the root table bound, the view mask cleared.
    /// Made once a process for each chipset, root table address and macro set
    /// (building and assembling every macro is a replay's largest fixed cost on a short
    /// trace), then copied.
    pub fn init_push(&self) -> Result<PushBuffer, DeviceError> {
        type Made = Vec<((Chipset, u64, u16), PushBuffer)>;
        static MADE: Mutex<Made> = Mutex::new(Vec::new());
        let key = (
            self.chipset,
            self.root_table_addr,
            super::macros::lengthened(),
        );
        let made = |list: &Made| list.iter().find(|(k, _)| *k == key).map(|(_, p)| p.clone());
        if let Some(p) = made(&MADE.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(p);
        }
        let p = self.make_init_push()?;
        let mut list = MADE.lock().unwrap_or_else(|e| e.into_inner());
        if made(&list).is_none() {
            list.push((key, p.clone()));
        }
        Ok(p)
    }

    /// [`Device::init_push`], made afresh (as nvk_push_draw_state_init uploads every
    /// macro and sets the channel up).
    fn make_init_push(&self) -> Result<PushBuffer, DeviceError> {
        let mut p = PushBuffer::new();
        let mut start = 0u32;
        for m in Macro::ALL
            .into_iter()
            .filter(|m| m.available_on(self.arch()))
        {
            let words = self.macro_words(m)?;
            upload_macro(&mut p, m.id(), start, &words);
            start += words.len() as u32;
        }
        // CB0's address kept in scratch, then selected by SELECT_CB0, as NVK's
        // nvk_push_draw_state_init leaves it selected.
        p.inc(
            SUBC_3D,
            class::set_mme_shadow_scratch(Scratch::Cb0AddrHi as u16),
            &[
                (self.root_table_addr >> 32) as u32,
                self.root_table_addr as u32,
            ],
        );
        p.inc_once(SUBC_3D, class::call_mme_macro(Macro::SelectCb0.id()), &[0]);
        for group in 0..5 {
            // Valid, shader slot 0.
            p.mthd(SUBC_3D, class::BIND_GROUP_CONSTANT_BUFFER + 32 * group, 1);
        }
        p.mthd(
            SUBC_3D,
            class::set_mme_shadow_scratch(Scratch::ViewMask as u16),
            0,
        );
        for (slot, word) in [
            (Scratch::ZeroAddrHi, (Self::ZERO_PAGE_ADDR >> 32) as u32),
            (Scratch::ZeroAddrLo, Self::ZERO_PAGE_ADDR as u32),
            // nvk_mme_anti_alias_init: a valid value nothing sets, so that the
            // first SET_ANTI_ALIAS that sets anything runs.
            (Scratch::AntiAlias, 0xf),
        ] {
            p.mthd(SUBC_3D, class::set_mme_shadow_scratch(slot as u16), word);
        }
        Ok(p)
    }
}

/// Loads `words` as macro `id` at instruction-RAM word `start`.
pub fn upload_macro(p: &mut PushBuffer, id: u16, start: u32, words: &[u32]) {
    p.mthd(
        SUBC_3D,
        class::LOAD_MME_START_ADDRESS_RAM_POINTER,
        u32::from(id),
    );
    p.mthd(SUBC_3D, class::LOAD_MME_START_ADDRESS_RAM, start);
    p.mthd(SUBC_3D, class::LOAD_MME_INSTRUCTION_RAM_POINTER, start);
    p.non_inc(SUBC_3D, class::LOAD_MME_INSTRUCTION_RAM, words);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The init push kept from an earlier call is the one made afresh, for each chipset
    /// and root table address apart.
    #[test]
    fn the_init_push_kept_is_the_one_made_afresh_for_each_device() {
        let turing = Device::for_arch(Arch::Turing);
        let volta = Device::for_arch(Arch::Fermi);
        let moved = Device {
            root_table_addr: Device::ROOT_TABLE_ADDR + 0x1000,
            ..turing.clone()
        };
        for device in [&turing, &volta, &moved, &turing, &volta, &moved] {
            let kept = device.init_push().expect("macros build");
            let fresh = device.make_init_push().expect("macros build");
            assert_eq!(kept.words(), fresh.words(), "{:?}", device.chipset);
        }
        let words = |d: &Device| d.init_push().expect("macros build").words().to_vec();
        assert_ne!(words(&turing), words(&volta));
        assert_ne!(words(&turing), words(&moved));
    }

    /// A buffer's needs as nvk_get_buffer_alignment gives them: uniform buffers at a
    /// constant buffer's alignment (64 bytes from Turing, 256 before), sparse buffers
    /// at a page, the rest at 16 bytes; the size rounded up to the alignment.
    #[test]
    fn a_buffer_needs_its_usage_alignment_on_each_generation() {
        const UNIFORM: u32 = 0x10;
        const STORAGE: u32 = 0x20;
        const SPARSE: u32 = 0x1;
        let (turing, volta) = (
            Device::for_arch(Arch::Turing),
            Device::for_arch(Arch::Fermi),
        );
        let needs = |d: &Device, size, usage, flags| {
            let n = d.buffer_memory_needs(size, usage, flags);
            (n.size, n.alignment)
        };
        // What Zink on lavapipe sized an allocation to: fine on Turing, too small before.
        assert_eq!(
            needs(&turing, 2_250_048, UNIFORM | STORAGE, 0),
            (2_250_048, 64)
        );
        assert_eq!(
            needs(&volta, 2_250_048, UNIFORM | STORAGE, 0),
            (2_250_240, 256)
        );
        assert_eq!(needs(&volta, 100, STORAGE, 0), (112, 16));
        assert_eq!(needs(&turing, 100, STORAGE, SPARSE), (4096, 4096));
    }

    /// A bind fits where the offset is aligned and the size ends within the allocation,
    /// also for sizes from a hostile trace that would overflow the sum.
    #[test]
    fn a_bind_fits_aligned_and_within_its_allocation() {
        let needs = MemoryNeeds {
            size: 2_250_240,
            alignment: 256,
        };
        assert!(needs.fit_at(0, 2_250_240));
        assert!(needs.fit_at(256, 2_250_496));
        assert!(!needs.fit_at(0, 2_250_048), "overruns the allocation");
        assert!(!needs.fit_at(64, 4 << 20), "misaligned");
        let huge = MemoryNeeds {
            size: u64::MAX,
            alignment: 0,
        };
        assert!(!huge.fit_at(16, u64::MAX));
        assert!(huge.fit_at(0, u64::MAX));
    }
}
