//! Random access to draw rows: chunks are read from the file when a row in them is
//! asked for, and a few recently used ones are kept decompressed.

use std::path::Path;
use std::sync::Arc;

use trace_format::generated::results::DrawPlace;
use trace_format::results::RowState;
use trace_format::{ResultsChunk, ResultsReader, Row};

use crate::index::Index;

/// Decompressed chunks kept: about 1.5 MiB each.
const CACHED_CHUNKS: usize = 12;

/// Reads draw rows by their index among all draw rows of a file.
pub struct RowStore {
    reader: ResultsReader,
    /// Most recently used last.
    cache: Vec<(u64, Arc<ResultsChunk>)>,
    /// The last read error, to show once.
    pub error: Option<String>,
}

impl RowStore {
    /// Opens `path` for random access.
    pub fn open(path: &Path) -> Result<Self, trace_format::Error> {
        Ok(RowStore {
            reader: ResultsReader::open(path)?,
            cache: Vec::with_capacity(CACHED_CHUNKS),
            error: None,
        })
    }

    /// Draw row `row`, reading its chunk if it is not cached; `None` when the index
    /// does not reach it yet or its chunk cannot be read.
    pub fn row(&mut self, index: &Index, row: u64) -> Option<Row> {
        let span = *index.chunk_of(row)?;
        let chunk = self.chunk(span.offset, span.ordinal)?;
        let draws = chunk.batch().draws()?;
        let i = usize::try_from(row - span.first_row).ok()?;
        (i < draws.len()).then(|| Row {
            draw: *draws.get(i),
            gpu_ns: chunk.draw_gpu_ns(i),
        })
    }

    /// What draw row `row`'s state flush emitted (zero in files without it).
    pub fn state(&mut self, index: &Index, row: u64) -> Option<RowState> {
        let span = *index.chunk_of(row)?;
        let chunk = self.chunk(span.offset, span.ordinal)?;
        let i = usize::try_from(row - span.first_row).ok()?;
        Some(chunk.draw_state(i))
    }

    /// Where draw row `row` ran: its pass instance and label region (zeros in files
    /// without them).
    pub fn place(&mut self, index: &Index, row: u64) -> Option<DrawPlace> {
        let span = *index.chunk_of(row)?;
        let chunk = self.chunk(span.offset, span.ordinal)?;
        let i = usize::try_from(row - span.first_row).ok()?;
        Some(chunk.draw_place(i))
    }

    /// Why row `row`'s call could not be finished, if it could not.
    pub fn error(&mut self, index: &Index, row: u64) -> Option<String> {
        let span = *index.chunk_of(row)?;
        let chunk = self.chunk(span.offset, span.ordinal)?;
        let i = usize::try_from(row - span.first_row).ok()?;
        chunk.draw_error(i).map(str::to_string)
    }

    /// Rows `first..first + count`, fewer where the index ends.
    pub fn rows(&mut self, index: &Index, first: u64, count: u64) -> Vec<Row> {
        (first..first.saturating_add(count))
            .map_while(|r| self.row(index, r))
            .collect()
    }

    fn chunk(&mut self, offset: u64, ordinal: u64) -> Option<Arc<ResultsChunk>> {
        if let Some(pos) = self.cache.iter().position(|(o, _)| *o == offset) {
            let entry = self.cache.remove(pos);
            let chunk = Arc::clone(&entry.1);
            self.cache.push(entry);
            return Some(chunk);
        }
        match self.reader.chunk_at(offset, ordinal) {
            Ok(chunk) => {
                let chunk = Arc::new(chunk);
                if self.cache.len() == CACHED_CHUNKS {
                    self.cache.remove(0);
                }
                self.cache.push((offset, Arc::clone(&chunk)));
                Some(chunk)
            }
            Err(e) => {
                self.error = Some(e.to_string());
                None
            }
        }
    }
}
