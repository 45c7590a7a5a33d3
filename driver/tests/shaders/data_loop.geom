#version 450
// Emits as many vertices as a uniform says: unknown until it runs.
layout(points) in;
layout(points, max_vertices = 8) out;
layout(set = 0, binding = 0) uniform Count { int n; } count;
void main() {
    for (int i = 0; i < count.n; i++) {
        gl_Position = gl_in[0].gl_Position;
        EmitVertex();
    }
}
