//! The GPU channel each submit runs on: one per queue of each device, as NVK makes
//! them (`nvk_queue_init`, a context per queue, set up by
//! `nvk_queue_init_context_state`).
//!
//! The pass's [`Gpu`] runs one channel at a time. A submit to another queue's channel
//! parks the running one and takes that queue's, or a fresh one set up as NVK sets a
//! queue up; a device destroyed takes its channels with it, so a device made after
//! it starts on fresh ones (VLC makes and destroys two devices before the one it draws
//! with). The first channel is the one the pass set up before the trace began: the
//! first queue submitted to takes it.

use std::collections::HashMap;

use driver::gpu::{Channel, Gpu, GpuError};
use trace_format::generated::trace::{CreateDevice, GetDeviceQueue};

use crate::device::setup::{device_asks, DeviceAsks};
use crate::handles::HandleMap;

/// A channel's queue: the device that made it (by the record that made the device, so
/// that a handle used again names a new device), the queue family and index.
type QueueKey = (u64, u32, u32);

/// Every queue's channel in a pass; see the module's docs.
#[derive(Default)]
pub(crate) struct Channels {
    /// Each live device's identity: the sequence number of the record that made it, or
    /// of the device it was made again as ([`Channels::share_alike_devices`]).
    devices: HandleMap<u64>,
    /// Each queue's key, from `vkGetDeviceQueue`.
    queues: HandleMap<QueueKey>,
    /// The channels not running now, by queue, each with its number.
    parked: HashMap<QueueKey, (u32, Channel)>,
    /// The queue whose channel the GPU runs now; `None` while the channel running is
    /// set up and no queue's yet.
    running: Option<QueueKey>,
    /// The running channel's number: channels are numbered as they are made, from 0.
    running_number: u32,
    /// Channels made so far, the first included.
    made: u32,
    /// Whether a device made while another lives that asked for the same extensions
    /// and features is that device again, its queues that device's: what the device
    /// replay does (`docs/device-replay.md`), so that `verify` gives the model the
    /// program NVK ran. A plain replay leaves it off: each device has its channels.
    pub(crate) share_alike_devices: bool,
    /// What the last device made (not made again) asked for, while devices live.
    asks: Option<DeviceAsks>,
}

impl Channels {
    /// `vkCreateDevice` (record `seq`).
    pub(crate) fn device_made(&mut self, seq: u64, c: &CreateDevice<'_>) {
        let mut identity = seq;
        if self.share_alike_devices {
            let asks = device_asks(c);
            let alike = self.asks.as_ref() == Some(&asks);
            match self.devices.values().max() {
                // The device the device replay made last lives and asked the same.
                Some(&last) if alike => identity = last,
                _ => self.asks = Some(asks),
            }
        }
        self.devices.insert(c.device(), identity);
    }

    /// `vkGetDeviceQueue`.
    pub(crate) fn queue_got(&mut self, c: &GetDeviceQueue<'_>) {
        if let Some(&device) = self.devices.get(&c.device()) {
            self.queues
                .insert(c.queue(), (device, c.queue_family_index(), c.queue_index()));
        }
    }

    /// `vkDestroyDevice` of `device`: its channels go (unless a device made again as it
    /// still lives); where the GPU runs one of them, it runs a fresh channel set up by
    /// `init` from now on, which the next queue submitted to takes: its number then.
    pub(crate) fn device_destroyed(
        &mut self,
        device: u64,
        gpu: &mut Gpu,
        init: &[u32],
    ) -> Result<Option<u32>, GpuError> {
        let Some(identity) = self.devices.remove(&device) else {
            return Ok(None);
        };
        if self.devices.values().any(|&d| d == identity) {
            return Ok(None);
        }
        if self.devices.is_empty() {
            self.asks = None;
        }
        self.queues.retain(|_, key| key.0 != identity);
        self.parked.retain(|key, _| key.0 != identity);
        if self.running.is_none_or(|key| key.0 != identity) {
            return Ok(None);
        }
        self.running = None;
        (self.running_number, _) = self.make_fresh(gpu, init)?;
        Ok(Some(self.running_number))
    }

    /// A submit to `queue`: the GPU runs that queue's channel from now on. Returns the
    /// channel's number where it is not the one that ran before.
    pub(crate) fn submit_to(
        &mut self,
        queue: u64,
        gpu: &mut Gpu,
        init: &[u32],
    ) -> Result<Option<u32>, GpuError> {
        // A queue never got (a trace cut short) runs on the channel running.
        let Some(&key) = self.queues.get(&queue) else {
            return Ok(None);
        };
        if self.running == Some(key) {
            return Ok(None);
        }
        match (self.running, self.parked.remove(&key)) {
            // The channel set up and no queue's yet is this one's.
            (None, None) => {
                self.running = Some(key);
                Ok(None)
            }
            (running, Some((number, mut channel))) => {
                gpu.exchange_channel(&mut channel);
                if let Some(before) = running {
                    self.parked.insert(before, (self.running_number, channel));
                }
                self.running = Some(key);
                self.running_number = number;
                Ok(Some(number))
            }
            (Some(before), None) => {
                let (number, displaced) = self.make_fresh(gpu, init)?;
                self.parked.insert(before, (self.running_number, displaced));
                self.running = Some(key);
                self.running_number = number;
                Ok(Some(number))
            }
        }
    }

    /// The channels of a pass whose GPU runs the channel it set up before the trace
    /// began: channel 0, which the first queue submitted to takes.
    pub(crate) fn new() -> Self {
        Channels {
            made: 1,
            ..Channels::default()
        }
    }

    /// Puts a fresh channel in place of the GPU's and sets it up by `init`, as NVK sets
    /// a queue up: the fresh channel's number, and the channel it took the place of.
    fn make_fresh(&mut self, gpu: &mut Gpu, init: &[u32]) -> Result<(u32, Channel), GpuError> {
        let mut displaced = Channel::new(gpu.arch(), gpu.remembers_macro_runs());
        gpu.exchange_channel(&mut displaced);
        gpu.execute(init)?;
        self.made += 1;
        Ok((self.made - 1, displaced))
    }
}
