//! The index of a results file, built by one background pass: where each chunk's draw
//! rows start, per-frame totals and submits, and histograms per metric.
//!
//! The screen never waits for the whole pass: the index is shared behind a lock and
//! grows chunk by chunk, so the first frames can be browsed while the rest is read.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use analyzer::Metric;
use hdrhistogram::Histogram;
use trace_format::generated::results::{DrawPlace, RunInfoT, RunTotalsT, SubmitRow};
use trace_format::{ReadOptions, ResultsReader, Row};

/// Where one chunk's draw rows sit among all the file's draw rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkSpan {
    /// File offset of the chunk header.
    pub offset: u64,
    /// The chunk's ordinal in the file.
    pub ordinal: u64,
    /// Index of its first draw row among all draw rows.
    pub first_row: u64,
    /// Draw rows in it.
    pub draws: u32,
}

/// Totals of one frame of one repetition.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSummary {
    /// The repetition.
    pub repetition: u16,
    /// The frame.
    pub frame: u32,
    /// Index of its first draw row among all draw rows.
    pub first_row: u64,
    /// Its draw rows (consecutive from `first_row`).
    pub draws: u64,
    /// Sums per metric, in [`Metric::ALL`] order.
    pub sums: [u64; Metric::ALL.len()],
    /// Its submits, in order.
    pub submits: Vec<SubmitRow>,
    /// Where its rows ran: each render pass instance and label region in the order
    /// first met, with what its rows cost.
    pub regions: Vec<Region>,
}

/// The rows of one frame that ran in one render pass instance under one label path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Region {
    /// Where (pass instance, label path: names in [`Index::places`]).
    pub place: DrawPlace,
    /// Its rows.
    pub rows: u64,
    /// Sums per metric, in [`Metric::ALL`] order.
    pub sums: [u64; Metric::ALL.len()],
}

impl Region {
    /// The sum of `metric` over its rows.
    pub fn sum(&self, metric: Metric) -> u64 {
        self.sums[metric_slot(metric)]
    }
}

impl FrameSummary {
    /// The sum of `metric` over the frame's draws.
    pub fn sum(&self, metric: Metric) -> u64 {
        self.sums[metric_slot(metric)]
    }

    fn key(&self) -> (u16, u32) {
        (self.repetition, self.frame)
    }
}

/// The position of `metric` in [`Metric::ALL`].
pub fn metric_slot(metric: Metric) -> usize {
    Metric::ALL.iter().position(|m| *m == metric).unwrap_or(0)
}

/// Everything the background pass has learnt so far.
pub struct Index {
    /// The file.
    pub path: PathBuf,
    /// The run's metadata, once the first chunk is read.
    pub run: Option<RunInfoT>,
    /// Chunks holding draw rows, in file order.
    pub chunks: Vec<ChunkSpan>,
    /// Frames in file order: by repetition, then frame.
    pub frames: Vec<FrameSummary>,
    /// One histogram per metric over every draw row, in [`Metric::ALL`] order.
    pub histograms: Vec<Histogram<u64>>,
    /// Draw rows indexed.
    pub rows: u64,
    /// Chunks read (with or without draw rows).
    pub chunks_read: u64,
    /// Total chunks, where the footer says.
    pub chunks_total: Option<u64>,
    /// Whether the pass has ended.
    pub done: bool,
    /// Why it stopped early, when it did; what came before stays browsable.
    pub error: Option<String>,
    /// What the replay covered, once the last chunk is read (files that have it).
    pub totals: Option<RunTotalsT>,
    /// The render pass instances and label paths rows name, as read so far.
    pub places: analyzer::report::PlaceNames,
}

impl Index {
    fn new(path: &Path) -> Self {
        let histograms = Metric::ALL
            .iter()
            .filter_map(|_| Histogram::new_with_bounds(1, 1 << 62, 2).ok())
            .collect();
        Index {
            path: path.to_path_buf(),
            run: None,
            chunks: Vec::new(),
            frames: Vec::new(),
            histograms,
            rows: 0,
            chunks_read: 0,
            chunks_total: None,
            done: false,
            error: None,
            totals: None,
            places: Default::default(),
        }
    }

    /// How a frame number reads: `frame 3`, or `teardown` for the rows of calls after
    /// the program's last frame.
    pub fn frame_label(&self, frame: u32) -> String {
        match &self.totals {
            Some(t) if t.frames > 0 && u64::from(frame) >= t.frames => "teardown".to_string(),
            _ => format!("frame {frame}"),
        }
    }

    /// Repetitions seen so far (at least 1).
    pub fn repetitions(&self) -> u16 {
        self.frames.last().map_or(1, |f| f.repetition + 1)
    }

    /// The frames of `repetition`, in order.
    pub fn frames_of(&self, repetition: u16) -> &[FrameSummary] {
        let start = self.frames.partition_point(|f| f.repetition < repetition);
        let end = self.frames.partition_point(|f| f.repetition <= repetition);
        &self.frames[start..end]
    }

    /// The frame `frame` of `repetition`.
    pub fn frame(&self, repetition: u16, frame: u32) -> Option<&FrameSummary> {
        self.frames
            .binary_search_by_key(&(repetition, frame), FrameSummary::key)
            .ok()
            .map(|i| &self.frames[i])
    }

    /// The chunk holding draw row `row`.
    pub fn chunk_of(&self, row: u64) -> Option<&ChunkSpan> {
        let i = self
            .chunks
            .partition_point(|c| c.first_row + u64::from(c.draws) <= row);
        self.chunks.get(i).filter(|c| c.first_row <= row)
    }

    /// The histogram of `metric`.
    pub fn histogram(&self, metric: Metric) -> Option<&Histogram<u64>> {
        self.histograms.get(metric_slot(metric))
    }

    fn add_draw(&mut self, row: &Row, place: DrawPlace) {
        let key = (row.repetition(), row.frame());
        if self.frames.last().map(FrameSummary::key) != Some(key) {
            self.frames.push(FrameSummary {
                repetition: key.0,
                frame: key.1,
                first_row: self.rows,
                draws: 0,
                sums: [0; Metric::ALL.len()],
                submits: Vec::new(),
                regions: Vec::new(),
            });
        }
        if let Some(f) = self.frames.last_mut() {
            f.draws += 1;
            for (sum, m) in f.sums.iter_mut().zip(Metric::ALL) {
                *sum += m.of(row);
            }
            // Rows of a region mostly come together: look from the last one back.
            let region = match f.regions.iter().rposition(|r| r.place == place) {
                Some(i) => &mut f.regions[i],
                None => {
                    f.regions.push(Region {
                        place,
                        ..Region::default()
                    });
                    f.regions.last_mut().expect("pushed just above")
                }
            };
            region.rows += 1;
            for (sum, m) in region.sums.iter_mut().zip(Metric::ALL) {
                *sum += m.of(row);
            }
        }
        for (h, m) in self.histograms.iter_mut().zip(Metric::ALL) {
            h.saturating_record(m.of(row));
        }
        self.rows += 1;
    }

    fn add_submit(&mut self, row: &SubmitRow) {
        let key = (row.repetition(), row.frame());
        match self.frames.binary_search_by_key(&key, FrameSummary::key) {
            Ok(i) => self.frames[i].submits.push(*row),
            Err(i) => {
                // A submit without draws: its frame has no rows.
                let first_row = self.frames.get(i).map_or(self.rows, |f| f.first_row);
                self.frames.insert(
                    i,
                    FrameSummary {
                        repetition: key.0,
                        frame: key.1,
                        first_row,
                        draws: 0,
                        sums: [0; Metric::ALL.len()],
                        submits: vec![*row],
                        regions: Vec::new(),
                    },
                );
            }
        }
    }
}

/// An index being built on a background thread.
pub struct IndexBuilder {
    shared: Arc<Mutex<Index>>,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
}

impl IndexBuilder {
    /// Opens `path` (failing at once if it is not a results file) and starts indexing it.
    pub fn start(path: &Path) -> Result<Self, trace_format::Error> {
        let reader = ResultsReader::open_with(path, &ReadOptions::parallel())?;
        let shared = Arc::new(Mutex::new(Index::new(path)));
        {
            let mut index = lock(&shared);
            index.chunks_total = reader.container().index().map(|i| i.len() as u64);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (worker_shared, worker_stop) = (Arc::clone(&shared), Arc::clone(&stop));
        let worker = std::thread::Builder::new()
            .name("results-index".into())
            .spawn(move || build(reader, &worker_shared, &worker_stop))
            .map_err(|e| {
                trace_format::Error::new(
                    path,
                    trace_format::Location::File,
                    trace_format::ErrorKind::Io(e),
                )
            })?;
        Ok(IndexBuilder {
            shared,
            stop,
            worker: Some(worker),
        })
    }

    /// The index as built so far.
    pub fn get(&self) -> MutexGuard<'_, Index> {
        lock(&self.shared)
    }

    /// Waits until at least `chunks` chunks are indexed or the pass ended.
    pub fn wait_for_chunks(&self, chunks: u64) {
        loop {
            {
                let index = self.get();
                if index.done || index.chunks_read >= chunks {
                    return;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Waits for the whole pass.
    pub fn wait(&mut self) {
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

impl Drop for IndexBuilder {
    /// Ends the pass at the next chunk rather than reading a file nobody looks at.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Locks the index, whether or not a holder panicked: the index is only ever appended
/// to, so what a panicking holder left is still consistent enough to show.
fn lock(shared: &Mutex<Index>) -> MutexGuard<'_, Index> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn build(reader: ResultsReader, shared: &Mutex<Index>, stop: &AtomicBool) {
    for chunk in reader {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                lock(shared).error = Some(e.to_string());
                break;
            }
        };
        let mut index = lock(shared);
        index.places.add(&chunk);
        if index.run.is_none() {
            index.run = chunk.batch().run().map(|r| r.unpack());
        }
        let draws = chunk.batch().draws().map_or(0, |d| d.len());
        if draws > 0 {
            let span = ChunkSpan {
                offset: chunk.offset(),
                ordinal: chunk.ordinal(),
                first_row: index.rows,
                draws: draws as u32,
            };
            index.chunks.push(span);
        }
        for (i, row) in chunk.rows().enumerate() {
            index.add_draw(&row, chunk.draw_place(i));
        }
        for row in chunk.submits() {
            index.add_submit(row);
        }
        if let Some(totals) = chunk.totals() {
            index.totals = Some(totals);
        }
        index.chunks_read += 1;
    }
    lock(shared).done = true;
}
