//! The git state of a work tree, read from the repository's files without running git: a
//! repository's own configuration (`core.fsmonitor`, hooks, filter drivers, aliases) can name
//! any program, and gathering provenance must run none.
//!
//! - The commit: `HEAD`, followed through symbolic refs to a loose ref or `packed-refs`.
//! - Dirty: a tracked file whose type, executable bit or content differs from the index (a
//!   file whose stat data still match the index entry, and was not written in the second the
//!   index was, is taken as unchanged, as git does), an unmerged or intent-to-add entry, or an
//!   index whose cached root tree differs from the commit's tree (staged changes).
//!
//! What cannot be told without git is said as unknown (`dirty: None`), never guessed: an index
//! without a valid cached root tree (written by an operation that drops it), a commit stored
//! as a delta in a pack, a split index, a SHA-256 repository. Content is hashed as stored, so a
//! file that reaches the index through a clean filter or line-ending conversion and whose stat
//! data moved counts as changed.
//!
//! Written by hand because the crates that read git (gitoxide) open files by name outside the
//! confined layer and run the repository's filter drivers during status; this needs three
//! small formats (refs, the index, one commit object) read through `kernelab_model`'s layer.
//! Every read is bounded; a damaged file gives `None`, never a panic.

use flate2::read::ZlibDecoder;
use kernelab_model::{is_dir, is_file, list_dir, lstat, open_regular, read_link, read_regular};
use sha1::{Digest, Sha1};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// The most bytes of a ref, `HEAD` or `.git` file.
const MAX_SMALL: u64 = 4 << 10;
/// The most bytes of `packed-refs`.
const MAX_PACKED_REFS: u64 = 256 << 20;
/// The most bytes of the index.
const MAX_INDEX: u64 = 1 << 30;
/// The most bytes of a pack index (`.idx`) read.
const MAX_PACK_IDX: u64 = 1 << 30;
/// The most bytes of a commit object inflated.
const MAX_COMMIT: u64 = 1 << 20;
/// The most symbolic refs followed.
const MAX_SYMREF_DEPTH: usize = 5;
/// The most packs looked in.
const MAX_PACKS: usize = 4096;

/// What was read of a work tree's git state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// The commit `HEAD` names (hex).
    pub commit: String,
    /// Whether tracked files differ from the commit (`None`: cannot be told without git).
    pub dirty: Option<bool>,
}

/// A repository found above a folder.
struct Repo {
    work: PathBuf,
    git_dir: PathBuf,
    common: PathBuf,
}

/// The git state of the work tree holding `start` (or one of its parents), if any.
pub fn state(start: &Path) -> Option<State> {
    let repo = discover(start)?;
    let commit = head_commit(&repo)?;
    let dirty = dirty(&repo, &commit);
    Some(State { commit, dirty })
}

fn small_text(p: &Path) -> Option<String> {
    String::from_utf8(read_regular(p, MAX_SMALL).ok()?).ok()
}

fn discover(start: &Path) -> Option<Repo> {
    for dir in start.ancestors() {
        let dotgit = dir.join(".git");
        let git_dir = if is_dir(&dotgit) {
            dotgit
        } else if is_file(&dotgit) {
            let text = small_text(&dotgit)?;
            let target = text.strip_prefix("gitdir:")?.trim();
            let t = Path::new(target);
            if t.is_absolute() {
                t.to_path_buf()
            } else {
                dir.join(t)
            }
        } else {
            continue;
        };
        if !is_file(&git_dir.join("HEAD")) {
            return None;
        }
        let common = match small_text(&git_dir.join("commondir")) {
            Some(c) => {
                let c = Path::new(c.trim());
                if c.is_absolute() {
                    c.to_path_buf()
                } else {
                    git_dir.join(c)
                }
            }
            None => git_dir.clone(),
        };
        return Some(Repo {
            work: dir.to_path_buf(),
            git_dir,
            common,
        });
    }
    None
}

/// A full SHA-1 object name in hex.
fn is_sha1_hex(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A ref name safe to join to a folder: `refs/…`, plain parts only.
fn safe_ref(name: &str) -> bool {
    name.starts_with("refs/")
        && Path::new(name)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        && !name.contains('\0')
        && !name.ends_with(".lock")
}

fn head_commit(repo: &Repo) -> Option<String> {
    let mut text = small_text(&repo.git_dir.join("HEAD"))?;
    for _ in 0..MAX_SYMREF_DEPTH {
        let line = text.trim();
        let Some(name) = line.strip_prefix("ref:") else {
            return is_sha1_hex(line).then(|| line.to_ascii_lowercase());
        };
        let name = name.trim();
        if !safe_ref(name) {
            return None;
        }
        text = match small_text(&repo.git_dir.join(name))
            .or_else(|| small_text(&repo.common.join(name)))
        {
            Some(t) => t,
            None => return packed_ref(repo, name),
        };
    }
    None
}

fn packed_ref(repo: &Repo, name: &str) -> Option<String> {
    let bytes = read_regular(&repo.common.join("packed-refs"), MAX_PACKED_REFS).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
        .find_map(|l| {
            let (oid, r) = l.split_once(' ')?;
            (r == name && is_sha1_hex(oid)).then(|| oid.to_ascii_lowercase())
        })
}

/// One index entry (what the comparison needs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// Path relative to the work tree.
    pub path: Vec<u8>,
    /// Modification time (seconds, nanoseconds) as recorded.
    pub mtime: (u32, u32),
    /// Inode (low 32 bits).
    pub ino: u32,
    /// Mode (`0o100644`, `0o100755`, `0o120000`, `0o160000`).
    pub mode: u32,
    /// Size (low 32 bits).
    pub size: u32,
    /// The object name.
    pub oid: [u8; 20],
    /// Merge stage (0: not a conflict).
    pub stage: u8,
    /// `skip-worktree` (sparse checkout: not compared).
    pub skip_worktree: bool,
    /// `intent-to-add` (`git add -N`: a change).
    pub intent_to_add: bool,
}

/// An index, as far as provenance needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    /// The entries, in file order.
    pub entries: Vec<IndexEntry>,
    /// The cached root tree, when valid (the `TREE` extension).
    pub root_tree: Option<[u8; 20]>,
    /// A split or sparse index (entries elsewhere or folded): not comparable here.
    pub incomplete: bool,
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

/// Parses an index file (versions 2 to 4, SHA-1): `None` when it is damaged or its checksum
/// does not match.
pub fn parse_index(b: &[u8]) -> Option<Index> {
    if b.len() < 12 + 20 || b.get(..4)? != b"DIRC" {
        return None;
    }
    let body_end = b.len() - 20;
    let sum = b.get(body_end..)?;
    // `index.skipHash` writes zeros; anything else must be the SHA-1 of what precedes it.
    if sum.iter().any(|&x| x != 0) && Sha1::digest(b.get(..body_end)?).as_slice() != sum {
        return None;
    }
    let version = be32(b, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(b, 8)? as usize;
    // Each entry takes at least 62 bytes (40 of stat data, 20 of name, 2 of flags).
    if count > body_end / 62 {
        return None;
    }
    let mut entries = Vec::with_capacity(count);
    let mut at = 12usize;
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = at;
        let mtime = (be32(b, at + 8)?, be32(b, at + 12)?);
        let ino = be32(b, at + 20)?;
        let mode = be32(b, at + 24)?;
        let size = be32(b, at + 36)?;
        let oid: [u8; 20] = b.get(at + 40..at + 60)?.try_into().ok()?;
        let flags = be16(b, at + 60)?;
        at += 62;
        let mut ext = 0u16;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            ext = be16(b, at)?;
            at += 2;
        }
        let path = if version == 4 {
            // A varint of bytes to drop from the previous path, then the rest, NUL-ended.
            let mut strip: usize = 0;
            loop {
                let byte = *b.get(at)?;
                at += 1;
                strip = strip
                    .checked_mul(128)?
                    .checked_add(usize::from(byte & 0x7f))?;
                if byte & 0x80 == 0 {
                    break;
                }
                strip = strip.checked_add(1)?;
            }
            let keep = prev.len().checked_sub(strip)?;
            let rest = b.get(at..body_end)?;
            let nul = rest.iter().position(|&c| c == 0)?;
            let mut p = prev.get(..keep)?.to_vec();
            p.extend_from_slice(rest.get(..nul)?);
            at += nul + 1;
            p
        } else {
            let rest = b.get(at..body_end)?;
            let nul = rest.iter().position(|&c| c == 0)?;
            let p = rest.get(..nul)?.to_vec();
            // Padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
            let len = at + nul - start;
            at = start + (len + 8) / 8 * 8;
            if at > body_end {
                return None;
            }
            p
        };
        prev.clone_from(&path);
        entries.push(IndexEntry {
            path,
            mtime,
            ino,
            mode,
            size,
            oid,
            stage: ((flags >> 12) & 3) as u8,
            skip_worktree: ext & 0x4000 != 0,
            intent_to_add: ext & 0x2000 != 0,
        });
    }
    let mut root_tree = None;
    let mut incomplete = false;
    while at + 8 <= body_end {
        let sig = b.get(at..at + 4)?;
        let len = be32(b, at + 4)? as usize;
        let data = b.get(at + 8..(at + 8).checked_add(len)?)?;
        if at + 8 + len > body_end {
            return None;
        }
        match sig {
            b"TREE" => root_tree = root_of_cache_tree(data),
            b"link" | b"sdir" => incomplete = true,
            _ => {}
        }
        at += 8 + len;
    }
    if at != body_end {
        return None;
    }
    Some(Index {
        entries,
        root_tree,
        incomplete,
    })
}

/// The root entry of a `TREE` extension: `""\0<entries> <subtrees>\n<oid>`; `None` when it
/// is invalidated (entries −1).
fn root_of_cache_tree(d: &[u8]) -> Option<[u8; 20]> {
    let rest = d.strip_prefix(b"\0")?;
    let nl = rest.iter().position(|&c| c == b'\n')?;
    let head = std::str::from_utf8(rest.get(..nl)?).ok()?;
    let (entries, _subtrees) = head.split_once(' ')?;
    if entries.parse::<i64>().ok()? < 0 {
        return None;
    }
    rest.get(nl + 1..nl + 21)?.try_into().ok()
}

/// The SHA-1 of a blob of `len` bytes read from `r`.
fn blob_oid(len: u64, r: impl Read) -> Option<[u8; 20]> {
    let mut h = Sha1::new();
    h.update(format!("blob {len}\0").as_bytes());
    let mut r = r.take(len);
    let mut buf = vec![0u8; 64 << 10];
    let mut seen = 0u64;
    loop {
        let n = r.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        seen += n as u64;
        h.update(buf.get(..n)?);
    }
    (seen == len).then(|| h.finalize().into())
}

/// Whether the work-tree file of `e` differs from it (`None`: cannot be told).
fn entry_changed(work: &Path, e: &IndexEntry, index_mtime: (i64, i64)) -> Option<bool> {
    let rel = Path::new(std::str::from_utf8(&e.path).ok()?);
    if !rel
        .components()
        .all(|c| matches!(c, Component::Normal(n) if n != ".git"))
    {
        return None;
    }
    let p = work.join(rel);
    let st = match lstat(&p) {
        Ok(s) => s,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Some(true),
        Err(_) => return None,
    };
    let want_link = e.mode & 0o170000 == 0o120000;
    if want_link != st.is_symlink || (!want_link && !st.is_file) {
        return Some(true);
    }
    if !want_link && ((e.mode & 0o100) != 0) != ((st.mode & 0o100) != 0) {
        return Some(true);
    }
    let racy = (st.mtime, st.mtime_nsec) >= index_mtime;
    if !racy
        && st.size as u32 == e.size
        && st.mtime as u32 == e.mtime.0
        && st.mtime_nsec as u32 == e.mtime.1
        && st.ino as u32 == e.ino
    {
        return Some(false);
    }
    let oid = if want_link {
        let target = read_link(&p).ok()?;
        let bytes = target.as_os_str().as_encoded_bytes();
        blob_oid(bytes.len() as u64, bytes)?
    } else {
        let f = open_regular(&p).ok()?;
        let len = f.metadata().ok()?.len();
        blob_oid(len, f)?
    };
    Some(oid != e.oid)
}

fn dirty(repo: &Repo, commit: &str) -> Option<bool> {
    let index_path = repo.git_dir.join("index");
    let index_stat = lstat(&index_path).ok()?;
    let bytes = read_regular(&index_path, MAX_INDEX).ok()?;
    let index = parse_index(&bytes)?;
    if index.incomplete {
        return None;
    }
    let index_mtime = (index_stat.mtime, index_stat.mtime_nsec);
    let mut unknown = false;
    for e in &index.entries {
        if e.stage != 0 || e.intent_to_add {
            return Some(true);
        }
        if e.skip_worktree || e.mode & 0o170000 == 0o160000 {
            continue;
        }
        match entry_changed(&repo.work, e, index_mtime) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => unknown = true,
        }
    }
    if unknown {
        return None;
    }
    let root = index.root_tree?;
    let tree = commit_tree(repo, commit)?;
    Some(root != tree)
}

fn hex_to_oid(s: &str) -> Option<[u8; 20]> {
    let mut out = [0u8; 20];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The tree a commit object names, from a loose object or an undeltified entry of a pack.
fn commit_tree(repo: &Repo, commit: &str) -> Option<[u8; 20]> {
    let objects = repo.common.join("objects");
    let body = match read_regular(
        &objects.join(&commit[..2]).join(&commit[2..]),
        MAX_COMMIT * 4,
    ) {
        Ok(z) => {
            let raw = inflate(&z)?;
            let nul = raw.iter().position(|&c| c == 0)?;
            if !raw.starts_with(b"commit ") {
                return None;
            }
            raw.get(nul + 1..)?.to_vec()
        }
        Err(_) => packed_commit(&objects.join("pack"), &hex_to_oid(commit)?)?,
    };
    let first = body.split(|&c| c == b'\n').next()?;
    let hex = std::str::from_utf8(first.strip_prefix(b"tree ")?).ok()?;
    is_sha1_hex(hex).then(|| hex_to_oid(hex))?
}

fn inflate(z: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    ZlibDecoder::new(z)
        .take(MAX_COMMIT)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// A commit stored whole (not as a delta) in one of the packs of `pack_dir`.
fn packed_commit(pack_dir: &Path, oid: &[u8; 20]) -> Option<Vec<u8>> {
    let entries = list_dir(pack_dir, MAX_PACKS).ok()?;
    for e in entries.iter().filter(|e| e.is_file) {
        let name = e.name.to_str()?;
        let Some(stem) = name.strip_suffix(".idx") else {
            continue;
        };
        let idx = read_regular(&pack_dir.join(name), MAX_PACK_IDX).ok()?;
        let Some(offset) = pack_offset(&idx, oid) else {
            continue;
        };
        let pack = open_regular(&pack_dir.join(format!("{stem}.pack"))).ok()?;
        return commit_at(&pack, offset);
    }
    None
}

/// The offset of `oid` in a version-2 pack index.
pub fn pack_offset(idx: &[u8], oid: &[u8; 20]) -> Option<u64> {
    if idx.get(..8)? != b"\xfftOc\0\0\0\x02" {
        return None;
    }
    let fan = |i: usize| be32(idx, 8 + 4 * i).map(|v| v as usize);
    let n = fan(255)?;
    let lo = if oid[0] == 0 {
        0
    } else {
        fan(oid[0] as usize - 1)?
    };
    let hi = fan(oid[0] as usize)?;
    if lo > hi || hi > n {
        return None;
    }
    let names = 8 + 256 * 4;
    let name = |i: usize| idx.get(names + 20 * i..names + 20 * i + 20);
    let (mut a, mut b) = (lo, hi);
    while a < b {
        let m = a + (b - a) / 2;
        match name(m)?.cmp(oid.as_slice()) {
            std::cmp::Ordering::Less => a = m + 1,
            std::cmp::Ordering::Greater => b = m,
            std::cmp::Ordering::Equal => {
                let offsets = names + 24 * n;
                let small = be32(idx, offsets + 4 * m)?;
                if small & 0x8000_0000 == 0 {
                    return Some(u64::from(small));
                }
                let large = offsets + 4 * n + 8 * (small & 0x7fff_ffff) as usize;
                return Some(u64::from_be_bytes(
                    idx.get(large..large + 8)?.try_into().ok()?,
                ));
            }
        }
    }
    None
}

/// The commit object at `offset` of a pack, when stored whole.
fn commit_at(pack: &std::fs::File, offset: u64) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 16];
    let n = pack.read_at(&mut head, offset).ok()?;
    let first = *head.get(..n)?.first()?;
    if (first >> 4) & 7 != 1 {
        return None; // not a commit stored whole (a delta or another type)
    }
    let mut at = 1usize;
    let mut more = first & 0x80 != 0;
    while more {
        more = head.get(at)? & 0x80 != 0;
        at += 1;
    }
    let mut z = vec![0u8; MAX_COMMIT as usize];
    let got = pack.read_at(&mut z, offset + at as u64).ok()?;
    z.truncate(got);
    let mut out = Vec::new();
    ZlibDecoder::new(z.as_slice())
        .take(MAX_COMMIT)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Runs real git in `dir` (the tests compare against it; kernelab itself never runs it).
    fn git(dir: &Path, args: &[&str]) -> Option<String> {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Waits past the index's second so that stat data are trusted (not racy).
    fn settle() {
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }

    #[test]
    fn the_commit_and_dirty_state_agree_with_git() {
        let t = tempfile::tempdir().expect("tmp");
        let d = t.path();
        if git(d, &["init", "-q"]).is_none() {
            kernelab_testkit::skip("git", "git is not installed (the comparison needs it)");
            return;
        }
        std::fs::write(d.join("a.txt"), "one\n").expect("write");
        std::fs::create_dir(d.join("sub")).expect("dir");
        std::fs::write(d.join("sub/b.txt"), "two\n").expect("write");
        std::os::unix::fs::symlink("a.txt", d.join("link")).expect("link");
        git(d, &["add", "."]).expect("add");
        git(d, &["commit", "-qm", "first"]).expect("commit");
        settle();
        let head = git(d, &["rev-parse", "HEAD"]).expect("rev-parse");
        let s = state(&d.join("sub")).expect("a repository");
        assert_eq!(s.commit, head);
        assert_eq!(s.dirty, Some(false), "clean after a commit");
        // Racy: a file rewritten within the index's second with the same size is hashed.
        std::fs::write(d.join("a.txt"), "uno\n").expect("write");
        assert_eq!(state(d).expect("repo").dirty, Some(true), "content changed");
        std::fs::write(d.join("a.txt"), "one\n").expect("write");
        assert_eq!(
            state(d).expect("repo").dirty,
            Some(false),
            "content restored"
        );
        std::fs::remove_file(d.join("sub/b.txt")).expect("rm");
        assert_eq!(state(d).expect("repo").dirty, Some(true), "a file deleted");
        git(d, &["checkout", "--", "sub/b.txt"]).expect("restore");
        // Staged: the cached root tree is dropped, which provenance says is unknown.
        std::fs::write(d.join("a.txt"), "changed\n").expect("write");
        git(d, &["add", "a.txt"]).expect("add");
        assert_eq!(
            state(d).expect("repo").dirty,
            None,
            "staged: unknown, not guessed"
        );
        std::fs::write(d.join("a.txt"), "changed again\n").expect("write");
        assert_eq!(
            state(d).expect("repo").dirty,
            Some(true),
            "changed beyond the index"
        );
        // A branch in packed-refs, a commit in a pack (git gc), a detached HEAD.
        git(d, &["commit", "-qam", "second"]).expect("commit");
        git(d, &["gc", "-q"]).expect("gc");
        settle();
        let head = git(d, &["rev-parse", "HEAD"]).expect("rev-parse");
        let s = state(d).expect("repo");
        assert_eq!(s.commit, head);
        assert_eq!(s.dirty, Some(false), "packed commit, clean");
        git(d, &["checkout", "-q", "--detach", "HEAD~1"]).expect("detach");
        settle();
        let s = state(d).expect("repo");
        assert_eq!(s.commit, git(d, &["rev-parse", "HEAD"]).expect("rev-parse"));
        assert_ne!(s.dirty, Some(true), "{s:?}");
        // Untracked files do not count (as `git status --untracked-files=no`).
        std::fs::write(d.join("untracked"), "x").expect("write");
        assert_ne!(state(d).expect("repo").dirty, Some(true));
    }

    #[test]
    fn damaged_indexes_are_refused_never_a_panic() {
        assert!(parse_index(b"").is_none());
        assert!(parse_index(b"DIRC\0\0\0\x02\xff\xff\xff\xff").is_none());
        // A valid empty index (version 2, no entries) with its checksum.
        let mut b = b"DIRC\0\0\0\x02\0\0\0\0".to_vec();
        let sum = Sha1::digest(&b);
        b.extend_from_slice(&sum);
        let idx = parse_index(&b).expect("empty index");
        assert!(idx.entries.is_empty() && idx.root_tree.is_none());
        // Every one-byte change to it is refused by the checksum or the format.
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 0x5a;
            assert!(parse_index(&c).is_none(), "byte {i}");
        }
        // A count larger than the file could hold is refused before allocating.
        let mut big = b"DIRC\0\0\0\x02\xff\xff\xff\xf0".to_vec();
        big.extend_from_slice(&[0u8; 20]);
        assert!(parse_index(&big).is_none());
        assert!(pack_offset(b"\xfftOc\0\0\0\x02", &[0u8; 20]).is_none());
    }
}
