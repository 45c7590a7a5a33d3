//! Verified chunks in file order, read on the calling thread or ahead of it.
//!
//! Trace and results readers are this stream with their own `finish` step (the
//! flatbuffers verification of their payload type).

use std::sync::Arc;

use super::prefetch::{Finish, Prefetcher};
use super::reader::ContainerReader;
use crate::error::Result;

/// Chunks of one content type, each checked and finished before it is handed out.
pub struct ChunkStream<T> {
    inner: ContainerReader,
    threads: usize,
    fewest_ahead: usize,
    finish: Finish<T>,
    prefetch: Option<Prefetcher<T>>,
}

impl<T: Send + 'static> ChunkStream<T> {
    /// A stream over `inner`, finishing chunks with `finish`, on `threads` read-ahead
    /// threads (0: on the calling thread) where at least `fewest_ahead` chunks are left
    /// to read when reading starts (0: wherever), on the calling thread elsewhere.
    pub fn new(
        inner: ContainerReader,
        threads: usize,
        fewest_ahead: usize,
        finish: Finish<T>,
    ) -> Self {
        ChunkStream {
            inner,
            threads,
            fewest_ahead,
            finish,
            prefetch: None,
        }
    }

    /// The container (header, footer index, file size).
    pub fn container(&self) -> &ContainerReader {
        &self.inner
    }

    /// The container, to reposition it; read-ahead restarts from the new position.
    pub fn container_mut(&mut self) -> &mut ContainerReader {
        self.prefetch = None;
        &mut self.inner
    }
}

impl<T> ChunkStream<T> {
    /// Whether fewer chunks than `fewest_ahead` are left to read (by the footer index),
    /// so that read-ahead would not pay; a file without an index reads ahead as asked.
    fn few_chunks_left(&self) -> bool {
        self.fewest_ahead > 0
            && self
                .inner
                .chunks_left()
                .is_some_and(|left| left < self.fewest_ahead)
    }
}

impl<T: Send + 'static> Iterator for ChunkStream<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.threads == 0 || self.prefetch.is_none() && self.few_chunks_left() {
            let raw = match self.inner.next_chunk()? {
                Ok(raw) => raw,
                Err(e) => return Some(Err(e)),
            };
            let finished = (self.finish)(raw, self.inner.path());
            if finished.is_err() {
                self.inner.stop();
            }
            return Some(finished);
        }
        if self.prefetch.is_none() {
            let reader = match self.inner.reopen() {
                Ok(reader) => reader,
                Err(e) => return Some(Err(e)),
            };
            self.inner.stop();
            match Prefetcher::start(reader, self.threads, Arc::clone(&self.finish)) {
                Ok(prefetch) => self.prefetch = Some(prefetch),
                Err(e) => {
                    // The stream ends with the error: later calls go to the calling
                    // thread's reader, stopped above, which has nothing more.
                    self.threads = 0;
                    return Some(Err(e));
                }
            }
        }
        self.prefetch.as_mut()?.next()
    }
}
