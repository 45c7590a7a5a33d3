//! Dispatch tables: for each instance and device, the next layer's functions, found by
//! the loader's dispatch key (the first pointer inside every dispatchable handle, the
//! same for an instance and its physical devices, and for a device and its queues and
//! command buffers).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::ops::Deref;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// Its extension functions the layer hooks, by the name the program asked for.
    pub ext: HashMap<&'static CStr, vk::PFN_vkVoidFunction>,
    /// Host-mapped memory and its shadow copies.
    pub mapped: std::sync::Mutex<MappedMemory>,
    /// Whether the layer provides `VK_EXT_frame_boundary` (the driver lacks it).
    pub emulates_frame_boundary: bool,
    /// The next layer's functions for the generated device-level hooks, by slot.
    pub generated: Vec<vk::PFN_vkVoidFunction>,
    /// The memory types that are host-visible and coherent, a bit each (for the
    /// layer's own read-back buffers).
    pub host_memory_types: u32,
}

impl DeviceData {
    /// The next layer's extension function `name`, as type `F`.
    ///
    /// # Safety
    /// `F` must be the function pointer type of `name`.
    pub unsafe fn ext<F: Copy>(&self, name: &CStr) -> Option<F> {
        let f = (*self.ext.get(name)?)?;
        debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&f));
        Some(std::mem::transmute_copy(&f))
    }

    /// Loads the extension functions in `names` through `gdpa`.
    pub fn load_ext(
        gdpa: vk::PFN_vkGetDeviceProcAddr,
        device: vk::Device,
        names: &[&'static CStr],
    ) -> HashMap<&'static CStr, vk::PFN_vkVoidFunction> {
        names
            .iter()
            // SAFETY: `gdpa` is the next layer's for this device; `name` is terminated.
            .map(|name| (*name, unsafe { gdpa(device, name.as_ptr()) }))
            .filter(|(_, f)| f.is_some())
            .collect()
    }
}

static INSTANCES: RwLock<Option<HashMap<usize, Arc<InstanceData>>>> = RwLock::new(None);
static DEVICES: RwLock<Option<HashMap<usize, Arc<DeviceData>>>> = RwLock::new(None);
/// Changes whenever a device is added or removed: a thread's remembered device is good
/// while it holds the value it was remembered at.
/// Read by every call: kept off the lines of the counters that calls write.
static DEVICES_EPOCH: CacheLine<AtomicU64> = CacheLine(AtomicU64::new(0));

/// A device's data shared by one thread's calls: the `Rc` counts this thread's users
/// without the atomic that every thread's clones of the `Arc` would contend for.
#[allow(clippy::redundant_allocation)]
type ThreadShared = Rc<Arc<DeviceData>>;

/// The device a thread looked up last, with the epoch and key it was found at.
struct LastDevice {
    epoch: u64,
    key: usize,
    data: ThreadShared,
}

thread_local! {
    /// Each thread's last device lookup: a program records commands into one device's
    /// command buffers call after call, and finding them again in the shared map would
    /// touch the map's lock and the data's reference count, both shared by every
    /// recording thread, at every call.
    static LAST_DEVICE: RefCell<Option<LastDevice>> = const { RefCell::new(None) };
}

/// A device's data for the length of a call, from the calling thread's last lookup
/// (counted without atomics, so threads do not contend for it).
pub struct DeviceRef(ThreadShared);

impl Deref for DeviceRef {
    type Target = DeviceData;

    fn deref(&self) -> &DeviceData {
        &self.0
    }
}

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
    let mut map = DEVICES.write().unwrap_or_else(|e| e.into_inner());
    map.get_or_insert_with(HashMap::new)
        .insert(key, Arc::new(data));
    DEVICES_EPOCH.fetch_add(1, Ordering::Release);
}

/// Forgets the device under `key`. A thread that looked it up last keeps its data
/// until its next lookup or its end (the next lookup sees the epoch changed).
pub fn remove_device(key: usize) {
    let mut map = DEVICES.write().unwrap_or_else(|e| e.into_inner());
    map.get_or_insert_with(HashMap::new).remove(&key);
    DEVICES_EPOCH.fetch_add(1, Ordering::Release);
}

/// The device (or queue's, or command buffer's device) with dispatch key `key`.
pub fn device(key: usize) -> Option<Arc<DeviceData>> {
    let map = DEVICES.read().unwrap_or_else(|e| e.into_inner());
    map.as_ref()?.get(&key).cloned()
}

/// The device data of a dispatchable device-level handle: the calling thread's last
/// lookup when it is for the same device and no device was added or removed since, else
/// found in the shared map and remembered.
///
/// # Safety
/// `handle` must be a live device, queue or command buffer.
pub unsafe fn device_of<H: Handle>(handle: H) -> Option<DeviceRef> {
    let key = key(handle);
    // Read before the map: a device added or removed after this read changes the epoch,
    // so what is remembered below is looked up again next time.
    let epoch = DEVICES_EPOCH.load(Ordering::Acquire);
    let remembered = LAST_DEVICE.try_with(|last| {
        let last = last.try_borrow().ok()?;
        let last = last.as_ref()?;
        (last.epoch == epoch && last.key == key).then(|| DeviceRef(Rc::clone(&last.data)))
    });
    if let Ok(Some(found)) = remembered {
        return Some(found);
    }
    let data = Rc::new(device(key)?);
    // A thread that is ending has no slot left: it looks up every time.
    let _ = LAST_DEVICE.try_with(|last| {
        if let Ok(mut last) = last.try_borrow_mut() {
            *last = Some(LastDevice {
                epoch,
                key,
                data: Rc::clone(&data),
            });
        }
    });
    Some(DeviceRef(data))
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
