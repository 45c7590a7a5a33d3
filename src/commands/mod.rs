//! The subcommands.

pub mod analyze;
pub mod browse;
pub mod capture;
pub mod ci;
pub mod dump;
pub mod import;
pub mod info;
pub mod replay;
pub mod sample;
pub mod shaders;
pub mod verify;

use std::fmt;
use std::str::FromStr;

/// A user error in the arguments or input that is not a file-format error.
#[derive(Debug)]
pub struct BadInput(pub String);

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// An inclusive range of frames, written `A-B`, `A-` or `A`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRange {
    /// First frame.
    pub first: u64,
    /// Last frame, inclusive.
    pub last: u64,
}

impl FromStr for FrameRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let number = |t: &str| {
            t.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}` is not a frame range like 10-20"))
        };
        let (first, last) = match s.split_once('-') {
            Some((a, "")) => (number(a)?, u64::MAX),
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(s)?, number(s)?),
        };
        if first > last {
            return Err(format!("frame range `{s}` ends before it starts"));
        }
        Ok(FrameRange { first, last })
    }
}

#[cfg(test)]
mod tests {
    use super::FrameRange;

    #[test]
    fn frame_ranges_parse() {
        assert_eq!(
            "10-20".parse(),
            Ok(FrameRange {
                first: 10,
                last: 20
            })
        );
        assert_eq!("7".parse(), Ok(FrameRange { first: 7, last: 7 }));
        assert_eq!(
            "3-".parse(),
            Ok(FrameRange {
                first: 3,
                last: u64::MAX
            })
        );
        assert!("5-2".parse::<FrameRange>().is_err());
        assert!("x".parse::<FrameRange>().is_err());
    }
}
