//! Confinement: every path a tool reads or writes lies under the server's root.

use std::path::{Component, Path, PathBuf};

/// The root every path is confined to (canonical: symbolic links resolved).
#[derive(Clone, Debug)]
pub struct Root {
    dir: PathBuf,
}

impl Root {
    /// The root `dir`, which must be an existing directory.
    pub fn new(dir: &Path) -> std::io::Result<Root> {
        let dir = std::fs::canonicalize(dir)?;
        if !dir.is_dir() {
            return Err(std::io::Error::other(format!(
                "{}: not a directory",
                dir.display()
            )));
        }
        Ok(Root { dir })
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `path` (relative to the root, or absolute) lies once every symbolic link of its
    /// existing part is resolved; an error saying why when that is outside the root. A part
    /// that does not exist yet (a file to write) may not climb with `..`.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let p = Path::new(path);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.dir.join(p)
        };
        // The longest existing prefix, canonicalized; the rest appended as written.
        let comps: Vec<Component<'_>> = joined.components().collect();
        let mut split = comps.len();
        let mut base = None;
        while split > 0 {
            let prefix: PathBuf = comps[..split].iter().collect();
            if let Ok(c) = std::fs::canonicalize(&prefix) {
                base = Some(c);
                break;
            }
            split -= 1;
        }
        let mut out = base.unwrap_or_else(|| PathBuf::from("/"));
        for c in &comps[split..] {
            match c {
                Component::Normal(n) => out.push(n),
                Component::CurDir => {}
                _ => {
                    return Err(format!(
                        "{path}: a path that does not exist may not climb with `..`"
                    ))
                }
            }
        }
        if out.starts_with(&self.dir) {
            Ok(out)
        } else {
            Err(format!(
                "{path}: outside the root {} (resolves to {}); the server reads and writes only under its --root",
                self.dir.display(),
                out.display()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_root_are_refused_inside_accepted() {
        let t = std::env::temp_dir().join(format!("kernelab-mcp-root-{}", std::process::id()));
        let inner = t.join("root");
        std::fs::create_dir_all(inner.join("a")).expect("mkdir");
        let root = Root::new(&inner).expect("root");
        assert!(root.resolve("a").is_ok());
        assert!(root.resolve("a/new.json").is_ok());
        assert!(root.resolve("new/deeper/file").is_ok());
        let e = root.resolve("../x").expect_err("climbs out");
        assert!(e.contains("outside the root"), "{e}");
        assert!(root.resolve("/etc/passwd").is_err());
        assert!(root.resolve("a/../../x").is_err());
        assert!(root.resolve("missing/../../x").is_err());
        std::os::unix::fs::symlink("/etc", inner.join("link")).expect("symlink");
        let e = root.resolve("link/passwd").expect_err("link out");
        assert!(e.contains("/etc/passwd"), "{e}");
        let abs = inner.join("a").display().to_string();
        assert!(root.resolve(&abs).is_ok());
        let _ = std::fs::remove_dir_all(&t);
    }
}
