#version 450
// A compute shader whose workgroup width is a specialization constant, as ggml's
// Vulkan shaders size theirs.
layout(local_size_x_id = 0, local_size_y = 2, local_size_z = 1) in;

layout(set = 0, binding = 0) buffer Data {
    float values[];
} data;

void main() {
    data.values[gl_GlobalInvocationID.x] *= 2.0;
}
