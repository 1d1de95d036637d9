//! A build as `code matrix` compares it: every code object of a build tree (or a list of
//! files), keyed by its path below the tree or by a `--key` pattern.

use crate::{load_file, Build, Error, LoadOptions, Result};
use regex::Regex;
use std::path::{Path, PathBuf};

/// Every regular file below `dir`, sorted. Symbolic links to folders are not followed (so a
/// link loop cannot hang the walk); FIFOs, sockets and devices are skipped.
pub fn files_below(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Err(Error::NotADirectory {
            path: dir.to_path_buf(),
        });
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(io(&d))? {
            let e = e.map_err(io(&d))?;
            let p = e.path();
            let kind = e.file_type().map_err(io(&p))?;
            if kind.is_dir() {
                stack.push(p);
            } else if kind.is_file() || (kind.is_symlink() && p.is_file()) {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Loads a build: the code objects of every file below `dir` (keyed by their path below it), or
/// of `files` (keyed by file name). With `key`, a file's key is the pattern's first group (or
/// whole match) in that path, and files it does not match are left out. Files that are not code
/// objects (logs, JSON metadata) are skipped; two files with one key are an error.
pub fn load_build(
    dir: Option<&Path>,
    files: &[PathBuf],
    key: Option<&Regex>,
    options: &LoadOptions,
) -> Result<Build> {
    let listed: Vec<(PathBuf, PathBuf)> = match dir {
        Some(d) => files_below(d)?
            .into_iter()
            .map(|p| {
                let rel = p
                    .strip_prefix(d)
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|_| p.clone());
                (rel, p)
            })
            .collect(),
        None => files
            .iter()
            .map(|p| (PathBuf::from(p.file_name().unwrap_or_default()), p.clone()))
            .collect(),
    };
    let mut out = Build::new();
    for (rel, path) in listed {
        let rel = rel.display().to_string();
        let k = match key {
            Some(re) => match re.captures(&rel).and_then(|c| c.get(1).or(c.get(0))) {
                Some(m) => m.as_str().to_string(),
                None => continue,
            },
            None => rel.clone(),
        };
        let objects = match load_file(&path, options) {
            Ok(o) => o,
            Err(Error::Unknown { .. }) => continue,
            Err(e) => return Err(e),
        };
        let label = path.display().to_string();
        if let Some((first, _)) = out.get(&k) {
            return Err(Error::DuplicateKey {
                key: k,
                first: first.clone(),
                second: label,
            });
        }
        out.insert(k, (label, objects));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_skips_link_loops_and_fifos() {
        let dir = tempfile::tempdir().expect("tmp");
        let sub = dir.path().join("a");
        std::fs::create_dir(&sub).expect("mkdir");
        std::fs::write(sub.join("k.bin"), b"x").expect("write");
        std::os::unix::fs::symlink(dir.path(), sub.join("loop")).expect("symlink");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let files = files_below(dir.path()).expect("walks");
        assert_eq!(files, vec![sub.join("k.bin")]);
        if made.is_ok_and(|s| s.success()) {
            assert!(fifo.exists());
        }
        let e = files_below(&sub.join("k.bin")).expect_err("a file");
        assert!(e
            .to_string()
            .ends_with("k.bin: not a directory; expected a build tree"));
    }

    #[test]
    fn two_files_with_one_key_are_an_error() {
        let dir = tempfile::tempdir().expect("tmp");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/code");
        let cubin = std::fs::read_dir(&fixtures)
            .expect("fixtures")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == "cubin"))
            .expect("a cubin fixture");
        for d in ["x1", "x2"] {
            std::fs::create_dir(dir.path().join(d)).expect("mkdir");
            std::fs::copy(&cubin, dir.path().join(d).join("k.cubin")).expect("copy");
        }
        let opts = LoadOptions::default();
        let re = Regex::new(r"(k)\.cubin").expect("re");
        let e = load_build(Some(dir.path()), &[], Some(&re), &opts).expect_err("duplicate");
        assert!(e.to_string().contains("both have the key \"k\""), "{e}");
        let b = load_build(Some(dir.path()), &[], None, &opts).expect("loads");
        assert_eq!(b.keys().collect::<Vec<_>>(), ["x1/k.cubin", "x2/k.cubin"]);
    }
}
