//! The `device` back end: a trace replayed on a real Vulkan device through ash and the
//! system's loader.
//!
//! Every object the trace made is made again on the replay device, its recorded id
//! mapped to the new handle (`call::Handles`); memory is allocated in a type of the
//! same kind (`memory`), captured contents written into it as the trace gives them;
//! command buffers are recorded and submitted in trace order. Records of typed calls
//! are replayed here by hand; generic records (`VulkanCall`) by the functions generated
//! from the registry (`generated::device_calls`), which rebuild each parameter with the
//! replay's handles (`patch`).
//!
//! Submits run one at a time: each waits for the queue to finish, so the semaphores a
//! program chains its submits with are not needed (timeline semaphore values are not
//! in the trace) and are left out. Swapchains are replaced by offscreen images
//! (`frames`); a present reads the presented image back when frames are dumped or
//! checked.

pub mod call;
mod frames;
mod host_bytes;
mod memory;
pub mod patch;
mod pipelines;
mod precheck;
pub(crate) mod setup;
pub(crate) mod templates;
mod timing;

use looping::is_lifetime_record;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::{Call, Record};
use trace_format::{names, ReadOptions, TraceReader};

use call::{CallError, Functions, Handles};
use patch::Arena;

pub use frames::FrameImage;
pub use memory::MemoryUse;
pub use timing::DrawTime;

/// How to replay on a device.
#[derive(Clone, Debug, Default)]
pub struct DeviceOptions {
    /// The physical device, by its place in the loader's list (default the first).
    pub gpu: Option<usize>,
    /// Where to write each presented frame as a PNG.
    pub dump_frames: Option<PathBuf>,
    /// Whether to read every presented frame back and checksum it.
    pub read_frames: bool,
    /// Whether to time every draw on the GPU with timestamp queries.
    pub gpu_timing: bool,
    /// The frames to replay (inclusive; the rest of the trace after them is left out).
    pub frames: Option<(u64, u64)>,
    /// How many times to replay those frames (the whole trace's frames without
    /// `frames`): the first pass makes the objects and warms caches, the others only
    /// record, submit and present again. 0 and 1 replay once.
    pub loops: u32,
    /// Whether device extensions and features the trace enabled that the device lacks
    /// are left out (with a note) rather than refused; a call that needs one then
    /// fails where it is made.
    pub switch_off_missing: bool,
}

/// Why a device replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// The trace could not be read.
    #[error(transparent)]
    Format(#[from] trace_format::Error),
    /// The Vulkan loader or the device could not be set up.
    #[error("{0}")]
    Setup(String),
    /// The replay device lacks what the trace needs.
    #[error("{}the replay device has no {what}", seq.map(|s| format!("call #{s}: ")).unwrap_or_default())]
    Missing {
        /// What.
        what: String,
        /// The call that needed it.
        seq: Option<u64>,
    },
    /// A call failed in a pass over looped frames after the first: those frames use
    /// objects they destroy (or make) themselves.
    #[error("frames {first}-{last} do not replay again (pass {pass}): {source}; loop over frames whose objects live through them")]
    Loop {
        /// The pass.
        pass: u32,
        /// The first looped frame.
        first: u64,
        /// The last.
        last: u64,
        /// What failed.
        source: Box<DeviceError>,
    },
    /// A record is malformed: a short or missing parameter, a handle never created.
    #[error("call #{seq} ({command}): {reason}")]
    BadRecord {
        /// Its sequence number.
        seq: u64,
        /// The command.
        command: String,
        /// What is wrong.
        reason: String,
    },
    /// A call failed on the device, or the replay cannot make it.
    #[error("call #{seq} ({command}): {reason}")]
    Call {
        /// Its sequence number.
        seq: u64,
        /// The command.
        command: String,
        /// Why.
        reason: String,
    },
}

impl DeviceError {
    fn call(seq: u64, command: &str, e: impl std::fmt::Display) -> Self {
        DeviceError::Call {
            seq,
            command: command.to_string(),
            reason: e.to_string(),
        }
    }

    fn bad(seq: u64, command: &str, e: impl std::fmt::Display) -> Self {
        DeviceError::BadRecord {
            seq,
            command: command.to_string(),
            reason: e.to_string(),
        }
    }

    /// A replay function's error: the record's fault, or the device's.
    fn of_call(seq: u64, command: &str, e: CallError) -> Self {
        if e.is_bad_input() {
            DeviceError::bad(seq, command, e)
        } else {
            DeviceError::call(seq, command, e)
        }
    }

    /// Whether the trace is at fault (a malformed record), or lacks what the device
    /// has not (a missing extension, feature or memory type): exit code 2.
    pub fn is_bad_input(&self) -> bool {
        match self {
            DeviceError::Format(e) => e.is_bad_input(),
            DeviceError::BadRecord { .. } | DeviceError::Missing { .. } => true,
            DeviceError::Loop { source, .. } => source.is_bad_input(),
            DeviceError::Setup(_) | DeviceError::Call { .. } => false,
        }
    }
}

/// One presented frame, as replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The frame number (the trace's frame boundaries count from 0).
    pub frame: u64,
    /// The present's sequence number.
    pub seq: u64,
    /// The pass over looped frames that presented it (0 without `loops`).
    pub pass: u32,
    /// The swapchain presented to (its recorded id).
    pub swapchain: u64,
    /// CRC-32 of the presented image's texels.
    pub checksum: u32,
    /// What the capture layer recorded for it, where it did.
    pub captured: Option<u32>,
}

impl Frame {
    /// Whether the replay drew what the program did (`None` without a recorded checksum).
    pub fn matches(&self) -> Option<bool> {
        self.captured.map(|c| c == self.checksum)
    }
}

/// What a device replay did.
#[derive(Clone, Debug, Default)]
pub struct DeviceSummary {
    /// The replay device's name.
    pub device: String,
    /// Records replayed by calling the device.
    pub calls: u64,
    /// Generic records answered without a call (queries of the capture device,
    /// surfaces, waits a serialized replay does not need), by command.
    pub skipped: BTreeMap<String, u64>,
    /// Queue submits.
    pub submits: u64,
    /// Frames presented and read back.
    pub frames: Vec<Frame>,
    /// Frame checksums the trace holds.
    pub captured_checksums: u64,
    /// With `gpu_timing`: every draw execution's GPU time, in submit order.
    pub gpu_times: Vec<DrawTime>,
    /// Handles inside structures that named objects the replay never made (replaced
    /// by null; programs leave ignored members stale).
    pub unknown_handles: u64,
    /// What the trace's memory came to on the device.
    pub memory: MemoryUse,
    /// Devices the trace made while one that asked for the same lived, replayed as
    /// that one (their objects, queue and memory on it).
    pub devices_made_again: u64,
    /// Wall time.
    pub wall: Duration,
}

/// The replay's Vulkan objects and state.
struct Replay {
    entry: ash::Entry,
    instance: Option<ash::Instance>,
    physical: vk::PhysicalDevice,
    family: u32,
    device: Option<ash::Device>,
    queue: vk::Queue,
    functions: Option<Functions>,
    handles: Handles,
    arena: Arena,
    memory: Option<memory::Memory>,
    captured_memory_properties: Option<Vec<u8>>,
    swapchains: frames::Swapchains,
    templates: templates::Templates,
    timing: Option<timing::Timing>,
    render_pass_views: std::collections::HashMap<u64, Vec<u32>>,
    subpasses: std::collections::HashMap<u64, (Vec<u32>, usize)>,
    readback: Option<frames::Readback>,
    options: DeviceOptions,
    summary: DeviceSummary,
    frame: u64,
    /// What the look over the whole trace before the replay found.
    prescan: precheck::Prescan,
    /// The pass over the looped frames (0 for the first).
    pass: u32,
    /// Set once looped frames begin: objects the program destroys are kept until the
    /// end, since the next pass uses them again.
    keep_objects: bool,
    /// In looped frames: the objects each record made, by its sequence number.
    made_by: std::collections::HashMap<u64, Vec<(vk::ObjectType, u64, u64)>>,
    /// The checksums the capture recorded of presents, by (frame, swapchain): a record
    /// may come frames after its present, so they are matched once the replay is done.
    presented_checksums: std::collections::HashMap<(u64, u64), u32>,
    /// The trace's devices made and not destroyed yet: their handles, and the calls
    /// that made them.
    live_devices: Vec<(u64, u64)>,
    /// A device made while another lived that asked for something else: the call that
    /// made the one living, and its own. The replay drives one device, the newest, so
    /// the older one's objects are not there to use.
    second_device: Option<(u64, u64)>,
    /// The trace's instances made and not destroyed yet.
    live_instances: Vec<u64>,
    /// What the instance and the device the replay made last were asked for: a trace's
    /// instance or device made while one that asked the same lives is that one again.
    instance_asks: Option<Vec<String>>,
    device_asks: Option<setup::DeviceAsks>,
}

/// How many frames past the last replayed one the replay reads on for the checksums of
/// its presents (the capture layer records a present's checksum up to as many frames
/// late as it keeps read-backs in flight, 3).
const CHECKSUM_LOOKAHEAD: u64 = 8;

/// Replays `trace` on a Vulkan device. The device is destroyed on every path.
pub fn replay_on_device(
    trace: &Path,
    options: &DeviceOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<DeviceSummary, DeviceError> {
    let start = Instant::now();
    // SAFETY: loading the system's Vulkan loader.
    let entry = unsafe { ash::Entry::load() }
        .map_err(|e| DeviceError::Setup(format!("loading the Vulkan loader: {e}")))?;
    if let Some(dir) = &options.dump_frames {
        std::fs::create_dir_all(dir)
            .map_err(|e| DeviceError::Setup(format!("{}: {e}", dir.display())))?;
    }
    let mut replay = Replay {
        entry,
        instance: None,
        physical: vk::PhysicalDevice::null(),
        family: 0,
        device: None,
        queue: vk::Queue::null(),
        functions: None,
        handles: Handles::default(),
        arena: Arena::default(),
        memory: None,
        captured_memory_properties: None,
        swapchains: Default::default(),
        templates: Default::default(),
        timing: None,
        render_pass_views: Default::default(),
        subpasses: Default::default(),
        readback: None,
        options: options.clone(),
        summary: DeviceSummary::default(),
        frame: 0,
        prescan: precheck::Prescan::default(),
        pass: 0,
        keep_objects: false,
        made_by: Default::default(),
        presented_checksums: Default::default(),
        live_devices: Vec::new(),
        second_device: None,
        live_instances: Vec::new(),
        instance_asks: None,
        device_asks: None,
    };
    let result = replay.run(trace, progress);
    replay.destroy();
    let mut summary = std::mem::take(&mut replay.summary);
    summary.unknown_handles = replay.arena.unknown_handles;
    summary.wall = start.elapsed();
    result.map(|()| summary)
}

impl Replay {
    fn run(&mut self, trace: &Path, progress: &mut dyn FnMut(u64, u64)) -> Result<(), DeviceError> {
        self.prescan = precheck::scan(trace)?;
        let reader = TraceReader::open_with(trace, &ReadOptions::parallel())?;
        let total = reader.container().file_len();
        let looping = self.options.loops > 1;
        let (first, last) = match self.options.frames {
            Some(range) => range,
            // Every frame, without what follows the last one (teardown).
            None if looping => (0, self.prescan.frames.saturating_sub(1)),
            None => (0, u64::MAX),
        };
        let bounded = looping || self.options.frames.is_some();
        // The chunks holding the looped frames, kept for the passes after the first.
        let mut kept = Vec::new();
        // Host-visible memory as the first looped frame found it: each pass starts from it.
        let mut snapshot = None;
        'chunks: for chunk in reader {
            let chunk = chunk?;
            let chunk_first_frame = chunk.header().first_frame;
            let mut past_last = false;
            for record in chunk.records() {
                if bounded && self.frame > last {
                    // Past the last frame only the checksums of its presents are read.
                    past_last = !self.checksum_past_last(&record, last);
                    if past_last {
                        break;
                    }
                    continue;
                }
                if looping && snapshot.is_none() && self.frame >= first {
                    snapshot = Some(
                        self.memory
                            .as_ref()
                            .map(memory::Memory::snapshot)
                            .unwrap_or_default(),
                    );
                    // From here on objects live through the passes, and each pass
                    // maps the ids its records made as the first pass did.
                    self.keep_objects = true;
                    self.handles.log = Some(Vec::new());
                }
                self.take(&record).map_err(|e| self.with_devices_said(e))?;
                if let Some(log) = self.handles.log.as_mut().filter(|l| !l.is_empty()) {
                    self.made_by
                        .insert(record.envelope().seq(), std::mem::take(log));
                }
            }
            progress(
                chunk.offset() + u64::from(chunk.header().compressed_len),
                total,
            );
            if looping && self.frame >= first && chunk_first_frame <= last {
                kept.push(chunk);
            }
            if past_last {
                break 'chunks;
            }
        }
        for pass in 1..self.options.loops {
            self.pass = pass;
            self.frame = first;
            if let (Some(m), Some(snapshot)) = (self.memory.as_mut(), &snapshot) {
                m.restore(snapshot);
            }
            for chunk in &kept {
                let mut frame = chunk.header().first_frame;
                for record in chunk.records() {
                    let boundary = record.call_type() == Call::FrameBoundary;
                    if frame >= first && frame <= last {
                        if is_lifetime_record(&record) {
                            // The object the first pass made for this record stands
                            // for it again (a program reuses ids once it destroyed
                            // their objects).
                            for &(ty, id, handle) in self
                                .made_by
                                .get(&record.envelope().seq())
                                .into_iter()
                                .flatten()
                            {
                                self.handles.insert(ty, id, handle);
                            }
                        } else {
                            self.take(&record).map_err(|e| DeviceError::Loop {
                                pass,
                                first,
                                last,
                                source: Box::new(self.with_devices_said(e)),
                            })?;
                        }
                    }
                    if boundary {
                        frame += 1;
                    }
                }
            }
        }
        self.match_presented_checksums(first, last);
        if let Some(device) = &self.device {
            // SAFETY: a live device.
            unsafe { device.device_wait_idle() }
                .map_err(|e| DeviceError::Setup(format!("vkDeviceWaitIdle: {e}")))?;
        }
        Ok(())
    }

    /// Past the last replayed frame: takes `record`'s checksum where it is of a present
    /// up to `last`; returns whether to read on (up to [`CHECKSUM_LOOKAHEAD`] frames).
    fn checksum_past_last(&mut self, record: &Record<'_>, last: u64) -> bool {
        match record.call_type() {
            Call::FrameBoundary => {
                self.frame += 1;
                self.frame <= last.saturating_add(CHECKSUM_LOOKAHEAD)
            }
            Call::FrameChecksum => {
                if let Some(c) = record.call_as_frame_checksum().filter(|c| c.image() == 0) {
                    let of = self.frame.checked_sub(u64::from(c.frames_late()));
                    if let Some(frame) = of.filter(|&f| f <= last) {
                        self.presented_checksums
                            .insert((frame, c.swapchain()), c.crc32());
                    }
                }
                true
            }
            _ => true,
        }
    }

    /// Gives each replayed present the checksum the capture recorded of it, and counts
    /// the checksums of the presents the replay should have replayed: every frame up
    /// to `last`, and `first` to `last` again in each further pass over looped frames.
    fn match_presented_checksums(&mut self, first: u64, last: u64) {
        for f in self.summary.frames.iter_mut().filter(|f| f.swapchain != 0) {
            f.captured = self
                .presented_checksums
                .get(&(f.frame, f.swapchain))
                .copied();
        }
        let passes = u64::from(self.options.loops.max(1));
        for &(frame, _) in self.presented_checksums.keys() {
            self.summary.captured_checksums += match frame {
                f if f < first => 1,
                f if f <= last => passes,
                _ => 0,
            };
        }
    }

    /// `e`, saying why it may have come where the trace made a device while another
    /// lived: the replay drives one device, so what the trace made on the older one is
    /// gone once the newer one is made.
    fn with_devices_said(&self, mut e: DeviceError) -> DeviceError {
        if let (
            Some((first, second)),
            DeviceError::Call { reason, .. } | DeviceError::BadRecord { reason, .. },
        ) = (self.second_device, &mut e)
        {
            reason.push_str(&format!(
                " (the trace makes a second device at #{second} while the one made at #{first} \
                 lives; a replay on a device drives one device, the newest, so objects of the \
                 older one are not there)"
            ));
        }
        e
    }

    fn device(&self, seq: u64) -> Result<&ash::Device, DeviceError> {
        self.device.as_ref().ok_or(DeviceError::Call {
            seq,
            command: "a device command".into(),
            reason: "before vkCreateDevice".into(),
        })
    }

    fn handle<H: Handle>(&self, id: u64, seq: u64, command: &str) -> Result<H, DeviceError> {
        self.handles
            .typed(id)
            .map_err(|e| DeviceError::of_call(seq, command, e))
    }

    fn take(&mut self, record: &Record<'_>) -> Result<(), DeviceError> {
        let seq = record.envelope().seq();
        let call = record.call_type();
        let name = names::call_name(call);
        match call {
            Call::CreateInstance => {
                let c = record
                    .call_as_create_instance()
                    .ok_or_else(|| DeviceError::call(seq, &name, "empty record"))?;
                let asks = setup::instance_asks(&c);
                let again =
                    !self.live_instances.is_empty() && self.instance_asks.as_ref() == Some(&asks);
                self.live_instances.push(c.instance());
                if let (true, Some(instance)) = (again, &self.instance) {
                    // A program with two GL contexts through Zink (Sweet Home 3D) makes
                    // an instance, and a device on it, for each: replayed on one.
                    self.handles.insert(
                        vk::ObjectType::INSTANCE,
                        c.instance(),
                        instance.handle().as_raw(),
                    );
                    self.summary.calls += 1;
                    return Ok(());
                }
                self.instance_asks = Some(asks);
                let instance = setup::create_instance(&self.entry, &c)?;
                self.physical = setup::pick_physical_device(&instance, self.options.gpu)?;
                self.family = setup::queue_family(&instance, self.physical)?;
                self.summary.device = setup::device_name(&instance, self.physical);
                self.handles.insert(
                    vk::ObjectType::INSTANCE,
                    c.instance(),
                    instance.handle().as_raw(),
                );
                self.functions = Some(Functions::new(&self.entry, &instance));
                self.instance = Some(instance);
                // Before anything runs: can this device make every image?
                if let Some(instance) = &self.instance {
                    precheck::check(&self.prescan, instance, self.physical)?;
                }
            }
            Call::PhysicalDeviceInfo => {
                if let Some(c) = record.call_as_physical_device_info() {
                    self.handles.insert(
                        vk::ObjectType::PHYSICAL_DEVICE,
                        c.physical_device(),
                        self.physical.as_raw(),
                    );
                }
            }
            Call::CreateDevice => {
                let c = record
                    .call_as_create_device()
                    .ok_or_else(|| DeviceError::call(seq, &name, "empty record"))?;
                let asks = setup::device_asks(&c);
                let living = self.live_devices.last().map(|&(_, made)| made);
                self.live_devices.push((c.device(), seq));
                if let (Some(_), Some(device), true) = (
                    living,
                    &self.device,
                    self.device_asks.as_ref() == Some(&asks),
                ) {
                    // The device living asked for the same: its queue and memory serve
                    // this one's objects too, its queue's channel running both devices'
                    // work (`verify` gives the model the same program).
                    self.handles.insert(
                        vk::ObjectType::PHYSICAL_DEVICE,
                        c.physical_device(),
                        self.physical.as_raw(),
                    );
                    self.handles.insert(
                        vk::ObjectType::DEVICE,
                        c.device(),
                        device.handle().as_raw(),
                    );
                    self.summary.devices_made_again += 1;
                    self.summary.calls += 1;
                    return Ok(());
                }
                if let Some(made) = living {
                    self.second_device.get_or_insert((made, seq));
                }
                self.device_asks = Some(asks);
                let instance = self
                    .instance
                    .as_ref()
                    .ok_or_else(|| DeviceError::call(seq, &name, "before vkCreateInstance"))?;
                self.handles.insert(
                    vk::ObjectType::PHYSICAL_DEVICE,
                    c.physical_device(),
                    self.physical.as_raw(),
                );
                let device = setup::create_device(
                    instance,
                    self.physical,
                    self.family,
                    &c,
                    seq,
                    self.options.switch_off_missing,
                )?;
                // SAFETY: a live instance and device.
                unsafe {
                    self.memory = Some(memory::Memory::new(
                        instance.get_physical_device_memory_properties(self.physical),
                    ));
                    self.queue = device.get_device_queue(self.family, 0);
                }
                if let (Some(m), Some(bytes)) = (&mut self.memory, &self.captured_memory_properties)
                {
                    m.set_captured_properties(bytes);
                }
                self.handles
                    .insert(vk::ObjectType::DEVICE, c.device(), device.handle().as_raw());
                if let Some(f) = &mut self.functions {
                    f.device = device.handle();
                }
                if self.options.gpu_timing {
                    // SAFETY: plain queries of a live physical device.
                    let (bits, period) = unsafe {
                        let families =
                            instance.get_physical_device_queue_family_properties(self.physical);
                        let props = instance.get_physical_device_properties(self.physical);
                        (
                            families
                                .get(self.family as usize)
                                .map_or(0, |f| f.timestamp_valid_bits),
                            props.limits.timestamp_period,
                        )
                    };
                    self.timing =
                        Some(timing::Timing::new(bits, period).map_err(DeviceError::Setup)?);
                }
                self.readback = Some(
                    frames::Readback::new(&device, self.family)
                        .map_err(|e| DeviceError::call(seq, &name, e))?,
                );
                self.device = Some(device);
            }
            Call::GetDeviceQueue => {
                if let Some(c) = record.call_as_get_device_queue() {
                    self.handles
                        .insert(vk::ObjectType::QUEUE, c.queue(), self.queue.as_raw());
                }
            }
            Call::FrameBoundary => self.frame += 1,
            Call::FrameChecksum => {
                let c = record.call_as_frame_checksum();
                if let Some(c) = c.filter(|c| c.image() != 0) {
                    // An offscreen frame: read the image it names back now.
                    self.summary.captured_checksums += 1;
                    if self.options.read_frames || self.options.dump_frames.is_some() {
                        let device = self.device(seq)?.clone();
                        self.offscreen_frame(&device, seq, &c)?;
                    }
                } else if let Some(c) = c {
                    // The read-back finished while the program went on: the checksum
                    // is of the present `frames_late` boundaries back.
                    if let Some(frame) = self.frame.checked_sub(u64::from(c.frames_late())) {
                        self.presented_checksums
                            .insert((frame, c.swapchain()), c.crc32());
                    }
                }
                return Ok(());
            }
            Call::VulkanCall => {
                if let Some(c) = record.call_as_vulkan_call() {
                    self.generic(seq, record.envelope().result(), &c)?;
                }
                return Ok(());
            }
            Call::DestroyDevice => {
                if let Some(c) = record.call_as_destroy_device() {
                    self.live_devices.retain(|(d, _)| *d != c.device());
                }
            }
            Call::DestroyInstance => {
                if let Some(c) = record.call_as_destroy_instance() {
                    self.live_instances.retain(|i| *i != c.instance());
                }
            }
            Call::MapMemory | Call::UnmapMemory | Call::FlushMappedMemoryRanges => {}
            _ => self.typed(seq, &name, record)?,
        }
        self.summary.calls += 1;
        Ok(())
    }

    fn destroy(&mut self) {
        if let Some(device) = self.device.take() {
            // SAFETY: the device is destroyed last, after waiting for its work; objects
            // the program left alive go with it.
            unsafe {
                device.device_wait_idle().ok();
                if let Some(mut r) = self.readback.take() {
                    r.destroy(&device);
                }
                if let Some(mut t) = self.timing.take() {
                    t.destroy(&device);
                }
                for (_, s) in self.swapchains.drain() {
                    for (image, mem) in s.images {
                        device.destroy_image(image, None);
                        device.free_memory(mem, None);
                    }
                }
                if let Some(mut m) = self.memory.take() {
                    self.summary.memory = m.usage();
                    m.destroy(&device);
                }
                device.destroy_device(None);
            }
        }
        if let Some(instance) = self.instance.take() {
            // SAFETY: its device is gone.
            unsafe { instance.destroy_instance(None) };
        }
    }
}

/// The typed record `$record` as its table (`$as`), or an error naming the call.
macro_rules! get {
    ($record:expr, $as:ident, $seq:expr, $name:expr) => {
        $record
            .$as()
            .ok_or_else(|| DeviceError::bad($seq, $name, "an empty record"))?
    };
}

mod commands;
mod generic;
mod looping;
mod typed;
