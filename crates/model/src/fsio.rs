//! Opening input files without blocking on what is not a regular file.

use std::fs::File;
use std::io;
use std::path::Path;

/// The environment variable that confines every file kernelab opens or writes by name to one
/// folder: `kernelab mcp` sets it to its `--root` for each command it runs, so that paths named
/// inside specs and manifests are held to the root as the tool's own arguments are.
pub const CONFINE_ENV: &str = "KERNELAB_CONFINE_ROOT";

/// The folder of [`CONFINE_ENV`], resolved once (`None`: not confined).
fn confinement() -> Option<&'static std::path::PathBuf> {
    static ROOT: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let raw = std::env::var_os(CONFINE_ENV)?;
        // A root that does not resolve confines to nothing: every path is refused.
        Some(std::fs::canonicalize(&raw).unwrap_or_else(|_| std::path::PathBuf::from(raw)))
    })
    .as_ref()
}

/// Whether `path` may be opened or written: always, unless [`CONFINE_ENV`] is set; then it
/// must resolve (links followed, through its nearest existing folder for a file not yet
/// made) inside that folder. An error of kind `PermissionDenied` says where it points.
pub fn confined(path: &Path) -> io::Result<()> {
    let Some(root) = confinement() else {
        return Ok(());
    };
    let outside = || {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "outside the folder this run is confined to ({})",
                root.display()
            ),
        )
    };
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let mut probe = abs.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    let resolved = loop {
        match std::fs::canonicalize(probe) {
            Ok(p) => break rest.iter().rev().fold(p, |acc, c| acc.join(c)),
            Err(_) => {
                // A part not made yet must be a plain name (no `..` past the resolved part).
                match (probe.file_name(), probe.parent()) {
                    (Some(name), Some(parent)) => {
                        rest.push(name);
                        probe = parent;
                    }
                    _ => return Err(outside()),
                }
            }
        }
    };
    if resolved.starts_with(root) {
        Ok(())
    } else {
        Err(outside())
    }
}

/// The error [`open_regular`] gives for a FIFO, directory, socket or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a regular file")]
pub struct NotRegularFile;

/// Opens `path` for reading when it is a regular file (symbolic links followed). A FIFO,
/// directory, socket or device gives an [`io::ErrorKind::InvalidInput`] error wrapping
/// [`NotRegularFile`], found from the metadata before opening, so a FIFO never blocks.
pub fn open_regular(path: &Path) -> io::Result<File> {
    confined(path)?;
    let not_regular = || io::Error::new(io::ErrorKind::InvalidInput, NotRegularFile);
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path)?;
    // The path may have been replaced between the two calls: check what was opened.
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Reads the regular file `path` whole, at most `limit` bytes: a FIFO, directory or device is
/// refused without blocking ([`open_regular`]), and a longer file is an
/// [`io::ErrorKind::InvalidData`] error saying the limit, read no further than it.
pub fn read_regular(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let f = open_regular(path)?;
    crate::limits::read_capped(f, limit).map_err(|e| match e {
        crate::limits::CappedReadError::Read(e) => e,
        crate::limits::CappedReadError::TooLarge { limit } => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than the limit of {limit} bytes"),
        ),
        other => io::Error::new(io::ErrorKind::OutOfMemory, other.to_string()),
    })
}

/// [`read_regular`] as UTF-8 text (invalid UTF-8 is an [`io::ErrorKind::InvalidData`] error
/// naming the byte offset).
pub fn read_regular_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, limit)?).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("byte {}: invalid UTF-8", e.utf8_error().valid_up_to()),
        )
    })
}

/// Opens `path` for appending (created when missing, mode 0644 before the umask), refusing a
/// FIFO, socket or device without blocking: the open is non-blocking and what was opened is
/// checked to be a regular file.
pub fn open_append_regular(path: &Path) -> io::Result<File> {
    confined(path)?;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, NotRegularFile));
    }
    Ok(f)
}

/// Cuts a torn last line (bytes after the last newline: a run killed mid-write) off `f`,
/// reading backwards from the end in 64 KiB chunks rather than the whole file.
pub fn cut_torn_tail(f: &File) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    let len = f.metadata()?.len();
    let mut end = len;
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let part = chunk.get_mut(..(end - start) as usize).unwrap_or_default();
        f.read_exact_at(part, start)?;
        if let Some(i) = memchr_last(part) {
            let keep = start + i as u64 + 1;
            if keep != len {
                f.set_len(keep)?;
            }
            return Ok(());
        }
        end = start;
    }
    if len > 0 {
        f.set_len(0)?;
    }
    Ok(())
}

fn memchr_last(b: &[u8]) -> Option<usize> {
    b.iter().rposition(|&c| c == b'\n')
}

/// Writes `bytes` to `path` through a temporary file of an unpredictable name created with
/// `O_EXCL` in the same folder (a link planted there is never followed), then renames it into
/// place (`replace`) or links it only if `path` does not exist (a file that appeared meanwhile
/// is kept, an [`io::ErrorKind::AlreadyExists`] error). An existing `path` that is not a
/// regular file (a link, FIFO, folder) is never replaced. Errors describe `path` only, never
/// the temporary name: the caller names `path`.
pub fn write_file(path: &Path, bytes: &[u8], replace: bool) -> io::Result<()> {
    use std::io::Write;
    let mut f = NewFile::create(path, replace)?;
    f.write_all(bytes)?;
    f.finish()
}

/// A file being written: a temporary file beside its target, put in place by
/// [`NewFile::finish`] (never clobbering unless `replace`); dropped unfinished, it is removed,
/// so a failed write leaves nothing behind. [`write_file`] is the one-shot form.
pub struct NewFile {
    tmp: tempfile::NamedTempFile,
    path: std::path::PathBuf,
    replace: bool,
}

/// The temporary file's own errors carry its name: keep the kind and the system's words.
fn plain(e: io::Error) -> io::Error {
    match e.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(e.kind(), e.kind().to_string()),
    }
}

impl NewFile {
    /// Starts writing `path`: refused when it exists and is not a regular file, or exists and
    /// `replace` is false.
    pub fn create(path: &Path, replace: bool) -> io::Result<NewFile> {
        confined(path)?;
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            if !meta.is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file; only regular files are replaced",
                ));
            }
            if !replace {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "already exists; not replacing it (use --force to replace)",
                ));
            }
        }
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let tmp = tempfile::Builder::new()
            .prefix(".kernelab-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(plain)?;
        Ok(NewFile {
            tmp,
            path: path.to_path_buf(),
            replace,
        })
    }

    /// Flushes the file and puts it in place.
    pub fn finish(mut self) -> io::Result<()> {
        use std::io::Write;
        self.tmp.flush().map_err(plain)?;
        // On disk before it gets the name: a crash never leaves a short file there.
        self.tmp.as_file().sync_all().map_err(plain)?;
        if self.replace {
            self.tmp.persist(&self.path).map_err(|e| plain(e.error))?;
        } else {
            self.tmp.persist_noclobber(&self.path).map_err(|e| {
                if e.error.kind() == io::ErrorKind::AlreadyExists {
                    io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "appeared while writing; not replacing it (use --force)",
                    )
                } else {
                    plain(e.error)
                }
            })?;
        }
        Ok(())
    }
}

impl io::Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf).map_err(plain)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush().map_err(plain)
    }
}

/// True when `e` is the error [`open_regular`] gives for a file that is not regular.
pub fn is_not_regular(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.is::<NotRegularFile>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_refused_and_files_open() {
        let dir = std::env::temp_dir();
        let e = open_regular(&dir).expect_err("a directory");
        assert!(is_not_regular(&e));
        assert_eq!(e.to_string(), "not a regular file");
        let exe = std::env::current_exe().expect("exe");
        assert!(open_regular(&exe).is_ok());
        let missing = open_regular(Path::new("/nonexistent/kernelab")).expect_err("missing");
        assert!(!is_not_regular(&missing));
    }

    #[test]
    fn read_regular_caps_and_refuses_fifos() {
        let dir = tempfile_dir();
        let p = dir.join("f");
        std::fs::write(&p, b"hello").expect("write");
        assert_eq!(read_regular(&p, 5).expect("fits"), b"hello");
        let e = read_regular(&p, 4).expect_err("too long");
        assert_eq!(e.to_string(), "larger than the limit of 4 bytes");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let t = std::time::Instant::now();
            assert!(is_not_regular(&read_regular(&fifo, 10).expect_err("fifo")));
            assert!(t.elapsed() < std::time::Duration::from_secs(2));
        }
        let fifo_append = open_append_regular(&fifo);
        if fifo.exists() {
            assert!(is_not_regular(&fifo_append.expect_err("fifo")));
        }
        let torn = dir.join("torn");
        std::fs::write(&torn, b"a\nb\npartial").expect("write");
        cut_torn_tail(&open_append_regular(&torn).expect("open")).expect("cut");
        assert_eq!(std::fs::read(&torn).expect("read"), b"a\nb\n");
        std::fs::write(&torn, b"no newline").expect("write");
        cut_torn_tail(&open_append_regular(&torn).expect("open")).expect("cut");
        assert_eq!(std::fs::read(&torn).expect("read"), b"");
        // write_file: never clobbers without `replace`, never follows a planted link.
        let out = dir.join("out.txt");
        write_file(&out, b"one", false).expect("new");
        let e = write_file(&out, b"two", false).expect_err("exists");
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        write_file(&out, b"two", true).expect("replace");
        assert_eq!(std::fs::read(&out).expect("read"), b"two");
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").expect("victim");
        let link = dir.join("link");
        std::os::unix::fs::symlink(&victim, &link).expect("link");
        assert!(write_file(&link, b"evil", true).is_err());
        assert_eq!(std::fs::read(&victim).expect("read"), b"keep");
        let leftovers = std::fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(leftovers, 0);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("kernelab-fsio-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("dir");
        d
    }
}
