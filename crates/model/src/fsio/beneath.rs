//! The confining root (`KERNELAB_CONFINE_ROOT`) and where a path lies beneath it.
//!
//! A confined path is opened by handle: the root folder is opened once, and every path is
//! resolved beneath that handle by the kernel (`openat2` with `RESOLVE_BENEATH` and
//! `RESOLVE_NO_MAGICLINKS`, else a component-by-component `openat(O_NOFOLLOW)` walk), both
//! through `cap-std`. A link, `..` or a folder swapped for a link that would lead out of the
//! root fails the open itself: there is no check by name followed by a second lookup.

use cap_std::fs::Dir;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable that confines every file kernelab opens or writes by name to one
/// folder: `kernelab mcp` sets it to its `--root` for each command it runs, so that paths named
/// inside specs and manifests are held to the root as the tool's own arguments are.
pub const CONFINE_ENV: &str = "KERNELAB_CONFINE_ROOT";

/// The confining folder, opened once.
pub(super) struct Root {
    /// As given, made absolute (its lexical form: paths may name the root this way).
    given: PathBuf,
    /// With every link resolved (the form the working directory takes).
    canonical: PathBuf,
    /// The open folder every confined path is resolved beneath.
    pub(super) dir: Dir,
}

/// The confinement of this process, set once: from [`CONFINE_ENV`] at the first file opened,
/// or by [`confine_to`] before it.
static ROOT: OnceLock<Option<Result<Root, String>>> = OnceLock::new();

/// The root of [`CONFINE_ENV`] (`None`: not confined; `Some(Err)`: confined to a root that
/// could not be opened, so every path is refused).
fn root() -> Option<&'static Result<Root, String>> {
    ROOT.get_or_init(|| {
        let raw = std::env::var_os(CONFINE_ENV)?;
        Some(open_root(Path::new(&raw)))
    })
    .as_ref()
}

/// Confines every file this process opens through the layer to `dir` (the MCP server's own
/// reads of records and `out` files): must come before the first file is opened; an error
/// when the process is already confined elsewhere or not at all, or `dir` cannot be opened.
pub fn confine_to(dir: &Path) -> io::Result<()> {
    let opened = open_root(dir).map_err(io::Error::other)?;
    let want = opened.canonical.clone();
    let _ = ROOT.set(Some(Ok(opened)));
    match root() {
        Some(Ok(r)) if r.canonical == want => Ok(()),
        _ => Err(io::Error::other(format!(
            "this process already opened files unconfined or confined elsewhere; cannot confine it to {}",
            want.display()
        ))),
    }
}

fn open_root(raw: &Path) -> Result<Root, String> {
    let given = absolute_lexical(raw).map_err(|e| e.to_string())?;
    let canonical =
        std::fs::canonicalize(&given).map_err(|e| format!("{}: {e}", given.display()))?;
    let dir = Dir::open_ambient_dir(&canonical, cap_std::ambient_authority())
        .map_err(|e| format!("{}: {e}", canonical.display()))?;
    Ok(Root {
        given,
        canonical,
        dir,
    })
}

/// `path` made absolute against the working directory, with `.` parts dropped (`..` is kept:
/// only the kernel may say where it leads).
fn absolute_lexical(path: &Path) -> io::Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    Ok(abs
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect())
}

/// The error for a path outside the root.
pub(super) fn outside(root: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("outside the folder this run is confined to ({root})"),
    )
}

/// Where `path` is opened from: `None` when nothing is confined (open it by name), else the
/// root's handle and the path relative to it. A path that does not name the root or a place
/// under it, lexically, is refused here; one that leads out through a link or `..` is refused
/// by the open beneath the handle.
pub(super) fn locate(path: &Path) -> io::Result<Option<(&'static Dir, PathBuf)>> {
    let Some(root) = root() else {
        return Ok(None);
    };
    let root = root
        .as_ref()
        .map_err(|e| outside(&format!("{e}; every path is refused")))?;
    let abs = absolute_lexical(path)?;
    let rel = abs
        .strip_prefix(&root.canonical)
        .or_else(|_| abs.strip_prefix(&root.given))
        .map_err(|_| outside(&root.canonical.display().to_string()))?;
    let rel = if rel.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        rel.to_path_buf()
    };
    Ok(Some((&root.dir, rel)))
}

/// The confining root's display form, when confined.
pub(super) fn root_display() -> Option<String> {
    root().map(|r| match r {
        Ok(r) => r.canonical.display().to_string(),
        Err(e) => e.clone(),
    })
}

/// Maps an escape found by the open beneath the root (cap-std's `PermissionDenied` "a path led
/// outside of the filesystem", or the kernel's `EXDEV`/`ELOOP` of `RESOLVE_BENEATH`) to the
/// message that names the root; other errors pass unchanged.
pub(super) fn explain(e: io::Error) -> io::Error {
    let escaped = e.raw_os_error() == Some(libc::EXDEV)
        || (e.kind() == io::ErrorKind::PermissionDenied
            && e.to_string().contains("outside of the filesystem"));
    match (escaped, root_display()) {
        (true, Some(root)) => outside(&root),
        _ => e,
    }
}

/// The parent folder of `path` opened by handle (beneath the root when confined) and the
/// file name within it.
pub(super) fn parent_dir(path: &Path) -> io::Result<(Dir, OsString)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "names no file"))?
        .to_os_string();
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = match locate(parent)? {
        None => Dir::open_ambient_dir(parent, cap_std::ambient_authority())?,
        Some((root, rel)) => root.open_dir(&rel).map_err(explain)?,
    };
    Ok((dir, name))
}
