"""A governance tag a console set on a whole table, schema or database, or that reached a column
by propagation, is reported (issue 41, item 2), with a least-privilege reader.

Snowflake (docs.snowflake.com/en/user-guide/object-tagging/inheritance: a descendant inherits
its ancestors' tags, the nearest setting wins; user-guide/object-tagging/propagation;
sql-reference/functions/tag_references_all_columns: ``LEVEL`` and ``APPLY_METHOD`` INHERITED /
PROPAGATED; user-guide/tag-based-masking-policies: a tag's masking policy masks every column
that carries the tag). On main a table-level console tag was only listed (drift exit 0), and
the stand-in could not express a schema or database tag, or a propagated one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.model.validate import load_project
from accord.sandbox.standins.snowflake import Session
from accord.targets import lower_all
from tests.cli import run_cli
from tests.live_helpers import ROOT, SNOWFLAKE_READER, Platforms, snowflake_reader

TAG = "GOVERNANCE.POLICIES.ACCORD_MASK_FREE_TEXT"
T = "DISCOVERY.ASSAYS.RESULTS"


@pytest.fixture
def tagged(platforms: Platforms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """policies/ with ``style: tag`` deployed; the reader holds the README's grants only."""
    d = tmp_path / "tag"
    shutil.copytree(ROOT / "policies", d)
    p = d / "platforms.yaml"
    schema = "governance_schema: GOVERNANCE.POLICIES"
    p.write_text(p.read_text().replace(schema, f"{schema}\n    style: tag"))
    plans = tmp_path / "migrations"
    assert run_cli(["plan", str(d), "--base", "live:snowflake", "--out", str(plans)])[0] == 0
    code, out, err = run_cli(
        ["migrate", "apply", "--platform", "snowflake", "--plans", str(plans), "--policies", str(d)]
    )
    assert code == 0, out + err
    snowflake_reader(platforms.snowflake, lower_all(load_project(d))["snowflake"])
    monkeypatch.setenv("SNOWFLAKE_ROLE", SNOWFLAKE_READER)
    assert drift(d)[0] == 0  # clean before the console
    return d


def drift(d: Path) -> tuple[int, list[dict[str, Any]]]:
    code, out, err = run_cli(["drift", str(d), "--platform", "snowflake", "--format", "json"])
    assert code in (0, 1), err
    return code, json.loads(out)["findings"]


def acc702(findings: list[dict[str, Any]]) -> list[str]:
    return [f["message"] for f in findings if f["rule"] == "ACC702"]


def result_value(platforms: Platforms) -> str:
    """RESULT_VALUE of the seeded row, as BENCH_CHEMIST (granted ONC-101, masked) reads it."""
    sf = platforms.snowflake
    sf.seed_rows(T, [{"PROGRAMME_CODE": "ONC-101", "RESULT_VALUE": "42.1", "NOTES": "n"}])
    rows = sf.execute_as(Session("u", primary="BENCH_CHEMIST"), f"SELECT RESULT_VALUE FROM {T}")
    return str(rows[1][0][0])


@pytest.mark.parametrize(
    ("statement", "where", "level"),
    [
        (f"ALTER TABLE {T} SET TAG {TAG} = 'free_text'", f"table {T}", "TABLE"),
        (f"ALTER SCHEMA DISCOVERY.ASSAYS SET TAG {TAG} = 'free_text'", "schema DISCOVERY.ASSAYS", "SCHEMA"),
        (f"ALTER DATABASE DISCOVERY SET TAG {TAG} = 'free_text'", "database DISCOVERY", "DATABASE"),
    ],
)  # fmt: skip
def test_a_governance_tag_set_above_the_column_is_acc702(
    tagged: Path, platforms: Platforms, statement: str, where: str, level: str
) -> None:
    """A console sets accord's governance tag on the table, its schema or its database: every
    column under it inherits the tag, and the tag's masking policy now masks RESULT_VALUE,
    which the model leaves in the clear. Drift reports it where it is set (ACC702), naming the
    columns it reaches."""
    assert result_value(platforms) == "42.1"  # in the clear before
    platforms.snowflake.execute(statement)
    assert result_value(platforms) != "42.1"  # the inherited tag's mask applies
    code, findings = drift(tagged)
    (said,) = [m for m in acc702(findings) if where in m]
    assert code == 1
    assert f"tag {TAG} = 'free_text' is set on {where} and inherited (LEVEL {level})" in said
    assert f"{T}.RESULT_VALUE" in said
    assert f"{T}.NOTES" not in said  # the model tags NOTES so itself


def test_a_propagated_governance_tag_is_acc702(tagged: Path, platforms: Platforms) -> None:
    """A tag that reached RESULT_VALUE by propagation (APPLY_METHOD PROPAGATED) is the column's
    own in TAG_REFERENCES_ALL_COLUMNS' LEVEL but not the model's: ACC702, said as propagated."""
    platforms.snowflake.propagate_tag(T, "RESULT_VALUE", TAG, "free_text")
    rows = platforms.snowflake.execute(
        f"SELECT LEVEL, APPLY_METHOD FROM TABLE(DISCOVERY.INFORMATION_SCHEMA."
        f"TAG_REFERENCES_ALL_COLUMNS('{T}', 'table')) WHERE COLUMN_NAME = 'RESULT_VALUE'"
    )[1]
    assert rows == [("COLUMN", "PROPAGATED")]
    code, findings = drift(tagged)
    (said,) = acc702(findings)
    assert code == 1 and f"reaches {T}.RESULT_VALUE by propagation" in said


def test_the_nearest_setting_wins_and_a_column_s_own_tag_is_not_reported(
    tagged: Path, platforms: Platforms
) -> None:
    """A schema tag whose value the column's own (the model's) overrides is not the column's:
    only the columns it reaches that the model does not tag so are named."""
    platforms.snowflake.execute(f"ALTER SCHEMA DISCOVERY.ASSAYS SET TAG {TAG} = 'other'")
    rows = platforms.snowflake.execute(
        f"SELECT COLUMN_NAME, TAG_VALUE, LEVEL FROM TABLE(DISCOVERY.INFORMATION_SCHEMA."
        f"TAG_REFERENCES_ALL_COLUMNS('{T}', 'table')) WHERE TAG_NAME = 'ACCORD_MASK_FREE_TEXT' "
        "ORDER BY 1"
    )[1]
    assert ("NOTES", "free_text", "COLUMN") in rows  # its own wins
    assert ("RESULT_VALUE", "other", "SCHEMA") in rows
    code, findings = drift(tagged)
    (said,) = acc702(findings)
    assert code == 1 and f"{T}.RESULT_VALUE" in said and f"{T}.NOTES" not in said
