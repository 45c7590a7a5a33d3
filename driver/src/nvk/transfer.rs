//! Transfers through the copy engine (`nvk_cmd_copy.c`): vkCmdUpdateBuffer's copy of
//! the data NVK uploads into the command buffer. (Buffer copies and fills go through
//! NVK's meta compute path on a queue with compute: see `dispatch.rs`.)

use super::encoder::{CommandEncoder, Recorded};
use crate::class::copy::{self, LaunchDma};
use crate::push::SUBC_COPY;

/// The model's upload memory for vkCmdUpdateBuffer's data (after the compute
/// uploads').
const UPLOAD_BASE: u64 = 0x1_0080_0000;

impl CommandEncoder<'_> {
    /// vkCmdUpdateBuffer of `size` bytes to `dst`. Mirrors nvk_CmdUpdateBuffer: the
    /// data uploaded to the command buffer (counted as memory words; the replay writes
    /// it to the destination itself), then one pipelined copy-engine line.
    pub fn update_buffer(&mut self, dst: u64, size: u32) -> Recorded {
        let before = self.push.len();
        let src = UPLOAD_BASE;
        self.push.inc(
            SUBC_COPY,
            copy::OFFSET_IN_UPPER,
            &[
                (src >> 32) as u32,
                src as u32,
                (dst >> 32) as u32,
                dst as u32,
            ],
        );
        self.push.inc(SUBC_COPY, copy::LINE_LENGTH_IN, &[size, 1]);
        let launch = LaunchDma {
            pipelined: true,
            flush: true,
            src_pitch: true,
            dst_pitch: true,
            multi_line: true,
            remap: false,
        };
        self.push
            .immd_or_mthd(SUBC_COPY, copy::LAUNCH_DMA, launch.pack());
        Recorded {
            memory_words: size.div_ceil(4),
            ..self.recorded(before)
        }
    }
}
