//! `export --format counts`: every row's counts as text, host times left out, a run of
//! identical rows written once with how many times it repeats.
//!
//! The counts are what a replay of a trace by a given build of the model always gives,
//! so this text is the same for every replay of the same trace by the same model: kept
//! beside a trace, it shows in a plain diff which rows a change to the model moved.
//! Record numbers and handles (`seq`, `pipeline`) are left out too, so two captures of
//! the same program compare equal where the model treats them the same.
//!
//! One line a row, draws first, then submits:
//!
//! ```text
//! [N× ]draw FRAME SUBMIT REP KIND views=V mask=M inst=I elem=E indirect=D mme=X methods=Y dwords=Z hw=H queries=Q zero=0 mem=W | GROUP=methods/dwords/mme ... [error: ...]
//! [N× ]submit FRAME SUBMIT REP draws=N hw=H mme=X methods=Y dwords=Z queries=Q zero=0
//! totals frames=F recorded=R executed=E
//! skipped NAME COUNT (needed|not needed)
//! ```

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use trace_format::results::{state_group_costs, STATE_GROUPS};
use trace_format::{ReadOptions, ResultsReader};

use crate::metrics::kind_name;
use crate::AnalyzeError;

/// Writes lines, folding a line equal to the one before it into a repeat count.
struct Folder<'o> {
    out: &'o mut dyn Write,
    line: String,
    repeats: u64,
}

impl<'o> Folder<'o> {
    fn new(out: &'o mut dyn Write) -> Self {
        Folder {
            out,
            line: String::new(),
            repeats: 0,
        }
    }

    /// Adds `line`, written when a different one follows or at [`Folder::finish`].
    fn push(&mut self, line: &str) -> std::io::Result<()> {
        if self.repeats > 0 && self.line == line {
            self.repeats += 1;
            return Ok(());
        }
        self.flush()?;
        self.line.clear();
        self.line.push_str(line);
        self.repeats = 1;
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.repeats {
            0 => Ok(()),
            1 => writeln!(self.out, "{}", self.line),
            n => writeln!(self.out, "{n}× {}", self.line),
        }
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.flush()?;
        self.repeats = 0;
        Ok(())
    }
}

/// Writes the counts of every row of the results file `path` to `out`; returns how many
/// draw rows there were.
pub fn export_counts(path: &Path, out: &mut dyn Write) -> Result<u64, AnalyzeError> {
    let mut draws = 0u64;
    let mut line = String::new();
    let mut folder = Folder::new(out);
    // Submit rows are one a submit, few beside the draws: kept for after them, so the
    // file is read once.
    let mut submits = Vec::new();
    let mut totals = None;
    let mut skipped = Vec::new();
    for chunk in ResultsReader::open_with(path, &ReadOptions::parallel())? {
        let chunk = chunk?;
        let errors = chunk.draw_errors();
        for (i, r) in chunk.draws().enumerate() {
            draws += 1;
            line.clear();
            // Writing to a String cannot fail.
            let _ = write!(
                line,
                "draw {} {} {} {} views={} mask={:#x} inst={} elem={} indirect={} mme={} methods={} dwords={} hw={} queries={} zero={} mem={} |",
                r.frame(),
                r.submit(),
                r.repetition(),
                kind_name(r.kind()),
                r.view_count(),
                r.view_mask(),
                r.instance_count(),
                r.element_count(),
                r.indirect_draw_count(),
                r.mme_instructions(),
                r.methods(),
                r.pushbuf_dwords(),
                r.hw_draws(),
                r.queries(),
                r.zero_queries(),
                chunk.draw_memory_words(i),
            );
            for (name, g) in STATE_GROUPS
                .iter()
                .zip(state_group_costs(&chunk.draw_state(i)))
            {
                if g.methods != 0 || g.dwords != 0 || g.mme != 0 {
                    let _ = write!(line, " {name}={}/{}/{}", g.methods, g.dwords, g.mme);
                }
            }
            if let Some((_, error)) = errors.iter().find(|(row, _)| *row == i) {
                let _ = write!(line, " error: {error}");
            }
            folder.push(&line)?;
        }
        submits.extend(chunk.submits().map(|s| {
            format!(
                "submit {} {} {} draws={} hw={} mme={} methods={} dwords={} queries={} zero={}",
                s.frame(),
                s.submit(),
                s.repetition(),
                s.draws(),
                s.hw_draws(),
                s.mme_instructions(),
                s.methods(),
                s.pushbuf_dwords(),
                s.queries(),
                s.zero_queries(),
            )
        }));
        totals = chunk.totals().or(totals);
        skipped.extend(chunk.skipped_calls());
    }
    for submit in &submits {
        folder.push(submit)?;
    }
    folder.finish()?;
    if let Some(t) = totals {
        writeln!(
            out,
            "totals frames={} recorded={} executed={}",
            t.frames, t.recorded_commands, t.executed_commands
        )?;
    }
    for call in skipped {
        let why = if call.needed { "needed" } else { "not needed" };
        writeln!(out, "skipped {} {} ({why})", call.name, call.count)?;
    }
    Ok(draws)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(lines: &[&str]) -> String {
        let mut out = Vec::new();
        let mut folder = Folder::new(&mut out);
        for l in lines {
            folder.push(l).unwrap();
        }
        folder.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn runs_of_equal_lines_are_written_once_with_their_count() {
        assert_eq!(
            folded(&["a", "a", "a", "b", "a", "c", "c"]),
            "3× a\nb\na\n2× c\n"
        );
        assert_eq!(folded(&[]), "");
        assert_eq!(folded(&["x"]), "x\n");
    }
}
