"""Role hierarchies: the principals a principal inherits (``principals.NAME.inherits``).

On Snowflake, ``inherits: [P]`` says P's role is granted to this principal's role: a session
whose primary or secondary role is this one has P in its active role hierarchy, and
``IS_ROLE_IN_SESSION('P')`` is true ("the specified role can be the current primary role or
secondary role ... or any role lower in the role hierarchy",
docs.snowflake.com/en/sql-reference/functions/is_role_in_session). ``CURRENT_ROLE()`` is the
primary role's name only and sees no inherited role.

On Databricks, ``inherits: [P]`` says this principal's account group is nested in P's group:
``is_account_group_member('P')`` is true for "a direct or indirect member of the specified
group at the account level" (docs.databricks.com/sql/language-manual/functions/
is_account_group_member).

An edge exists on a platform only where both principals have an identity there: a principal
with no role on Snowflake is no role, so nothing is inherited through it there. A cycle is a
validation error (:func:`cycles`).
"""

from __future__ import annotations

from collections.abc import Iterator

from accord.compiler.model.schema import PolicyModel


def _has(model: PolicyModel, principal: str, platform: str) -> bool:
    if platform == "none":
        return True
    p = model.principals.get(principal)
    return p is not None and p.identity(platform) is not None


def effective(model: PolicyModel, names: list[str], platform: str) -> list[str]:
    """``names`` (those with an identity on ``platform``; all for ``none``), then every
    principal they inherit there, breadth first, each once."""
    out = [n for n in names if _has(model, n, platform)]
    seen = set(out)
    i = 0
    while i < len(out):
        principal = model.principals.get(out[i])
        i += 1
        for parent in principal.inherits if principal is not None else ():
            if parent not in seen and _has(model, parent, platform):
                seen.add(parent)
                out.append(parent)
    return out


def has_hierarchy(model: PolicyModel) -> bool:
    return any(p.inherits for p in model.principals.values())


def cycles(model: PolicyModel) -> list[tuple[tuple[str | int, ...], str]]:
    """(path of the ``inherits`` item that closes a cycle, message) for every cycle, each
    reported once, at the edge met last when walking principals in order. The walk keeps its
    own stack: a chain of thousands of principals is no deeper for Python than one."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    reported: set[frozenset[str]] = set()

    def edges(name: str) -> Iterator[tuple[int, str]]:
        principal = model.principals.get(name)
        return enumerate(principal.inherits if principal is not None else ())

    for start in model.principals:
        if state.get(start) is not None:
            continue
        state[start] = 1
        path = [start]  # the principals on the current path, ``start`` first
        stack = [edges(start)]
        while stack:
            name = path[-1]
            for i, parent in stack[-1]:
                if parent not in model.principals:
                    continue  # an unknown principal: reported as such
                if state.get(parent) == 1:
                    loop = path[path.index(parent) :]
                    key = frozenset(loop)
                    if key not in reported:
                        reported.add(key)
                        told = " -> ".join([*loop, parent])
                        out.append(
                            (
                                ("principals", name, "inherits", i),
                                f"inherits forms a cycle ({told}): a role cannot be granted to "
                                "a role it is granted, nor a group nested in a group nested in "
                                "it",
                            )
                        )
                elif state.get(parent) is None:
                    state[parent] = 1
                    path.append(parent)
                    stack.append(edges(parent))
                    break
            else:
                state[name] = 2
                path.pop()
                stack.pop()
    return out
