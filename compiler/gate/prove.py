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

**The bound.** Every variant is the whole sample evaluated again, so the work grows with the
square of the sample: the keys of at most :data:`MAX_VARIED_ITEMS` items of each list (the
first ones: agents, retired agents, owners) are varied, and the proof says which lists were
longer (the other items are left as they are in every variant). Each item of a list is read
by the same rules, so a sample with few agents proves as much; one within the bound is
varied whole.

The static half, from the policy's syntax tree (regorus gives it): the input keys each
``deny`` rule reads (``x.key`` and ``x["key"]``, in the rule and in the rules and functions
of the package it uses) compared with the keys the completeness rule names (the string
literals of ``complete`` and of every rule it uses). A key a deny rule reads that
``complete`` never names is reported: ``deny rule at policy.rego:LINE reads KEY, which
`complete` does not require``. It is coarse on purpose (a key named anywhere in the
completeness rules counts as required), so the variants above remain the proof; a policy
without a ``complete`` rule has every key its deny rules read reported.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.core.visible import plain, visible
from accord.compiler.gate.engine import EngineError, Evaluation, engine_for, evaluate, syntax_tree

Path_ = tuple[str | int, ...]
#: the non-boolean a boolean is replaced with (reads as true to a careless eye)
NON_BOOLEAN = "true"
#: the items of each list of the sample whose keys are varied (the first ones)
MAX_VARIED_ITEMS = 10


def label(path: Path_) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def key_paths(doc: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every key of every object in ``doc`` (lists are walked into, their first
    :data:`MAX_VARIED_ITEMS` items), in document order."""
    if isinstance(doc, dict):
        for key in sorted(doc):
            path = (*prefix, key)
            yield path
            yield from key_paths(doc[key], path)
    elif isinstance(doc, list):
        for i, item in enumerate(doc[:MAX_VARIED_ITEMS]):
            yield from key_paths(item, (*prefix, i))


def bounded_lists(doc: Any, prefix: Path_ = ()) -> Iterator[tuple[Path_, int]]:
    """(path, length) of every list of ``doc`` longer than :data:`MAX_VARIED_ITEMS` whose
    items :func:`key_paths` walks into, in document order."""
    if isinstance(doc, dict):
        for key in sorted(doc):
            yield from bounded_lists(doc[key], (*prefix, key))
    elif isinstance(doc, list):
        if len(doc) > MAX_VARIED_ITEMS and any(isinstance(i, dict | list) for i in doc):
            yield prefix, len(doc)
        for i, item in enumerate(doc[:MAX_VARIED_ITEMS]):
            yield from bounded_lists(item, (*prefix, i))


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
    #: what the static comparison did, one line
    static: str = "not made: the engine gave no syntax tree (the variants are the proof)"
    #: keys deny rules read that `complete` does not name
    unrequired: list[str] = field(default_factory=list)
    #: the lists whose items past the bound were not varied, said in words
    bounded: list[str] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.failure is not None]

    @property
    def passed(self) -> bool:
        return not self.failures and not self.unrequired

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
                "unrequired_reads": self.unrequired,
                "bounded": self.bounded,
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
        lines += [f"FAIL-OPEN  {u}" for u in self.unrequired]
        lines += [f"bounded    {b}" for b in self.bounded]
        lines.append(f"static comparison: {self.static}")
        n, f = len(self.outcomes), len(self.failures)
        verdict = (
            f"the policy fails open on {f} of {n} variants"
            if f
            else f"the policy denied every one of {n} variants that must be denied"
        )
        if self.unrequired:
            verdict += f"; {len(self.unrequired)} key(s) read that `complete` does not require"
        if self.bounded:
            verdict += f"; {len(self.bounded)} list(s) varied in part (bounded)"
        lines.append(f"accord gate test ({self.policy} on {self.sample}): {verdict}")
        return "\n".join(visible(line) for line in lines) + "\n"


def prove(policy: str, name: str, sample: Any, sample_name: str) -> Proof:
    """Evaluate every variant of ``sample``. Raises EngineError when the sample itself cannot
    be evaluated or is not complete under the policy (a proof needs a complete sample)."""
    engine = engine_for(policy, name)
    base = evaluate(policy, name, sample, engine)
    if base.complete is False:
        raise EngineError(
            f"{sample_name}: the sample is not complete under {name} (its `complete` is false): "
            "give a sample manifest the policy finds complete"
        )
    proof = Proof(name, sample_name, base)
    proof.bounded = [
        f"{label(path)}: the keys of its first {MAX_VARIED_ITEMS} of {n} items are varied, "
        f"not the others' (a sample with at most {MAX_VARIED_ITEMS} is varied whole)"
        for path, n in bounded_lists(sample)
    ]
    for path, action, doc in variants(sample):
        proof.outcomes.append(_judge(policy, name, engine, base, path, action, doc))
    rules = syntax_tree(engine)
    if rules is not None:
        proof.static, proof.unrequired = static_comparison(rules, name)
    return proof


def _judge(
    policy: str, name: str, engine: Any, base: Evaluation, path: Path_, action: str, doc: Any
) -> Outcome:
    try:
        got = evaluate(policy, name, doc, engine)
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


# --------------------------------------------------------------------------------------------
# the static comparison, on regorus's syntax tree


@dataclass
class _Rule:
    name: str
    line: int
    reads: set[str] = field(default_factory=set)
    strings: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)


def _rule_name(head: Any) -> str | None:
    node = head.get("refr") if isinstance(head, dict) else None
    while isinstance(node, dict):
        if "Var" in node:
            return node["Var"].get("value")
        inner = next(iter(node.values()), None)
        node = inner.get("refr") if isinstance(inner, dict) else None
    return None


#: the built-ins' namespaces: ``object.keys`` is a call, not a read of a key ``keys``
_NAMESPACES = frozenset(
    [
        "array",
        "base64",
        "base64url",
        "bits",
        "crypto",
        "data",
        "glob",
        "graph",
        "hex",
        "http",
        "io",
        "json",
        "net",
        "numbers",
        "object",
        "opa",
        "providers",
        "rand",
        "regex",
        "rego",
        "semver",
        "sets",
        "strings",
        "time",
        "units",
        "urlquery",
        "uuid",
        "yaml",
    ]
)


def _root_var(node: Any) -> str | None:
    refr = node.get("refr") if isinstance(node, dict) else None
    if isinstance(refr, dict) and isinstance(refr.get("Var"), dict):
        return refr["Var"].get("value")
    return None


def _walk(node: Any, rule: _Rule) -> None:
    if isinstance(node, dict):
        dot = node.get("RefDot")
        if isinstance(dot, dict) and _root_var(dot) not in _NAMESPACES:
            found = dot.get("field")
            if isinstance(found, list) and found and isinstance(found[-1], str):
                rule.reads.add(found[-1])
        if isinstance(node.get("RefBrack"), dict):
            index = node["RefBrack"].get("index")
            if isinstance(index, dict) and isinstance(index.get("String"), dict):
                rule.reads.add(str(index["String"].get("value")))
        if isinstance(node.get("String"), dict) and "value" in node["String"]:
            rule.strings.add(str(node["String"]["value"]))
        if isinstance(node.get("Var"), dict) and isinstance(node["Var"].get("value"), str):
            rule.uses.add(node["Var"]["value"])
        for value in node.values():
            _walk(value, rule)
    elif isinstance(node, list):
        for item in node:
            _walk(item, rule)


def _rules(tree: list[dict[str, Any]]) -> list[_Rule]:
    out = []
    for item in tree:
        spec = item.get("Spec") or item.get("Default")
        if not isinstance(spec, dict):
            continue
        head = spec.get("head")
        head = next(iter(head.values()), None) if isinstance(head, dict) else None
        name = _rule_name(head) if head is not None else spec.get("refr") and _rule_name(spec)
        if not isinstance(name, str):
            continue
        span = spec.get("span") if isinstance(spec.get("span"), dict) else {}
        rule = _Rule(name, int(span.get("line", 0)))
        _walk(spec, rule)
        out.append(rule)
    return out


def _closure(start: list[_Rule], by_name: dict[str, list[_Rule]], stop: set[str]) -> list[_Rule]:
    seen: set[int] = set()
    todo = list(start)
    out = []
    while todo:
        rule = todo.pop()
        if id(rule) in seen:
            continue
        seen.add(id(rule))
        out.append(rule)
        for used in sorted(rule.uses):
            if used != rule.name and used not in stop:
                todo.extend(by_name.get(used, []))
    return out


def static_comparison(tree: list[dict[str, Any]], name: str) -> tuple[str, list[str]]:
    """(one line saying what was compared, the unrequired reads)."""
    rules = _rules(tree)
    by_name: dict[str, list[_Rule]] = {}
    for rule in rules:
        by_name.setdefault(rule.name, []).append(rule)
    required: set[str] = set()
    for rule in _closure(by_name.get("complete", []), by_name, set()):
        required |= rule.strings
    denies = by_name.get("deny", [])
    found: list[str] = []
    for deny in denies:
        # a deny rule that passes the completeness denials on reads nothing of its own
        if deny.uses & {"incomplete", "complete"}:
            continue
        reads: set[str] = set()
        for rule in _closure([deny], by_name, {"incomplete", "complete"}):
            reads |= rule.reads
        for key in sorted(reads - required):
            found.append(
                f"deny rule at {name}:{deny.line} reads {key}, which `complete` does not require"
            )
    has_complete = "complete" in by_name
    what = (
        f"{len(denies)} deny rules' reads compared with the keys `complete` names"
        if has_complete
        else f"the policy has no `complete` rule: every key its {len(denies)} deny rules read "
        "is unrequired"
    )
    return what, found
