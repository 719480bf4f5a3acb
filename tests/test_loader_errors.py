"""Every class of invalid input is refused with file:line:column, exit 2, no traceback,
and nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from accord.compiler.core.errors import InputError
from accord.compiler.model.validate import load_project
from tests.cli import run_cli, run_process
from tests.estates import MINIMAL

# (case id, files, expected "file:line:column", expected fragment of the message)
CASES: list[tuple[str, dict[str, str | bytes], str, str]] = [
    (
        "invalid-yaml",
        {"a.yaml": "version: 1\nmasks: {email: [\n"},
        "a.yaml:3:1",
        "invalid YAML",
    ),
    (
        "duplicate-key-in-file",
        {"a.yaml": "version: 1\nprincipals:\n  x: {snowflake: X}\n  x: {snowflake: Y}\n"},
        "a.yaml:4:3",
        "duplicate key 'x': first defined at ",
    ),
    (
        "same-entry-two-files",
        {
            "a.yaml": "version: 1\nprincipals:\n  x: {snowflake: X}\n",
            "b.yaml": "principals:\n  x: {snowflake: Y}\n",
        },
        "b.yaml:2:3",
        "principals.x is defined twice: here and at ",
    ),
    (
        "tab-indentation",
        {"a.yaml": "version: 1\nprincipals:\n\tx: {snowflake: X}\n"},
        "a.yaml:3:1",
        "tab character in indentation",
    ),
    (
        "non-utf8",
        {"a.yaml": b"version: 1\nprincipals:\n  x: {snowflake: \xff}\n"},
        "a.yaml:3:18",
        "not valid UTF-8",
    ),
    (
        "non-mapping-root",
        {"a.yaml": "- version\n- 1\n"},
        "a.yaml:1:1",
        "top level of a policy file must be a mapping",
    ),
    (
        "language-tag",
        {"a.yaml": "version: 1\nprincipals: !!python/object:os.system {}\n"},
        "a.yaml:2:13",
        "tag 'tag:yaml.org,2002:python/object:os.system' is not allowed",
    ),
    (
        "merge-key-as-value",
        {"a.yaml": "version: 1\nmasks:\n  m: {strategy: <<}\n"},
        "a.yaml:3:17",
        "<< is YAML's merge key, which stands only as a key of a mapping",
    ),
    (
        "tagged-scalar-unreadable",
        {"a.yaml": "version: !!int one\n"},
        "a.yaml:1:10",
        "'one' cannot be read as int (tag 'tag:yaml.org,2002:int')",
    ),
    (
        "collection-tag-on-scalar",
        {"a.yaml": "version: 1\nmasks: !!map m\n"},
        "a.yaml:2:8",
        "'m' cannot be read as map",
    ),
    (
        "alias-bomb",
        {
            "a.yaml": "version: 1\n"
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
            "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
            "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
            "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        },
        "a.yaml:",
        "expands beyond a sane size",
    ),
    (
        "unknown-key-did-you-mean",
        {"a.yaml": MINIMAL.replace("strategy: redact", "stratgy: redact")},
        "a.yaml:14:5",
        "unknown key 'stratgy' (did you mean 'strategy'?)",
    ),
    (
        "unknown-top-level-section",
        {"a.yaml": MINIMAL + "persona:\n  x: [analyst]\n"},
        "a.yaml:26:1",
        "unknown key 'persona' (did you mean 'personas'?)",
    ),
    (
        "table-name-injection",
        {"a.yaml": MINIMAL.replace("SALES.CRM.CUSTOMERS", '"SALES.CRM.CUSTOMERS; DROP TABLE x"')},
        "a.yaml:19:12",
        "not a valid table name",
    ),
    (
        "two-part-table-name",
        {"a.yaml": MINIMAL.replace("SALES.CRM.CUSTOMERS", "CRM.CUSTOMERS")},
        "a.yaml:19:12",
        "three parts",
    ),
    (
        "unknown-principal",
        {"a.yaml": MINIMAL.replace("unmasked_for: [auditor]", "unmasked_for: [auditr]")},
        "a.yaml:15:20",
        "unknown principal 'auditr' (did you mean 'auditor'?)",
    ),
    (
        "unknown-mask",
        {"a.yaml": MINIMAL.replace("mask: email}", "mask: e_mail}")},
        "a.yaml:22:36",
        "unknown mask 'e_mail'",
    ),
    (
        "unknown-entitlement",
        {"a.yaml": MINIMAL.replace("entitlement: region", "entitlement: regions")},
        "a.yaml:20:31",
        "unknown entitlement 'regions'",
    ),
    (
        "strategy-type-mismatch",
        {"a.yaml": MINIMAL.replace("{type: VARCHAR, mask: email}", "{type: NUMBER, mask: email}")},
        "a.yaml:22:21",
        "applies to string columns only",
    ),
    (
        "unknown-type",
        {"a.yaml": MINIMAL.replace("{type: VARCHAR, mask: email}", "{type: VARCHR, mask: email}")},
        "a.yaml:22:21",
        "is not a snowflake data type",
    ),
    (
        "wrong-version",
        {"a.yaml": MINIMAL.replace("version: 1", "version: 2")},
        "a.yaml:1:10",
        "version",
    ),
    (
        "no-version",
        {"a.yaml": MINIMAL.replace("version: 1\n", "")},
        "a.yaml:1:1",
        "no file declares 'version: 1'",
    ),
    (
        "suppression-without-reason",
        {
            "a.yaml": MINIMAL.replace(
                "strategy: redact", "strategy: redact\n    ignore: {ACC503: ''}"
            )
        },
        "a.yaml:15:22",
        "non-empty reason",
    ),
    (
        "suppression-unknown-rule",
        {
            "a.yaml": MINIMAL.replace(
                "strategy: redact", "strategy: redact\n    ignore: {ACC999: x}"
            )
        },
        "a.yaml:15:14",
        "unknown rule id 'ACC999'",
    ),
    (
        "expression-does-not-parse",
        {
            "a.yaml": MINIMAL.replace(
                "row_filter: {entitlement: region, column: REGION}",
                "row_filter: {expression: {snowflake: \"REGION = 'EU' OR (\"}, "
                "arguments: {REGION: VARCHAR}}",
            )
        },
        "a.yaml:20:42",
        "expression does not parse as snowflake SQL",
    ),
    (
        "expression-injection",
        {
            "a.yaml": MINIMAL.replace(
                "row_filter: {entitlement: region, column: REGION}",
                'row_filter: {expression: {snowflake: "TRUE; DROP TABLE x"}, '
                "arguments: {REGION: VARCHAR}}",
            )
        },
        "a.yaml:20:42",
        "expected exactly one expression",
    ),
    (
        "salt-option-on-redact",
        {
            "a.yaml": MINIMAL.replace(
                "strategy: redact", "strategy: redact\n    salt: {snowflake: env:X}"
            )
        },
        "a.yaml:14:5",
        "'salt' applies to strategy hash only",
    ),
    (
        "runtime-unquoted-number",
        {
            "a.yaml": MINIMAL
            + "surfaces:\n  agent: {platform: databricks, reads: [], runtime: 15.4}\n"
        },
        "a.yaml:27:53",
        "write the runtime as a quoted string",
    ),
]


@pytest.mark.parametrize(("case", "files", "where", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_invalid_input_is_located(write_tree, case, files, where, fragment) -> None:
    root = write_tree(files)
    with pytest.raises(InputError) as info:
        load_project(root)
    messages = [
        f"{d.location.file.split('/')[-1]}:{d.location.line}:{d.location.column}: {d.message}"
        for d in info.value.diagnostics
    ]
    assert any(m.startswith(where) and fragment in m for m in messages), messages


def test_minimal_is_valid(write_tree) -> None:
    project = load_project(write_tree({"a.yaml": MINIMAL}))
    assert project.model.datasets["customers"].governed


def test_positions_use_the_path_as_given(write_tree, tmp_path: Path) -> None:
    root = write_tree(
        {"sub/a.yaml": MINIMAL.replace("unmasked_for: [auditor]", "unmasked_for: [x]")}
    )
    with pytest.raises(InputError) as info:
        load_project(os.path.relpath(root, Path.cwd()))
    (d,) = info.value.diagnostics
    assert d.location.file == os.path.join(os.path.relpath(root, Path.cwd()), "sub", "a.yaml")


@pytest.mark.parametrize("command", ["validate", "compile"])
def test_cli_exit_2_without_traceback_and_writes_nothing(write_tree, tmp_path, command) -> None:
    root = write_tree({"a.yaml": MINIMAL.replace("mask: email}", "mask: nope}")})
    out = tmp_path / "out"
    args = [command, str(root)]
    if command == "compile":
        args += ["--out", str(out)]
    proc = run_process(args)  # the contract is about a real process: no traceback at exit
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{root}/a.yaml:22:36: datasets.customers.columns.EMAIL.mask" not in proc.stderr
    assert f"{root}/a.yaml:22:36: unknown mask 'nope'" in proc.stderr
    assert not out.exists()


def test_missing_directory_is_usage_error(tmp_path) -> None:
    proc = run_cli(["validate", str(tmp_path / "nope")])
    assert proc.returncode == 2
    assert "no such policy directory" in proc.stderr
    assert "Traceback" not in proc.stderr
