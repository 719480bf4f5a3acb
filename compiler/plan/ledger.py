"""The migration ledger and what it says about the plans: applied, pending, failed, and the
cutover groups applied on some platforms and not all.

The ledger is a JSON-lines file, one record per stage event::

    {"plan": "0001_...", "stage": "03_snowflake_cutover_subject", "platform": "snowflake",
     "status": "applied", "at": "2026-11-03T10:15:00+00:00", "sha256": "..."}

``status`` is ``applied``, ``failed`` or ``rolled_back``; the last record of a stage wins. A
stage with no record (or rolled back) is pending. This module reads plans and the ledger
only: it is light enough for ``accord lint`` (rule ACC601).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import Diagnostic, InputError, Location, UsageError

LEDGER = "ledger.jsonl"
PLAN_FILE = "plan.json"
STATUSES = ("applied", "failed", "rolled_back")
_FIELDS = ("plan", "stage", "platform", "status", "at", "sha256")


@dataclass(frozen=True)
class Record:
    plan: str
    stage: str
    platform: str
    status: str
    at: str
    sha256: str
    line: int


@dataclass(frozen=True)
class StageInfo:
    plan: str
    id: str
    platform: str
    group: str | None
    file: Path
    sha256: str
    verify: Path
    verify_sha256: str
    rollback: Path
    rollback_sha256: str


@dataclass(frozen=True)
class PlanInfo:
    id: str
    stages: tuple[StageInfo, ...]
    groups: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class HalfApplied:
    plan: str
    group: str
    applied: tuple[str, ...]
    missing: tuple[str, ...]
    #: the ledger line of the group's last record
    location: Location


def default_ledger(plans: str | Path) -> Path:
    return Path(plans) / LEDGER


def read_plans(plans_dir: str | Path) -> list[PlanInfo]:
    """Every plan under ``plans_dir`` (directories holding a plan.json), in number order."""
    root = Path(plans_dir)
    if not root.is_dir():
        raise UsageError(f"{root}: no such plans directory")
    out = []
    for child in sorted(root.iterdir()):
        path = child / PLAN_FILE
        if child.is_dir() and path.is_file():
            out.append(_read_plan(child, path))
    return out


def _read_plan(directory: Path, path: Path) -> PlanInfo:
    where = Location(str(path), 1, 1)
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        stages = tuple(
            StageInfo(
                plan=data["id"],
                id=s["id"],
                platform=s["platform"],
                group=s["group"],
                file=directory / s["file"],
                sha256=s["sha256"],
                verify=directory / s["verify"],
                verify_sha256=s["verify_sha256"],
                rollback=directory / s["rollback"],
                rollback_sha256=s["rollback_sha256"],
            )
            for s in data["stages"]
        )
        groups = {g["id"]: tuple(g["stages"]) for g in data["groups"]}
        return PlanInfo(data["id"], stages, groups)
    except OSError as err:
        raise InputError(Diagnostic(where, f"cannot read plan: {err.strerror}")) from None
    except json.JSONDecodeError as err:
        raise InputError(
            Diagnostic(Location(str(path), err.lineno, err.colno), f"invalid JSON: {err.msg}")
        ) from None
    except (KeyError, TypeError) as err:
        raise InputError(Diagnostic(where, f"not an accord plan (missing {err})")) from None


def read_ledger(path: str | Path) -> list[Record]:
    """The ledger's records in file order; a missing ledger is an empty one."""
    ledger = Path(path)
    if not ledger.exists():
        return []
    try:
        lines = ledger.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise InputError(
            Diagnostic(Location(str(ledger), 1, 1), f"cannot read ledger: {err.strerror}")
        ) from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = Location(str(ledger), number, 1)
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(
                Diagnostic(Location(str(ledger), number, err.colno), f"invalid JSON: {err.msg}")
            ) from None
        if not isinstance(data, dict) or any(not isinstance(data.get(f), str) for f in _FIELDS):
            raise InputError(
                Diagnostic(where, f"a ledger record needs the string fields {', '.join(_FIELDS)}")
            )
        if data["status"] not in STATUSES:
            raise InputError(
                Diagnostic(where, f"status {data['status']!r} is not one of {', '.join(STATUSES)}")
            )
        records.append(Record(*(data[f] for f in _FIELDS), line=number))  # type: ignore[arg-type]
    return records


def append_record(path: str | Path, record: dict[str, str]) -> None:
    ledger = Path(path)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    with open(ledger, "a", encoding="utf-8", newline="\n") as fh:
        fh.write(json.dumps({f: record[f] for f in _FIELDS}) + "\n")


def latest(records: list[Record]) -> dict[tuple[str, str], Record]:
    """The last record of every (plan, stage)."""
    return {(r.plan, r.stage): r for r in records}


def stage_status(stage: StageInfo, last: dict[tuple[str, str], Record]) -> str:
    """applied, failed or pending (never applied, or rolled back)."""
    record = last.get((stage.plan, stage.id))
    if record is None or record.status == "rolled_back":
        return "pending"
    return record.status


def half_applied(plans: list[PlanInfo], records: list[Record], ledger: Path) -> list[HalfApplied]:
    last = latest(records)
    found = []
    for plan in plans:
        stages = {s.id: s for s in plan.stages}
        for group, members in sorted(plan.groups.items()):
            applied = [
                stages[m].platform for m in members if stage_status(stages[m], last) == "applied"
            ]
            if not applied or len(applied) == len(members):
                continue
            missing = [stages[m].platform for m in members if stages[m].platform not in applied]
            line = max(r.line for r in records if r.plan == plan.id and r.stage in members)
            found.append(
                HalfApplied(
                    plan.id, group, tuple(applied), tuple(missing), Location(str(ledger), line, 1)
                )
            )
    return found


def half_applied_groups(plans_dir: str | Path, ledger_path: str | Path) -> list[HalfApplied]:
    """Cutover groups that the ledger shows applied on some of their platforms and not all."""
    ledger = Path(ledger_path)
    return half_applied(read_plans(plans_dir), read_ledger(ledger), ledger)
