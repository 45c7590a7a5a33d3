//! Tables generated from the Vulkan registry by `capture-layer/gen/registry.py`
//! (`scripts/regen-vk-registry`); never edited by hand.

#[rustfmt::skip]
pub mod registry;

#[rustfmt::skip]
pub mod commands;
