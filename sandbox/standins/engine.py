"""The state a platform holds, and what accord's SQL does to it.

Statements are recognised by the stand-ins' own reader (``sandbox/standins/reader.py``: policy
DDL, attachments, functions, tags, built on sqlglot and on nothing of accord's, so that a
misreading in accord's scanner cannot hide here) and by sqlglot (tables, DML, GRANT/REVOKE,
SELECT); the *semantics* live here, modelled on the platforms' documented behaviour (the vendor pages cited beside each behaviour):

* Snowflake: ``CREATE OR REPLACE ROW ACCESS POLICY`` is refused while the policy is attached;
  an attached policy cannot be dropped; ``ADD ROW ACCESS POLICY`` fails on a table that has one;
  ``SET MASKING POLICY`` without ``FORCE`` fails on a column that has one; ``CREATE OR REPLACE
  FUNCTION`` without ``COPY GRANTS`` drops the function's grants; a missing (or hidden) object is
  002003 / 42S02.
* Databricks: one filter per table, one mask per column (SET replaces); functions in use may be
  replaced.

Error codes: 002003 / 42S02 (missing or not authorized), 002002 (already exists), 001003
(syntax) and 000904 (invalid identifier) are the platform's; the codes of the refusals above
(0031xx) are placeholders: the documentation quotes the messages, not their codes.

Rows live in an in-memory DuckDB database (one attached catalog per catalog name), so mapping
tables are real tables that accord's ``INSERT`` / ``MERGE`` fill, and a SELECT runs on DuckDB
after the platform's catalog functions (``POLICY_REFERENCES``, ``GET_DDL``, information_schema
views, the caller's functions, ``IS_ROLE_IN_SESSION`` / ``is_account_group_member`` bound to
:attr:`Estate.session`) are replaced in the sqlglot tree. That is also the hook a persona probe
needs: set ``session`` and select from a governed table (policies are recorded per table).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

from accord.sandbox.standins.reader import ReadError, Stmt, read


class SqlError(Exception):
    """An error the platform reports: code (Snowflake errno as 6 digits, or a Databricks error
    class), SQLSTATE and message."""

    def __init__(self, code: str, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.sqlstate = sqlstate
        self.message = message


def missing(platform: str, what: str, name: str) -> SqlError:
    if platform == "snowflake":
        return SqlError(
            "002003",
            "42S02",
            f"SQL compilation error:\n{what} '{name}' does not exist or not authorized.",
        )
    return SqlError(
        "NOT_FOUND",
        "42P01",
        f"[{what.upper().replace(' ', '_')}_NOT_FOUND] The {what.lower()} `{name}` cannot be "
        "found. SQLSTATE: 42P01",
    )


@dataclass
class Policy:
    """A Snowflake policy or a Databricks function (filters, masks and salts are functions)."""

    #: ROW_ACCESS_POLICY | MASKING_POLICY | PROJECTION_POLICY | AGGREGATION_POLICY |
    #: JOIN_POLICY | FUNCTION
    kind: str
    name: str
    params: tuple[tuple[str, str], ...]
    returns: str
    body: str
    comment: str | None = None
    secure: bool = False
    owner: str = "ACCORD_DEPLOYER"
    #: a Snowflake masking policy's EXEMPT_OTHER_POLICIES = TRUE (sandbox/standins/snowflake.py)
    exempt: bool = False


@dataclass
class Table:
    name: str
    columns: dict[str, tuple[str, str]]  # UPPER name -> (name as created, type)
    #: (policy, columns) of the table's row access policy / row filter
    row_filter: tuple[str, tuple[str, ...]] | None = None
    #: UPPER column -> (policy, using columns)
    masks: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    #: (UPPER column or "", tag) -> value
    tags: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Snowflake: UPPER column -> its projection policy
    projections: dict[str, str] = field(default_factory=dict)
    #: Snowflake: (policy, entity key) of the aggregation policy, (policy, allowed join keys)
    #: of the join policy
    aggregation: tuple[str, tuple[str, ...]] | None = None
    join: tuple[str, tuple[str, ...]] | None = None


@dataclass
class TagDef:
    name: str
    allowed_values: tuple[str, ...] = ()
    masking_policies: list[str] = field(default_factory=list)
    comment: str | None = None


class Estate:
    """One platform's account or metastore."""

    def __init__(self, platform: str, owner: str = "ACCORD_DEPLOYER") -> None:
        self.platform = platform
        self.dialect = platform
        self.owner = owner
        self.tables: dict[str, Table] = {}
        self.policies: dict[str, Policy] = {}
        self.tags: dict[str, TagDef] = {}
        #: (securable type, SECURABLE, NAME) -> policy info (Databricks ABAC, SDK field names)
        self.abac: dict[tuple[str, str, str], dict[str, Any]] = {}
        #: UPPER function name -> {(privilege, grantee)}
        self.grants: dict[str, set[tuple[str, str]]] = {}
        #: statement kinds the deploying role may not run -> (code, sqlstate, message)
        self.denied: dict[str, SqlError] = {}
        #: a fragment of statement text -> what the platform says denying any statement that
        #: holds it (:meth:`denial_of`): a platform that quotes back what it was sent
        self.deny_on: dict[str, str] = {}
        #: the caller's roles (Snowflake) or groups (Databricks), for context functions
        self.session: set[str] = set()
        self._alias = itertools.count(1)
        #: UPPER tables SQL created that are held in ``tables`` (a policy is on one: _register)
        self.registered: set[str] = set()
        self.executed: list[str] = []
        self.db = duckdb.connect(":memory:")
        self._catalogs: set[str] = set()
        self._temp = itertools.count(1)
        self.lock = threading.RLock()
        #: seconds each answer of the stand-in's server waits (the latency knob: bench/) and
        #: the requests it answered (sandbox/standins/http.py)
        self.latency = 0.0
        self.round_trips = 0

    # ------------------------------------------------------------------ names and storage

    def key(self, name: str) -> str:
        return ".".join(p.strip('"`') for p in name.split(".")).upper()

    def _ensure(self, name: str) -> None:
        catalog, schema, _ = self.key(name).split(".")
        if catalog not in self._catalogs:
            self.db.execute(f"ATTACH ':memory:' AS \"{catalog}\"")
            self._catalogs.add(catalog)
        self.db.execute(f'CREATE SCHEMA IF NOT EXISTS "{catalog}"."{schema}"')

    def seed_table(self, name: str, columns: dict[str, str]) -> None:
        """A data table that exists before accord governs it (the platform's own)."""
        self._ensure(name)
        cols = ", ".join(f'"{c}" VARCHAR' for c in columns)
        self.db.execute(f"CREATE TABLE IF NOT EXISTS {self._quoted(name)} ({cols})")
        self.tables[self.key(name)] = Table(
            name=self.key(name) if self.platform == "snowflake" else name.lower(),
            columns={c.upper(): (c, t) for c, t in columns.items()},
        )

    def _quoted(self, name: str) -> str:
        return ".".join(f'"{p}"' for p in self.key(name).split("."))

    def display(self, name: str) -> str:
        return self.key(name) if self.platform == "snowflake" else self.key(name).lower()

    # ------------------------------------------------------------------ execution

    def execute(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Run one statement: (column names, rows)."""
        with self.lock:
            self.executed.append(sql)
            try:
                statements = read(sql, self.dialect)
            except ReadError as err:
                raise self._syntax(str(err)) from None
            if not statements:
                raise self._syntax("empty statement")
            kind = statements[0].kind
            if kind in self.denied:
                raise self.denied[kind]
            out: tuple[list[str], list[tuple[Any, ...]]] = (["status"], [])
            for stmt in statements:  # an ALTER TABLE with several actions: one per action
                out = self._statement(stmt, sql)
            return out

    def denial_of(self, sql: str) -> SqlError | None:
        """The privilege denial of a statement holding a fragment of :attr:`deny_on`, saying
        what that entry says (``{statement}`` in it: the statement, as platforms quote one),
        under the platform's codes for "insufficient privileges" (Snowflake 003001 / 42501,
        "SQL access control error"; Databricks PERMISSION_DENIED / 42501,
        ``[INSUFFICIENT_PERMISSIONS]``); None for any other statement."""
        said = next((m for fragment, m in self.deny_on.items() if fragment in sql), None)
        if said is None:
            return None
        said = said.replace("{statement}", sql)
        if self.platform == "snowflake":
            return SqlError("003001", "42501", f"SQL access control error:\n{said}")
        return SqlError(
            "PERMISSION_DENIED", "42501", f"[INSUFFICIENT_PERMISSIONS] {said} SQLSTATE: 42501"
        )

    def _syntax(self, message: str) -> SqlError:
        if self.platform == "snowflake":
            return SqlError("001003", "42000", f"SQL compilation error:\nsyntax error {message}")
        return SqlError("PARSE_SYNTAX_ERROR", "42601", f"[PARSE_SYNTAX_ERROR] {message}")

    def _unknown_column(self, duck: str) -> SqlError:
        """A query naming a column the table lacks: Snowflake's 000904 ``invalid identifier``,
        Databricks' ``UNRESOLVED_COLUMN`` (SQLSTATE 42703); any other binder error is a
        compilation error as before."""
        import re

        found = re.search(r'Referenced column "([^"]+)" not found', duck)
        if found is None:
            return self._syntax(duck.splitlines()[0])
        name = found.group(1)
        if self.platform == "snowflake":
            return SqlError(
                "000904",
                "42000",
                f"SQL compilation error: error line 0 at position 0\ninvalid identifier "
                f"'{name.upper()}'",
            )
        return SqlError(
            "UNRESOLVED_COLUMN",
            "42703",
            f"[UNRESOLVED_COLUMN.WITHOUT_SUGGESTION] A column, variable, or function parameter "
            f"with name `{name.lower()}` cannot be resolved. SQLSTATE: 42703",
        )

    def _ok(self, message: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        return (["status"], [(message,)])

    def _statement(self, stmt: Stmt, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        handler = getattr(self, f"_do_{stmt.kind}", None)
        if handler is not None:
            return handler(stmt)
        return self._other(stmt, sql)

    # ------------------------------------------------------------------ policies, functions

    def _attached(self, name: str) -> list[str]:
        key = self.key(name)
        where = []
        for t in self.tables.values():
            if t.row_filter and self.key(t.row_filter[0]) == key:
                where.append(t.name)
            where += [f"{t.name}.{c}" for c, (p, _) in t.masks.items() if self.key(p) == key]
            where += [f"{t.name}.{c}" for c, p in t.projections.items() if self.key(p) == key]
            where += [t.name for a in (t.aggregation, t.join) if a and self.key(a[0]) == key]
        where += [
            tag.name for tag in self.tags.values() if key in map(self.key, tag.masking_policies)
        ]
        return where

    def _define(self, stmt: Stmt, kind: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        assert stmt.name is not None
        key = self.key(stmt.name)
        old = self.policies.get(key)
        if old is not None and not stmt.or_replace:
            if stmt.if_not_exists:
                return self._ok(f"{stmt.name} already exists, statement succeeded.")
            raise SqlError(
                "002002", "42710", f"SQL compilation error:\nObject '{key}' already exists."
            )
        if (
            old is not None
            and kind == "ROW_ACCESS_POLICY"
            and self.platform == "snowflake"
            and self._attached(key)
        ):
            raise SqlError(
                "003160",
                "0A000",
                "SQL compilation error:\nusing CREATE OR REPLACE ROW ACCESS POLICY is not "
                "supported if the policy is attached to a table or view",
            )
        self.policies[key] = Policy(
            kind=kind,
            name=self.display(stmt.name),
            params=tuple((p.name, p.type) for p in stmt.params),
            returns=stmt.returns or "",
            body=(stmt.body_text or "").strip(),
            comment=stmt.comment,
            secure=stmt.secure,
            owner=self.owner,
            exempt=stmt.exempt,
        )
        if kind == "FUNCTION" and self.platform == "snowflake":
            copy = "COPY GRANTS" in " ".join(stmt.text.upper().split())
            if not copy:
                self.grants.pop(key, None)  # CREATE OR REPLACE without COPY GRANTS drops them
        return self._ok(f"{stmt.name} successfully created.")

    def _do_row_access_policy(self, stmt: Stmt) -> Any:
        return self._define(stmt, "ROW_ACCESS_POLICY")

    def _do_masking_policy(self, stmt: Stmt) -> Any:
        return self._define(stmt, "MASKING_POLICY")

    def _do_function(self, stmt: Stmt) -> Any:
        return self._define(stmt, "FUNCTION")

    def _policy(self, name: str | None, what: str = "Policy") -> Policy:
        found = self.policies.get(self.key(name or ""))
        if found is None:
            raise missing(self.platform, what, self.key(name or ""))
        return found

    def _do_alter_policy_body(self, stmt: Stmt) -> Any:
        self._policy(stmt.name).body = (stmt.body_text or "").strip()
        return self._ok("Statement executed successfully.")

    def _drop_policy(self, name: str | None) -> Any:
        policy = self._policy(name)
        used = self._attached(policy.name)
        if used:
            raise SqlError(
                "003150",
                "0A000",
                f"SQL compilation error:\nPolicy {policy.name} cannot be dropped because it is "
                f"attached to {used[0]}.",
            )
        del self.policies[self.key(policy.name)]
        self.grants.pop(self.key(policy.name), None)
        return self._ok(f"{policy.name} successfully dropped.")

    def _do_drop_row_access_policy(self, stmt: Stmt) -> Any:
        return self._drop_policy(stmt.name)

    def _do_drop_masking_policy(self, stmt: Stmt) -> Any:
        return self._drop_policy(stmt.name)

    # ------------------------------------------------------------------ attachments

    def table(self, name: str | None) -> Table:
        found = self.tables.get(self.key(name or ""))
        if found is None:
            found = self._register(name or "")
        if found is None:
            raise missing(self.platform, "Table", self.key(name or ""))
        return found

    def _register(self, name: str) -> Table | None:
        """A table SQL created (a mapping table) held like a seeded one from the moment a policy,
        a mask or a tag is put on it (or it is asked about by name), its columns as created; its
        reads stay subject to the caller's privileges (:attr:`registered`)."""
        parts = self.key(name).split(".")
        if len(parts) != 3:
            return None
        rows = self.db.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE "
            "upper(table_catalog) = ? AND upper(table_schema) = ? AND upper(table_name) = ? "
            "ORDER BY ordinal_position",
            parts,
        ).fetchall()
        if not rows:
            return None
        key = self.key(name)
        shown = key if self.platform == "snowflake" else key.lower()
        self.tables[key] = Table(shown, {c.upper(): (c, t) for c, t in rows})
        self.registered.add(key)
        return self.tables[key]

    def _column(self, table: Table, column: str | None) -> str:
        key = (column or "").strip('"`').upper()
        if key not in table.columns:
            raise SqlError(
                "000904",
                "42000",
                f"SQL compilation error: error line 0 at position 0\ninvalid identifier '{key}'",
            )
        return key

    def _do_add_row_access(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        if stmt.dropped_policy:
            self._do_drop_row_access(stmt, stmt.dropped_policy)
        policy = self._policy(stmt.policy)
        if table.row_filter is not None:
            raise SqlError(
                "003158",
                "0A000",
                f"SQL compilation error:\nTable {table.name} already has a row access policy "
                f"{table.row_filter[0]} attached.",
            )
        cols = tuple(self._column(table, c) for c in stmt.columns)
        for c in cols:
            if c in table.masks:
                self._refuse_unexempt(table, c, self._policy(table.masks[c][0]), adding=True)
        table.row_filter = (policy.name, cols)
        return self._ok("Statement executed successfully.")

    def _refuse_unexempt(
        self, table: Table, column: str, mask: Policy, adding: bool = False
    ) -> None:
        """Snowflake: a column may be in a masking policy's or a row access policy's signature,
        not both, unless the masking policy is EXEMPT_OTHER_POLICIES = TRUE, which "specifies
        whether the row access policy or conditional masking policy can reference a column that
        is already protected by a masking policy" (sql-reference/sql/create-masking-policy; the
        Snowflake Terraform provider's exempt_other_policies): a mask on a column the table's
        row access policy (or another column's conditional mask) reads is refused otherwise,
        and so is a row access policy on a masked column. The row access policy then reads the
        column's value unmasked. The message is the stand-in's: the documentation quotes none."""
        if self.platform != "snowflake" or mask.exempt:
            return
        read = set(table.row_filter[1]) if table.row_filter and not adding else set()
        read |= {u for c, (_, using) in table.masks.items() if c != column for u in using}
        if adding or column in read:
            raise SqlError(
                "003162",
                "0A000",
                f"SQL compilation error:\nColumn {column} of {table.name} is referenced by "
                "another policy; a masking policy on it must be EXEMPT_OTHER_POLICIES = TRUE.",
            )

    def _do_drop_row_access(self, stmt: Stmt, name: str | None = None) -> Any:
        table = self.table(stmt.table)
        name = name if name is not None else stmt.policy
        if table.row_filter is None or (
            name is not None and self.key(table.row_filter[0]) != self.key(name)
        ):
            raise SqlError(
                "003159",
                "0A000",
                f"SQL compilation error:\nRow access policy '{name}' is not attached to {table.name}.",
            )
        table.row_filter = None
        return self._ok("Statement executed successfully.")

    def _do_set_masking_policy(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        column = self._column(table, stmt.column_name)
        policy = self._policy(stmt.policy)
        self._refuse_unexempt(table, column, policy)
        if column in table.masks and not stmt.force:
            raise SqlError(
                "003157",
                "0A000",
                "SQL compilation error:\nSpecified column already attached to another masking "
                "policy. A column cannot be attached to multiple masking policies. Please drop "
                "the current association in order to attach a new masking policy.",
            )
        using = tuple(c.upper() for c in stmt.columns[1:]) if stmt.columns else ()
        table.masks[column] = (policy.name, using)
        return self._ok("Statement executed successfully.")

    def _do_unset_masking_policy(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        table.masks.pop(self._column(table, stmt.column_name), None)
        return self._ok("Statement executed successfully.")

    def _do_set_row_filter(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        policy = self._policy(stmt.policy, "Routine")
        table.row_filter = (
            policy.name,
            tuple(self._column(table, c).lower() for c in stmt.columns),
        )
        return self._ok("OK")

    def _do_drop_row_filter(self, stmt: Stmt) -> Any:
        self.table(stmt.table).row_filter = None
        return self._ok("OK")

    def _do_set_mask(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        column = self._column(table, stmt.column_name)
        policy = self._policy(stmt.policy, "Routine")
        table.masks[column] = (policy.name, tuple(c.lower() for c in stmt.columns))
        return self._ok("OK")

    def _do_drop_mask(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        table.masks.pop(self._column(table, stmt.column_name), None)
        return self._ok("OK")

    # ------------------------------------------------------------------ tags

    def _do_snowflake_tag(self, stmt: Stmt) -> Any:
        assert stmt.name is not None
        key = self.key(stmt.name)
        if key in self.tags and stmt.if_not_exists:
            return self._ok("exists")
        if key in self.tags and stmt.or_replace and self.tags[key].masking_policies:
            raise SqlError("003161", "0A000", f"Tag {key} has masking policies: unset them first.")
        self.tags[key] = TagDef(key, self._allowed_values(stmt.text), comment=stmt.comment)
        return self._ok(f"Tag {key} successfully created.")

    def _do_governed_tag(self, stmt: Stmt) -> Any:
        """Databricks ``CREATE GOVERNED TAG``: ALREADY_EXISTS when the key exists (there is no
        IF NOT EXISTS: sql-ref-syntax-ddl-create-governed-tag)."""
        assert stmt.name is not None
        if stmt.name.upper() in self.tags:
            raise SqlError("ALREADY_EXISTS", "42710", f"Governed tag {stmt.name} already exists")
        values = self._allowed_values(stmt.text, "VALUES")
        self.tags[stmt.name.upper()] = TagDef(stmt.name, values, comment=stmt.comment or "")
        return self._ok("OK")

    def _do_alter_governed_tag(self, stmt: Stmt) -> Any:
        """``ALTER GOVERNED TAG k SET VALUES (...)`` replaces the allowed values; NOT_FOUND when
        there is no such governed tag."""
        tag = self.tags.get((stmt.name or "").upper())
        if tag is None:
            raise SqlError("NOT_FOUND", "42704", f"Governed tag {stmt.name} does not exist")
        self.tags[tag.name.upper()] = TagDef(
            tag.name, self._allowed_values(stmt.text, "VALUES"), comment=tag.comment
        )
        return self._ok("OK")

    def _do_drop_governed_tag(self, stmt: Stmt) -> Any:
        if self.tags.pop((stmt.name or "").upper(), None) is None:
            raise SqlError("NOT_FOUND", "42704", f"Governed tag {stmt.name} does not exist")
        return self._ok("OK")

    def _allowed_values(self, text: str, keyword: str = "ALLOWED_VALUES") -> tuple[str, ...]:
        """The string literals after ``keyword`` (ALLOWED_VALUES), read from sqlglot's tokens."""
        from sqlglot.dialects.dialect import Dialect
        from sqlglot.tokens import TokenType

        tokens = Dialect.get_or_raise(self.dialect).tokenizer_class().tokenize(text)
        values: list[str] = []
        inside = False
        for tok in tokens:
            if tok.text.upper() == keyword:
                inside = True
            elif inside and tok.token_type == TokenType.STRING:
                values.append(tok.text)
            elif inside and tok.token_type not in (TokenType.COMMA, TokenType.L_PAREN):
                break
        return tuple(values)

    def _do_alter_tag_set_masking(self, stmt: Stmt) -> Any:
        tag = self.tags.get(self.key(stmt.name or ""))
        if tag is None:
            raise missing(self.platform, "Tag", self.key(stmt.name or ""))
        for p in stmt.policies:
            self._policy(p)
            if self.key(p) not in map(self.key, tag.masking_policies):
                tag.masking_policies.append(self.key(p))
        return self._ok("Statement executed successfully.")

    def _do_alter_tag_unset_masking(self, stmt: Stmt) -> Any:
        tag = self.tags.get(self.key(stmt.name or ""))
        if tag is None:
            raise missing(self.platform, "Tag", self.key(stmt.name or ""))
        drop = {self.key(p) for p in stmt.policies}
        tag.masking_policies = [p for p in tag.masking_policies if self.key(p) not in drop]
        return self._ok("Statement executed successfully.")

    def _tag_on(self, stmt: Stmt, column: str | None) -> Any:
        table = self.table(stmt.table)
        col = self._column(table, column) if column else ""
        for tag, value in stmt.tags:
            table.tags[(col, self.key(tag) if self.platform == "snowflake" else tag)] = value
        return self._ok("Statement executed successfully.")

    def _do_set_column_tag(self, stmt: Stmt) -> Any:
        return self._tag_on(stmt, stmt.column_name)

    def _do_set_table_tag(self, stmt: Stmt) -> Any:
        return self._tag_on(stmt, None)

    def _do_set_tags(self, stmt: Stmt) -> Any:
        return self._tag_on(stmt, stmt.column_name)

    def _do_unset_tags(self, stmt: Stmt) -> Any:
        """Databricks ``UNSET TAGS ('k', ...)``: each key's assignment removed (a key the
        object does not carry: whether Databricks refuses it is not documented; accepted)."""
        table = self.table(stmt.table)
        col = self._column(table, stmt.column_name) if stmt.column_name else ""
        for tag, _ in stmt.tags:
            table.tags.pop((col, tag), None)
        return self._ok("Statement executed successfully.")

    # ------------------------------------------------------------------ ABAC (Databricks)

    def _do_abac_policy(self, stmt: Stmt) -> Any:
        a = stmt.abac
        assert a is not None and stmt.name is not None
        key = (a.securable_type, self.key(a.securable), stmt.name.upper())
        if key in self.abac and not stmt.or_replace:
            raise SqlError("POLICY_ALREADY_EXISTS", "42710", f"[POLICY_ALREADY_EXISTS] {stmt.name}")
        kind = "POLICY_TYPE_ROW_FILTER" if a.kind == "ROW FILTER" else "POLICY_TYPE_COLUMN_MASK"
        info: dict[str, Any] = {
            "name": stmt.name,
            "on_securable_type": a.securable_type,
            "on_securable_fullname": a.securable,
            "for_securable_type": "TABLE",
            "policy_type": kind,
            "to_principals": list(a.to),
            "except_principals": list(a.except_),
            "comment": a.comment,
            "match_columns": [
                {"condition": cond.sql(dialect="databricks"), "alias": alias}
                for cond, alias in a.match_columns
            ],
        }
        if a.when is not None:
            info["when_condition"] = a.when.sql(dialect="databricks")
        using = [{"alias": u} for u in a.using]
        if kind == "POLICY_TYPE_ROW_FILTER":
            info["row_filter"] = {"function_name": a.function, "using": using}
        else:
            info["column_mask"] = {
                "function_name": a.function,
                "on_column": a.on_column,
                "using": using,
            }
        self.abac[key] = info
        return self._ok("OK")

    def _do_drop_abac_policy(self, stmt: Stmt) -> Any:
        a = stmt.abac
        assert a is not None and stmt.name is not None
        self.abac.pop((a.securable_type, self.key(a.securable), stmt.name.upper()), None)
        return self._ok("OK")

    # ------------------------------------------------------------------ everything else

    def _other(self, stmt: Stmt, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        tree = stmt.expression
        if tree is None:
            return self._command(sql)
        if isinstance(tree, exp.Transaction | exp.Commit | exp.Rollback):
            return self._ok("Statement executed successfully.")
        if isinstance(tree, exp.Grant | exp.Revoke):
            return self._grant(tree)
        if isinstance(tree, exp.Describe):
            return self._describe(tree)
        if isinstance(tree, exp.Drop) and (tree.args.get("kind") or "").upper() == "FUNCTION":
            table = tree.find(exp.Table)
            assert table is not None
            name = self._table_name(table)
            if self.key(name) not in self.policies:
                if tree.args.get("exists"):
                    return self._ok("Drop statement executed successfully.")
                raise missing(self.platform, "Function", self.key(name))
            return self._drop_policy(name)
        if isinstance(tree, exp.Create) and (tree.args.get("kind") or "").upper() == "TABLE":
            table = tree.find(exp.Table)
            assert table is not None
            self._ensure(self._table_name(table))
        if isinstance(tree, exp.Insert) and tree.args.get("overwrite"):
            return self._insert_overwrite(tree)
        if isinstance(tree, exp.Alter) and any(
            isinstance(a, exp.Schema) for a in tree.args.get("actions") or []
        ):
            return self._add_columns(tree)
        return self._duckdb(tree)

    def _add_columns(self, tree: exp.Alter) -> Any:
        """Databricks ``ALTER TABLE t ADD COLUMNS (c type, ...)``
        (sql-ref-syntax-ddl-alter-table-manage-column): the syntax has no IF NOT EXISTS and
        "the name must be unique within the table", so a column the table already has fails
        the statement (error class FIELDS_ALREADY_EXISTS) and none of its columns is added."""
        target = tree.this
        assert isinstance(target, exp.Table)
        wanted = [c for a in tree.args["actions"] for c in a.expressions]
        cursor = self.db.execute(f"SELECT * FROM {self._quoted(self._table_name(target))} LIMIT 0")
        have = {d[0].upper() for d in cursor.description or []}
        for c in wanted:
            if c.name.upper() in have:
                raise SqlError(
                    "FIELDS_ALREADY_EXISTS",
                    "42710",
                    f"[FIELDS_ALREADY_EXISTS] Cannot add column, because `{c.name}` already "
                    f"exists in {self.display(self._table_name(target))}. SQLSTATE: 42710",
                )
        for c in wanted:
            one = exp.Alter(this=target.copy(), kind="TABLE", actions=[c.copy()])
            self._duckdb(one)
        return self._ok("OK")

    def _insert_overwrite(self, tree: exp.Insert) -> Any:
        """Snowflake's ``INSERT OVERWRITE``: the table is truncated and refilled in one
        transaction (sql-reference/sql/insert), so no reader sees it empty in between."""
        target = tree.find(exp.Table)
        assert target is not None
        plain = tree.copy()
        plain.set("overwrite", None)
        with self.lock:
            self.db.execute("BEGIN TRANSACTION")
            try:
                self._duckdb(exp.delete(target.copy()))
                out = self._duckdb(plain)
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        return out

    def _table_name(self, table: exp.Table) -> str:
        parts = [table.catalog, table.db, table.name]
        if isinstance(table.this, exp.Anonymous):
            parts[-1] = table.this.name
        return ".".join(p for p in parts if p)

    def _grant(self, tree: exp.Grant | exp.Revoke) -> Any:
        securable = tree.args["securable"]
        name = self.key(self._table_name(securable))
        if name not in self.policies:
            raise missing(self.platform, "Function", name)
        privileges = [p.this.name.upper() for p in tree.args.get("privileges") or []]
        grantees = [p.this.name for p in tree.args.get("principals") or []]
        held = self.grants.setdefault(name, set())
        for priv in privileges:
            for who in grantees:
                who = who.upper() if self.platform == "snowflake" else who
                if isinstance(tree, exp.Grant):
                    held.add((priv, who))
                else:
                    held.discard((priv, who))
        return self._ok("Statement executed successfully.")

    # ------------------------------------------------------------------ governed reads

    def _govern(self, tree: exp.Expression, skip: set[str] | None = None) -> exp.Expression:
        """Every governed table a query reads -> the rows and values its policies let through
        (``skip``: tables whose governed read this one is inside of)."""

        def replace(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.Table) or node.meta.get("standin_raw"):
                return node
            t = self.tables.get(self.key(self._table_name(node))) if node.name else None
            if t is None or (t.row_filter is None and not self._masks_of(t)):
                return node
            if skip and t.name in skip:
                return node
            inside = {*(skip or ()), t.name}
            governed = self._governed_select(t, inside).subquery(
                node.alias or node.name, copy=False
            )
            return governed

        return tree.transform(replace)

    def _masks_of(self, t: Table) -> dict[str, tuple[str, tuple[str, ...]]]:
        """UPPER column -> (mask, using columns), as set on the columns."""
        return dict(t.masks)

    def _governed_select(self, t: Table, skip: set[str] | None = None) -> exp.Select:
        alias = f"__standin_raw_{next(self._alias)}"
        raw = exp.to_table(self._quoted(t.name), dialect="duckdb")
        raw.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        raw.meta["standin_raw"] = True

        def col(name: str) -> exp.Column:
            return exp.column(
                exp.to_identifier(t.columns[name.upper()][0], quoted=True), table=alias
            )

        masks = self._masks_of(t)
        selects = []
        for upper, (name, _) in t.columns.items():
            value: exp.Expression = col(upper)
            if upper in masks:
                policy, using = masks[upper]
                value = self._bound(policy, [col(upper), *(col(u) for u in using)])
            selects.append(exp.alias_(value, exp.to_identifier(name, quoted=True)))
        select = exp.select(*selects).from_(raw)
        if t.row_filter is not None:
            policy, on = t.row_filter
            select = select.where(self._bound(policy, [col(c) for c in on]))
        # a table a policy's subquery reads (a mapping table) is read through its own
        # policies, as any read of it is (Snowflake: user-guide/security-row-using, "a mapping
        # table protected by a row access policy" referenced in another one's body)
        return self._govern(select, skip={*(skip or ()), t.name})

    def _bound(self, name: str, args: list[exp.Expression]) -> exp.Expression:
        """A deployed policy's body with its parameters bound to ``args`` (an unqualified
        column of a parameter's name, unless a table the enclosing subquery reads has that
        column: the inner scope wins, as in compiler/verify/bind.py)."""
        policy = self._policy(name)
        body = sqlglot.parse_one(policy.body, read=self.dialect)
        index = {p.upper(): i for i, (p, _) in enumerate(policy.params)}
        for column in list(body.find_all(exp.Column)):
            i = index.get(column.name.upper())
            if i is None or column.table or self._shadowed(column):
                continue
            if column is body:
                return exp.paren(args[i].copy(), copy=False)
            column.replace(args[i].copy())
        return exp.paren(body, copy=False)

    def _shadowed(self, column: exp.Column) -> bool:
        node = column.parent
        while node is not None:
            if isinstance(node, exp.Select):
                for table in node.find_all(exp.Table):
                    if table.parent_select is node and self._has_column(table, column.name):
                        return True
            node = node.parent
        return False

    def _has_column(self, table: exp.Table, column: str) -> bool:
        parts = self.key(self._table_name(table)).split(".")
        if len(parts) != 3:
            return False
        rows = self.db.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_catalog = ? AND "
            "table_schema = ? AND table_name = ? AND upper(column_name) = ?",
            [*parts, column.upper()],
        ).fetchall()
        return bool(rows)

    # ------------------------------------------------------------------ reads

    def _describe(self, tree: exp.Describe) -> Any:
        table = tree.find(exp.Table)
        assert table is not None
        name = self._table_name(table)
        policy = self._policy(name)
        signature = "(" + ", ".join(f"{n} {t}" for n, t in policy.params) + ")"
        return (
            ["name", "signature", "return_type", "body"],
            [(policy.name.split(".")[-1], signature, policy.returns, policy.body)],
        )

    def _command(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        raise self._syntax(f"unsupported statement: {sql.split()[0] if sql.split() else ''}")

    def _duckdb(self, tree: exp.Expression) -> tuple[list[str], list[tuple[Any, ...]]]:
        tree = self.rewrite(tree.copy())
        text = tree.sql(dialect="duckdb")
        try:
            cursor = self.db.execute(text)
        except duckdb.CatalogException as err:
            raise missing(self.platform, "Object", str(err).splitlines()[0]) from None
        except duckdb.BinderException as err:
            raise self._unknown_column(str(err)) from None
        except duckdb.Error as err:
            raise self._syntax(str(err).splitlines()[0]) from None
        if cursor.description is None:
            return self._ok("OK")
        names = [d[0] for d in cursor.description]
        return names, [tuple(r) for r in cursor.fetchall()]

    def materialize(self, columns: list[str], rows: list[tuple[Any, ...]]) -> exp.Table:
        """A temporary DuckDB table holding ``rows``: what a catalog function returns."""
        name = f"__standin_{next(self._temp)}"
        cols = ", ".join(f'"{c}" VARCHAR' for c in columns)
        self.db.execute(f'CREATE TEMP TABLE "{name}" ({cols})')
        if rows:
            # one statement for all rows (executemany costs a statement a row: seconds for the
            # thousands of references of a large estate)
            picks = ", ".join(f"r[{i + 1}]" for i in range(len(columns)))
            self.db.execute(
                f'INSERT INTO "{name}" SELECT {picks} FROM (SELECT UNNEST(?::VARCHAR[][]) AS r)',
                [[[None if v is None else str(v) for v in r] for r in rows]],
            )
        return exp.to_table(name)

    def rewrite(self, tree: exp.Expression) -> exp.Expression:
        """Replace the platform's own functions and views with what this estate holds."""

        def call_name(node: exp.Expression) -> str | None:
            if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
                prefix = node.this.sql(dialect=self.dialect)
                return f"{prefix}.{node.expression.name}"
            return None

        def replace(node: exp.Expression) -> exp.Expression:
            name = call_name(node)
            if name is not None and self.key(name) in self.policies:
                fn = self.policies[self.key(name)]
                return exp.paren(sqlglot.parse_one(fn.body, read=self.dialect), copy=False)
            if isinstance(node, exp.Anonymous) and node.name.upper() in (
                "IS_ROLE_IN_SESSION",
                "IS_ACCOUNT_GROUP_MEMBER",
            ):
                members = [exp.Literal.string(s) for s in sorted(self.session)] or [exp.null()]
                return exp.In(this=node.expressions[0], expressions=members)
            if isinstance(node, exp.Anonymous) and node.name.upper() == "GET_DDL":
                target = node.expressions[1].name
                found = self.policies.get(self.key(target))
                return exp.Literal.string(self._ddl(found)) if found else exp.null()
            return node

        tree = tree.transform(replace)
        return self.rewrite_tables(tree)

    def rewrite_tables(self, tree: exp.Expression) -> exp.Expression:
        return tree

    def _ddl(self, policy: Policy) -> str:
        kind = policy.kind.replace("_", " ").lower()
        sig = ", ".join(f"{n} {t}" for n, t in policy.params)
        return f"create or replace {kind} {policy.name} as ({sig}) returns {policy.returns} -> {policy.body}"
