//! Dispatch tables: for each instance and device, the next layer's functions, found by
//! the loader's dispatch key (the first pointer inside every dispatchable handle, the
//! same for an instance and its physical devices, and for a device and its queues and
//! command buffers).

use foldhash::{HashMap, HashMapExt};
use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use ash::vk;
use ash::vk::Handle;

use crate::cache_line::CacheLine;
use crate::memory::MappedMemory;

/// The loader's dispatch key of a dispatchable handle.
///
/// # Safety
/// `handle` must be a live dispatchable Vulkan handle.
pub unsafe fn key<H: Handle>(handle: H) -> usize {
    *(handle.as_raw() as *const usize)
}

/// What the layer keeps per instance.
pub struct InstanceData {
    /// The instance.
    pub handle: vk::Instance,
    /// The next layer's `vkGetInstanceProcAddr`.
    pub next_gipa: vk::PFN_vkGetInstanceProcAddr,
    /// The next layer's instance functions.
    pub fns: ash::Instance,
    /// The API version the program asked for (1.0 when it named none): the layer calls
    /// nothing newer.
    pub api_version: u32,
    /// The next layer's functions for the generated instance-level hooks, by slot.
    pub generated: Vec<vk::PFN_vkVoidFunction>,
}

/// What the layer keeps per device.
pub struct DeviceData {
    /// The device.
    pub handle: vk::Device,
    /// The next layer's `vkGetDeviceProcAddr`.
    pub next_gdpa: vk::PFN_vkGetDeviceProcAddr,
    /// The next layer's core device functions.
    pub fns: ash::Device,
    /// The next layer's functions in [`crate::hooks::EXTENSION_FUNCTIONS`], by slot
    /// ([`crate::hooks::extension_slot`]; null where the device lacks one).
    pub ext: Vec<vk::PFN_vkVoidFunction>,
    /// Host-mapped memory and its shadow copies.
    pub mapped: std::sync::Mutex<MappedMemory>,
    /// Whether the layer provides `VK_EXT_frame_boundary` (the driver lacks it).
    pub emulates_frame_boundary: bool,
    /// The next layer's functions for the generated device-level hooks, by slot.
    pub generated: Vec<vk::PFN_vkVoidFunction>,
    /// The memory types that are host-visible and coherent, a bit each (for the
    /// layer's own read-back buffers).
    pub host_memory_types: u32,
    /// Of those, the cached ones: where a read-back buffer can have one, reading a
    /// frame back is not slowed by uncached, write-combined memory (NVIDIA lists such
    /// system memory first).
    pub cached_memory_types: u32,
}

impl DeviceData {
    /// The next layer's extension function in slot `slot` (see
    /// [`crate::hooks::extension_slot`]), as type `F`.
    ///
    /// # Safety
    /// `F` must be the function pointer type of the function in that slot.
    pub unsafe fn ext<F: Copy>(&self, slot: usize) -> Option<F> {
        let f = (*self.ext.get(slot)?)?;
        debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&f));
        Some(std::mem::transmute_copy(&f))
    }

    /// Loads the extension functions in `names` through `gdpa`, in their order.
    pub fn load_ext(
        gdpa: vk::PFN_vkGetDeviceProcAddr,
        device: vk::Device,
        names: &[&'static CStr],
    ) -> Vec<vk::PFN_vkVoidFunction> {
        names
            .iter()
            // SAFETY: `gdpa` is the next layer's for this device; `name` is terminated.
            .map(|name| unsafe { gdpa(device, name.as_ptr()) })
            .collect()
    }
}

static INSTANCES: RwLock<Option<HashMap<usize, Arc<InstanceData>>>> = RwLock::new(None);
/// Every live device's data, by dispatch key.
static DEVICES: RwLock<Option<HashMap<usize, &'static DeviceData>>> = RwLock::new(None);

/// The first devices, found by every call without a lock or a reference count: a
/// program records commands into one device's command buffers call after call, and a
/// shared map's lock and the data's reference count, written by every recording thread
/// at every call, would move between their cores. A device's data is never freed (see
/// [`remove_device`]), so a call may keep a plain reference to it.
static SLOTS: [CacheLine<DeviceSlot>; SLOTS_LEN] = [const {
    CacheLine(DeviceSlot {
        key: AtomicUsize::new(0),
        data: AtomicPtr::new(std::ptr::null_mut()),
    })
}; SLOTS_LEN];
/// Devices found without a lock; more live devices than this are found in the map.
const SLOTS_LEN: usize = 4;

/// One device found without a lock: its dispatch key (0 for none) and its data.
struct DeviceSlot {
    key: AtomicUsize,
    data: AtomicPtr<DeviceData>,
}

/// A device's data, for as long as the process lives.
pub type DeviceRef = &'static DeviceData;

/// Registers `data` under `key`.
pub fn add_instance(key: usize, data: InstanceData) {
    let mut map = INSTANCES.write().unwrap_or_else(|e| e.into_inner());
    map.get_or_insert_with(HashMap::new)
        .insert(key, Arc::new(data));
}

/// Forgets the instance under `key`; true when no instance is left.
pub fn remove_instance(key: usize) -> bool {
    let mut map = INSTANCES.write().unwrap_or_else(|e| e.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    map.remove(&key);
    map.is_empty()
}

/// The instance (or physical device's instance) with dispatch key `key`.
pub fn instance(key: usize) -> Option<Arc<InstanceData>> {
    let map = INSTANCES.read().unwrap_or_else(|e| e.into_inner());
    map.as_ref()?.get(&key).cloned()
}

/// Registers `data` under `key`.
pub fn add_device(key: usize, data: DeviceData) {
    let data: &'static DeviceData = Box::leak(Box::new(data));
    let mut map = DEVICES.write().unwrap_or_else(|e| e.into_inner());
    map.get_or_insert_with(HashMap::new).insert(key, data);
    // A free slot takes it: its data first, then its key, which readers look at first.
    if let Some(slot) = SLOTS.iter().find(|s| s.key.load(Ordering::Relaxed) == 0) {
        slot.data.store(
            data as *const DeviceData as *mut DeviceData,
            Ordering::Release,
        );
        slot.key.store(key, Ordering::Release);
    }
}

/// Forgets the device under `key`. Its data is not freed — a slot's reader may still
/// hold it, which a correct program never does, but a lookup must not depend on that —
/// only emptied of what grows (its mappings, which a correct program has unmapped
/// already): what stays is its function tables, a few KiB a device.
pub fn remove_device(key: usize) {
    let mut map = DEVICES.write().unwrap_or_else(|e| e.into_inner());
    let Some(data) = map.get_or_insert_with(HashMap::new).remove(&key) else {
        return;
    };
    if let Some(slot) = SLOTS.iter().find(|s| s.key.load(Ordering::Relaxed) == key) {
        slot.key.store(0, Ordering::Release);
    }
    let mut mapped = data.mapped.lock().unwrap_or_else(|e| e.into_inner());
    drop(std::mem::take(&mut *mapped));
}

/// The device (or queue's, or command buffer's device) with dispatch key `key`: in
/// line, the slots; past them, the map.
#[inline(always)]
pub fn device(key: usize) -> Option<DeviceRef> {
    slot_device(key).or_else(|| device_in_map(key))
}

/// The device under `key` in the shared map (a device no slot holds).
#[cold]
fn device_in_map(key: usize) -> Option<DeviceRef> {
    let map = DEVICES.read().unwrap_or_else(|e| e.into_inner());
    map.as_ref()?.get(&key).copied()
}

/// The device under `key` in a slot, if one holds it: its key read, then its data, then
/// its key again (a slot that changed devices in between is not believed).
#[inline(always)]
fn slot_device(key: usize) -> Option<DeviceRef> {
    SLOTS.iter().find_map(|slot| {
        if slot.key.load(Ordering::Acquire) != key {
            return None;
        }
        let data = slot.data.load(Ordering::Acquire);
        if slot.key.load(Ordering::Acquire) != key || data.is_null() {
            return None;
        }
        // SAFETY: a slot's data is a leaked `DeviceData` (see `add_device`), never freed.
        Some(unsafe { &*data })
    })
}

/// The device data of a dispatchable device-level handle: found in a slot without a
/// lock, or in the shared map.
///
/// # Safety
/// `handle` must be a live device, queue or command buffer.
#[inline(always)]
pub unsafe fn device_of<H: Handle>(handle: H) -> Option<DeviceRef> {
    device(key(handle))
}

/// The instance data of an instance or physical device.
///
/// # Safety
/// `handle` must be a live instance or physical device.
pub unsafe fn instance_of<H: Handle>(handle: H) -> Option<Arc<InstanceData>> {
    instance(key(handle))
}

/// A function pointer as the loader's generic type; `None` for null.
///
/// # Safety
/// `f` must be null or the address of a function.
pub unsafe fn void_fn(f: *const c_void) -> vk::PFN_vkVoidFunction {
    // A function pointer and a data pointer have one size on every platform Vulkan
    // runs on.
    std::mem::transmute::<*const c_void, vk::PFN_vkVoidFunction>(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    unsafe extern "system" fn no_function(
        _device: vk::Device,
        _name: *const std::ffi::c_char,
    ) -> vk::PFN_vkVoidFunction {
        None
    }

    /// A device's data with no functions behind it, told apart by its handle.
    fn device_data(handle: u64) -> DeviceData {
        let handle = vk::Device::from_raw(handle);
        DeviceData {
            handle,
            next_gdpa: no_function,
            // SAFETY: every function is loaded as null, and none is called.
            fns: unsafe { ash::Device::load_with(|_| std::ptr::null(), handle) },
            ext: Vec::new(),
            mapped: std::sync::Mutex::new(MappedMemory::default()),
            emulates_frame_boundary: false,
            generated: Vec::new(),
            host_memory_types: 0,
            cached_memory_types: 0,
        }
    }

    fn found(key: usize) -> Option<u64> {
        device(key).map(|d| d.handle.as_raw())
    }

    #[test]
    fn devices_are_found_by_key_in_the_slots_and_past_them() {
        // Keys no other test uses (the tables are the process's).
        let keys: Vec<usize> = (0..SLOTS_LEN + 3).map(|i| 0x7e57_0000 + 64 * i).collect();
        for (i, key) in keys.iter().enumerate() {
            add_device(*key, device_data(100 + i as u64));
        }
        for (i, key) in keys.iter().enumerate() {
            assert_eq!(found(*key), Some(100 + i as u64), "device {i}");
        }
        // A destroyed device is not found; a new device under its key is, in its slot
        // or in the map.
        for key in &keys {
            remove_device(*key);
            assert_eq!(found(*key), None);
        }
        add_device(keys[1], device_data(200));
        add_device(keys[0], device_data(201));
        assert_eq!((found(keys[0]), found(keys[1])), (Some(201), Some(200)));
        assert_eq!(found(keys[2]), None);
        remove_device(keys[0]);
        remove_device(keys[1]);
    }
}
