//! The classes a real GPU's channel offers. Mesa's no-op kernel answers the class query
//! (`NVIF_IOCTL_V0_SCLASS`) from its own short table: none for Ada (NVK then sees a
//! Fermi and gives up), a GP100's copy engine on every Pascal, a GA100's on every
//! Ampere. The tap answers it as Linux's nouveau does for the chipset
//! (`NOUVEAU_CHIPSET`), from the driver model's table (`driver::chipset`), so that NVK
//! and the model drive the same classes.

use driver::chipset::{classes::FERMI_TWOD_A, Chipset};

use crate::uapi::{NvifIoctl, NvifOclass, NvifSclass, NVIF_IOCTL_V0_SCLASS};

/// The chipset the no-op kernel presents (`NOUVEAU_CHIPSET`, hex), if the table knows it.
pub fn presented_chipset() -> Option<Chipset> {
    let value = std::env::var("NOUVEAU_CHIPSET").ok()?;
    let digits = value.trim_start_matches("0x").trim_start_matches("0X");
    Chipset::find(u16::from_str_radix(digits, 16).ok()?)
}

/// Rewrites an answered class query with `chipset`'s classes: inline-to-memory, 2D,
/// 3D, compute and copy, the rest of the caller's list cleared.
///
/// # Safety
/// `arg` is a `DRM_NOUVEAU_NVIF` request the kernel side has answered: a header, then
/// (for a class query) the list header and `count` entries.
pub unsafe fn answer_sclass(arg: *mut u8, chipset: Chipset) {
    // SAFETY: the caller's contract; the header leads every NVIF request.
    let header = unsafe { &*(arg as *const NvifIoctl) };
    if header.kind != NVIF_IOCTL_V0_SCLASS {
        return;
    }
    // SAFETY: a class query's list header follows the request header.
    let list = unsafe { &mut *(arg.add(size_of::<NvifIoctl>()) as *mut NvifSclass) };
    let ours = [
        chipset.m2mf,
        FERMI_TWOD_A,
        chipset.eng3d,
        chipset.compute,
        chipset.copy,
    ];
    if list.count == 0 {
        // Asked how long the list is.
        list.count = ours.len() as u8;
        return;
    }
    let entries = unsafe {
        // SAFETY: `count` entries follow the list header, as the caller sized them.
        std::slice::from_raw_parts_mut(
            arg.add(size_of::<NvifIoctl>() + size_of::<NvifSclass>()) as *mut NvifOclass,
            usize::from(list.count),
        )
    };
    for (i, entry) in entries.iter_mut().enumerate() {
        *entry = NvifOclass {
            oclass: ours.get(i).map_or(0, |&c| i32::from(c)),
            minver: -1,
            maxver: -1,
        };
    }
}
