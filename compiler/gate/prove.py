"""``accord gate test``: prove a promotion policy cannot fail open.

From a sample manifest (one the policy finds complete, of accord's format), variants, each
evaluated:

- every key of every object (top-level inputs, ``evidence.*``, ``manifest.*``, each agent's
  fields) deleted; each boolean also set to ``false`` and to a non-boolean (the string
  ``"true"``);
- every value (keys and list items) set to ``null``; every string set to ``""``; every list
  shortened by one (its last item removed);
- each agent removed (the registry's count then no longer matches), replaced by a copy of
  another agent (the count kept), listed twice (the count not kept), and listed twice with
  the expected count raised to match.

A variant that is no manifest of accord's format (:func:`compiler.gate.manifest.manifest_problem`:
its JSON Schema, the count of agents and retired agents the registry expects, each listed
once) must be denied:

- if the policy **allows** it, it fails open;
- if a denial of the sample **disappears** in it without a completeness denial taking its place
  (the policy's ``complete`` is still true, or, for a policy without a ``complete`` rule, no
  other denial appears), it fails open: the rule that produced the denial reads a key that
  ``complete`` does not require.

A variant that is still a manifest of the format (a value the format allows as ``null``, a
probe owner fewer) is evaluated and shown, not judged. Besides:

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
of the package it uses) compared with the keys ``complete`` requires: the string literals of
``complete`` and of every rule it uses (but the keys given to ``object.get``, which tolerates
their absence), and every key ``complete``'s own body reads (and the bodies of the rules and
functions it uses that are undefined when their body fails: not a set, not one with a
default), outside ``not`` and ``object.get`` and comprehensions: a missing key there makes
``complete`` undefined, so false. A key a deny rule reads that ``complete`` does not require is
reported: ``deny rule at policy.rego:LINE reads KEY, which `complete` does not require``. It
is coarse on purpose (a key named anywhere in the completeness rules counts as required), so
the variants above remain the proof; a policy without a ``complete`` rule has every key its
deny rules read reported.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from accord.compiler.core.visible import plain, visible
from accord.compiler.gate.engine import EngineError, Evaluation, engine_for, evaluate, syntax_tree
from accord.compiler.gate.manifest import manifest_problem

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


def bounded_lists(doc: Any, prefix: Path_ = ()) -> Iterator[tuple[Path_, int, bool]]:
    """(path, length, whether its items are objects or lists) of every list of ``doc`` longer
    than :data:`MAX_VARIED_ITEMS` that :func:`key_paths` or :func:`value_paths` walks into, in
    document order."""
    if isinstance(doc, dict):
        for key in sorted(doc):
            yield from bounded_lists(doc[key], (*prefix, key))
    elif isinstance(doc, list):
        if len(doc) > MAX_VARIED_ITEMS:
            yield prefix, len(doc), any(isinstance(i, dict | list) for i in doc)
        for i, item in enumerate(doc[:MAX_VARIED_ITEMS]):
            yield from bounded_lists(item, (*prefix, i))


def value_paths(doc: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every value in ``doc``: each key's and each list item's (the first
    :data:`MAX_VARIED_ITEMS` of a list), in document order."""
    if isinstance(doc, dict):
        for key in sorted(doc):
            yield (*prefix, key)
            yield from value_paths(doc[key], (*prefix, key))
    elif isinstance(doc, list):
        for i, item in enumerate(doc[:MAX_VARIED_ITEMS]):
            yield (*prefix, i)
            yield from value_paths(item, (*prefix, i))


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
    elif action == "null":
        parent[path[-1]] = None
    elif action == "empty":
        parent[path[-1]] = ""
    elif action == "shortened":
        parent[path[-1]].pop()
    else:
        parent[path[-1]] = NON_BOOLEAN
    return out


#: where the sample's agents are
AGENTS: Path_ = ("manifest", "agents")


def _agent_variants(sample: Any) -> Iterator[tuple[Path_, str, Any]]:
    """Each agent removed, replaced by a copy of the next agent, listed twice, and listed
    twice with the expected count raised to match."""
    manifest = sample.get("manifest") if isinstance(sample, dict) else None
    agents = manifest.get("agents") if isinstance(manifest, dict) else None
    if not isinstance(agents, list):
        return
    n = len(agents)
    for i in range(min(n, MAX_VARIED_ITEMS)):  # the bound of :func:`bounded_lists`
        path = (*AGENTS, i)
        out = copy.deepcopy(sample)
        del _get(out, AGENTS)[i]
        yield path, "removed", out
        if n > 1:
            out = copy.deepcopy(sample)
            _get(out, AGENTS)[i] = copy.deepcopy(agents[(i + 1) % n])
            yield path, "replaced", out
        out = copy.deepcopy(sample)
        _get(out, AGENTS).insert(i + 1, copy.deepcopy(agents[i]))
        yield path, "duplicated", out
        count = out.get("expected_agent_count")
        if isinstance(count, int) and not isinstance(count, bool):
            out = copy.deepcopy(out)
            out["expected_agent_count"] = count + 1
            yield path, "duplicated, counted", out


def variants(sample: Any) -> Iterator[tuple[Path_, str, Any]]:
    for path in key_paths(sample):
        yield path, "deleted", _edited(sample, path, "deleted")
        if isinstance(_get(sample, path), bool):
            yield path, "false", _edited(sample, path, "false")
            yield path, "non-boolean", _edited(sample, path, "non-boolean")
    for path in value_paths(sample):
        value = _get(sample, path)
        if value is not None:
            yield path, "null", _edited(sample, path, "null")
        if isinstance(value, str) and value:
            yield path, "empty", _edited(sample, path, "empty")
        if isinstance(value, list) and value:
            yield path, "shortened", _edited(sample, path, "shortened")
    yield from _agent_variants(sample)


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
            "null": "set to null",
            "empty": 'set to ""',
            "shortened": "shortened by one",
            "removed": "removed (the count the registry expects kept)",
            "replaced": "replaced by a copy of another agent (the count kept)",
            "duplicated": "listed twice",
            "duplicated, counted": "listed twice, the expected count raised to match",
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
    malformed = manifest_problem(sample)
    if malformed is not None:
        raise EngineError(
            f"{sample_name}: the sample is no mesh manifest of accord's format ({malformed}): "
            "give one `accord manifest` wrote"
        )
    proof = Proof(name, sample_name, base)
    proof.bounded = [
        (
            f"{label(path)}: the keys of its first {MAX_VARIED_ITEMS} of {n} items are varied, "
            if nested
            else f"{label(path)}: its first {MAX_VARIED_ITEMS} of {n} values are varied, "
        )
        + f"not the others' (a list of at most {MAX_VARIED_ITEMS} is varied whole)"
        for path, n, nested in bounded_lists(sample)
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
    shown = Outcome(path, action, verdict).name
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
    malformed = manifest_problem(doc)
    if malformed is None:
        return Outcome(path, action, verdict)  # still a manifest of the format: not judged
    if got.allowed:
        return Outcome(
            path, action, verdict, f"the policy allows the manifest with {shown} ({malformed})"
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
    #: the kind of its head (``Compr``: a value or boolean, ``Set``, ``Func``), ``Default``
    kind: str = ""
    #: the syntax tree of its definition
    spec: dict[str, Any] = field(default_factory=dict, repr=False)


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


def _key_read(node: dict[str, Any]) -> str | None:
    """The key ``node`` reads (``x.key``, ``x["key"]``; not a built-in's name), or None."""
    dot = node.get("RefDot")
    if isinstance(dot, dict) and _root_var(dot) not in _NAMESPACES:
        found = dot.get("field")
        if isinstance(found, list) and found and isinstance(found[-1], str):
            return found[-1]
    if isinstance(node.get("RefBrack"), dict):
        index = node["RefBrack"].get("index")
        if isinstance(index, dict) and isinstance(index.get("String"), dict):
            return str(index["String"].get("value"))
    return None


def _object_get(node: dict[str, Any]) -> bool:
    """Whether ``node`` calls ``object.get`` (which tolerates the key's absence)."""
    call = node.get("Call")
    fcn = call.get("fcn") if isinstance(call, dict) else None
    dot = fcn.get("RefDot") if isinstance(fcn, dict) else None
    return (
        isinstance(dot, dict)
        and _root_var(dot) == "object"
        and isinstance(dot.get("field"), list)
        and dot["field"][-1] == "get"
    )


def _walk(node: Any, rule: _Rule) -> None:
    if isinstance(node, dict):
        key = _key_read(node)
        if key is not None:
            rule.reads.add(key)
        if isinstance(node.get("String"), dict) and "value" in node["String"]:
            rule.strings.add(str(node["String"]["value"]))
        if isinstance(node.get("Var"), dict) and isinstance(node["Var"].get("value"), str):
            rule.uses.add(node["Var"]["value"])
        if _object_get(node):  # the key it is given is no requirement: its strings are not
            strings = set(rule.strings)
            for value in node.values():
                _walk(value, rule)
            rule.strings = strings
            return
        for value in node.values():
            _walk(value, rule)
    elif isinstance(node, list):
        for item in node:
            _walk(item, rule)


#: the comprehensions: a key missing in one leaves an element out, never the body undefined
_COMPREHENSIONS = ("ArrayCompr", "SetCompr", "ObjectCompr")


def _positive(node: Any, reads: set[str], uses: set[str]) -> None:
    """The keys ``node`` reads where a missing one makes the body undefined (outside ``not``,
    ``object.get`` and comprehensions), and the rules and functions it uses there."""
    if isinstance(node, dict):
        if "NotExpr" in node or _object_get(node) or any(k in node for k in _COMPREHENSIONS):
            return
        key = _key_read(node)
        if key is not None:
            reads.add(key)
        if isinstance(node.get("Var"), dict) and isinstance(node["Var"].get("value"), str):
            uses.add(node["Var"]["value"])
        for value in node.values():
            _positive(value, reads, uses)
    elif isinstance(node, list):
        for item in node:
            _positive(item, reads, uses)


def _required_reads(start: list[_Rule], by_name: dict[str, list[_Rule]]) -> set[str]:
    """The keys ``start`` (the ``complete`` rules) read in their bodies and values where a
    missing key leaves them undefined, following the rules and functions used there that are
    themselves undefined when their body fails (a value or boolean rule without a default, a
    function); a set rule (``contains``) is empty, never undefined."""
    reads: set[str] = set()
    seen: set[int] = set()
    todo = list(start)
    while todo:
        rule = todo.pop()
        if id(rule) in seen or rule.kind not in ("Compr", "Func"):
            continue
        seen.add(id(rule))
        uses: set[str] = set()
        head = next(iter(rule.spec.get("head", {}).values()), {})
        _positive(
            [rule.spec.get("bodies"), head.get("assign") if isinstance(head, dict) else None],
            reads,
            uses,
        )
        for used in sorted(uses - {rule.name}):
            found = by_name.get(used, [])
            if not any(r.kind == "Default" for r in found):
                todo.extend(found)
    return reads


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
        kind = "Default" if "Default" in item else next(iter(spec.get("head") or {"": 0}))
        rule = _Rule(name, int(span.get("line", 0)), kind=kind, spec=spec)
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
    required |= _required_reads(by_name.get("complete", []), by_name)
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
