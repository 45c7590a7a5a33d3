//! Random programs on both simulators; random words through the decoders and simulators.

mod common;

use common::{out, run_both};
use driver::mme::{fermi, tu104, AluOp, Arch, Builder, Cmp, RecordingMachine, Value};
use proptest::prelude::*;

const LIVE: usize = 3;

#[derive(Clone, Debug)]
enum Operand {
    Reg(usize),
    Imm(u32),
}

#[derive(Clone, Debug)]
enum Action {
    Alu(AluOp, usize, usize, Operand),
    Shift(bool, usize, usize, u8),
    Merge(usize, usize, usize, u8, u8, u8),
    Bfe(usize, usize, u8, u8),
    Emit(u16, usize),
    EmitImm(u16, u32),
    If(Cmp, usize, Operand, Vec<Action>),
    Loop(u32, Vec<Action>),
    LoopReg(usize, Vec<Action>),
    Scratch(u16, usize, usize),
}

fn imm() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..4,
        Just(0x7fff),
        Just(0x8000),
        0u32..0x4_0000,
        any::<u32>(),
        Just(0x8000_0000),
        Just(u32::MAX)
    ]
}

fn operand() -> impl Strategy<Value = Operand> {
    prop_oneof![
        (0..LIVE).prop_map(Operand::Reg),
        imm().prop_map(Operand::Imm)
    ]
}

fn alu_op() -> impl Strategy<Value = AluOp> {
    prop::sample::select(vec![
        AluOp::Add,
        AluOp::Sub,
        AluOp::And,
        AluOp::AndNot,
        AluOp::Or,
        AluOp::Xor,
        AluOp::Nand,
    ])
}

fn leaf() -> impl Strategy<Value = Action> {
    prop_oneof![
        (alu_op(), 0..LIVE, 0..LIVE, operand()).prop_map(|(op, d, x, y)| Action::Alu(op, d, x, y)),
        (any::<bool>(), 0..LIVE, 0..LIVE, 0u8..32)
            .prop_map(|(l, d, x, n)| Action::Shift(l, d, x, n)),
        (0..LIVE, 0..LIVE, 0..LIVE, 0u8..24, 1u8..8, 0u8..24)
            .prop_map(|(d, x, y, dp, b, sp)| Action::Merge(d, x, y, dp, b, sp)),
        (0..LIVE, 0..LIVE, 0u8..32, 1u8..31).prop_map(|(d, x, p, b)| Action::Bfe(d, x, p, b)),
        (0u16..8, 0..LIVE).prop_map(|(s, x)| Action::Emit(s, x)),
        (0u16..8, imm()).prop_map(|(s, v)| Action::EmitImm(s, v)),
        (0u16..16, 0..LIVE, 0..LIVE).prop_map(|(s, x, d)| Action::Scratch(s, x, d)),
    ]
}

fn program() -> impl Strategy<Value = Vec<Action>> {
    let action = leaf().prop_recursive(2, 24, 4, |inner| {
        prop_oneof![
            4 => leaf(),
            1 => (prop::sample::select(Cmp::ALL.to_vec()), 0..LIVE, operand(), prop::collection::vec(inner.clone(), 0..4))
                .prop_map(|(c, x, y, body)| Action::If(c, x, y, body)),
            1 => (0u32..4, prop::collection::vec(inner.clone(), 0..4)).prop_map(|(n, body)| Action::Loop(n, body)),
            1 => (0..LIVE, prop::collection::vec(inner, 0..3)).prop_map(|(x, body)| Action::LoopReg(x, body)),
        ]
    });
    prop::collection::vec(action, 1..12)
}

fn value(regs: &[Value], o: &Operand) -> Value {
    match o {
        Operand::Reg(i) => regs[*i],
        Operand::Imm(c) => Value::Imm(*c),
    }
}

fn emit_actions(b: &mut Builder, regs: &[Value], actions: &[Action]) {
    for a in actions {
        match a {
            Action::Alu(op, d, x, y) => b.alu_to(*op, regs[*d], regs[*x], value(regs, y)),
            Action::Shift(left, d, x, n) => {
                let op = if *left { AluOp::Sll } else { AluOp::Srl };
                b.alu_to(op, regs[*d], regs[*x], Value::Imm(u32::from(*n)));
            }
            Action::Merge(d, x, y, dp, bits, sp) => {
                b.merge_to(regs[*d], regs[*x], regs[*y], *dp, *bits, *sp)
            }
            Action::Bfe(d, x, p, bits) => {
                b.bfe_to(regs[*d], regs[*x], Value::Imm(u32::from(*p)), *bits)
            }
            Action::Emit(s, x) => out(b, *s, regs[*x]),
            Action::EmitImm(s, v) => out(b, *s, Value::Imm(*v)),
            Action::Scratch(slot, x, d) => {
                b.store_scratch(*slot, regs[*x]);
                b.load_scratch_to(regs[*d], *slot);
            }
            Action::If(cmp, x, y, body) => b.if_(*cmp, regs[*x], value(regs, y), |b| {
                emit_actions(b, regs, body)
            }),
            Action::Loop(n, body) => b.loop_(Value::Imm(*n), |b| emit_actions(b, regs, body)),
            Action::LoopReg(x, body) => {
                let count = b.bfe(regs[*x], Value::Zero, 2);
                b.loop_(count, |b| emit_actions(b, regs, body));
                b.free_reg(count);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The same random program gives the same method stream on the reference
    /// interpreter, the Turing simulator and the Fermi simulator.
    #[test]
    fn random_programs_agree_on_both_simulators(actions in program(), params in prop::collection::vec(any::<u32>(), LIVE)) {
        let build = |b: &mut Builder| {
            let regs: Vec<Value> = (0..LIVE).map(|_| b.load()).collect();
            emit_actions(b, &regs, &actions);
            for (i, r) in regs.iter().enumerate() {
                out(b, 100 + i as u16, *r);
            }
        };
        // Deeply nested loops can need more than Fermi's seven registers: such a program
        // is not well-formed for both instruction sets.
        let mut fermi = Builder::new(Arch::Fermi);
        build(&mut fermi);
        prop_assume!(fermi.finish().is_ok());
        run_both(&build, &params, &[]);
    }

    /// Decoding never panics; whatever decodes encodes back to the same words.
    #[test]
    fn turing_words_decode_or_fail_cleanly(words in prop::collection::vec(any::<u32>(), 0..30)) {
        if let Ok(insts) = tu104::decode(&words) {
            prop_assert_eq!(tu104::encode(&insts), words);
        }
    }

    /// Decoding never panics; whatever decodes encodes back to the same words.
    #[test]
    fn fermi_words_decode_or_fail_cleanly(words in prop::collection::vec(any::<u32>(), 0..30)) {
        if let Ok(insts) = fermi::decode(&words) {
            prop_assert_eq!(fermi::encode(&insts), words);
        }
    }

    /// Random decodable words run to an end or an error, never a panic or a hang.
    #[test]
    fn random_macros_never_panic_on_either_simulator(words in prop::collection::vec(any::<u32>(), 3..60), params in prop::collection::vec(any::<u32>(), 0..8)) {
        if let Ok(sim) = tu104::Sim::new("random", &words[..words.len() / 3 * 3]) {
            let _ = sim.run(&mut RecordingMachine::new(&params), 10_000);
        }
        if let Ok(sim) = fermi::Sim::new("random", &words) {
            let _ = sim.run(&mut RecordingMachine::new(&params), 10_000);
        }
    }
}

proptest! {
    /// decode(encode(i)) == i for any instruction the types can hold.
    #[test]
    fn turing_instructions_round_trip(w0 in any::<u32>(), w1 in any::<u32>(), w2 in any::<u32>()) {
        if let Ok(inst) = tu104::Inst::from_words([w0, w1, w2]) {
            prop_assert_eq!(tu104::Inst::from_words(inst.to_words()), Ok(inst));
        }
    }
}

/// A world for a macro that both Turing runs see alike: shadowed state and memory
/// hashed from a seed (zero, one, small or any value, so that a macro's comparisons go
/// both ways), method writes shadowed and logged.
struct HashedWorld {
    seed: u64,
    params: std::collections::VecDeque<u32>,
    written: std::collections::HashMap<u16, u32>,
    methods: Vec<(u16, u32)>,
}

impl HashedWorld {
    fn new(seed: u64, params: &[u32]) -> Self {
        HashedWorld {
            seed,
            params: params.iter().copied().collect(),
            written: Default::default(),
            methods: Vec::new(),
        }
    }

    fn value(&self, at: u64) -> u32 {
        let mut h = (at ^ self.seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
        h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^= h >> 32;
        match h % 4 {
            0 => 0,
            1 => 1,
            2 => (h >> 40) as u32 % 8,
            _ => (h >> 8) as u32,
        }
    }
}

impl driver::mme::Machine for HashedWorld {
    fn param(&mut self) -> Option<u32> {
        self.params.pop_front()
    }

    fn state(&mut self, mthd: u16) -> u32 {
        match self.written.get(&mthd) {
            Some(v) => *v,
            None => self.value(u64::from(mthd)),
        }
    }

    fn mthd(&mut self, mthd: u16, data: u32) {
        self.written.insert(mthd, data);
        self.methods.push((mthd, data));
    }

    fn read_u32(&mut self, addr: u64) -> Option<u32> {
        (addr % 7 != 3).then(|| self.value(addr | 1 << 63))
    }
}

type TuringRun = (
    Result<driver::mme::RunStats, driver::mme::RunError>,
    Vec<(u16, u32)>,
    usize,
);

/// `sim` run on its op lists and run instruction by instruction, in the same world,
/// each stopped past `budget` instructions.
fn turing_both_ways(
    sim: &tu104::Sim,
    seed: u64,
    params: &[u32],
    budget: u64,
) -> (TuringRun, TuringRun) {
    let mut fast = HashedWorld::new(seed, params);
    let fast_result = sim.run(&mut fast, budget);
    let mut whole = HashedWorld::new(seed, params);
    let whole_result = sim.run_whole(&mut whole, budget);
    (
        (fast_result, fast.methods, fast.params.len()),
        (whole_result, whole.methods, whole.params.len()),
    )
}

fn param_value() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..8, any::<u32>()]
}

/// Decodable Turing instructions: random words, those of each three that do not decode
/// left out (a NOP where none does).
fn turing_words() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(any::<[u32; 3]>(), 1..40).prop_map(|insts| {
        let words: Vec<u32> = insts
            .into_iter()
            .filter(|words| tu104::Inst::from_words(*words).is_ok())
            .flatten()
            .collect();
        match words.is_empty() {
            true => tu104::Inst::nop().to_words().to_vec(),
            false => words,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The Turing simulator's op lists (moves forwarded to outputs, parameters loaded
    /// straight into registers, dead carries and results left out, constant method
    /// selects, straight stretches run as one list) do what running each instruction
    /// whole does: the same methods, the same parameters taken, the same count or
    /// error and its address, under any budget, on random decodable words.
    #[test]
    fn turing_op_lists_equal_whole_instructions_on_random_words(words in turing_words(), seed in any::<u64>(), params in prop::collection::vec(param_value(), 0..12), budget in prop_oneof![1u64..64, Just(2_000)]) {
        let sim = tu104::Sim::new("random", &words).unwrap();
        let (fast, whole) = turing_both_ways(&sim, seed, &params, budget);
        prop_assert_eq!(fast, whole);
    }

    /// Likewise on random builder programs, lowered for Turing.
    #[test]
    fn turing_op_lists_equal_whole_instructions_on_random_programs(actions in program(), seed in any::<u64>(), params in prop::collection::vec(param_value(), LIVE), budget in prop_oneof![1u64..64, Just(2_000)]) {
        let mut b = Builder::new(Arch::Turing);
        let regs: Vec<Value> = (0..LIVE).map(|_| b.load()).collect();
        emit_actions(&mut b, &regs, &actions);
        for (i, r) in regs.iter().enumerate() {
            out(&mut b, 100 + i as u16, *r);
        }
        let words = tu104::assemble(&b.finish().unwrap()).unwrap();
        let sim = tu104::Sim::new("random", &words).unwrap();
        let (fast, whole) = turing_both_ways(&sim, seed, &params, budget);
        prop_assert_eq!(fast, whole);
    }

    /// Likewise on every macro NVK loads on Turing, with random parameters, shadowed
    /// state and memory.
    #[test]
    fn turing_op_lists_equal_whole_instructions_on_nvk_macros(seed in any::<u64>(), params in prop::collection::vec(param_value(), 0..40), budget in prop_oneof![1u64..64, Just(2_000)]) {
        for m in driver::nvk::Macro::ALL.into_iter().filter(|m| m.available_on(Arch::Turing)) {
            let words = tu104::assemble(&m.build(Arch::Turing).unwrap()).unwrap();
            let sim = tu104::Sim::new(m.name(), &words).unwrap();
            let (fast, whole) = turing_both_ways(&sim, seed, &params, budget);
            prop_assert_eq!(fast, whole, "macro {}", m.name());
        }
    }
}
