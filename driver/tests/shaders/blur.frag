#version 450
// A blur in the shape Skia's SkSL writes (Chromium): a counted loop of eight taps, each
// sampling a texture twice and reading a uniform buffer at the loop's index and at
// constant places (a matrix, a vector, an offset). NAK unrolls the loop, so the set's
// texture uses outnumber the uniform buffer's once NIR has merged its constant loads.
layout(set = 0, binding = 0) uniform Blur {
    vec4 bounds;
    mat3 transform;
    vec4 kernel[14];
    vec2 offset;
} u;
layout(set = 1, binding = 0) uniform sampler2D image;
layout(location = 0) in vec2 coords;
layout(location = 0) out vec4 color;
void main() {
    vec4 sum = vec4(0.0);
    for (int i = 0; i < 8; i++) {
        vec4 k = u.kernel[i];
        vec2 a = (mat3x2(u.transform) * vec3(coords + u.offset * float(i), 1.0));
        sum += k.x * texture(image, clamp(a, u.bounds.xy, u.bounds.zw));
        vec2 b = (mat3x2(u.transform) * vec3(coords - u.offset * float(i), 1.0));
        sum += k.y * texture(image, clamp(b, u.bounds.xy, u.bounds.zw));
    }
    color = sum;
}
