//! The GPU model's push-buffer walk: a root-table run (NVK's increment-once
//! `LOAD_CONSTANT_BUFFER_OFFSET` header) copied into memory in one go does exactly what
//! writing its words one method at a time does, also where the run passes the end of
//! the selected constant buffer; a run of methods that only set their shadows, stored
//! at once, leaves what its writes one by one leave, also when it ends a pending macro
//! call, as does an immediate or a one-word run (another class's method, or a header of
//! no words, leaves the call pending); and a bad header stops the walk where
//! `push::parse` says it is bad.

use driver::class;
use driver::gpu::Gpu;
use driver::mme::{tu104, Arch, Builder};
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

/// Macro 0x30: emits its one parameter to shadow scratch 40, and what scratch 45 holds
/// when it runs to scratch 44.
fn scratch_macro() -> Vec<u32> {
    let mut b = Builder::new(Arch::Turing);
    let value = b.load();
    b.mthd(class::set_mme_shadow_scratch(40));
    b.emit(value);
    let start = b.state(class::set_mme_shadow_scratch(45));
    b.mthd(class::set_mme_shadow_scratch(44));
    b.emit(start);
    tu104::assemble(&b.finish().expect("the macro builds")).expect("it assembles")
}

/// A fresh GPU that executed `words`, with the method log on (every write one at a
/// time) or off.
fn executed(words: &[u32], logged: bool) -> Gpu {
    let mut gpu = Gpu::new(Arch::Turing);
    if logged {
        gpu.state.method_log = Some(Vec::new());
    }
    gpu.execute(words).expect("the push buffer runs");
    gpu
}

/// Every 3D method's shadowed value.
fn shadows(gpu: &Gpu) -> Vec<u32> {
    (0..0x4000u16)
        .step_by(4)
        .map(|m| gpu.state.shadow(m))
        .collect()
}

#[test]
fn runs_of_methods_that_only_set_their_shadows_leave_what_their_writes_one_by_one_leave() {
    const ID: u16 = 0x30;
    let mut p = PushBuffer::new();
    driver::nvk::upload_macro(&mut p, ID, 0x3800, &scratch_macro());
    // A call left pending until the next method: the run after it must end it first
    // (the macro reads the method the run then writes).
    p.mthd(SUBC_3D, class::set_mme_shadow_scratch(45), 3);
    p.mthd(SUBC_3D, class::CALL_MME_MACRO + 8 * ID, 9);
    p.inc(SUBC_3D, class::set_mme_shadow_scratch(45), &[1, 2, 3, 4]);
    p.non_inc(SUBC_3D, class::set_mme_shadow_scratch(50), &[5, 6, 7]);
    p.inc_once_with(SUBC_3D, class::set_mme_shadow_scratch(52), 8, &[10, 11]);
    // A run over methods that act (the constant buffer selector) is written one by one.
    p.inc(
        SUBC_3D,
        class::SET_CONSTANT_BUFFER_SELECTOR_A,
        &[0x100, (CB_ADDR >> 32) as u32, CB_ADDR as u32],
    );
    // And one that reaches a method that acts: DRAW_VERTEX_ARRAY after the start.
    p.inc(SUBC_3D, class::SET_VERTEX_ARRAY_START, &[0, 3]);
    p.mthd(SUBC_3D, class::LOAD_CONSTANT_BUFFER_OFFSET, 0);
    p.inc(SUBC_3D, class::load_constant_buffer(0), &[12, 13]);
    let state = |logged: bool| {
        let gpu = executed(p.words(), logged);
        let memory = [0, 4].map(|at| gpu.state.memory.read_u32(CB_ADDR + at));
        (gpu.state.counters, shadows(&gpu), memory)
    };
    let (stored, one_by_one) = (state(false), state(true));
    assert_eq!(stored, one_by_one);
    let shadow = |m: u16| stored.1[usize::from(m >> 2)];
    assert_eq!(
        shadow(class::set_mme_shadow_scratch(40)),
        9,
        "the macro ran"
    );
    assert_eq!(
        shadow(class::set_mme_shadow_scratch(44)),
        3,
        "before the run"
    );
    assert_eq!(shadow(class::set_mme_shadow_scratch(45)), 1);
    assert_eq!(shadow(class::set_mme_shadow_scratch(48)), 4);
    assert_eq!(shadow(class::set_mme_shadow_scratch(50)), 7);
    assert_eq!(shadow(class::set_mme_shadow_scratch(52)), 8);
    assert_eq!(shadow(class::set_mme_shadow_scratch(53)), 11);
    assert_eq!(stored.2, [12, 13]);
    assert_eq!(stored.0.hw_draws, 1);
}

#[test]
fn immediates_single_writes_and_other_classes_leave_what_their_writes_one_by_one_leave() {
    const ID: u16 = 0x30;
    let mut p = PushBuffer::new();
    driver::nvk::upload_macro(&mut p, ID, 0x3800, &scratch_macro());
    p.mthd(SUBC_3D, class::set_mme_shadow_scratch(45), 3);
    p.mthd(SUBC_3D, class::CALL_MME_MACRO + 8 * ID, 9);
    // Another class's method is counted and leaves the call pending; a header of no
    // words writes nothing and leaves it too.
    p.mthd(push::SUBC_COMPUTE, 0x0200, 0x55);
    let mut words = p.words().to_vec();
    words.push(
        push::MethodHeader::new(
            push::HeaderKind::Incrementing,
            SUBC_3D,
            class::set_mme_shadow_scratch(45),
            0,
        )
        .0,
    );
    // An immediate to a plain method ends the call (the macro reads scratch 45 first).
    let mut q = PushBuffer::new();
    q.immd(SUBC_3D, class::set_mme_shadow_scratch(45), 6);
    q.mthd(SUBC_3D, class::CALL_MME_MACRO + 8 * ID, 7);
    // So does a one-word non-incrementing run.
    q.non_inc(SUBC_3D, class::set_mme_shadow_scratch(45), &[8]);
    q.immd(SUBC_3D, class::set_mme_shadow_scratch(46), 0x1fff);
    words.extend_from_slice(q.words());
    let state = |logged: bool| {
        let gpu = executed(&words, logged);
        (gpu.state.counters, shadows(&gpu))
    };
    let (stored, one_by_one) = (state(false), state(true));
    assert_eq!(stored, one_by_one);
    let shadow = |m: u16| stored.1[usize::from(m >> 2)];
    assert_eq!(
        shadow(class::set_mme_shadow_scratch(40)),
        7,
        "both calls ran"
    );
    assert_eq!(
        shadow(class::set_mme_shadow_scratch(44)),
        6,
        "the second before the run that ended it"
    );
    assert_eq!(shadow(class::set_mme_shadow_scratch(45)), 8);
    assert_eq!(shadow(class::set_mme_shadow_scratch(46)), 0x1fff);
    assert_eq!(stored.0.macro_calls, 2);
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

/// Macro 0x31 on `arch`: emits `value` to shadow scratch 41.
fn constant_macro(arch: Arch, value: u32) -> Vec<u32> {
    let mut b = Builder::new(arch);
    b.mthd(class::set_mme_shadow_scratch(41));
    b.emit(driver::mme::Value::Imm(value));
    let program = b.finish().expect("the macro builds");
    match arch {
        Arch::Turing => tu104::assemble(&program).expect("it assembles"),
        Arch::Fermi => driver::mme::fermi::assemble(&program).expect("it assembles"),
    }
}

#[test]
fn a_macro_id_runs_the_words_its_gpu_loaded_whatever_other_gpus_loaded_under_it() {
    const ID: u16 = 0x31;
    // What scratch 41 holds after `gpu` calls the macro.
    let called = |gpu: &mut Gpu| {
        let mut p = PushBuffer::new();
        p.mthd(SUBC_3D, class::CALL_MME_MACRO + 8 * ID, 0);
        p.mthd(SUBC_3D, class::set_mme_shadow_scratch(42), 0);
        gpu.execute(p.words()).expect("the call runs");
        gpu.state.shadow(class::set_mme_shadow_scratch(41))
    };
    let loaded = |arch: Arch, value: u32| {
        let mut p = PushBuffer::new();
        driver::nvk::upload_macro(&mut p, ID, 0x3000, &constant_macro(arch, value));
        p
    };
    for arch in [Arch::Turing, Arch::Fermi] {
        // Two GPUs of one process, each with its own program under the same id and
        // start address: each runs its own, called in turn.
        let mut first = Gpu::new(arch);
        first
            .execute(loaded(arch, 7).words())
            .expect("the upload runs");
        let mut second = Gpu::new(arch);
        second
            .execute(loaded(arch, 9).words())
            .expect("the upload runs");
        for _ in 0..2 {
            assert_eq!(called(&mut first), 7, "{arch:?}");
            assert_eq!(called(&mut second), 9, "{arch:?}");
        }
        // Loaded again with the other program, a GPU runs that one from then on.
        first
            .execute(loaded(arch, 9).words())
            .expect("the upload runs");
        assert_eq!(called(&mut first), 9, "{arch:?}");
    }
}
