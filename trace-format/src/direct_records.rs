//! Compact records handed to a reader as they are stored, not laid out as tables.
//!
//! A chunk of stored records is read as a `RecordBatch`: the reader lays each compact
//! record out as the schema's table ([`crate::record_block::lay_out_stored`]), and the
//! consumer reads the table through the generated accessors. For the calls a consumer
//! reads by the million and knows field by field (a replay's draws, binds and push
//! constants), both steps are work for nothing: the compact record already holds every
//! field, in the table's order, each of the schema's kind. A reader asked for such calls
//! ([`ReadOptions::direct`](crate::ReadOptions)) checks their records as it would to lay
//! them out (the call's fields, their kinds, that they read back) and hands them over
//! as [`DirectRecord`]s instead, in their place among the chunk's tables
//! ([`crate::TraceChunk::entries`]).

use crate::compact::{decode_fields, CompactHead, FieldCursor};
use crate::direct::{DirectField, MAX_DIRECT_FIELDS};
use crate::generated::trace::{Call, Record};
use crate::trace::CallMeta;

/// A set of call types, by their place in the schema's `Call` union.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirectCalls([u64; 4]);

impl DirectCalls {
    /// No call: every record is laid out as a table.
    pub const NONE: DirectCalls = DirectCalls([0; 4]);

    /// The set of `calls`.
    pub const fn of(calls: &[Call]) -> Self {
        let mut bits = [0u64; 4];
        let mut i = 0;
        while i < calls.len() {
            let call = calls[i].0 as usize;
            bits[call / 64] |= 1 << (call % 64);
            i += 1;
        }
        DirectCalls(bits)
    }

    /// Whether `call` is in the set.
    #[inline]
    pub fn contains(self, call: Call) -> bool {
        let call = usize::from(call.0);
        self.0[call / 64] & (1 << (call % 64)) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == [0; 4]
    }
}

/// Where a handed-over record lies in its chunk, as the reader found it
/// ([`crate::record_block::lay_out_stored_handing`]).
#[derive(Clone, Copy, Debug)]
pub struct StoredDirect {
    /// Its place among the chunk's records.
    pub index: u32,
    /// Its call, fields' kinds and envelope.
    pub(crate) head: CompactHead,
    /// Its fields' bytes in the stored payload: from `start` to `end`.
    pub(crate) start: u32,
    pub(crate) end: u32,
}

/// A compact record handed over as it is stored: its call and envelope, and its fields
/// in the order of the call's table in the schema, each of the schema's kind (checked
/// when the chunk was read).
#[derive(Clone, Copy, Debug)]
pub struct DirectRecord<'a> {
    /// Its sequence number.
    pub seq: u64,
    head: CompactHead,
    bytes: &'a [u8],
}

impl<'a> DirectRecord<'a> {
    pub(crate) fn new(seq: u64, head: CompactHead, bytes: &'a [u8]) -> Self {
        DirectRecord { seq, head, bytes }
    }

    /// Its call.
    pub fn call(&self) -> Call {
        self.head.call_type
    }

    /// Its envelope but the sequence number.
    pub fn meta(&self) -> CallMeta {
        self.head.meta
    }

    /// Its fields, read into `room`: as many as the call's table has, in its order (those
    /// a record written before its table grew lacks, as their defaults: 0, or left out).
    pub fn fields<'r>(
        &self,
        room: &'r mut [DirectField<'a>; MAX_DIRECT_FIELDS],
    ) -> &'r [DirectField<'a>] {
        // The chunk's reader read these same bytes back before handing the record over:
        // they read back again.
        match decode_fields(self.head.kinds, self.head.field_count, self.bytes, room) {
            Some(given) => {
                let given = given.len();
                crate::direct::with_lacked_fields(self.head.call_type, room, given)
            }
            None => &[],
        }
    }

    /// Its fields one at a time, in the order of the call's table, decoded as they are
    /// taken: what [`fields`](Self::fields) reads, for a consumer that takes each field
    /// once, in order.
    #[inline(always)]
    pub fn field_cursor(&self) -> FieldCursor<'a> {
        FieldCursor::new(self.head.kinds, self.head.field_count, self.bytes)
    }
}

/// One record of a chunk, in sequence order: a table, or a compact record handed over.
#[derive(Clone, Copy, Debug)]
pub enum ChunkRecord<'a> {
    /// A record read through its table.
    Table(Record<'a>),
    /// A compact record of a call the reader was asked to hand over.
    Direct(DirectRecord<'a>),
}
