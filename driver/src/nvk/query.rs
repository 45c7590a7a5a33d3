//! Query pools and what queries write (nvk_query_pool.c's layout).
//!
//! Pool memory: an availability word per query at `4·query`, then from
//! `align(4·count, 16)` the reports, each `{u64 value, u64 timestamp}`: two per
//! occlusion or primitives-generated query (begin, end), one per timestamp, two per
//! enabled statistic, four per transform-feedback stream query (written and needed).

use crate::gpu::Memory;

/// What a pool counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryType {
    /// Samples passing the depth test.
    Occlusion,
    /// A timestamp.
    Timestamp,
    /// Pipeline statistics, with VkQueryPipelineStatisticFlags.
    PipelineStatistics(u32),
    /// Transform-feedback primitives written and needed, of one stream.
    TransformFeedbackStream,
    /// Primitives generated, of one stream.
    PrimitivesGenerated,
}

impl QueryType {
    /// The type of `VkQueryType` `query_type` (with the statistics a pipeline-statistics
    /// pool counts); `None` for a type NVK does not support.
    pub fn of_vk(query_type: u32, statistics: u32) -> Option<QueryType> {
        Some(match query_type {
            0 => QueryType::Occlusion,
            1 => QueryType::PipelineStatistics(statistics),
            2 => QueryType::Timestamp,
            1_000_028_004 => QueryType::TransformFeedbackStream,
            1_000_382_000 => QueryType::PrimitivesGenerated,
            _ => return None,
        })
    }
}

/// A query pool in GPU memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryPool {
    /// Its address.
    pub addr: u64,
    /// Its type.
    pub kind: QueryType,
    /// Queries in it.
    pub count: u32,
}

impl QueryPool {
    /// Where query `q`'s availability word is.
    pub fn available_addr(&self, q: u32) -> u64 {
        self.addr.wrapping_add(4 * u64::from(q))
    }

    /// Whether queries `first..first + count` are in the pool (the replayer skips a
    /// call naming others: NVK would write past the pool).
    pub fn holds(&self, first: u32, count: u32) -> bool {
        u64::from(first) + u64::from(count) <= u64::from(self.count)
    }

    /// Reports per query.
    pub fn reports_per_query(&self) -> u32 {
        match self.kind {
            QueryType::Occlusion => 2,
            QueryType::Timestamp => 1,
            QueryType::PipelineStatistics(flags) => 2 * flags.count_ones(),
            QueryType::TransformFeedbackStream => 4,
            QueryType::PrimitivesGenerated => 2,
        }
    }

    /// Where report `i` of query `q` is.
    pub fn report_addr(&self, q: u32, i: u32) -> u64 {
        // In 64 bits: a pool's count and a query index come from the trace.
        let reports = self.addr + (4 * u64::from(self.count)).next_multiple_of(16);
        let report = u64::from(q) * u64::from(self.reports_per_query()) + u64::from(i);
        reports.wrapping_add(16 * report)
    }

    /// Bytes the pool spans.
    pub fn size(&self) -> u64 {
        self.report_addr(self.count, 0) - self.addr
    }

    /// Query `q`'s results as a reader of the pool computes them (end − begin; the
    /// timestamp), or `None` while it is unavailable.
    pub fn results(&self, memory: &Memory, q: u32) -> Option<Vec<u64>> {
        if memory.read_u32(self.available_addr(q)) == 0 {
            return None;
        }
        Some(match self.kind {
            QueryType::Timestamp => vec![memory.read_u64(self.report_addr(q, 0) + 8)],
            _ => (0..self.reports_per_query() / 2)
                .map(|i| {
                    let begin = memory.read_u64(self.report_addr(q, 2 * i));
                    memory
                        .read_u64(self.report_addr(q, 2 * i + 1))
                        .wrapping_sub(begin)
                })
                .collect(),
        })
    }
}
