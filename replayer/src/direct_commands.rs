//! The commands of the calls a replay reads straight from their compact records
//! ([`trace_format::direct_records`]): the draws, binds and push constants that make up
//! most of a frame's records. Each gives the same [`Cmd`] [`crate::commands::from_record`]
//! gives for the call's table (a test holds the two together), without the table.

use std::borrow::Cow;

use driver::nvk::DrawKind;
use smallvec::SmallVec;
use trace_format::direct::DirectField;
use trace_format::direct_records::DirectCalls;
use trace_format::generated::trace::Call;

use crate::commands::{Cmd, DrawArgs};

/// The calls read from their compact records: those [`from_direct`] makes commands of,
/// and `VulkanCall` (its name and packed parameters, read by the generic path).
pub const DIRECT_CALLS: DirectCalls = DirectCalls::of(&[
    Call::CmdBindPipeline,
    Call::CmdBindVertexBuffers,
    Call::CmdBindIndexBuffer,
    Call::CmdBindDescriptorSets,
    Call::CmdPushConstants,
    Call::CmdDraw,
    Call::CmdDrawIndexed,
    Call::CmdDrawIndirect,
    Call::CmdDrawIndexedIndirect,
    Call::VulkanCall,
]);

/// A compact record's fields, by their place in the call's table. Each was checked to
/// be of the schema's kind when the chunk was read; a field of another kind (none is)
/// reads as the table's default, as an absent table field does.
pub(crate) struct Fields<'f, 'a>(pub &'f [DirectField<'a>]);

impl<'a> Fields<'_, 'a> {
    /// A `ulong`.
    pub fn u64(&self, i: usize) -> u64 {
        match self.0.get(i) {
            Some(DirectField::U64(v)) => *v,
            _ => 0,
        }
    }

    /// A `uint`.
    pub fn u32(&self, i: usize) -> u32 {
        match self.0.get(i) {
            Some(DirectField::U32(v)) => *v,
            _ => 0,
        }
    }

    /// An `int`.
    pub fn i32(&self, i: usize) -> i32 {
        match self.0.get(i) {
            Some(DirectField::I32(v)) => *v,
            _ => 0,
        }
    }

    /// A `[ulong]`.
    pub fn u64s(&self, i: usize) -> &'a [u64] {
        match self.0.get(i) {
            Some(DirectField::U64s(v)) => v,
            _ => &[],
        }
    }

    /// A `[uint]`.
    pub fn u32s(&self, i: usize) -> &'a [u32] {
        match self.0.get(i) {
            Some(DirectField::U32s(v)) => v,
            _ => &[],
        }
    }

    /// A `[ubyte]`: borrowed, or joined where it was stored as byte planes.
    pub fn bytes(&self, i: usize) -> Cow<'a, [u8]> {
        match self.0.get(i) {
            Some(DirectField::Bytes(b)) => Cow::Borrowed(b),
            Some(DirectField::BytePlanes(planes)) => {
                let mut joined = Vec::with_capacity(planes.len());
                trace_format::byte_planes::join_into(planes, &mut joined);
                Cow::Owned(joined)
            }
            _ => Cow::Borrowed(&[]),
        }
    }

    /// A `string`.
    pub fn str(&self, i: usize) -> Option<&'a str> {
        match self.0.get(i) {
            Some(DirectField::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// The command buffer a compact record of `call` is recorded into and its command (as
/// `from_record` reads the call's table); `None` for a call not in [`DIRECT_CALLS`]'s
/// commands.
pub fn from_direct(seq: u64, call: Call, fields: &[DirectField<'_>]) -> Option<(u64, Cmd)> {
    let f = Fields(fields);
    let draw = |kind, args| Cmd::Draw { seq, kind, args };
    let indirect = |kind| {
        draw(
            kind,
            DrawArgs::Indirect {
                buffer: f.u64(1),
                offset: f.u64(2),
                draw_count: f.u32(3),
                stride: f.u32(4),
                count: None,
            },
        )
    };
    let cmd = match call {
        Call::CmdBindPipeline => Cmd::BindPipeline {
            bind_point: f.u32(1),
            pipeline: f.u64(2),
        },
        Call::CmdBindVertexBuffers => Cmd::BindVertexBuffers {
            first_binding: f.u32(1),
            buffers: f.u64s(2).to_vec(),
            offsets: f.u64s(3).to_vec(),
        },
        Call::CmdBindIndexBuffer => Cmd::BindIndexBuffer {
            buffer: f.u64(1),
            offset: f.u64(2),
            index_type: f.u32(3),
        },
        Call::CmdBindDescriptorSets => Cmd::BindDescriptorSets {
            bind_point: f.u32(1),
            layout: f.u64(2),
            first_set: f.u32(3),
            sets: SmallVec::from_slice(f.u64s(4)),
            dynamic_offsets: SmallVec::from_slice(f.u32s(5)),
        },
        Call::CmdPushConstants => Cmd::PushConstants {
            stages: f.u32(2),
            offset: f.u32(3),
            data: crate::commands::words_of(&f.bytes(4)),
        },
        Call::CmdDraw => draw(
            DrawKind::Draw,
            DrawArgs::Direct {
                vertex_count: f.u32(1),
                instance_count: f.u32(2),
                first_vertex: f.u32(3),
                first_instance: f.u32(4),
            },
        ),
        Call::CmdDrawIndexed => draw(
            DrawKind::DrawIndexed,
            DrawArgs::Indexed {
                index_count: f.u32(1),
                instance_count: f.u32(2),
                first_index: f.u32(3),
                vertex_offset: f.i32(4),
                first_instance: f.u32(5),
            },
        ),
        Call::CmdDrawIndirect => indirect(DrawKind::DrawIndirect),
        Call::CmdDrawIndexedIndirect => indirect(DrawKind::DrawIndexedIndirect),
        _ => return None,
    };
    Some((f.u64(0), cmd))
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::direct::{append_direct, DirectField as F};
    use trace_format::generated::trace::Record;
    use trace_format::CallMeta;

    /// The command `from_record` makes of the table a reader lays `fields` out as.
    fn through_table(seq: u64, call: Call, fields: &[F<'_>]) -> Option<(u64, Cmd)> {
        let mut out = Vec::new();
        let meta = CallMeta {
            thread_id: 3,
            timestamp_ns: 40,
            result: 0,
        };
        let start = append_direct(&mut out, seq, meta, call, fields);
        let record = flatbuffers::root::<Record>(&out[start..]).expect("a record");
        crate::commands::from_record(&record)
    }

    #[test]
    fn every_direct_call_makes_the_command_its_table_makes() {
        let words: Vec<u8> = (0..70u8).map(|b| b.wrapping_mul(37)).collect();
        let mut planes = Vec::new();
        trace_format::byte_planes::split_into(&words, &mut planes);
        let cases: Vec<(Call, Vec<F<'_>>)> = vec![
            (
                Call::CmdBindPipeline,
                vec![F::U64(9), F::U32(1), F::U64(0x77)],
            ),
            (
                Call::CmdBindVertexBuffers,
                vec![F::U64(9), F::U32(2), F::U64s(&[5, 6]), F::U64s(&[0, 64])],
            ),
            (
                Call::CmdBindVertexBuffers,
                vec![F::U64(9), F::U32(0), F::Absent, F::Absent],
            ),
            (
                Call::CmdBindIndexBuffer,
                vec![F::U64(9), F::U64(5), F::U64(128), F::U32(1)],
            ),
            (
                Call::CmdBindDescriptorSets,
                vec![
                    F::U64(9),
                    F::U32(0),
                    F::U64(7),
                    F::U32(1),
                    F::U64s(&[0x10, 0x20, 0x30]),
                    F::U32s(&[256, 512, 0, 4, 8]),
                ],
            ),
            (
                Call::CmdPushConstants,
                vec![
                    F::U64(9),
                    F::U64(7),
                    F::U32(17),
                    F::U32(16),
                    F::Bytes(&words[..7]),
                ],
            ),
            (
                Call::CmdPushConstants,
                vec![
                    F::U64(9),
                    F::U64(7),
                    F::U32(1),
                    F::U32(0),
                    F::BytePlanes(&planes),
                ],
            ),
            (
                Call::CmdDraw,
                vec![F::U64(9), F::U32(3), F::U32(2), F::U32(1), F::U32(4)],
            ),
            (
                Call::CmdDrawIndexed,
                vec![
                    F::U64(11),
                    F::U32(48),
                    F::U32(3),
                    F::U32(7),
                    F::I32(-2),
                    F::U32(2),
                ],
            ),
            (
                Call::CmdDrawIndirect,
                vec![F::U64(9), F::U64(5), F::U64(16), F::U32(3), F::U32(20)],
            ),
            (
                Call::CmdDrawIndexedIndirect,
                vec![F::U64(9), F::U64(5), F::U64(32), F::U32(2), F::U32(24)],
            ),
        ];
        for (i, (call, fields)) in cases.iter().enumerate() {
            assert!(DIRECT_CALLS.contains(*call));
            let direct = from_direct(1000 + i as u64, *call, fields);
            assert!(direct.is_some(), "{call:?}");
            assert_eq!(
                direct,
                through_table(1000 + i as u64, *call, fields),
                "{call:?}"
            );
        }
    }

    #[test]
    fn a_call_without_a_direct_command_makes_none() {
        assert_eq!(from_direct(1, Call::CmdEndRenderPass, &[F::U64(9)]), None);
        assert_eq!(from_direct(1, Call::VulkanCall, &[]), None);
    }
}
