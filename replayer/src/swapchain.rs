//! Swapchains as the trace records them: `vkCreateSwapchainKHR` and
//! `vkGetSwapchainImagesKHR` are recorded generically (their parameters' bytes in C
//! layout), and both replays need what they say — the model to know the images a
//! program renders to (their format, size and layers), the device replay to stand
//! them in offscreen.

/// The members of `VkSwapchainCreateInfoKHR` a replay uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SwapchainInfo {
    /// `flags` (`VkSwapchainCreateFlagsKHR`).
    pub flags: u32,
    /// `imageFormat`.
    pub format: u32,
    /// `imageExtent`: width and height.
    pub extent: [u32; 2],
    /// `imageArrayLayers`.
    pub layers: u32,
    /// `imageUsage`.
    pub usage: u32,
}

impl SwapchainInfo {
    /// Reads a `VkSwapchainCreateInfoKHR` from its bytes (64-bit C layout); `None`
    /// when they are too short.
    pub fn of_bytes(bytes: &[u8]) -> Option<SwapchainInfo> {
        let word = |at: usize| {
            bytes
                .get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
        };
        // sType 0, pNext 8, flags 16, surface 24, minImageCount 32, imageFormat 36,
        // imageColorSpace 40, imageExtent 44, imageArrayLayers 52, imageUsage 56.
        Some(SwapchainInfo {
            flags: word(16)?,
            format: word(36)?,
            extent: [word(44)?, word(48)?],
            layers: word(52)?,
            usage: word(56)?,
        })
    }
}

/// The `i`-th handle of an array of 64-bit handles, 0 past its end.
pub fn handle_at(bytes: &[u8], i: usize) -> u64 {
    bytes
        .get(i * 8..i * 8 + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_members_at_their_c_layout_offsets() {
        let mut bytes = vec![0u8; 104];
        let mut put = |at: usize, v: u32| bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put(16, 1);
        put(36, 44); // VK_FORMAT_B8G8R8A8_UNORM
        put(44, 640);
        put(48, 480);
        put(52, 2);
        put(56, 0x10);
        assert_eq!(
            SwapchainInfo::of_bytes(&bytes),
            Some(SwapchainInfo {
                flags: 1,
                format: 44,
                extent: [640, 480],
                layers: 2,
                usage: 0x10
            })
        );
        assert_eq!(SwapchainInfo::of_bytes(&bytes[..50]), None);
        assert_eq!(handle_at(&7u64.to_le_bytes(), 0), 7);
        assert_eq!(handle_at(&7u64.to_le_bytes(), 1), 0);
    }
}
