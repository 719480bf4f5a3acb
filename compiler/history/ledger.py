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
import os
import re
from dataclasses import dataclass
from pathlib import Path

from accord.compiler.core.errors import Location, UsageError
from accord.compiler.core.filelock import ledger_lock as ledger_lock
from accord.compiler.core.jsonfile import decode, loads, read_bytes, read_json
from accord.compiler.core.secrets import redact

LEDGER = "ledger.jsonl"
PLAN_FILE = "plan.json"
STATUSES = ("applied", "failed", "rolled_back")
_FIELDS = ("plan", "stage", "platform", "status", "at", "sha256")
#: a plan directory: a number and a slug (never hidden: ``.``-names are plans being written)
PLAN_DIR = re.compile(r"^(?P<number>\d{4})_[a-z0-9][a-z0-9-]*$")
_NUMBERED = re.compile(r"^\d{4}_")
MAX_PLAN_BYTES = 16 * 1024 * 1024
MAX_LEDGER_BYTES = 64 * 1024 * 1024


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
    #: the stage's kind (prepare, apply, cutover, handover, retire), "" when not recorded
    kind: str = ""


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
    """Every complete plan under ``plans_dir``, in number order: a directory named
    ``NNNN_<slug>`` holding a ``plan.json`` that validates, whose ``manifest.json`` (written
    last, with the plan) lists it with its checksum, and whose stage files all exist. Hidden
    directories (a plan being written, or one an interrupted run left) are never plans."""
    root = Path(plans_dir)
    if not root.is_dir():
        raise UsageError(f"{root}: no such plans directory")
    out = []
    for child in sorted(root.iterdir()):
        if child.name.startswith(".") or not PLAN_DIR.match(child.name):
            if _NUMBERED.match(child.name) and (child / PLAN_FILE).is_file():
                # a plan under a name accord cannot have written: never skipped in silence
                raise UsageError(f"{child}: not a plan directory name (NNNN_<slug>, lower case)")
            continue
        path = child / PLAN_FILE
        if child.is_dir() and not child.is_symlink() and path.is_file():
            out.append(_read_plan(child, path))
    return out


def _read_plan(directory: Path, path: Path) -> PlanInfo:
    from accord.compiler.history.records import check_plan

    data, text = read_json(path, "plan", MAX_PLAN_BYTES)
    document = check_plan(data, text, str(path), directory)
    stages = tuple(
        StageInfo(
            plan=document.id,
            id=s.id,
            platform=s.platform,
            group=s.group,
            file=directory / s.file,
            sha256=s.sha256,
            verify=directory / s.verify,
            verify_sha256=s.verify_sha256,
            rollback=directory / s.rollback,
            rollback_sha256=s.rollback_sha256,
            kind=s.kind or "",
        )
        for s in document.stages
    )
    groups = {g.id: tuple(g.stages) for g in document.groups}
    return PlanInfo(document.id, stages, groups)


def read_ledger(path: str | Path) -> list[Record]:
    """The ledger's records in file order; a missing ledger is an empty one. Every line is
    validated (a JSON object with the string fields of a record, a known status); the first
    that is not is refused with its ``file:line:column``."""
    from accord.compiler.history.records import check_record

    ledger = Path(path)
    if not ledger.exists() and not ledger.is_symlink():
        return []
    text = decode(read_bytes(ledger, "ledger", MAX_LEDGER_BYTES), str(ledger), "ledger")
    records = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        data = loads(line, str(ledger), "ledger record", first_line=number)
        fields = check_record(data, Location(str(ledger), number, 1))
        records.append(Record(**fields, line=number))
    return records


def append_record(path: str | Path, record: dict[str, str]) -> None:
    """Append one record as one line. A ledger whose last line has no newline (edited by
    hand) gets one first, so the new record never runs into the old one."""
    ledger = Path(path)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    # a stage's error may quote what a platform said: scrubbed, as every report accord writes
    line = redact(json.dumps({f: record[f] for f in _FIELDS})) + "\n"
    fd = os.open(ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(ledger, "rb") as fh:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    line = "\n" + line
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


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
