#version 450
// Shrinks each triangle towards its centre: three vertices out per triangle in.
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
void main() {
    vec4 centre = (gl_in[0].gl_Position + gl_in[1].gl_Position + gl_in[2].gl_Position) / 3.0;
    for (int i = 0; i < 3; i++) {
        gl_Position = mix(centre, gl_in[i].gl_Position, 0.8);
        EmitVertex();
    }
    EndPrimitive();
}
