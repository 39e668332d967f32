"""This machine's memory, which the device shares where the device is its CPU.

On a GPU the device has memory of its own, and its allocator reports what does not fit.
On a CPU the device's arrays, the host copies of evicted values and the process's own
arrays all land in the same RAM, and a run that outgrows it is killed by the kernel
without a word (the paper-size step at 16x512: at 24.3 GB resident on a 24 GiB machine).
So ``bladec run`` (session.py) and the engine's first call at each shape (engine.py)
compare what the plan holds at once, device and host copies together (the device
accounting's ``with_host_peak``), with what the kernel says is available, and refuse
with a message instead.
"""
from __future__ import annotations

import os


def available_memory() -> int | None:
    """The memory the kernel says a new allocation can have without swapping
    (MemAvailable in /proc/meminfo; None where there is none)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def physical_memory() -> int | None:
    """This machine's physical memory in bytes, where the OS says (None elsewhere)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def device_is_cpu() -> bool:
    """Whether JAX's first device is this machine's CPU (one memory with the host)."""
    import jax
    return jax.devices()[0].platform == "cpu"
