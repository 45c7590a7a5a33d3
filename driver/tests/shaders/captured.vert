#version 450
#extension GL_ARB_shader_viewport_layer_array : require
// A vertex shader that writes the layer, two clip distances and one cull distance,
// and captures its position and a colour into transform-feedback buffer 1.
layout(xfb_buffer = 1, xfb_stride = 32) out;
layout(location = 0, xfb_offset = 16) out vec4 color;
out gl_PerVertex {
    layout(xfb_offset = 0) vec4 gl_Position;
    float gl_ClipDistance[2];
    float gl_CullDistance[1];
};
void main() {
    gl_Position = vec4(0.0);
    color = vec4(1.0);
    gl_ClipDistance[0] = 1.0;
    gl_ClipDistance[1] = 1.0;
    gl_CullDistance[0] = 1.0;
    gl_Layer = 1;
}
