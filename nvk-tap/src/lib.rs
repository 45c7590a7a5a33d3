//! `libmacroscope_nvk_tap.so`: records the push buffers NVK submits, for
//! `macroscope verify`.
//!
//! Loaded with `LD_PRELOAD` in front of Mesa's no-op nouveau kernel
//! (`libnouveau_noop_drm_shim.so`), it sees every nouveau ioctl on its way to the shim:
//! `VM_BIND` tells it which buffer object backs each GPU address, and at every `EXEC` it
//! reads each push buffer the driver hands the kernel, through its own read-only view of
//! the object, and appends it to the file named by `MACROSCOPE_NVK_TAP`. It also gives
//! every channel a distinct id (the shim answers every `CHANNEL_ALLOC` with 0), so that
//! the driver's queue and its upload queue can be told apart. And it answers the
//! channel's class query as a real GPU of the chipset would ([`classes`]).
//!
//! The file: `MSNVKTAP`, a little-endian `u32` version (1), then records of
//! `u32 tag, u32 payload bytes, payload`:
//! - tag 1, a channel: `u32 channel`;
//! - tag 2, an `EXEC`: `u32 channel, u32 push count`, then per push
//!   `u64 va, u32 flags (bit 0: no prefetch; bit 1: not readable), u32 words, words`.
//!
//! Every record is written whole before the ioctl returns, so a run that dies keeps what
//! it submitted.

mod classes;
mod uapi;
mod vm;

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

use libc::{c_int, c_ulong, c_void};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"MSNVKTAP";
/// The file's version.
const VERSION: u32 = 1;
/// Record tags.
const TAG_CHANNEL: u32 = 1;
const TAG_EXEC: u32 = 2;
/// Push flags in the file.
const PUSH_NO_PREFETCH: u32 = 1;
const PUSH_UNREADABLE: u32 = 2;
/// The longest push buffer read (NVK's are at most a few MiB).
const MAX_PUSH_BYTES: u32 = 64 << 20;

type IoctlFn = unsafe extern "C" fn(c_int, c_ulong, *mut c_void) -> c_int;

/// The next `ioctl` in the chain: the shim's.
unsafe fn next_ioctl(fd: c_int, request: u64, arg: *mut c_void) -> c_int {
    static NEXT: OnceLock<usize> = OnceLock::new();
    let next = *NEXT.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name.
        unsafe { libc::dlsym(libc::RTLD_NEXT, c"ioctl".as_ptr()) as usize }
    });
    if next == 0 {
        *libc::__errno_location() = libc::ENOSYS;
        return -1;
    }
    // SAFETY: `next` is libc's (or the shim's) `ioctl`.
    let next: IoctlFn = unsafe { std::mem::transmute::<usize, IoctlFn>(next) };
    unsafe { next(fd, request, arg) }
}

/// What the tap keeps between ioctls.
struct Tap {
    out: Option<File>,
    spaces: HashMap<c_int, vm::AddressSpace>,
    next_channel: i32,
}

fn tap() -> &'static Mutex<Tap> {
    static TAP: OnceLock<Mutex<Tap>> = OnceLock::new();
    TAP.get_or_init(|| {
        let out = std::env::var_os("MACROSCOPE_NVK_TAP").and_then(|path| {
            let mut file = File::create(&path).ok()?;
            file.write_all(MAGIC).ok()?;
            file.write_all(&VERSION.to_le_bytes()).ok()?;
            Some(file)
        });
        Mutex::new(Tap {
            out,
            spaces: HashMap::new(),
            next_channel: 1,
        })
    })
}

impl Tap {
    fn record(&mut self, tag: u32, payload: &[u8]) {
        let Some(out) = &mut self.out else { return };
        let mut bytes = Vec::with_capacity(8 + payload.len());
        bytes.extend_from_slice(&tag.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        bytes.extend_from_slice(payload);
        if out.write_all(&bytes).is_err() {
            // A full disk ends the tap, not the program.
            self.out = None;
        }
    }

    /// Reads and records every push buffer of an `EXEC`.
    ///
    /// # Safety
    /// `exec.push_ptr` points at `exec.push_count` pushes, as the kernel requires.
    unsafe fn exec(&mut self, fd: c_int, exec: &uapi::Exec) {
        let pushes = if exec.push_count == 0 || exec.push_ptr == 0 {
            &[][..]
        } else {
            // SAFETY: the caller's contract.
            unsafe {
                std::slice::from_raw_parts(
                    exec.push_ptr as *const uapi::ExecPush,
                    exec.push_count as usize,
                )
            }
        };
        let mut payload = Vec::new();
        payload.extend_from_slice(&exec.channel.to_le_bytes());
        payload.extend_from_slice(&(pushes.len() as u32).to_le_bytes());
        let space = self.spaces.entry(fd).or_default();
        for push in pushes {
            let mut flags = 0;
            if push.flags & 1 != 0 {
                flags |= PUSH_NO_PREFETCH;
            }
            let words = (push.va_len <= MAX_PUSH_BYTES && push.va_len % 4 == 0)
                .then(|| space.read(fd, push.va, u64::from(push.va_len)))
                .flatten();
            if words.is_none() {
                flags |= PUSH_UNREADABLE;
            }
            let words = words.unwrap_or_default();
            payload.extend_from_slice(&push.va.to_le_bytes());
            payload.extend_from_slice(&flags.to_le_bytes());
            payload.extend_from_slice(&(words.len() as u32).to_le_bytes());
            for w in words {
                payload.extend_from_slice(&w.to_le_bytes());
            }
        }
        self.record(TAG_EXEC, &payload);
    }

    /// Records the mappings of a `VM_BIND`.
    ///
    /// # Safety
    /// `bind.op_ptr` points at `bind.op_count` operations.
    unsafe fn vm_bind(&mut self, fd: c_int, bind: &uapi::VmBind) {
        if bind.op_count == 0 || bind.op_ptr == 0 {
            return;
        }
        // SAFETY: the caller's contract.
        let ops = unsafe {
            std::slice::from_raw_parts(bind.op_ptr as *const uapi::VmBindOp, bind.op_count as usize)
        };
        let space = self.spaces.entry(fd).or_default();
        for op in ops {
            match op.op {
                uapi::VM_BIND_OP_MAP if op.handle != 0 => {
                    space.map(op.addr, op.range, op.handle, op.bo_offset)
                }
                uapi::VM_BIND_OP_MAP | uapi::VM_BIND_OP_UNMAP => space.unmap(op.addr, op.range),
                _ => {}
            }
        }
    }
}

/// The `ioctl` the driver calls: noted, then passed on to the shim.
///
/// # Safety
/// As `ioctl(2)`: `arg` is what `request` takes.
#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    let nr = uapi::drm_nr(request);
    if arg.is_null() || nr.is_none() {
        return unsafe { next_ioctl(fd, request, arg) };
    }
    let Ok(mut tap) = tap().lock() else {
        return unsafe { next_ioctl(fd, request, arg) };
    };
    match nr {
        // SAFETY (each arm): `arg` is the structure this request takes.
        Some(uapi::NR_EXEC) => unsafe { tap.exec(fd, &*(arg as *const uapi::Exec)) },
        Some(uapi::NR_VM_BIND) => unsafe { tap.vm_bind(fd, &*(arg as *const uapi::VmBind)) },
        Some(uapi::NR_GEM_CLOSE) => {
            let handle = unsafe { (*(arg as *const uapi::GemClose)).handle };
            if let Some(space) = tap.spaces.get_mut(&fd) {
                space.close(handle);
            }
        }
        _ => {}
    }
    let rc = unsafe { next_ioctl(fd, request, arg) };
    if rc == 0 && nr == Some(uapi::NR_NVIF) {
        if let Some(chipset) = classes::presented_chipset() {
            // SAFETY: an answered NVIF request.
            unsafe { classes::answer_sclass(arg as *mut u8, chipset) };
        }
    }
    if rc == 0 && nr == Some(uapi::NR_CHANNEL_ALLOC) {
        let alloc = unsafe { &mut *(arg as *mut uapi::ChannelAlloc) };
        if alloc.channel == 0 {
            alloc.channel = tap.next_channel;
            tap.next_channel += 1;
        }
        let channel = alloc.channel as u32;
        tap.record(TAG_CHANNEL, &channel.to_le_bytes());
    }
    rc
}
