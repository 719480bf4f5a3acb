"""migrations/ holds exactly what `make migrations` generates: CI fails while it is stale."""

from __future__ import annotations

from pathlib import Path

from accord.compiler.history.ledger import read_ledger, read_plans
from accord.compiler.plan.write import existing_plans
from tests.conftest import ROOT
from tests.plan_helpers import reference_plan

MIGRATIONS = ROOT / "migrations"


def files(directory: Path) -> dict[str, str]:
    return {
        p.relative_to(directory).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_committed_plans_match_a_regeneration(tmp_path: Path) -> None:
    fresh = reference_plan(tmp_path)
    committed = existing_plans(MIGRATIONS)
    assert [p.name for p in committed.values()] == [fresh.name], (
        "migrations/ is stale: run `make migrations` and review the diff"
    )
    on_disk = files(committed[1])
    for rel, text in files(fresh).items():
        assert on_disk.get(rel) == text, (
            f"migrations/{fresh.name}/{rel} is stale: run `make migrations`"
        )
    assert sorted(on_disk) == sorted(files(fresh))


def test_committed_ledger_is_readable() -> None:
    plans = read_plans(MIGRATIONS)
    known = {(p.id, s.id) for p in plans for s in p.stages}
    assert all((r.plan, r.stage) in known for r in read_ledger(MIGRATIONS / "ledger.jsonl"))
