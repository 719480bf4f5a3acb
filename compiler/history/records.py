"""The shapes of ``plan.json`` and of a ledger record, as pydantic models, and the checks that
a plan is complete: everything ``accord migrate`` reads from disk is validated here before
anything runs from it, and refused with ``file:line:column`` when it does not validate.

A plan directory is complete when its ``plan.json`` validates, names itself after its
directory, refers only to stage files inside it that exist, has groups whose members are
stages of the plan (and stages whose group lists them), and is listed with its checksum in
the directory's ``manifest.json``, which accord writes in the same atomic step.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.core.jsonfile import locate_key, read_json

Sha = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
#: a stage id, a group id, a plan id: plain names, never a path
Id = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,1023}$")]
#: a file of the plan directory: a plain name ending in .sql, never a path out of it
FileName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}\.sql$")]
Short = Annotated[str, StringConstraints(max_length=4096)]


class _Open(BaseModel):
    # later versions of accord may add keys: those are kept out of the way, never trusted
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class StageRecord(_Open):
    id: Id
    platform: Literal["snowflake", "databricks"]
    group: Id | None = None
    file: FileName
    sha256: Sha
    verify: FileName
    verify_sha256: Sha
    rollback: FileName
    rollback_sha256: Sha
    #: prepare, apply, cutover, handover or retire (compiler/plan/model.py); absent in plans
    #: written before it was recorded
    kind: Literal["prepare", "apply", "cutover", "handover", "retire"] | None = None


class GroupRecord(_Open):
    id: Id
    stages: list[Id] = Field(min_length=1, max_length=1000)


class PlanDocument(_Open):
    format: Literal[1]
    id: Id
    base_fingerprint: Short
    head_fingerprint: Short
    groups: list[GroupRecord] = Field(max_length=10_000)
    stages: list[StageRecord] = Field(max_length=10_000)


class LedgerRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    plan: Id
    stage: Id
    platform: Literal["snowflake", "databricks"]
    status: Literal["applied", "failed", "rolled_back"]
    at: Short
    sha256: Sha


def _errors(err: ValidationError, text: str, name: str, what: str) -> list[Diagnostic]:
    out = []
    for e in err.errors(include_url=False):
        path = tuple(e["loc"])
        dotted = ".".join(str(p) for p in path) or "top level"
        message = str(e["msg"])
        out.append(Diagnostic(locate_key(text, name, path), f"{what}: {dotted}: {message}"))
    return out


def check_plan(data: Any, text: str, name: str, directory: Path) -> PlanDocument:
    """The validated plan document of ``directory``, or InputError."""
    try:
        plan = PlanDocument.model_validate(data)
    except ValidationError as err:
        raise InputError(_errors(err, text, name, "not an accord plan")) from None
    problems: list[Diagnostic] = []

    def bad(path: tuple[Any, ...], message: str) -> None:
        problems.append(Diagnostic(locate_key(text, name, path), message))

    if plan.id != directory.name:
        bad(("id",), f"plan id {plan.id!r} is not its directory's name {directory.name!r}")
    ids = [s.id for s in plan.stages]
    for i, stage in enumerate(plan.stages):
        if ids.index(stage.id) != i:
            bad(("stages", i, "id"), f"stage {stage.id!r} is listed twice")
        for key in ("file", "verify", "rollback"):
            path = directory / getattr(stage, key)
            if not path.is_file() or path.is_symlink():
                bad(("stages", i, key), f"stage {stage.id}: {path.name} is missing")
    groups = {g.id: g for g in plan.groups}
    for i, group in enumerate(plan.groups):
        for member in group.stages:
            if member not in ids:
                bad(("groups", i, "stages"), f"group {group.id!r}: {member!r} is no stage")
            elif plan.stages[ids.index(member)].group != group.id:
                bad(("groups", i, "stages"), f"group {group.id!r}: {member!r} is not in it")
    for i, stage in enumerate(plan.stages):
        if stage.group is not None and (
            stage.group not in groups or stage.id not in groups[stage.group].stages
        ):
            bad(("stages", i, "group"), f"stage {stage.id}: group {stage.group!r} does not list it")
    problems += _manifest_problems(directory, text, name)
    if problems:
        raise InputError(problems)
    return plan


def _manifest_problems(directory: Path, text: str, name: str) -> list[Diagnostic]:
    """A plan is complete only when the manifest written with it lists plan.json with the
    checksum of what is on disk."""
    manifest = directory / "manifest.json"
    where = Location(name, 1, 1)
    if not manifest.is_file():
        return [Diagnostic(where, "incomplete plan: no manifest.json beside it")]
    data, _ = read_json(manifest, "manifest")
    files = data.get("files") if isinstance(data, dict) else None
    listed = {
        f.get("path"): f.get("sha256")
        for f in (files if isinstance(files, list) else [])
        if isinstance(f, dict)
    }
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if listed.get("plan.json") != digest:
        return [
            Diagnostic(
                where, "plan.json does not match the checksum in its manifest.json (edited?)"
            )
        ]
    return []


def check_record(data: Any, where: Location) -> dict[str, str]:
    """The fields of one ledger record, or InputError at ``where``."""
    if not isinstance(data, dict):
        raise InputError(Diagnostic(where, "a ledger record is a JSON object"))
    try:
        record = LedgerRecord.model_validate(data)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first["loc"])
        if first["type"] == "missing" or (first["type"] == "string_type"):
            message = (
                "a ledger record needs the string fields plan, stage, platform, status, at, "
                f"sha256 ({field}: {first['msg']})"
            )
        else:
            message = f"ledger record: {field}: {first['msg']}"
        raise InputError(Diagnostic(where, message)) from None
    return record.model_dump()
