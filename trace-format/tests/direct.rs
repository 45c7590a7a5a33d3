//! Records laid out directly (without a flatbuffers builder) read back as the same
//! records a builder makes, through the verifying reader, for every field kind; blocks
//! of interleaved numbers merge into one order.

use trace_format::direct::DirectField as F;
use trace_format::generated::trace::*;
use trace_format::record_block::{RecordBlock, RecordEncoder};
use trace_format::sequencer::Sequencer;
use trace_format::{CallMeta, TraceReader, TraceWriter, WriterOptions};

macro_rules! mk {
    ($t:ident { $($field:ident : $value:expr),* $(,)? }) => {{
        let mut value = $t::default();
        $(value.$field = $value;)*
        value
    }};
}

/// Calls with every direct field kind: 8- and 4-byte scalars in any order, a negative
/// `int`, byte vectors of lengths that leave the next object unaligned (and empty),
/// vectors of `uint` and `ulong`.
fn calls() -> Vec<(CallT, Call, Vec<F<'static>>)> {
    vec![
        (
            CallT::CmdDraw(Box::new(mk!(CmdDrawT {
                command_buffer: 0x1122_3344_5566_7788,
                vertex_count: 3,
                instance_count: 1,
                first_vertex: 7,
                first_instance: 0
            }))),
            Call::CmdDraw,
            vec![
                F::U64(0x1122_3344_5566_7788),
                F::U32(3),
                F::U32(1),
                F::U32(7),
                F::U32(0),
            ],
        ),
        (
            CallT::CmdDrawIndexed(Box::new(mk!(CmdDrawIndexedT {
                command_buffer: 9,
                index_count: 36,
                instance_count: 2,
                first_index: 5,
                vertex_offset: -4,
                first_instance: 1
            }))),
            Call::CmdDrawIndexed,
            vec![
                F::U64(9),
                F::U32(36),
                F::U32(2),
                F::U32(5),
                F::I32(-4),
                F::U32(1),
            ],
        ),
        (
            CallT::CmdPushConstants(Box::new(mk!(CmdPushConstantsT {
                command_buffer: 9,
                layout: 0xabc,
                stage_flags: 0x11,
                offset: 4,
                data: Some(vec![1, 2, 3, 4, 5])
            }))),
            Call::CmdPushConstants,
            vec![
                F::U64(9),
                F::U64(0xabc),
                F::U32(0x11),
                F::U32(4),
                F::Bytes(&[1, 2, 3, 4, 5]),
            ],
        ),
        (
            CallT::CmdPushConstants(Box::new(mk!(CmdPushConstantsT {
                command_buffer: 9,
                layout: 0xabc,
                stage_flags: 0x11,
                offset: 0,
                data: Some(vec![])
            }))),
            Call::CmdPushConstants,
            vec![
                F::U64(9),
                F::U64(0xabc),
                F::U32(0x11),
                F::U32(0),
                F::Bytes(&[]),
            ],
        ),
        (
            CallT::CmdBindDescriptorSets(Box::new(mk!(CmdBindDescriptorSetsT {
                command_buffer: 9,
                pipeline_bind_point: 0,
                layout: 0xabc,
                first_set: 1,
                descriptor_sets: Some(vec![0x10, 0x20, 0x30]),
                dynamic_offsets: Some(vec![256, 512])
            }))),
            Call::CmdBindDescriptorSets,
            vec![
                F::U64(9),
                F::U32(0),
                F::U64(0xabc),
                F::U32(1),
                F::U64s(&[0x10, 0x20, 0x30]),
                F::U32s(&[256, 512]),
            ],
        ),
        (
            CallT::CmdBindVertexBuffers(Box::new(mk!(CmdBindVertexBuffersT {
                command_buffer: 9,
                first_binding: 2,
                buffers: Some(vec![0x40]),
                offsets: Some(vec![64])
            }))),
            Call::CmdBindVertexBuffers,
            vec![F::U64(9), F::U32(2), F::U64s(&[0x40]), F::U64s(&[64])],
        ),
    ]
}

fn meta(i: usize) -> CallMeta {
    CallMeta {
        thread_id: 3,
        timestamp_ns: 1000 + i as u64,
        result: -(i as i32),
    }
}

/// Writes `block` (records numbered from 0) as a trace and reads every record back.
fn write_and_read(block: RecordBlock) -> Vec<RecordT> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    let mut sequencer =
        Sequencer::new(TraceWriter::create(&path, &WriterOptions::default()).unwrap());
    sequencer.add(block).unwrap();
    sequencer.finish().unwrap();
    let mut records = Vec::new();
    for chunk in TraceReader::open(&path).unwrap() {
        records.extend(chunk.unwrap().records().map(|r| r.unpack()));
    }
    records
}

#[test]
fn direct_records_read_back_as_the_builders_records() {
    let calls = calls();
    let mut built = RecordBlock::new();
    let mut direct = RecordBlock::new();
    let mut encoder = RecordEncoder::new();
    for (i, (call, call_type, fields)) in calls.iter().enumerate() {
        built.push(encoder.encode(i as u64, meta(i), |fbb| {
            (*call_type, call.pack(fbb).unwrap())
        }));
        direct.push_direct(i as u64, meta(i), *call_type, fields);
    }
    let from_builder = write_and_read(built);
    let from_direct = write_and_read(direct);
    assert_eq!(from_builder.len(), calls.len());
    assert_eq!(from_direct, from_builder);
    for (record, (call, _, _)) in from_direct.iter().zip(&calls) {
        assert_eq!(&record.call, call);
    }
}

#[test]
fn field_lists_that_do_not_match_the_schema_are_named() {
    use trace_format::direct::schema_mismatch;
    for (_, call_type, fields) in calls() {
        assert_eq!(schema_mismatch(call_type, &fields), None);
    }
    // A field missing, and a `uint` where the schema has a `ulong`.
    let missing = schema_mismatch(Call::CmdDraw, &[F::U64(1), F::U32(3)]).unwrap();
    assert!(
        missing.contains("CmdDraw: 2 fields given, the schema has 5"),
        "{missing}"
    );
    let wrong = schema_mismatch(Call::CmdBindPipeline, &[F::U64(1), F::U32(0), F::U32(2)]).unwrap();
    assert!(wrong.contains("CmdBindPipeline.pipeline"), "{wrong}");
}

#[test]
fn interleaved_blocks_from_many_threads_merge_into_one_gapless_order() {
    // Four threads take numbers call by call (0, 4, 8, … on the first; 1, 5, 9, … on
    // the second; …), each fills two blocks, and the blocks arrive in a scrambled
    // order: the sequencer holds what is early and writes every record by number.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.mscope");
    let mut sequencer =
        Sequencer::new(TraceWriter::create(&path, &WriterOptions::default()).unwrap());
    let mut blocks = Vec::new();
    for thread in 0..4u64 {
        for half in 0..2u64 {
            let mut block = RecordBlock::new();
            for i in 0..50u64 {
                let seq = (half * 50 + i) * 4 + thread;
                let fields = [
                    F::U64(thread),
                    F::U32(seq as u32),
                    F::U32(1),
                    F::U32(0),
                    F::U32(0),
                ];
                block.push_direct(seq, meta(seq as usize), Call::CmdDraw, &fields);
            }
            blocks.push(block);
        }
    }
    for i in [7, 2, 5, 0, 3, 6, 1, 4] {
        sequencer.add(std::mem::take(&mut blocks[i])).unwrap();
        if i != 4 {
            assert!(
                sequencer.waiting_for().is_some(),
                "a block of earlier records is to come"
            );
        }
    }
    assert_eq!(sequencer.held_bytes(), 0);
    assert_eq!(sequencer.waiting_for(), None);
    sequencer.finish().unwrap();
    let mut records = Vec::new();
    for chunk in TraceReader::open(&path).unwrap() {
        records.extend(chunk.unwrap().records().map(|r| r.unpack()));
    }
    assert_eq!(records.len(), 400);
    for (i, record) in records.iter().enumerate() {
        assert_eq!(record.envelope.seq, i as u64);
        let CallT::CmdDraw(draw) = &record.call else {
            panic!("record {i} is not a draw");
        };
        assert_eq!(draw.vertex_count, i as u32);
        assert_eq!(draw.command_buffer, i as u64 % 4);
    }
}
