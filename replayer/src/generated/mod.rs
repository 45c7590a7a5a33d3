//! Code generated from the Vulkan registry (`scripts/regen-vk-registry`); do not edit.

#[rustfmt::skip]
pub mod decode;
#[rustfmt::skip]
pub mod device_calls;
