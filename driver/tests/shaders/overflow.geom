#version 450
// Declares at most 3 vertices but tries to emit 6: the counted form emits the first 3.
layout(points) in;
layout(triangle_strip, max_vertices = 3) out;
void main() {
    for (int i = 0; i < 6; i++) {
        gl_Position = gl_in[0].gl_Position + vec4(float(i) * 0.1, 0.0, 0.0, 0.0);
        EmitVertex();
    }
    EndPrimitive();
}
