#version 450
// A vertex shader capturing into transform-feedback buffer 0 a float at location 1
// (dword 0), nothing at dword 1, and a vec2 at location 2's components 2 and 3
// (dwords 2 and 3).
layout(xfb_buffer = 0, xfb_stride = 16) out;
layout(location = 1, xfb_offset = 0) out float weight;
layout(location = 2, component = 2, xfb_offset = 8) out vec2 uv;
void main() {
    gl_Position = vec4(0.0);
    weight = 1.0;
    uv = vec2(0.5);
}
