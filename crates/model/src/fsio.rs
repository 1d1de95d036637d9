//! Opening input files without blocking on what is not a regular file.

use std::fs::File;
use std::io;
use std::path::Path;

/// The error [`open_regular`] gives for a FIFO, directory, socket or device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a regular file")]
pub struct NotRegularFile;

/// Opens `path` for reading when it is a regular file (symbolic links followed). A FIFO,
/// directory, socket or device gives an [`io::ErrorKind::InvalidInput`] error wrapping
/// [`NotRegularFile`], found from the metadata before opening, so a FIFO never blocks.
pub fn open_regular(path: &Path) -> io::Result<File> {
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
}
