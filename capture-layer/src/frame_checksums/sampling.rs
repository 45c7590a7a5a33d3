//! Which frames are read back and checksummed. Reading a frame back is a copy of every
//! presented image and a CRC-32 of its texels: nothing on a GPU that copies beside the
//! program, but on a device that renders on the CPU (lavapipe) the copy is CPU work the
//! size of the image each frame (vkcube, 2000 frames: 1.26× the program's wall time with
//! every frame read back, 1.09× with `auto`, in one interleaved set of 15 runs). So by
//! default every frame of a short capture is checksummed, and a long one's at a bounded
//! rate; a user who wants every frame of a long capture, or none, says so
//! (`MACROSCOPE_CAPTURE_FRAME_CHECKSUMS`).

use std::time::{Duration, Instant};

/// How a capture chooses the frames it checksums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameChecksums {
    /// None: swapchains are left as the program made them.
    Off,
    /// Every `n`th recorded frame, the first included (`1`: every frame).
    Every(u32),
    /// Every frame of the first [`AUTO_EVERY_FRAME`] recorded, then one a
    /// [`AUTO_INTERVAL`] at most: a long capture's read-backs cost a bounded share of
    /// its time however fast the program presents.
    Auto,
}

/// In [`FrameChecksums::Auto`], how many recorded frames are each checksummed.
pub const AUTO_EVERY_FRAME: u64 = 100;

/// In [`FrameChecksums::Auto`], the least time between two checksummed frames after the
/// first [`AUTO_EVERY_FRAME`].
pub const AUTO_INTERVAL: Duration = Duration::from_millis(250);

impl FrameChecksums {
    /// Reads `0` or `none`, `all`, `auto`, or a frame period `N`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "0" | "none" => Some(Self::Off),
            "all" => Some(Self::Every(1)),
            "auto" => Some(Self::Auto),
            n => n.parse::<u32>().ok().filter(|&n| n > 0).map(Self::Every),
        }
    }
}

/// The choice as a capture goes: which frames so far were checksummed.
#[derive(Debug)]
pub struct Sampler {
    policy: FrameChecksums,
    /// When the last checksummed frame was presented.
    last: Option<Instant>,
    /// The last frame asked about and the answer: a frame that both presents and names
    /// images at its boundary is asked twice and answered once.
    decided: Option<(u64, bool)>,
}

impl Sampler {
    /// A capture's sampler, nothing checksummed yet.
    pub const fn new(policy: FrameChecksums) -> Self {
        Self {
            policy,
            last: None,
            decided: None,
        }
    }

    /// Whether the frame `recorded` frames into the capture (0 for its first), presented
    /// `now`, is read back; if so, it counts as the last one read back. Asked again
    /// about the same frame, the answer is the same.
    pub fn take(&mut self, recorded: u64, now: Instant) -> bool {
        if let Some((_, answer)) = self.decided.filter(|&(frame, _)| frame == recorded) {
            return answer;
        }
        let wanted = match self.policy {
            FrameChecksums::Off => false,
            FrameChecksums::Every(n) => recorded % u64::from(n.max(1)) == 0,
            FrameChecksums::Auto => {
                recorded < AUTO_EVERY_FRAME
                    || self
                        .last
                        .is_none_or(|last| now.saturating_duration_since(last) >= AUTO_INTERVAL)
            }
        };
        if wanted {
            self.last = Some(now);
        }
        self.decided = Some((recorded, wanted));
        wanted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frames a sampler takes among `frames` presented `every` apart.
    fn taken(policy: FrameChecksums, frames: u64, every: Duration) -> Vec<u64> {
        let start = Instant::now();
        let mut sampler = Sampler::new(policy);
        (0..frames)
            .filter(|&f| sampler.take(f, start + every * f as u32))
            .collect()
    }

    #[test]
    fn settings_name_every_frame_none_a_period_or_the_automatic_choice() {
        assert_eq!(FrameChecksums::parse("1"), Some(FrameChecksums::Every(1)));
        assert_eq!(FrameChecksums::parse("all"), Some(FrameChecksums::Every(1)));
        assert_eq!(FrameChecksums::parse("0"), Some(FrameChecksums::Off));
        assert_eq!(FrameChecksums::parse("none"), Some(FrameChecksums::Off));
        assert_eq!(FrameChecksums::parse("30"), Some(FrameChecksums::Every(30)));
        assert_eq!(FrameChecksums::parse("auto"), Some(FrameChecksums::Auto));
        for bad in ["", "-2", "some", "1.5"] {
            assert_eq!(FrameChecksums::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_period_takes_the_first_frame_and_every_nth_after_it() {
        let ms = Duration::from_millis(1);
        assert_eq!(taken(FrameChecksums::Every(1), 5, ms), [0, 1, 2, 3, 4]);
        assert_eq!(taken(FrameChecksums::Every(20), 60, ms), [0, 20, 40]);
        assert!(taken(FrameChecksums::Off, 60, ms).is_empty());
    }

    #[test]
    fn automatically_a_short_capture_has_every_frame_and_a_long_one_a_few_a_second() {
        // A program presenting 1000 frames a second for 3 seconds: its first 100
        // frames, then one each quarter second.
        let fast = taken(FrameChecksums::Auto, 3000, Duration::from_millis(1));
        assert_eq!(&fast[..100], (0..100).collect::<Vec<_>>().as_slice());
        assert_eq!(
            &fast[100..],
            [349, 599, 849, 1099, 1349, 1599, 1849, 2099, 2349, 2599, 2849]
        );
        // One presenting 2 frames a second: every frame, however long.
        let slow = taken(FrameChecksums::Auto, 300, Duration::from_millis(500));
        assert_eq!(slow.len(), 300);
    }

    #[test]
    fn a_frame_asked_about_twice_gets_one_answer() {
        // Past the first 100 frames, a frame that presents and also names images at its
        // boundary: both read back, or neither.
        let start = Instant::now();
        let mut sampler = Sampler::new(FrameChecksums::Auto);
        for f in 0..100 {
            assert!(sampler.take(f, start));
        }
        let later = start + Duration::from_secs(1);
        assert!(sampler.take(100, later));
        assert!(sampler.take(100, later + Duration::from_micros(10)));
        assert!(!sampler.take(101, later + Duration::from_millis(1)));
        assert!(!sampler.take(101, later + Duration::from_millis(2)));
    }
}
