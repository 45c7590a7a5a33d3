#version 450
#extension GL_EXT_multiview : require
// Each view a different shade, so the layers differ.
layout(set = 0, binding = 0) uniform Tint { vec4 color; } tint;
layout(location = 0) out vec4 out_color;
void main() {
    out_color = vec4(tint.color.rgb * (float(gl_ViewIndex) + 1.0) / 4.0, 1.0);
}
