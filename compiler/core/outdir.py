"""Output directories accord manages (``accord compile --out``, ``accord plan --out``): written
whole and atomically, with a ``manifest.json`` of every file's SHA-256, and recovered after a
killed run. And the single report files commands write (:func:`write_report`).

A new tree is written beside the old one and exchanged with it in one rename; accord never
follows or writes through a symbolic link there, refuses a directory it did not write (its
manifest must list exactly the files present, unchanged), and carries Terraform's own state
files into a recompiled ``terraform/``. Nothing here knows what the files hold.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from accord.compiler.core.errors import InputError, UsageError
from accord.compiler.core.filelock import exclusive
from accord.compiler.core.jsonfile import read_json
from accord.compiler.core.secrets import redact

MANIFEST = "manifest.json"
#: Terraform's own files in ``OUT/terraform`` (``accord terraform`` runs there): carried into
#: a recompiled tree so that recompiling never loses state. A saved plan is not carried: it
#: belongs to the configuration it was made from.
TERRAFORM_KEPT = (
    "terraform.tfstate",
    "terraform.tfstate.backup",
    ".terraform.lock.hcl",
    ".terraform",
)


def manifest(files: dict[str, str]) -> str:
    entries = [
        {"path": path, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}
        for path, text in sorted(files.items())
    ]
    return json.dumps({"version": 1, "files": entries}, indent=2, sort_keys=True) + "\n"


def _refuse_symlinks(target: Path) -> None:
    """accord never follows a symbolic link in a directory it manages: recompiling would
    otherwise copy Terraform state from, or write through it to, wherever it points. Inside
    Terraform's own ``.terraform/`` (where a plugin cache puts links) links are carried over as
    links, never followed, so only ``.terraform`` itself is checked there."""
    for root, dirs, names in os.walk(target, followlinks=False):
        here = Path(root)
        for name in dirs + names:
            path = here / name
            if path.is_symlink():
                raise UsageError(
                    f"{path}: is a symbolic link inside an output directory accord manages; "
                    "accord never writes or copies through one (replace it with the real file "
                    "or directory)"
                )
        if here.name == "terraform":
            dirs[:] = [d for d in dirs if d != ".terraform"]


def _write_file(path: Path, text: str) -> None:
    with open(path, "x", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


#: files ``accord terraform plan`` adds to ``OUT/terraform`` beside what compile wrote
TERRAFORM_EXTRA = ("accord.tfplan", "accord.tfplan.sha256")
#: marks of accord's own temporary siblings of an output directory (``.OUT.accord-...``)
_STAGING, _OLD, _LOCK = "accord-new-", "accord-old-", "accord-lock"


def _manifest_problem(target: Path) -> str:
    """Why ``target`` is not a directory accord wrote, or "": its manifest.json has accord's
    shape, and the files it lists are exactly the files there (besides Terraform's own)."""
    try:
        data, _ = read_json(target / MANIFEST, "manifest", 16 * 1024 * 1024)
    except InputError as err:
        return str(err.diagnostics[0])
    files = data.get("files") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or set(data) != {"version", "files"}
        or data["version"] != 1
        or not isinstance(files, list)
        or not all(
            isinstance(f, dict)
            and set(f) == {"path", "sha256"}
            and all(isinstance(v, str) for v in f.values())
            for f in files
        )
    ):
        return f"{target / MANIFEST} is not a manifest accord wrote"
    listed = {f["path"]: f["sha256"] for f in files}
    present = set()
    for root, dirs, names in os.walk(target):
        here = Path(root)
        rel_root = here.relative_to(target).as_posix()
        if rel_root == "terraform":
            dirs[:] = [d for d in dirs if d not in TERRAFORM_KEPT]
            names = [n for n in names if n not in TERRAFORM_KEPT + TERRAFORM_EXTRA]
        for name in names:
            present.add((here / name).relative_to(target).as_posix())
    present.discard(MANIFEST)
    extra = sorted(present - set(listed))
    if extra:
        return f"{target / extra[0]} is not listed in its {MANIFEST}: accord did not write it"
    for rel, digest in sorted(listed.items()):
        if rel not in present:
            continue  # removed since: nothing of anyone's is lost by replacing it
        text = (target / rel).read_bytes()
        if hashlib.sha256(text).hexdigest() != digest:
            return (
                f"{target / rel} was changed since accord wrote it (its sha256 differs from "
                f"{MANIFEST}); move your edits elsewhere or remove {target} first"
            )
    return ""


def check_out(out: str, policies: str) -> None:
    """Refuse an output directory that replacing would destroy something with: the current
    directory or one above it, the policy directory, a directory inside it (the output would
    be read as policy next time) or one above it."""
    try:
        target = Path(out).resolve()
        cwd = Path.cwd().resolve()
        source = Path(policies).resolve()
    except (OSError, RuntimeError) as err:
        raise UsageError(
            f"--out {out}: cannot resolve it: {getattr(err, 'strerror', err)}"
        ) from None
    if source.is_file():
        source = source.parent
    if target == cwd or target in cwd.parents:
        raise UsageError(
            f"--out {out}: is the current directory or contains it; accord replaces the "
            "output directory as a whole, so give a directory of its own (e.g. build/compiled)"
        )
    if target == source or source in target.parents or target in source.parents:
        raise UsageError(
            f"--out {out}: is, holds or lies inside the policy directory {policies}; give a "
            "directory outside it (e.g. build/compiled)"
        )


def _check_target(target: Path, out: str) -> None:
    try:
        _check_existing(target, out)
    except OSError as err:
        raise UsageError(f"{out}: cannot use it as the output directory: {err.strerror}") from None


def _check_existing(target: Path, out: str) -> None:
    if target.is_symlink():
        raise UsageError(f"{out}: is a symbolic link; give the real directory as --out")
    if not target.exists():
        return
    if not target.is_dir():
        raise UsageError(f"{out}: exists and is not a directory")
    if not any(target.iterdir()):
        return
    if not (target / MANIFEST).is_file():
        raise UsageError(
            f"{out}: exists, is not empty and was not written by accord (no {MANIFEST}); "
            "refusing to replace it"
        )
    # only a directory that claims to be accord's is walked (never someone's whole tree)
    _refuse_symlinks(target)
    problem = _manifest_problem(target)
    if problem:
        raise UsageError(f"{out}: refusing to replace it: {problem}")


def _siblings(target: Path, mark: str) -> list[Path]:
    prefix = f".{target.name}.{mark}"
    try:
        return sorted(p for p in target.parent.iterdir() if p.name.startswith(prefix))
    except OSError:
        return []


def _recover(target: Path) -> None:
    """Clean what an earlier run killed mid-write left beside ``target`` (called holding the
    lock, so nothing else is writing them): a run killed between its two renames left the
    previous output as ``.OUT.accord-old-*`` and no ``OUT``, so that is put back first."""
    olds = _siblings(target, _OLD)
    if olds and not target.exists() and not target.is_symlink():
        olds[-1].rename(target)
        olds = olds[:-1]
    for leftover in olds + _siblings(target, _STAGING):
        shutil.rmtree(leftover, ignore_errors=True)


def recover_all(parent: Path) -> None:
    """:func:`_recover` for every output directory of ``parent`` that a killed run left
    temporary siblings of (the plans directory, whose plans are written one by one). Call it
    only holding a lock that keeps every writer of ``parent`` out."""

    leftover = re.compile(rf"^\.(?P<name>.+)\.(?:{_STAGING}|{_OLD})")
    try:
        names = {m.group("name") for p in parent.iterdir() if (m := leftover.match(p.name))}
    except OSError:
        return
    for name in sorted(names):
        _recover(parent / name)


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into an exception while files are written, so the cleanup of
    the staging directory runs (SIGINT already is one); SIGKILL is recovered by ``_recover``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    caught = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s]
    previous = {s: signal.signal(s, stop) for s in caught}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def write_tree(out: str | os.PathLike[str], files: dict[str, str]) -> list[str]:
    """Write ``files`` plus the manifest under ``out`` atomically: everything is written to a
    temporary sibling directory and moved into place, so a failed run leaves no half tree.

    An existing ``out`` is replaced only if it is empty or accord wrote it: its manifest has
    accord's shape and lists exactly the files there with their checksums. Terraform's state
    and working files in it are kept (``TERRAFORM_KEPT``), and so is the directory's mode. Two
    runs on one ``out`` are serialised by a lock file beside it; what a killed run left is
    recovered or removed by the next; SIGTERM and SIGHUP clean up like an error."""
    target = Path(out)
    _check_target(target, os.fspath(out))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"{out}: cannot create its parent directory: {err.strerror}") from None
    lock = target.parent / f".{target.name}.{_LOCK}"
    try:
        with (
            exclusive(
                lock,
                lambda holder: f"{out}: another accord run ({holder}) is writing it",
                wait=120.0,
            ),
            _signals_interrupt(),
        ):
            _recover(target)
            _check_target(target, os.fspath(out))
            return _replace(target, {**files, MANIFEST: manifest(files)})
    except OSError as err:
        raise UsageError(f"{out}: cannot write: {err.strerror or err}") from None


def _replace(target: Path, all_files: dict[str, str]) -> list[str]:
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.{_STAGING}", dir=target.parent))
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o777 & ~_umask()
        os.chmod(staging, mode)
        for rel, text in all_files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_file(path, text)
        for name in TERRAFORM_KEPT:
            kept = target / "terraform" / name
            if kept.exists():
                (staging / "terraform").mkdir(exist_ok=True)
                if kept.is_dir():
                    shutil.copytree(kept, staging / "terraform" / name, symlinks=True)
                else:
                    shutil.copy2(kept, staging / "terraform" / name, follow_symlinks=False)
        if target.exists():
            if _exchange(staging, target):  # one atomic step: OUT is never missing
                shutil.rmtree(staging, ignore_errors=True)  # now the previous output
                return sorted(all_files)
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.{_OLD}", dir=target.parent))
            old.rmdir()
            target.rename(old)
            staging.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(all_files)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two directories atomically (Linux ``renameat2(RENAME_EXCHANGE)``); False where
    the system or the filesystem cannot, and the caller falls back to two renames."""
    import ctypes  # noqa: PLC0415 - fsync of a directory through libc, on one path only
    import ctypes.util  # noqa: PLC0415 - as above

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return done == 0


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_report(path: str | os.PathLike[str], text: str) -> None:
    """Write one report file (the probe result, the mesh manifest, proposed probes): scrubbed
    of every known secret by the one scrubber (:func:`compiler.core.secrets.redact`, as
    everything accord prints is), then atomically (a temporary sibling renamed into place:
    a gate never reads half of one)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.accord-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(redact(text))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
