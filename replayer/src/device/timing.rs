//! Per-draw GPU time: each draw and dispatch recorded between two timestamp queries.
//!
//! Both timestamps are taken at the bottom of the pipe, so a draw's time is from the
//! moment everything before it finished to the moment it finished: work that overlaps
//! the previous draw is not counted twice, and a draw hidden entirely behind earlier
//! work reads as (nearly) zero. A timestamp inside a render pass does not split it on
//! desktop GPUs, but tiling GPUs may flush their tiles there; and the timestamps
//! themselves cost a little (the GPU must let each draw drain). Inside a multiview
//! render pass a timestamp takes as many queries as there are views; the first one
//! is read.

use std::collections::HashMap;

use ash::vk;
use ash::vk::Handle;

/// Queries per pool.
const POOL_SIZE: u32 = 4096;

/// One timed draw in a command buffer: its record, and where its two timestamps go.
#[derive(Clone, Copy, Debug)]
struct Slot {
    seq: u64,
    pool: usize,
    first: u32,
    width: u32,
}

/// The GPU times of one replay.
pub struct Timing {
    pools: Vec<vk::QueryPool>,
    /// The next free query of the last pool.
    next: u32,
    /// Per command buffer (the replay's handle): its timed draws, in recording order.
    slots: HashMap<u64, Vec<Slot>>,
    /// Per command buffer: views of the render pass instance it is recording (1 outside).
    views: HashMap<u64, u32>,
    /// Per primary command buffer: the secondaries it executes, in order.
    executes: HashMap<u64, Vec<u64>>,
    /// Nanoseconds per timestamp tick.
    period: f64,
    /// Mask of the timestamps' valid bits.
    mask: u64,
}

/// One timed execution of a draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawTime {
    /// The pass over looped frames (0 without loops: the first pass warms caches).
    pub pass: u32,
    /// The submit that executed it.
    pub submit_seq: u64,
    /// The draw's record.
    pub seq: u64,
    /// GPU nanoseconds.
    pub ns: u64,
}

impl Timing {
    /// Timing on a queue whose timestamps have `valid_bits` bits, ticking every
    /// `period` nanoseconds.
    pub fn new(valid_bits: u32, period: f32) -> Result<Self, String> {
        if valid_bits == 0 {
            return Err(
                "the replay queue cannot write timestamps (timestampValidBits is 0)".into(),
            );
        }
        Ok(Timing {
            pools: Vec::new(),
            next: POOL_SIZE,
            slots: HashMap::new(),
            views: HashMap::new(),
            executes: HashMap::new(),
            period: f64::from(period),
            mask: if valid_bits >= 64 {
                u64::MAX
            } else {
                (1u64 << valid_bits) - 1
            },
        })
    }

    /// A command buffer begins recording: its earlier draws are forgotten.
    pub fn begin(&mut self, cb: vk::CommandBuffer) {
        self.slots.remove(&cb.as_raw());
        self.views.remove(&cb.as_raw());
        self.executes.remove(&cb.as_raw());
    }

    /// `primary` executes `secondaries` (their draws are timed within it).
    pub fn execute(&mut self, primary: vk::CommandBuffer, secondaries: &[vk::CommandBuffer]) {
        self.executes
            .entry(primary.as_raw())
            .or_default()
            .extend(secondaries.iter().map(|s| s.as_raw()));
    }

    /// The slots of `cbs` in execution order, the draws of the secondaries a primary
    /// executes after the primary's own (a secondary's draws run where it is executed,
    /// but the order of two command buffers' slots does not change their times).
    fn slots_of<'a>(&'a self, cbs: &'a [vk::CommandBuffer]) -> impl Iterator<Item = &'a Slot> + 'a {
        cbs.iter().flat_map(move |cb| {
            let own = self.slots.get(&cb.as_raw()).into_iter().flatten();
            let executed = self
                .executes
                .get(&cb.as_raw())
                .into_iter()
                .flatten()
                .flat_map(move |s| self.slots.get(s).into_iter().flatten());
            own.chain(executed)
        })
    }

    /// A render pass instance of `views` views begins (or a subpass; 0 outside one).
    pub fn set_views(&mut self, cb: vk::CommandBuffer, view_mask: u32) {
        self.views
            .insert(cb.as_raw(), view_mask.count_ones().max(1));
    }

    fn allocate(&mut self, device: &ash::Device, width: u32) -> Result<(usize, u32), vk::Result> {
        if self.next + 2 * width > POOL_SIZE {
            let info = vk::QueryPoolCreateInfo::default()
                .query_type(vk::QueryType::TIMESTAMP)
                .query_count(POOL_SIZE);
            // SAFETY: a live device.
            let pool = unsafe { device.create_query_pool(&info, None) }?;
            // SAFETY: host reset of a new pool (hostQueryReset is enabled with every feature).
            unsafe { device.reset_query_pool(pool, 0, POOL_SIZE) };
            self.pools.push(pool);
            self.next = 0;
        }
        let first = self.next;
        self.next += 2 * width;
        Ok((self.pools.len() - 1, first))
    }

    /// Records the timestamp before draw `seq` in `cb`.
    pub fn before(
        &mut self,
        device: &ash::Device,
        cb: vk::CommandBuffer,
        seq: u64,
    ) -> Result<(), vk::Result> {
        let width = self.views.get(&cb.as_raw()).copied().unwrap_or(1);
        let (pool, first) = self.allocate(device, width)?;
        self.slots.entry(cb.as_raw()).or_default().push(Slot {
            seq,
            pool,
            first,
            width,
        });
        // SAFETY: a command buffer being recorded and a live pool.
        unsafe {
            device.cmd_write_timestamp(
                cb,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                self.pools[pool],
                first,
            )
        };
        Ok(())
    }

    /// Records the timestamp after the draw `before` began.
    pub fn after(&mut self, device: &ash::Device, cb: vk::CommandBuffer) {
        if let Some(slot) = self.slots.get(&cb.as_raw()).and_then(|s| s.last()) {
            // SAFETY: as in `before`.
            unsafe {
                device.cmd_write_timestamp(
                    cb,
                    vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                    self.pools[slot.pool],
                    slot.first + slot.width,
                )
            };
        }
    }

    /// Before a submit of `cbs`: their queries reset from the host.
    pub fn prepare(&self, device: &ash::Device, cbs: &[vk::CommandBuffer]) {
        for s in self.slots_of(cbs) {
            // SAFETY: the queries are not in use: the previous submit finished.
            unsafe { device.reset_query_pool(self.pools[s.pool], s.first, 2 * s.width) };
        }
    }

    /// After the submit `submit_seq` of `cbs` finished: each draw's time.
    pub fn collect(
        &self,
        device: &ash::Device,
        pass: u32,
        submit_seq: u64,
        cbs: &[vk::CommandBuffer],
        out: &mut Vec<DrawTime>,
    ) -> Result<(), vk::Result> {
        {
            for s in self.slots_of(cbs) {
                let mut start = [0u64; 1];
                let mut end = [0u64; 1];
                // SAFETY: the submit finished; both queries were written by it.
                unsafe {
                    device.get_query_pool_results(
                        self.pools[s.pool],
                        s.first,
                        &mut start,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                    )?;
                    device.get_query_pool_results(
                        self.pools[s.pool],
                        s.first + s.width,
                        &mut end,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                    )?;
                }
                let ticks = end[0].wrapping_sub(start[0]) & self.mask;
                out.push(DrawTime {
                    pass,
                    submit_seq,
                    seq: s.seq,
                    ns: (ticks as f64 * self.period).round() as u64,
                });
            }
        }
        Ok(())
    }

    /// Destroys the pools.
    pub fn destroy(&mut self, device: &ash::Device) {
        for pool in self.pools.drain(..) {
            // SAFETY: the device is idle.
            unsafe { device.destroy_query_pool(pool, None) };
        }
    }
}
