//! Golden disassembly of every NVK macro on both MME generations
//! (`tests/golden/NAME.ARCH.txt`): a change to what a macro compiles to shows in review
//! as a change to its listing. `MACROSCOPE_BLESS=1 cargo test --test macro_disassembly`
//! rewrites the listings after a deliberate change.

use std::fmt::Write as _;
use std::path::PathBuf;

use driver::mme::{fermi, tu104, Arch};
use driver::nvk::Macro;

fn listing<T: std::fmt::Display>(insts: &[T]) -> String {
    insts
        .iter()
        .enumerate()
        .fold(String::new(), |mut text, (i, inst)| {
            let _ = writeln!(text, "{i:03}: {inst}");
            text
        })
}

fn golden(m: Macro, arch: Arch) -> PathBuf {
    let arch = match arch {
        Arch::Turing => "turing",
        Arch::Fermi => "fermi",
    };
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{}.{arch}.txt", m.name()))
}

#[test]
fn every_macro_disassembles_as_its_golden_listing() {
    let bless = std::env::var_os("MACROSCOPE_BLESS").is_some();
    let mut stale = Vec::new();
    for m in Macro::ALL {
        for arch in [Arch::Turing, Arch::Fermi] {
            if !m.available_on(arch) {
                continue;
            }
            let program = m.build(arch).unwrap();
            let text = match arch {
                Arch::Turing => listing(&tu104::lower(&program).unwrap()),
                Arch::Fermi => listing(&fermi::lower(&program).unwrap()),
            };
            let path = golden(m, arch);
            if bless {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &text).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if want != text {
                stale.push(format!("{}\n{text}", path.display()));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "listings differ (MACROSCOPE_BLESS=1 rewrites them after a deliberate change):\n{}",
        stale.join("\n")
    );
}
