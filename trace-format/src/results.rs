//! Results files (`.msr`): the replayer's per-draw and per-submit rows, in the same
//! container as traces.
//!
//! Rows are fixed-size flatbuffers structs, written in chunks of a bounded number of
//! rows, so a replay of millions of draws streams out in bounded memory and a reader
//! walks the rows without allocating per row. The run's metadata travels in the first
//! chunk; the counts of calls the replay skipped and the run's totals (frames, the
//! share of recorded commands executed) in the last.

mod chunk_rows;

use std::path::Path;
use std::sync::mpsc::{self, Receiver, SyncSender};

use chunk_rows::ChunkRows;

use crate::container::ChunkStream;
use crate::container::{ContainerReader, ContainerWriter, RawChunk, WriterOptions, WriterStats};
use crate::error::{Error, ErrorKind, Result};
use crate::generated::results::{
    DrawBindState, DrawPlace, DrawRow, DrawState, DrawStateMme, PlaceName, ResultsBatch, RunInfoT,
    RunTotalsT, SubmitRow,
};
use crate::trace::ReadOptions;
use crate::wire::Content;

/// The state groups a draw's flush is split into: [`DrawState`]'s fields, then
/// [`DrawBindState`]'s.
pub const STATE_GROUPS: [&str; 8] = [
    "vertex-input",
    "viewport",
    "rasterizer",
    "depth-stencil",
    "blend",
    "descriptors",
    "shaders",
    "constant-buffers",
];

/// What the flush before one row emitted, by state group: the three parallel per-row
/// structs of a results chunk.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RowState {
    /// The dynamic state and root table updates.
    pub state: DrawState,
    /// The shader and constant-buffer binds.
    pub bind: DrawBindState,
    /// The MME instructions of every group.
    pub mme: DrawStateMme,
}

/// One state group's cost in one row.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupCost {
    /// Methods executed: pushed, and emitted by the macros the group called.
    pub methods: u32,
    /// Push-buffer dwords.
    pub dwords: u32,
    /// MME instructions the group's macros ran.
    pub mme: u32,
}

impl RowState {
    /// Built from each group's cost, in [`STATE_GROUPS`] order.
    pub fn from_groups(g: [GroupCost; 8]) -> Self {
        RowState {
            state: DrawState::new(
                g[0].methods,
                g[0].dwords,
                g[1].methods,
                g[1].dwords,
                g[2].methods,
                g[2].dwords,
                g[3].methods,
                g[3].dwords,
                g[4].methods,
                g[4].dwords,
                g[5].methods,
                g[5].dwords,
            ),
            bind: DrawBindState::new(g[6].methods, g[6].dwords, g[7].methods, g[7].dwords),
            mme: DrawStateMme::new(
                g[0].mme, g[1].mme, g[2].mme, g[3].mme, g[4].mme, g[5].mme, g[6].mme, g[7].mme,
            ),
        }
    }
}

/// A row's cost per group, in [`STATE_GROUPS`] order.
pub fn state_group_costs(r: &RowState) -> [GroupCost; 8] {
    let (s, b, m) = (&r.state, &r.bind, &r.mme);
    let cost = |methods, dwords, mme| GroupCost {
        methods,
        dwords,
        mme,
    };
    [
        cost(
            s.vertex_input_methods(),
            s.vertex_input_dwords(),
            m.vertex_input(),
        ),
        cost(s.viewport_methods(), s.viewport_dwords(), m.viewport()),
        cost(
            s.rasterizer_methods(),
            s.rasterizer_dwords(),
            m.rasterizer(),
        ),
        cost(
            s.depth_stencil_methods(),
            s.depth_stencil_dwords(),
            m.depth_stencil(),
        ),
        cost(s.blend_methods(), s.blend_dwords(), m.blend()),
        cost(
            s.descriptors_methods(),
            s.descriptors_dwords(),
            m.descriptors(),
        ),
        cost(b.shaders_methods(), b.shaders_dwords(), m.shaders()),
        cost(
            b.constant_buffers_methods(),
            b.constant_buffers_dwords(),
            m.constant_buffers(),
        ),
    ]
}

/// Whether two results files' trace digests (`RunInfo::trace_hash`) name the same
/// trace: `None` when they are of different kinds (versions before `crc32:` wrote
/// `fnv1a64:`), which says nothing either way.
pub fn same_trace(a: &str, b: &str) -> Option<bool> {
    let kind = |d: &str| d.split(':').next().unwrap_or_default().to_string();
    (kind(a) == kind(b)).then(|| a == b)
}

/// Rows per chunk: about 1.5 MiB of draw rows.
pub const ROWS_PER_CHUNK: usize = 16 * 1024;

/// Rows in each of a results file's first chunks. A chunk is made into its payload and
/// compressed beside the replay, except the last, which waits for the replay's end and
/// which the replay's caller then waits for: a file's chunks hold an eighth of the rows
/// before them, from this many up to [`ROWS_PER_CHUNK`], so that what is left at the
/// end is a small part of a short replay and at most a chunk of a long one. (With a
/// quarter from 1,024 rows, the glxgears sample's last chunk held a third of its 3,000
/// rows a pass, and the captured storm's a fifth of its 30,000.)
const FIRST_ROWS_PER_CHUNK: usize = 256;

/// The rows the next chunk of a file holds, `written` rows into it.
fn chunk_rows_after(written: u64) -> usize {
    usize::try_from(written / 8)
        .unwrap_or(usize::MAX)
        .clamp(FIRST_ROWS_PER_CHUNK, ROWS_PER_CHUNK)
}

/// A call the replay did not execute, and how often it was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedCall {
    /// The call's name (`vkCmdDispatch`).
    pub name: String,
    /// How many times it was seen.
    pub count: u64,
    /// Whether replay needed it but could not model it (as opposed to not needing it).
    pub needed: bool,
}

/// Streams replay results to a file. The rows of a chunk are gathered here; the chunk's
/// payload is made from them on the compression thread that takes it ([`chunk_rows`]).
pub struct ResultsWriter {
    out: ContainerWriter,
    /// The rows of the chunk being gathered.
    rows: ChunkRows,
    /// Rows made into their chunk's payload, cleared, for the next chunk.
    spare_rows: Receiver<ChunkRows>,
    /// Where a compression thread sends rows it is done with.
    return_rows: SyncSender<ChunkRows>,
    frame: u64,
    /// Rows handed to compression threads so far: the next chunk's size follows
    /// ([`chunk_rows_after`]).
    rows_written: u64,
}

impl ResultsWriter {
    /// Creates `path`; `run` goes into the first chunk.
    pub fn create(path: &Path, run: RunInfoT, options: &WriterOptions) -> Result<Self> {
        let mut rows = ChunkRows::new();
        rows.run = Some(run);
        // As many as can be out at once: in the queue, on each compression thread.
        let (return_rows, spare_rows) =
            mpsc::sync_channel(options.queue_depth.max(1) + options.compression_threads.max(1));
        Ok(ResultsWriter {
            out: ContainerWriter::create(path, Content::Results, options)?,
            rows,
            spare_rows,
            return_rows,
            frame: 0,
            rows_written: 0,
        })
    }

    /// Appends a draw row.
    pub fn push_draw(&mut self, row: DrawRow) -> Result<()> {
        self.push_draw_with_state(row, RowState::default())
    }

    /// Appends a draw row with what its state flush emitted.
    pub fn push_draw_with_state(&mut self, row: DrawRow, state: RowState) -> Result<()> {
        self.push_row(row, state, 0, None)
    }

    /// Appends a draw row whose call the GPU model could not finish, with why.
    pub fn push_failed_draw(&mut self, row: DrawRow, state: RowState, error: &str) -> Result<()> {
        self.push_row(row, state, 0, Some(error))
    }

    /// Appends a row with what its state flush emitted, the words the CPU wrote into
    /// GPU memory for it, and why its call could not be finished where it could not.
    pub fn push_row(
        &mut self,
        row: DrawRow,
        state: RowState,
        memory_words: u32,
        error: Option<&str>,
    ) -> Result<()> {
        self.push_timed_row(row, state, memory_words, error, 0)
    }

    /// [`push_row`](Self::push_row) with the draw's GPU time (0: not timed).
    pub fn push_timed_row(
        &mut self,
        row: DrawRow,
        state: RowState,
        memory_words: u32,
        error: Option<&str>,
        gpu_ns: u64,
    ) -> Result<()> {
        self.push_placed_row(
            row,
            state,
            memory_words,
            error,
            gpu_ns,
            DrawPlace::default(),
        )
    }

    /// [`push_timed_row`](Self::push_timed_row) with where in its frame the row ran;
    /// the pass and label named there are named first ([`name_pass`](Self::name_pass),
    /// [`name_label`](Self::name_label)).
    pub fn push_placed_row(
        &mut self,
        row: DrawRow,
        state: RowState,
        memory_words: u32,
        error: Option<&str>,
        gpu_ns: u64,
        place: DrawPlace,
    ) -> Result<()> {
        let rows = &mut self.rows;
        if rows.draws.len() == rows.draws.capacity() {
            rows.make_room();
        }
        rows.draw_places.push(place);
        rows.draw_gpu_ns.push(gpu_ns);
        if let Some(error) = error {
            rows.draw_errors
                .push((rows.draws.len() as u32, error.to_string()));
        }
        self.frame = self.frame.max(row.frame().into());
        rows.draws.push(row);
        rows.draw_states.push(state.state);
        rows.draw_bind_states.push(state.bind);
        rows.draw_state_mme.push(state.mme);
        rows.draw_memory_words.push(memory_words);
        self.flush_if_full()
    }

    /// Names render pass instance `id`, begun in frame `frame`: written with the next
    /// chunk, before any row of it can be read.
    pub fn name_pass(&mut self, id: u32, frame: u32, name: &str) {
        self.rows.pass_names.push((id, frame, name.to_string()));
    }

    /// Names label region `id` by its path (`a/b/c`), likewise.
    pub fn name_label(&mut self, id: u32, path: &str) {
        self.rows.label_names.push((id, 0, path.to_string()));
    }

    /// Appends a submit row.
    pub fn push_submit(&mut self, row: SubmitRow) -> Result<()> {
        self.frame = self.frame.max(row.frame().into());
        self.rows.submits.push(row);
        self.flush_if_full()
    }

    /// Sets the run's totals, written into the last chunk by [`finish`](Self::finish).
    pub fn set_totals(&mut self, totals: RunTotalsT) {
        self.rows.totals = Some(totals);
    }

    /// Writes the remaining rows, the skipped-call counts, the totals and the footer.
    pub fn finish(mut self, skipped: &[SkippedCall]) -> Result<WriterStats> {
        self.rows.skipped = skipped.to_vec();
        self.write_chunk()?;
        let frames = self.frame + 1;
        self.out.finish(frames)
    }

    fn flush_if_full(&mut self) -> Result<()> {
        if self.rows.rows() >= chunk_rows_after(self.rows_written) {
            self.write_chunk()?;
        }
        Ok(())
    }

    /// Hands the chunk's rows to a compression thread, which makes them into the
    /// chunk's payload and sends them back cleared.
    fn write_chunk(&mut self) -> Result<()> {
        let next = self
            .spare_rows
            .try_recv()
            .unwrap_or_else(|_| ChunkRows::new());
        let mut rows = std::mem::replace(&mut self.rows, next);
        self.rows_written += rows.rows() as u64;
        let meta = rows.meta();
        let return_rows = self.return_rows.clone();
        self.out.write_chunk_filled_by(
            Box::new(move |payload| {
                rows.build_into(payload);
                // Full only with every set of rows back already: these go.
                let _ = return_rows.try_send(rows);
                Ok(())
            }),
            meta,
        )
    }
}

/// One verified chunk of results.
#[derive(Debug)]
pub struct ResultsChunk {
    raw: RawChunk,
}

impl ResultsChunk {
    fn verify(raw: RawChunk, path: &Path) -> Result<Self> {
        let err = |kind: ErrorKind| Error::new(path, raw.location(), kind);
        crate::verify::verify_results_payload(&raw.payload).map_err(|e| err(e.into()))?;
        // SAFETY: verified just above against the schema's layout.
        let batch = unsafe { flatbuffers::root_unchecked::<ResultsBatch>(&raw.payload) };
        let actual =
            (batch.draws().map_or(0, |d| d.len()) + batch.submits().map_or(0, |s| s.len())) as u64;
        let declared = u64::from(raw.header.record_count);
        if actual != declared {
            return Err(err(ErrorKind::RecordCount { declared, actual }));
        }
        Ok(ResultsChunk { raw })
    }

    /// The chunk's ordinal in the file.
    pub fn ordinal(&self) -> u64 {
        self.raw.ordinal
    }

    /// The file offset of the chunk's header, for [`ResultsReader::chunk_at`].
    pub fn offset(&self) -> u64 {
        self.raw.offset
    }

    /// The chunk's contents.
    pub fn batch(&self) -> ResultsBatch<'_> {
        // SAFETY: `verify` ran the flatbuffers verifier over exactly these bytes when the
        // chunk was made, and they are never mutated afterwards.
        unsafe { flatbuffers::root_unchecked::<ResultsBatch>(&self.raw.payload) }
    }

    /// The chunk's draw rows.
    pub fn draws(&self) -> impl Iterator<Item = &DrawRow> + '_ {
        self.batch().draws().into_iter().flatten()
    }

    /// What draw row `i`'s state flush emitted (zero in files without it).
    pub fn draw_state(&self, i: usize) -> RowState {
        let batch = self.batch();
        RowState {
            state: batch
                .draw_states()
                .filter(|s| i < s.len())
                .map_or_else(DrawState::default, |s| *s.get(i)),
            bind: batch
                .draw_bind_states()
                .filter(|s| i < s.len())
                .map_or_else(DrawBindState::default, |s| *s.get(i)),
            mme: batch
                .draw_state_mme()
                .filter(|s| i < s.len())
                .map_or_else(DrawStateMme::default, |s| *s.get(i)),
        }
    }

    /// The words the CPU wrote into GPU memory for draw row `i` (zero in files without
    /// them).
    pub fn draw_memory_words(&self, i: usize) -> u32 {
        self.batch()
            .draw_memory_words()
            .filter(|w| i < w.len())
            .map_or(0, |w| w.get(i))
    }

    /// Draw row `i`'s GPU time from a device replay (zero when it was not timed).
    pub fn draw_gpu_ns(&self, i: usize) -> u64 {
        self.batch()
            .draw_gpu_ns()
            .filter(|w| i < w.len())
            .map_or(0, |w| w.get(i))
    }

    /// The chunk's draw rows, each with what lies beside it in the parallel vectors
    /// the metrics read.
    pub fn rows(&self) -> impl Iterator<Item = Row> + '_ {
        let gpu = self.batch().draw_gpu_ns();
        self.draws().enumerate().map(move |(i, draw)| Row {
            draw: *draw,
            gpu_ns: gpu.filter(|g| i < g.len()).map_or(0, |g| g.get(i)),
        })
    }

    /// Where draw row `i` ran: its pass instance and label region (zeros when the
    /// file does not say).
    pub fn draw_place(&self, i: usize) -> DrawPlace {
        self.batch()
            .draw_places()
            .filter(|p| i < p.len())
            .map_or_else(DrawPlace::default, |p| *p.get(i))
    }

    /// The render pass instances first met in this chunk: id, frame, name.
    pub fn pass_names(&self) -> Vec<(u32, u32, String)> {
        names_of(self.batch().pass_names())
    }

    /// The label paths first met in this chunk: id and path.
    pub fn label_names(&self) -> Vec<(u32, String)> {
        names_of(self.batch().label_names())
            .into_iter()
            .map(|(id, _, path)| (id, path))
            .collect()
    }

    /// Why draw row `i`'s call failed, if it did.
    pub fn draw_error(&self, i: usize) -> Option<&str> {
        self.batch()
            .draw_errors()?
            .iter()
            .find(|e| e.row() as usize == i)
            .and_then(|e| e.error())
    }

    /// The chunk's failed draw rows: index and reason.
    pub fn draw_errors(&self) -> Vec<(usize, String)> {
        self.batch()
            .draw_errors()
            .into_iter()
            .flatten()
            .map(|e| (e.row() as usize, e.error().unwrap_or("").to_string()))
            .collect()
    }

    /// The chunk's submit rows.
    pub fn submits(&self) -> impl Iterator<Item = &SubmitRow> + '_ {
        self.batch().submits().into_iter().flatten()
    }

    /// The run's totals, present in the last chunk of files that have them.
    pub fn totals(&self) -> Option<RunTotalsT> {
        self.batch().totals().map(|t| t.unpack())
    }

    /// The skipped-call counts, present in the last chunk.
    pub fn skipped_calls(&self) -> Vec<SkippedCall> {
        self.batch()
            .skipped_calls()
            .into_iter()
            .flatten()
            .map(|c| SkippedCall {
                name: c.name().unwrap_or("").to_string(),
                count: c.count(),
                needed: !c.modelled(),
            })
            .collect()
    }
}

fn names_of(
    names: Option<flatbuffers::Vector<'_, flatbuffers::ForwardsUOffset<PlaceName<'_>>>>,
) -> Vec<(u32, u32, String)> {
    names
        .into_iter()
        .flatten()
        .map(|n| (n.id(), n.frame(), n.name().unwrap_or("").to_string()))
        .collect()
}

/// A draw row with its GPU time (which lies in a vector of its own, so that files
/// without it keep their row layout).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Row {
    /// The row.
    pub draw: DrawRow,
    /// GPU nanoseconds from `replay --device --gpu-timing`; 0 when not timed.
    pub gpu_ns: u64,
}

impl std::ops::Deref for Row {
    type Target = DrawRow;

    fn deref(&self) -> &DrawRow {
        &self.draw
    }
}

impl From<DrawRow> for Row {
    fn from(draw: DrawRow) -> Self {
        Row { draw, gpu_ns: 0 }
    }
}

/// Reads a results file chunk by chunk, in file order.
pub struct ResultsReader {
    stream: ChunkStream<ResultsChunk>,
}

impl ResultsReader {
    /// Opens a results file, read on the calling thread; fails if `path` is not one of
    /// this format version.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens a results file with read-ahead as `options` say.
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self> {
        let inner = ContainerReader::open(path, Content::Results)?;
        Ok(ResultsReader {
            stream: ChunkStream::new(
                inner,
                options.threads,
                options.fewest_chunks_ahead,
                std::sync::Arc::new(ResultsChunk::verify),
            ),
        })
    }

    /// The underlying container.
    pub fn container(&self) -> &ContainerReader {
        self.stream.container()
    }

    /// Reads and verifies the chunk whose header is at `offset` (as a previous pass
    /// found it), numbering it `ordinal` in errors. Sequential reading goes on from the
    /// chunk after it.
    pub fn chunk_at(&mut self, offset: u64, ordinal: u64) -> Result<ResultsChunk> {
        let inner = self.stream.container_mut();
        let entry = crate::wire::IndexEntry {
            offset,
            first_seq: 0,
            first_frame: 0,
            record_count: 0,
            flags: 0,
        };
        inner.seek_to(&entry, ordinal);
        let path = inner.path().to_path_buf();
        match inner.next_chunk() {
            Some(raw) => ResultsChunk::verify(raw?, &path),
            None => Err(Error::new(
                &path,
                crate::error::Location::Chunk {
                    index: ordinal,
                    offset,
                },
                ErrorKind::Truncated {
                    what: "chunk header",
                    needed: crate::wire::CHUNK_HEADER_LEN as u64,
                    available: 0,
                },
            )),
        }
    }
}

impl Iterator for ResultsReader {
    type Item = Result<ResultsChunk>;

    fn next(&mut self) -> Option<Self::Item> {
        self.stream.next()
    }
}
