"""What accord does when its standard output goes away: a reader that closed the pipe
(``accord lint | head``) or a full disk (``> /dev/full``). Neither is a crash: the command
stops quietly with the conventional exit code (141, as a process ended by SIGPIPE, for a
closed pipe; 2 with one line on stderr when the output cannot be written), and Python's own
flush at exit prints nothing more."""

from __future__ import annotations

import contextlib
import errno
import os
import sys

#: a closed pipe: what a shell reports for a process ended by SIGPIPE (128 + 13)
BROKEN_PIPE = 141


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def output_failure(err: OSError) -> int | None:
    """The exit code for an error writing the output, or None when ``err`` is something else."""
    if isinstance(err, BrokenPipeError) or err.errno == errno.EPIPE:
        silence_stdout()
        return BROKEN_PIPE
    if err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
        silence_stdout()
        try:
            sys.stderr.write(f"accord: cannot write the output: {os.strerror(err.errno)}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        return 2
    return None


def flush_stdout() -> int | None:
    """Flush stdout now, while a failure can still be turned into an exit code."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as err:
        return output_failure(err)
    except ValueError:  # stdout was closed
        return None
    return None


def pipe_closed_in_click() -> bool:
    """Click handles a closed pipe itself (it exits 1, which accord reserves for findings):
    it leaves stdout wrapped so that nothing more is flushed, and that is how it is known."""
    from click.utils import _PacifyFlushWrapper  # noqa: PLC0415 - click, only once a stream broke

    if isinstance(sys.stdout, _PacifyFlushWrapper):
        silence_stdout()
        return True
    return False


def closed_standard_streams() -> int | None:
    """Exit code 2, with one line on stderr, when accord was started with its standard output
    closed (``accord lint >&-``: Python then has no ``sys.stdout``); None when it is open. A
    closed stderr or stdin is pointed at /dev/null, so that nothing later trips on it."""
    for name, mode in (("stdin", "r"), ("stderr", "w")):
        if getattr(sys, name) is None:
            with contextlib.suppress(OSError):
                setattr(sys, name, open(os.devnull, mode, encoding="utf-8"))  # noqa: SIM115
    if sys.stdout is not None:
        return None
    try:
        sys.stderr.write("accord: standard output is closed: nothing can be written\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    return 2
