"""Every platform and every kind of catalog object held to the same checks.

As sqlglot holds each dialect to ``validate_identity``, every :class:`~targets.platform.Platform`
must bind each of its parts, render every kind it lowers (creating, dropping or detaching,
re-reading the SQL it wrote), and, on its stand-in, read back exactly what it deployed and
drift clean. Every kind of :mod:`targets.objects` must have its row in :mod:`targets.kinds`,
and be rendered and read back by at least one platform. Adding a kind or a platform without
its row, its parts or its spelling fails here.
"""

from __future__ import annotations

import json
import shutil
import typing
from pathlib import Path

import pytest

from accord.compiler.core.platforms import FACTS, PLATFORMS
from accord.compiler.model.scaffold import SKELETONS, Choices, check_choices, scaffold
from accord.compiler.model.validate import load_project
from accord.compiler.sqlscan import scan
from accord.targets import lower_all, sql
from accord.targets.base import Target
from accord.targets.identity import describe_object, identity, is_definition
from accord.targets.inspect import Reader, object_json
from accord.targets.kinds import KINDS, kind
from accord.targets.migration import MigrationSQL
from accord.targets.objects import CatalogObject
from accord.targets.platform import Platform, platform
from accord.targets.read import Placements
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.live_helpers import Platforms

#: every style of every platform (the format's ``platforms.<p>.style``)
STYLES = {"snowflake": ("column", "tag"), "databricks": ("table", "abac")}


def estate(tmp: Path, styles: dict[str, str]) -> Path:
    """policies/ with each platform's style set."""
    d = tmp / "-".join(f"{p}-{s}" for p, s in sorted(styles.items()))
    if d.exists():
        return d
    shutil.copytree(ROOT / "policies", d)
    p = d / "platforms.yaml"
    text = p.read_text()
    text = text.replace("style: table", f"style: {styles['databricks']}")
    schema = "governance_schema: GOVERNANCE.POLICIES"
    text = text.replace(schema, f"{schema}\n    style: {styles['snowflake']}")
    p.write_text(text)
    return d


def lowered(tmp: Path, name: str, style: str) -> list[CatalogObject]:
    other = {p: STYLES[p][0] for p in PLATFORMS}
    d = estate(tmp, {**other, name: style})
    return list(lower_all(load_project(d))[name])


# --------------------------------------------------------------------------------------------
# the kinds


def test_every_kind_of_catalog_object_has_one_row() -> None:
    classes = set(typing.get_args(CatalogObject))
    assert set(KINDS) == classes
    for cls, row in KINDS.items():
        assert row.cls is cls and row.role in ("definition", "placement")
        assert row.plural and row.check is not None
        fields = {f for f in cls.__dataclass_fields__}
        assert set(row.model_only) <= fields, cls.__name__
        assert "source" in fields and not cls.__dataclass_fields__["source"].compare


def test_provenance_is_never_identity_fingerprint_nor_json(tmp_path: Path) -> None:
    from dataclasses import replace

    from accord.targets.identity import fingerprint

    objects = lowered(tmp_path, "snowflake", "column")
    assert all(o.source for o in objects), [o for o in objects if not o.source]
    for o in objects:
        moved = replace(o, source=("datasets", "renamed"))
        assert moved == o and identity(moved) == identity(o)
        assert fingerprint(moved) == fingerprint(o)
        assert "source" not in object_json(o, "snowflake")


def test_every_kind_is_lowered_by_some_platform(tmp_path: Path) -> None:
    seen = {
        type(o)
        for name in PLATFORMS
        for style in STYLES[name]
        for o in lowered(tmp_path, name, style)
    }
    assert seen == set(KINDS), f"kinds no platform lowers: {set(KINDS) - seen}"


# --------------------------------------------------------------------------------------------
# the platforms


@pytest.mark.parametrize("name", PLATFORMS)
def test_a_platform_binds_its_facts_and_every_part(name: str) -> None:
    p = platform(name)
    assert isinstance(p, Platform) and p.name == name and p.facts is FACTS[name]
    target = p.target()
    assert isinstance(target, Target) and target.facts is p.facts and target.platform == name
    assert target.member_function == p.facts.member_function
    assert target.string_type == p.facts.string_type
    migrations = p.migrations()
    assert isinstance(migrations, MigrationSQL)
    for method in ("drop", "detach", "revoke", "policy_check"):
        assert getattr(type(migrations), method) is not getattr(MigrationSQL, method), method
    reader = p.reader()
    assert issubclass(reader, Reader)
    for method in ("read", "check_reader", "inheritors"):
        assert method in reader.__dict__, f"{name} reader lacks {method}"
    assert set(reader.EDGE_WORDS) == {"present", "absent", "add", "remove"}
    assert callable(getattr(p.terraform(), "add_all", None))
    with pytest.raises(KeyError):
        platform("oracle")


@pytest.mark.parametrize(
    ("name", "style"), [(p, s) for p in PLATFORMS for s in STYLES[p]], ids=lambda v: v
)
def test_a_platform_spells_and_reads_back_every_kind_it_lowers(
    name: str, style: str, tmp_path: Path
) -> None:
    """Each object renders to the statements its target says, parses back, and has its drop or
    detach; each placement written as SQL is read back (targets/read.py) as it was lowered."""
    p = platform(name)
    target, migrations = p.target(), p.migrations()
    objects = lowered(tmp_path, name, style)
    placements = Placements(name)
    for obj in objects:
        assert kind(obj).describe(obj, name) == describe_object(obj, name)
        rendered = target.render_object(obj)
        if rendered is None:
            continue  # an object another tool writes (none of accord's own today)
        _file, text = rendered
        # the count the target promises (a salt function's placeholder is not SQL until filled)
        assert sql.statement_count(text, name) == target.expected_statements(obj), obj
        for stmt in scan(text, f"{name}.sql", name).statements:
            placements.read(stmt)
        undo = migrations.drop(obj) if is_definition(obj) else migrations.detach(obj)
        # a statement, or (an account-level Databricks governed tag) why there is none
        undone = scan(undo, f"{name}.sql", name).statements
        assert undone or undo.startswith("-- "), f"{name} cannot undo {type(obj).__name__}"
    read_back = {identity(o): o for o in placements.objects()}
    for obj in objects:
        if is_definition(obj):
            continue
        found = read_back.get(identity(obj))
        assert found is not None, f"{name} did not read back {describe_object(obj, name)}"
        assert identity(found) == identity(obj)


# --------------------------------------------------------------------------------------------
# on the stand-ins: deploy, read back, drift clean


@pytest.mark.parametrize(
    ("name", "style"), [(p, s) for p in PLATFORMS for s in STYLES[p]], ids=lambda v: v
)
def test_a_platform_reads_back_what_it_deployed(
    name: str, style: str, platforms: Platforms, tmp_path: Path
) -> None:
    other = {p: STYLES[p][0] for p in PLATFORMS}
    d = estate(tmp_path, {**other, name: style})
    want_objects = lower_all(load_project(d))[name]
    if name == "databricks" and style == "abac":  # the account admin creates governed tags
        from accord.targets.objects import Tag

        for tag in want_objects.of(Tag):
            platforms.databricks.govern_tag(tag.name, tag.allowed_values, tag.comment)
    plans, on = tmp_path / "migrations", ["--platform", name]
    code, out, err = run_cli(["plan", str(d), "--base", f"live:{name}", "--out", str(plans)])
    assert code == 0, out + err
    code, out, err = run_cli(["migrate", "apply", *on, "--plans", str(plans), "--policies", str(d)])
    assert code == 0, out + err
    code, out, err = run_cli(["introspect", *on, str(d), "--format", "json"])
    assert code == 0, err
    live = json.loads(out)
    want = sorted(json.dumps(object_json(o, name), sort_keys=True) for o in want_objects)
    assert sorted(json.dumps(o, sort_keys=True) for o in live["objects"]) == want
    assert live["coverage"]["complete"] is True
    assert run_cli(["drift", str(d), *on])[0] == 0


@pytest.mark.parametrize("name", PLATFORMS)
def test_accord_init_writes_a_skeleton_for_every_platform_alone(name: str, tmp_path: Path) -> None:
    """Every platform has its row of the init skeletons (compiler/model/scaffold.py), and a
    repository that chose that platform alone gets a model whose examples, uncommented, load
    as a model of that platform alone."""
    assert set(SKELETONS) == set(PLATFORMS)
    schema = {"snowflake": "GOVERNANCE.POLICIES", "databricks": "governance.policies"}
    choices = Choices(**{p: (schema[p] if p == name else None) for p in PLATFORMS})
    assert check_choices(choices) == []
    files = scaffold(choices, {})
    written = tmp_path / "policies"
    written.mkdir()
    for rel, text in files.items():
        if rel.startswith("policies/") and rel.endswith(".yaml"):
            lines = text.splitlines()
            if "# Example (uncomment and edit):" in lines:  # the example, uncommented
                at = lines.index("# Example (uncomment and edit):") + 2
                lines = [*lines[:at], *(line.removeprefix("# ") for line in lines[at:])]
            (written / rel.removeprefix("policies/")).write_text("\n".join(lines) + "\n")
    project = load_project(str(written))
    assert {d.platform for d in project.model.datasets.values()} == {name}
