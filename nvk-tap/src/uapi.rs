//! The parts of the nouveau kernel interface (`nouveau_drm.h`) the tap reads: ioctl
//! numbers and the layouts of the structures they take.

/// `DRM_COMMAND_BASE`: driver ioctls are numbered from here.
const COMMAND_BASE: u64 = 0x40;

/// The ioctl type of every DRM ioctl (`DRM_IOCTL_BASE`).
const DRM_TYPE: u64 = b'd' as u64;

/// `DRM_IOCTL_GEM_CLOSE`'s number: a buffer object's handle is released.
pub const NR_GEM_CLOSE: u64 = 0x09;
/// `DRM_NOUVEAU_CHANNEL_ALLOC`.
pub const NR_CHANNEL_ALLOC: u64 = COMMAND_BASE + 0x02;
/// `DRM_NOUVEAU_VM_BIND`.
pub const NR_VM_BIND: u64 = COMMAND_BASE + 0x11;
/// `DRM_NOUVEAU_EXEC`.
pub const NR_EXEC: u64 = COMMAND_BASE + 0x12;
/// `DRM_NOUVEAU_GEM_INFO`.
pub const NR_GEM_INFO: u64 = COMMAND_BASE + 0x44;

/// The DRM ioctl number `request` carries, or `None` for another driver's ioctl.
pub fn drm_nr(request: u64) -> Option<u64> {
    ((request >> 8) & 0xff == DRM_TYPE).then_some(request & 0xff)
}

/// `DRM_IOWR(DRM_COMMAND_BASE + DRM_NOUVEAU_GEM_INFO, struct drm_nouveau_gem_info)`.
pub fn gem_info_request() -> u64 {
    const IOC_READ_WRITE: u64 = 3;
    (IOC_READ_WRITE << 30)
        | ((std::mem::size_of::<GemInfo>() as u64) << 16)
        | (DRM_TYPE << 8)
        | NR_GEM_INFO
}

/// `struct drm_nouveau_gem_info`.
#[repr(C)]
#[derive(Default)]
pub struct GemInfo {
    pub handle: u32,
    pub domain: u32,
    pub size: u64,
    pub offset: u64,
    pub map_handle: u64,
    pub tile_mode: u32,
    pub tile_flags: u32,
}

/// `struct drm_gem_close`.
#[repr(C)]
pub struct GemClose {
    pub handle: u32,
    pub pad: u32,
}

/// `struct drm_nouveau_channel_alloc`, up to the channel id.
#[repr(C)]
pub struct ChannelAlloc {
    pub fb_ctxdma_handle: u32,
    pub tt_ctxdma_handle: u32,
    pub channel: i32,
}

/// `struct drm_nouveau_vm_bind`.
#[repr(C)]
pub struct VmBind {
    pub op_count: u32,
    pub flags: u32,
    pub wait_count: u32,
    pub sig_count: u32,
    pub wait_ptr: u64,
    pub sig_ptr: u64,
    pub op_ptr: u64,
}

/// `DRM_NOUVEAU_VM_BIND_OP_MAP`.
pub const VM_BIND_OP_MAP: u32 = 0;
/// `DRM_NOUVEAU_VM_BIND_OP_UNMAP`.
pub const VM_BIND_OP_UNMAP: u32 = 1;

/// `struct drm_nouveau_vm_bind_op`.
#[repr(C)]
pub struct VmBindOp {
    pub op: u32,
    pub flags: u32,
    pub handle: u32,
    pub pad: u32,
    pub addr: u64,
    pub bo_offset: u64,
    pub range: u64,
}

/// `struct drm_nouveau_exec`.
#[repr(C)]
pub struct Exec {
    pub channel: u32,
    pub push_count: u32,
    pub wait_count: u32,
    pub sig_count: u32,
    pub wait_ptr: u64,
    pub sig_ptr: u64,
    pub push_ptr: u64,
}

/// `struct drm_nouveau_exec_push`.
#[repr(C)]
pub struct ExecPush {
    pub va: u64,
    pub va_len: u32,
    pub flags: u32,
}

/// `DRM_NOUVEAU_NVIF`: the kernel's object interface.
pub const NR_NVIF: u64 = COMMAND_BASE + 0x07;
/// `NVIF_IOCTL_V0_SCLASS`: which classes a channel offers.
pub const NVIF_IOCTL_V0_SCLASS: u8 = 0x01;

/// `struct nvif_ioctl_v0`, the header of every `DRM_NOUVEAU_NVIF` request.
#[repr(C)]
pub struct NvifIoctl {
    pub version: u8,
    pub kind: u8,
    pub pad02: [u8; 4],
    pub owner: u8,
    pub route: u8,
    pub token: u64,
    pub object: u64,
}

/// `struct nvif_ioctl_sclass_v0`, after the header: the list's length, then its
/// entries.
#[repr(C)]
pub struct NvifSclass {
    pub version: u8,
    pub count: u8,
    pub pad02: [u8; 6],
}

/// `struct nvif_ioctl_sclass_oclass_v0`: one class.
#[repr(C)]
pub struct NvifOclass {
    pub oclass: i32,
    pub minver: i16,
    pub maxver: i16,
}
