//! The bundled NVIDIA driver model.
