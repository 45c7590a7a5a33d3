//! The pre-Turing simulator runs decoded steps, fused pairs and runs of plain
//! instructions without their per-instruction checks; here it must agree, on random
//! macros, with an interpreter that takes the ISA one instruction at a time, as its
//! description reads: the same method writes, instruction count, error and place of the
//! error, under any budget.

use driver::mme::fermi::{self, AluOp, Assign, Inst, Op};
use driver::mme::{mask, Machine, RecordingMachine, RunError, RunErrorKind, RunStats};
use proptest::prelude::*;

/// Runs `insts` one instruction at a time against `m`.
fn interpret(
    insts: &[Inst],
    m: &mut RecordingMachine,
    budget: u64,
) -> Result<u64, (u32, RunErrorKind)> {
    let mut regs = [0u32; 8];
    let mut carry = 0u32;
    let mut method: Option<(u16, u16)> = None;
    regs[1] = m.param().unwrap_or(0);
    let (mut ip, mut executed, mut ending, mut delayed) = (0i64, 0u64, false, None::<i64>);
    loop {
        if executed >= budget {
            return Err((ip as u32, RunErrorKind::BudgetExceeded { budget }));
        }
        let Some(inst) = insts.get(ip as usize) else {
            return Err((ip as u32, RunErrorKind::FellOffEnd));
        };
        executed += 1;
        let (x, y) = (regs[usize::from(inst.src0)], regs[usize::from(inst.src1)]);
        let mut next = ip + 1;
        let mut taken = None;
        let bfe = |v: u32, src_bit: u32, dst_bit: u32| match src_bit > 31 || dst_bit > 31 {
            true => 0,
            false => ((v >> src_bit) & mask(inst.size)) << dst_bit,
        };
        let result = match (inst.op, inst.alu_op) {
            (Op::Branch, _) => {
                if (x != 0) == inst.not_zero {
                    match inst.no_delay {
                        true => next = ip + i64::from(inst.imm),
                        false => taken = Some(ip + i64::from(inst.imm)),
                    }
                }
                None
            }
            (Op::AluReg, op) => Some(match op {
                AluOp::Add | AluOp::Addc => {
                    let c = if op == AluOp::Addc { carry } else { 0 };
                    let wide = u64::from(x) + u64::from(y) + u64::from(c);
                    carry = u32::from(wide > u64::from(u32::MAX));
                    wide as u32
                }
                AluOp::Sub | AluOp::Subb => {
                    let b = if op == AluOp::Subb { carry } else { 0 };
                    let wide = i64::from(x) - i64::from(y) - i64::from(b);
                    carry = u32::from(wide < 0);
                    wide as u32
                }
                AluOp::Xor => x ^ y,
                AluOp::Or => x | y,
                AluOp::And => x & y,
                AluOp::AndNot => x & !y,
                AluOp::Nand => !(x & y),
            }),
            (Op::AddImm, _) => Some(x.wrapping_add(inst.imm as u32)),
            (Op::Merge, _) => {
                let field = mask(inst.size) << inst.dst_bit;
                Some((x & !field) | bfe(y, u32::from(inst.src_bit), u32::from(inst.dst_bit)))
            }
            (Op::BfeLslImm, _) => Some(bfe(y, x, u32::from(inst.dst_bit))),
            (Op::BfeLslReg, _) => Some(bfe(y, u32::from(inst.src_bit), x)),
            (Op::State, _) => {
                Some(m.state((x.wrapping_add(inst.imm as u32).wrapping_mul(4) & 0x3ffc) as u16))
            }
        };
        if let Some(r) = result {
            let fault = |kind| Err((ip as u32, kind));
            let loads = matches!(
                inst.assign,
                Assign::Load | Assign::LoadEmit | Assign::LoadSetMaddr
            );
            let value = match loads {
                true => match m.param() {
                    Some(p) => p,
                    None => return fault(RunErrorKind::ParamsExhausted),
                },
                false => r,
            };
            if inst.dst != 0 {
                regs[usize::from(inst.dst)] = value;
            }
            if matches!(
                inst.assign,
                Assign::MoveSetMaddr
                    | Assign::LoadSetMaddr
                    | Assign::MoveSetMaddrLoadEmit
                    | Assign::MoveSetMaddrLoadEmitHigh
            ) {
                method = Some((((r & 0xfff) << 2) as u16, ((r >> 12) & 0xf) as u16));
            }
            let emitted = match inst.assign {
                Assign::LoadEmit | Assign::MoveEmit => Some(r),
                Assign::MoveSetMaddrLoadEmit => match m.param() {
                    Some(p) => Some(p),
                    None => return fault(RunErrorKind::ParamsExhausted),
                },
                Assign::MoveSetMaddrLoadEmitHigh => Some((r >> 12) & 0x3f),
                _ => None,
            };
            if let Some(data) = emitted {
                let Some((mthd, inc)) = method else {
                    return fault(RunErrorKind::EmitWithoutMethod);
                };
                m.mthd(mthd, data);
                method = Some(((mthd + 4 * inc) & 0x3ffc, inc));
            }
        }
        if let Some(target) = delayed.take() {
            next = target;
        }
        delayed = taken;
        if ending {
            return Ok(executed);
        }
        ending = inst.end_next;
        if next < 0 || next as usize >= insts.len() {
            return Err((ip as u32, RunErrorKind::JumpOutOfRange { target: next }));
        }
        ip = next;
    }
}

/// Words that decode more often than random ones: ops 0–5 and 7, the bits each op
/// leaves unused cleared, short branches.
fn word() -> impl Strategy<Value = u32> {
    (
        any::<u32>(),
        prop::sample::select(vec![0u32, 1, 2, 3, 4, 5, 7]),
        0u32..8,
        -6i32..6,
    )
        .prop_map(|(bits, op, alu, branch)| {
            let common = (bits & 0x3ff0) | op;
            match op {
                0 => {
                    common
                        | (bits & (7 << 14))
                        | ([0, 1, 2, 3, 8, 9, 10, 11, 12][alu as usize % 9] << 17)
                }
                7 => (common & !(0x7 << 8) & !(1 << 6)) | (((branch as u32) & 0x3ffff) << 14),
                _ => common | (bits & 0xffff_c000),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn random_macros_run_as_the_isa_reads_one_instruction_at_a_time(
        words in prop::collection::vec(word(), 1..40),
        params in prop::collection::vec(any::<u32>(), 0..12),
        state in prop::collection::vec((0u16..0x1000, any::<u32>()), 0..6),
        budget in prop::sample::select(vec![1u64, 3, 7, 20, 200]),
    ) {
        let Ok(sim) = fermi::Sim::new("random", &words) else { return Ok(()) };
        let mut machine = RecordingMachine::new(&params);
        for (mthd, value) in &state {
            machine.set_state(mthd * 4, *value);
        }
        let mut expected_machine = machine.clone();
        let expected = interpret(sim.insts(), &mut expected_machine, budget);
        let got = sim.run(&mut machine, budget);
        let got = got.map(|RunStats { instructions }| instructions).map_err(|RunError { ip, kind, .. }| (ip, kind));
        prop_assert_eq!(got, expected);
        prop_assert_eq!(machine.methods, expected_machine.methods);
    }
}
