//! Generic records (`VulkanCall`: a command's name and its parameters as the capture
//! layer's generated hooks recorded them) decoded into typed commands.
//!
//! The decoders are generated from the Vulkan registry by the same generator as the
//! capture hooks (`capture-layer/gen/commands.py --decoders`, output in
//! `generated/decode.rs`); `read` holds what they share: taking a parameter, reading
//! scalars and C-layout structures from its bytes, and the error naming what did not
//! decode.

pub mod read;

pub use crate::generated::decode::{
    decode, decode_setup, GenericCmd, GenericSetup, DECODED, DECODED_SETUP, NOT_DECODED,
};
pub use read::DecodeError;
