//! Damaged files: cut at every chunk boundary and inside chunks, flipped bits, hostile
//! size fields, a footer pointing outside the file. Every case gives an error naming the
//! offset and what was wrong, keeps every whole chunk before the damage, and never
//! panics or allocates what the file merely claims.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trace_format::generated::trace::{CallT, CmdDrawT};
use trace_format::wire::{ChunkHeader, CHUNK_HEADER_LEN, FILE_HEADER_LEN, TRAILER_LEN};
use trace_format::{CallMeta, ErrorKind, ReadOptions, TraceReader, TraceWriter, WriterOptions};

const FRAMES: u32 = 6;
const DRAWS_PER_FRAME: u32 = 50;

/// A finished trace of FRAMES chunks (one per frame), and the chunk offsets.
fn write_trace(dir: &Path) -> (PathBuf, Vec<u64>) {
    let path = dir.join("good.mscope");
    let mut writer = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
    for frame in 0..FRAMES {
        for draw in 0..DRAWS_PER_FRAME {
            let mut cmd = CmdDrawT::default();
            cmd.vertex_count = frame * 1000 + draw;
            writer
                .append(CallMeta::default(), &CallT::CmdDraw(Box::new(cmd)))
                .unwrap();
        }
        writer.end_frame(CallMeta::default()).unwrap();
    }
    writer.finish().unwrap();
    let offsets = TraceReader::open(&path)
        .unwrap()
        .container()
        .index()
        .unwrap()
        .iter()
        .map(|e| e.offset)
        .collect();
    (path, offsets)
}

/// What reading `path` gives: the draws of every whole chunk read, and the error. The
/// serial reader and the read-ahead reader must agree exactly.
fn read_all(path: &Path) -> (Vec<u32>, Option<trace_format::Error>) {
    let serial = read_with(path, 0);
    let parallel = read_with(path, 3);
    assert_eq!(serial.0, parallel.0, "read-ahead read other records");
    assert_eq!(
        serial.1.as_ref().map(ToString::to_string),
        parallel.1.as_ref().map(ToString::to_string),
        "read-ahead reported another error"
    );
    serial
}

fn read_with(path: &Path, threads: usize) -> (Vec<u32>, Option<trace_format::Error>) {
    let mut reader = match TraceReader::open_with(path, &ReadOptions::with_threads(threads)) {
        Ok(r) => r,
        Err(e) => return (vec![], Some(e)),
    };
    let mut draws = Vec::new();
    for chunk in &mut reader {
        match chunk {
            Ok(chunk) => draws.extend(
                chunk
                    .records()
                    .filter_map(|r| r.call_as_cmd_draw())
                    .map(|d| d.vertex_count()),
            ),
            Err(e) => return (draws, Some(e)),
        }
    }
    (draws, None)
}

fn expected_draws(frames: u32) -> Vec<u32> {
    (0..frames)
        .flat_map(|f| (0..DRAWS_PER_FRAME).map(move |d| f * 1000 + d))
        .collect()
}

fn write_bytes(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn cut_at_every_chunk_boundary_reads_every_whole_chunk_without_error() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offsets) = write_trace(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    for (whole, &offset) in offsets.iter().enumerate() {
        let cut = write_bytes(dir.path(), "cut.mscope", &bytes[..offset as usize]);
        let (draws, error) = read_all(&cut);
        assert!(error.is_none(), "cut at {offset}: {error:?}");
        assert_eq!(draws, expected_draws(whole as u32), "cut at {offset}");
    }
}

#[test]
fn cut_inside_a_chunk_reads_the_chunks_before_and_names_the_torn_one() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offsets) = write_trace(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let index_offset = bytes.len() - TRAILER_LEN - offsets.len() * 32;
    let mut ends: Vec<u64> = offsets[1..].to_vec();
    ends.push(index_offset as u64);
    for (chunk, (&start, &end)) in offsets.iter().zip(&ends).enumerate() {
        for cut_at in [
            start + 1,
            start + CHUNK_HEADER_LEN as u64 - 1,
            start + CHUNK_HEADER_LEN as u64 + 3,
            (start + end) / 2,
            end - 1,
        ] {
            let cut = write_bytes(dir.path(), "torn.mscope", &bytes[..cut_at as usize]);
            let (draws, error) = read_all(&cut);
            assert_eq!(draws, expected_draws(chunk as u32), "cut at {cut_at}");
            let error = error.expect("a torn chunk is an error");
            assert_eq!(error.offset(), Some(start), "cut at {cut_at}: {error}");
            assert!(
                matches!(error.kind(), ErrorKind::Truncated { .. }),
                "cut at {cut_at}: {error}"
            );
            assert!(
                error
                    .to_string()
                    .contains(&format!("chunk {chunk} at offset {start}")),
                "{error}"
            );
        }
    }
}

#[test]
fn a_cut_inside_the_footer_still_reads_every_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offsets) = write_trace(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let index_offset = bytes.len() - TRAILER_LEN - offsets.len() * 32;
    // Cut inside the trailer: the index is then trailing bytes that do not parse as a
    // chunk, reported after every chunk was read.
    let cut = write_bytes(dir.path(), "nofooter.mscope", &bytes[..bytes.len() - 5]);
    let (draws, error) = read_all(&cut);
    assert_eq!(draws, expected_draws(FRAMES));
    let error = error.expect("the orphaned index is not a chunk");
    assert!(
        matches!(error.kind(), ErrorKind::BadChunkMagic { .. }),
        "{error}"
    );
    assert_eq!(error.offset(), Some(index_offset as u64));
}

#[test]
fn a_flipped_bit_in_any_chunk_byte_is_a_checksum_error_at_that_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offsets) = write_trace(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let target_chunk = 2;
    let start = offsets[target_chunk] as usize;
    let end = offsets[target_chunk + 1] as usize;
    // Flip bits in the payload and in the header's sizes and sequence fields.
    for at in (start + 4..end).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x10;
        let path = write_bytes(dir.path(), "flip.mscope", &damaged);
        let (draws, error) = read_all(&path);
        let error = error.unwrap_or_else(|| panic!("flip at {at} went unnoticed"));
        assert_eq!(draws, expected_draws(target_chunk as u32), "flip at {at}");
        assert_eq!(error.offset(), Some(start as u64), "flip at {at}: {error}");
    }
}

#[test]
fn a_chunk_claiming_a_huge_decompressed_size_is_refused_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offsets) = write_trace(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let start = offsets[1] as usize;
    let mut header_bytes = [0u8; CHUNK_HEADER_LEN];
    header_bytes.copy_from_slice(&bytes[start..start + CHUNK_HEADER_LEN]);
    let mut header = ChunkHeader::parse(&header_bytes).unwrap();
    header.uncompressed_len = 0xffff_fff0;
    header.crc32 = header.compute_crc(
        &bytes[start + CHUNK_HEADER_LEN..start + CHUNK_HEADER_LEN + header.compressed_len as usize],
    );
    bytes[start..start + CHUNK_HEADER_LEN].copy_from_slice(&header.to_bytes());
    let path = write_bytes(dir.path(), "huge.mscope", &bytes);
    let (draws, error) = read_all(&path);
    assert_eq!(draws, expected_draws(1));
    let error = error.unwrap();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::SizeLimit {
                what: "decompressed size",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(error.offset(), Some(start as u64));
}

#[test]
fn a_chunk_claiming_more_compressed_bytes_than_the_file_has_is_torn() {
    let dir = tempfile::tempdir().unwrap();
    let (path, offsets) = write_trace(dir.path());
    let bytes = std::fs::read(&path).unwrap();
    let last = *offsets.last().unwrap() as usize;
    let mut damaged = bytes[..bytes.len() - TRAILER_LEN - offsets.len() * 32].to_vec();
    let mut header_bytes = [0u8; CHUNK_HEADER_LEN];
    header_bytes.copy_from_slice(&damaged[last..last + CHUNK_HEADER_LEN]);
    let mut header = ChunkHeader::parse(&header_bytes).unwrap();
    header.compressed_len = 60 << 20;
    damaged[last..last + CHUNK_HEADER_LEN].copy_from_slice(&header.to_bytes());
    let path = write_bytes(dir.path(), "long.mscope", &damaged);
    let error = read_all(&path).1.unwrap();
    assert!(
        matches!(error.kind(), ErrorKind::Truncated { what: "chunk", .. }),
        "{error}"
    );
}

#[test]
fn a_footer_pointing_outside_the_file_is_an_error_naming_the_footer() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = write_trace(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let trailer = bytes.len() - TRAILER_LEN;
    bytes[trailer..trailer + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let path = write_bytes(dir.path(), "footer.mscope", &bytes);
    let error = TraceReader::open(&path).err().unwrap();
    assert_eq!(error.offset(), Some(trailer as u64));
    assert!(error.to_string().contains("does not fit a file"), "{error}");

    // An index entry pointing past the chunks is caught by the footer's checksum.
    let (path, offsets) = write_trace(dir.path());
    let mut bytes = std::fs::read(&path).unwrap();
    let entry = bytes.len() - TRAILER_LEN - offsets.len() * 32;
    bytes[entry..entry + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let path = write_bytes(dir.path(), "entry.mscope", &bytes);
    let error = TraceReader::open(&path).err().unwrap();
    assert!(
        matches!(error.kind(), ErrorKind::ChecksumMismatch { .. }),
        "{error}"
    );
}

#[test]
fn not_a_trace_is_bad_magic_and_a_short_file_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_bytes(
        dir.path(),
        "text.mscope",
        b"hello, this is not a trace at all",
    );
    let error = TraceReader::open(&path).err().unwrap();
    assert!(matches!(error.kind(), ErrorKind::BadMagic), "{error}");
    let path = write_bytes(dir.path(), "short.mscope", b"\x89MSC");
    let error = TraceReader::open(&path).err().unwrap();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Truncated {
                what: "file header",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn an_unfinished_writer_leaves_every_chunk_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dropped.mscope");
    {
        let mut writer = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
        for frame in 0..3 {
            let mut cmd = CmdDrawT::default();
            cmd.vertex_count = frame;
            writer
                .append(CallMeta::default(), &CallT::CmdDraw(Box::new(cmd)))
                .unwrap();
            writer.end_frame(CallMeta::default()).unwrap();
        }
        // Dropped without finish(): no footer.
    }
    let reader = TraceReader::open(&path).unwrap();
    assert!(reader.container().index().is_none());
    let mut frames = 0;
    for chunk in reader {
        assert_eq!(chunk.unwrap().header().first_frame, frames);
        frames += 1;
    }
    assert_eq!(frames, 3);
    let mut reader = TraceReader::open(&path).unwrap();
    reader.seek_to_frame(2).unwrap();
    assert_eq!(reader.next().unwrap().unwrap().header().first_frame, 2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any damage to any bytes gives records or an error, never a panic.
    #[test]
    fn random_damage_never_panics(edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8), cut in any::<prop::sample::Index>()) {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_trace(dir.path());
        let mut bytes = std::fs::read(&path).unwrap();
        for (at, value) in edits {
            let i = FILE_HEADER_LEN + at.index(bytes.len() - FILE_HEADER_LEN);
            bytes[i] = value;
        }
        let keep = FILE_HEADER_LEN + cut.index(bytes.len() - FILE_HEADER_LEN + 1);
        let path = write_bytes(dir.path(), "fuzz.mscope", &bytes[..keep]);
        let (draws, _) = read_all(&path);
        // Whatever was read is a prefix of what was written.
        let all = expected_draws(FRAMES);
        prop_assert_eq!(&all[..draws.len()], &draws[..]);
    }
}
