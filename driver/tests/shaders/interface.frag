#version 450
// A fragment shader whose compile changes NVK's command stream: early fragment tests,
// a depth write, per-sample inputs, a uniform buffer and a texture.
layout(early_fragment_tests) in;
layout(set = 0, binding = 2) uniform Light { vec4 color; } light;
layout(set = 1, binding = 0) uniform sampler2D albedo;
layout(location = 0) sample in vec2 uv;
layout(location = 0) out vec4 out_color;
void main() {
    out_color = light.color * texture(albedo, uv);
    gl_FragDepth = 0.5;
}
