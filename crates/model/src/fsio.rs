//! Opening input files without blocking on FIFOs or devices.

use std::fs::File;
use std::io;
use std::path::Path;

/// Opens `path` for reading if it is a regular file (after following symlinks); a directory,
/// FIFO, socket or device is refused with `InvalidInput` "not a regular file" before it is
/// opened, so a FIFO with no writer never blocks the caller.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path)?;
    // The path may have been replaced between the check and the open.
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}

fn not_regular() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_directories_and_opens_files() {
        let dir = std::env::temp_dir();
        let err = open_regular(&dir).expect_err("a directory");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(err.to_string(), "not a regular file");
        let err = open_regular(Path::new("/dev/null")).expect_err("a device");
        assert_eq!(err.to_string(), "not a regular file");
        let missing = open_regular(Path::new("/nonexistent/kernelab")).expect_err("missing");
        assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    }
}
