"""The live role hierarchy: which roles are granted to which (Snowflake), which groups are
nested in which (Databricks), read for the principals the model names, and ACC708
``hierarchy-drift`` where it differs from the model's ``inherits``.

An edge ``child inherits parent`` gives the child everything granted to the parent, so the
read goes from each modelled principal to whoever inherits it: an extra edge into a modelled
role, from a modelled role or from one the model does not name, is what widens access.

Snowflake: ``SHOW GRANTS OF ROLE p`` for each modelled role (columns ``role``,
``granted_to``, ``grantee_name``: the roles and users p is granted to;
docs.snowflake.com/en/sql-reference/sql/show-grants). A role outside the reading role's
hierarchy is answered "does not exist or not authorized" (002003) like a missing one: with the
global MANAGE GRANTS (which "implicitly allows its holder to see every object in the account",
sql-reference/sql/show-privileges) that answer means the role does not exist; without it, the
role's grantees are unseen (ACC707).

Databricks: the workspace's SCIM Groups API (``w.groups.list`` filtered by ``displayName eq``,
then ``w.groups.get`` for the group's ``members``; databricks-sdk service/iam.py GroupsAPI): a
member whose ``$ref`` is ``Groups/<id>`` is a group nested in it. The workspace lists the
account groups assigned to it (admin/users-groups/groups); a modelled group it does not list
is unseen (ACC707), never taken for one without members. ``is_account_group_member`` sees
"a direct or indirect member" of an account group
(sql/language-manual/functions/is_account_group_member), so a nesting is a grant.

Only models that declare ``inherits`` are read (an estate without one reads and prints exactly
as before).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.lint.finding import Finding
from accord.compiler.live.introspect import LiveCatalog, reader_for
from accord.compiler.model.hierarchy import has_hierarchy
from accord.compiler.model.validate import Project
from accord.targets.objects import Catalog


@dataclass(frozen=True, order=True)
class Edge:
    """``child`` inherits ``parent``: on Snowflake role ``parent`` is granted to role
    ``child``; on Databricks group ``child`` is a member of group ``parent``. Names as the
    platform answered them."""

    parent: str
    child: str

    def to_json(self) -> dict[str, str]:
        return {"parent": self.parent, "child": self.child}


class Answer(NamedTuple):
    """One principal's read: who inherits it, or why that is unseen (what, why, what is
    not proven), and answers about something else (ignored, in words)."""

    children: list[str]
    failed: tuple[str, str, str] | None
    ignored: tuple[str, ...] = ()


def _fold(platform: str) -> Callable[[str], str]:
    return str.upper if platform == "snowflake" else str.casefold


def modelled(project: Project, platform: str) -> dict[str, str]:
    """Folded platform identity -> principal name, for the principals with one there."""
    fold = _fold(platform)
    out: dict[str, str] = {}
    for name, p in project.model.principals.items():
        ident = p.identity(platform)
        if ident:
            out.setdefault(fold(str(ident)), name)
    return out


def read_hierarchies(project: Project, live: Any, jobs: int = 1) -> None:
    """:func:`read_hierarchy` for each platform of an open session
    (:class:`compiler.live.session.Live`), for the commands that compare or show it (drift,
    introspect; a plan does not change the hierarchy and never reads it). An answer accord
    cannot read is located where the model names the platform, as the session does."""
    from accord.compiler.core.errors import Diagnostic, InputError
    from accord.compiler.live.introspect import UnreadableAnswer

    for p in sorted(live.catalogs):
        try:
            read_hierarchy(project, p, live.executors[p], live.expected[p], live.catalogs[p], jobs)
        except UnreadableAnswer as err:
            where = project.loc("platforms", p, "governance_schema")
            raise InputError(Diagnostic(where, str(err))) from None


def read_hierarchy(
    project: Project,
    platform: str,
    executor: Any,
    expected: Catalog,
    live: LiveCatalog,
    jobs: int = 1,
) -> None:
    """Read the edges into every modelled principal into ``live.hierarchy`` (and what could
    not be read into its coverage): nothing when the model declares no ``inherits``."""
    if not has_hierarchy(project.model):
        return
    try:
        _read(project, platform, executor, expected, live, jobs)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        from accord.compiler.core.errors import one_line
        from accord.compiler.live.introspect import UnreadableAnswer

        raise UnreadableAnswer(
            f"{platform} answered the role hierarchy read in a shape accord cannot read "
            f"({type(err).__name__}: {one_line(err)[:300]}); nothing was compared"
        ) from None


def _read(
    project: Project,
    platform: str,
    executor: Any,
    expected: Catalog,
    live: LiveCatalog,
    jobs: int,
) -> None:
    reader = reader_for(platform, executor, expected, jobs=jobs)
    fold = _fold(platform)
    found = {
        fold(str(i)): str(i)
        for p in project.model.principals.values()
        if (i := p.identity(platform))
    }
    names = [found[k] for k in sorted(found)]
    read = _snowflake if platform == "snowflake" else _databricks
    answers = reader.each(lambda n: read(reader, n, live), names)
    edges: list[Edge] = []
    parents_read: list[str] = []
    for name, (children, failed, ignored) in zip(names, answers, strict=True):
        live.ignored.extend(ignored)
        if failed is not None:
            reader.cannot_see(*failed)
            continue
        parents_read.append(name)
        edges += [Edge(name, c) for c in children]
    live.hierarchy = sorted(set(edges))
    live.hierarchy_read = sorted(parents_read)
    coverage = live.coverage
    if coverage is not None:
        coverage.saw(
            "hierarchy " + ("roles" if platform == "snowflake" else "groups"), len(parents_read)
        )
        coverage.saw("hierarchy edges", len(live.hierarchy))
        for u in reader.coverage.unseen:
            coverage.cannot_see(u.what, u.why, u.unproven)
    live.unreadable += reader.unreadable


def _sees_every_object(live: LiveCatalog) -> bool:
    held = live.coverage.privileges if live.coverage is not None else []
    return "MANAGE GRANTS on ACCOUNT" in held


def _snowflake(reader: Any, role: str, live: LiveCatalog) -> Answer:
    """The roles ``role`` is granted to (``SHOW GRANTS OF ROLE``), or why they are unseen."""
    from accord.compiler.live.introspect import _sf_name

    unproven = f"drift of which roles inherit {role}"
    try:
        rows = reader.run.query(f"SHOW GRANTS OF ROLE {_sf_name(role)}")
    except ExecutionError as err:
        if "002003" in str(err) and _sees_every_object(live):
            return Answer([], None)  # MANAGE GRANTS sees every role: none such, none inherit it
        what = f"the grantees of role {role} (SHOW GRANTS OF ROLE)"
        return Answer([], (what, str(err), unproven))
    children, ignored = [], []
    for r in rows:
        answered = str(r.get("role") or role).strip('"')
        if answered.upper() != role.upper():
            # an answer about another role: ignored and said, never taken for this one's
            ignored.append(
                f"SHOW GRANTS OF ROLE {role}: the platform answered about role {answered}, "
                f"not {role}; ignored"
            )
            continue
        if str(r.get("granted_to") or "").upper() != "ROLE":
            continue  # a user holds it: not a role-to-role edge
        children.append(str(r.get("grantee_name") or ""))
    if ignored:  # whatever else it said, the answer is not the asked role's whole answer
        what = f"the grantees of role {role} (SHOW GRANTS OF ROLE)"
        why = "the platform's answer was about another role"
        return Answer([], (what, why, unproven), tuple(ignored))
    return Answer(sorted({c for c in children if c}), None)


def _databricks(reader: Any, group: str, live: LiveCatalog) -> Answer:
    """The groups nested in ``group`` (SCIM Groups: list by name, then get its members)."""
    client = reader.run.client
    unproven = f"drift of which groups are nested in {group}"
    what = f"the members of group {group} (SCIM Groups)"
    quoted = group.replace("\\", "\\\\").replace('"', '\\"')
    found, failed = reader.attempt(
        what,
        lambda: list(
            client.groups.list(filter=f'displayName eq "{quoted}"', attributes="id,displayName")
        ),
        unproven,
    )
    if failed is not None:
        return Answer([], failed)
    matches = [g for g in found or [] if (g.display_name or "") == group and g.id]
    if not matches:
        return Answer(
            [],
            (
                what,
                "the workspace's SCIM Groups API does not list it (an account group not "
                "assigned to the workspace is not listed)",
                unproven,
            ),
        )
    info, failed = reader.attempt(what, lambda: client.groups.get(matches[0].id), unproven)
    if failed is not None:
        return Answer([], failed)
    if info is None:
        return Answer([], (what, "the group was not found by its id", unproven))
    children = [
        str(m.display or "")
        for m in info.members or []
        if str(m.ref or "").startswith("Groups/") or str(m.type or "").lower() == "group"
    ]
    return Answer(sorted({c for c in children if c}), None)


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
        fold = _fold(platform)
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
        sf = platform == "snowflake"
        kind = "role" if sf else "group"
        for key, (name, i, parent) in sorted(want.items()):
            if key[0] not in read or key in have:
                continue
            child_id = str(principals[name].identity(platform))
            parent_id = str(principals[parent].identity(platform))
            how = (
                f"role {parent_id} is not granted to role {child_id}"
                if sf
                else f"group {child_id} is not a member of group {parent_id}"
            )
            findings.append(
                Finding(
                    project.loc("principals", name, "inherits", i),
                    "ACC708",
                    f"principals.{name}",
                    f"{platform}: principals.{name}.inherits says {child_id} inherits "
                    f"{parent_id}, and {how}: {child_id} lacks what the model says it holds "
                    f"through {parent_id}",
                    f"GRANT ROLE {parent_id} TO ROLE {child_id}, or remove {parent} from "
                    f"principals.{name}.inherits"
                    if sf
                    else f"add group {child_id} to the members of group {parent_id} (account "
                    f"console or SCIM), or remove {parent} from principals.{name}.inherits",
                )
            )
        for key, edge in sorted(have.items()):
            if key in want:
                continue
            parent_name = who.get(key[0])
            child_name = who.get(key[1])
            if parent_name is None:
                continue
            how = (
                f"role {edge.parent} is granted to role {edge.child}"
                if sf
                else f"group {edge.child} is nested in group {edge.parent}"
            )
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
                    f"REVOKE ROLE {edge.parent} FROM ROLE {edge.child}, or {fix_model}"
                    if sf
                    else f"remove group {edge.child} from the members of group {edge.parent}, "
                    f"or {fix_model}",
                )
            )
    return findings
