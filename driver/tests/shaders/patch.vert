#version 450
// Three corners of a patch, from the vertex index; no inputs, no push constants.
void main() {
    vec2 corners[3] = vec2[](vec2(-0.8, -0.8), vec2(0.8, -0.8), vec2(0.0, 0.8));
    gl_Position = vec4(corners[gl_VertexIndex % 3], 0.0, 1.0);
}
