#version 450
// Half the bound uniform buffer's colour, half what the subpass before left in the
// input attachment at this pixel.
layout(set = 0, binding = 0) uniform Tint { vec4 color; } tint;
layout(input_attachment_index = 0, set = 0, binding = 1) uniform subpassInput below;
layout(location = 0) out vec4 out_color;
void main() {
    out_color = 0.5 * tint.color + 0.5 * subpassLoad(below);
}
