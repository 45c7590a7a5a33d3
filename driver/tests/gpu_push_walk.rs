//! The GPU model's push-buffer walk: a root-table run (NVK's increment-once
//! `LOAD_CONSTANT_BUFFER_OFFSET` header) copied into memory in one go does exactly what
//! writing its words one method at a time does, also where the run passes the end of
//! the selected constant buffer; and a bad header stops the walk where `push::parse`
//! says it is bad.

use driver::class;
use driver::gpu::Gpu;
use driver::mme::Arch;
use driver::push::{self, PushBuffer, SUBC_3D};

const CB_ADDR: u64 = 0x4_0000_0ff0;

/// Selects a constant buffer of `size` bytes at [`CB_ADDR`] (it spans a page boundary).
fn select(p: &mut PushBuffer, size: u32) {
    p.mthd(SUBC_3D, class::SET_CONSTANT_BUFFER_SELECTOR_A, size);
    p.mthd(
        SUBC_3D,
        class::SET_CONSTANT_BUFFER_SELECTOR_B,
        (CB_ADDR >> 32) as u32,
    );
    p.mthd(
        SUBC_3D,
        class::SET_CONSTANT_BUFFER_SELECTOR_C,
        CB_ADDR as u32,
    );
}

/// Runs `words` on a fresh GPU, with the method log on (every write one at a time) or
/// off; returns the counters, the constant buffer's words and the shadowed methods.
fn run(words: &[u32], logged: bool) -> (driver::gpu::Counters, Vec<u32>, u32, u32) {
    let mut gpu = Gpu::new(Arch::Turing);
    if logged {
        gpu.state.method_log = Some(Vec::new());
    }
    gpu.execute(words).expect("the push buffer runs");
    let memory: Vec<u32> = (0..64)
        .map(|i| gpu.state.memory.read_u32(CB_ADDR + 4 * i))
        .collect();
    (
        gpu.state.counters,
        memory,
        gpu.state.shadow(class::LOAD_CONSTANT_BUFFER),
        gpu.state.shadow(class::LOAD_CONSTANT_BUFFER_OFFSET),
    )
}

#[test]
fn a_root_table_run_writes_what_its_methods_one_by_one_write() {
    for (size, offset, count) in [(0x100, 0, 16), (0x40, 0x30, 9), (0x20, 0x40, 3)] {
        let mut p = PushBuffer::new();
        select(&mut p, size);
        let data: Vec<u32> = (1..=count).map(|i| 0x1000 + i).collect();
        p.inc_once_with(SUBC_3D, class::LOAD_CONSTANT_BUFFER_OFFSET, offset, &data);
        // A second run continues where the first stopped.
        p.inc_once_with(
            SUBC_3D,
            class::LOAD_CONSTANT_BUFFER_OFFSET,
            offset + 8,
            &[7, 8],
        );
        let fast = run(p.words(), false);
        let one_by_one = run(p.words(), true);
        assert_eq!(fast, one_by_one, "size {size:#x}, offset {offset:#x}");
        // The words that fit landed; none past the buffer's end did.
        let fit = ((size.saturating_sub(offset)) / 4).min(count) as usize;
        let first = (offset / 4) as usize;
        if fit > 4 {
            assert_eq!(fast.1[first + 2 + 2], 0x1000 + 5);
        }
        assert!(fast.1[(size / 4) as usize..].iter().all(|&w| w == 0));
        assert_eq!(fast.2, 8);
    }
}

#[test]
fn a_bad_header_stops_the_walk_where_parse_finds_it() {
    let mut p = PushBuffer::new();
    p.mthd(SUBC_3D, class::LOAD_CONSTANT_BUFFER_OFFSET, 4);
    let mut words = p.words().to_vec();
    // SEC_OP 0 is no kind the model handles; then a header whose count runs past the end.
    for bad in [0x0000_0001u32, (1 << 29) | (5 << 16)] {
        words.truncate(p.words().len());
        words.push(bad);
        let expected = push::parse(&words)
            .find_map(Result::err)
            .expect("parse finds the bad header");
        let mut gpu = Gpu::new(Arch::Turing);
        let error = gpu.execute(&words).expect_err("the walk stops");
        assert_eq!(
            error.to_string(),
            driver::gpu::GpuError::from(expected).to_string()
        );
        // What came before the bad header ran.
        assert_eq!(gpu.state.shadow(class::LOAD_CONSTANT_BUFFER_OFFSET), 4);
        assert_eq!(gpu.state.counters.push_methods, 1);
    }
}
