//! What a generated replay function works with: the replay's handles, the device's
//! functions, and storage for the call's rebuilt parameters.

use std::collections::HashMap;
use std::ffi::CStr;

use ash::vk;
use ash::vk::Handle;
use trace_format::generic_params::Param;

use super::patch::{Arena, PatchError, Remap, Target};

/// Why a recorded call could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The record holds another number of parameters than the command has.
    #[error("{found} parameters recorded, the command has {expected}")]
    Arity {
        /// Parameters in the record.
        found: usize,
        /// Parameters of the command.
        expected: usize,
    },
    /// The replay device does not have the command.
    #[error("the replay device has no `{0}` (is its extension enabled?)")]
    NoFunction(String),
    /// A handle parameter names an object the replay did not create.
    #[error("{ty:?} {id:#x} was never created in the replay")]
    UnknownHandle {
        /// Its type.
        ty: vk::ObjectType,
        /// The recorded id.
        id: u64,
    },
    /// A parameter could not be rebuilt.
    #[error(transparent)]
    Patch(#[from] PatchError),
    /// The call failed on the replay device where it had succeeded in the capture.
    #[error("failed on the replay device: {0}")]
    Failed(vk::Result),
}

impl CallError {
    /// Whether the record is at fault (rather than the device).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            CallError::Arity { .. } | CallError::UnknownHandle { .. } | CallError::Patch(_)
        )
    }
}

/// Recorded ids of every object the replay created, with the replay's handles.
#[derive(Default)]
pub struct Handles {
    map: HashMap<(i32, u64), u64>,
    /// While set, every insertion is also noted here (for loops over frames).
    pub log: Option<Vec<(vk::ObjectType, u64, u64)>>,
}

impl Handles {
    /// Records that recorded `id` of type `ty` is `handle` in the replay.
    pub fn insert(&mut self, ty: vk::ObjectType, id: u64, handle: u64) {
        if id != 0 {
            self.map.insert((ty.as_raw(), id), handle);
            if let Some(log) = &mut self.log {
                log.push((ty, id, handle));
            }
        }
    }

    /// Forgets recorded `id`.
    pub fn remove(&mut self, ty: vk::ObjectType, id: u64) -> Option<u64> {
        self.map.remove(&(ty.as_raw(), id))
    }

    /// The replay's handle for recorded `id`, 0 for 0.
    pub fn get(&self, ty: vk::ObjectType, id: u64) -> Option<u64> {
        if id == 0 {
            return Some(0);
        }
        self.map.get(&(ty.as_raw(), id)).copied()
    }

    /// The replay's handle of type `H` for recorded `id`.
    pub fn typed<H: Handle>(&self, id: u64) -> Result<H, CallError> {
        self.get(H::TYPE, id)
            .map(H::from_raw)
            .ok_or(CallError::UnknownHandle { ty: H::TYPE, id })
    }
}

impl Remap for Handles {
    fn remap(&self, ty: vk::ObjectType, id: u64) -> Option<u64> {
        self.get(ty, id)
    }
}

/// Where the replay's Vulkan functions come from.
pub struct Functions {
    /// `vkGetInstanceProcAddr`.
    pub get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    /// `vkGetDeviceProcAddr`.
    pub get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    /// The replay's instance.
    pub instance: vk::Instance,
    /// The replay's device (null before it is created).
    pub device: vk::Device,
    cache: HashMap<&'static CStr, vk::PFN_vkVoidFunction>,
}

impl Functions {
    /// Functions of `instance` (and later of a device).
    pub fn new(entry: &ash::Entry, instance: &ash::Instance) -> Self {
        let get_instance_proc_addr = entry.static_fn().get_instance_proc_addr;
        let get_device_proc_addr = instance.fp_v1_0().get_device_proc_addr;
        let instance = instance.handle();
        Functions {
            get_instance_proc_addr,
            get_device_proc_addr,
            instance,
            device: vk::Device::null(),
            cache: HashMap::new(),
        }
    }

    fn lookup(
        &mut self,
        name: &'static CStr,
        device_level: bool,
    ) -> Result<vk::PFN_vkVoidFunction, CallError> {
        if let Some(f) = self.cache.get(name) {
            return Ok(*f);
        }
        // SAFETY: the instance and device are live while the replay runs.
        let f = unsafe {
            if device_level && self.device != vk::Device::null() {
                (self.get_device_proc_addr)(self.device, name.as_ptr())
            } else {
                (self.get_instance_proc_addr)(self.instance, name.as_ptr())
            }
        };
        if f.is_none() {
            return Err(CallError::NoFunction(name.to_string_lossy().into_owned()));
        }
        self.cache.insert(name, f);
        Ok(f)
    }
}

/// One call's context: the generated replay functions take it.
pub struct CallContext<'a> {
    /// The replay's objects.
    pub handles: &'a mut Handles,
    /// The replay's functions.
    pub functions: &'a mut Functions,
    /// The call's rebuilt parameters.
    pub arena: &'a mut Arena,
    /// What the call returned in the capture.
    pub recorded_result: i32,
}

impl CallContext<'_> {
    /// Checks the record's parameter count.
    pub fn arity(&self, p: &[Param<'_>], expected: usize) -> Result<(), CallError> {
        if p.len() == expected {
            Ok(())
        } else {
            Err(CallError::Arity {
                found: p.len(),
                expected,
            })
        }
    }

    /// An instance-level function, as type `F`.
    ///
    /// # Safety
    /// `F` must be `name`'s function type.
    pub unsafe fn instance_fn<F: Copy>(&mut self, name: &'static CStr) -> Result<F, CallError> {
        self.functions.lookup(name, false).map(|f| cast(f))
    }

    /// A device-level function, as type `F`.
    ///
    /// # Safety
    /// `F` must be `name`'s function type.
    pub unsafe fn device_fn<F: Copy>(&mut self, name: &'static CStr) -> Result<F, CallError> {
        self.functions.lookup(name, true).map(|f| cast(f))
    }

    /// The replay's handle for a handle parameter.
    pub fn handle(&self, ty: vk::ObjectType, id: u64) -> Result<u64, CallError> {
        self.handles
            .get(ty, id)
            .ok_or(CallError::UnknownHandle { ty, id })
    }

    /// An input parameter rebuilt (null when the program passed null).
    pub fn input(
        &mut self,
        p: Param<'_>,
        target: Target,
        name: &'static str,
    ) -> Result<*mut u8, CallError> {
        Ok(self.arena.build(p, target, false, &*self.handles, name)?)
    }

    /// An input parameter whose structures' pointers the capture followed.
    pub fn input_nested(
        &mut self,
        p: Param<'_>,
        target: Target,
        name: &'static str,
    ) -> Result<*mut u8, CallError> {
        Ok(self.arena.build(p, target, true, &*self.handles, name)?)
    }

    /// A structure passed by value, rebuilt.
    pub fn by_value<T: Copy>(
        &mut self,
        p: Param<'_>,
        layout: &'static super::patch::Layout,
        name: &'static str,
    ) -> Result<T, CallError> {
        let len = p.bytes().map_or(0, |b| b.len());
        if len != std::mem::size_of::<T>() || len != layout.size {
            return Err(PatchError::Size {
                param: name,
                len,
                what: layout.name,
                size: layout.size,
            }
            .into());
        }
        let ptr = self
            .arena
            .build(p, Target::Structs(layout), false, &*self.handles, name)?;
        // SAFETY: `ptr` holds `size_of::<T>()` bytes laid out as `T`.
        Ok(unsafe { (ptr as *const T).read_unaligned() })
    }

    /// Room for an output parameter, of the recorded size and starting from the recorded
    /// contents (so structures carry their `sType` and chains); with where it is.
    pub fn output(
        &mut self,
        p: Param<'_>,
        target: Target,
        name: &'static str,
    ) -> Result<(*mut u8, usize), CallError> {
        let len = p.bytes().map_or(0, |b| b.len());
        let ptr = match target {
            Target::Handles(_) => {
                if p.value() == 0 {
                    std::ptr::null_mut()
                } else {
                    self.arena.zeroed(len.max(8))
                }
            }
            _ => self.arena.build(p, target, false, &*self.handles, name)?,
        };
        Ok((ptr, ptr as usize))
    }

    /// Maps the handles a call created: the recorded ids in `p` to those at `room`.
    pub fn created(
        &mut self,
        ty: vk::ObjectType,
        p: Param<'_>,
        room: usize,
    ) -> Result<(), CallError> {
        let Some(ids) = p.bytes() else {
            return Ok(());
        };
        if room == 0 {
            return Ok(());
        }
        for (i, id) in ids.chunks_exact(8).enumerate() {
            let id = u64::from_le_bytes(id.try_into().unwrap_or_default());
            // SAFETY: `output` made room for as many handles as were recorded.
            let handle = unsafe { (room as *const u64).add(i).read_unaligned() };
            self.handles.insert(ty, id, handle);
        }
        Ok(())
    }

    /// Checks a call's result against the capture's: a failure where the capture
    /// succeeded stops the replay.
    pub fn result(&self, raw: i32) -> Result<(), CallError> {
        if raw < 0 && self.recorded_result >= 0 {
            Err(CallError::Failed(vk::Result::from_raw(raw)))
        } else {
            Ok(())
        }
    }
}

/// # Safety
/// `F` must be a function pointer type of the right signature.
unsafe fn cast<F: Copy>(f: vk::PFN_vkVoidFunction) -> F {
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of_val(&f));
    std::mem::transmute_copy(&f)
}
