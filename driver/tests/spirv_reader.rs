//! The one-pass SPIR-V reader (`driver::spirv::reader`) makes the module rspirv's
//! parser and loader make of the same words, on every shader module the samples'
//! traces create and every module of the benches (and on the modules of the traces
//! `MACROSCOPE_SPIRV_TRACES` names, `:`-separated); it reads each of them itself, with
//! no module left to rspirv; and a module holding what it does not know, or words rspirv
//! refuses, goes to rspirv's parser, which reads or refuses it as before; and of
//! modules damaged at random, what the reader reads is what rspirv reads.

use std::path::{Path, PathBuf};

use driver::spirv::{load, load_with_rspirv, reader, words};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn spv(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

/// Every shader module the trace at `path` creates.
fn modules_of(path: &Path) -> Vec<Vec<u32>> {
    let mut modules = Vec::new();
    for chunk in trace_format::TraceReader::open(path).expect("the trace opens") {
        for r in chunk.expect("the chunk reads").records() {
            if let Some(m) = r.call_as_create_shader_module() {
                modules.push(m.code().expect("the module has code").iter().collect());
            }
        }
    }
    modules
}

/// The modules the project holds, each named by where it comes from.
fn corpus() -> Vec<(String, Vec<u32>)> {
    let mut traces: Vec<PathBuf> = std::fs::read_dir(repo("samples"))
        .expect("the samples are there")
        .map(|e| e.expect("a sample").path())
        .filter(|p| p.extension().is_some_and(|e| e == "mscope"))
        .collect();
    if let Some(more) = std::env::var_os("MACROSCOPE_SPIRV_TRACES") {
        traces.extend(std::env::split_paths(&more));
    }
    traces.sort();
    let mut corpus = Vec::new();
    for trace in &traces {
        for (i, module) in modules_of(trace).into_iter().enumerate() {
            corpus.push((format!("{} module {i}", trace.display()), module));
        }
    }
    for entry in std::fs::read_dir(repo("benches/shaders")).expect("the bench shaders are there") {
        let path = entry.expect("a shader").path();
        if path.extension().is_some_and(|e| e == "spv") {
            let bytes = std::fs::read(&path).expect("the shader reads");
            corpus.push((path.display().to_string(), spv(&bytes)));
        }
    }
    corpus
}

#[test]
fn the_one_pass_reader_makes_what_rspirv_makes_of_every_module() {
    let corpus = corpus();
    assert!(corpus.len() >= 20, "{} modules", corpus.len());
    for (name, code) in &corpus {
        let expected = load_with_rspirv(code).unwrap_or_else(|e| panic!("{name}: {e}"));
        let read = reader::read(code).unwrap_or_else(|| panic!("{name}: left to rspirv"));
        assert_eq!(format!("{read:?}"), format!("{expected:?}"), "{name}");
        assert_eq!(words(&read), words(&expected), "{name}");
    }
}

/// The first module of the vkcube sample, with `extra` words appended as one more
/// instruction of `opcode`.
fn with_instruction(opcode: u32, extra: &[u32]) -> Vec<u32> {
    let mut code = modules_of(&repo("samples/vkcube-lavapipe.mscope"))
        .into_iter()
        .next()
        .expect("vkcube creates a module");
    // An annotation goes before the functions, where the loader takes it: after the
    // memory model, the first place any module has.
    let at = (5..code.len())
        .scan(5, |at, _| {
            let here = *at;
            *at += (code.get(here)? >> 16) as usize;
            Some(here)
        })
        .find(|&at| code[at] & 0xffff == 14)
        .map(|at| at + (code[at] >> 16) as usize)
        .expect("a memory model");
    let mut inst = vec![((1 + extra.len() as u32) << 16) | opcode];
    inst.extend_from_slice(extra);
    code.splice(at..at, inst);
    code
}

#[test]
fn what_the_reader_does_not_know_goes_to_rspirv_as_before() {
    const DECORATE: u32 = 71;
    // A decoration this reader has no parameters for (NodeMaxPayloadsAMDX, one id): read
    // by rspirv, the same as `load` gives.
    let unknown = with_instruction(DECORATE, &[1, 5020, 2]);
    assert!(reader::read(&unknown).is_none());
    let expected = load_with_rspirv(&unknown).expect("rspirv reads it");
    let loaded = load(&unknown).expect("load reads it");
    assert_eq!(format!("{loaded:?}"), format!("{expected:?}"));
    // A decoration with a word too many: rspirv refuses it, and so does `load`.
    let extra = with_instruction(DECORATE, &[1, 2 /* Block */, 7]);
    assert!(reader::read(&extra).is_none());
    assert!(load_with_rspirv(&extra).is_err());
    assert!(load(&extra).is_err());
    // An opcode the grammar does not have.
    let unknown_op = with_instruction(0xfff0, &[]);
    assert!(reader::read(&unknown_op).is_none());
    assert_eq!(
        load(&unknown_op).map(|_| ()).map_err(|e| e.to_string()),
        load_with_rspirv(&unknown_op)
            .map(|_| ())
            .map_err(|e| e.to_string())
    );
}

#[test]
fn damaged_modules_read_as_rspirv_reads_them_or_go_to_it() {
    // Words of vkcube's modules changed at random, a few at a time: where the reader
    // reads one, rspirv reads the same module; where it does not, `load` answers with
    // rspirv's parser (behind its framing check) without a panic.
    let modules = modules_of(&repo("samples/vkcube-lavapipe.mscope"));
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut read, mut left) = (0, 0);
    for round in 0..3000 {
        let mut code = modules[round % modules.len()].clone();
        for _ in 0..1 + next() % 3 {
            let at = 5 + (next() as usize) % (code.len() - 5);
            code[at] = match next() % 4 {
                0 => next() as u32,
                1 => (next() % 64) as u32,
                2 => code[at] ^ (1 << (next() % 32)),
                _ => code[at].wrapping_add(1),
            };
        }
        match reader::read(&code) {
            Some(module) => {
                read += 1;
                let expected =
                    load_with_rspirv(&code).unwrap_or_else(|e| panic!("round {round}: {e}"));
                assert_eq!(
                    format!("{module:?}"),
                    format!("{expected:?}"),
                    "round {round}"
                );
            }
            // Left to rspirv, behind its framing check: answered, not a panic.
            None => {
                left += 1;
                let _ = load(&code);
            }
        }
    }
    assert!(
        read > 100 && left > 100,
        "{read} read, {left} left to rspirv"
    );
}
