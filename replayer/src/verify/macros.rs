//! The macros a channel set-up uploads, read back from its methods
//! (`LOAD_MME_START_ADDRESS_RAM*`, `LOAD_MME_INSTRUCTION_RAM*`), so that NVK's binaries
//! and the model's can be compared macro by macro.

use std::collections::BTreeMap;

use driver::class;
use driver::mme::{fermi, tu104, Arch};
use driver::push::SUBC_3D;

use super::segment::{macro_name, Method, Numbering};

/// The most instruction-RAM words kept (the MME's RAM is far smaller).
const MAX_RAM_WORDS: usize = 1 << 16;

/// Each uploaded macro's words, by name (`macro N` for an id `numbering` has no name
/// for).
pub fn uploaded(methods: &[Method], numbering: Numbering) -> BTreeMap<String, Vec<u32>> {
    let mut ram: Vec<u32> = Vec::new();
    let mut ram_ptr = 0usize;
    let mut start_ptr = 0u16;
    let mut starts: BTreeMap<u16, usize> = BTreeMap::new();
    for m in methods.iter().filter(|m| m.subc == SUBC_3D) {
        match m.mthd {
            class::LOAD_MME_INSTRUCTION_RAM_POINTER => ram_ptr = m.data as usize,
            class::LOAD_MME_INSTRUCTION_RAM => {
                if ram_ptr < MAX_RAM_WORDS {
                    if ram.len() <= ram_ptr {
                        ram.resize(ram_ptr + 1, 0);
                    }
                    ram[ram_ptr] = m.data;
                }
                ram_ptr += 1;
            }
            class::LOAD_MME_START_ADDRESS_RAM_POINTER => start_ptr = m.data as u16,
            class::LOAD_MME_START_ADDRESS_RAM => {
                starts.insert(start_ptr, m.data as usize);
                start_ptr = start_ptr.wrapping_add(1);
            }
            _ => {}
        }
    }
    let mut bounds: Vec<usize> = starts.values().copied().collect();
    bounds.sort_unstable();
    bounds.dedup();
    starts
        .iter()
        .map(|(id, start)| {
            let end = bounds
                .iter()
                .find(|b| *b > start)
                .copied()
                .unwrap_or(ram.len())
                .min(ram.len());
            let name =
                macro_name(numbering, *id).map_or_else(|| format!("macro {id}"), str::to_string);
            (name, ram.get(*start..end).unwrap_or(&[]).to_vec())
        })
        .collect()
}

/// One macro on both sides.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroComparison {
    /// Its name.
    pub name: String,
    /// NVK's words, if NVK uploads it.
    pub nvk_words: Option<usize>,
    /// The model's words, if the model uploads it.
    pub model_words: Option<usize>,
    /// Whether both uploaded the same words.
    pub equal: bool,
    /// The first word that differs, when both have it.
    pub first_difference: Option<usize>,
    /// NVK's words (empty when NVK uploads none).
    pub nvk: Vec<u32>,
    /// The model's words (empty when the model uploads none).
    pub model: Vec<u32>,
}

/// A macro's instructions, one line each, as `arch`'s disassembler writes them; a
/// word sequence that does not decode is named as such.
pub fn listing(words: &[u32], arch: Arch) -> Vec<String> {
    match arch {
        Arch::Turing => match tu104::decode(words) {
            Ok(insts) => insts.iter().map(ToString::to_string).collect(),
            Err(e) => vec![format!("(does not decode: {e})")],
        },
        Arch::Fermi => match fermi::decode(words) {
            Ok(insts) => insts.iter().map(ToString::to_string).collect(),
            Err(e) => vec![format!("(does not decode: {e})")],
        },
    }
}

/// Compares the macros of two set-ups by name.
pub fn compare(
    nvk: &BTreeMap<String, Vec<u32>>,
    model: &BTreeMap<String, Vec<u32>>,
) -> Vec<MacroComparison> {
    let mut names: Vec<&String> = nvk.keys().chain(model.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let (a, b) = (nvk.get(name), model.get(name));
            let first_difference = match (a, b) {
                (Some(a), Some(b)) if a != b => Some(
                    a.iter()
                        .zip(b)
                        .position(|(x, y)| x != y)
                        .unwrap_or(a.len().min(b.len())),
                ),
                _ => None,
            };
            MacroComparison {
                name: name.clone(),
                nvk_words: a.map(Vec::len),
                model_words: b.map(Vec::len),
                equal: a.is_some() && a == b,
                first_difference,
                nvk: a.cloned().unwrap_or_default(),
                model: b.cloned().unwrap_or_default(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver::nvk::{Device, Macro};

    #[test]
    fn reads_back_every_macro_the_model_uploads() {
        for arch in [Arch::Turing, Arch::Fermi] {
            let device = Device::for_arch(arch);
            let init = device.init_push().expect("builds");
            let methods =
                super::super::segment::decode(Numbering::Model, init.words()).expect("decodes");
            // Decoding renumbers the model's calls, not its uploads: read by the
            // model's numbering.
            let macros = uploaded(&methods, Numbering::Model);
            for m in Macro::ALL.into_iter().filter(|m| m.available_on(arch)) {
                let words = device.macro_words(m).expect("builds");
                assert_eq!(macros.get(m.name()), Some(&words), "{arch:?} {}", m.name());
            }
        }
    }
}
