//! The few system calls std and socket2 do not wrap: `getsockopt(TCP_INFO)`,
//! `clock_gettime(CLOCK_MONOTONIC)`, `getifaddrs`, `memfd_create` and
//! `sendfile` (`-Z`), `SO_MAX_PACING_RATE` (`--fq-rate`) and
//! `sched_{get,set}affinity` (`-A`). All of this crate's `unsafe` lives here.

use std::mem::MaybeUninit;
use std::net::IpAddr;
use std::os::fd::RawFd;

/// What `TCP_INFO` tells a sender, and how recently the peer spoke.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TcpInfo {
    /// Retransmitted segments since the connection started.
    pub total_retrans: u64,
    /// Congestion window in bytes.
    pub snd_cwnd_bytes: u64,
    /// Smoothed RTT, microseconds.
    pub rtt_us: u64,
    /// RTT variance, microseconds.
    pub rttvar_us: u64,
    /// Path MTU.
    pub pmtu: u64,
    /// The peer's advertised receive window, scaled, in bytes (0 on
    /// kernels before `tcpi_snd_wnd`).
    pub snd_wnd: u64,
    /// The kernel's reordering estimate, in segments.
    pub reordering: u64,
    /// Milliseconds since the peer last sent anything on the connection:
    /// data, or an ACK (a keepalive probe's answer included).
    pub last_heard_ms: u64,
}

/// `TCP_INFO` of a connected TCP socket, or `None` when the kernel refuses.
pub(crate) fn tcp_info(fd: RawFd) -> Option<TcpInfo> {
    let mut info = MaybeUninit::<libc::tcp_info>::zeroed();
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` is a zeroed buffer of `len` bytes that outlives the call;
    // the kernel writes at most `len` bytes and updates `len`. An invalid fd
    // only makes the call fail.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: the buffer was zero-initialised, and every bit pattern is a
    // valid `tcp_info` (plain integers); the kernel filled a prefix of it.
    let info = unsafe { info.assume_init() };
    Some(TcpInfo {
        total_retrans: info.tcpi_total_retrans as u64,
        snd_cwnd_bytes: info.tcpi_snd_cwnd as u64 * info.tcpi_snd_mss as u64,
        rtt_us: info.tcpi_rtt as u64,
        rttvar_us: info.tcpi_rttvar as u64,
        pmtu: info.tcpi_pmtu as u64,
        snd_wnd: info.tcpi_snd_wnd as u64,
        reordering: info.tcpi_reordering as u64,
        last_heard_ms: info.tcpi_last_ack_recv.min(info.tcpi_last_data_recv) as u64,
    })
}

/// `CLOCK_MONOTONIC` as (seconds, microseconds), the clock iperf3 stamps
/// UDP datagrams with.
pub(crate) fn monotonic_now() -> (u32, u32) {
    let mut ts = MaybeUninit::<libc::timespec>::zeroed();
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, ts.as_mut_ptr()) };
    // SAFETY: zero-initialised, filled by the kernel; plain integers.
    let ts = unsafe { ts.assume_init() };
    (ts.tv_sec as u32, (ts.tv_nsec / 1000) as u32)
}

/// The name of the interface that holds `addr`, from `getifaddrs`.
pub(crate) fn interface_of(addr: IpAddr) -> Option<String> {
    // A dual-stack listener sees an IPv4 peer as ::ffff:a.b.c.d, while the
    // interface holds a.b.c.d.
    let addr = addr.to_canonical();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `head` receives a list the C library allocates; freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a non-null node of the list getifaddrs returned,
        // which stays valid until freeifaddrs.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: `ifa_addr` is non-null and points to a sockaddr whose
        // family tells which larger struct it is.
        let family = unsafe { (*ifa.ifa_addr).sa_family } as i32;
        let this = match family {
            libc::AF_INET => {
                // SAFETY: family AF_INET means the storage is a sockaddr_in.
                let sin = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) };
                IpAddr::from(u32::from_be(sin.sin_addr.s_addr).to_be_bytes())
            }
            libc::AF_INET6 => {
                // SAFETY: family AF_INET6 means the storage is a sockaddr_in6.
                let sin6 = unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in6) };
                IpAddr::from(sin6.sin6_addr.s6_addr)
            }
            _ => continue,
        };
        if this == addr {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
            break;
        }
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    found
}

/// An anonymous in-memory file holding `bytes`: what `-Z` sends from, as
/// iperf3 sends from a temporary file, without touching a disk.
pub(crate) fn memfd_with(bytes: &[u8]) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    // SAFETY: the name is a NUL-terminated literal; the call only returns a
    // new descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"iomark-zerocopy".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.write_all(bytes)?;
    Ok(f)
}

/// `sendfile(sock, file, &offset, count)`: the bytes of `file` from
/// `offset` go to `sock` without passing through this process.
pub(crate) fn sendfile(
    sock: RawFd,
    file: RawFd,
    offset: u64,
    count: usize,
) -> std::io::Result<usize> {
    let mut off = offset as libc::off_t;
    // SAFETY: `off` is a valid, writable off_t for the call; bad descriptors
    // only make the call fail.
    let n = unsafe { libc::sendfile(sock, file, &mut off, count) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// `SO_MAX_PACING_RATE` in bytes per second (the fq qdisc and TCP's own
/// pacing honour it).
pub(crate) fn set_max_pacing_rate(fd: RawFd, bytes_per_sec: u64) -> std::io::Result<()> {
    let v: u64 = bytes_per_sec;
    // SAFETY: `v` is a u64 that outlives the call, and its size is given;
    // the kernel reads a 32- or 64-bit value from it.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&v as *const u64).cast(),
            std::mem::size_of::<u64>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The CPUs the calling thread may run on.
pub(crate) fn thread_affinity() -> std::io::Result<libc::cpu_set_t> {
    let mut set = MaybeUninit::<libc::cpu_set_t>::zeroed();
    // SAFETY: `set` is a zeroed cpu_set_t of the size given; 0 is this thread.
    let rc = unsafe {
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set.as_mut_ptr())
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: zero-initialised and filled by the kernel; a bit mask.
    Ok(unsafe { set.assume_init() })
}

/// Let the calling thread (and the threads it starts later) run only on
/// the CPUs of `set`.
pub(crate) fn set_thread_affinity(set: &libc::cpu_set_t) -> std::io::Result<()> {
    // SAFETY: `set` is a valid cpu_set_t of the size given; 0 is this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A CPU set of the one CPU `cpu`, or `None` past the set's size.
pub(crate) fn one_cpu(cpu: u32) -> Option<libc::cpu_set_t> {
    if cpu as usize >= libc::CPU_SETSIZE as usize {
        return None;
    }
    // SAFETY: an all-zero cpu_set_t is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below CPU_SETSIZE, checked above.
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    Some(set)
}
