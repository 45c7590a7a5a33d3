//! Transfers as NVK 25.0.7 records them on the copy engine (nvk_cmd_copy.c): buffer
//! copies cut into 128 KiB lines, fills through the remap constant, and copies into a
//! block-linear image with the values NVK 25.0.7 pushed for a media player's plane
//! upload (a 320×240 R8 plane: a block 32 GOBs high, 320 elements wide).

use driver::class::copy;
use driver::mme::Arch;
use driver::nvk::image::{Image, ImageType};
use driver::nvk::transfer::{BufferImageRegion, ImageCopyRegion, Subresource};
use driver::nvk::CommandEncoder;
use driver::push::SUBC_COPY;

mod common;

/// The copy-engine methods `record` pushes, as executed.
fn copy_methods(arch: Arch, record: impl FnOnce(&mut CommandEncoder<'_>)) -> Vec<(u16, u32)> {
    common::run_encoded(arch, record)
        .iter()
        .filter(|m| m.subc == SUBC_COPY)
        .map(|m| (m.mthd, m.data))
        .collect()
}

fn launches(methods: &[(u16, u32)]) -> Vec<u32> {
    methods
        .iter()
        .filter(|(m, _)| *m == copy::LAUNCH_DMA)
        .map(|(_, d)| *d)
        .collect()
}

/// A 320×240 R8_UNORM image, block-linear.
fn plane() -> Image {
    let mut image = Image::stand_in(9, [320, 240, 1]);
    image.addr = 0x40_0000;
    image
}

#[test]
fn a_buffer_copy_is_one_non_pipelined_line_a_128_kib() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let mut recorded = None;
        let methods = copy_methods(arch, |enc| {
            recorded = Some(enc.copy_buffer(0x10_0000, 0x20_0000, 300 << 10));
        });
        // NON_PIPELINED, FLUSH, both sides PITCH, MULTI_LINE: 0x386.
        assert_eq!(launches(&methods), [0x386; 3], "{arch:?}");
        assert_eq!(recorded.map(|r| r.launches), Some(3));
        let lengths: Vec<u32> = methods
            .iter()
            .filter(|(m, _)| *m == copy::LINE_LENGTH_IN)
            .map(|(_, d)| *d)
            .collect();
        assert_eq!(lengths, [1 << 17, 1 << 17, (300 << 10) - (2 << 17)]);
        // The third line starts 256 KiB in on both sides.
        assert!(methods.contains(&(copy::OFFSET_OUT_UPPER + 4, 0x24_0000)));
    }
}

#[test]
fn a_fill_writes_the_remap_constant_in_lines_of_32_ki_words() {
    let methods = copy_methods(Arch::Turing, |enc| {
        // 1 MiB and one word: 8 lines of 32 Ki words in one launch, then one word.
        enc.fill_buffer(0x10_0000, (1 << 20) + 4, 0xdead_beef);
    });
    assert_eq!(methods[0], (copy::SET_REMAP_CONST_A, 0xdead_beef));
    // CONST_A into X, Y, Z and W; four-byte components; one of each.
    assert_eq!(methods[1], (copy::SET_REMAP_COMPONENTS, 0x0003_4444));
    // Multi-line with remap (0x786), then a single line (0x586).
    assert_eq!(launches(&methods), [0x786, 0x586]);
    let lines: Vec<u32> = methods
        .iter()
        .filter(|(m, _)| *m == copy::LINE_LENGTH_IN)
        .map(|(_, d)| *d)
        .collect();
    assert_eq!(lines, [1 << 15, 1]);
}

#[test]
fn an_upload_into_a_block_linear_plane_pushes_what_nvk_pushed() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let methods = copy_methods(arch, |enc| {
            let region = BufferImageRegion {
                buffer_offset: 0x100,
                subresource: Subresource {
                    aspects: 1,
                    layer_count: 1,
                    ..Subresource::default()
                },
                image_extent: [320, 240, 1],
                ..BufferImageRegion::default()
            };
            enc.copy_buffer_image(&plane(), 0x10_0000, &[region], true);
        });
        let value = |mthd| methods.iter().find(|(m, _)| *m == mthd).map(|(_, d)| *d);
        // One-byte components, one of each: X, Y, Z, W from X, Y, Z, W.
        assert_eq!(value(copy::SET_REMAP_COMPONENTS), Some(0x3210), "{arch:?}");
        assert_eq!(value(copy::OFFSET_IN_UPPER + 4), Some(0x10_0100));
        // PITCH_IN, PITCH_OUT, LINE_LENGTH_IN and LINE_COUNT.
        assert_eq!(value(copy::PITCH_IN), Some(320));
        assert_eq!(value(copy::LINE_LENGTH_IN), Some(320));
        assert_eq!(value(copy::LINE_LENGTH_IN + 4), Some(240));
        // The destination's block (32 GOBs high), width in elements, height, depth,
        // layer, origin.
        assert_eq!(value(copy::SET_DST_BLOCK_SIZE), Some(0x1050));
        assert_eq!(value(copy::SET_DST_BLOCK_SIZE + 4), Some(320));
        assert_eq!(value(copy::SET_DST_BLOCK_SIZE + 8), Some(240));
        assert_eq!(value(copy::SET_DST_BLOCK_SIZE + 12), Some(1));
        assert_eq!(value(copy::DST_ORIGIN_X), Some(0));
        // NON_PIPELINED, FLUSH, source PITCH, destination block-linear, remap.
        assert_eq!(launches(&methods), [0x686], "{arch:?}");
        assert_eq!(value(copy::SET_SRC_BLOCK_SIZE), None);
    }
}

#[test]
fn an_image_copy_of_three_layers_launches_once_a_layer() {
    let mut src = Image::stand_in(37, [64, 64, 1]);
    src.array_layers = 4;
    src.addr = 0x80_0000;
    let mut dst = src;
    dst.addr = 0x100_0000;
    let layer_bytes = u64::from(src.level(0).array_stride);
    let methods = copy_methods(Arch::Turing, |enc| {
        let layers = Subresource {
            aspects: 1,
            base_array_layer: 1,
            layer_count: 3,
            ..Subresource::default()
        };
        let region = ImageCopyRegion {
            src: layers,
            dst: layers,
            src_offset: [8, 16, 0],
            dst_offset: [0, 0, 0],
            extent: [16, 16, 1],
        };
        enc.copy_image(&src, &dst, &[region]);
    });
    // Both sides block-linear, remapped as one four-byte component an element.
    assert_eq!(launches(&methods), [0x606; 3]);
    assert!(methods.contains(&(copy::SET_REMAP_COMPONENTS, 0x3_3210)));
    let sources: Vec<u32> = methods
        .iter()
        .filter(|(m, _)| *m == copy::OFFSET_IN_UPPER + 4)
        .map(|(_, d)| *d)
        .collect();
    let layer = |n: u64| (0x80_0000 + n * layer_bytes) as u32;
    assert_eq!(sources, [layer(1), layer(2), layer(3)]);
    // The source's origin, in elements.
    assert!(methods.contains(&(copy::SRC_ORIGIN_X, 8)));
    assert!(methods.contains(&(copy::SRC_ORIGIN_X + 4, 16)));
}

#[test]
fn a_3d_image_viewed_as_2d_is_laid_out_one_gob_deep() {
    // A 64×64×256 R8G8B8A8 image, as a GL program's array texture through Zink
    // (2D-array compatible) and as a plain 3D texture.
    let block_of = |flags: u32| {
        let mut image = Image::stand_in(37, [64, 64, 256]);
        image.image_type = ImageType::D3;
        image.views_2d = Image::views_2d_for(flags, 0x6, true, 37);
        image.addr = 0x40_0000;
        let methods = copy_methods(Arch::Turing, |enc| {
            let region = BufferImageRegion {
                subresource: Subresource {
                    aspects: 1,
                    layer_count: 1,
                    ..Subresource::default()
                },
                image_extent: [64, 64, 1],
                ..BufferImageRegion::default()
            };
            enc.copy_buffer_image(&image, 0x10_0000, &[region], true);
        });
        methods
            .iter()
            .find(|(m, _)| *m == copy::SET_DST_BLOCK_SIZE)
            .map(|(_, d)| *d)
    };
    // VK_IMAGE_CREATE_2D_ARRAY_COMPATIBLE_BIT: 8 GOBs high, 1 deep (nvk_image_init's
    // NIL_IMAGE_USAGE_2D_VIEW_BIT); without it 32 deep (2^5).
    assert_eq!(block_of(0x20), Some(0x1030));
    assert_eq!(block_of(0), Some(0x1530));
}
