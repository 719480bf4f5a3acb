"""``accord plan --base live:P``: the staged plan from what is deployed to the model.

The introspected catalogs are the base of the ordinary planner (``compiler.plan.order``): same
stages, same simulator, same invariants. Placements on governed tables that the model did not
make are listed and refused unless ``--adopt`` (the base keeps them, so the plan converges them
to the model: swapped in one statement, or detached) or ``--keep-unmanaged`` (left out of the
base, so the plan does not touch them; refused when one occupies a place the model needs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlglot import exp

from accord.compiler.connect.config import LiveOptions
from accord.compiler.core.errors import UsageError
from accord.compiler.core.jsonfile import read_json
from accord.compiler.core.platforms import PLATFORMS, facts
from accord.compiler.history.ledger import latest
from accord.compiler.live.drift import canaries, unmanaged
from accord.compiler.live.session import session
from accord.compiler.model.validate import Project, load_project
from accord.compiler.plan.model import Appendix, Plan
from accord.compiler.plan.order import build_plan
from accord.compiler.plan.source import domains_of
from accord.compiler.plan.state import PlanError
from accord.compiler.plan.steps import Step
from accord.compiler.plan.verify import Check
from accord.targets import lower_all
from accord.targets.checks import MetadataCheck
from accord.targets.identity import describe_object, identity
from accord.targets.objects import (
    MaskAttachment,
    MaskPolicy,
    Param,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
)
from accord.targets.platform import platform as platform_named

PREFIX = "live:"


def platforms_of_base(base: str) -> list[str]:
    which = base[len(PREFIX) :]
    if which == "all":
        return list(PLATFORMS)
    if which in PLATFORMS:
        return [which]
    raise UsageError(f"--base {base}: write live:snowflake, live:databricks or live:all")


def live_fingerprint(fingerprints: dict[str, str]) -> str:
    return PREFIX + ",".join(f"{p}={fp}" for p, fp in sorted(fingerprints.items()))


def parse_live_fingerprint(value: str) -> dict[str, str]:
    if not value.startswith(PREFIX):
        return {}
    return dict(part.split("=", 1) for part in value[len(PREFIX) :].split(",") if "=" in part)


def plan_from_live(
    head: Project,
    base: str,
    options: LiveOptions,
    progress: Callable[[str], None],
    adopt: bool = False,
    keep_unmanaged: bool = False,
) -> tuple[Plan, list[str]]:
    """The plan and the notes to print (unmanaged placements and what happens to them)."""
    platforms = platforms_of_base(base)
    with session(head, platforms, options, progress) as live_read:
        expected, lives = live_read.expected, live_read.catalogs
        drifted = drifted_salts(lives, live_read.executors)
    notes: list[str] = []
    bases: dict[str, Any] = {}
    refused: list[str] = []
    foreign: dict[str, tuple[Any, ...]] = {}
    #: salt functions re-created though the model's and the live catalog's are equal, and why
    recreate: dict[str, dict[str, str]] = {}
    for p in platforms:
        live = lives[p]
        left = live.coverage.left_alone if live.coverage is not None else []
        notes += [f"{p}: {what}: left alone, not planned" for what in sorted(left)]
        if live.unreadable:
            raise PlanError(
                f"{p}: could not read "
                + "; ".join(live.unreadable)
                + ": a plan from a partly read estate could drop or miss objects"
            )
        extra = list(unmanaged(expected[p], live))
        model_ids = {identity(o) for o in expected[p]}
        for obj in extra:
            what = f"{p}: {describe_object(obj, p)} -> {getattr(obj, 'policy', getattr(obj, 'function', ''))} is not the model's"
            if adopt:
                notes.append(f"{what}: adopted (the plan converges it to the model)")
            elif keep_unmanaged:
                if identity(obj) in model_ids:
                    refused.append(
                        f"{what}, and the model needs its place: --keep-unmanaged cannot keep it"
                    )
                notes.append(f"{what}: kept (--keep-unmanaged)")
            else:
                refused.append(what)
        objects = live.catalog.objects
        recreate[p] = {
            o.name: "live salt differs"
            for o in objects
            if isinstance(o, SaltFunction) and o.name in drifted
        }
        for name in sorted(n for n in drifted if live.catalog.get(SaltFunction, n) is not None):
            notes.append(f"{p}: salt function {name} does not return its salt (ACC706): re-created")
        if keep_unmanaged and not adopt:
            drop = {identity(o) for o in extra}
            objects = tuple(o for o in objects if identity(o) not in drop)
        bases[p] = dataclasses.replace(live.catalog, objects=objects)
        foreign[p] = _foreign_policies(objects, p)
        for g in live.salt_grants:
            through = f" through {g.via}" if g.via else ""
            notes.append(
                f"{p}: salt function {g.function} grants {g.privilege} to {g.grantee}{through} "
                "(ACC705): the plan revokes it"
            )
    if refused:
        raise PlanError(
            "attachments accord did not make are on governed tables: "
            + "; ".join(refused)
            + " (pass --adopt to take them over, or --keep-unmanaged to leave them)"
        )
    head_catalogs = {
        p: dataclasses.replace(c, objects=c.objects + foreign[p])
        for p, c in lower_all(head).items()
        if p in platforms
    }
    bases = {p: dataclasses.replace(c, objects=c.objects + foreign[p]) for p, c in bases.items()}
    plan = build_plan(
        bases,
        head_catalogs,
        domains_of(head),
        live=frozenset(platforms),
        recreate=recreate,
        appendices=revokes({p: lives[p] for p in platforms}, head_catalogs),
        base_fingerprint=live_fingerprint({p: lives[p].fingerprint for p in platforms}),
        head_fingerprint=head.fingerprint,
    )
    return plan, notes


def live_changed(plan_base: str, head: Project, platform: str, options: LiveOptions) -> str:
    """ "" when ``platform`` still holds what the plan was planned from, else the difference."""
    recorded = parse_live_fingerprint(plan_base).get(platform)
    if recorded is None:
        return ""
    with session(head, [platform], options) as live:
        now = live.catalogs[platform].fingerprint
    if now == recorded:
        return ""
    return (
        f"the live {platform} estate changed since the plan was made (fingerprint {recorded[:16]} "
        f"then, {now[:16]} now): run `accord drift --platform {platform}` and plan again"
    )


def _foreign_policies(objects: tuple[Any, ...], platform: str) -> tuple[Any, ...]:
    """Policies outside the governance schema that live placements use: the same stand-in
    definition in base and head, so the simulator knows they exist and the plan never creates,
    changes or drops them (they are not accord's)."""
    defined = {o.name.upper() for o in objects if isinstance(o, MaskPolicy | RowFilterPolicy)}
    out: dict[str, Any] = {}
    for o in objects:
        if isinstance(o, MaskAttachment | RowFilterAttachment) and o.policy.upper() not in defined:
            if isinstance(o, MaskAttachment):
                string = facts(platform).string_type
                out[o.policy.upper()] = MaskPolicy(
                    o.policy, (Param("val", string),), string, exp.null(), "", "", ""
                )
            else:
                out[o.policy.upper()] = RowFilterPolicy(o.policy, (), exp.null(), None, "")
    return tuple(out[k] for k in sorted(out))


def check_live_base(
    plans_dir: str,
    stages: list[Any],
    records: list[Any],
    platform: str,
    directory: str,
    options: LiveOptions,
) -> str:
    """Before the first stage of a plan made from a live base runs on ``platform``: re-read the
    platform and compare with the fingerprint the plan recorded. The refusal in words, or ""."""
    last = latest(records)
    for plan_id in dict.fromkeys(s.plan for s in stages):
        path = Path(plans_dir) / plan_id / "plan.json"
        data, _ = read_json(path, "plan")
        base = data.get("base_fingerprint", "") if isinstance(data, dict) else ""
        if not isinstance(base, str):
            continue
        if platform not in parse_live_fingerprint(base):
            continue
        started = any(
            key[0] == plan_id and rec.platform == platform and rec.status == "applied"
            for key, rec in last.items()
        )
        if started:
            continue  # its own earlier stages changed the estate, as planned
        head = load_project(directory)
        if head.fingerprint != data.get("head_fingerprint"):
            return (
                f"{plan_id} was planned from the live estate for another version of {directory} "
                "(head fingerprint differs): plan again"
            )
        changed = live_changed(base, head, platform, options)
        if changed:
            return f"{plan_id}: {changed}"
    return ""


def revoke_sql(
    platform: str,
    function: str,
    privilege: str,
    grantee: str,
    via: str = "",
    kind: str = "ROLE",
) -> str:
    """REVOKE of a grant on a salt function, as the platform spells it
    (:meth:`targets.migration.MigrationSQL.revoke`), every name spelled through sqlglot."""
    return platform_named(platform).migrations().revoke(function, privilege, grantee, via, kind)


def revokes(lives: dict[str, Any], head: dict[str, Any]) -> dict[str, Appendix]:
    """Grants that expose a salt (ACC705) are not catalog objects: the plan revokes them at the
    end of the platform's apply stage (one is added when the platform has none). A rollback
    never grants them back."""
    out = {}
    for platform, live in lives.items():
        steps = []
        checks = []
        written: set[str] = set()
        for g in sorted(live.salt_grants, key=lambda g: (g.function, g.grantee, g.via)):
            salt = head[platform].get(SaltFunction, g.function) or SaltFunction(g.function, "", "")
            sql = revoke_sql(platform, g.function, g.privilege, g.grantee, g.via, g.kind)
            through = f" through {g.via}" if g.via else ""
            what = platform_named(platform).migrations().grants_read_with
            if g.via.startswith("policy "):
                policy, _, on = g.via.removeprefix("policy ").partition(" on ")
                kind, _, securable = on.partition(" ")
                gone = MetadataCheck(
                    "abac_policy", securable, None, None, policy=policy,
                    securable_type=kind.upper(),
                )  # fmt: skip
                check = Check(f"ABAC policy {policy} on {on} is gone", gone.line())
            else:
                gone = MetadataCheck(
                    "no_grant", g.function, None, None,
                    platform=platform, privilege=g.privilege, grantee=g.grantee,
                )  # fmt: skip
                check = Check(
                    f"{g.grantee} no longer holds {g.privilege} on {g.function} ({what})",
                    gone.line(),
                )
            checks.append(check)
            if sql in written:  # one schema-level grant exposes every salt in the schema
                continue
            written.add(sql)
            note = (
                f"salt function {g.function} is callable by {g.grantee}{through} (ACC705): "
                "revoke it"
            )
            steps.append(Step("define", salt, salt, f"{sql};", note))
        if steps:
            change = f"salt function grants revoked ({len(steps)})"
            out[platform] = Appendix(tuple(steps), tuple(checks), change)
    return out


def drifted_salts(lives: dict[str, Any], executors: dict[str, Any]) -> set[str]:
    """Salt functions whose canary digest is not their referenced salt's (salts in the
    environment only): the plan re-creates them, as a salt rotation. One whose canary could not
    run is left to drift (ACC706): the plan cannot tell."""
    return {c.salt.name for c in canaries(lives, executors) if not c.error and c.live != c.want}
