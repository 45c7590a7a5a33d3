//! The macros the MME simulators are timed on (`benches/benches/mme.rs`, the
//! `mme_rate` binary that `scripts/bench-mme-vs-mesa` runs beside Mesa's own
//! simulators), and the machine they run against.

use driver::class;
use driver::mme::{fermi, tu104, Arch, Builder, Cmp, Machine, Value};
use driver::nvk::Macro;

const DRAW_BEGIN: u16 = 2;
const DRAW_IDX: u16 = 5;
const VIEW_MASK: u16 = 6;
const SET_GLOBAL_BASE_VERTEX_INDEX: u16 = 0x1434;
const SET_GLOBAL_BASE_INSTANCE_INDEX: u16 = 0x1438;
const ROOT_DRAW_OFFSET: u32 = 0;
const ROOT_VIEW_INDEX_OFFSET: u32 = 12;

fn draw_loop(b: &mut Builder, instance_count: Value, first_vertex: Value, vertex_count: Value) {
    b.loop_(instance_count, |b| {
        let begin = b.load_scratch(DRAW_BEGIN);
        b.mthd(class::BEGIN);
        b.emit(begin);
        b.mthd(class::SET_VERTEX_ARRAY_START);
        b.emit(first_vertex);
        b.emit(vertex_count);
        b.mthd(class::END);
        b.emit(Value::Zero);
        // Later instances: BEGIN's INSTANCE_ID = SUBSEQUENT.
        b.merge_to(begin, begin, Value::Imm(1), 26, 2, 0);
        b.store_scratch(DRAW_BEGIN, begin);
        b.free_reg(begin);
    });
}

/// A macro shaped like NVK's CmdDraw macro.
pub fn draw_macro(arch: Arch) -> Vec<u32> {
    let mut b = Builder::new(arch);
    b.load_to_scratch(DRAW_BEGIN);
    b.load_to_scratch(DRAW_IDX);
    let vertex_count = b.load();
    let instance_count = b.load();
    let first_vertex = b.load();
    let first_instance = b.load();
    b.mthd(class::LOAD_CONSTANT_BUFFER_OFFSET);
    b.emit(Value::Imm(ROOT_DRAW_OFFSET));
    b.mthd(class::LOAD_CONSTANT_BUFFER);
    b.emit(first_vertex);
    b.emit(first_instance);
    let draw_idx = b.load_scratch(DRAW_IDX);
    b.emit(draw_idx);
    b.free_reg(draw_idx);
    b.mthd(SET_GLOBAL_BASE_VERTEX_INDEX);
    b.emit(first_vertex);
    b.emit(first_instance);
    b.free_reg(first_instance);
    let _ = SET_GLOBAL_BASE_INSTANCE_INDEX;

    // As NVK does for pre-Turing's seven registers: the view mask stays in scratch and
    // is reloaded where needed, and `has_view` is freed once its branch has read it.
    let view_mask = b.load_scratch(VIEW_MASK);
    b.if_(Cmp::Eq, view_mask, Value::Zero, |b| {
        b.free_reg(view_mask);
        draw_loop(b, instance_count, first_vertex, vertex_count);
    });
    b.realloc_reg(view_mask);
    b.load_scratch_to(view_mask, VIEW_MASK);
    b.if_(Cmp::Ne, view_mask, Value::Zero, |b| {
        b.free_reg(view_mask);
        let view = b.mov(Value::Zero);
        b.while_(Cmp::Ne, view, Value::Imm(32), |b| {
            let mask = b.load_scratch(VIEW_MASK);
            let has_view = b.bfe(mask, view, 1);
            b.free_reg(mask);
            b.if_(Cmp::Ne, has_view, Value::Zero, |b| {
                b.free_reg(has_view);
                b.mthd(class::LOAD_CONSTANT_BUFFER_OFFSET);
                b.emit(Value::Imm(ROOT_VIEW_INDEX_OFFSET));
                b.mthd(class::LOAD_CONSTANT_BUFFER);
                b.emit(view);
                b.mthd(class::SET_RT_LAYER);
                b.emit(view);
                draw_loop(b, instance_count, first_vertex, vertex_count);
            });
            b.add_to(view, view, Value::Imm(1));
        });
        b.free_reg(view);
    });
    let program = b.finish().expect("the draw-shaped macro builds");
    match arch {
        Arch::Turing => tu104::assemble(&program).expect("lowers"),
        Arch::Fermi => fermi::assemble(&program).expect("lowers"),
    }
}

/// A machine that keeps shadow state in an array and counts method writes.
pub struct BenchMachine {
    params: Vec<u32>,
    /// The next parameter to load.
    pub next: usize,
    state: Box<[u32; 0x1000]>,
    /// Method writes so far.
    pub methods: u64,
}

impl BenchMachine {
    /// The draw-shaped macro's machine: view mask 0b1111 in shadow scratch, 8 instances.
    pub fn new() -> Self {
        // begin, draw index, vertex count, instance count, first vertex, first instance.
        Self::with(&[0x5, 0, 3, 8, 0, 0], VIEW_MASK, 0b1111)
    }

    /// A machine loading `params`, with shadow scratch `slot` holding `value`.
    pub fn with(params: &[u32], slot: u16, value: u32) -> Self {
        let mut state = Box::new([0u32; 0x1000]);
        state[usize::from(class::SET_MME_SHADOW_SCRATCH / 4 + slot)] = value;
        BenchMachine {
            params: params.to_vec(),
            next: 0,
            state,
            methods: 0,
        }
    }
}

impl Default for BenchMachine {
    fn default() -> Self {
        Self::new()
    }
}

impl Machine for BenchMachine {
    fn param(&mut self) -> Option<u32> {
        let p = self.params.get(self.next).copied();
        self.next += 1;
        p
    }

    fn state(&mut self, mthd: u16) -> u32 {
        self.state[usize::from(mthd >> 2)]
    }

    fn mthd(&mut self, mthd: u16, data: u32) {
        self.state[usize::from(mthd >> 2)] = data;
        self.methods += 1;
    }

    fn read_u32(&mut self, _addr: u64) -> Option<u32> {
        None
    }
}

/// A macro timed beside Mesa's simulators: its binary on each MME generation, the
/// parameters it is called with, and the shadow scratch slot and value it reads.
pub struct Case {
    /// What it is called in reports.
    pub name: &'static str,
    /// Its parameters.
    pub params: Vec<u32>,
    /// The shadow scratch slot set before each run, and its value.
    pub scratch: (u16, u32),
    /// The binary for Turing, then before Turing.
    pub binaries: [Vec<u32>; 2],
}

/// The macros timed: the draw-shaped macro of the `mme` bench, and NVK 25.0.7's own
/// draw macro (as the model builds it, word for word NVK's) drawing 8 instances under
/// view mask 0b1111.
pub fn cases() -> Vec<Case> {
    let nvk_draw = |arch| {
        let program = Macro::Draw.build(arch).expect("NVK's draw macro builds");
        match arch {
            Arch::Turing => tu104::assemble(&program).expect("lowers"),
            Arch::Fermi => fermi::assemble(&program).expect("lowers"),
        }
    };
    vec![
        Case {
            name: "draw-shaped",
            params: vec![0x5, 0, 3, 8, 0, 0],
            scratch: (VIEW_MASK, 0b1111),
            binaries: [draw_macro(Arch::Turing), draw_macro(Arch::Fermi)],
        },
        Case {
            name: "nvk-draw",
            params: vec![0, 3, 8, 0, 0],
            scratch: (driver::nvk::Scratch::ViewMask as u16, 0b1111),
            binaries: [nvk_draw(Arch::Turing), nvk_draw(Arch::Fermi)],
        },
    ]
}
