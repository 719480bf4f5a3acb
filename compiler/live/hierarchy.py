"""The live role hierarchy against the model's ``inherits``: ACC708 ``hierarchy-drift``.

Which roles are granted to which (Snowflake) and which groups are nested in which (Databricks)
is read by each platform's reader (:func:`targets.inspect.read_hierarchy`, with
:meth:`targets.inspect.Reader.inheritors` in the platform's folder), for the principals the
model names. An edge ``child inherits parent`` gives the child everything granted to the parent,
so the read goes from each modelled principal to whoever inherits it: an extra edge into a
modelled role, from a modelled role or from one the model does not name, is what widens access.
Here the edges read are compared with the model.

Only models that declare ``inherits`` are read (an estate without one reads and prints exactly
as before).
"""

from __future__ import annotations

from typing import Any

from accord.compiler.core.errors import Diagnostic, InputError
from accord.compiler.core.platforms import facts
from accord.compiler.lint.finding import Finding
from accord.compiler.model.hierarchy import has_hierarchy
from accord.compiler.model.validate import Project
from accord.targets.inspect import LiveCatalog, UnreadableAnswer, read_hierarchy
from accord.targets.objects import Catalog
from accord.targets.platform import platform as platform_named


def modelled(project: Project, platform: str) -> dict[str, str]:
    """Folded platform identity -> principal name, for the principals with one there."""
    fold = facts(platform).fold_identity
    out: dict[str, str] = {}
    for name, p in project.model.principals.items():
        ident = p.identity(platform)
        if ident:
            out.setdefault(fold(str(ident)), name)
    return out


def read_hierarchies(project: Project, live: Any, jobs: int = 1) -> None:
    """:func:`read_modelled` for each platform of an open session
    (:class:`compiler.live.session.Live`), for the commands that compare or show it (drift,
    introspect; a plan does not change the hierarchy and never reads it). An answer accord
    cannot read is located where the model names the platform, as the session does."""
    for p in sorted(live.catalogs):
        try:
            read_modelled(project, p, live.executors[p], live.expected[p], live.catalogs[p], jobs)
        except UnreadableAnswer as err:
            where = project.loc("platforms", p, "governance_schema")
            raise InputError(Diagnostic(where, str(err))) from None


def read_modelled(
    project: Project,
    platform: str,
    executor: Any,
    expected: Catalog,
    live: LiveCatalog,
    jobs: int = 1,
) -> None:
    """Read the edges into every modelled principal's identity on ``platform`` into
    ``live.hierarchy`` (and what could not be read into its coverage): nothing when the model
    declares no ``inherits``."""
    if not has_hierarchy(project.model):
        return
    identities = [str(i) for p in project.model.principals.values() if (i := p.identity(platform))]
    read_hierarchy(platform, identities, executor, expected, live, jobs)


# --------------------------------------------------------------------------------------------
# ACC708


def hierarchy_findings(project: Project, lives: dict[str, LiveCatalog]) -> list[Finding]:
    """ACC708: each live edge into a modelled principal the model's ``inherits`` does not
    say (located at the inheriting principal, or at the inherited one when the inheriting
    role or group is not in the model), and each edge the model says that the platform
    lacks (located at the ``inherits`` item). Only principals whose edges were read are
    compared; the others are ACC707."""
    findings: list[Finding] = []
    for platform, live in sorted(lives.items()):
        if live.hierarchy is None:
            continue
        fold = facts(platform).fold_identity
        who = modelled(project, platform)
        principals = project.model.principals
        read = {fold(n) for n in live.hierarchy_read}
        have = {(fold(e.parent), fold(e.child)): e for e in live.hierarchy}
        want: dict[tuple[str, str], tuple[str, int, str]] = {}
        for name, p in principals.items():
            mine = p.identity(platform)
            for i, parent in enumerate(p.inherits):
                theirs = principals[parent].identity(platform) if parent in principals else None
                if mine and theirs:
                    want[(fold(str(theirs)), fold(str(mine)))] = (name, i, parent)
        kind = facts(platform).principal_kind
        words = platform_named(platform).reader().EDGE_WORDS
        for key, (name, i, parent) in sorted(want.items()):
            if key[0] not in read or key in have:
                continue
            child_id = str(principals[name].identity(platform))
            parent_id = str(principals[parent].identity(platform))
            how = words["absent"].format(parent=parent_id, child=child_id)
            findings.append(
                Finding(
                    project.loc("principals", name, "inherits", i),
                    "ACC708",
                    f"principals.{name}",
                    f"{platform}: principals.{name}.inherits says {child_id} inherits "
                    f"{parent_id}, and {how}: {child_id} lacks what the model says it holds "
                    f"through {parent_id}",
                    words["add"].format(parent=parent_id, child=child_id)
                    + f", or remove {parent} from principals.{name}.inherits",
                )
            )
        for key, edge in sorted(have.items()):
            if key in want:
                continue
            parent_name = who.get(key[0])
            child_name = who.get(key[1])
            if parent_name is None:
                continue
            how = words["present"].format(parent=edge.parent, child=edge.child)
            if child_name is not None:
                where = project.loc("principals", child_name)
                owner = f"principals.{child_name}"
                said = f"which principals.{child_name}.inherits does not say"
                fix_model = f"add {parent_name} to principals.{child_name}.inherits"
            else:
                where = project.loc("principals", parent_name)
                owner = f"principals.{parent_name}"
                said = f"a {kind} the model does not name"
                fix_model = f"model {edge.child} as a principal inheriting {parent_name}"
            findings.append(
                Finding(
                    where,
                    "ACC708",
                    owner,
                    f"{platform}: {how} ({said}): {edge.child} inherits everything granted "
                    f"to {edge.parent}",
                    words["remove"].format(parent=edge.parent, child=edge.child)
                    + f", or {fix_model}",
                )
            )
    return findings
