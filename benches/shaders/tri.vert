#version 450
// A triangle from the vertex index, placed by push constants.
layout(push_constant) uniform Place { vec2 offset; float scale; } place;
void main() {
    vec2 corners[3] = vec2[](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(0.0, 1.0));
    gl_Position = vec4(corners[gl_VertexIndex % 3] * place.scale + place.offset, 0.0, 1.0);
}
