#version 450
// The colour of the bound uniform buffer.
layout(set = 0, binding = 0) uniform Tint { vec4 color; } tint;
layout(location = 0) out vec4 out_color;
void main() {
    out_color = tint.color;
}
