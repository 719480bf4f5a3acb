"""The Rego engine of the gate: one policy, one input document, evaluated in-process.

The engine is regorus (Microsoft's Rego interpreter, in Rust), as the ``celine-regorus``
wheels of upstream release 0.9.1 (a packaging of the upstream source, nothing changed),
pinned in the ``gate`` extra and imported only here, only when a gate is evaluated
(``accord lint`` never pays for it). It was chosen on the cases a gate fails open on,
against OPA's documented semantics (kept in ``tests/test_gate_engine.py``): a ``sprintf``
over a missing key is undefined, so its rule emits nothing; a bare reference to ``false``
fails a rule body as a missing key does; a rule comparing with a missing top-level input is
undefined; ``object.keys`` sees exactly the keys present; a string a built-in computed is a
string. regopy 1.5.2 (rego-cpp) was tried beside it: it agrees on the missing-key cases,
but ``sprintf("%s", [concat(", ", xs)])`` comes back quoted, in an answer that is not valid
JSON, so a denial that names a probe's owners could not be read at all; and it exposes no
syntax tree, which the static half of ``accord gate test`` needs.

Built-in errors are strict, as ``opa eval --strict-builtin-errors``: a built-in given a
value of the wrong type is an error, not an undefined expression that quietly drops a
denial. An error of any kind (a policy that does not parse, a rule conflict, a built-in
error, an answer without a boolean ``allow``) is :class:`EngineError`: "cannot evaluate",
exit 2, never allow.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.core.errors import UsageError

#: the engine and the version the gate was tested with (pyproject.toml, extra ``gate``)
ENGINE = "regorus"
ENGINE_VERSION = "0.9.1"

#: a package declaration, and the comment that may end its line (Rego's comments start at
#: ``#`` and run to the end of the line)
_PACKAGE = re.compile(
    r"^\s*package\s+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*(?:#.*)?$"
)
_WHERE = re.compile(r"-->\s*(.+?):(\d+):(\d+)")
_ERROR = re.compile(r"^error:\s*(.*)$", re.MULTILINE)
#: the largest engine diagnostic kept
_MAX_MESSAGE = 500


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


def _regorus() -> Any:
    try:
        import regorus
    except ImportError:
        raise UsageError("accord gate needs its Rego engine: pip install 'accord[gate]'") from None
    return regorus


def _message(err: BaseException) -> str:
    """regorus's error as ``file:line:column: message`` (its backtrace dropped)."""
    text = str(err).split("Stack backtrace:", 1)[0]
    where = _WHERE.search(text)
    what = _ERROR.search(text)
    message = what.group(1).strip() if what else " ".join(text.split())
    if where is not None:
        message = f"{where.group(1)}:{where.group(2)}:{where.group(3)}: {message}"
    return message[:_MAX_MESSAGE]


def engine_for(policy: str, name: str) -> Any:
    """A regorus engine holding ``policy``. Raises EngineError."""
    regorus = _regorus()
    engine = regorus.Engine()
    try:
        engine.add_policy(name, policy)
    except Exception as err:  # regorus raises RuntimeError (and ValueError) with its report
        raise EngineError(f"{name}: the engine refused the policy: {_message(err)}") from None
    return engine


def syntax_tree(engine: Any) -> list[dict[str, Any]] | None:
    """The rules of the policy in ``engine`` as regorus parsed them (its JSON syntax tree);
    None when the engine does not give it."""
    try:
        modules = json.loads(engine.get_ast_as_json())
        return [rule for m in modules for rule in m["ast"]["rules"]]
    except Exception:
        return None


def evaluate(policy: str, name: str, document: Any, engine: Any = None) -> Evaluation:
    """Evaluate ``policy`` (the text of one ``.rego`` file, reported as ``name``) on
    ``document``: its ``allow``, ``deny``, ``complete`` and ``warnings``. ``engine``: one
    :func:`engine_for` made for this policy (reused across documents). Raises EngineError."""
    package = package_of(policy, name)
    if engine is None:
        engine = engine_for(policy, name)
    try:
        engine.set_input_json(json.dumps(document, sort_keys=True))
        text = engine.eval_query_as_json(f"data.{package}")
    except Exception as err:
        raise EngineError(f"{name}: evaluation failed: {_message(err)}") from None
    try:
        answer = json.loads(text)
    except ValueError:
        raise EngineError(f"{name}: the engine's answer is not JSON: {text[:200]!r}") from None
    results = answer.get("result") if isinstance(answer, dict) else None
    if not results:
        raise EngineError(f"{name}: package {package} evaluated to nothing (undefined)")
    try:
        doc = results[0]["expressions"][0]["value"]
    except (KeyError, IndexError, TypeError):
        raise EngineError(f"{name}: the engine's answer has no value: {text[:200]!r}") from None
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
