#version 450
// A uniform array indexed by a loop counter: dynamic loads; and one constant load.
layout(set = 0, binding = 0) uniform Colors { vec4 colors[4]; float scale; } u;
layout(location = 0) out vec4 out_color;
void main() {
    vec4 sum = vec4(0.0);
    for (int i = 0; i < 4; i++) {
        sum += u.colors[i];
    }
    out_color = sum * u.scale;
}
