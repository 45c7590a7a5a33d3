//! The rows of one results chunk as a replay gathers them, and the chunk's payload made
//! from them. The payload is made on the compression thread that takes the chunk
//! (`ContainerWriter::write_chunk_filled_by`), beside the replay: the replay's thread
//! only appends rows. A chunk's rows, once made into its payload, come back cleared for
//! the next chunk, their room and builder kept.

use flatbuffers::FlatBufferBuilder;

use super::{SkippedCall, FIRST_ROWS_PER_CHUNK, ROWS_PER_CHUNK};
use crate::container::ChunkMeta;
use crate::generated::results::{
    CallCount, CallCountArgs, DrawBindState, DrawPlace, DrawRow, DrawState, DrawStateMme,
    PlaceName, PlaceNameArgs, ResultsBatch, ResultsBatchArgs, RowError, RowErrorArgs, RunInfoT,
    RunTotalsT, SubmitRow,
};

/// The draw rows a chunk first makes room for: all that a file's first chunks hold.
const FIRST_ROOM_ROWS: usize = FIRST_ROWS_PER_CHUNK;

/// The bytes a row takes in a chunk with every per-row vector (a submit row takes
/// fewer).
const ROW_BYTES: usize = std::mem::size_of::<DrawRow>()
    + std::mem::size_of::<DrawState>()
    + std::mem::size_of::<DrawBindState>()
    + std::mem::size_of::<DrawStateMme>()
    + std::mem::size_of::<u32>()
    + std::mem::size_of::<u64>();

/// Room in a chunk's builder beside its rows and strings: the run's description, the
/// totals, the tables and vectors around the rows.
const CHUNK_SLACK_BYTES: usize = 64 << 10;

/// What a failed draw's reason or a skipped call's name takes beside its text: the
/// string's length and terminator, its table and the offset to it.
const STRING_ENTRY_BYTES: usize = 32;

/// One chunk's rows and what travels with them.
pub(super) struct ChunkRows {
    /// Builds the payload; kept from chunk to chunk.
    fbb: FlatBufferBuilder<'static>,
    /// The bytes `fbb` was made to hold: it is made anew, as large as a chunk needs,
    /// before a chunk that needs more (a grown builder copies and clears what it held;
    /// one made at the most a chunk can take clears megabytes for a short replay).
    fbb_capacity: usize,
    /// The run's description: in the first chunk.
    pub(super) run: Option<RunInfoT>,
    /// The run's totals: in the last chunk.
    pub(super) totals: Option<RunTotalsT>,
    /// The calls the replay skipped: in the last chunk.
    pub(super) skipped: Vec<SkippedCall>,
    pub(super) draws: Vec<DrawRow>,
    /// One per draw row; written only when one of the chunk's is not zero.
    pub(super) draw_states: Vec<DrawState>,
    /// One per draw row, likewise.
    pub(super) draw_bind_states: Vec<DrawBindState>,
    /// One per draw row, likewise.
    pub(super) draw_state_mme: Vec<DrawStateMme>,
    /// The chunk's failed draw rows: index and reason.
    pub(super) draw_errors: Vec<(u32, String)>,
    /// One per draw row: words the CPU wrote into GPU memory for it.
    pub(super) draw_memory_words: Vec<u32>,
    pub(super) draw_gpu_ns: Vec<u64>,
    /// One per draw row: its pass instance and label region.
    pub(super) draw_places: Vec<DrawPlace>,
    /// Pass instances and label paths named since the last chunk: id, frame, name.
    pub(super) pass_names: Vec<(u32, u32, String)>,
    pub(super) label_names: Vec<(u32, u32, String)>,
    pub(super) submits: Vec<SubmitRow>,
}

impl ChunkRows {
    /// No rows, and no room made for them yet ([`ChunkRows::make_room`]).
    pub(super) fn new() -> Self {
        ChunkRows {
            fbb: FlatBufferBuilder::new(),
            fbb_capacity: 0,
            run: None,
            totals: None,
            skipped: Vec::new(),
            draws: Vec::new(),
            draw_states: Vec::new(),
            draw_bind_states: Vec::new(),
            draw_state_mme: Vec::new(),
            draw_errors: Vec::new(),
            draw_memory_words: Vec::new(),
            draw_gpu_ns: Vec::new(),
            draw_places: Vec::new(),
            pass_names: Vec::new(),
            label_names: Vec::new(),
            submits: Vec::new(),
        }
    }

    /// Makes room for more draw rows in every per-row vector, where the draws' is full:
    /// first for [`FIRST_ROOM_ROWS`], then for a whole chunk's. Room for a full chunk's
    /// rows made up front is megabytes that a short replay never fills and still pays
    /// for where the allocator touches it (the kernel zeroes each page it hands over,
    /// two megabytes at a time where transparent huge pages are on); the last chunk's
    /// replacement was made so for no row at all. Growing by doubling instead leaves a
    /// long replay's allocator holding every smaller copy. Rows made into their chunk's
    /// payload come back cleared with their room, so later chunks make none.
    #[cold]
    pub(super) fn make_room(&mut self) {
        let rows = match self.draws.capacity() < FIRST_ROOM_ROWS {
            true => FIRST_ROOM_ROWS,
            false => ROWS_PER_CHUNK.max(2 * self.draws.capacity()),
        };
        let more = rows - self.draws.len();
        self.draws.reserve_exact(more);
        self.draw_states.reserve_exact(more);
        self.draw_bind_states.reserve_exact(more);
        self.draw_state_mme.reserve_exact(more);
        self.draw_memory_words.reserve_exact(more);
        self.draw_gpu_ns.reserve_exact(more);
        self.draw_places.reserve_exact(more);
    }

    /// Draw and submit rows held.
    pub(super) fn rows(&self) -> usize {
        self.draws.len() + self.submits.len()
    }

    /// The chunk's header fields: its row count and where its first row is.
    pub(super) fn meta(&self) -> ChunkMeta {
        let first = self.draws.first().map(|d| (d.seq(), d.frame()));
        let first_submit = self.submits.first().map(|s| (s.seq(), s.frame()));
        let (first_seq, first_frame) = match (first, first_submit) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => (0, 0),
        };
        ChunkMeta {
            record_count: self.rows() as u32,
            first_seq,
            first_frame: first_frame.into(),
            ends_frame: false,
            stored_records: false,
        }
    }

    /// Writes the chunk's payload (a `ResultsBatch`) into `out`, then clears the rows.
    pub(super) fn build_into(&mut self, out: &mut Vec<u8>) {
        let names = self.pass_names.iter().chain(&self.label_names);
        let strings: usize = self.draw_errors.iter().map(|(_, e)| e.len()).sum::<usize>()
            + self.skipped.iter().map(|c| c.name.len()).sum::<usize>()
            + names.clone().map(|(_, _, n)| n.len()).sum::<usize>();
        let needed = self.rows() * ROW_BYTES
            + strings
            + STRING_ENTRY_BYTES * (self.draw_errors.len() + self.skipped.len() + names.count())
            + CHUNK_SLACK_BYTES;
        if needed > self.fbb_capacity {
            self.fbb = FlatBufferBuilder::with_capacity(needed);
            self.fbb_capacity = needed;
        }
        let fbb = &mut self.fbb;
        let run = self.run.take().map(|run| run.pack(fbb));
        let totals = self.totals.take().map(|t| t.pack(fbb));
        let draws = fbb.create_vector(&self.draws);
        let any_state = self.draw_states.iter().any(|s| *s != DrawState::default());
        let draw_states = any_state.then(|| fbb.create_vector(&self.draw_states));
        let any_bind = self
            .draw_bind_states
            .iter()
            .any(|s| *s != DrawBindState::default());
        let draw_bind_states = any_bind.then(|| fbb.create_vector(&self.draw_bind_states));
        let any_mme = self
            .draw_state_mme
            .iter()
            .any(|s| *s != DrawStateMme::default());
        let draw_state_mme = any_mme.then(|| fbb.create_vector(&self.draw_state_mme));
        let submits = fbb.create_vector(&self.submits);
        let draw_memory_words = self
            .draw_memory_words
            .iter()
            .any(|w| *w != 0)
            .then(|| fbb.create_vector(&self.draw_memory_words));
        let draw_gpu_ns = self
            .draw_gpu_ns
            .iter()
            .any(|w| *w != 0)
            .then(|| fbb.create_vector(&self.draw_gpu_ns));
        let draw_places = self
            .draw_places
            .iter()
            .any(|p| *p != DrawPlace::default())
            .then(|| fbb.create_vector(&self.draw_places));
        let pass_names = place_names(fbb, &self.pass_names);
        let label_names = place_names(fbb, &self.label_names);
        let draw_errors = (!self.draw_errors.is_empty()).then(|| {
            let items: Vec<_> = self
                .draw_errors
                .iter()
                .map(|(row, error)| {
                    let error = fbb.create_string(error);
                    RowError::create(
                        fbb,
                        &RowErrorArgs {
                            row: *row,
                            error: Some(error),
                        },
                    )
                })
                .collect();
            fbb.create_vector(&items)
        });
        let skipped_calls = (!self.skipped.is_empty()).then(|| {
            let items: Vec<_> = self
                .skipped
                .iter()
                .map(|c| {
                    let name = fbb.create_string(&c.name);
                    CallCount::create(
                        fbb,
                        &CallCountArgs {
                            name: Some(name),
                            count: c.count,
                            modelled: !c.needed,
                        },
                    )
                })
                .collect();
            fbb.create_vector(&items)
        });
        let batch = ResultsBatch::create(
            fbb,
            &ResultsBatchArgs {
                run,
                draws: Some(draws),
                submits: Some(submits),
                skipped_calls,
                totals,
                draw_states,
                draw_errors,
                draw_memory_words,
                draw_gpu_ns,
                draw_bind_states,
                draw_state_mme,
                draw_places,
                pass_names,
                label_names,
            },
        );
        fbb.finish_minimal(batch);
        out.clear();
        out.extend_from_slice(fbb.finished_data());
        fbb.reset();
        self.clear();
    }

    /// Lets go of the rows, keeping their room.
    fn clear(&mut self) {
        self.skipped.clear();
        self.draws.clear();
        self.draw_states.clear();
        self.draw_bind_states.clear();
        self.draw_state_mme.clear();
        self.draw_errors.clear();
        self.draw_memory_words.clear();
        self.draw_gpu_ns.clear();
        self.draw_places.clear();
        self.pass_names.clear();
        self.label_names.clear();
        self.submits.clear();
    }
}

/// The vector of `names` (id, frame, name) for a chunk; none when empty.
fn place_names<'b>(
    fbb: &mut FlatBufferBuilder<'b>,
    names: &[(u32, u32, String)],
) -> Option<
    flatbuffers::WIPOffset<flatbuffers::Vector<'b, flatbuffers::ForwardsUOffset<PlaceName<'b>>>>,
> {
    if names.is_empty() {
        return None;
    }
    let items: Vec<_> = names
        .iter()
        .map(|(id, frame, name)| {
            let name = fbb.create_string(name);
            PlaceName::create(
                fbb,
                &PlaceNameArgs {
                    id: *id,
                    frame: *frame,
                    name: Some(name),
                },
            )
        })
        .collect();
    Some(fbb.create_vector(&items))
}
