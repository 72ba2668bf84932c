//! Texture sampling and surfaces (issue 18): `programs/textures.hip` checks 2D float textures
//! with every address mode, point and linear filtering, normalized and unnormalized
//! coordinates, a uchar4 texture read as normalized floats, a 3D texture, a layered texture,
//! `tex1Dfetch` on linear memory and a surface round trip against a CPU implementation of
//! the filter — ROCm 5.2 and sid, local and `--daemon`.

use integration::Stack;

const PASSES: [&str; 6] = [
    "2D float textures: every address mode, point and linear, normalized and not",
    "uchar4 textures read as normalized floats: every address mode, point and linear, normalized and not",
    "3D texture, point sampling",
    "layered 2D texture",
    "tex1Dfetch on linear memory",
    "surface written then read",
];

fn textures(stack: Stack) {
    stack.assert_program_passes("textures", &PASSES);
}

#[test]
fn textures_on_rocm52() {
    textures(Stack::Host);
}

#[test]
fn textures_on_sid() {
    textures(Stack::Sid);
}
