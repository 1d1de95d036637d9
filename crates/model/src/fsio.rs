//! Opening input files without blocking: a FIFO, a device or a folder named where a file is
//! expected is refused before `open` (opening a FIFO for reading blocks until a writer appears).

use std::fs::File;
use std::io;
use std::path::Path;

/// Opens `path` for reading if it is a regular file (after following symbolic links); anything
/// else is an error of kind `InvalidInput` saying "not a regular file".
pub fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_and_fifos_are_refused_without_blocking() {
        let dir = std::env::temp_dir();
        let e = open_regular(&dir).expect_err("a folder");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert_eq!(e.to_string(), "not a regular file");
        let fifo = dir.join(format!("kernelab-fsio-{}.fifo", std::process::id()));
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = open_regular(&fifo).expect_err("a FIFO");
            assert_eq!(e.to_string(), "not a regular file");
            let _ = std::fs::remove_file(&fifo);
        }
    }
}
