//! Reading the push buffers NVK submitted, as `libmacroscope_nvk_tap.so` (crate
//! `nvk-tap`) records them: `MSNVKTAP`, a `u32` version, then `u32 tag, u32 bytes,
//! payload` records — a channel (tag 1), or an `EXEC` (tag 2) with its pushes.

use std::path::{Path, PathBuf};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"MSNVKTAP";
/// The version this reader reads.
const VERSION: u32 = 1;
const TAG_CHANNEL: u32 = 1;
const TAG_EXEC: u32 = 2;
/// A push the tap could not read.
const PUSH_UNREADABLE: u32 = 2;

/// Why a tap file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TapError {
    /// Reading the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not what the tap writes, or is damaged.
    #[error("{path}: byte {offset}: {what}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// Where.
        offset: usize,
        /// What was wrong.
        what: String,
    },
}

/// One push buffer of an `EXEC`.
#[derive(Clone, Debug)]
pub struct TapPush {
    /// Its GPU address.
    pub va: u64,
    /// Its words (empty when the tap could not read them).
    pub words: Vec<u32>,
    /// Whether the tap could not read it.
    pub unreadable: bool,
}

/// One `EXEC` ioctl.
#[derive(Clone, Debug)]
pub struct TapExec {
    /// The channel it ran on.
    pub channel: u32,
    /// Its push buffers, in order.
    pub pushes: Vec<TapPush>,
}

/// Everything one run of NVK submitted.
#[derive(Clone, Debug, Default)]
pub struct Tap {
    /// The channels NVK made, in order.
    pub channels: Vec<u32>,
    /// Every `EXEC`, in order.
    pub execs: Vec<TapExec>,
}

/// Reads a tap file. A record cut off at the end (a run that died while writing) ends
/// the file; anything else out of place is an error naming its offset.
pub fn read_tap(path: &Path) -> Result<Tap, TapError> {
    let bytes = std::fs::read(path).map_err(|source| TapError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_tap(&bytes).map_err(|(offset, what)| TapError::Damaged {
        path: path.to_path_buf(),
        offset,
        what,
    })
}

/// A little-endian reader over a byte slice that says where it failed.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn u32(&mut self) -> Result<u32, (usize, String)> {
        let b = self
            .bytes
            .get(self.at..self.at + 4)
            .ok_or((self.at, "ends inside a 32-bit field".to_string()))?;
        self.at += 4;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, (usize, String)> {
        let lo = self.u32()?;
        let hi = self.u32()?;
        Ok(u64::from(lo) | (u64::from(hi) << 32))
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.at
    }
}

fn parse_tap(bytes: &[u8]) -> Result<Tap, (usize, String)> {
    if bytes.get(..8) != Some(&MAGIC[..]) {
        return Err((0, "not a tap file (no MSNVKTAP magic)".to_string()));
    }
    let mut file = Cursor { bytes, at: 8 };
    let version = file.u32()?;
    if version != VERSION {
        return Err((8, format!("version {version}, this reader reads {VERSION}")));
    }
    let mut tap = Tap::default();
    while file.left() >= 8 {
        let record_at = file.at;
        let tag = file.u32()?;
        let len = file.u32()? as usize;
        if len > file.left() {
            // The run ended while this record was being written.
            break;
        }
        let payload = &bytes[file.at..file.at + len];
        file.at += len;
        let mut p = Cursor {
            bytes: payload,
            at: 0,
        };
        let located = |(at, what): (usize, String)| (record_at + 8 + at, what);
        match tag {
            TAG_CHANNEL => tap.channels.push(p.u32().map_err(located)?),
            TAG_EXEC => tap.execs.push(parse_exec(&mut p).map_err(located)?),
            other => return Err((record_at, format!("unknown record tag {other}"))),
        }
    }
    Ok(tap)
}

fn parse_exec(p: &mut Cursor<'_>) -> Result<TapExec, (usize, String)> {
    let channel = p.u32()?;
    let count = p.u32()? as usize;
    // Each push takes at least 16 bytes: the count cannot ask for more than the
    // payload holds.
    if count > p.left() / 16 {
        return Err((p.at - 4, format!("{count} pushes do not fit in the record")));
    }
    let mut pushes = Vec::with_capacity(count);
    for _ in 0..count {
        let va = p.u64()?;
        let flags = p.u32()?;
        let n = p.u32()? as usize;
        if n > p.left() / 4 {
            return Err((p.at - 4, format!("{n} words do not fit in the record")));
        }
        let words = (0..n).map(|_| p.u32()).collect::<Result<Vec<_>, _>>()?;
        pushes.push(TapPush {
            va,
            words,
            unreadable: flags & PUSH_UNREADABLE != 0,
        });
    }
    Ok(TapExec { channel, pushes })
}

impl Tap {
    /// The channels NVK ran the trace's work on, in the order work first came to each.
    /// Each queue's channel binds a 3D class to subchannel 0 in its first push
    /// (`SET_OBJECT`, which `nvk_queue_init_context_state` pushes first); those
    /// submitted to after that set-up are the ones worked on. A device the program made
    /// and never submitted to (Firefox makes one to probe the GPU) leaves a channel
    /// holding its set-up alone; with no work anywhere, the first 3D channel alone.
    /// NVK makes a channel for each queue of each device, as the model does: a program
    /// that makes a device after destroying one (VLC) worked on several.
    pub fn channels_3d(&self) -> Result<Vec<u32>, NoChannel> {
        // Each 3D channel, with the non-empty executions on it so far.
        let mut channels: Vec<(u32, usize)> = Vec::new();
        let mut worked: Vec<u32> = Vec::new();
        for exec in &self.execs {
            if exec
                .pushes
                .iter()
                .all(|p| p.words.is_empty() && !p.unreadable)
            {
                continue;
            }
            match channels.iter_mut().find(|(c, _)| *c == exec.channel) {
                Some((c, execs)) => {
                    *execs += 1;
                    if *execs == 2 {
                        worked.push(*c);
                    }
                }
                None if binds_3d(exec) => channels.push((exec.channel, 1)),
                None => {}
            }
        }
        match (worked.is_empty(), channels.first()) {
            (false, _) => Ok(worked),
            (true, Some((c, _))) => Ok(vec![*c]),
            (true, None) => Err(NoChannel),
        }
    }
}

/// No channel binds the 3D class: NVK never set a queue up ([`Tap::channels_3d`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoChannel;

/// Whether `exec`'s first push binds a 3D class to subchannel 0.
fn binds_3d(exec: &TapExec) -> bool {
    exec.pushes.first().is_some_and(|p| {
        let words = &p.words;
        words.len() >= 2 && words[0] & 0xe000_1fff == 0x2000_0000 && (words[1] & 0xff) == 0x97
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tag: u32, payload: &[u32]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&tag.to_le_bytes());
        b.extend_from_slice(&((payload.len() * 4) as u32).to_le_bytes());
        for w in payload {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b
    }

    /// An `EXEC` record on channel `ch` of one push holding `words`.
    fn exec(ch: u32, words: &[u32]) -> Vec<u8> {
        let mut p = vec![ch, 1, 0x1000, 0, 0, words.len() as u32];
        p.extend_from_slice(words);
        record(TAG_EXEC, &p)
    }

    fn file(records: &[Vec<u8>]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&VERSION.to_le_bytes());
        for r in records {
            b.extend_from_slice(r);
        }
        b
    }

    #[test]
    fn reads_channels_and_pushes_and_finds_the_3d_channel() {
        let bytes = file(&[
            record(TAG_CHANNEL, &[1]),
            record(TAG_CHANNEL, &[2]),
            exec(1, &[0x2001_8040, 0]),
            exec(2, &[0x2001_0000, 0xc597, 0x2001_0040, 7]),
        ]);
        let tap = parse_tap(&bytes).expect("reads");
        assert_eq!(tap.channels, vec![1, 2]);
        assert_eq!(tap.execs.len(), 2);
        assert_eq!(tap.execs[1].pushes[0].words.len(), 4);
        assert_eq!(tap.channels_3d(), Ok(vec![2]));
    }

    /// Firefox makes a device to probe the GPU and never submits to it, then draws on
    /// a second device's queue: NVK set up two 3D channels, and the one worked on is
    /// the one to compare.
    #[test]
    fn the_3d_channel_is_the_one_submitted_to_after_its_set_up() {
        let set_up = [0x2001_0000, 0xc597];
        let work = [0x2001_0040, 7];
        let probe_then_draw = file(&[
            record(TAG_CHANNEL, &[1]),
            exec(1, &set_up),
            record(TAG_CHANNEL, &[2]),
            exec(2, &set_up),
            exec(2, &work),
            exec(2, &work),
        ]);
        let tap = parse_tap(&probe_then_draw).expect("reads");
        assert_eq!(tap.channels_3d(), Ok(vec![2]));

        let idle = file(&[record(TAG_CHANNEL, &[1]), exec(1, &set_up)]);
        assert_eq!(parse_tap(&idle).expect("reads").channels_3d(), Ok(vec![1]));

        // Two queues' channels, the second worked on first.
        let two_queues = file(&[
            exec(1, &set_up),
            exec(2, &set_up),
            exec(2, &work),
            exec(1, &work),
        ]);
        let tap = parse_tap(&two_queues).expect("reads");
        assert_eq!(tap.channels_3d(), Ok(vec![2, 1]));

        let no_3d = file(&[exec(1, &[0x2001_8040, 0])]);
        let tap = parse_tap(&no_3d).expect("reads");
        assert_eq!(tap.channels_3d(), Err(NoChannel));
    }

    #[test]
    fn a_record_cut_at_the_end_ends_the_file_and_damage_is_named() {
        let mut bytes = file(&[record(TAG_CHANNEL, &[1]), record(TAG_CHANNEL, &[2])]);
        bytes.truncate(bytes.len() - 2);
        assert_eq!(parse_tap(&bytes).expect("reads").channels, vec![1]);

        let hostile = file(&[record(TAG_EXEC, &[4, u32::MAX])]);
        let (at, what) = parse_tap(&hostile).expect_err("refused");
        assert_eq!(at, 12 + 8 + 4);
        assert!(what.contains("do not fit"), "{what}");

        let (at, what) = parse_tap(b"MSNVKTAP\x02\0\0\0").expect_err("refused");
        assert_eq!((at, what.contains("version 2")), (8, true));
        assert!(parse_tap(b"not a tap").is_err());
    }
}
