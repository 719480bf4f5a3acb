"""Salt placeholders: compiled SQL names a salt's reference, never its value.

``compile`` writes ``{{ accord_salt('env:NAME') }}`` where the salt belongs. Only when SQL is
applied does :func:`materialize` replace each placeholder with the secret, read from the
environment or a file and escaped as a SQL string literal by sqlglot. Unfilled, the placeholder
is a syntax error on both platforms, so a salt function can never be created with a salt that
anyone could read in the repository.

A salt reference reaches SQL (inside the placeholder, and in a comment beside it), so its
grammar is strict and checked both when the model is loaded and when a placeholder is written
or read: ``env:`` and an environment-variable name, or ``file:`` and a path of plain segments
(letters, digits, ``_ . @ + -``; no ``..``). No quote, brace, semicolon, blank or line break
can pass it. A ``file:`` salt is read only when SQL is applied, from a regular file inside the
salt root (``ACCORD_SALT_ROOT``, else the working directory): never a device, a FIFO or a file
that a symlink leads out of the root to.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from accord.compiler.core import secrets

_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,254}"
_SEGMENT = r"[A-Za-z0-9_.@+-]+"
_PATH = rf"/?{_SEGMENT}(?:/{_SEGMENT})*"
#: a salt reference, exactly: what the model accepts and what a placeholder may hold
REF = re.compile(rf"(?:env:{_ENV_NAME}|file:{_PATH})")
_REF_FULL = re.compile(rf"^{REF.pattern}$")
MAX_REF = 1024
#: the most a salt file may hold; a salt is a short secret, not a document
MAX_SALT_BYTES = 4096

PLACEHOLDER = re.compile(r"\{\{ accord_salt\('(?P<ref>" + REF.pattern + r")'\) \}\}")
#: anything that looks like a placeholder, well-formed or not (a hand-edited file)
_ANY_PLACEHOLDER = re.compile(r"\{\{\s*accord_salt\b")


class SaltError(Exception):
    pass


def salt_ref_problem(ref: str) -> str:
    """Why ``ref`` is not a salt reference, or "" when it is one. The value is never quoted:
    what is not a reference may be the salt itself, and the message goes to CI logs (the key
    it is written under is in the message's location)."""
    if len(ref) > MAX_REF:
        return f"a salt reference is at most {MAX_REF} characters"
    if not _REF_FULL.match(ref):
        return (
            "the value is not a salt reference: write env:NAME (an environment variable: "
            "letters, digits, _) or file:PATH (letters, digits and _ . @ + - between slashes), "
            "never the salt itself; if the value is a salt, it is in the repository's history "
            "now: rotate it"
        )
    if ref.startswith("file:") and ".." in ref[5:].split("/"):
        return "a file: salt reference may not leave its root with '..'"
    return ""


def placeholder(ref: str) -> str:
    """The placeholder for ``ref``; refuses anything outside the reference grammar, so that a
    reference can never close the placeholder, the literal or the statement it sits in."""
    problem = salt_ref_problem(ref)
    if problem:
        raise SaltError(problem)
    return "{{ accord_salt('" + ref + "') }}"


def references(text: str) -> list[str]:
    return sorted({m.group("ref") for m in PLACEHOLDER.finditer(text)})


def salt_root() -> Path:
    return Path(os.environ.get("ACCORD_SALT_ROOT") or os.getcwd())


def resolve(ref: str, base: Path | None = None) -> str:
    """Read a salt: ``env:NAME`` from the environment, ``file:PATH`` from a regular file inside
    the salt root (``base``, else :func:`salt_root`)."""
    problem = salt_ref_problem(ref)
    if problem:
        raise SaltError(problem)
    kind, _, target = ref.partition(":")
    if kind == "env":
        value = os.environ.get(target)
        if value is None:
            raise SaltError(f"salt {ref}: environment variable {target} is not set")
    else:
        value = _read_salt_file(ref, target, base if base is not None else salt_root())
    if not value:
        raise SaltError(f"salt {ref} is empty")
    if "$$" in value:
        raise SaltError(f"salt {ref} contains '$$', which cannot appear in a function body")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise SaltError(f"salt {ref} contains a control character (a line break?)")
    secrets.register(value)
    return value


def _read_salt_file(ref: str, target: str, root: Path) -> str:
    try:
        root = root.resolve(strict=True)
        path = Path(target)
        path = (path if path.is_absolute() else root / path).resolve(strict=True)
    except (OSError, RuntimeError) as err:
        raise SaltError(f"salt {ref}: cannot read it: {getattr(err, 'strerror', err)}") from None
    if path != root and root not in path.parents:
        raise SaltError(
            f"salt {ref}: {path} is outside the salt root {root} (set ACCORD_SALT_ROOT to the "
            "directory that holds the salt files)"
        )
    try:
        # the path is resolved: O_NOFOLLOW refuses a symlink swapped in since (a race)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0))
    except OSError as err:
        raise SaltError(f"salt {ref}: cannot read {path}: {err.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SaltError(f"salt {ref}: {path} is not a regular file")
        if info.st_size > MAX_SALT_BYTES:
            raise SaltError(f"salt {ref}: {path} holds more than {MAX_SALT_BYTES} bytes")
        data = os.read(fd, MAX_SALT_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise SaltError(f"salt {ref}: {path} is not UTF-8 text") from None


def literal(value: str, dialect: str) -> str:
    """``value`` as the dialect's SQL string literal (sqlglot's escaping)."""
    from sqlglot import exp  # noqa: PLC0415 - sqlglot: never on accord lint's YAML path

    return exp.Literal.string(value).sql(dialect)


def materialize(text: str, dialect: str, resolver: Callable[[str], str] = resolve) -> str:
    """Fill every salt placeholder of ``text`` with its secret, as an escaped SQL literal.
    The result is for execution only: never write it to a file. A placeholder that does not
    follow the grammar (a hand-edited file) is refused, never executed."""

    for match in _ANY_PLACEHOLDER.finditer(text):
        if not PLACEHOLDER.match(text, match.start()):
            line = text.count("\n", 0, match.start()) + 1
            raise SaltError(f"line {line}: a salt placeholder that is not accord's own form")

    def fill(match: re.Match[str]) -> str:
        return literal(resolver(match.group("ref")), dialect)

    return PLACEHOLDER.sub(fill, text)


#: the dialects a salt may be rendered in (each escapes differently)
_DIALECTS = ("snowflake", "databricks", "duckdb")


def renderings(value: str) -> set[str]:
    """Every form in which accord itself writes ``value`` into text it sends or prints: raw, as
    each dialect's string literal (with and without its quotes), and JSON-escaped."""

    forms = {value, json.dumps(value)[1:-1], repr(value)[1:-1]}
    for dialect in _DIALECTS:
        lit = literal(value, dialect)
        forms.add(lit)
        forms.add(lit[1:-1])
    return {f for f in forms if f}


class SaltBox:
    """Resolves salts for one run and remembers them, so that anything printed afterwards (a
    platform's error message quoting the failed statement) can be scrubbed of them, in every
    form accord rendered them."""

    def __init__(self, resolver: Callable[[str], str] = resolve) -> None:
        self._resolver = resolver
        self._forms: set[str] = set()

    def __call__(self, ref: str) -> str:
        value = self._resolver(ref)
        forms = renderings(value)
        self._forms |= forms
        # known for the rest of the run: every message accord prints is scrubbed of them
        secrets.register(value, *forms)
        return value

    def redact(self, text: str) -> str:
        """:func:`compiler.core.secrets.redact`, and this box's renderings however short."""
        text = secrets.redact(text)
        for form in sorted(self._forms, key=len, reverse=True):
            text = text.replace(form, secrets.MASK)
        return text
