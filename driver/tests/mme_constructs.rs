//! Every builder construct on both instruction sets, each checked three ways: against
//! the reference interpreter, between the two simulators, and against values worked out
//! by hand.

mod common;

use common::{out, outputs, run_both, run_on, OUT};
use driver::class;
use driver::mme::{Arch, Builder, Cmp, Value};

const EDGES: [u32; 7] = [0, 1, 2, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, 0xffff_ffff];

#[test]
fn alu_ops_with_registers_and_immediates_of_every_width() {
    type Reference = fn(u32, u32) -> u32;
    let ops: [(&str, Reference); 7] = [
        ("add", u32::wrapping_add),
        ("sub", u32::wrapping_sub),
        ("and", |x, y| x & y),
        ("and_not", |x, y| x & !y),
        ("or", |x, y| x | y),
        ("xor", |x, y| x ^ y),
        ("nand", |x, y| !(x & y)),
    ];
    let immediates = [
        0u32,
        1,
        0x7fff,
        0x8000,
        0xffff,
        0x1_0000,
        0x1_ffff,
        0x2_0000,
        0xdead_beef,
        0xffff_8000,
        0xffff_ffff,
    ];
    for (name, f) in ops {
        for x in [0x1234_5678u32, 0xffff_ffff, 5] {
            let build = |b: &mut Builder| {
                let v = b.load();
                for (i, imm) in immediates.iter().enumerate() {
                    let r = apply(b, name, v, Value::Imm(*imm));
                    out(b, i as u16, r);
                    b.free_reg(r);
                    let r = apply(b, name, Value::Imm(*imm), v);
                    out(b, 100 + i as u16, r);
                    b.free_reg(r);
                }
                let r = apply(b, name, v, v);
                out(b, 200, r);
            };
            let got = outputs(&run_both(&build, &[x], &[]));
            let mut want: Vec<(u16, u32)> = Vec::new();
            for (i, imm) in immediates.iter().enumerate() {
                want.push((i as u16, f(x, *imm)));
                want.push((100 + i as u16, f(*imm, x)));
            }
            want.push((200, f(x, x)));
            let mut got_sorted = got.clone();
            got_sorted.sort();
            want.sort();
            assert_eq!(got_sorted, want, "{name} with x = {x:#x}");
        }
    }
}

fn apply(b: &mut Builder, name: &str, x: Value, y: Value) -> Value {
    match name {
        "add" => b.add(x, y),
        "sub" => b.sub(x, y),
        "and" => b.and(x, y),
        "and_not" => b.and_not(x, y),
        "or" => b.or(x, y),
        "xor" => b.xor(x, y),
        "nand" => {
            let r = b.alloc_reg();
            b.alu_to(driver::mme::AluOp::Nand, r, x, y);
            r
        }
        _ => unreachable!(),
    }
}

#[test]
fn alu_results_can_overwrite_their_operands() {
    let build = |b: &mut Builder| {
        let x = b.load();
        let y = b.load();
        b.and_not_to_check(x, y);
    };
    // and_not into each operand exercises Turing's two-instruction AND-NOT both ways.
    trait AndNotTo {
        fn and_not_to_check(&mut self, x: Value, y: Value);
    }
    impl AndNotTo for Builder {
        fn and_not_to_check(&mut self, x: Value, y: Value) {
            let x2 = self.mov(x);
            self.alu_to(driver::mme::AluOp::AndNot, x2, x2, y);
            out(self, 0, x2);
            let y2 = self.mov(y);
            self.alu_to(driver::mme::AluOp::AndNot, y2, x, y2);
            out(self, 1, y2);
            self.add_to(x, x, x);
            out(self, 2, x);
        }
    }
    let got = outputs(&run_both(&build, &[0b1100, 0b1010], &[]));
    assert_eq!(got, vec![(0, 0b0100), (1, 0b0100), (2, 0b11000)]);
}

#[test]
fn shifts_by_immediates() {
    for n in [0u32, 1, 4, 16, 31] {
        let build = |b: &mut Builder| {
            let v = b.load();
            let l = b.sll(v, Value::Imm(n));
            out(b, 0, l);
            let r = b.srl(v, Value::Imm(n));
            out(b, 1, r);
        };
        for x in [0x8000_0001u32, 0xffff_ffff, 0x1234_5678] {
            assert_eq!(
                outputs(&run_both(&build, &[x], &[])),
                vec![(0, x << n), (1, x >> n)],
                "n = {n}, x = {x:#x}"
            );
        }
    }
}

#[test]
fn add64_and_sub64_carry_between_halves() {
    let cases: [(u64, u64); 5] = [
        (0xffff_ffff, 1),
        (0x1_0000_0000, 1),
        (u64::MAX, 1),
        (0x1234_5678_9abc_def0, 0xfedc_ba98_7654_3210),
        (0, 0),
    ];
    for (x, y) in cases {
        let build = |b: &mut Builder| {
            let xl = b.load();
            let xh = b.load();
            let yl = b.load();
            let yh = b.load();
            let s = b.add64([xl, xh], [yl, yh]);
            out(b, 0, s[0]);
            out(b, 1, s[1]);
            s.into_iter().for_each(|v| b.free_reg(v));
            let d = b.sub64([xl, xh], [yl, yh]);
            out(b, 2, d[0]);
            out(b, 3, d[1]);
            d.into_iter().for_each(|v| b.free_reg(v));
            let i = b.add64([xl, xh], [Value::Imm(1), Value::Zero]);
            out(b, 4, i[0]);
            out(b, 5, i[1]);
        };
        let params = [x as u32, (x >> 32) as u32, y as u32, (y >> 32) as u32];
        let (sum, diff, inc) = (x.wrapping_add(y), x.wrapping_sub(y), x.wrapping_add(1));
        let want = vec![
            (0, sum as u32),
            (1, (sum >> 32) as u32),
            (2, diff as u32),
            (3, (diff >> 32) as u32),
            (4, inc as u32),
            (5, (inc >> 32) as u32),
        ];
        assert_eq!(
            outputs(&run_both(&build, &params, &[])),
            want,
            "{x:#x} +/- {y:#x}"
        );
    }
}

#[test]
fn merge_and_bitfield_extract_at_immediate_and_register_positions() {
    let build = |b: &mut Builder| {
        let x = b.load();
        let y = b.load();
        let pos = b.load();
        let m = b.merge(x, y, 8, 4, 4);
        out(b, 0, m);
        let e = b.bfe(y, Value::Imm(4), 8);
        out(b, 1, e);
        let e = b.bfe(y, pos, 3);
        out(b, 2, e);
        let one = b.bfe(y, pos, 1);
        out(b, 3, one);
    };
    let (x, y) = (0xffff_ffffu32, 0x1234_5678u32);
    for pos in [0u32, 3, 13, 28] {
        let want = vec![
            (0, (x & !(0xf << 8)) | (((y >> 4) & 0xf) << 8)),
            (1, (y >> 4) & 0xff),
            (2, (y >> pos) & 7),
            (3, (y >> pos) & 1),
        ];
        assert_eq!(
            outputs(&run_both(&build, &[x, y, pos], &[])),
            want,
            "pos {pos}"
        );
    }
}

#[test]
fn moves_emits_and_method_arrays() {
    let build = |b: &mut Builder| {
        let index = b.load();
        for (i, c) in [
            0u32,
            7,
            0xffff,
            0x1_0000,
            0x8000_0000,
            0xffff_ffff,
            0x3_ffff,
        ]
        .iter()
        .enumerate()
        {
            let v = b.mov(Value::Imm(*c));
            out(b, i as u16, v);
            b.free_reg(v);
            out(b, 10 + i as u16, Value::Imm(*c));
        }
        // Consecutive emits advance the method; an index selects the method.
        b.mthd(OUT + 4 * 20);
        b.emit(Value::Imm(1));
        b.emit(Value::Imm(2));
        b.emit(index);
        b.mthd_arr(OUT + 4 * 30, index);
        b.emit(Value::Imm(0xabcd_ef01));
    };
    let got = outputs(&run_both(&build, &[3], &[]));
    let mut want = Vec::new();
    for (i, c) in [
        0u32,
        7,
        0xffff,
        0x1_0000,
        0x8000_0000,
        0xffff_ffff,
        0x3_ffff,
    ]
    .iter()
    .enumerate()
    {
        want.push((i as u16, *c));
        want.push((10 + i as u16, *c));
    }
    want.extend([(20, 1), (21, 2), (22, 3), (33, 0xabcd_ef01)]);
    assert_eq!(got, want);
}

#[test]
fn loads_state_reads_and_the_shadow_scratch() {
    let build = |b: &mut Builder| {
        let a = b.load();
        let s = b.state(class::SET_RT_LAYER);
        out(b, 0, s);
        b.store_scratch(5, a);
        let back = b.load_scratch(5);
        out(b, 1, back);
        b.load_to_scratch(6);
        let third = b.load_scratch(6);
        out(b, 2, third);
        let idx = b.mov(Value::Imm(2));
        let arr = b.state_arr(class::SET_MME_SHADOW_SCRATCH + 4 * 4, idx);
        out(b, 3, arr);
    };
    let methods = run_both(&build, &[11, 22], &[(class::SET_RT_LAYER, 0x55)]);
    assert_eq!(
        outputs(&methods),
        vec![(0, 0x55), (1, 11), (2, 22), (3, 22)]
    );
    // The scratch stores are method writes too.
    assert!(methods.contains(&(class::SET_MME_SHADOW_SCRATCH + 4 * 5, 11)));
}

#[test]
fn if_takes_every_comparison_both_ways() {
    for cmp in Cmp::ALL {
        let build = |b: &mut Builder| {
            let x = b.load();
            let y = b.load();
            b.if_(cmp, x, y, |b| out(b, 0, Value::Imm(1)));
            b.if_(cmp, x, Value::Imm(2), |b| out(b, 1, Value::Imm(1)));
            b.if_(cmp, Value::Imm(0x8000_0000), y, |b| {
                out(b, 2, Value::Imm(1))
            });
            out(b, 3, Value::Imm(9));
        };
        for x in EDGES {
            for y in EDGES {
                let mut want = Vec::new();
                if cmp.eval(x, y) {
                    want.push((0, 1));
                }
                if cmp.eval(x, 2) {
                    want.push((1, 1));
                }
                if cmp.eval(0x8000_0000, y) {
                    want.push((2, 1));
                }
                want.push((3, 9));
                assert_eq!(
                    outputs(&run_both(&build, &[x, y], &[])),
                    want,
                    "{cmp:?} {x:#x} {y:#x}"
                );
            }
        }
    }
}

#[test]
fn while_loops_to_a_non_zero_bound_on_both_instruction_sets() {
    // The multiview loop: `view = 0; while (view != 32) { ...; view += 1 }`. The
    // pre-Turing bug tested a stale value here and ran once or forever.
    let build = |b: &mut Builder| {
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
        out(b, 0, view);
    };
    for mask in [0u32, 1, 0b1111, 0x8001, 0xffff_ffff, 5, 10] {
        let methods = run_both(&build, &[mask], &[]);
        let layers: Vec<u32> = methods
            .iter()
            .filter(|(m, _)| *m == class::SET_RT_LAYER)
            .map(|(_, v)| *v)
            .collect();
        let want: Vec<u32> = (0..32).filter(|v| mask & (1 << v) != 0).collect();
        assert_eq!(layers, want, "mask {mask:#x}");
        assert_eq!(outputs(&methods), vec![(0, 32)]);
    }
}

#[test]
fn while_with_a_false_condition_runs_zero_times() {
    let build = |b: &mut Builder| {
        let n = b.load();
        let i = b.mov(Value::Zero);
        b.while_(Cmp::Ltu, i, n, |b| {
            out(b, 1, i);
            b.add_to(i, i, Value::Imm(1));
        });
        out(b, 0, i);
    };
    assert_eq!(outputs(&run_both(&build, &[0], &[])), vec![(0, 0)]);
    assert_eq!(
        outputs(&run_both(&build, &[3], &[])),
        vec![(1, 0), (1, 1), (1, 2), (0, 3)]
    );
}

#[test]
fn loop_with_a_count_of_zero_runs_zero_times() {
    let build = |b: &mut Builder| {
        let n = b.load();
        b.loop_(n, |b| out(b, 0, Value::Imm(7)));
        b.loop_(Value::Zero, |b| out(b, 1, Value::Imm(7)));
        b.loop_(Value::Imm(2), |b| out(b, 2, Value::Imm(7)));
        out(b, 3, n);
    };
    for n in [0u32, 1, 2, 5] {
        let mut want = vec![(0u16, 7u32); n as usize];
        want.extend([(2, 7), (2, 7), (3, n)]);
        assert_eq!(outputs(&run_both(&build, &[n], &[])), want, "count {n}");
    }
}

#[test]
fn nested_loops_and_a_conditional_at_the_end_of_a_loop() {
    // The inner loop cannot use Turing's LOOP (one at a time); the `if` ending the outer
    // body must not branch past the LOOP's end.
    let build = |b: &mut Builder| {
        let outer = b.load();
        let inner = b.load();
        let i = b.mov(Value::Zero);
        b.loop_(outer, |b| {
            b.loop_(inner, |b| {
                out(b, 0, i);
            });
            b.add_to(i, i, Value::Imm(1));
            b.if_(Cmp::Eq, i, Value::Imm(2), |b| out(b, 1, i));
        });
    };
    let got = outputs(&run_both(&build, &[3, 2], &[]));
    assert_eq!(
        got,
        vec![(0, 0), (0, 0), (0, 1), (0, 1), (1, 2), (0, 2), (0, 2)]
    );
    let got = outputs(&run_both(&build, &[2, 0], &[]));
    assert_eq!(got, vec![(1, 2)]);
}

#[test]
fn exit_if_ends_the_macro() {
    let build = |b: &mut Builder| {
        let x = b.load();
        out(b, 0, x);
        b.exit_if(Cmp::Eq, x, Value::Imm(3));
        out(b, 1, x);
        let i = b.mov(Value::Zero);
        b.while_(Cmp::Ne, i, Value::Imm(10), |b| {
            b.exit_if(Cmp::Eq, i, x);
            b.add_to(i, i, Value::Imm(1));
        });
        out(b, 2, i);
    };
    assert_eq!(outputs(&run_both(&build, &[3], &[])), vec![(0, 3)]);
    assert_eq!(outputs(&run_both(&build, &[5], &[])), vec![(0, 5), (1, 5)]);
    assert_eq!(
        outputs(&run_both(&build, &[50], &[])),
        vec![(0, 50), (1, 50), (2, 10)]
    );
}

#[test]
fn more_live_values_than_fermi_has_registers_through_spills() {
    // Nine values are live across the program; Fermi has seven registers. The first
    // three go to shadow scratch while six more are worked on, then come back into the
    // very registers they left.
    let build = |b: &mut Builder| {
        let kept: Vec<Value> = (0..3).map(|_| b.load()).collect();
        for (slot, v) in kept.iter().enumerate() {
            b.spill(10 + slot as u16, *v);
        }
        let more: Vec<Value> = (0..6).map(|_| b.load()).collect();
        for i in 0..3 {
            let sum = b.add(more[i], more[3 + i]);
            out(b, i as u16, sum);
            b.free_reg(sum);
        }
        for v in more {
            b.free_reg(v);
        }
        for (slot, v) in kept.iter().enumerate() {
            b.unspill(10 + slot as u16, *v);
        }
        for (i, v) in kept.iter().enumerate() {
            out(b, 10 + i as u16, *v);
        }
    };
    let params: Vec<u32> = (1..=9).map(|i| i * 100).collect();
    let got = outputs(&run_both(&build, &params, &[]));
    let want = vec![
        (0, 400 + 700),
        (1, 500 + 800),
        (2, 600 + 900),
        (10, 100),
        (11, 200),
        (12, 300),
    ];
    assert_eq!(got, want);
}

#[test]
fn without_spills_fermi_runs_out_of_registers() {
    let mut b = Builder::new(Arch::Fermi);
    let _vals: Vec<Value> = (0..8).map(|_| b.load()).collect();
    let err = b.finish().unwrap_err();
    assert!(
        err.to_string().contains("out of registers on fermi"),
        "{err}"
    );
}

#[test]
fn turing_only_constructs_run_on_turing_and_are_refused_on_fermi() {
    let build = |b: &mut Builder| {
        let x = b.load();
        let y = b.load();
        let p = b.mul(x, y);
        out(b, 0, p);
        b.dwrite(Value::Imm(0x20), x);
        b.dwrite(y, Value::Imm(0x1234_5678));
        let r = b.dread(Value::Imm(0x20));
        out(b, 1, r);
        let r = b.dread(y);
        out(b, 2, r);
        let shift = b.sll(x, y);
        out(b, 3, shift);
        // Indirect parameters: four dwords from memory become the next loads.
        b.read_fifoed(Value::Zero, Value::Imm(0x1000), Value::Imm(4));
        for i in 0..4 {
            let v = b.load();
            out(b, 10 + i, v);
            b.free_reg(v);
        }
        let after = b.load();
        out(b, 20, after);
    };
    let memory = [(0x1000u64, vec![9, 8, 7, 6])];
    let (turing, _) = run_on(Arch::Turing, &build, &[6, 7, 99], &[], &memory).unwrap();
    let got = outputs(&turing.methods);
    assert_eq!(
        got,
        vec![
            (0, 42),
            (1, 6),
            (2, 0x1234_5678),
            (3, 6 << 7),
            (10, 9),
            (11, 8),
            (12, 7),
            (13, 6),
            (20, 99)
        ]
    );

    let mut b = Builder::new(Arch::Fermi);
    let x = b.load();
    b.mul(x, x);
    assert!(b
        .finish()
        .unwrap_err()
        .to_string()
        .contains("multiplication is not available on fermi"));
    let mut b = Builder::new(Arch::Fermi);
    b.read_fifoed(Value::Zero, Value::Zero, Value::Imm(1));
    assert!(b.finish().is_err());
}

#[test]
fn a_macro_that_loops_forever_stops_at_its_budget_with_name_and_address() {
    use driver::mme::{fermi, tu104, RecordingMachine, RunErrorKind};
    for arch in [Arch::Turing, Arch::Fermi] {
        let mut b = Builder::new(arch);
        let x = b.load();
        b.while_(Cmp::Eq, x, x, |b| out(b, 0, x));
        let program = b.finish().unwrap();
        let mut m = RecordingMachine::new(&[1]);
        let err = match arch {
            Arch::Turing => tu104::Sim::new("draw_forever", &tu104::assemble(&program).unwrap())
                .unwrap()
                .run(&mut m, 5000),
            Arch::Fermi => fermi::Sim::new("draw_forever", &fermi::assemble(&program).unwrap())
                .unwrap()
                .run(&mut m, 5000),
        }
        .unwrap_err();
        assert_eq!(err.kind, RunErrorKind::BudgetExceeded { budget: 5000 });
        let text = err.to_string();
        assert!(
            text.starts_with("macro `draw_forever` at instruction 0x"),
            "{text}"
        );
        assert!(text.contains("budget of 5000"), "{text}");
        assert!(m.methods.len() > 100, "{arch:?} ran the loop body");
    }
}

#[test]
fn missing_parameters_and_emits_without_a_method_are_errors() {
    use driver::mme::{tu104, RecordingMachine, RunErrorKind};
    let mut b = Builder::new(Arch::Turing);
    let a = b.load();
    let c = b.load();
    out(&mut b, 0, a);
    out(&mut b, 1, c);
    let words = tu104::assemble(&b.finish().unwrap()).unwrap();
    let err = tu104::Sim::new("two_params", &words)
        .unwrap()
        .run(&mut RecordingMachine::new(&[1]), 100)
        .unwrap_err();
    assert_eq!(err.kind, RunErrorKind::ParamsExhausted);

    let mut b = Builder::new(Arch::Turing);
    b.emit(Value::Imm(1));
    let words = tu104::assemble(&b.finish().unwrap()).unwrap();
    let err = tu104::Sim::new("no_mthd", &words)
        .unwrap()
        .run(&mut RecordingMachine::new(&[]), 100)
        .unwrap_err();
    assert_eq!(err.kind, RunErrorKind::EmitWithoutMethod);
}

#[test]
fn instruction_counts_differ_between_instruction_sets() {
    let build = |b: &mut Builder| {
        let x = b.load();
        let y = b.mov(Value::Imm(0xdead_beef));
        let s = b.add(x, y);
        out(b, 0, s);
        out(b, 1, Value::Imm(0x8000_0000));
    };
    let (_, turing) = run_on(Arch::Turing, &build, &[1], &[], &[]).unwrap();
    let (_, fermi) = run_on(Arch::Fermi, &build, &[1], &[], &[]).unwrap();
    // Fermi builds 32-bit immediates in three instructions and selects methods apart
    // from emitting.
    assert!(fermi > turing, "fermi {fermi} vs turing {turing}");
}

#[test]
fn out_of_range_arguments_are_build_errors_not_panics() {
    let mut b = Builder::new(Arch::Turing);
    let x = b.load();
    b.merge(x, x, 0, 32, 0);
    assert!(b.finish().is_err());
    let mut b = Builder::new(Arch::Fermi);
    b.load_scratch(200);
    assert!(b
        .finish()
        .unwrap_err()
        .to_string()
        .contains("scratch slot 200"));
    let mut b = Builder::new(Arch::Turing);
    b.mthd(0x4000);
    assert!(b.finish().is_err());
}

#[test]
fn constructs_unknown_to_an_instruction_set_do_not_lower() {
    use driver::mme::{fermi, tu104, Op, Program, Reg};
    let program = Program {
        arch: Arch::Fermi,
        ops: vec![Op::Barrier],
    };
    assert!(fermi::lower(&program).is_err());
    assert!(tu104::lower(&program).is_err(), "wrong arch");
    let program = Program {
        arch: Arch::Fermi,
        ops: vec![Op::Load { dst: Reg(9) }],
    };
    assert!(fermi::lower(&program).is_err());
}

#[test]
fn emitting_many_values_packs_turing_outputs() {
    use driver::mme::tu104;
    let mut b = Builder::new(Arch::Turing);
    let x = b.load();
    b.mthd(OUT);
    b.emit(x);
    b.emit(Value::Imm(5));
    b.mthd(OUT + 0x40);
    b.emit(x);
    let insts = tu104::lower(&b.finish().unwrap()).unwrap();
    // As Mesa's builder packs it: {load, mthd + emit from the load's ALU, emit};
    // {mthd + emit}; the two-NOP tail.
    assert_eq!(insts.len(), 4, "{insts:#?}");
    assert_eq!(insts[0].out[0].emit, tu104::OutSrc::Alu0, "{insts:#?}");
}
