"""The gate's Rego engine on exactly the cases a gate fails open on, against OPA's documented
semantics; and every engine failure is "cannot evaluate" (exit 2), never allow.

OPA's semantics, as its policy reference states them: a reference to a key the document does
not have is *undefined*, and an expression that is undefined fails the rule body, so the rule
emits nothing (a function call, ``sprintf`` included, with an undefined argument is undefined);
``not`` of an undefined or false expression is true; a bare reference to ``false`` fails a body
exactly as a missing key does; ``object.keys`` returns the keys present; a complete rule with
``default`` has its default when no body succeeds. With ``--strict-builtin-errors`` a built-in
given a value of the wrong type is an error. These tests are how the engine was chosen, and
they keep it honest on upgrades: regopy 1.5.2 agreed on the missing-key cases but failed
``sprintf over a computed string`` (its answer quoted the string and was not valid JSON);
regorus 0.9.1 passes every case.
"""

from __future__ import annotations

import pytest

from accord.compiler.gate.engine import EngineError, evaluate, package_of
from tests.cli import run_cli

POLICY = """
package t

import rego.v1

deny contains msg if {
    some a in input.agents
    msg := sprintf("agent %s is bad", [a.name])
}

probe contains a.id if {
    some a in input.agents
    a.reads
    not a.passed
}

version contains a.id if {
    some a in input.agents
    a.v != input.negotiated
}

missing contains sprintf("%s lacks %s", [a.id, k]) if {
    some a in input.agents
    some k in {"name", "reads", "passed"}
    not k in object.keys(a)
}

top_missing contains k if {
    some k in {"negotiated", "agents"}
    not k in object.keys(input)
}

owners := sprintf("owners: %s", [concat(", ", input.owners)])

shout := sprintf("<%s>", [upper(input.owners[0])])

typed contains a.id if {
    some a in input.agents
    startswith(a.v, "1.")
}

default allow := false

allow if {
    count(deny) == 0
    count(probe) == 0
}
"""


def rule(doc: object, name: str) -> object:
    return evaluate(POLICY, "t.rego", doc).document.get(name)


@pytest.mark.parametrize(
    ("case", "doc", "name", "expected"),
    [
        # a sprintf over a missing key is undefined: the rule emits nothing (the fail-open)
        ("sprintf, key missing", {"agents": [{"id": "x"}]}, "deny", []),
        (
            "sprintf, key present",
            {"agents": [{"id": "x", "name": "n"}]},
            "deny",
            ["agent n is bad"],
        ),
        # a missing boolean fails the body like false does
        ("boolean missing", {"agents": [{"id": "x", "passed": False}]}, "probe", []),
        ("boolean false", {"agents": [{"id": "x", "reads": False}]}, "probe", []),
        # `not` of a missing key is true
        ("negated boolean missing", {"agents": [{"id": "x", "reads": True}]}, "probe", ["x"]),
        # a comparison with a missing top-level input is undefined: nothing
        ("top-level input missing", {"agents": [{"id": "x", "v": "2"}]}, "version", []),
        (
            "top-level input present",
            {"agents": [{"id": "x", "v": "2"}], "negotiated": "1"},
            "version",
            ["x"],
        ),
        # object.keys sees exactly the keys present, false ones included
        (
            "object.keys",
            {"agents": [{"id": "x", "reads": False}]},
            "missing",
            ["x lacks name", "x lacks passed"],
        ),
        ("object.keys of input", {"agents": []}, "top_missing", ["negotiated"]),
        # default applies when no body succeeds
        ("default allow", {"agents": [{"id": "x", "name": "n"}]}, "allow", False),
        ("allow", {"agents": []}, "allow", True),
        # a string a built-in computed is a string in sprintf (regopy 1.5.2 quoted it)
        ("sprintf over a computed string", {"owners": ["a", "b"]}, "owners", "owners: a, b"),
        ("sprintf over upper", {"owners": ["a"]}, "shout", "<A>"),
        # a complete rule over a missing key is undefined: absent from the package
        ("complete rule undefined", {}, "owners", None),
    ],
)
def test_undefined_keys_follow_opa(case: str, doc: object, name: str, expected: object) -> None:
    assert rule(doc, name) == expected, case


def test_a_builtin_given_the_wrong_type_is_an_error_not_a_silent_undefined() -> None:
    # non-strict, `typed` would be undefined and its denial gone; strict, it cannot evaluate
    with pytest.raises(EngineError, match="evaluation failed"):
        evaluate(POLICY, "t.rego", {"agents": [{"id": "x", "v": 5}]})


@pytest.mark.parametrize(
    ("policy", "match"),
    [
        ("package t\nimport rego.v1\ndeny contains x if { x := }\n", "refused the policy"),
        ("package t\nimport rego.v1\nallow := true\nallow := false\n", "evaluation failed"),
        ("package t\nimport rego.v1\ndeny contains 1 if true\n", "allow is undefined"),
        ('package t\nimport rego.v1\nallow := "yes"\n', "boolean allow"),
        ("package t\nimport rego.v1\nallow := true\ndeny := 3\n", "not a set of messages"),
        ("import rego.v1\nallow := true\n", "package"),
    ],
)
def test_every_engine_failure_is_an_engine_error(policy: str, match: str) -> None:
    with pytest.raises(EngineError, match=match):
        evaluate(policy, "p.rego", {})


def test_allow_with_a_denial_is_not_allowed() -> None:
    got = evaluate(
        'package t\nimport rego.v1\nallow := true\ndeny contains "no" if true\n', "p.rego", {}
    )
    assert got.allow is True and got.deny == ("no",) and not got.allowed


def test_package_is_read_past_comments() -> None:
    assert package_of("# a comment\n\npackage accord.gate\n", "p") == "accord.gate"


def test_cli_exit_2_on_a_policy_that_does_not_parse(tmp_path) -> None:
    (tmp_path / "m.json").write_text("{}")
    (tmp_path / "bad.rego").write_text("package t\nimport rego.v1\nallow if {\n")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yaml").write_text("version: 1\n")
    code, out, err = run_cli(
        ["gate", "m.json", "--policy", "bad.rego", "--model", "policies"], cwd=tmp_path
    )
    assert code == 2 and out == ""
    assert "cannot evaluate" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
