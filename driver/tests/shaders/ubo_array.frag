#version 450
// An array of uniform buffers as Zink declares a stage's (`ubos[N]`): each element is
// a constant buffer of its own when it is read at a constant index; element 3 is read
// only in a loop that never runs, element 1 only at an index chosen at run time.
layout(set = 1, binding = 9) uniform Block { vec4 v[16]; } ubos[4];
layout(push_constant) uniform Push { int which; int count; } push;
layout(location = 0) out vec4 colour;

void main() {
    colour = ubos[0].v[0] + ubos[2].v[1] + ubos[2].v[2] + ubos[2].v[push.count];
    for (int i = 0; i < 0; i++) {
        colour += ubos[3].v[i];
    }
    colour += ubos[push.which].v[3];
}
