#version 450
// SDL 3's full-screen triangle table: corners picked at the vertex index from a table
// of six small integers, which NIR packs into an immediate but still gives bytes of
// constant data (24).
layout(location = 0) out vec2 uv;
const uint corner[6] = uint[6](0u, 1u, 2u, 0u, 2u, 3u);
void main() {
  uint c = corner[gl_VertexIndex];
  uv = vec2(float(c & 1u), float(c >> 1u));
  gl_Position = vec4(uv * 2.0 - 1.0, 0.0, 1.0);
}
