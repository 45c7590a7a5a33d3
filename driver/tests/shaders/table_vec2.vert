#version 450
// GTK 4's quad corners: a table of vectors, which NVK 25.0.7 keeps out of constant data.
layout(location = 0) out vec2 uv;
const vec2 corner[6] = vec2[6](vec2(0, 0), vec2(1, 0), vec2(0, 1), vec2(0, 1), vec2(1, 0), vec2(1, 1));
void main() {
  uv = corner[gl_VertexIndex];
  gl_Position = vec4(uv * 2.0 - 1.0, 0.0, 1.0);
}
