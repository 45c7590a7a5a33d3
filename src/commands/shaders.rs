//! `macroscope shaders`: a trace's shader modules, what the driver's SPIR-V passes find
//! in each, and (with `--dump`) the modules before and after the passes.

use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Context;
use driver::spirv::interface::interfaces;
use driver::spirv::view_index::{lower, Outcome};
use driver::spirv::{analyze, load, words, GsVertexCount};
use driver::spirv::{gs_count, ubo_chains};
use trace_format::{ReadOptions, TraceReader};

/// Arguments of `macroscope shaders`.
#[derive(clap::Args)]
pub struct Args {
    /// A trace (.mscope).
    pub(crate) trace: PathBuf,
    /// Write each module (`module-SEQ.spv`) and its lowered forms
    /// (`module-SEQ.view-index.spv`, `.gs-count.spv`, `.ubo.spv`) into this folder.
    #[arg(long, value_name = "DIR")]
    dump: Option<PathBuf>,
}

/// Lists the modules.
pub fn run(args: &Args) -> anyhow::Result<()> {
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "{:>8}  {:<22} {:>8}  {:<18} {:>8}  {:<14} {:>10}  gs vertices",
        "call", "stages", "bytes", "view index", "ubo c/d", "ubo pass", "const data"
    )?;
    let mut failure = None;
    for chunk in TraceReader::open_with(&args.trace, &ReadOptions::parallel())? {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        for record in chunk.records() {
            let Some(m) = record.call_as_create_shader_module() else {
                continue;
            };
            let seq = record.envelope().seq();
            let code: Vec<u32> = m.code().map(|c| c.iter().collect()).unwrap_or_default();
            let mut module = match load(&code) {
                Ok(module) => module,
                Err(e) => {
                    writeln!(out, "{seq:>8}  {e}")?;
                    continue;
                }
            };
            let found = analyze(&module);
            // The bytes NIR moves the module's constant tables into (bound as
            // constant buffer 1).
            let data = interfaces(&module)
                .first()
                .map_or(0, |(_, _, i)| i.constant_data_bytes);
            let data = if data == 0 {
                "-".to_string()
            } else {
                data.to_string()
            };
            let view = match lower(&mut module) {
                Outcome::Lowered(n) => format!("lowered {n} load(s)"),
                Outcome::Unchanged("no ViewIndex") => "-".to_string(),
                Outcome::Unchanged(why) => format!("kept: {why}"),
            };
            let mut ubo_module = load(&code)?;
            let (ubo, ubo_lowered) = match ubo_chains::lower(&mut ubo_module) {
                ubo_chains::Outcome::Lowered(n) => (format!("{n} chained"), Some(ubo_module)),
                ubo_chains::Outcome::Unchanged("no uniform blocks") => ("-".to_string(), None),
                ubo_chains::Outcome::Unchanged(why) => (format!("kept: {why}"), None),
            };
            let gs = match &found.gs_vertex_count {
                None => "-".to_string(),
                Some(GsVertexCount::Static(n)) => n.to_string(),
                Some(GsVertexCount::Unknown(why)) => format!("unknown ({why})"),
            };
            writeln!(
                out,
                "{seq:>8}  {:<22} {:>8}  {view:<18} {:>8}  {ubo:<14} {data:>10}  {gs}",
                found.stages.join(","),
                code.len() * 4,
                format!("{}/{}", found.ubo_loads_constant, found.ubo_loads_dynamic),
            )?;
            if let Some(dir) = &args.dump {
                let bytes = |w: &[u32]| w.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
                std::fs::write(dir.join(format!("module-{seq}.spv")), bytes(&code))?;
                if found.view_index {
                    let lowered = words(&module);
                    std::fs::write(
                        dir.join(format!("module-{seq}.view-index.spv")),
                        bytes(&lowered),
                    )?;
                }
                if let Some(ubo) = &ubo_lowered {
                    std::fs::write(
                        dir.join(format!("module-{seq}.ubo.spv")),
                        bytes(&words(ubo)),
                    )?;
                }
                if found.gs_vertex_count.is_some() {
                    if let gs_count::Outcome::Counted { .. } = gs_count::lower(&mut module) {
                        std::fs::write(
                            dir.join(format!("module-{seq}.gs-count.spv")),
                            bytes(&words(&module)),
                        )?;
                    }
                }
            }
        }
    }
    out.flush()?;
    match failure {
        Some(e) => Err(anyhow::Error::new(e)
            .context("the trace is damaged; the list above covers what precedes the damage")),
        None => Ok(()),
    }
}
