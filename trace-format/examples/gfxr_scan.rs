//! Decodes every call of a GFXReconstruct file, printing what does not decode.
use trace_format::gfxr::{file::Block, params, tables, BlockReader};

fn main() {
    let path = std::env::args().nth(1).expect("a .gfxr file");
    let reader = BlockReader::open(std::path::Path::new(&path)).expect("open");
    println!("{:?}", reader.header());
    let (mut calls, mut bad, mut unknown) = (0, 0, 0);
    let mut names = std::collections::BTreeMap::new();
    for b in reader {
        let b = match b {
            Ok(b) => b,
            Err(e) => {
                println!("{e}");
                break;
            }
        };
        if let Block::Call { id, params, .. } = &b.block {
            calls += 1;
            let Some(c) = tables::command(*id) else {
                unknown += 1;
                println!("unknown id {id:#x}");
                continue;
            };
            *names.entry(c.name).or_insert(0) += 1;
            if let Err(e) = params::decode_call(c, params) {
                bad += 1;
                if bad < 20 {
                    println!("block {}: {e}", b.index)
                }
            }
        }
    }
    println!("{calls} calls, {bad} did not decode, {unknown} unknown");
    if std::env::var("NAMES").is_ok() {
        println!("{names:?}");
    }
}
