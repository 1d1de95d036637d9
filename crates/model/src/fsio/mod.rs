//! Every file kernelab opens or writes by a name that came from its input, through one layer:
//! regular files only (a FIFO, socket or device is refused before an open could block), new
//! files written under unpredictable temporary names created with `O_EXCL` and then renamed,
//! and, when [`CONFINE_ENV`] is set, everything opened by handle beneath that root
//! ([`beneath`]): nothing outside it is read, listed or written, whatever the race.

mod beneath;

pub use beneath::{confine_to, CONFINE_ENV};
use beneath::{explain, locate, outside, parent_dir, root_display};
use cap_std::fs::{Dir, OpenOptionsExt as _};
use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Whether `path` may be handed on by name (to a program kernelab runs, say): always, unless
/// [`CONFINE_ENV`] is set; then it must resolve beneath that folder (links followed beneath
/// it; a part not made yet must be plain names). An error of kind `PermissionDenied` says
/// where it points. Files kernelab opens itself go through [`open_regular`], [`NewFile`] and
/// the rest of this module, which resolve by handle, never through this check.
pub fn confined(path: &Path) -> io::Result<()> {
    let Some((dir, rel)) = locate(path)? else {
        return Ok(());
    };
    // The longest existing prefix must resolve beneath the root; the rest must be plain names.
    let comps: Vec<Component<'_>> = rel.components().collect();
    for split in (0..=comps.len()).rev() {
        let prefix: PathBuf = comps.iter().take(split).collect();
        let probe = if prefix.as_os_str().is_empty() {
            Path::new(".")
        } else {
            prefix.as_path()
        };
        match dir.canonicalize(probe) {
            Ok(_) => {
                let rest_plain = comps
                    .iter()
                    .skip(split)
                    .all(|c| matches!(c, Component::Normal(_)));
                return if rest_plain {
                    Ok(())
                } else {
                    Err(outside(&root_display().unwrap_or_default()))
                };
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(explain(e)),
        }
    }
    Err(outside(&root_display().unwrap_or_default()))
}

/// The environment variable that, beside [`CONFINE_ENV`], allows a confined run to start
/// programs (`kernelab mcp --allow-run` sets it to `1`): a confined run without it starts none,
/// not even one an input file asks for (`nsys` for a `.nsys-rep`).
pub const ALLOW_RUN_ENV: &str = "KERNELAB_ALLOW_RUN";

/// Whether this run may start `program`: always when not confined; when confined, only with
/// [`ALLOW_RUN_ENV`] set to `1`. The error says why, naming the program and the root.
pub fn may_run(program: &str) -> Result<(), String> {
    match root_display() {
        None => Ok(()),
        Some(_) if std::env::var_os(ALLOW_RUN_ENV).is_some_and(|v| v == "1") => Ok(()),
        Some(root) => Err(format!(
            "this would run `{program}`, and this run is confined to {root} without permission \
             to run programs (start the server with `kernelab mcp --allow-run`)"
        )),
    }
}

/// The error [`open_regular`] gives for a FIFO, directory, socket or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a regular file")]
pub struct NotRegularFile;

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, NotRegularFile)
}

/// Opens `path` for reading when it is a regular file (symbolic links followed, beneath the
/// root when confined). A FIFO, directory, socket or device gives an
/// [`io::ErrorKind::InvalidInput`] error wrapping [`NotRegularFile`]: the type is looked at
/// before opening, the open itself is non-blocking (a FIFO swapped in meanwhile never blocks)
/// and what was opened is checked again.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = match locate(path)? {
        None => {
            use std::os::unix::fs::OpenOptionsExt;
            if !std::fs::metadata(path)?.is_file() {
                return Err(not_regular());
            }
            std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(path)?
        }
        Some((dir, rel)) => {
            if !dir.metadata(&rel).map_err(explain)?.is_file() {
                return Err(not_regular());
            }
            let mut o = cap_std::fs::OpenOptions::new();
            o.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
            dir.open_with(&rel, &o).map_err(explain)?.into_std()
        }
    };
    // The path may have been replaced between the two calls: check what was opened. (On a
    // regular file `O_NONBLOCK` changes nothing.)
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

/// Whether `path` is a folder (links followed, beneath the root when confined); `false` when
/// it does not exist or cannot be looked at.
pub fn is_dir(path: &Path) -> bool {
    match locate(path) {
        Ok(None) => path.is_dir(),
        Ok(Some((dir, rel))) => dir.metadata(&rel).is_ok_and(|m| m.is_dir()),
        Err(_) => false,
    }
}

/// Whether `path` is a regular file (links followed, beneath the root when confined); `false`
/// when it does not exist, is something else or cannot be looked at.
pub fn is_file(path: &Path) -> bool {
    match locate(path) {
        Ok(None) => path.is_file(),
        Ok(Some((dir, rel))) => dir.metadata(&rel).is_ok_and(|m| m.is_file()),
        Err(_) => false,
    }
}

/// What `lstat` says of a path: its type, size, modification time, inode and mode bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// A regular file.
    pub is_file: bool,
    /// A symbolic link (not followed).
    pub is_symlink: bool,
    /// Bytes.
    pub size: u64,
    /// Modification time, seconds since the epoch.
    pub mtime: i64,
    /// Its nanoseconds.
    pub mtime_nsec: i64,
    /// Inode number.
    pub ino: u64,
    /// Mode bits (type and permissions).
    pub mode: u32,
}

/// `lstat` of `path` (the last part not followed; beneath the root when confined).
pub fn lstat(path: &Path) -> io::Result<Stat> {
    // std's and cap-std's metadata have the same accessors but no common type.
    macro_rules! stat_of {
        ($m:expr) => {{
            let m = $m;
            Stat {
                is_file: m.is_file(),
                is_symlink: m.file_type().is_symlink(),
                size: m.size(),
                mtime: m.mtime(),
                mtime_nsec: m.mtime_nsec(),
                ino: m.ino(),
                mode: m.mode(),
            }
        }};
    }
    match locate(path)? {
        None => {
            use std::os::unix::fs::MetadataExt;
            Ok(stat_of!(std::fs::symlink_metadata(path)?))
        }
        Some((dir, rel)) => {
            use cap_std::fs::MetadataExt;
            Ok(stat_of!(dir.symlink_metadata(&rel).map_err(explain)?))
        }
    }
}

/// The target a symbolic link `path` holds, as written (beneath the root when confined).
pub fn read_link(path: &Path) -> io::Result<PathBuf> {
    match locate(path)? {
        None => std::fs::read_link(path),
        Some((dir, rel)) => dir.read_link_contents(&rel).map_err(explain),
    }
}

/// Creates the folder `path` and its missing parents (beneath the root when confined).
pub fn create_dir_all(path: &Path) -> io::Result<()> {
    match locate(path)? {
        None => std::fs::create_dir_all(path),
        Some((dir, rel)) => dir.create_dir_all(&rel).map_err(|e| {
            // A link in the way (to a folder outside): say where it leads, not "exists".
            match (e.kind(), dir.metadata(&rel)) {
                (io::ErrorKind::AlreadyExists, Err(m)) => explain(m),
                _ => explain(e),
            }
        }),
    }
}

/// One entry of a folder listed by [`list_dir`].
#[derive(Debug, Clone)]
pub struct Entry {
    /// The entry's name in its folder.
    pub name: OsString,
    /// A folder (not a link to one).
    pub is_dir: bool,
    /// A regular file (not a link to one).
    pub is_file: bool,
    /// A symbolic link.
    pub is_symlink: bool,
}

/// The entries of the folder `path` (beneath the root when confined), at most `limit` of them:
/// more is an [`io::ErrorKind::InvalidData`] error saying the limit, never a shorter list.
/// Entries are not followed: a link is reported as one.
pub fn list_dir(path: &Path, limit: usize) -> io::Result<Vec<Entry>> {
    let dir = match locate(path)? {
        None => Dir::open_ambient_dir(path, cap_std::ambient_authority())?,
        Some((root, rel)) => root.open_dir(&rel).map_err(explain)?,
    };
    let mut out = Vec::new();
    for e in dir.entries()? {
        let e = e?;
        if out.len() == limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("more than {limit} entries"),
            ));
        }
        let t = e.file_type()?;
        out.push(Entry {
            name: e.file_name(),
            is_dir: t.is_dir(),
            is_file: t.is_file(),
            is_symlink: t.is_symlink(),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
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

/// Opens `path` for appending (created when missing, mode 0666 before the umask; beneath the
/// root when confined), refusing a FIFO, socket or device without blocking: the open is
/// non-blocking and what was opened is checked to be a regular file.
pub fn open_append_regular(path: &Path) -> io::Result<File> {
    let f = match locate(path)? {
        None => {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .read(true)
                .append(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(path)?
        }
        Some((dir, rel)) => {
            let mut o = cap_std::fs::OpenOptions::new();
            o.create(true)
                .read(true)
                .append(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
            dir.open_with(&rel, &o).map_err(explain)?.into_std()
        }
    };
    if !f.metadata()?.is_file() {
        return Err(not_regular());
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
/// place (`replace`) or moves it there only if `path` does not exist (a file that appeared
/// meanwhile is kept, an [`io::ErrorKind::AlreadyExists`] error). An existing `path` that is not
/// a regular file (a link, FIFO, folder) is never replaced. Errors describe `path` only, never
/// the temporary name: the caller names `path`.
pub fn write_file(path: &Path, bytes: &[u8], replace: bool) -> io::Result<()> {
    use std::io::Write;
    let mut f = NewFile::create(path, replace)?;
    f.write_all(bytes)?;
    f.finish()
}

/// A file being written: a temporary file in its target's folder, held by handle, put in
/// place by [`NewFile::finish`] (never clobbering unless `replace`); dropped unfinished, it is
/// removed, so a failed write leaves nothing behind. [`write_file`] is the one-shot form.
pub struct NewFile {
    /// The target's folder, open: the temporary file is made, renamed and removed through it.
    dir: Dir,
    /// The target's folder as named.
    parent: PathBuf,
    /// The target's name in `dir`.
    name: OsString,
    /// The temporary file's name in `dir` (`None` once put in place).
    tmp: Option<String>,
    file: File,
    replace: bool,
}

/// An unpredictable name for a temporary file: 64 bits from the standard library's randomly
/// keyed hasher (seeded from the system's random source), the process, the time and a counter.
fn temporary_name() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    h.write_u128(now);
    format!(".kernelab-{:016x}.tmp", h.finish())
}

impl NewFile {
    /// Starts writing `path`: refused when it exists and is not a regular file, or exists and
    /// `replace` is false.
    pub fn create(path: &Path, replace: bool) -> io::Result<NewFile> {
        let (dir, name) = parent_dir(path)?;
        match dir.symlink_metadata(&name) {
            Ok(meta) if !meta.is_file() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file; only regular files are replaced",
                ));
            }
            Ok(_) if !replace => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "already exists; not replacing it (use --force to replace)",
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(explain(e)),
        }
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        NewFile::temporary(dir, parent, name, replace)
    }

    /// Starts writing a file in the folder `dir` whose name is chosen when it is put in place
    /// ([`NewFile::finish_first_free`]).
    pub fn create_in(dir: &Path) -> io::Result<NewFile> {
        let handle = match locate(dir)? {
            None => Dir::open_ambient_dir(dir, cap_std::ambient_authority())?,
            Some((root, rel)) => root.open_dir(&rel).map_err(explain)?,
        };
        NewFile::temporary(handle, dir, OsString::new(), false)
    }

    fn temporary(dir: Dir, parent: &Path, name: OsString, replace: bool) -> io::Result<NewFile> {
        let mut o = cap_std::fs::OpenOptions::new();
        o.write(true).create_new(true).mode(0o666);
        let mut tries = 0;
        let (tmp, file) = loop {
            let tmp = temporary_name();
            match dir.open_with(&tmp, &o) {
                Ok(f) => break (tmp, f.into_std()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 16 => tries += 1,
                Err(e) => return Err(e),
            }
        };
        Ok(NewFile {
            dir,
            parent: parent.to_path_buf(),
            name,
            tmp: Some(tmp),
            file,
            replace,
        })
    }

    /// Flushes the file and puts it in place.
    pub fn finish(mut self) -> io::Result<()> {
        use std::io::Write;
        self.file.flush()?;
        // On disk before it gets the name: a crash never leaves a short file there.
        self.file.sync_all()?;
        let Some(tmp) = self.tmp.as_deref() else {
            return Ok(());
        };
        if self.name.is_empty() {
            return Err(io::Error::other("no name to put the file under"));
        }
        if self.replace {
            self.dir.rename(tmp, &self.dir, &self.name)?;
        } else {
            // A hard link fails when the name exists (`renameat2(RENAME_NOREPLACE)` is not
            // offered by every file system; a link is): the temporary name is removed after.
            self.dir
                .hard_link(tmp, &self.dir, &self.name)
                .map_err(|e| {
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        io::Error::new(
                            io::ErrorKind::AlreadyExists,
                            "appeared while writing; not replacing it (use --force)",
                        )
                    } else {
                        e
                    }
                })?;
            let _ = self.dir.remove_file(tmp);
        }
        self.tmp = None;
        Ok(())
    }
}

impl NewFile {
    /// Flushes the file and puts it in place under the first of `names` that is free (each
    /// tried by a hard link, which never replaces: concurrent writers never share a name);
    /// the path it took.
    pub fn finish_first_free(
        mut self,
        names: impl IntoIterator<Item = String>,
    ) -> io::Result<PathBuf> {
        use std::io::Write;
        self.file.flush()?;
        self.file.sync_all()?;
        let Some(tmp) = self.tmp.clone() else {
            return Err(io::Error::other("already finished"));
        };
        for name in names {
            match self.dir.hard_link(&tmp, &self.dir, &name) {
                Ok(()) => {
                    let _ = self.dir.remove_file(&tmp);
                    self.tmp = None;
                    return Ok(self.parent.join(name));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free name left"))
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = self.dir.remove_file(tmp);
        }
    }
}

impl io::Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A folder of an unpredictable name made (mode 0700, `mkdir` fails on any existing name) in
/// a given folder, for a program kernelab runs to write into by name: nothing can be planted
/// in it. Its files are created, read and moved out through its handle; dropped, it is removed
/// with what is left in it.
pub struct TempDir {
    parent: Dir,
    name: String,
    dir: Dir,
    path: PathBuf,
}

impl TempDir {
    /// A new folder in `parent` (beneath the root when confined).
    pub fn new_in(parent: &Path) -> io::Result<TempDir> {
        use cap_std::fs::DirBuilderExt as _;
        let parent_dir = match locate(parent)? {
            None => Dir::open_ambient_dir(parent, cap_std::ambient_authority())?,
            Some((root, rel)) => root.open_dir(&rel).map_err(explain)?,
        };
        let mut builder = cap_std::fs::DirBuilder::new();
        builder.mode(0o700);
        let mut tries = 0;
        let name = loop {
            let name = temporary_name();
            match parent_dir.create_dir_with(&name, &builder) {
                Ok(()) => break name,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < 16 => tries += 1,
                Err(e) => return Err(e),
            }
        };
        let dir = parent_dir.open_dir(&name)?;
        Ok(TempDir {
            path: parent.join(&name),
            parent: parent_dir,
            name,
            dir,
        })
    }

    /// The folder's path (for a program that writes into it by name).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the new file `name` in the folder (`O_EXCL`).
    pub fn create(&self, name: &str) -> io::Result<File> {
        let mut o = cap_std::fs::OpenOptions::new();
        o.write(true).create_new(true).mode(0o600);
        Ok(self.dir.open_with(name, &o)?.into_std())
    }

    /// Whether the folder holds a regular file `name` (not a link).
    pub fn has_file(&self, name: &str) -> bool {
        self.dir.symlink_metadata(name).is_ok_and(|m| m.is_file())
    }

    /// The regular file `name` of the folder, at most `limit` bytes.
    pub fn read(&self, name: &str, limit: u64) -> io::Result<Vec<u8>> {
        if !self.has_file(name) {
            return Err(not_regular());
        }
        let mut o = cap_std::fs::OpenOptions::new();
        o.read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
        let f = self.dir.open_with(name, &o)?.into_std();
        crate::limits::read_capped(f, limit).map_err(|e| io::Error::other(e.to_string()))
    }

    /// Moves the regular file `name` of the folder to `dest` (replacing a regular file there;
    /// beneath the root when confined).
    pub fn keep_as(&self, name: &str, dest: &Path) -> io::Result<()> {
        if !self.has_file(name) {
            return Err(not_regular());
        }
        let (dest_dir, dest_name) = parent_dir(dest)?;
        if let Ok(meta) = dest_dir.symlink_metadata(&dest_name) {
            if !meta.is_file() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file; only regular files are replaced",
                ));
            }
        }
        self.dir.rename(name, &dest_dir, &dest_name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = self.parent.remove_dir_all(&self.name);
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
