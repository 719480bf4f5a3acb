"""Lint configuration changes that lower what fails: widenings of what is checked.

A pull request can silence its own lint without touching a policy: ``ignore = ["current-role"]``
in ``pyproject.toml``, ``fail-on = "never"``, a ``per-file-ignores`` glob, an ``exclude``. The
exposure check compares the configuration ``accord lint`` reads at the base (the git revision,
read as :func:`compiler.plan.source.revision_config` reads it) with the one it reads now, and
reports every setting that lowers what fails as a widening, as it does a probe removed
(:mod:`compiler.exposure.probes`), so ``--fail-on widening`` fails on it:

* ``select`` / ``ignore``: a rule the base ran that the head turns off;
* ``per-file-ignores``: a rule a glob turns off that it did not (a new glob counts whole; a
  narrowed glob is reported too: which files two globs match is not compared);
* ``fail-on``: lowered (``warning`` > ``error`` > ``never``);
* ``exclude``: a pattern added; ``force-exclude`` turned on;
* ``policies``: another default directory (``accord lint`` with no PATH reads another one).

A configuration file deleted counts as its settings set to their defaults. Each record is
located at the head's setting (a deleted one: the base's, ``REF:PATH``).
"""

from __future__ import annotations

from typing import Any

from accord.compiler.lint.config import LintConfig, turned_off
from accord.compiler.model.rules import RULE_TABLE

#: ``fail-on``, from what fails least to what fails most
FAIL_ON_ORDER = {"never": 0, "error": 1, "warning": 2}
_FAILS = {
    "never": "never fails",
    "error": "fails on errors only",
    "warning": "fails on warnings too",
}


def config_edits(base: LintConfig, head: LintConfig) -> list[dict[str, Any]]:
    """Every setting of ``head`` that lowers what fails compared with ``base`` (see the module
    documentation), in the order of the settings."""
    out: list[dict[str, Any]] = []

    def record(key: str, setting: str, before: Any, after: Any, detail: str) -> None:
        loc = (head if head.file is not None else base).where(key)
        out.append(
            {"setting": setting, "before": before, "after": after, "detail": detail,
             "file": loc.file, "line": loc.line, "column": loc.column}
        )  # fmt: skip

    ran = {r.id for r in RULE_TABLE if base.selected(r.id)}
    runs = {r.id for r in RULE_TABLE if head.selected(r.id)}
    off = sorted(ran - runs)
    by_ignore = [r for r in off if head.ignores(r)]
    by_select = [r for r in off if r not in by_ignore]
    if by_select:
        record("select", "select", list(base.select), list(head.select),
               f"turns off {turned_off(by_select)}")  # fmt: skip
    if by_ignore:
        record("ignore", "ignore", list(base.ignore), list(head.ignore),
               f"turns off {turned_off(by_ignore)}")  # fmt: skip
    before = dict(base.per_file_ignores)
    for glob, rules in head.per_file_ignores:
        added = sorted(r for r in rules - before.get(glob, frozenset()) if r in runs)
        if added:
            record(
                f"per-file-ignores:{glob}",
                f"per-file-ignores {glob!r}",
                sorted(before.get(glob, ())),
                sorted(rules),
                f"turns off {turned_off(added)} in the files it matches",
            )
    was, now = base.fail_on or "error", head.fail_on or "error"
    if FAIL_ON_ORDER[now] < FAIL_ON_ORDER[was]:
        record("fail-on", "fail-on", was, now, f"lint {_FAILS[now]}, where it {_FAILS[was]}")
    added_globs = [g for g in head.exclude if g not in base.exclude]
    if added_globs:
        record("exclude", "exclude", list(base.exclude), list(head.exclude),
               f"leaves {', '.join(map(repr, added_globs))} unlinted")  # fmt: skip
    if head.force_exclude and not base.force_exclude and head.exclude:
        record("force-exclude", "force-exclude", False, True,
               "applies exclude to the files named on the command line too")  # fmt: skip
    if head.policies != base.policies:
        record("policies", "policies", base.policies, head.policies,
               "accord lint with no PATH lints another directory")  # fmt: skip
    return out


def config_edit_text(e: dict[str, Any]) -> str:
    return f"{e['setting']}: {e['detail']}"
