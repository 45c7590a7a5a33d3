//! Read-ahead: chunks checksummed, decompressed and verified on worker threads while
//! the consumer works on earlier ones, delivered in file order.
//!
//! One I/O thread walks the file (`ContainerReader::next_compressed`) and hands
//! compressed chunks to `threads` workers, which run the checksum, zstd and the
//! content's verifier. The consumer reorders their results by ordinal. At most
//! `in_flight` chunks exist between the I/O thread and the consumer at any time: the
//! I/O thread takes a token before reading a chunk and the consumer returns it when it
//! hands the chunk out, so memory stays bounded however slow the consumer is. The first
//! error, from any stage, is delivered in its place in the order and ends the stream.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::reader::{CompressedChunk, ContainerReader, RawChunk};
use crate::error::{Error, ErrorKind, Location, Result};

/// Turns a decompressed chunk into the consumer's type (verifying it on the way).
pub type Finish<T> = Arc<dyn Fn(RawChunk, &Path) -> Result<T> + Send + Sync>;

/// An ordered stream of finished chunks, produced ahead of the consumer.
pub struct Prefetcher<T> {
    results: Receiver<(u64, Result<T>)>,
    reordered: BTreeMap<u64, Result<T>>,
    next: u64,
    tokens: Option<SyncSender<()>>,
    threads: Vec<JoinHandle<()>>,
    done: bool,
}

impl<T: Send + 'static> Prefetcher<T> {
    /// Starts reading `reader` from its current position with `threads` workers; fails
    /// when the system will not start a thread (what threads did start are stopped).
    pub fn start(reader: ContainerReader, threads: usize, finish: Finish<T>) -> Result<Self> {
        let threads = threads.max(1);
        let in_flight = 2 * threads + 1;
        let path: PathBuf = reader.path().to_path_buf();
        let first = reader.next_ordinal();
        let (token_tx, token_rx) = mpsc::sync_channel::<()>(in_flight);
        for _ in 0..in_flight {
            let _ = token_tx.send(());
        }
        let (job_tx, job_rx) = mpsc::sync_channel::<CompressedChunk>(in_flight);
        let (result_tx, results) = mpsc::channel();
        let job_rx = Arc::new(Mutex::new(job_rx));

        // Built before the threads start, so that a failed start drops it, which stops
        // and joins those already running.
        let mut prefetcher = Prefetcher {
            results,
            reordered: BTreeMap::new(),
            next: first,
            tokens: Some(token_tx),
            threads: Vec::with_capacity(threads + 1),
            done: false,
        };
        let io_results = result_tx.clone();
        let reader_thread = spawn(&path, "macroscope-read", move || {
            read_loop(reader, &token_rx, &job_tx, &io_results)
        })?;
        prefetcher.threads.push(reader_thread);
        for _ in 0..threads {
            let (jobs, results, worker_path) =
                (Arc::clone(&job_rx), result_tx.clone(), path.clone());
            let finish = Arc::clone(&finish);
            let worker = spawn(&path, "macroscope-decode", move || {
                decode_loop(&jobs, &results, &worker_path, &*finish)
            })?;
            prefetcher.threads.push(worker);
        }
        Ok(prefetcher)
    }
}

/// Starts a thread named `name` for reading the file at `path`.
fn spawn(path: &Path, name: &str, body: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(body)
        .map_err(|e| Error::new(path, Location::File, ErrorKind::Io(e)))
}

fn read_loop<T>(
    mut reader: ContainerReader,
    tokens: &Receiver<()>,
    jobs: &SyncSender<CompressedChunk>,
    results: &mpsc::Sender<(u64, Result<T>)>,
) {
    while tokens.recv().is_ok() {
        let ordinal = reader.next_ordinal();
        match reader.next_compressed() {
            None => return,
            Some(Ok(chunk)) => {
                if jobs.send(chunk).is_err() {
                    return;
                }
            }
            Some(Err(e)) => {
                let _ = results.send((ordinal, Err(e)));
                return;
            }
        }
    }
}

fn decode_loop<T>(
    jobs: &Mutex<Receiver<CompressedChunk>>,
    results: &mpsc::Sender<(u64, Result<T>)>,
    path: &Path,
    finish: &(dyn Fn(RawChunk, &Path) -> Result<T> + Send + Sync),
) {
    let mut decompressor = match zstd::bulk::Decompressor::new() {
        Ok(d) => d,
        Err(e) => {
            let _ = results.send((
                u64::MAX,
                Err(Error::new(path, Location::File, ErrorKind::Io(e))),
            ));
            return;
        }
    };
    loop {
        let job = match jobs.lock() {
            Ok(jobs) => jobs.recv(),
            Err(_) => return,
        };
        let Ok(chunk) = job else { return };
        let ordinal = chunk.ordinal;
        let result = chunk
            .decompress(path, &mut decompressor)
            .and_then(|raw| finish(raw, path));
        if results.send((ordinal, result)).is_err() {
            return;
        }
    }
}

impl<T> Iterator for Prefetcher<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        loop {
            if let Some(result) = self.reordered.remove(&self.next) {
                self.next += 1;
                if result.is_err() {
                    self.done = true;
                } else if let Some(tokens) = &self.tokens {
                    let _ = tokens.send(());
                }
                return Some(result);
            }
            match self.results.recv() {
                Ok((ordinal, result)) if ordinal == u64::MAX => {
                    self.done = true;
                    return Some(result);
                }
                Ok((ordinal, result)) => {
                    self.reordered.insert(ordinal, result);
                }
                // Every thread has finished and nothing is left: the end of the file.
                Err(_) => {
                    self.done = true;
                    return None;
                }
            }
        }
    }
}

impl<T> Drop for Prefetcher<T> {
    fn drop(&mut self) {
        // Closing the token channel stops the I/O thread, which closes the job channel,
        // which stops the workers.
        self.tokens = None;
        self.reordered.clear();
        while self.results.try_recv().is_ok() {}
        for handle in self.threads.drain(..) {
            // Workers may be blocked sending to `results`; it is unbounded, so they finish.
            let _ = handle.join();
        }
    }
}
