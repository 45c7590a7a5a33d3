//! The bundled NVIDIA driver model.
//!
//! Today it holds the [MME](mme) (Macro Method Expander): a macro builder, the Turing
//! and pre-Turing instruction sets with their real encodings, and a simulator for each.
//! NVK's command encoder, push buffers and the GPU model build on it.

#![deny(missing_docs)]

pub mod class;
pub mod gpu;
pub mod mme;
pub mod nvk;
pub mod push;
