#version 450
// The compute scene's kernel: doubles each word of a storage buffer.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint words[]; } data;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < data.words.length()) {
        data.words[i] *= 2u;
    }
}
