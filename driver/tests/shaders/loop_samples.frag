#version 450
// Texture instructions in three loops NIR keeps: one that runs to a uniform's count
// (its trip count unknown), one that runs to a fragment input's (unknown too) and one
// of 100 iterations (too long to unroll).
layout(set = 0, binding = 0) uniform sampler2D image;
layout(set = 0, binding = 1) uniform Lights { int count; } lights;
layout(location = 0) flat in int taps;
layout(location = 0) out vec4 colour;

void main() {
    colour = vec4(0.0);
    for (int i = 0; i < lights.count; i++) {
        colour += texture(image, vec2(float(i)));
    }
    for (int i = 0; i < taps; i++) {
        colour += texture(image, vec2(float(i) * 0.25));
    }
    for (int i = 0; i < 100; i++) {
        colour += texture(image, vec2(float(i) * 0.5));
    }
}
