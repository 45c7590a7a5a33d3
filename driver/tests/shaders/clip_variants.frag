#version 450
// A fragment shader whose variants a specialization constant chooses, as GTK 4's
// Vulkan renderer chooses its clip mode: only the chosen variant reads the uniform
// buffer.
layout(constant_id = 0) const uint CLIP = 0u;

layout(set = 0, binding = 0) uniform Globals {
    vec4 clip;
    vec4 scale;
} globals;
layout(set = 1, binding = 0) uniform sampler2D tex;

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

float clip_rect() {
    return step(globals.clip.x, uv.x) * globals.scale.y;
}

void main() {
    vec4 c = texture(tex, uv);
    if ((CLIP & 3u) == 1u) {
        c *= clip_rect();
    }
    switch (CLIP >> 2u) {
    case 1u:
        c.a *= globals.scale.x;
        break;
    default:
        break;
    }
    color = c;
}
