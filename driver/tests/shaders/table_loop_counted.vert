#version 450
// Forty weights (160 bytes) summed in a loop of five, which NIR unrolls: every index
// becomes a constant and the table disappears into the sum.
layout(location = 0) out vec2 uv;
const float w[40] = float[40](0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25);
void main() {
  float s = 0.0;
  for (int i = 0; i < 5; i++) s += w[i];
  uv = vec2(0.0);
  gl_Position = vec4(s, 0.0, 0.0, 1.0);
}
