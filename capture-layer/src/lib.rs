//! `VK_LAYER_MACROSCOPE_capture`: the Vulkan layer that records a running program's
//! calls into a macroscope trace.
//!
//! Not built yet: the layer arrives with its own issue (loader negotiation, dispatch
//! chains, generated encoders). Until then this crate holds no code.
