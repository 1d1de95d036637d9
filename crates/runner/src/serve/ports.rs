//! Who listens on a port: the socket inodes of `/proc/net/tcp{,6}` matched against the open
//! files of processes, so that a fixed port answered by a process kernelab did not start (an
//! impostor) is refused rather than measured.

use crate::process::Tracked;

/// Inodes of the sockets listening on `port` (TCP over IPv4 and IPv6).
fn listening_inodes(port: u16) -> Vec<u64> {
    let mut out = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let p = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            if p == Some(port) && *state == "0A" {
                if let Ok(i) = inode.parse::<u64>() {
                    if i != 0 {
                        out.push(i);
                    }
                }
            }
        }
    }
    out
}

/// Whether process `pid` holds one of the socket `inodes` open.
fn holds(pid: u32, inodes: &[u64]) -> bool {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    dir.flatten().any(|e| {
        std::fs::read_link(e.path()).is_ok_and(|t| {
            t.to_str()
                .and_then(|s| s.strip_prefix("socket:["))
                .and_then(|s| s.strip_suffix(']'))
                .and_then(|s| s.parse::<u64>().ok())
                .is_some_and(|i| inodes.contains(&i))
        })
    })
}

/// `Some(who)` when the process listening on `port` is not one of `tracked`'s (the server
/// kernelab started, or a descendant); `None` when it is, or when no listener can be seen
/// (another network namespace).
pub fn impostor(port: u16, tracked: &Tracked) -> Option<String> {
    let inodes = listening_inodes(port);
    if inodes.is_empty() {
        return None;
    }
    if tracked.members().into_iter().any(|p| holds(p, &inodes)) {
        return None;
    }
    let owner = std::fs::read_dir("/proc").ok().and_then(|d| {
        d.flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .find(|&p| holds(p, &inodes))
    });
    Some(match owner {
        Some(p) => format!("{p}"),
        None => "of another user".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_of_this_process_is_found() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let inodes = listening_inodes(port);
        if inodes.is_empty() {
            kernelab_testkit::skip("proc-net-tcp", "/proc/net/tcp shows no listener");
            return;
        }
        assert!(holds(std::process::id(), &inodes));
        // This test process is no tracked server: it is an impostor for `t`.
        let mut cmd = std::process::Command::new("true");
        let t = Tracked::prepare(&mut cmd, false);
        assert_eq!(impostor(port, &t), Some(std::process::id().to_string()));
    }
}
