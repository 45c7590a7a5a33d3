#version 450
// Two vertices before a loop that runs 5 times (1, 3, 5, 7, 9) emitting three each.
layout(points) in;
layout(triangle_strip, max_vertices = 17) out;
void main() {
    gl_Position = gl_in[0].gl_Position; EmitVertex();
    gl_Position = gl_in[0].gl_Position; EmitVertex();
    EndPrimitive();
    for (int i = 1; i < 10; i += 2) {
        gl_Position = gl_in[0].gl_Position + vec4(float(i)); EmitVertex();
        gl_Position = gl_in[0].gl_Position; EmitVertex();
        gl_Position = gl_in[0].gl_Position - vec4(float(i)); EmitVertex();
        EndPrimitive();
    }
}
