#version 450
// Declares at most 3 vertices but tries to emit 6, around its point.
layout(points) in;
layout(triangle_strip, max_vertices = 3) out;
void main() {
    for (int i = 0; i < 6; i++) {
        float a = float(i) * 2.1;
        gl_Position = gl_in[0].gl_Position + vec4(0.5 * cos(a), 0.5 * sin(a), 0.0, 0.0);
        EmitVertex();
    }
    EndPrimitive();
}
