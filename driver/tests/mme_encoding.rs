//! Encodings, decode errors, delay slots and disassembly of each instruction set.

mod common;

use driver::class;
use driver::mme::{fermi, tu104, Arch, Builder, Cmp, RecordingMachine, Value};

/// The multiview loop of NVK's draw macro, small enough to read.
fn view_loop(arch: Arch) -> Builder {
    let mut b = Builder::new(arch);
    let mask = b.load();
    let view = b.mov(Value::Zero);
    b.while_(Cmp::Ne, view, Value::Imm(32), |b| {
        let bit = b.bfe(mask, view, 1);
        b.if_(Cmp::Ne, bit, Value::Zero, |b| {
            b.mthd(class::SET_RT_LAYER);
            b.emit(view);
        });
        b.free_reg(bit);
        b.add_to(view, view, Value::Imm(1));
    });
    b
}

fn disassemble<T: std::fmt::Display>(insts: &[T]) -> String {
    insts
        .iter()
        .enumerate()
        .map(|(i, inst)| format!("{i:02}: {inst}\n"))
        .collect()
}

#[test]
fn turing_disassembly_of_the_view_loop() {
    let insts = tu104::lower(&view_loop(Arch::Turing).finish().unwrap()).unwrap();
    let text = disassemble(&insts);
    let want = "\
00: $r0 = ADD LOAD0, ZERO; $r1 = ADD ZERO, ZERO
01: JAL +6
02: $r2 = SRL $r0, $r1
03: $r2 = AND $r2, 0x1
04: BEQ $r2, ZERO -> +2
05: ADD $r1, ZERO; mthd 0x15cc /* SET_RT_LAYER */, emit ALU0
06: $r1 = ADD $r1, 0x1
07: !BEQ $r1, 0x20 -> -5
08: NOP
09: NOP; END_NEXT
10: NOP
";
    assert_eq!(text, want, "\n{text}");
}

#[test]
fn fermi_disassembly_of_the_view_loop() {
    let insts = fermi::lower(&view_loop(Arch::Fermi).finish().unwrap()).unwrap();
    let text = disassemble(&insts);
    let want = "\
00: $r2 = ADD ZERO, ZERO
01: BRANCH if ZERO == 0 -> +6
02: $r3 = BFE_LSL_IMM $r1 >> $r2, size 1, << 0
03: BRANCH if $r3 == 0 -> +3
04: ADD_IMM ZERO, 0x1573 (MOVE_SET_MADDR)
05: ADD $r2, ZERO (MOVE_EMIT)
06: $r2 = ADD_IMM $r2, 0x1
07: $r3 = ADD_IMM $r2, -0x20
08: BRANCH if $r3 != 0 -> -6
09: ADD ZERO, ZERO; END_NEXT
10: ADD ZERO, ZERO
";
    assert_eq!(text, want, "\n{text}");
}

#[test]
fn regression_pre_turing_while_jumps_onto_its_compare() {
    // nv-facts §5: the broken builder closed the forward jump after emitting the
    // compare, so the jump landed on the back branch and tested a stale value.
    let insts = fermi::lower(&view_loop(Arch::Fermi).finish().unwrap()).unwrap();
    let jump = insts
        .iter()
        .position(|i| i.op == fermi::Op::Branch)
        .unwrap();
    let target = (jump as i32 + insts[jump].imm) as usize;
    assert_ne!(
        insts[target].op,
        fermi::Op::Branch,
        "the loop's first jump must land on the compare"
    );
    assert_eq!(insts[target + 1].op, fermi::Op::Branch);

    // Hand-assembled, the broken layout misbehaves on the simulator: it skips the
    // compare, tests the stale register (0 at entry) and never runs the body.
    let mut broken = insts.clone();
    broken[jump].imm += 1;
    let mut m = RecordingMachine::new(&[0xffff_ffff]);
    fermi::Sim::new("broken_while", &fermi::encode(&broken))
        .unwrap()
        .run(&mut m, 100_000)
        .unwrap();
    let layers = m
        .methods
        .iter()
        .filter(|(mthd, _)| *mthd == class::SET_RT_LAYER)
        .count();
    assert_eq!(layers, 0, "the stale compare skips every view");

    let mut m = RecordingMachine::new(&[0xffff_ffff]);
    fermi::Sim::new("while", &fermi::encode(&insts))
        .unwrap()
        .run(&mut m, 100_000)
        .unwrap();
    assert_eq!(
        m.methods
            .iter()
            .filter(|(mthd, _)| *mthd == class::SET_RT_LAYER)
            .count(),
        32
    );
}

#[test]
fn fermi_branches_run_their_delay_slot_unless_told_not_to() {
    use fermi::{Assign, Inst, Op};
    let emit = |v: i32| Inst {
        op: Op::AddImm,
        assign: Assign::MoveEmit,
        imm: v,
        ..Inst::default()
    };
    let set_mthd = Inst {
        op: Op::AddImm,
        assign: Assign::MoveSetMaddr,
        imm: 0x400 | (1 << 12),
        ..Inst::default()
    };
    let program = |no_delay: bool| {
        vec![
            set_mthd,
            Inst {
                op: Op::Branch,
                not_zero: false,
                no_delay,
                imm: 3,
                ..Inst::default()
            },
            emit(1), // delay slot
            emit(2), // skipped
            emit(3), // target
            Inst {
                end_next: true,
                ..Inst::nop()
            },
            Inst::nop(),
        ]
    };
    let values = |no_delay| {
        let mut m = RecordingMachine::new(&[0]);
        fermi::Sim::new("delay", &fermi::encode(&program(no_delay)))
            .unwrap()
            .run(&mut m, 100)
            .unwrap();
        m.methods.iter().map(|(_, v)| *v).collect::<Vec<_>>()
    };
    assert_eq!(values(false), vec![1, 3]);
    assert_eq!(values(true), vec![3]);
}

#[test]
fn turing_end_next_runs_one_more_instruction() {
    use tu104::{Inst, Out, OutSrc};
    let emit = |v: u16| Inst {
        imm: [0x400 | (1 << 12), v],
        out: [
            Out {
                mthd: OutSrc::Imm0,
                emit: OutSrc::Imm1,
            },
            Out::default(),
        ],
        ..Inst::nop()
    };
    let words = tu104::encode(&[
        emit(1),
        Inst {
            end_next: true,
            ..emit(2)
        },
        emit(3),
        emit(4),
    ]);
    let mut m = RecordingMachine::new(&[]);
    let stats = tu104::Sim::new("end_next", &words)
        .unwrap()
        .run(&mut m, 100)
        .unwrap();
    assert_eq!(m.methods, vec![(0x1000, 1), (0x1000, 2), (0x1000, 3)]);
    assert_eq!(stats.instructions, 3);
}

#[test]
fn turing_words_are_stored_high_dword_first() {
    // end_next is bit 0 of the 96-bit instruction: the last stored word's bit 0.
    let inst = tu104::Inst {
        end_next: true,
        ..tu104::Inst::nop()
    };
    let words = inst.to_words();
    assert_eq!(words[2] & 1, 1);
    // The emit source of out1 is bits 95:92: the first stored word's top nibble.
    let mut inst = tu104::Inst::nop();
    inst.out[1].emit = tu104::OutSrc::Imm32;
    assert_eq!(inst.to_words()[0] >> 28, 10);
}

#[test]
fn malformed_words_are_decode_errors() {
    let err = tu104::decode(&[0, 0]).unwrap_err();
    assert!(err.problem.contains("not a whole number"), "{err}");
    // ALU0 dst = 30: no such register.
    let err = tu104::decode(&[0, 0, 30 << 15]).unwrap_err();
    assert!(err.to_string().contains("register code 30"), "{err}");
    // out0 method source 7: reserved.
    let err = tu104::decode(&[7 << 18, 0, 0]).unwrap_err();
    assert!(err.to_string().contains("method source code 7"), "{err}");
    let err = fermi::decode(&[0x11, 6]).unwrap_err();
    assert_eq!(err.index, 1);
    assert!(err.problem.contains("UNK6"), "{err}");
    let err = fermi::decode(&[4 << 17]).unwrap_err();
    assert!(err.problem.contains("ALU op 4 is reserved"), "{err}");
}

#[test]
fn known_encodings() {
    // Fermi NOP: Mesa's MME_FERMI_INST_DEFAULTS, ALU_REG ADD ZERO + ZERO with assign
    // MOVE, everything else zero.
    assert_eq!(fermi::Inst::nop().to_word(), 0x0000_0010);
    // Method select 0x15cc on Fermi: ADD_IMM r0 = r0 + (0x1573 | 1 << 12) << 14, MOVE_SET_MADDR.
    let mut b = Builder::new(Arch::Fermi);
    b.mthd(class::SET_RT_LAYER);
    let words = fermi::assemble(&b.finish().unwrap()).unwrap();
    assert_eq!(words[0], (0x1573 << 14) | (2 << 4) | 1);
    // A Turing NOP: every ALU slot adds ZERO + ZERO into ZERO.
    let nop = tu104::Inst::nop().to_words();
    assert_eq!(tu104::decode(&nop).unwrap()[0], tu104::Inst::nop());
}
