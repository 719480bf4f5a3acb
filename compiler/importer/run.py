"""``accord import``: read, raise, check the round trip, write.

The live front end (:mod:`compiler.importer.live`, imported only when a platform is read) and
the SQL front end (:mod:`compiler.importer.sqlfiles`) each give one :class:`Found` a platform;
a platform read both ways is one read, the live objects first (what is deployed is what the
model must reproduce; the SQL adds what the platform does not hold). The raise
(:func:`compiler.importer.lift.lift`) writes a candidate model into a directory beside the
output, which is validated as any policy directory is; what was read live and does not lower
back exactly (:func:`compiler.importer.exact.differences`) is kept unmanaged, and the raise runs
again, until nothing differs. The model is then linted (its findings go into ``IMPORT.md``) and
the directory moved into place in one rename. Nothing is written when the import cannot run,
and a directory that is not empty is never written into.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from accord.compiler.core.errors import InputError, UsageError
from accord.compiler.core.progress import finished, silent
from accord.compiler.importer.exact import differences
from accord.compiler.importer.found import Found, ItemKey, Lifted
from accord.compiler.importer.lift import lift
from accord.compiler.importer.sqlfiles import read_sql
from accord.compiler.importer.write import policy_files, report, unmanaged_entries
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.run import lint_paths
from accord.compiler.model.validate import load_project

#: rounds of raise and check: each keeps at least one more item unmanaged, so few are needed
MAX_ROUNDS = 12


@dataclass
class Outcome:
    """What an import did: its exit code, the lines for standard output, what it wrote."""

    code: int
    lines: list[str] = field(default_factory=list)
    lifted: Lifted | None = None


def check_out(out: str) -> Path:
    """The output directory, refused when it holds anything (never overwritten) or is a file."""
    target = Path(out)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise UsageError(f"--out {out}: not a directory")
    if target.is_dir() and any(target.iterdir()):
        raise UsageError(f"--out {out} is not empty: accord import never writes into it")
    return target


def merge(founds: list[Found]) -> list[Found]:
    """One read a platform: the live objects, then what the SQL adds that the platform does
    not hold (the same object read both ways is the live one)."""
    out: dict[str, Found] = {}
    for found in founds:
        have = out.get(found.platform)
        if have is None:
            out[found.platform] = replace(found, items=list(found.items), notes=list(found.notes))
            continue
        keys = {i.key for i in have.items}
        extra = [i for i in found.items if i.key not in keys]
        have.items += extra
        have.notes += found.notes
        have.exact = have.exact or found.exact
        have.governance_schema = have.governance_schema or found.governance_schema
    return [out[p] for p in sorted(out, key=("snowflake", "databricks").index)]


def run_import(
    out: str,
    paths: list[str],
    platforms: list[str],
    scopes: list[str],
    options: Any,
    dialect: str | None = None,
    progress: Callable[[str], None] = silent,
) -> Outcome:
    """Import into ``out``; ``progress`` is told each stage (``compiler.core.progress``)."""
    try:
        return _import(out, paths, platforms, scopes, options, dialect, progress)
    finally:
        finished(progress)  # what the command says next is not drawn over


def _import(
    out: str,
    paths: list[str],
    platforms: list[str],
    scopes: list[str],
    options: Any,
    dialect: str | None,
    progress: Callable[[str], None],
) -> Outcome:
    target = check_out(out)
    if not paths and not platforms:
        raise UsageError("name what to import: --platform P (read live), and/or SQL PATHs")
    founds: list[Found] = []
    read: list[str] = []
    sources: list[str] = []
    if platforms:
        from accord.compiler.importer.live import read_live  # noqa: PLC0415 - the platform clients: a live import only

        for platform in platforms:
            found = read_live(platform, options, scopes, progress)
            founds.append(found)
            sources.append(f"live {platform}" + (f" ({', '.join(scopes)})" if scopes else ""))
    if paths:
        progress("import: reading the SQL")
        sql_founds, said = read_sql(paths, dialect)
        founds += sql_founds
        read += said
        sources.append("SQL " + ", ".join(paths))
    founds = merge(founds)
    source = "; ".join(sources)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.accord-import-", dir=parent))
    try:
        progress("import: writing the model and checking its round trip")
        lifted, remaining = _rounds(founds, work, source)
        progress("import: linting what was written")
        findings = _lint(work)
        text = report(lifted, founds, source, read, findings, remaining)
        (work / "IMPORT.md").write_text(text, encoding="utf-8")
        if target.is_dir():
            target.rmdir()  # empty (checked): replaced by the written tree in one rename
        os.replace(work, target)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return _outcome(lifted, target, remaining, founds)


def _rounds(founds: list[Found], work: Path, source: str) -> tuple[Lifted, list[str]]:
    """Raise, write, validate and check the round trip until what was read live lowers back."""
    exclude: dict[ItemKey, str] = {}
    for _ in range(MAX_ROUNDS):
        lifted = lift(founds, exclude)
        _write(work, policy_files(lifted, source))
        try:
            project = load_project(work)
        except InputError as err:
            first = err.diagnostics[0]
            raise UsageError(
                f"accord import wrote a model that does not validate ({first.message}, "
                f"{Path(first.location.file).name}:{first.location.line}): an accord defect, "
                "please report it; nothing was written"
            ) from None
        found = differences(project, founds, lifted)
        new = {k: v for k, v in found.items() if k not in exclude}
        if not new:
            return lifted, [f"{k[0]} {k[1]} {k[2]}: {v}" for k, v in sorted(found.items())]
        exclude.update(new)
    return lifted, [f"{k[0]} {k[1]} {k[2]}: {v}" for k, v in sorted(found.items())]


def _write(work: Path, files: dict[str, str]) -> None:
    for old in work.iterdir():
        old.unlink()
    for name, text in files.items():
        (work / name).write_text(text, encoding="utf-8")


def _lint(work: Path) -> list[Finding]:
    """The imported model's findings, located in the directory as it will be named."""
    result = lint_paths([str(work)], fail_on="never", cache=False)
    prefix = str(work) + os.sep
    return [
        replace(f, location=replace(f.location, file=f.location.file.removeprefix(prefix)))
        for f in result.findings
        if not f.suppressed
    ]


def _outcome(lifted: Lifted, target: Path, remaining: list[str], founds: list[Found]) -> Outcome:
    lines = []
    expressed = sum(len(v) for v in lifted.claims.values())
    lines.append(f"accord import: wrote {target} ({expressed} object(s) expressed in the model)")
    unseen = []
    for found in founds:
        if found.coverage is not None:
            lines += [f"  {line.strip()}" for line in found.coverage.lines()]
            unseen += found.coverage.unseen
    for mask, platform, ref, function in sorted(lifted.salts):
        lines.append(
            f"  salt to fill: masks.{mask}.salt.{platform} = {ref} (the salt {function}() returns; "
            "never read)"
        )
    entries = unmanaged_entries(lifted.kept)
    for name, e in entries.items():
        lines.append(f"  unmanaged: {name}: {e['platform']} {e['kind']} {e['name']}: {e['why']}")
    for r in remaining:
        lines.append(f"  not reproduced: {r}")
    if entries:
        lines.append(
            f"accord import: {len(entries)} object(s) could not be expressed: kept in "
            f"{target / 'unmanaged.yaml'}, listed in {target / 'IMPORT.md'}"
        )
    if unseen:
        lines.append(
            "accord import: the reading role could not see everything (the coverage above): "
            "what it could not see is not in the model"
        )
    code = 1 if entries or remaining or unseen else 0
    return Outcome(code, lines, lifted)
