#version 450
// gl_ClipDistance declared in the output block but never written: NAK keeps no clip
// distance for it, so NVK enables none.
out gl_PerVertex {
    vec4 gl_Position;
    float gl_ClipDistance[1];
};

void main() {
    gl_Position = vec4(0.0, 0.0, 0.0, 1.0);
}
