"""The cache store: content-addressed entries on disk, knowing nothing of what they hold.

Every entry is keyed by the SHA-256 of what it was computed from, so a hit gives exactly what
computing afresh would; the cache is an optimisation only. Payloads are written by the modules
that define them: :mod:`compiler.model.parsecache` (``parse/``, ``pos/``, ``sem/``: parsed
policy files) and incremental lint (:mod:`compiler.lint.incremental`): ``cache`` (``lint/``:
lint results; ``lintgrants/``: a project's mapping tables, for the SQL checks), ``deps``
(``lintdeps/``: the dependency index), ``verdict`` (``lintvalid/``: the last successful
validation's skeleton) and ``pieces`` (``lintpieces/``: what each file gives the input digests).

The *code fingerprint* hashes accord's version and the source of every module of the
``compiler`` and ``targets`` packages: the model's schema, the loader and every rule are
defined there, so any change of accord invalidates every entry.

**Where it lives, and why it cannot change a result.** A cache in the working tree would be
input a pull request can commit, so by default the cache lives outside the checkout, in the
user's cache directory (``$XDG_CACHE_HOME/accord``, else ``~/.cache/accord``), under
``checkouts/<digest of the working directory's real path>``; ``$ACCORD_CACHE_DIR`` names
another directory. On CI (``CI`` set to anything but ``false``/``0``) the cache is off unless
``$ACCORD_CACHE_DIR`` asks for it. Every entry is authenticated with HMAC-SHA256 under a key
that lives only on the machine that wrote it (``<user cache>/accord/key``: 32 random bytes,
created on first use with mode 0600, never inside the cache directory, refused when a link, not
a regular file, not the user's or readable by others): an entry written anywhere else,
committed, copied or edited, fails verification and is recomputed, never trusted. Nothing in
the cache directory is followed through a symbolic link: the directory itself, a kind or shard
directory, or an entry that is a link makes the cache unused for that read or write (an entry
is opened with ``O_NOFOLLOW``), and every read is bounded (:data:`MAX_ENTRY_BYTES`).

The directory is safe to delete at any time; ``ACCORD_NO_CACHE=1`` (or ``accord lint
--no-cache``) turns the cache off; git ignores it (it holds a ``.gitignore`` of ``*``). Entries
are written only by a run that read all of its input (:func:`flush`; a run that exits 2 writes
nothing), each atomically (a temporary file renamed into place). An entry is read as a digest
line and a payload; an entry whose digest does not match its payload, or that does not
decode, is ignored and recomputed. Payloads are ``marshal`` (plain values only) or JSON, never
pickle: reading an entry cannot run code.

**Pruning.** Entries are used least-recently-first: a hit refreshes an entry's mtime, and a
run that wrote entries then removes the oldest ones (never one this run used) until the
cache holds at most 80% of ``$ACCORD_CACHE_MAX_MB`` (default 256 MiB). Temporary files a
killed run left behind are removed after an hour.

**Only what accord wrote.** ``$ACCORD_CACHE_DIR`` may name a folder others use (``~/.cache``).
A cache directory is accord's when accord created it (it holds accord's ``.gitignore``,
:data:`MARKER`), or when it was empty (the marker is written then); any other directory is
not used at all (nothing read, written or deleted there: :func:`refused` says why, and
``accord lint`` prints it). Pruning removes only entries in accord's format: a file of a kind
folder of :data:`KINDS`, in the shard folder of its name's first two characters, named by a
SHA-256 digest, beginning with its digest line (or a temporary file of accord's); anything
else in the directory is left alone.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import marshal
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

try:
    import resource
except ImportError:  # pragma: no cover - Windows: no address-space bound (see loads)
    resource = None  # type: ignore[assignment]

FORMAT = b"accord-cache-4"
#: the kinds of entry (the folders of the cache directory), each written by one module (see
#: above); an entry is only ever written under one of them, and pruning looks nowhere else
KINDS = frozenset(
    {"parse", "pos", "sem", "lint", "lintgrants", "lintdeps", "lintvalid", "lintpieces"}
)
#: the ``.gitignore`` accord writes at the root of a cache directory it creates: the mark of
#: a directory accord owns
MARKER = b"# written by accord\n*\n"
#: cache directory -> whether it is accord's (see :func:`_owned`), for this run
_owners: dict[str, bool] = {}
#: why the cache directory is not used, when it is not accord's (see :func:`refused`)
_refused: str | None = None
_enabled: bool | None = None
#: entries computed by this run, written by :func:`flush` only once the command has read its
#: whole input without error (a run that exits 2 writes nothing, the cache included)
_pending: list[tuple[str, str, bytes]] = []
#: the entries this run read or wrote: pruning never removes them
_used: set[Path] = set()
#: what :func:`enable` resets besides this module's own state (see :func:`on_enable`)
_resets: list[Callable[[], None]] = []
#: the default bound on the cache's size (``$ACCORD_CACHE_MAX_MB``)
DEFAULT_MAX_MB = 256.0
#: pruning keeps at most this share of the bound, so that it does not run on every write
_KEEP = 0.8
#: a temporary file older than this was left by a run that was killed
_STALE_TMP_SECONDS = 3600.0
#: no entry accord writes is larger; a larger file is not read (an entry that is a device or a
#: runaway file can never be read into memory)
MAX_ENTRY_BYTES = 64 * 1024 * 1024
#: the length of the machine's cache key
_KEY_BYTES = 32
#: the key of this process, once read (False: there is none to be had, the cache is unused)
_key: bytes | bool | None = None


def user_cache() -> Path:
    """accord's folder in the user's cache directory: ``$XDG_CACHE_HOME/accord``, else
    ``~/.cache/accord``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "accord"


def directory() -> Path:
    """``$ACCORD_CACHE_DIR``, else this working directory's folder in :func:`user_cache`."""
    named = os.environ.get("ACCORD_CACHE_DIR")
    if named:
        return Path(named)
    here = os.path.realpath(os.getcwd())
    digest = hashlib.sha256(here.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return user_cache() / "checkouts" / digest


def on_ci() -> bool:
    """Whether this runs on CI (``$CI`` set, and not ``false`` or ``0``)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "false", "0")


def enabled() -> bool:
    """Whether this process uses the cache: a command turned it on, ``ACCORD_NO_CACHE`` is not
    set, and, on CI, ``$ACCORD_CACHE_DIR`` asks for it."""
    if not _enabled or os.environ.get("ACCORD_NO_CACHE"):
        return False
    return not on_ci() or bool(os.environ.get("ACCORD_CACHE_DIR"))


def on_enable(reset: Callable[[], None]) -> None:
    """Call ``reset`` whenever :func:`enable` starts a run afresh (a payload's module keeps
    per-run state of its own, such as the files it has parsed)."""
    _resets.append(reset)


def enable(on: bool = True) -> None:
    global _enabled, _key, _refused
    _enabled = on
    _key = None
    _refused = None
    _owners.clear()
    _pending.clear()
    _used.clear()
    for reset in _resets:
        reset()


def later(kind: str, key: str, payload: bytes) -> None:
    """Store ``payload`` when the run succeeds (:func:`flush`)."""
    _pending.append((kind, key, payload))


def flush() -> None:
    """Write the entries this run computed (see ``_pending``), then prune when it wrote any."""
    wrote = bool(_pending)
    while _pending:
        write(*_pending.pop(0))
    if wrote:
        prune()


def installed_version() -> str:
    """``importlib.metadata.version("accord")`` without importing ``importlib.metadata``
    (which imports ``email``, ``zipfile``, ``csv``: a third of a warm lint's start): the
    ``Version`` of the first ``accord`` metadata folder on ``sys.path`` (``*.dist-info`` with
    its ``METADATA``, ``*.egg-info`` with its ``PKG-INFO``), where ``importlib.metadata``
    looks first. Anything else (a zip on the path, two candidates in one folder, no such
    header) asks ``importlib.metadata``."""

    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        found = []
        for name in names:
            low = name.lower()
            for suffix, meta in ((".dist-info", "METADATA"), (".egg-info", "PKG-INFO")):
                if low.endswith(suffix) and low[: -len(suffix)].partition("-")[0] == "accord":
                    found.append(os.path.join(folder, name, meta))
        if len(found) > 1:
            break
        if found:
            try:
                with open(found[0], encoding="utf-8") as meta_file:
                    for line in meta_file:
                        if not line.strip():
                            break
                        if line.startswith("Version:"):
                            return line[len("Version:") :].strip()
            except OSError:
                pass
            break
    from importlib.metadata import version  # noqa: PLC0415 - the installed version, read once for a cache key

    return version("accord")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """accord's version and the SHA-256 of every module of accord's packages."""
    h = hashlib.sha256(FORMAT)
    try:
        h.update(installed_version().encode())
    except Exception:  # pragma: no cover - not installed: the sources below still count
        h.update(b"unversioned")
    here = Path(__file__).resolve().parent.parent  # compiler/
    for package in (here, here.parent / "targets"):
        for path in sorted(package.rglob("*.py")):
            h.update(path.relative_to(package.parent).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def _path(kind: str, key: str) -> Path:
    return directory() / kind / key[:2] / key


def _machine_key() -> bytes | None:
    """This machine's cache key (created on first use), or None when none can be trusted: the
    key file is a link, not a regular file, not the user's, readable by others, or not 32
    bytes; or it cannot be made. Then nothing is read from the cache or written to it."""
    global _key
    if _key is None:
        _key = _read_key() or False
    return _key or None


def _read_key() -> bytes | None:
    folder = user_cache()
    path = folder / "key"
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return _make_key(folder, path)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_size != _KEY_BYTES
            or info.st_mode & 0o077
            or (hasattr(os, "getuid") and info.st_uid != os.getuid())
        ):
            return None
        key = os.read(fd, _KEY_BYTES + 1)
        return key if len(key) == _KEY_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _make_key(folder: Path, path: Path) -> bytes | None:
    """A new key, written with mode 0600 where none exists (a run that loses the race to
    create it reads the winner's)."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if folder.is_symlink():
            return None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return _read_key()
    except OSError:
        return None
    key = os.urandom(_KEY_BYTES)
    try:
        os.write(fd, key)
    except OSError:
        return None
    finally:
        os.close(fd)
    return key


def refused() -> str | None:
    """Why this run did not use the cache directory (it is not accord's), or None."""
    return _refused


def _owned(root: Path) -> bool:
    """Whether ``root`` is accord's cache directory: it does not exist yet (accord creates it
    with its marker), it holds :data:`MARKER`, or it is empty (the marker is written now).
    A directory that holds anything else is someone else's: it is not used, and
    :func:`refused` says so."""
    global _refused
    known = _owners.get(str(root))
    if known is not None:
        return known
    try:
        with os.scandir(root) as listing:
            empty = next(iter(listing), None) is None
    except FileNotFoundError:
        return True  # created, marker first, by the first write
    except OSError:
        return False
    owned = _marked(root) or (empty and _mark(root) and _marked(root))
    if not owned:
        _refused = (
            f"{root} holds files accord did not write: the cache is not used (name a new or "
            "empty directory in ACCORD_CACHE_DIR)"
        )
    _owners[str(root)] = owned
    return owned


def _marked(root: Path) -> bool:
    """Whether ``root`` holds accord's marker (a regular file, not a link, exactly it)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(root / ".gitignore", flags)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and os.read(fd, 64) == MARKER
    except OSError:
        return False
    finally:
        os.close(fd)


def _mark(root: Path) -> bool:
    """Write accord's marker in ``root`` (git then ignores the whole cache, without the
    user's .gitignore, as ruff's cache does); whether it is there now."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(root / ".gitignore", flags, 0o644)
    except FileExistsError:
        return True  # another run's, or not: _marked tells
    except OSError:
        return False
    with os.fdopen(fd, "wb") as out:
        out.write(MARKER)
    return True


def _entry_name(kind: str, shard: str, name: str) -> bool:
    """Whether ``kind/shard/name`` is named as an entry accord writes (or its temporary
    file)."""
    if kind not in KINDS or len(shard) != 2 or not _is_hex(shard):
        return False
    if name.startswith(".tmp-"):
        return True
    return len(name) == 64 and name.startswith(shard) and _is_hex(name)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _entry_format(path: str) -> bool:
    """Whether the file at ``path`` begins as an entry does: a SHA-256 digest line."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        head = os.read(fd, 65)
    except OSError:
        return False
    finally:
        os.close(fd)
    return len(head) == 65 and head[64:] == b"\n" and _is_hex(head[:64].decode("latin-1"))


def _digest(secret: bytes, kind: str, key: str, payload: bytes) -> bytes:
    mac = hmac.new(secret, FORMAT + b"\0" + kind.encode() + b"\0" + key.encode() + b"\0", "sha256")
    mac.update(payload)
    return mac.hexdigest().encode()


def _folders(root: Path, path: Path) -> list[Path]:
    """``root`` and the folders above ``path`` that lie below it (``[root, *(p for p in
    path.parents if root in p.parents)]``, from the paths' parts)."""
    parts, depth = path.parts, len(root.parts)
    out = [root]
    if len(parts) > depth + 1 and type(path)(*parts[:depth]) == root:
        out += [type(path)(*parts[:i]) for i in range(len(parts) - 1, depth, -1)]
    return out


def _real_dirs(path: Path) -> bool:
    """Whether the cache directory and the folders between it and ``path`` are real
    directories (none is a link), as far as they exist."""
    for folder in _folders(directory(), path):
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            continue
        except OSError:
            return False
        if not stat.S_ISDIR(info.st_mode):
            return False
    return True


def read(kind: str, key: str) -> bytes | None:
    """The payload stored under ``key``, or None when absent, corrupt, not authenticated by
    this machine's key, larger than :data:`MAX_ENTRY_BYTES`, or reached through a link. A hit
    refreshes the entry's mtime (pruning removes the least recently used entries first)."""
    secret = _machine_key()
    path = _path(kind, key)
    if secret is None or not _real_dirs(path) or not _owned(directory()):
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
            return None
        chunks, left = [], info.st_size + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        blob = b"".join(chunks)
        if len(blob) > info.st_size:
            return None  # grew while being read
        with contextlib.suppress(OSError):
            os.utime(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    digest, sep, payload = blob.partition(b"\n")
    if not sep or not hmac.compare_digest(digest, _digest(secret, kind, key, payload)):
        return None
    _used.add(path)
    return payload


def write(kind: str, key: str, payload: bytes) -> None:
    """Store ``payload`` atomically; a cache that cannot be written, or whose directories are
    links, is simply not used."""
    if kind not in KINDS:
        raise ValueError(f"{kind!r} is not a kind of cache entry (store.KINDS)")
    secret = _machine_key()
    path = _path(kind, key)
    if secret is None or len(payload) > MAX_ENTRY_BYTES - 128:
        return
    digest = _digest(secret, kind, key, payload)
    try:
        root = directory()
        if not _real_dirs(path) or not _owned(root):
            return
        if not root.is_dir():
            root.mkdir(parents=True, mode=0o700)
            if not _mark(root):
                return
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _real_dirs(path):  # a link put in place since
            return
        import tempfile  # noqa: PLC0415 - a run that writes nothing (ACCORD_NO_CACHE=1) never needs it

        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(digest + b"\n" + payload)
            os.replace(tmp, path)
            _used.add(path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return


#: what decoding an entry that is not one accord wrote raises (cut short, of another shape,
#: nested past the decoder's depth, claiming more than memory holds): each is a miss, never a
#: crash. An entry passes the machine key's check before it is decoded, so only an entry made
#: with this machine's key gets here; such an entry is still only a cache entry.
UNREADABLE = (
    ValueError,
    EOFError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    RecursionError,
    MemoryError,
)
#: the address space a decode may take beyond what the process holds: this, and 16 bytes per
#: byte of the payload (what decoding one of accord's payloads takes is a few times its size)
_DECODE_MARGIN = 256 * 1024 * 1024


def loads(payload: bytes) -> Any:
    """``marshal.loads(payload)``, raising one of :data:`UNREADABLE` for a payload that does
    not decode. marshal makes a list's (and a tuple's) slots from the count the payload claims
    before it reads a single item: a payload of five bytes claiming two billion items takes
    sixteen gigabytes of address space and seconds to fail, and nested, hours. While it
    decodes, the process's address space is bounded (``RLIMIT_AS``: what it holds now, plus
    :data:`_DECODE_MARGIN` and 16 bytes per byte of the payload), so such a payload fails at
    once with MemoryError. Where the bound cannot be read or set (no ``/proc``, no
    ``resource`` module), the payload is decoded unbounded."""
    with _address_space(_DECODE_MARGIN + 16 * len(payload)):
        return marshal.loads(payload)


@contextlib.contextmanager
def _address_space(margin: int) -> Iterator[None]:
    """The process's address space bounded to what it holds now plus ``margin`` (never
    raised above a lower bound already set), restored on leaving."""
    restore = None
    if resource is not None:
        try:
            with open("/proc/self/statm", "rb") as statm:
                held = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            bound = held + margin
            if (soft == resource.RLIM_INFINITY or bound < soft) and (
                hard == resource.RLIM_INFINITY or bound <= hard
            ):
                resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
                restore = (soft, hard)
        except (OSError, ValueError, IndexError):
            restore = None
    try:
        yield
    finally:
        if restore is not None:
            resource.setrlimit(resource.RLIMIT_AS, restore)


def max_bytes() -> int:
    """The bound on the cache's size: ``$ACCORD_CACHE_MAX_MB`` mebibytes (default 256; a
    value that is not a positive number means the default)."""
    try:
        mb = float(os.environ.get("ACCORD_CACHE_MAX_MB") or DEFAULT_MAX_MB)
    except ValueError:
        mb = DEFAULT_MAX_MB
    if not mb > 0 or mb == float("inf"):
        mb = DEFAULT_MAX_MB
    return int(mb * 1024 * 1024)


def prune(limit: int | None = None) -> None:
    """Remove the least recently used entries until the cache holds at most 80% of
    ``limit`` (default :func:`max_bytes`), and temporary files a killed run left behind.
    Entries this run read or wrote are kept, even past the bound."""
    limit = max_bytes() if limit is None else limit
    root = directory()
    if root.is_symlink() or not _real_dirs(root / "x") or not _owned(root):
        return  # never list, let alone delete, through a link or in another's directory
    now = time.time()
    used = {str(p) for p in _used}
    found: list[tuple[float, int, str]] = []
    total = 0
    for name, path, info in _entries(str(root)):
        shard = os.path.dirname(path)
        if not _entry_name(os.path.basename(os.path.dirname(shard)), os.path.basename(shard), name):
            continue  # not named as accord names its entries: not accord's to delete
        if name.startswith(".tmp-"):
            if now - info.st_mtime > _STALE_TMP_SECONDS:
                with contextlib.suppress(OSError):
                    os.unlink(path)
            continue
        total += info.st_size
        if path not in used:
            found.append((info.st_mtime, info.st_size, path))
    if total <= limit:
        return
    keep = int(limit * _KEEP)
    for _, size, path in sorted(found, key=lambda f: (f[0], f[2])):
        if total <= keep:
            break
        if not _entry_format(path):
            continue  # named as an entry, but not one
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size


def _entries(root: str) -> Iterator[tuple[str, str, os.stat_result]]:
    """(name, path, ``lstat``) of every file of the cache (``kind/xx/key``), in directory
    order; links are never followed (a link is neither a directory nor a file here), and a
    directory or file that cannot be read is passed over."""
    for kind in _scan(root, dirs=True):
        for shard in _scan(kind.path, dirs=True):
            for entry in _scan(shard.path, dirs=False):
                with contextlib.suppress(OSError):
                    yield entry.name, entry.path, entry.stat(follow_symlinks=False)


def _scan(path: str, dirs: bool) -> list[os.DirEntry[str]]:
    """The directories (``dirs``) or regular files of ``path``, links left out."""
    try:
        with os.scandir(path) as entries:
            if dirs:
                return [e for e in entries if e.is_dir(follow_symlinks=False)]
            return [e for e in entries if e.is_file(follow_symlinks=False)]
    except OSError:
        return []
