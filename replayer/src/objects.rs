//! The objects a replay rebuilds from the trace: memory placed in the GPU model's
//! address space, buffers bound into it, render passes with their view masks, pipelines
//! with their topology, query pools.

use std::collections::HashMap;

use driver::class::PrimitiveOp;
use driver::nvk::{QueryPool, QueryType};

/// Where replayed allocations start in the model's address space.
const HEAP_BASE: u64 = 0x10_0000_0000;

/// A graphics pipeline as the driver model needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// BEGIN's topology.
    pub topology: PrimitiveOp,
    /// `VkPrimitiveTopology`.
    pub vk_topology: u32,
    /// `VkPipelineRenderingCreateInfo.viewMask`.
    pub view_mask: u32,
    /// The `VkDynamicState`s it leaves to commands.
    pub dynamic_states: Vec<u32>,
}

/// A render pass as the driver model needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderPass {
    /// Each subpass's view mask.
    pub view_masks: Vec<u32>,
    /// The most colour attachments a subpass writes.
    pub color_attachments: u32,
}

/// Every object the replay tracks, by the trace's handle ids.
#[derive(Debug, Default)]
pub struct Objects {
    next_addr: u64,
    memories: HashMap<u64, u64>,
    buffers: HashMap<u64, u64>,
    buffer_sizes: HashMap<u64, u64>,
    /// Render passes.
    pub render_passes: HashMap<u64, RenderPass>,
    /// Graphics pipelines.
    pub pipelines: HashMap<u64, Pipeline>,
    /// Query pools, placed in GPU memory.
    pub query_pools: HashMap<u64, QueryPool>,
}

impl Objects {
    fn place(&mut self, size: u64) -> u64 {
        if self.next_addr == 0 {
            self.next_addr = HEAP_BASE;
        }
        let addr = self.next_addr;
        // 64 KiB-aligned, with a guard gap.
        self.next_addr += size.saturating_add(0x1_ffff) & !0xffff;
        addr
    }

    /// vkAllocateMemory.
    pub fn allocate_memory(&mut self, memory: u64, size: u64) {
        let addr = self.place(size.min(1 << 40));
        self.memories.insert(memory, addr);
    }

    /// The GPU address of `offset` in `memory`.
    pub fn memory_addr(&self, memory: u64, offset: u64) -> Option<u64> {
        self.memories.get(&memory).map(|base| base + offset)
    }

    /// vkBindBufferMemory.
    pub fn bind_buffer(&mut self, buffer: u64, memory: u64, offset: u64) {
        if let Some(addr) = self.memory_addr(memory, offset) {
            self.buffers.insert(buffer, addr);
        }
    }

    /// vkCreateBuffer.
    pub fn create_buffer(&mut self, buffer: u64, size: u64) {
        self.buffer_sizes.insert(buffer, size);
    }

    /// The address and size of `buffer` from `offset` (to its end, as VK_WHOLE_SIZE
    /// binds it), or a null range when it is not bound to memory.
    pub fn buffer_range(&self, buffer: u64, offset: u64) -> (u64, u32) {
        match self.buffer_addr(buffer, offset) {
            Some(addr) => {
                let size = self.buffer_sizes.get(&buffer).copied().unwrap_or(0);
                (
                    addr,
                    size.saturating_sub(offset).min(u64::from(u32::MAX)) as u32,
                )
            }
            None => (0, 0),
        }
    }

    /// The GPU address of `offset` in `buffer`, if it is bound.
    pub fn buffer_addr(&self, buffer: u64, offset: u64) -> Option<u64> {
        self.buffers.get(&buffer).map(|base| base + offset)
    }

    /// vkCreateQueryPool.
    pub fn create_query_pool(&mut self, pool: u64, query_type: u32, count: u32, statistics: u32) {
        let kind = match query_type {
            1 => QueryType::PipelineStatistics(statistics),
            2 => QueryType::Timestamp,
            _ => QueryType::Occlusion,
        };
        let count = count.min(1 << 20);
        let mut query_pool = QueryPool {
            addr: 0,
            kind,
            count,
        };
        query_pool.addr = self.place(query_pool.size());
        self.query_pools.insert(pool, query_pool);
    }
}

/// BEGIN's topology for a VkPrimitiveTopology.
pub fn topology(vk: u32) -> PrimitiveOp {
    match vk {
        0 => PrimitiveOp::Points,
        1 => PrimitiveOp::Lines,
        2 => PrimitiveOp::LineStrip,
        4 => PrimitiveOp::TriangleStrip,
        5 => PrimitiveOp::TriangleFan,
        6 => PrimitiveOp::LinelistAdjcy,
        7 => PrimitiveOp::LinestripAdjcy,
        8 => PrimitiveOp::TrianglelistAdjcy,
        9 => PrimitiveOp::TrianglestripAdjcy,
        10 => PrimitiveOp::Patch,
        _ => PrimitiveOp::Triangles,
    }
}
