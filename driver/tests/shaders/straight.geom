#version 450
// Emits exactly four vertices on one path.
layout(points) in;
layout(triangle_strip, max_vertices = 4) out;
void main() {
    vec4 p = gl_in[0].gl_Position;
    gl_Position = p + vec4(-0.1, -0.1, 0.0, 0.0); EmitVertex();
    gl_Position = p + vec4( 0.1, -0.1, 0.0, 0.0); EmitVertex();
    gl_Position = p + vec4(-0.1,  0.1, 0.0, 0.0); EmitVertex();
    gl_Position = p + vec4( 0.1,  0.1, 0.0, 0.0); EmitVertex();
    EndPrimitive();
}
