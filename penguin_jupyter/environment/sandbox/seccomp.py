"""The seccomp filter every sandboxed command runs under (docs/security.md "Sandbox").

Owns one classic-BPF program, built here byte for byte (no libseccomp): `socket(AF_UNIX, …)`
and `io_uring_setup` fail with EPERM, and so does every system call made through another
architecture's entry (32-bit `int 0x80`, x32), whose numbers this filter does not know; all else
is allowed. A pathname Unix socket is the one door a read-only bind mount leaves open (connect()
needs no write access to the file: the Docker, D-Bus or systemd sockets would run anything
outside the sandbox), and io_uring can open sockets without the `socket` call. A `socketpair`
stays allowed: it reaches nothing outside. bwrap loads the program (`--seccomp FD`); the
network bridge (`inner.py`) loads it itself after it connected what it needs. Which machines
have a program is `program_for`'s answer: None means the sandbox cannot start there.
"""

from __future__ import annotations

import platform
import struct

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR = 0
_ARCH = 4
_ARG0_LOW = 16  # little-endian: the low 32 bits of args[0]

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1  # SECCOMP_RET_ERRNO | EPERM
_AF_UNIX = 1
_X32_SYSCALL_BIT = 0x40000000


# machine → (AUDIT_ARCH_*, __NR_socket, __NR_io_uring_setup, whether x32 numbers exist)
_ARCHES: dict[str, tuple[int, int, int, bool]] = {
    "x86_64": (0xC000003E, 41, 425, True),
    "aarch64": (0xC00000B7, 198, 425, False),
}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program_for(machine: str | None = None) -> bytes | None:
    """The filter as the raw `struct sock_filter` array bwrap's `--seccomp` reads, or None on a
    machine this module has no system-call numbers for."""
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, nr_socket, nr_io_uring_setup, has_x32 = arch
    deny_foreign = [_op(_LD_W_ABS, _ARCH), _op(_JEQ_K, audit_arch, jt=1), _op(_RET_K, _RET_EPERM)]
    load_nr = [_op(_LD_W_ABS, _NR)]
    x32 = [_op(_JGE_K, _X32_SYSCALL_BIT, jt=5)] if has_x32 else []  # 5 ops on: `deny`
    body = [
        _op(_JEQ_K, nr_io_uring_setup, jt=4),  # → deny
        _op(_JEQ_K, nr_socket, jt=1),  # → check the domain
        _op(_RET_K, _RET_ALLOW),
        _op(_LD_W_ABS, _ARG0_LOW),
        _op(_JEQ_K, _AF_UNIX, jf=1),  # AF_UNIX → deny, else allow
        _op(_RET_K, _RET_EPERM),  # deny
        _op(_RET_K, _RET_ALLOW),
    ]
    return b"".join(deny_foreign + load_nr + x32 + body)
