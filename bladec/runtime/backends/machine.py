"""This machine's memory, which the device shares where the device is its CPU.

On a GPU the device has memory of its own, and its allocator reports what does not fit.
On a CPU the device's arrays, the host copies of evicted values and the process's own
arrays all land in the same RAM, and a run that outgrows it is killed by the kernel
without a word (the paper-size step at 16x512: at 24.3 GB resident on a 24 GiB machine).
So ``bladec run`` before it draws its inputs (session.py) and the executor before a
run's first step (executor.py) compare what the plan holds at once, device and host
copies together (the device accounting's ``with_host_peak``), with what the kernel says
is available, and refuse with a message instead (:func:`refuse_beyond_available`).
"""
from __future__ import annotations

import os

from bladec.errors import BladecError
from bladec.units import format_size


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


def device_memory(backend: object) -> int | None:
    """The memory of ``backend``'s device where it has its own and reports it (JAX's
    ``memory_stats()['bytes_limit']`` on a GPU); None elsewhere."""
    device = getattr(backend, "_stats_device", None)
    try:
        stats = device.memory_stats() if device is not None else None
    except Exception:   # a backend that reports nothing
        return None
    limit = (stats or {}).get("bytes_limit")
    return int(limit) if limit else None


def refuse_beyond_device(backend: object, peak: int, binding: str) -> None:
    """A BladecError where a plan's device peak exceeds its device's own memory (nothing
    where the device does not report it)."""
    memory = device_memory(backend)
    if memory is not None and peak > memory:
        raise BladecError(
            f"this run needs {format_size(peak)} ({peak} bytes) on the device at its peak "
            f"({binding}), more than the device's {format_size(memory)} ({memory} bytes); "
            f"give a --mem-limit (mem_limit) within it to evict")


def refuse_beyond_available(need: int, holds: int, detail: str) -> None:
    """A BladecError where ``need`` bytes more than this machine has available are needed
    (nothing where the OS gives no figure); ``holds``: the plan's device bytes and host
    copies at once, which ``need`` is made of with what ``detail`` says."""
    available = available_memory()
    if available is not None and need > available:
        raise BladecError(
            f"this run needs {format_size(need)} ({need} bytes) of this machine's memory, "
            f"more than the {format_size(available)} available: on a CPU device the "
            f"device and the host are one memory, and the plan holds {format_size(holds)} "
            f"on the device and in host copies at once, {detail}")
