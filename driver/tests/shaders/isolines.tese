#version 450
// Tessellation modes: isolines, fractional odd spacing.
layout(isolines, fractional_odd_spacing) in;
void main() {
    gl_Position = gl_in[0].gl_Position * gl_TessCoord.x;
}
