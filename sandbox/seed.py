"""What a platform holds before accord deploys anything, as plain data: its data tables (their
columns, and sample rows), who logs in (Snowflake users and the roles granted to them,
Databricks principals and the account groups they belong to), and the roles or account groups
an administrator keeps, with their hierarchy.

A seed is made from an estate's model by accord (``accord sandbox``, the live tests: one
function, ``accord.compiler.live.sandbox.seed_of``) and planted here in a stand-in, which never
reads accord's model or imports its code: the stand-ins answer as the platforms document, and
this module is all they are told of the estate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from accord.sandbox.standins.databricks import DatabricksEstate
from accord.sandbox.standins.snowflake import SnowflakeEstate


@dataclass(frozen=True)
class Table:
    """A data table: its name as the platform names it (``DB.SCHEMA.TABLE``), its columns
    (name -> type, in order) and its rows (column name -> value)."""

    name: str
    columns: dict[str, str]
    rows: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class PlatformSeed:
    """One platform's tables; its logins (``members``: a Snowflake user -> the roles granted
    to it, or a Databricks principal -> the account groups it belongs to); its roles or account
    groups (``identities``) and their hierarchy (``hierarchy``: (holder, held) pairs, the
    holder holding everything the held one does: on Snowflake ``GRANT ROLE held TO ROLE
    holder``, on Databricks the holder's group nested in the held one's)."""

    tables: tuple[Table, ...] = ()
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    identities: tuple[str, ...] = ()
    hierarchy: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Seed:
    snowflake: PlatformSeed = PlatformSeed()
    databricks: PlatformSeed = PlatformSeed()

    def of(self, platform: str) -> PlatformSeed:
        return self.snowflake if platform == "snowflake" else self.databricks


Estate = SnowflakeEstate | DatabricksEstate


def plant_tables(estate: Estate, tables: tuple[Table, ...]) -> None:
    """The tables, empty (a table seeded twice keeps its first rows)."""
    for table in tables:
        estate.seed_table(table.name, table.columns)


def plant_rows(estate: Estate, tables: tuple[Table, ...]) -> None:
    """The tables' rows, written underneath whatever policies they have (as a loader would)."""
    for table in tables:
        t = estate.table(table.name)
        for row in table.rows:
            names = ", ".join(f'"{t.columns[c.upper()][0]}"' for c in row)
            marks = ", ".join("?" for _ in row)
            estate.db.execute(
                f"INSERT INTO {estate._quoted(t.name)} ({names}) VALUES ({marks})",
                list(row.values()),
            )


def plant_members(estate: Estate, members: dict[str, tuple[str, ...]]) -> None:
    """Snowflake: each user's roles (``GRANT ROLE ... TO USER``; the user may use no other);
    Databricks: each principal's account groups."""
    for who, held in sorted(members.items()):
        if isinstance(estate, SnowflakeEstate):
            estate.grant_roles(who, list(held))
        else:
            estate.member_of[who] = set(held)


def plant_identities(
    estate: Estate, identities: tuple[str, ...], hierarchy: tuple[tuple[str, str], ...]
) -> None:
    """Snowflake: each role created (``CREATE ROLE``), and each held role granted to its holder
    (``GRANT ROLE held TO ROLE holder``, sql-reference/sql/grant-role); Databricks: each account
    group assigned to the workspace, and each holder's group nested in the held one's (as an
    administrator nests them)."""
    for name in identities:
        if isinstance(estate, SnowflakeEstate):
            estate.create_role(name)
        else:
            estate.group_members.setdefault(name, set())
    for holder, held in hierarchy:
        if isinstance(estate, SnowflakeEstate):
            estate.grant_to_role(holder, "USAGE", "ROLE", held)
        else:
            estate.nest(holder, held)


def plant(estate: Estate, seed: PlatformSeed) -> None:
    """Everything of ``seed``: the tables, their rows, the logins, the roles or groups."""
    plant_tables(estate, seed.tables)
    plant_rows(estate, seed.tables)
    plant_members(estate, seed.members)
    plant_identities(estate, seed.identities, seed.hierarchy)
