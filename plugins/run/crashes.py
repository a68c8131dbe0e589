"""A process that dies while running an item: what it was running, how it died, where.

A model backend that runs native code in process (llama.cpp, torch) can kill its process
with a signal (a segfault in a kernel, an out-of-memory kill). Every process that runs
items writes Python's :mod:`faulthandler` report into a file of its own (``fault-<id>.log``
in the run's fault folder), so after a death the run names the item, the signal, the top
frame and, where the report holds native frames (Python 3.14 and later), the native
library. Under xdist the controller reads the dead worker's file
(:meth:`plugins.run.controller.Controller.pytest_handlecrashitem`); without xdist the
supervising process does (:mod:`plugins.run.supervisor`).
"""

from __future__ import annotations

import faulthandler
import re
import signal
from pathlib import Path
from typing import IO, Any

from extractbench.fixtures.worker_channel import ReportField

__all__ = [
    "CRASH_FAULT",
    "CRASH_WORKER",
    "FAULT_DIR_KEY",
    "enable_fault_log",
    "fault_log_path",
    "describe_fault",
    "read_fault",
    "crash_message",
    "crashed_item_entry",
]

FAULT_DIR_KEY = "extractbench_fault_dir"  # workerinput key: the controller's fault folder
# the report of an item -n 0's supervised process died on: the process, and its fault
# (read_fault) as the supervisor read it
CRASH_WORKER = ReportField[str]("extractbench_worker")
CRASH_FAULT = ReportField[dict[str, Any]]("extractbench_fault")

# faulthandler's words for the signals it catches (Python/faulthandler.c)
_FAULTS = {
    "Segmentation fault": "SIGSEGV",
    "Bus error": "SIGBUS",
    "Aborted": "SIGABRT",
    "Floating-point exception": "SIGFPE",
    "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
}
_open: list[IO[str]] = []  # the open fault log of this process (faulthandler keeps its fd)


def fault_log_path(folder: Path, process: str) -> Path:
    """The fault log of ``process`` (``main`` or an xdist worker id such as ``gw0``)."""
    return Path(folder) / f"fault-{process}.log"


def enable_fault_log(folder: Path, process: str) -> Path:
    """Send this process's faulthandler report (all threads) to its fault log.

    Called at session start, after pytest's own faulthandler plugin (which writes to
    stderr) has configured itself; pytest restores its own at unconfigure.
    """
    path = fault_log_path(folder, process)
    handle = path.open("w", encoding="utf-8")
    _open.append(handle)
    faulthandler.enable(file=handle, all_threads=True)
    return path


def _package(path: str) -> str:
    """``.../site-packages/llama_cpp/_internals.py`` -> ``llama_cpp``; else the file name."""
    match = re.search(r"(?:site|dist)-packages/([^/]+)", path)
    return match.group(1) if match else Path(path).name


def describe_fault(text: str, signum: int | None = None) -> dict[str, Any]:
    """What a faulthandler report says: the signal, the top frame, the native library.

    Args:
        text: the report (empty when the process died without one: SIGKILL, for one, is
            not caught, as when the out-of-memory killer ends a process).
        signum: the signal the process died from, when known (its exit status).

    Returns:
        ``{"signal": "SIGSEGV" or None, "frame": "file:line in func" or None,
        "library": str or None}``; ``library`` is the binary of the first native frame
        where the report has one (Python >= 3.14), else the package of the top Python
        frame (the wrapper that called into native code).
    """
    name = signal.Signals(signum).name if signum else None
    match = re.search(r"Fatal Python error: ([^\n]+)", text)
    if match and name is None:
        name = _FAULTS.get(match.group(1).strip())
    frame = library = None
    current = re.search(
        r"Current thread[^\n]*\(most recent call first\):\n(.*?)(?:\n\n|\Z)", text, re.S
    )
    block = current.group(1) if current else text
    frame_re = r'File "([^"]+)", line (\d+) in (\S+)'
    # a fault in a native thread (llama.cpp's OpenMP) has no Python frame of its own:
    # then the first thread that has one (the one that called into native code)
    top = re.search(frame_re, block) or re.search(frame_re, text)
    if top:
        frame = f"{top.group(1)}:{top.group(2)} in {top.group(3)}"
        library = _package(top.group(1))
    native = re.search(r'Binary file "([^"]+)"', text)
    if native:
        library = Path(native.group(1)).name
    return {"signal": name, "frame": frame, "library": library}


def read_fault(folder: Path, process: str, signum: int | None = None) -> dict[str, Any]:
    """:func:`describe_fault` of ``process``'s fault log in ``folder``, plus ``report``:
    the log's first 4,000 characters (the signal and the crashing thread come first)."""
    log = fault_log_path(folder, process)
    text = log.read_text(errors="replace") if log.is_file() else ""
    return {**describe_fault(text, signum), "report": text[:4000]}


def crash_message(worker: str, nodeid: str, fault: dict[str, Any]) -> str:
    """One line: which process died from what while running which item, and where."""
    how = (
        f"died from {fault['signal']}"
        if fault.get("signal")
        else "died (no fault report: killed, e.g. SIGKILL by the out-of-memory killer)"
    )
    where = ""
    if fault.get("frame"):
        where = f"; top frame {fault['frame']}"
        if fault.get("library"):
            where += f" ({fault['library']})"
    process = "the pytest process" if worker == "main" else f"worker {worker}"
    return f"{process} {how} while running {nodeid}{where}"


def crashed_item_entry(item_id: str, nodeid: str, message: str) -> dict[str, Any]:
    """The run-record entry of the item a process died on: failed, no scores."""
    return {
        "id": item_id,
        "suite": item_id.split("/", 1)[0],
        "group": "",
        "prediction": None,
        "scores": {},
        "calls": [],
        "outcome": "failed",
        "test": nodeid,
        "error": message,
    }
