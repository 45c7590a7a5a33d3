#version 450
// Forty weights (160 bytes) summed in a loop that runs to the vertex index, which NIR
// keeps: the table is read at a run-time index and goes into constant data.
layout(location = 0) out vec2 uv;
const float w[40] = float[40](0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25);
void main() {
  float s = 0.0;
  for (int i = 0; i < gl_VertexIndex; i++) s += w[i];
  uv = vec2(0.0);
  gl_Position = vec4(s, 0.0, 0.0, 1.0);
}
