#version 450
// Six fractions (24 bytes): too small to move, not integral, so no constant data.
layout(location = 0) out vec2 uv;
const float f[6] = float[6](0.5, 0.25, -1.0, 0.5, 0.25, -1.0);
void main() {
  uv = vec2(f[gl_VertexIndex]);
  gl_Position = vec4(uv, 0.0, 1.0);
}
