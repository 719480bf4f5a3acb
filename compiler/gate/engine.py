"""The Rego engine of the gate: one policy, one input document, evaluated in-process.

The engine is regopy (the Python bindings of rego-cpp), pinned in the ``gate`` extra and
imported only here, only when a gate is evaluated (``accord lint`` never pays for it). It was
chosen on the cases a gate fails open on, against OPA's documented semantics (kept in
``tests/test_gate_engine.py``): a ``sprintf`` over a missing key is undefined, so its rule
emits nothing; a bare reference to ``false`` fails a rule body as a missing key does; a rule
comparing with a missing top-level input is undefined; ``object.keys`` sees exactly the keys
present. regopy renders an undefined query as the text ``undefined`` (not JSON): that is read
as "nothing", never as a value.

Built-in errors are strict (``opa eval --strict-builtin-errors``): a built-in given a value
of the wrong type is an error, not an undefined expression that quietly drops a denial. An
error of any kind (a policy that does not parse, a conflict, a built-in error, an answer
without a boolean ``allow``) is :class:`EngineError`: "cannot evaluate", exit 2, never allow.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from compiler.core.errors import UsageError

#: the engine and the version the gate was tested with (pyproject.toml, extra ``gate``)
ENGINE = "regopy"
ENGINE_VERSION = "1.5.2"

_PACKAGE = re.compile(r"^\s*package\s+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*$")
#: the largest engine diagnostic kept (rego-cpp prints the offending source around it)
_MAX_MESSAGE = 2000


class EngineError(Exception):
    """The policy could not be evaluated on this input: exit 2, never allow."""


@dataclass(frozen=True)
class Evaluation:
    """What a policy decided about one document."""

    allow: bool
    deny: tuple[str, ...]
    #: the policy's ``complete`` rule: True/False, or None where the policy has none
    complete: bool | None
    warnings: tuple[str, ...] = ()
    #: the package document as the engine answered it
    document: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def allowed(self) -> bool:
        """Allowed only when ``allow`` is true and no denial was produced."""
        return self.allow and not self.deny


def package_of(policy: str, name: str) -> str:
    """The policy's package (``package accord.gate``); an EngineError when it has none."""
    for line in policy.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        m = _PACKAGE.match(stripped)
        if m is None:
            break
        return m.group(1)
    raise EngineError(f"{name}: the policy does not start with a `package` declaration")


def _regopy() -> Any:
    try:
        import regopy
    except ImportError:
        raise UsageError("accord gate needs its Rego engine: pip install 'accord[gate]'") from None
    return regopy


@contextlib.contextmanager
def _captured() -> Iterator[list[str]]:
    """rego-cpp prints its diagnostics itself, on file descriptors 1 and 2: they are caught
    here and become the EngineError's message (accord's own output stays its own)."""
    import sys

    out: list[str] = []
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved: list[tuple[int, int]] = []
    with tempfile.TemporaryFile() as tmp:
        try:
            for fd in (1, 2):
                with contextlib.suppress(OSError):
                    saved.append((fd, os.dup(fd)))
                    os.dup2(tmp.fileno(), fd)
            yield out
        finally:
            for fd, copy in saved:
                os.dup2(copy, fd)
                os.close(copy)
            tmp.seek(0)
            out.append(tmp.read(_MAX_MESSAGE * 4).decode("utf-8", "replace"))


_WHERE = re.compile(r"^-- (.+?):(\d+):(\d+)\s*$")


def _message(captured: list[str], fallback: str) -> str:
    """The first diagnostic rego-cpp printed, as ``file:line:column: message`` (and how many
    more there were), else the fallback text on one line."""
    text = "".join(captured)
    found: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _WHERE.match(line.strip())
        if m is not None and i > 0:
            what = lines[i - 1].strip()
            found.append(f"{m.group(1)}:{m.group(2)}:{m.group(3)}: {what}")
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return (found[0] + more)[:_MAX_MESSAGE]
    flat = " ".join(text.split()) or " ".join(fallback.split())
    return flat[:_MAX_MESSAGE]


def evaluate(policy: str, name: str, document: Any) -> Evaluation:
    """Evaluate ``policy`` (the text of one ``.rego`` file, reported as ``name``) on
    ``document``: its ``allow``, ``deny``, ``complete`` and ``warnings``. Raises EngineError."""
    package = package_of(policy, name)
    regopy = _regopy()
    with _captured() as captured:
        try:
            interpreter = regopy.Interpreter()
            interpreter.strict_built_in_errors = True
            interpreter.add_module(name, policy)
            interpreter.set_input_term(json.dumps(document, sort_keys=True))
            output = interpreter.query(f"x = data.{package}")
        except Exception as err:  # regopy.RegoError, or anything the bindings raise
            failure: str | None = str(err)
        else:
            failure = None
    if failure is not None:
        raise EngineError(f"{name}: the engine refused the policy: {_message(captured, failure)}")
    text = str(output)
    if not output.ok():
        detail = _message(captured, "")
        raise EngineError(
            f"{name}: evaluation failed: "
            + (
                detail
                or "the engine reports an error without detail (a complete rule with two "
                "values, or a built-in given a value of the wrong type)"
            )
        )
    if text.strip() == "undefined":
        raise EngineError(f"{name}: package {package} evaluated to nothing (undefined)")
    try:
        answer = json.loads(text)
        doc = answer["bindings"]["x"]
    except (ValueError, KeyError, TypeError):
        raise EngineError(
            f"{name}: the engine's answer is not a JSON document: {text[:200]!r}"
        ) from None
    if not isinstance(doc, dict):
        raise EngineError(f"{name}: package {package} is not a document of rules")
    return _read(doc, name, package)


def _read(doc: dict[str, Any], name: str, package: str) -> Evaluation:
    allow = doc.get("allow")
    if not isinstance(allow, bool):
        raise EngineError(
            f"{name}: data.{package}.allow is "
            f"{'undefined' if allow is None else json.dumps(allow)[:80]}: a gate needs a boolean "
            "allow (write `default allow := false`)"
        )
    complete = doc.get("complete")
    if complete is not None and not isinstance(complete, bool):
        raise EngineError(f"{name}: data.{package}.complete is not a boolean")
    return Evaluation(
        allow=allow,
        deny=_messages(doc.get("deny", []), name, package, "deny"),
        complete=complete,
        warnings=_messages(doc.get("warnings", []), name, package, "warnings"),
        document=doc,
    )


def _messages(value: Any, name: str, package: str, rule: str) -> tuple[str, ...]:
    """A set of messages: strings, or objects with a ``msg`` (conftest's two forms)."""
    if not isinstance(value, list):
        raise EngineError(f"{name}: data.{package}.{rule} is not a set of messages")
    out = []
    for item in value:
        if isinstance(item, dict) and isinstance(item.get("msg"), str):
            out.append(item["msg"])
        elif isinstance(item, str):
            out.append(item)
        else:
            out.append(json.dumps(item, sort_keys=True))
    return tuple(sorted(set(out)))
