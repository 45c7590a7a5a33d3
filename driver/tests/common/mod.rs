//! The shared runner: one builder program, built for both instruction sets, run by the
//! reference interpreter and by each simulator on the encoded words.

#![allow(dead_code)]

use driver::mme::{
    fermi, reference, tu104, Arch, Builder, RecordingMachine, RunError, DEFAULT_BUDGET,
};

/// Where test programs write their results: `OUT + 4 * i`.
pub const OUT: u16 = 0x1000;

/// Emits `v` to output slot `i`.
pub fn out(b: &mut Builder, i: u16, v: impl Into<driver::mme::Value>) {
    b.mthd(OUT + 4 * i);
    b.emit(v);
}

/// What one run gave.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    pub methods: Vec<(u16, u32)>,
    pub params_left: usize,
}

/// A machine with `params`, shadow state `state` and memory `memory`.
pub fn machine(
    params: &[u32],
    state: &[(u16, u32)],
    memory: &[(u64, Vec<u32>)],
) -> RecordingMachine {
    let mut m = RecordingMachine::new(params);
    for (mthd, v) in state {
        m.set_state(*mthd, *v);
    }
    for (addr, words) in memory {
        m.write_memory(*addr, words);
    }
    m
}

/// Builds `build` for `arch` and runs it three ways (reference, simulator, and the
/// simulator again after a decode/encode round trip); all must agree.
pub fn run_on(
    arch: Arch,
    build: &dyn Fn(&mut Builder),
    params: &[u32],
    state: &[(u16, u32)],
    memory: &[(u64, Vec<u32>)],
) -> Result<(Outcome, u64), RunError> {
    let mut b = Builder::new(arch);
    build(&mut b);
    let program = b.finish().expect("the program builds");

    let mut m = machine(params, state, memory);
    let reference_result = reference::run(&program, "test", &mut m, DEFAULT_BUDGET);
    let reference = reference_result.map(|_| Outcome {
        methods: m.methods.clone(),
        params_left: m.params_left(),
    });

    let mut m = machine(params, state, memory);
    let simulated = match arch {
        Arch::Turing => {
            let words = tu104::assemble(&program).expect("lowers");
            assert_eq!(
                tu104::encode(&tu104::decode(&words).expect("decodes")),
                words,
                "Turing round trip"
            );
            tu104::Sim::new("test", &words)
                .expect("decodes")
                .run(&mut m, DEFAULT_BUDGET)
        }
        Arch::Fermi => {
            let words = fermi::assemble(&program).expect("lowers");
            assert_eq!(
                fermi::encode(&fermi::decode(&words).expect("decodes")),
                words,
                "Fermi round trip"
            );
            fermi::Sim::new("test", &words)
                .expect("decodes")
                .run(&mut m, DEFAULT_BUDGET)
        }
    };
    let simulated = simulated.map(|stats| {
        (
            Outcome {
                methods: m.methods.clone(),
                params_left: m.params_left(),
            },
            stats.instructions,
        )
    });
    match (&reference, &simulated) {
        (Ok(r), Ok((s, _))) => assert_eq!(
            r, s,
            "{arch:?}: the simulator disagrees with the reference interpreter"
        ),
        (Err(_), Err(_)) => {}
        _ => panic!("{arch:?}: reference {reference:?} vs simulator {simulated:?}"),
    }
    simulated
}

/// Runs `build` on both instruction sets; returns the method stream, which must be the
/// same on both.
pub fn run_both(
    build: &dyn Fn(&mut Builder),
    params: &[u32],
    state: &[(u16, u32)],
) -> Vec<(u16, u32)> {
    let (turing, _) = run_on(Arch::Turing, build, params, state, &[]).expect("runs on Turing");
    let (fermi, _) = run_on(Arch::Fermi, build, params, state, &[]).expect("runs on Fermi");
    assert_eq!(turing, fermi, "Turing and Fermi disagree");
    turing.methods
}

/// The outputs of a run, as `(slot, value)`.
pub fn outputs(methods: &[(u16, u32)]) -> Vec<(u16, u32)> {
    methods
        .iter()
        .filter(|(m, _)| (OUT..OUT + 0x400).contains(m))
        .map(|(m, v)| ((m - OUT) / 4, *v))
        .collect()
}

/// Executes what `record` encodes on `arch` (after the device's init push); returns
/// every method write, pushed or macro-emitted.
pub fn run_encoded(
    arch: Arch,
    record: impl FnOnce(&mut driver::nvk::CommandEncoder<'_>),
) -> Vec<driver::gpu::LoggedMethod> {
    let device = driver::nvk::Device::for_arch(arch);
    let mut gpu = driver::gpu::Gpu::new(arch);
    gpu.execute(device.init_push().unwrap().words()).unwrap();
    let mut enc = driver::nvk::CommandEncoder::new(&device);
    record(&mut enc);
    gpu.state.method_log = Some(Vec::new());
    gpu.execute(enc.finish().words()).unwrap();
    gpu.state.method_log.take().unwrap()
}
