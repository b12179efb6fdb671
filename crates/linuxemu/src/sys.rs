//! The few system calls the emulator and its sender/receiver need: the
//! monotonic clock, absolute sleeps, real-time priority, entering a network
//! namespace, TUN devices and TCP_INFO.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// CLOCK_MONOTONIC in nanoseconds (one clock for every namespace).
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Sleep until CLOCK_MONOTONIC reaches `ns`.
pub fn sleep_until(ns: u64) {
    let ts = timespec(ns);
    loop {
        let r = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if r != libc::EINTR {
            break;
        }
    }
}

/// Run this thread at SCHED_FIFO `prio` and lock memory (no page faults on
/// the packet path). Returns an error message if not permitted.
pub fn realtime(prio: i32) -> Result<(), String> {
    if prio <= 0 {
        return Ok(());
    }
    let p = libc::sched_param {
        sched_priority: prio,
    };
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        return Err(format!("SCHED_FIFO: {}", io::Error::last_os_error()));
    }
    unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
    Ok(())
}

fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in paths")
}

fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

/// Enter network namespace `name` (as `ip netns` names it); returns an fd of
/// the namespace we were in, for [`setns_fd`].
pub fn enter_netns(name: &str) -> io::Result<RawFd> {
    let own = check(
        unsafe { libc::open(cstr("/proc/self/ns/net").as_ptr(), libc::O_RDONLY) },
        "open /proc/self/ns/net",
    )?;
    let path = format!("/run/netns/{name}");
    let fd = check(
        unsafe { libc::open(cstr(&path).as_ptr(), libc::O_RDONLY) },
        &format!("open {path}"),
    )?;
    let r = unsafe { libc::setns(fd, libc::CLONE_NEWNET) };
    unsafe { libc::close(fd) };
    check(r, &format!("setns {name}"))?;
    Ok(own)
}

pub fn setns_fd(fd: RawFd) -> io::Result<()> {
    let r = unsafe { libc::setns(fd, libc::CLONE_NEWNET) };
    unsafe { libc::close(fd) };
    check(r, "setns back").map(|_| ())
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    pad: [u8; 22],
}

/// Create TUN device `dev` inside namespace `ns` and return its fd
/// (non-blocking, raw IP packets without packet information header).
pub fn tun_in_netns(ns: &str, dev: &str) -> io::Result<RawFd> {
    let back = enter_netns(ns)?;
    let res = (|| {
        let fd = check(
            unsafe {
                libc::open(
                    cstr("/dev/net/tun").as_ptr(),
                    libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
                )
            },
            "open /dev/net/tun",
        )?;
        let mut ifr = IfReq {
            name: [0; 16],
            flags: IFF_TUN | IFF_NO_PI,
            pad: [0; 22],
        };
        let n = dev.len().min(15);
        ifr.name[..n].copy_from_slice(&dev.as_bytes()[..n]);
        check(
            unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut ifr) },
            &format!("TUNSETIFF {dev} in {ns}"),
        )?;
        Ok(fd)
    })();
    setns_fd(back)?;
    res
}

/// `struct tcp_info` as Linux 5.x+ defines it (include/uapi/linux/tcp.h);
/// the kernel copies min(its size, ours).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub delivery_flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
}

pub fn tcp_info(fd: RawFd) -> Option<TcpInfo> {
    let mut ti = TcpInfo::default();
    let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            &mut ti as *mut _ as *mut libc::c_void,
            &mut len,
        )
    };
    (r == 0).then_some(ti)
}

pub fn set_congestion(fd: RawFd, cc: &str) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr() as *const libc::c_void,
            cc.len() as libc::socklen_t,
        )
    };
    check(r, &format!("TCP_CONGESTION {cc}")).map(|_| ())
}

pub fn set_int(fd: RawFd, level: libc::c_int, opt: libc::c_int, v: libc::c_int) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            &v as *const _ as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    check(r, "setsockopt").map(|_| ())
}

/// Environment variable through which the process that starts tcplab-emu
/// names itself (its pid), so that a tcplab-emu whose parent is already gone
/// by the time it asks to die with it exits at once.
pub const PARENT_PID_ENV: &str = "TCPLAB_PARENT_PID";

/// Die (SIGKILL) when the process that started us dies, however it dies
/// (SIGKILL included): a real-time emulator or sender must never outlive the
/// run that needs it. `ip netns exec` execs us, so that parent is tcplab's
/// Python process.
pub fn die_with_parent() {
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) };
    let expected = std::env::var(PARENT_PID_ENV)
        .ok()
        .and_then(|s| s.parse::<libc::pid_t>().ok());
    // the parent died before the prctl: we were re-parented already
    if expected.is_some_and(|p| p != unsafe { libc::getppid() }) {
        eprintln!("tcplab-emu: the process that started it is gone");
        std::process::exit(1);
    }
}
