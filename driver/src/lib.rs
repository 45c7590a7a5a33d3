//! The bundled NVIDIA driver model.
//!
//! - [`mme`]: the Macro Method Expander — a macro builder, the Turing and pre-Turing
//!   instruction sets with their real encodings, and a simulator for each.
//! - [`chipset`]: the GPUs NVK drives and the classes each offers.
//! - [`push`] and [`class`]: NV push buffers and the 3D class's methods.
//! - [`nvk`]: NVK's command encoding — draw macros with the multiview loop, queries,
//!   render passes and dynamic rendering.
//! - [`gpu`]: a model of the GPU front end that executes push buffers and records the
//!   draws and report writes the hardware would make.
//!
//! `docs/driver-model.md` in the repository explains the design.

#![deny(missing_docs)]

pub mod chipset;
pub mod class;
pub mod gpu;
pub mod mme;
pub mod nvk;
pub mod push;
pub mod spirv;
