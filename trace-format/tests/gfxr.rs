//! GFXReconstruct files built byte by byte: the reader's framing, compression and
//! parameter decoding, and the errors a damaged file gets, without a Vulkan device
//! (tests under real programs are in benches/tests/gfxr.rs).

use std::path::Path;

use trace_format::generated::trace::Call;
use trace_format::gfxr::{self, tables};
use trace_format::TraceReader;

/// The call id of `name`.
fn id(name: &str) -> u32 {
    trace_format::gfxr::generated::COMMANDS
        .iter()
        .find(|c| c.name == name)
        .unwrap()
        .id
}

/// A file header with compression `compression` (0 none, 1 LZ4, 3 zstd).
fn header(compression: u32) -> Vec<u8> {
    let mut b = b"GFXR".to_vec();
    for w in [0u32, 0, 1, 1, compression] {
        b.extend_from_slice(&w.to_le_bytes());
    }
    b
}

/// A function call block of `name` with parameter bytes `params`, compressed as
/// `compression` says.
fn call(name: &str, params: &[u8], compression: u32) -> Vec<u8> {
    let mut body = id(name).to_le_bytes().to_vec();
    body.extend_from_slice(&7u64.to_le_bytes()); // thread
    let mut block_type = 4u32;
    match compression {
        0 => body.extend_from_slice(params),
        1 => {
            block_type |= 0x8000_0000;
            body.extend_from_slice(&(params.len() as u64).to_le_bytes());
            body.extend_from_slice(&lz4_flex::block::compress(params));
        }
        _ => {
            block_type |= 0x8000_0000;
            body.extend_from_slice(&(params.len() as u64).to_le_bytes());
            body.extend_from_slice(&zstd::bulk::compress(params, 3).unwrap());
        }
    }
    let mut b = (body.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(&block_type.to_le_bytes());
    b.extend_from_slice(&body);
    b
}

/// vkCmdDraw(commandBuffer 0x55, 3, 2, 1, 0).
fn draw_params() -> Vec<u8> {
    let mut p = 0x55u64.to_le_bytes().to_vec();
    for w in [3u32, 2, 1, 0] {
        p.extend_from_slice(&w.to_le_bytes());
    }
    p
}

fn import(dir: &Path, bytes: &[u8]) -> (Result<gfxr::ImportStats, String>, std::path::PathBuf) {
    let input = dir.join("in.gfxr");
    let output = dir.join("out.mscope");
    std::fs::write(&input, bytes).unwrap();
    let r = gfxr::import(&input, &output, |_, _| {}).map_err(|e| e.0.to_string());
    (r, output)
}

fn draws(trace: &Path) -> Vec<(u64, u32, u32)> {
    let mut out = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let chunk = chunk.unwrap();
        for r in chunk.records() {
            if r.call_type() == Call::CmdDraw {
                let d = r.call_as_cmd_draw().unwrap();
                out.push((d.command_buffer(), d.vertex_count(), d.instance_count()));
            }
        }
    }
    out
}

#[test]
fn a_draw_reads_back_from_every_compression() {
    let dir = tempfile::tempdir().unwrap();
    for compression in [0, 1, 3] {
        let mut file = header(compression);
        file.extend(call("vkCmdDraw", &draw_params(), compression));
        let (stats, trace) = import(dir.path(), &file);
        let stats = stats.unwrap();
        assert_eq!(stats.calls, 1);
        assert_eq!(
            draws(&trace),
            vec![(0x55, 3, 2)],
            "compression {compression}"
        );
    }
}

#[test]
fn a_call_whose_bytes_do_not_add_up_is_named_with_its_block_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = header(0);
    file.extend(call("vkCmdDraw", &draw_params(), 0));
    let second = file.len();
    let mut long = draw_params();
    long.extend_from_slice(&[0; 4]);
    file.extend(call("vkCmdDraw", &long, 0));
    let (result, trace) = import(dir.path(), &file);
    let error = result.unwrap_err();
    assert!(
        error.contains(&format!("block 1 at offset {second}")),
        "{error}"
    );
    assert!(
        error.contains("vkCmdDraw: 4 bytes left after the call's parameters"),
        "{error}"
    );
    // What came before the damage is a readable trace.
    assert_eq!(draws(&trace), vec![(0x55, 3, 2)]);
}

#[test]
fn hostile_sizes_are_refused_before_anything_is_allocated() {
    let dir = tempfile::tempdir().unwrap();
    // A block claiming more than the file holds.
    let mut file = header(0);
    let at = file.len();
    file.extend_from_slice(&(u64::MAX / 2).to_le_bytes());
    file.extend_from_slice(&4u32.to_le_bytes());
    let (result, _) = import(dir.path(), &file);
    let error = result.unwrap_err();
    assert!(
        error.contains(&format!("block 0 at offset {at}")) && error.contains("claims"),
        "{error}"
    );

    // A compressed block claiming a huge uncompressed size.
    let mut body = id("vkCmdDraw").to_le_bytes().to_vec();
    body.extend_from_slice(&0u64.to_le_bytes());
    body.extend_from_slice(&(1u64 << 50).to_le_bytes());
    body.extend_from_slice(&[0; 8]);
    let mut file = header(1);
    file.extend_from_slice(&(body.len() as u64).to_le_bytes());
    file.extend_from_slice(&0x8000_0004u32.to_le_bytes());
    file.extend_from_slice(&body);
    let error = import(dir.path(), &file).0.unwrap_err();
    assert!(error.contains("uncompressed bytes, more than"), "{error}");

    // An array claiming more elements than its block has bytes: vkCmdSetViewport's
    // viewports.
    let mut p = 1u64.to_le_bytes().to_vec();
    p.extend_from_slice(&0u32.to_le_bytes());
    p.extend_from_slice(&1u32.to_le_bytes());
    p.extend_from_slice(&(0x20 | 0x4 | 0x40 | 0x80u32).to_le_bytes()); // struct array, address, data
    p.extend_from_slice(&0x1000u64.to_le_bytes());
    p.extend_from_slice(&(1u64 << 40).to_le_bytes());
    let mut file = header(0);
    file.extend(call("vkCmdSetViewport", &p, 0));
    let error = import(dir.path(), &file).0.unwrap_err();
    assert!(
        error.contains("vkCmdSetViewport.pViewports: length 1099511627776"),
        "{error}"
    );
}

#[test]
fn a_file_that_is_not_gfxreconstruct_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = import(dir.path(), b"MSCP and then some bytes");
    assert!(result.unwrap_err().contains("not a GFXReconstruct file"));
    assert!(!gfxr::is_gfxr(&dir.path().join("in.gfxr")));
    let mut file = header(0);
    file[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    let (result, _) = import(dir.path(), &file);
    assert!(result.unwrap_err().contains("file options do not fit"));
}

#[test]
fn the_tables_know_every_command_the_capture_layer_records_generically() {
    // Every command has a unique id, and the ids are sorted for lookup.
    let all = &trace_format::gfxr::generated::COMMANDS;
    assert!(all.windows(2).all(|w| w[0].id < w[1].id));
    let draw = tables::command(id("vkCmdDraw")).unwrap();
    assert_eq!(draw.name, "vkCmdDraw");
    assert!(!draw.generic, "vkCmdDraw is recorded typed");
    assert!(tables::command(id("vkCmdSetViewport")).unwrap().generic);
}

/// A meta-data block of type `kind` (family Vulkan) with `words` then `data`.
fn meta(kind: u32, words: &[u64], data: &[u8]) -> Vec<u8> {
    let mut body = ((1u32 << 16) | kind).to_le_bytes().to_vec();
    for w in words {
        body.extend_from_slice(&w.to_le_bytes());
    }
    body.extend_from_slice(data);
    let mut b = (body.len() as u64).to_le_bytes().to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&body);
    b
}

/// Every memory-contents record: (memory, offset, bytes).
fn contents(trace: &Path) -> Vec<(u64, u64, Vec<u8>)> {
    let mut out = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let chunk = chunk.unwrap();
        for r in chunk.records() {
            if let Some(m) = r.call_as_memory_contents() {
                out.push((m.memory(), m.offset(), m.data().unwrap().bytes().to_vec()));
            }
        }
    }
    out
}

#[test]
fn memory_fills_land_at_the_mapping_and_buffer_initialisation_where_the_buffer_is_bound() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = header(0);
    // vkMapMemory(device 1, memory 3, offset 4096, size 256, flags 0, ppData) = VK_SUCCESS.
    let mut map = Vec::new();
    for w in [1u64, 3, 4096, 256] {
        map.extend_from_slice(&w.to_le_bytes());
    }
    map.extend_from_slice(&0u32.to_le_bytes());
    map.extend_from_slice(&(0x2 | 0x40 | 0x80u32).to_le_bytes()); // single, address, data
    map.extend_from_slice(&0x7000u64.to_le_bytes());
    map.extend_from_slice(&0x9000u64.to_le_bytes());
    map.extend_from_slice(&0u32.to_le_bytes());
    file.extend(call("vkMapMemory", &map, 0));
    // A fill of 4 bytes at 16 into the mapping: 4112 into the memory object.
    file.extend(meta(2, &[7, 3, 16, 4], &[1, 2, 3, 4]));
    // vkBindBufferMemory(device 1, buffer 2, memory 3, offset 64) = VK_SUCCESS, then the
    // buffer's contents in a trimmed capture's snapshot.
    let mut bind = Vec::new();
    for w in [1u64, 2, 3, 64] {
        bind.extend_from_slice(&w.to_le_bytes());
    }
    bind.extend_from_slice(&0u32.to_le_bytes());
    file.extend(call("vkBindBufferMemory", &bind, 0));
    file.extend(meta(7, &[7, 1, 2, 2], &[9, 8]));
    let (stats, trace) = import(dir.path(), &file);
    let stats = stats.unwrap();
    assert_eq!(stats.memory_fills, 2, "{stats:?}");
    assert_eq!(
        contents(&trace),
        vec![(3, 4112, vec![1, 2, 3, 4]), (3, 64, vec![9, 8])]
    );
}

#[test]
fn a_missing_file_is_the_system_s_refusal_not_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.gfxr");
    let output = dir.path().join("out.mscope");
    let failed = gfxr::import(&missing, &output, |_, _| {}).unwrap_err();
    assert!(!failed.0.is_bad_input(), "{}", failed.0);
    assert!(
        !output.exists(),
        "no trace is written for a file that cannot be read"
    );
    let (result, _) = import(dir.path(), b"GFXR");
    let error = gfxr::import(&dir.path().join("in.gfxr"), &output, |_, _| {}).unwrap_err();
    assert!(error.0.is_bad_input(), "{}", error.0);
    assert!(result
        .unwrap_err()
        .contains("a file header needs 16 bytes, the file has 4"));
}
