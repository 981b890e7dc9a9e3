//! What Linux tells about a process: CPU time and resident memory.

use std::time::Duration;

/// The kernel reports CPU times in USER_HZ ticks, which is 100 per second on every Linux ABI.
const TICK: Duration = Duration::from_millis(10);

/// A process to observe, by id or as ourselves.
#[derive(Debug, Clone)]
pub(crate) struct Process {
    dir: String,
}

impl Process {
    pub(crate) fn by_pid(pid: u32) -> Self {
        Self { dir: format!("/proc/{pid}") }
    }

    pub(crate) fn current() -> Self {
        Self { dir: "/proc/self".to_owned() }
    }

    /// User plus system CPU time, summed over all threads.
    pub(crate) fn cpu_time(&self) -> std::io::Result<Duration> {
        let stat = std::fs::read_to_string(format!("{}/stat", self.dir))?;
        parse_cpu_ticks(&stat).map(|ticks| TICK * ticks as u32).ok_or_else(|| malformed("stat"))
    }

    /// Resident set size (VmRSS) in KiB.
    pub(crate) fn rss_kib(&self) -> std::io::Result<u64> {
        let status = std::fs::read_to_string(format!("{}/status", self.dir))?;
        parse_vm_rss_kib(&status).ok_or_else(|| malformed("status"))
    }
}

fn malformed(file: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("unexpected /proc/PID/{file} format"))
}

/// utime + stime (fields 14 and 15). The command name (field 2) may hold spaces and parentheses,
/// so counting starts after its closing parenthesis, at field 3.
fn parse_cpu_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(14 - 3);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

fn parse_vm_rss_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_survive_odd_command_names() {
        let stat = "42 (my (odd) name) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 5 1000 10";
        assert_eq!(parse_cpu_ticks(stat), Some(10));
    }

    #[test]
    fn vm_rss_is_read_in_kib() {
        let status = "Name:\tx\nVmPeak:\t 9000 kB\nVmRSS:\t    1234 kB\nThreads:\t2\n";
        assert_eq!(parse_vm_rss_kib(status), Some(1234));
    }

    #[test]
    fn our_own_process_is_readable() {
        let me = Process::current();
        assert!(me.rss_kib().unwrap() > 0);
        me.cpu_time().unwrap();
    }
}
