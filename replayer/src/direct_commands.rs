//! The commands of the calls a replay reads straight from their compact records
//! ([`trace_format::direct_records`]): the draws, binds and push constants that make up
//! most of a frame's records. Each gives the same [`Cmd`] [`crate::commands::from_record`]
//! gives for the call's table (a test holds the two together), without the table.

use std::borrow::Cow;

use driver::nvk::DrawKind;
use smallvec::SmallVec;
use trace_format::compact::FieldCursor;
use trace_format::direct::DirectField;
use trace_format::direct_records::DirectCalls;
use trace_format::generated::trace::Call;

use crate::commands::{Cmd, DrawArgs, PushedWords};

/// The calls read from their compact records: those [`from_direct`] makes commands of,
/// `VulkanCall` (its name and packed parameters, read by the generic path), and
/// `MemoryContents` (its bytes written into the model's memory from where they are
/// stored, not copied into a table first).
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
    Call::MemoryContents,
]);

/// A compact record's fields, taken one at a time in the order of the call's table.
/// Each was checked to be of the schema's kind when the chunk was read; a field of
/// another kind (none is) reads as the table's default, as an absent table field does.
pub(crate) trait Fields<'a> {
    /// The next field, [`DirectField::Absent`] past the last.
    fn next_field(&mut self) -> DirectField<'a>;

    /// A `ulong`.
    #[inline(always)]
    fn u64(&mut self) -> u64 {
        match self.next_field() {
            DirectField::U64(v) => v,
            _ => 0,
        }
    }

    /// A `uint`.
    #[inline(always)]
    fn u32(&mut self) -> u32 {
        match self.next_field() {
            DirectField::U32(v) => v,
            _ => 0,
        }
    }

    /// An `int`.
    #[inline(always)]
    fn i32(&mut self) -> i32 {
        match self.next_field() {
            DirectField::I32(v) => v,
            _ => 0,
        }
    }

    /// A `[ulong]`.
    fn u64s(&mut self) -> &'a [u64] {
        match self.next_field() {
            DirectField::U64s(v) => v,
            _ => &[],
        }
    }

    /// A `[uint]`.
    fn u32s(&mut self) -> &'a [u32] {
        match self.next_field() {
            DirectField::U32s(v) => v,
            _ => &[],
        }
    }

    /// A `string`.
    fn str(&mut self) -> Option<&'a str> {
        match self.next_field() {
            DirectField::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// A record's stored fields, the scalars read straight from their bytes.
impl<'a> Fields<'a> for FieldCursor<'a> {
    #[inline(always)]
    fn next_field(&mut self) -> DirectField<'a> {
        FieldCursor::next_field(self)
    }

    #[inline(always)]
    fn u64(&mut self) -> u64 {
        FieldCursor::u64(self).unwrap_or(0)
    }

    #[inline(always)]
    fn u32(&mut self) -> u32 {
        FieldCursor::u32(self).unwrap_or(0)
    }

    #[inline(always)]
    fn i32(&mut self) -> i32 {
        FieldCursor::i32(self).unwrap_or(0)
    }
}

/// Fields already laid out, as a writer holds them (the tests' records).
#[cfg(test)]
impl<'a> Fields<'a> for std::slice::Iter<'_, DirectField<'a>> {
    fn next_field(&mut self) -> DirectField<'a> {
        self.next().copied().unwrap_or(DirectField::Absent)
    }
}

/// A `[ubyte]` field: borrowed, or joined where it was stored as byte planes; `None`
/// for a field of another kind or left out.
pub(crate) fn bytes_of<'a>(field: DirectField<'a>) -> Option<Cow<'a, [u8]>> {
    match field {
        DirectField::Bytes(b) => Some(Cow::Borrowed(b)),
        DirectField::BytePlanes(planes) => {
            let mut joined = Vec::with_capacity(planes.len());
            trace_format::byte_planes::join_into(planes, &mut joined);
            Some(Cow::Owned(joined))
        }
        _ => None,
    }
}

/// The push-constant words of a `[ubyte]` field: read straight from its bytes, or from
/// its byte planes without joining them into a buffer first; none for a field of
/// another kind or left out.
fn pushed_words(field: DirectField<'_>) -> PushedWords {
    match field {
        DirectField::Bytes(bytes) => crate::commands::words_of(bytes),
        DirectField::BytePlanes(planes) => crate::commands::words_of_planes(planes),
        _ => PushedWords::new(),
    }
}

/// The command buffer a compact record of `call` is recorded into and its command (as
/// `from_record` reads the call's table), its fields taken in the table's order from
/// `fields`; `None` for a call not in [`DIRECT_CALLS`]'s commands.
#[inline(always)]
pub fn from_direct<'a>(seq: u64, call: Call, mut f: impl Fields<'a>) -> Option<(u64, Cmd)> {
    let draw = |kind, args| Cmd::Draw { seq, kind, args };
    // Every call's table starts with its command buffer.
    let cb = f.u64();
    let cmd = match call {
        Call::CmdBindPipeline => Cmd::BindPipeline {
            bind_point: f.u32(),
            pipeline: f.u64(),
        },
        Call::CmdBindVertexBuffers => Cmd::BindVertexBuffers {
            first_binding: f.u32(),
            buffers: f.u64s().to_vec(),
            offsets: f.u64s().to_vec(),
        },
        Call::CmdBindIndexBuffer => Cmd::BindIndexBuffer {
            buffer: f.u64(),
            offset: f.u64(),
            index_type: f.u32(),
        },
        Call::CmdBindDescriptorSets => Cmd::BindDescriptorSets {
            bind_point: f.u32(),
            layout: f.u64(),
            first_set: f.u32(),
            sets: SmallVec::from_slice(f.u64s()),
            dynamic_offsets: SmallVec::from_slice(f.u32s()),
        },
        Call::CmdPushConstants => {
            let _layout = f.u64();
            Cmd::PushConstants {
                stages: f.u32(),
                offset: f.u32(),
                data: pushed_words(f.next_field()),
            }
        }
        Call::CmdDraw => draw(
            DrawKind::Draw,
            DrawArgs::Direct {
                vertex_count: f.u32(),
                instance_count: f.u32(),
                first_vertex: f.u32(),
                first_instance: f.u32(),
            },
        ),
        Call::CmdDrawIndexed => draw(
            DrawKind::DrawIndexed,
            DrawArgs::Indexed {
                index_count: f.u32(),
                instance_count: f.u32(),
                first_index: f.u32(),
                vertex_offset: f.i32(),
                first_instance: f.u32(),
            },
        ),
        Call::CmdDrawIndirect | Call::CmdDrawIndexedIndirect => draw(
            match call {
                Call::CmdDrawIndirect => DrawKind::DrawIndirect,
                _ => DrawKind::DrawIndexedIndirect,
            },
            DrawArgs::Indirect {
                buffer: f.u64(),
                offset: f.u64(),
                draw_count: f.u32(),
                stride: f.u32(),
                count: None,
            },
        ),
        _ => return None,
    };
    Some((cb, cmd))
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
            let direct = from_direct(1000 + i as u64, *call, fields.iter());
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
        assert_eq!(
            from_direct(1, Call::CmdEndRenderPass, [F::U64(9)].iter()),
            None
        );
        assert_eq!(from_direct(1, Call::VulkanCall, [].iter()), None);
    }
}
