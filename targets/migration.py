"""The statements only a migration needs: change in place, swap, drop, detach.

``accord compile`` writes the creating statements (:meth:`targets.base.Target.render_object`).
A migration also changes objects in place (``SET BODY``, ``FORCE`` swaps, a combined
``DROP``/``ADD``), drops them and detaches them. Each platform spells those in its own target
file, as a subclass of :class:`MigrationSQL` (``targets/snowflake.py``,
``targets/databricks.py``), with every name and literal spelled through the target's helpers
(``targets/sql.py``). The planner (``compiler/plan/steps.py``) pairs each statement with its
effect on the catalog; nothing here knows about plans.
"""

from __future__ import annotations

from typing import Protocol

from sqlglot import exp

from accord.targets.identity import Definition, Placement
from accord.targets.objects import CatalogObject, TagAssignment


class Spelling(Protocol):
    """What the statements need of their platform's target (:class:`targets.base.Target`)."""

    platform: str

    def q(self, name: str) -> str: ...

    def lit(self, value: str) -> str: ...

    def body_sql(self, body: exp.Expression, indent: str = "  ") -> str: ...


def split_name(name: str) -> tuple[str, str, str]:
    """catalog, schema, leaf of a qualified name."""
    catalog, schema, leaf = name.split(".")
    return catalog, schema, leaf


class NoStatement(Exception):
    """The platform has no statement for this change (the planner refuses the plan)."""


class MigrationSQL:
    """One platform's spelling of migration statements. A method returning None leaves the
    statement to the target's own creating statement (``accord compile``'s)."""

    def __init__(self, target: Spelling, types: dict[str, str] | None = None, live: bool = False):
        self.target = target
        #: masking policy name (upper-cased) -> the data type it masks
        self.types = types or {}
        #: the base was read from the live platform (``plan --base live:...``): what it lacks
        #: is absent from the account, not merely from a model
        self.live = live

    def q(self, name: str) -> str:
        return self.target.q(name)

    def lit(self, value: str) -> str:
        return self.target.lit(value)

    def create(self, obj: CatalogObject) -> str | None:
        """Create ``obj``. None: the target's own statement."""
        return None

    def replace(self, obj: Definition, old: Definition) -> str | None:
        """Change a definition in place. None: create it again (CREATE OR REPLACE)."""
        return None

    def swap(self, obj: Placement, old: Placement) -> str | None:
        """Replace a placement in one statement. None: the creating statement replaces."""
        return None

    def drop(self, obj: Definition) -> str:
        raise NotImplementedError

    def detach(self, obj: Placement) -> str:
        raise NotImplementedError

    # ---- grants on salt functions (ACC705) --------------------------------------------------

    def revoke(
        self, function: str, privilege: str, grantee: str, via: str = "", kind: str = "ROLE"
    ) -> str:
        """The statement (no ``;``) that takes ``privilege`` on salt function ``function`` from
        ``grantee``: where the grant is made (``via``: on the function itself when empty), for
        the grantee's kind as the platform named it (``kind``)."""
        raise NotImplementedError

    def revoke_hint(
        self, function: str, privilege: str, grantee: str, via: str = "", kind: str = "ROLE"
    ) -> str:
        """What removes the grant, in words a person runs (drift's fix line)."""
        return self.revoke(function, privilege, grantee, via, kind)

    def grantee(self, name: str, kind: str = "ROLE") -> str:
        """A grantee in a message, with its kind where the platform has several."""
        return name

    # ---- stage checks (``compiler/plan/verify.py``): each query returns ``ok`` ----------------

    #: the platform's tags are account-level governed tags, checked after a stage defines one
    governed_tags = False
    #: what a stage's ``.verify.sql`` says of its checks written as data, when the platform
    #: has them in every stage (``targets/checks.py``)
    data_checks_note = ""
    #: how the stage checks read who may call a function
    grants_read_with = ""

    def policy_check(self, name: str, salts: list[str]) -> tuple[str, str]:
        """(what, query): policy ``name`` exists and reads the salt functions ``salts``."""
        raise NotImplementedError

    def placement_check(
        self, table: str, column: str | None, policy: str | None, kind: str | None = None
    ) -> str | None:
        """A query: ``table``'s row filter (``column`` None) or ``table.column``'s mask is
        ``policy`` (None: removed); with ``kind`` (what the placement occupies, the first word
        of its place key: ``projection``, ``aggregation``, ``join``), that attachment. None:
        read with the platform's SDK instead."""
        return None

    def tag_check(self, obj: TagAssignment, now: TagAssignment | None) -> tuple[str, str] | None:
        """(what, query): the column of ``obj`` carries its tag as ``now`` says (None: no
        longer). None: read with the platform's SDK instead."""
        return None

    def undo_create(self, obj: Definition) -> tuple[Definition, str] | None:
        """Undo the creation of ``obj`` when dropping it takes more than :meth:`drop` (the
        object the undoing step leaves dropped, and the SQL). None: :meth:`drop` undoes it."""
        return None
