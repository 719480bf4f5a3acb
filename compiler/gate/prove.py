"""``accord gate test``: prove a promotion policy cannot fail open.

From a sample manifest (one the policy finds complete), one variant per key path: every key
of every object in it (top-level inputs, ``evidence.*``, ``manifest.*``, each agent's
fields) deleted; each boolean also set to ``false`` and to a non-boolean (the string
``"true"``). Each variant is evaluated, and:

- a variant with a key deleted or a boolean mistyped that the policy **allows** fails open:
  a malformed manifest must never pass;
- a denial of the sample that **disappears** in such a variant without a completeness denial
  taking its place (the policy's ``complete`` is still true, or, for a policy without a
  ``complete`` rule, no other denial appears) fails open: the rule that produced it reads a
  key that ``complete`` does not require;
- a boolean set to ``false`` that makes ``complete`` false is a policy that tests presence
  by reading the value (a bare reference to ``false`` fails a rule body exactly as a missing
  key does): reported too;
- a variant the engine cannot evaluate fails closed (``accord gate`` exits 2 on it): listed,
  not a failure.

The static half of the proof (the input keys each deny rule reads, compared with the keys
``complete`` requires) needs the policy's syntax tree; regopy does not expose it, so the
report says the comparison was made by evaluation only.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from compiler.core.visible import plain, visible
from compiler.gate.engine import ENGINE, EngineError, Evaluation, evaluate

Path_ = tuple[str | int, ...]
#: the non-boolean a boolean is replaced with (reads as true to a careless eye)
NON_BOOLEAN = "true"


def label(path: Path_) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def key_paths(doc: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every key of every object in ``doc`` (lists are walked into), in document order."""
    if isinstance(doc, dict):
        for key in sorted(doc):
            path = (*prefix, key)
            yield path
            yield from key_paths(doc[key], path)
    elif isinstance(doc, list):
        for i, item in enumerate(doc):
            yield from key_paths(item, (*prefix, i))


def _get(doc: Any, path: Path_) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _edited(doc: Any, path: Path_, action: str) -> Any:
    out = copy.deepcopy(doc)
    parent = _get(out, path[:-1])
    if action == "deleted":
        del parent[path[-1]]
    elif action == "false":
        parent[path[-1]] = False
    else:
        parent[path[-1]] = NON_BOOLEAN
    return out


def variants(sample: Any) -> Iterator[tuple[Path_, str, Any]]:
    for path in key_paths(sample):
        yield path, "deleted", _edited(sample, path, "deleted")
        if isinstance(_get(sample, path), bool):
            yield path, "false", _edited(sample, path, "false")
            yield path, "non-boolean", _edited(sample, path, "non-boolean")


@dataclass(frozen=True)
class Outcome:
    path: Path_
    action: str
    #: allowed, denied, error
    verdict: str
    #: why it fails open (None: it does not)
    failure: str | None = None
    detail: str = ""

    @property
    def name(self) -> str:
        what = {
            "deleted": "deleted",
            "false": "set to false",
            "non-boolean": f"set to {json.dumps(NON_BOOLEAN)}",
        }
        return f"{label(self.path)} {what[self.action]}"

    def to_json(self) -> dict[str, Any]:
        return {
            "key": label(self.path),
            "variant": self.action,
            "verdict": self.verdict,
            "fails_open": self.failure is not None,
            "failure": self.failure,
            "detail": self.detail,
        }


@dataclass
class Proof:
    policy: str
    sample: str
    sample_evaluation: Evaluation
    outcomes: list[Outcome] = field(default_factory=list)
    static: str = (
        f"not made: the engine ({ENGINE}) does not expose the policy's syntax tree, so the keys "
        "each deny rule reads were compared with what `complete` requires by evaluation only"
    )

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.failure is not None]

    @property
    def passed(self) -> bool:
        return not self.failures

    def document(self) -> dict[str, Any]:
        return plain(
            {
                "policy": self.policy,
                "sample": self.sample,
                "passed": self.passed,
                "variants": len(self.outcomes),
                "fail_open": [o.to_json() for o in self.failures],
                "outcomes": [o.to_json() for o in self.outcomes],
                "static_comparison": self.static,
            }
        )

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return json.dumps(self.document(), indent=2, sort_keys=True) + "\n"
        lines = [f"FAIL-OPEN  {o.name}: {o.failure}" for o in self.failures]
        errors = [o for o in self.outcomes if o.verdict == "error"]
        lines += [
            f"closed     {o.name}: the engine cannot evaluate it ({o.detail})" for o in errors
        ]
        lines.append(f"static comparison: {self.static}")
        n, f = len(self.outcomes), len(self.failures)
        verdict = (
            f"the policy fails open on {f} of {n} variants"
            if f
            else f"the policy denied every one of {n} variants that must be denied"
        )
        lines.append(f"accord gate test ({self.policy} on {self.sample}): {verdict}")
        return "\n".join(visible(line) for line in lines) + "\n"


def prove(policy: str, name: str, sample: Any, sample_name: str) -> Proof:
    """Evaluate every variant of ``sample``. Raises EngineError when the sample itself cannot
    be evaluated or is not complete under the policy (a proof needs a complete sample)."""
    base = evaluate(policy, name, sample)
    if base.complete is False:
        raise EngineError(
            f"{sample_name}: the sample is not complete under {name} (its `complete` is false): "
            "give a sample manifest the policy finds complete"
        )
    proof = Proof(name, sample_name, base)
    for path, action, doc in variants(sample):
        proof.outcomes.append(_judge(policy, name, base, path, action, doc))
    return proof


def _judge(policy: str, name: str, base: Evaluation, path: Path_, action: str, doc: Any) -> Outcome:
    try:
        got = evaluate(policy, name, doc)
    except EngineError as err:
        return Outcome(path, action, "error", None, str(err).split(": ", 1)[-1][:200])
    verdict = "allowed" if got.allowed else "denied"
    key = label(path)
    if action == "false":
        if got.complete is False and base.complete is True:
            return Outcome(
                path,
                action,
                verdict,
                f"`complete` is false when {key} is false: the policy tests its presence by "
                "reading its value (use object.keys), so the same test passes when it is missing "
                "elsewhere",
            )
        return Outcome(path, action, verdict)
    if got.allowed:
        return Outcome(
            path,
            action,
            verdict,
            f"the policy allows the manifest with {key} "
            f"{'deleted' if action == 'deleted' else 'not a boolean'}",
        )
    lost = sorted(set(base.deny) - set(got.deny))
    if lost:
        replaced = (
            got.complete is False
            if got.complete is not None
            else bool(set(got.deny) - set(base.deny))
        )
        if not replaced:
            return Outcome(
                path,
                action,
                verdict,
                f"the denial {lost[0]!r} disappears and no completeness denial takes its place: "
                f"the deny rule that produced it reads {key}, which `complete` does not require",
            )
    return Outcome(path, action, verdict)
