"""Lint configuration, as ruff users expect it: ``[tool.accord]`` in ``pyproject.toml``, or the
same keys at the top of ``accord.toml`` (which wins in the same directory). The nearest file
from the working directory upwards is used.

```toml
[tool.accord]
policies = "governance/policies"        # default PATH of `accord lint`
select = ["ACC1", "ACC2", "ACC403"]     # ids, id prefixes or rule names; default: every rule
ignore = ["ACC503"]
fail-on = "warning"                     # error (default) | warning | never
exclude = ["examples/**", "dbt_packages/**"]
force-exclude = true                    # apply exclude to files named on the command line too
[tool.accord.per-file-ignores]
"legacy/*.sql" = ["ACC101"]
```

ACC001 (a policy statement accord could not analyse) is never deselected: exclude the file
instead, so what is not linted is said in the configuration.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, deepest_bracket, read_bytes
from accord.compiler.model.rules import RULE_TABLE

#: rule id -> name, for messages
RULE_NAMES = {r.id: r.name for r in RULE_TABLE}

FAIL_ON = ("error", "warning", "never")
_KEYS = frozenset(
    {"select", "ignore", "per-file-ignores", "fail-on", "policies", "exclude", "force-exclude"}
)
#: never deselected (see the module documentation)
ALWAYS = frozenset({"ACC001"})


@dataclass(frozen=True)
class LintConfig:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    fail_on: str | None = None
    policies: str | None = None
    exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    #: the directory of the configuration file (globs are relative to it)
    root: str = "."
    file: str | None = None
    #: (key, line) of the keys as written in the file, for located warnings
    lines: tuple[tuple[str, int], ...] = ()

    def where(self, key: str) -> Location:
        """Where ``key`` is set: its line in the configuration file (else the command line).
        A glob of ``per-file-ignores`` is ``per-file-ignores:GLOB`` (its own line, else the
        table's)."""
        if self.file is None:
            return Location("<command line>", 1, 1)
        lines = dict(self.lines)
        line = lines.get(key) or lines.get(key.split(":", 1)[0], 1)
        return Location(self.file, line, 1)

    def selected(self, rule_id: str) -> bool:
        if rule_id in ALWAYS:
            return True
        if self.select and not _matches(rule_id, self.select):
            return False
        return not _matches(rule_id, self.ignore)

    def ignores(self, rule_id: str) -> bool:
        """Whether ``ignore`` names ``rule_id`` (by id, prefix or name)."""
        return rule_id not in ALWAYS and _matches(rule_id, self.ignore)

    def ignored_in(self, path: str, rule_id: str) -> bool:
        if rule_id in ALWAYS:
            return False
        rel = self._relative(path)
        return any(rule_id in rules for glob, rules in self.per_file_ignores if _glob(rel, glob))

    def excluded(self, path: str) -> bool:
        rel = self._relative(path)
        return any(_glob(rel, glob) for glob in self.exclude)

    def _relative(self, path: str) -> str:
        try:
            return Path(os.path.abspath(path)).relative_to(os.path.abspath(self.root)).as_posix()
        except ValueError:
            return Path(path).as_posix()


@dataclass(frozen=True)
class Lowering:
    """A setting in force that lowers what fails (a rule turned off, files left unlinted, a
    threshold lowered): named, where it is written, in the summary of every output format, so
    a configuration a pull request commits never turns errors into a silent "no findings"."""

    #: the setting as written (``ignore``, ``per-file-ignores 'legacy/*.sql'``, ``--select``)
    setting: str
    location: Location
    #: what it lowers ("turns off ACC101 current-role")
    detail: str

    def text(self) -> str:
        return f"{self.setting} ({self.location}): {self.detail}"

    def to_json(self) -> dict[str, object]:
        loc = self.location
        return {
            "setting": self.setting,
            "file": loc.file,
            "line": loc.line,
            "column": loc.column,
            "detail": self.detail,
        }


#: where a command-line option is "written"
COMMAND_LINE = Location("<command line>", 1, 1)


def turned_off(rules: Iterable[str]) -> str:
    """``ACC101 current-role, ACC201 unsalted-hash`` (ids alone past five)."""
    ids = sorted(rules)
    if len(ids) > 5:
        return f"{len(ids)} rules: {', '.join(ids)}"
    return ", ".join(f"{r} {RULE_NAMES[r]}" for r in ids)


def lowerings(
    file: LintConfig,
    select: tuple[str, ...] | None = None,
    ignore: tuple[str, ...] = (),
    fail_on: str | None = None,
    excluded: int = 0,
) -> list[Lowering]:
    """Every setting in force that lowers what fails: of the configuration file ``file``, and
    of the command line (``select``: ``--select``, which replaces the file's; ``ignore``:
    ``--ignore``, added to it; ``fail_on``: ``--fail-on``, which replaces it); ``excluded``:
    the files ``exclude`` left unlinted in this run. ``ACC001`` is never turned off."""
    every = [r.id for r in RULE_TABLE if r.id not in ALWAYS]
    out: list[Lowering] = []
    chosen, where, name = (
        (select, COMMAND_LINE, "--select")
        if select is not None
        else (file.select, file.where("select"), "select")
    )
    if chosen:
        kept = _expand(chosen)
        off = [r for r in every if r not in kept]
        if off:
            shown = ", ".join(chosen)
            out.append(
                Lowering(name, where, f"turns off every rule but {shown}: {turned_off(off)}")
            )
    for codes, where, name in ((file.ignore, file.where("ignore"), "ignore"),
                               (ignore, COMMAND_LINE, "--ignore")):  # fmt: skip
        off = [r for r in every if r in _expand(codes)]
        if off:
            out.append(Lowering(name, where, f"turns off {turned_off(off)}"))
    for glob, rules in file.per_file_ignores:
        off = [r for r in every if r in rules]
        if off:
            out.append(
                Lowering(
                    f"per-file-ignores {glob!r}",
                    file.where(f"per-file-ignores:{glob}"),
                    f"turns off {turned_off(off)} in the files it matches",
                )
            )
    if fail_on == "never":
        out.append(Lowering("--fail-on", COMMAND_LINE, '"never": no finding fails lint'))
    elif fail_on is None and file.fail_on == "never":
        out.append(Lowering("fail-on", file.where("fail-on"), '"never": no finding fails lint'))
    if excluded:
        files = "file" if excluded == 1 else "files"
        out.append(
            Lowering("exclude", file.where("exclude"), f"leaves {excluded} {files} unlinted")
        )
    return out


def _glob(rel: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(Path(rel).name, pattern):
        return True
    # "dir/**" and "dir" exclude everything under dir
    base = pattern[:-3] if pattern.endswith("/**") else pattern
    return rel.startswith(base + "/") and "*" not in base


def _expand(codes: Iterable[str]) -> set[str]:
    out = set()
    for code in codes:
        for r in RULE_TABLE:
            if r.id.startswith(code.upper()) or r.name == code.lower():
                out.add(r.id)
    return out


def _matches(rule_id: str, codes: tuple[str, ...]) -> bool:
    return rule_id in _expand(codes)


def parse_codes(value: str | Iterable[str], where: Location) -> tuple[str, ...]:
    """Rule ids, id prefixes (``ACC2``) or names, each matching at least one rule."""
    items = [v.strip() for v in value.split(",")] if isinstance(value, str) else list(value)
    bad = [c for c in items if not isinstance(c, str) or not c or not _expand([c])]
    if bad:
        raise InputError(
            Diagnostic(where, f"no rule matches {bad[0]!r} (ids, id prefixes or rule names)")
        )
    return tuple(items)


#: the files that may hold the configuration, in the order they are looked for in a folder
CONFIG_FILES = ("accord.toml", "pyproject.toml")


def holds_config(name: str, text: str) -> bool:
    """Whether the file ``name`` (one of :data:`CONFIG_FILES`) holding ``text`` is a
    configuration: ``accord.toml`` always, ``pyproject.toml`` with a ``[tool.accord]`` table."""
    return name == "accord.toml" or "[tool.accord" in text


def find_config(start: Path) -> Path | None:
    """The nearest ``accord.toml``, or ``pyproject.toml`` with a ``[tool.accord]`` table."""
    here = start.resolve()
    for directory in (here, *here.parents):
        for name in CONFIG_FILES:
            candidate = directory / name
            if candidate.is_file() and (
                name == "accord.toml"
                or holds_config(name, _read(candidate, os.path.relpath(candidate)))
            ):
                return candidate
    return None


def _read(path: Path, shown: str) -> str:
    """The text of a configuration file: a regular file, bounded (never ``/dev/zero``)."""
    raw = read_bytes(path, "configuration file", MAX_FILE_BYTES, shown)
    return decode(raw, shown, "configuration file")


_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_config(start: Path | None = None) -> LintConfig:
    """The configuration that applies in ``start`` (default: the working directory)."""
    path = find_config(start or Path.cwd())
    if path is None:
        return LintConfig()
    shown = os.path.relpath(path)
    try:
        text = _read(path, shown)
    except OSError as err:
        where = Location(shown, 1, 1)
        raise InputError(Diagnostic(where, f"cannot read: {err.strerror}")) from None
    return config_from_text(text, shown, path.name, str(path.parent))


def config_from_text(text: str, shown: str, name: str, root: str) -> LintConfig:
    """The configuration the file ``name`` (``accord.toml`` or ``pyproject.toml``) holding
    ``text`` gives, reported as ``shown``, its globs relative to the folder ``root``. Raises
    InputError, located, when it is not valid."""
    import tomllib  # noqa: PLC0415 - a project without a configuration file never reads TOML

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        found = _TOML_POSITION.search(str(err))
        line, column = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
        message = _TOML_POSITION.sub("", str(err)).strip()
        where = Location(shown, line, column)
        raise InputError(Diagnostic(where, f"invalid TOML: {message}")) from None
    except RecursionError:
        where = Location(shown, *deepest_bracket(text))
        raise InputError(
            Diagnostic(where, "invalid TOML: arrays or inline tables nest too deeply")
        ) from None
    table: Any = data if name == "accord.toml" else data.get("tool", {}).get("accord", {})
    config = _validate(table, shown, root)
    return replace(config, lines=_key_lines(text))


_KEY_LINE = re.compile(r"""^\s*["']?([a-z-]+)["']?\s*=""")
_TABLE_LINE = re.compile(r"^\s*\[\s*(?:tool\.accord\.)?per-file-ignores\s*\]")
_GLOB_LINE = re.compile(r"""^\s*(?:"(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


def _key_lines(text: str) -> tuple[tuple[str, int], ...]:
    """The first line of each configuration key (as written at the start of a line), and of
    each glob of the ``per-file-ignores`` table (``per-file-ignores:GLOB``)."""
    import tomllib  # noqa: PLC0415 - a project without a configuration file never reads TOML

    seen: dict[str, int] = {}
    in_ignores = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("["):
            in_ignores = bool(_TABLE_LINE.match(line))
            if in_ignores:
                seen.setdefault("per-file-ignores", number)
            continue
        if in_ignores:
            glob = _GLOB_LINE.match(line)
            if glob:
                with contextlib.suppress(ValueError):  # the key as TOML reads it
                    (key,) = tomllib.loads(glob.group(0) + " 0")
                    seen.setdefault(f"per-file-ignores:{key}", number)
            continue
        found = _KEY_LINE.match(line)
        if found and found.group(1) in _KEYS:
            seen.setdefault(found.group(1), number)
    return tuple(seen.items())


def _validate(table: Any, shown: str, root: str) -> LintConfig:
    where = Location(shown, 1, 1)

    def fail(message: str) -> InputError:
        return InputError(Diagnostic(where, message))

    if not isinstance(table, dict):
        raise fail("[tool.accord] must be a table")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise fail(f"unknown key {unknown[0]!r} in the accord configuration: {sorted(_KEYS)}")

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(f"{key} must be a list of strings")
        return tuple(value)

    fail_on = table.get("fail-on")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise fail(f"fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    policies = table.get("policies")
    if policies is not None and not isinstance(policies, str):
        raise fail("policies must be a string (a directory)")
    force = table.get("force-exclude", False)
    if not isinstance(force, bool):
        raise fail("force-exclude must be true or false")
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise fail("per-file-ignores must be a table of glob = [rules]")
    ignores = []
    for glob, codes in sorted(per_file.items()):
        if not isinstance(codes, list):
            raise fail(f"per-file-ignores {glob!r} must be a list of rules")
        ignores.append((glob, frozenset(_expand(parse_codes(codes, where)))))
    return LintConfig(
        select=parse_codes(strings("select"), where),
        ignore=parse_codes(strings("ignore"), where),
        per_file_ignores=tuple(ignores),
        fail_on=fail_on,
        policies=policies,
        exclude=strings("exclude"),
        force_exclude=force,
        root=root,
        file=shown,
    )
