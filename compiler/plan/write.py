"""Lay a plan out on disk: ``<out>/<NNNN>_<slug>/plan.json`` and three SQL files per stage.

``plan.json`` is the reviewed plan as data: the fingerprints of the base and head models, the
cutover groups, and every stage with its platform, group, requirements, and its statement,
verification and rollback files with their SHA-256 (``accord migrate apply`` runs exactly
these files and refuses one that changed). Everything is deterministic: no timestamps,
sorted keys; the same two models give the same bytes. ``NNNN`` is one more than the highest
existing plan, except that planning the same base and head again rewrites that plan in place.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import textwrap
from pathlib import Path

from accord.compiler.core.errors import InputError, UsageError
from accord.compiler.core.jsonfile import read_json
from accord.compiler.core.outdir import recover_all, write_tree
from accord.compiler.history.ledger import (
    MAX_PLAN_BYTES,
    PLAN_DIR,
    PLAN_FILE,
    default_ledger,
    ledger_lock,
    read_ledger,
)
from accord.compiler.lint.engine import lint_sql
from accord.compiler.lint.inputs.sqlfiles import scan_sql
from accord.compiler.model.salts import PLACEHOLDER
from accord.compiler.plan.model import Group, Plan, Stage, why
from accord.compiler.plan.steps import Step
from accord.targets.objects import (
    AbacPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)
from accord.targets.platform import platform as platform_named
from accord.targets.sql import comment_text

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,59}$")
FORMAT = 1

_CATEGORIES = (
    ("grants", (MappingTable,)),
    ("salts", (SaltFunction,)),
    ("filters", (RowFilterPolicy, RowFilterAttachment)),
    ("masks", (MaskPolicy, MaskAttachment)),
    ("tags", (Tag, TagAssignment)),
    ("abac", (AbacPolicy,)),
)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def existing_plans(out: Path) -> dict[int, Path]:
    """Plan directories under ``out`` by number."""
    if not out.is_dir():
        return {}
    found = {}
    for child in sorted(out.iterdir()):
        m = PLAN_DIR.match(child.name)
        if m and (child / PLAN_FILE).is_file():
            found[int(m.group("number"))] = child
    return found


def slug_of(plan: Plan) -> str:
    """A short name from what the plan changes: its cutover groups, then the kinds of object."""
    parts = [f"{g.id}-cutover" for g in plan.groups]
    kinds = {type(c.obj) for d in plan.diffs.values() for c in d.changes}
    parts += [name for name, types in _CATEGORIES if kinds & set(types)]
    if any(d.style for d in plan.diffs.values()):
        parts.append("style")
    if not parts:  # no catalog change: what a plan from live adds (REVOKEs of salt grants)
        revokes = any("grants revoked" in c for s in plan.stages for c in s.changes)
        parts.append("salt-grants-revoked" if revokes else "changes")
    slug = "-".join(parts).replace("_", "-")
    while len(slug) > 60 and "-" in slug:
        slug = slug.rsplit("-", 1)[0]
    if len(slug) > 60:  # one long word (a domain name without '_'): cut it, and say which
        slug = f"{slug[:51]}-{hashlib.sha256(slug.encode()).hexdigest()[:8]}"
    return slug


#: the longest stage file name written (the filesystem's limit is 255 bytes)
MAX_FILE_STEM = 100


def file_stem(stage_id: str) -> str:
    """The name stage files are written under: the stage id, or, when that is too long for a
    file name, its start and a digest of the whole (deterministic, and distinct per id)."""
    if len(stage_id.encode("utf-8")) <= MAX_FILE_STEM:
        return stage_id
    return f"{stage_id[: MAX_FILE_STEM - 17]}-{hashlib.sha256(stage_id.encode()).hexdigest()[:16]}"


def write_plan(plan: Plan, out: str, name: str | None = None) -> tuple[str, list[str]]:
    """Write ``plan`` under ``out``; return its id and the files written (relative to out).

    The plan directory appears atomically (``write_tree``: staged in a hidden sibling, renamed
    into place) under the lock of the plans directory's ledger, so no run of ``migrate apply``
    sees it half written. A plan whose stages appear in the ledger is immutable: planning the
    same base and head again leaves it as it is when nothing changed and is refused otherwise."""
    if name is not None and not SLUG.match(name):
        raise UsageError(f"--name {name!r}: use lower-case letters, digits and '-' (max 60)")
    root = Path(out)
    if root.is_symlink() or (root.exists() and not root.is_dir()):
        raise UsageError(f"--out {out}: exists and is not a directory")
    existed = root.exists()
    try:
        with ledger_lock(default_ledger(root)):
            return _write_plan(plan, root, name)
    except BaseException:
        if not existed and root.is_dir() and not any(root.iterdir()):
            root.rmdir()  # nothing written: not even the directory
        raise


def _write_plan(plan: Plan, root: Path, name: str | None) -> tuple[str, list[str]]:
    recover_all(root)  # what a killed plan left: a plan moved aside is put back first
    plans = existing_plans(root)
    ledger = default_ledger(root)
    recorded = {r.plan: r.line for r in read_ledger(ledger)}
    same = [
        (n, d)
        for n, d in plans.items()
        if _fingerprints(d) == (plan.base_fingerprint, plan.head_fingerprint)
    ]
    number = same[0][0] if same else max(plans, default=0) + 1
    plan_id = f"{number:04d}_{name or slug_of(plan)}"
    files = render_plan(plan, plan_id)
    for _, old in same:
        if old.name in recorded:
            if old.name == plan_id and _unchanged(old, files):
                return plan_id, []
            raise UsageError(
                f"{old}: its stages appear in {ledger} (line {recorded[old.name]}), so the plan "
                "is immutable: it is never rewritten, renamed or deleted. Plan the next change "
                "from the model as applied (--base) instead"
            )
    written = write_tree(root / plan_id, files)
    for _, old in same:
        if old.name != plan_id:
            shutil.rmtree(old)
    return plan_id, [f"{plan_id}/{f}" for f in written]


def _unchanged(directory: Path, files: dict[str, str]) -> bool:
    for rel, text in files.items():
        try:
            if (directory / rel).read_text(encoding="utf-8") != text:
                return False
        except (OSError, UnicodeDecodeError):
            return False
    return True


def _fingerprints(directory: Path) -> tuple[str, str] | None:
    try:
        data, _ = read_json(directory / PLAN_FILE, "plan", MAX_PLAN_BYTES)
        return (data["base_fingerprint"], data["head_fingerprint"])
    except (InputError, KeyError, TypeError):
        return None


def render_plan(plan: Plan, plan_id: str) -> dict[str, str]:
    """Every file of the plan directory: name -> text."""
    files: dict[str, str] = {}
    entries = []
    groups = {g.id: g for g in plan.groups}
    restored = _restored_findings(plan)
    for stage in plan.stages:
        texts = {
            "file": _stage_sql(plan_id, stage, groups),
            "verify": _verify_sql(plan_id, stage),
            "rollback": _rollback_sql(plan_id, stage, restored),
        }
        stem = file_stem(stage.id)
        names = {
            "file": f"{stem}.sql",
            "verify": f"{stem}.verify.sql",
            "rollback": f"{stem}.rollback.sql",
        }
        for role, text in texts.items():
            files[names[role]] = text
        entries.append(
            {
                "id": stage.id,
                "platform": stage.platform,
                "kind": stage.kind,
                "group": stage.group,
                "requires": stage.requires,
                "changes": stage.changes,
                "statements": len(stage.steps),
                "file": names["file"],
                "sha256": sha256(texts["file"]),
                "verify": names["verify"],
                "verify_sha256": sha256(texts["verify"]),
                "rollback": names["rollback"],
                "rollback_sha256": sha256(texts["rollback"]),
            }
        )
    document = {
        "format": FORMAT,
        "id": plan_id,
        "base_fingerprint": plan.base_fingerprint,
        "head_fingerprint": plan.head_fingerprint,
        "changes": {
            p: [c.describe(p) for c in d.changes] for p, d in plan.diffs.items() if d.changes
        },
        "style": {p: list(d.style) for p, d in plan.diffs.items() if d.style},
        "groups": [
            {
                "id": g.id,
                "domains": list(g.domains),
                "platforms": list(g.platforms),
                "stages": g.stages,
                "changes": g.changes,
            }
            for g in plan.groups
        ],
        "outside_catalogs": plan.outside,
        "stages": entries,
    }
    files[PLAN_FILE] = json.dumps(document, indent=2, sort_keys=True) + "\n"
    return files


# --------------------------------------------------------------------------------------------
# SQL files


def _comment(text: str, indent: str = "") -> list[str]:
    return [
        "--" + (" " + line if line else "")
        for line in textwrap.wrap(
            comment_text(text),
            width=94,
            initial_indent=indent,
            subsequent_indent=indent or "",
            break_on_hyphens=False,
        )
    ] or ["--"]


def _paragraph(text: str) -> list[str]:
    """A comment paragraph after an empty comment line."""
    return ["--", *_comment(text)]


def _bullets(items: list[str]) -> list[str]:
    out = []
    for item in items:
        wrapped = textwrap.wrap(comment_text(item), width=90, break_on_hyphens=False) or [""]
        out.append(f"--   - {wrapped[0]}")
        out += [f"--     {w}" for w in wrapped[1:]]
    return out


def _header(plan_id: str, stage: Stage, title: str) -> list[str]:
    lines = [f"-- accord migration {plan_id}: {title}"]
    lines += _comment(
        f"Platform {stage.platform}. Requires: {', '.join(stage.requires) or 'nothing'}."
    )
    return lines


def _stage_sql(plan_id: str, stage: Stage, groups: dict[str, Group]) -> str:
    lines = _header(plan_id, stage, f"stage {stage.id}")
    if stage.group is not None:
        group = groups[stage.group]
        lines += _comment(
            f"Cutover group {group.id!r} (identifier domain {', '.join(group.domains)}): stages "
            f"{', '.join(group.stages)}. The group is done only when every one of them is "
            "applied."
        )
    lines += ["--", "-- What this stage does:", *_bullets(stage.changes), "--"]
    lines += _comment(f"Why this stage: it {why(stage)}")
    for note in stage.notes:
        lines += _paragraph(f"Before you run it: {note}")
    body = [_statement(s) for s in stage.steps]
    if any(PLACEHOLDER.search(b) for b in body):
        lines += _paragraph(
            "Salt placeholders below are filled with the secret only in memory by `accord "
            "migrate apply`, never in a file: run this stage through it, not by hand."
        )
    stem = file_stem(stage.id)
    lines += _paragraph(f"Checks: {stem}.verify.sql. Undo: {stem}.rollback.sql.")
    return "\n".join(lines) + "\n\n" + "\n\n".join(body) + "\n"


def _statement(step: Step) -> str:
    return "\n".join([*_comment(step.note), step.sql])


def _verify_sql(plan_id: str, stage: Stage) -> str:
    lines = _header(plan_id, stage, f"checks after stage {stage.id}")
    lines += _comment(
        "Every query returns a first column `ok` that must be true on every row; `accord "
        "migrate apply` runs them after the stage and records it as failed otherwise."
    )
    note = platform_named(stage.platform).migrations().data_checks_note
    if note:
        lines += _comment(note)
    if not stage.checks:
        lines += _paragraph(
            "Nothing this stage does is visible to a query (it only removes unused objects): "
            "no checks."
        )
        return "\n".join(lines) + "\n"
    body = ["\n".join([*_comment(c.comment), c.sql]) for c in stage.checks]
    return "\n".join(lines) + "\n\n" + "\n\n".join(body) + "\n"


#: the reason given in a rollback file for a finding of the base model's own statement
ROLLBACK_REASON = (
    "rollback restores the base model's statement exactly as it was; fix it in the model, "
    "not in the rollback"
)


def _restored_findings(plan: Plan) -> dict[tuple[str, int], list[str]]:
    """(stage id, rollback step index) -> the lint rules its statement breaks. A rollback
    re-creates the base model's objects as they were, defects included; the rollback file says
    so with a suppression comment, so `accord lint migrations/*/*.sql` reports only what a
    change introduces. The rollback statements of every stage are linted together (ACC203
    compares platforms)."""

    results = []
    for stage in plan.stages:
        for i, step in enumerate(stage.rollback):
            results.append(scan_sql(step.sql + ";\n", f"{stage.id}#{i}", stage.platform))
        # the stages' own statements too: the attachments ACC203 follows to the columns
        for i, step in enumerate(stage.steps):
            results.append(scan_sql(step.sql + ";\n", f"{stage.id}@{i}", stage.platform))
    rules: dict[tuple[str, int], list[str]] = {}
    for finding in lint_sql(results):
        if finding.rule == "ACC001" or "#" not in finding.location.file:
            continue
        stage_id, _, index = finding.location.file.partition("#")
        found = rules.setdefault((stage_id, int(index)), [])
        # An unsalted mask restored on one platform joins (ACC203) with the same column on
        # the other wherever that is attached: the compiled output, another plan.
        for rule in ("ACC201", "ACC203") if finding.rule == "ACC201" else (finding.rule,):
            if rule not in found:
                found.append(rule)
    return {k: sorted(v) for k, v in rules.items()}


def _rollback_sql(
    plan_id: str, stage: Stage, restored: dict[tuple[str, int], list[str]] | None = None
) -> str:
    lines = _header(plan_id, stage, f"rollback of stage {stage.id}")
    lines += _comment(
        "Undoes the stage statement by statement, in reverse order, keeping every governed "
        "table and column protected. Run it only over a stage that was applied in full; after "
        "a partial failure, run the statements that match what was applied."
    )
    body = []
    for i, step in enumerate(stage.rollback):
        text = _statement(step)
        rules = (restored or {}).get((stage.id, i))
        if rules:
            text = f"-- accord: ignore {', '.join(rules)} {ROLLBACK_REASON}\n{text}"
        body.append(text)
    if any(PLACEHOLDER.search(b) for b in body):
        lines += _comment(
            "Salt placeholders are filled only in memory, by the same code that applies stages."
        )
    return "\n".join(lines) + "\n\n" + "\n\n".join(body) + "\n"
