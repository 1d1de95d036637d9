//! Opening inputs: plain or gzip, decompressed on a second thread, with progress reporting.

use crate::error::{Error, ErrorKind, Result};
use kernelab_model::Location;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;

/// Receives progress while a file is read; implemented by the CLI with a progress bar.
pub trait Progress: Send + Sync {
    /// The total number of bytes the file has on disk.
    fn start(&self, total_bytes: u64);
    /// How many bytes of the file on disk have been consumed so far.
    fn position(&self, bytes: u64);
    /// Reading has finished.
    fn finish(&self);
}

/// A progress sink that ignores everything.
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: u64) {}
    fn position(&self, _: u64) {}
    fn finish(&self) {}
}

/// Counts bytes read from the underlying file.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

const CHUNK: usize = 1 << 20;

/// A reader over chunks produced by a decompression thread.
struct ChannelReader {
    rx: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos >= self.current.len() {
            match self.rx.recv() {
                Ok(Ok(chunk)) => {
                    self.current = chunk;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len() - self.pos);
        buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// An opened input: its first bytes (for format detection) and a reader of the whole content.
pub(crate) struct Opened {
    /// True when the file on disk is gzip-compressed.
    pub gzip: bool,
    /// The first bytes of the (decompressed) content.
    pub head: Vec<u8>,
    /// The whole (decompressed) content, starting at byte 0.
    pub reader: Box<dyn Read + Send>,
    /// Bytes of the file on disk consumed so far (for progress).
    pub consumed: Arc<AtomicU64>,
    /// Size of the file on disk.
    pub size: u64,
}

/// Magic bytes at the start of every SQLite 3 database.
pub(crate) const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Opens `path`: refuses directories and empty files, sniffs gzip by its magic bytes (not the
/// extension) and decompresses it on a second thread.
pub(crate) fn open(path: &Path) -> Result<Opened> {
    let loc = || Location::default().with_path(path);
    let meta = std::fs::metadata(path).map_err(|e| Error::new(loc(), ErrorKind::Io(e)))?;
    if meta.is_dir() {
        return Err(Error::new(loc(), ErrorKind::IsDirectory));
    }
    // FIFOs, sockets and devices are refused before they are opened (opening a FIFO blocks).
    let file: File = kernelab_model::open_regular(path).map_err(|e| {
        if e.kind() == io::ErrorKind::InvalidInput {
            Error::new(loc(), ErrorKind::NotRegular)
        } else {
            Error::new(loc(), ErrorKind::Io(e))
        }
    })?;
    if meta.len() == 0 {
        return Err(Error::new(loc(), ErrorKind::Empty));
    }
    let consumed = Arc::new(AtomicU64::new(0));
    let mut raw = BufReader::with_capacity(
        CHUNK,
        Counting {
            inner: file,
            count: consumed.clone(),
        },
    );
    let mut magic = [0u8; 2];
    let n = read_full(&mut raw, &mut magic).map_err(|e| Error::new(loc(), ErrorKind::Io(e)))?;
    let prefix = magic[..n].to_vec();
    let gzip = prefix == [0x1f, 0x8b];
    let mut reader: Box<dyn Read + Send> = if gzip {
        let compressed = io::Cursor::new(prefix).chain(raw);
        let (tx, rx) = sync_channel::<io::Result<Vec<u8>>>(8);
        std::thread::spawn(move || {
            let mut dec = flate2::read::MultiGzDecoder::new(compressed);
            loop {
                let mut chunk = vec![0u8; CHUNK];
                match read_full(&mut dec, &mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        chunk.truncate(n);
                        if tx.send(Ok(chunk)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        Box::new(ChannelReader {
            rx,
            current: Vec::new(),
            pos: 0,
        })
    } else {
        Box::new(io::Cursor::new(prefix).chain(raw))
    };
    let mut head = vec![0u8; 64 * 1024];
    let n = read_full(&mut reader, &mut head).map_err(|e| gzip_error(path, gzip, e, &consumed))?;
    head.truncate(n);
    if head.is_empty() {
        return Err(Error::new(loc(), ErrorKind::Empty));
    }
    let reader: Box<dyn Read + Send> = Box::new(GzipErrors {
        inner: io::Cursor::new(head.clone()).chain(reader),
        gzip,
    });
    Ok(Opened {
        gzip,
        head,
        reader,
        consumed,
        size: meta.len(),
    })
}

/// Marks read errors of a gzip stream so readers can say the stream is truncated or corrupt.
struct GzipErrors<R> {
    inner: R,
    gzip: bool,
}

impl<R: Read> Read for GzipErrors<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if self.gzip {
                io::Error::new(
                    e.kind(),
                    format!("gzip stream is truncated or corrupt ({e})"),
                )
            } else {
                e
            }
        })
    }
}

fn gzip_error(path: &Path, gzip: bool, e: io::Error, consumed: &AtomicU64) -> Error {
    let loc = Location::default().with_path(path);
    if gzip {
        let n = consumed.load(Ordering::Relaxed);
        return Error::new(
            loc,
            ErrorKind::Truncated {
                expected: format!(
                    "a complete gzip stream; it is truncated or corrupt within its first {n} compressed bytes ({e})"
                ),
            },
        );
    }
    Error::new(loc, ErrorKind::Io(e))
}

/// Reads until `buf` is full or the input ends; returns the number of bytes read.
pub(crate) fn read_full<R: Read + ?Sized>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
