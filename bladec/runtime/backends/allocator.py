"""glibc's allocator, tuned for a process whose memory is the device's (XLA:CPU).

Where host and device are one memory, what the OS counts is what a limit promises
(DESIGN.md section 4), and glibc's defaults decide much of it: page faults on every
large buffer, and free memory kept after compiling. Both calls here are process-wide
and answer False where there is no glibc.
"""
from __future__ import annotations

_MALLOC: list[bool] = []


def keep_freed_memory_in_process() -> bool:
    """glibc: serve big buffers from the heap and keep freed memory in the process.

    By default glibc maps each allocation over its mmap threshold (adaptive, at most
    32 MiB) afresh and unmaps it on free, and trims the heap's top, so a buffer as big
    as a segment's output pays one page fault per 4 KiB on first touch, on every run
    (about 1 ms per MiB on a VM). With the threshold raised and trimming off, freed
    buffers are reused. Process-wide and once; False where there is no glibc. Opt out
    with ``JaxBackend(keep_freed_memory=False)`` or ``BLADEC_KEEP_FREED_MEMORY=0``.
    """
    if not _MALLOC:
        ok = False
        try:
            import ctypes
            libc = ctypes.CDLL("libc.so.6")
            m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
            ok = bool(libc.mallopt(m_mmap_threshold, 1 << 30)
                      and libc.mallopt(m_trim_threshold, (1 << 31) - 1)
                      and libc.mallopt(m_top_pad, 64 << 20))
        except (OSError, AttributeError):
            ok = False
        _MALLOC.append(ok)
    return _MALLOC[0]


def release_freed_memory() -> bool:
    """glibc's ``malloc_trim(0)``: give the heap's free pages back to the OS; False where
    there is no glibc (or no such call).

    Compiling leaves the heap fragmented: on CPU, where the process's memory is the
    device's (one memory), what the allocator keeps free after a call's compilations
    is most of a limited run's growth (docs/measurements/cpu-memory.md), so the
    executor calls this after a call that compiled (JaxBackend.release_after_compiling).
    A step that compiled nothing never pays it."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.malloc_trim(0)) or True
    except (OSError, AttributeError):
        return False
