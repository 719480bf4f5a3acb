"""A Snowflake account for snowflake-connector-python, over the connector's real protocol.

The connector is pointed at ``host=127.0.0.1, port=N, protocol='http'`` and speaks its own REST
protocol: ``POST /session/v1/login-request`` (a session token back), ``POST
/queries/v1/query-request`` (``{"sqlText": ...}``; the answer is the JSON result format, a
``rowtype`` and a ``rowset`` of strings, or ``success: false`` with the error ``code`` and
``sqlState`` the connector turns into ``ProgrammingError(errno, sqlstate)``), ``POST
/session?delete=true`` and ``/telemetry/send``. fakesnow 0.12.1 has a server mode, but it runs
statements on DuckDB and has no notion of policies (its DESCRIBE returns a NULL ``policy name``
column), so it cannot hold what accord deploys: this stand-in holds it in :class:`Estate`.

Output columns are the documented ones, lower-case as SHOW and DESCRIBE return them
(docs.snowflake.com/en/sql-reference/sql/show-masking-policies, show-row-access-policies,
desc-masking-policy, show-user-functions, show-grants, show-tags; show-projection-policies,
show-aggregation-policies, show-join-policies, desc-*-policy; POLICY_REFERENCES:
sql-reference/functions/policy_references).

Roles (issue 26): ``CREATE ROLE``, ``GRANT ROLE a TO ROLE b`` / ``REVOKE ROLE a FROM ROLE b``
(a cycle refused) build the role hierarchy an administrator keeps; ``SHOW GRANTS TO ROLE`` lists
``USAGE`` on ``ROLE a`` for each role granted to b, ``SHOW GRANTS OF ROLE a`` the roles and users
a is granted to, both for a reading role that may see the role (:meth:`SnowflakeEstate.sees_role`),
and ``IS_ROLE_IN_SESSION`` sees every role under the session's primary and secondary roles.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from accord.sandbox.standins.engine import Estate, SqlError, Table, missing
from accord.sandbox.standins.history import history_of
from accord.sandbox.standins.http import Handler, serve
from accord.sandbox.standins.reader import Stmt
from accord.sandbox.standins.snowflake_listings import ListingMixin
from accord.sandbox.standins.snowflake_owners import OwnershipMixin
from accord.sandbox.standins.snowflake_simulate import SimulationMixin
from accord.sandbox.standins.snowflake_tags import TagInheritanceMixin


@dataclass
class Session:
    """One login's session: its user, primary role and secondary roles (``None`` until a
    ``USE ROLE``: then the estate's own :attr:`Estate.session` roles apply, as before)."""

    user: str
    primary: str | None = None
    #: the secondary roles *activated* (a session policy may allow fewer than requested)
    secondary: list[str] = field(default_factory=list)
    #: the role the login asked for (the connector's ``role``): the reading role until a
    #: ``USE ROLE``
    login_role: str | None = None
    #: what USE SECONDARY ROLES asked for: ALL, or the roles named ("" for NONE)
    requested: str = ""

    def in_session(self) -> set[str]:
        return {self.primary, *self.secondary} if self.primary else set(self.secondary)


class SnowflakeEstate(ListingMixin, OwnershipMixin, TagInheritanceMixin, SimulationMixin, Estate):
    """A Snowflake account. A ``SELECT`` reads a governed table the way Snowflake does: its
    row access policy filters the rows and its masking policies (set on the column, or through
    a tag on the column or the table whose masking policy returns the column's type) transform
    the values, the policy bodies being what the deployed statements left here, evaluated on
    DuckDB with ``IS_ROLE_IN_SESSION`` seeing the session's primary and secondary roles and
    ``CURRENT_ROLE()`` the primary only (docs.snowflake.com/en/user-guide/security-row-intro,
    security-column-intro, sql-reference/functions/is_role_in_session, current_role)."""

    def __init__(self, owner: str = "ACCORD_DEPLOYER") -> None:
        super().__init__("snowflake", owner)
        #: UPPER user -> the roles granted to it (a user not listed may use any role)
        self.user_roles: dict[str, set[str]] = {}
        #: when set, the password of each user (upper case) a login must give; any other
        #: login is refused as Snowflake refuses it (390100 "Incorrect username or password
        #: was specified.", which the connector raises as 250001 (08001))
        self.passwords: dict[str, str] = {}
        #: the session of the statement being executed (set by the HTTP handler)
        self.current: Session | None = None
        #: role -> {(privilege, granted_on, name)}, what ``SHOW GRANTS TO ROLE`` lists besides
        #: the implicit ones: ``USAGE`` on ``ROLE`` r or ``DATABASE_ROLE`` d puts r or d under
        #: the role (the role hierarchy). ``PUBLIC`` is under every role.
        self.role_grants: dict[str, set[tuple[str, str, str]]] = {}
        #: roles that read as an account administrator: every answer unfiltered. The default
        #: reading role (the login's, when it names none) is the owner, so the suite's existing
        #: tests read as before; a least-privilege reader is a role outside this set.
        self.all_seeing: set[str] = {owner, "ACCOUNTADMIN"}
        #: UPPER grantee of a function grant -> its kind as ``SHOW GRANTS`` says it
        #: (``granted_to``): ROLE (the default), DATABASE_ROLE, SHARE, APPLICATION_ROLE
        self.grantee_kinds: dict[str, str] = {}
        #: rows a result may carry in its first part; the rest are served as ``chunks`` the
        #: connector downloads itself (None: every row in the first part)
        self.chunk_rows: int | None = None
        #: how many result chunks were served (a test that must cross one checks it)
        self.chunks_served = 0
        #: how many of them the connector downloaded
        self.chunks_downloaded = 0
        #: UPPER user -> the ALLOWED_SECONDARY_ROLES of the session policy set on it (fact 6)
        self.session_policies: dict[str, tuple[str, ...]] = {}
        #: UPPER role -> the role that owns it (its creator); a role not listed is the
        #: account administrator's
        self.role_owners: dict[str, str] = {}
        #: roles made with CREATE ROLE (a role also exists once it holds or is granted a grant)
        self.created_roles: set[str] = set()
        #: a hostile account: ``SHOW GRANTS OF ROLE r`` answered with another role's rows
        self.grants_of_answered_as: dict[str, str] = {}
        #: UPPER table -> its owning role (sandbox/standins/snowflake_owners.py)
        self.table_owners: dict[str, str] = {}
        #: database and schema tags, and propagated column tags (sandbox/standins/snowflake_tags.py)
        self.container_tags: dict[tuple[str, str], dict[str, str]] = {}
        self.propagated: set[tuple[str, str, str]] = set()
        #: EXECUTE USING POLICY_CONTEXT (sandbox/standins/snowflake_simulate.py)
        self.simulation_honours_roles = True
        self.simulating = False

    def role_key(self, name: str) -> str:
        """A role's name as Snowflake resolves it (docs.snowflake.com/en/sql-reference/
        identifiers-syntax): in double quotes, exactly as written (``""`` a quote), "the case
        of the identifier is preserved"; else in upper case ("unquoted ... identifiers are
        stored and resolved as uppercase characters"). ``CURRENT_ROLE()`` and ``SHOW`` give
        the stored name."""
        if len(name) >= 2 and name[0] == name[-1] == '"':
            return name[1:-1].replace('""', '"')
        return name.upper()

    def grant_roles(self, user: str, roles: list[str]) -> None:
        self.user_roles.setdefault(user.upper(), set()).update(r.upper() for r in roles)

    # ------------------------------------------------------------------ the privilege model

    def grant_to_role(self, role: str, privilege: str, granted_on: str, name: str = "") -> None:
        """``GRANT <privilege> ON <granted_on> <name> TO ROLE <role>`` (``ACCOUNT`` for the
        global privileges; ``ROLE`` / ``DATABASE_ROLE`` with ``USAGE`` for the hierarchy)."""
        on = granted_on.upper().replace(" ", "_")
        named = (self.role_key(name) if on == "ROLE" else self.key(name)) if name else ""
        self.role_grants.setdefault(self.role_key(role), set()).add((privilege.upper(), on, named))

    def grant_on_function(self, function: str, privilege: str, grantee: str, kind: str) -> None:
        """A grant on a function to a grantee of ``kind`` (ROLE, DATABASE_ROLE, SHARE,
        APPLICATION_ROLE), as a console or another tool makes it."""
        who = self.key(grantee)
        self.grants.setdefault(self.key(function), set()).add((privilege.upper(), who))
        self.grantee_kinds[who] = kind.upper().replace(" ", "_")

    def reading_role(self) -> str:
        """The primary role of the statement's session: ``USE ROLE``'s, else the login's, else
        the owner (a session that named no role)."""
        s = self.current
        if s is None:
            return self.owner
        return s.primary or s.login_role or self.owner

    def closure(self, role: str | None = None) -> set[str]:
        """The role and every role and database role under it, and PUBLIC."""
        seen: set[str] = set()
        todo = [role or self.reading_role(), "PUBLIC"]  # resolved names (:meth:`role_key`)
        while todo:
            r = todo.pop()
            if r in seen:
                continue
            seen.add(r)
            for priv, on, name in self.role_grants.get(r, ()):
                if priv == "USAGE" and on in ("ROLE", "DATABASE_ROLE"):
                    todo.append(name)
        return seen

    def sees_all(self) -> bool:
        return bool(self.closure() & self.all_seeing)

    def holds(self, privilege: str, on: str, name: str = "") -> bool:
        """Whether the reading role (or a role under it) holds ``privilege`` on the object."""
        if self.sees_all():
            return True
        key = self.key(name) if name else ""
        return any(
            (privilege.upper(), on, key) in self.role_grants.get(r, ()) for r in self.closure()
        )

    def any_privilege(self, on: str, name: str, owner: str | None = None) -> bool:
        """Whether the reading role holds at least one privilege on the object (its ownership
        included): what SHOW lists and what a name resolves for."""
        if self.sees_all():
            return True
        roles = self.closure()
        if owner is not None and owner.upper() in roles:
            return True
        key = self.key(name)
        return any(o == on and n == key for r in roles for _, o, n in self.role_grants.get(r, ()))

    def _global(self, kind: str) -> bool:
        """The global APPLY privilege of a policy kind (MASKING_POLICY, ROW_ACCESS_POLICY)."""
        return self.holds(f"APPLY {kind.replace('_', ' ')}", "ACCOUNT")

    def sees_policy(self, p: Any) -> bool:
        """SHOW / DESCRIBE of a policy: the global APPLY privilege of its kind, or APPLY or
        OWNERSHIP on it (sql-reference/sql/desc-masking-policy, access control
        requirements), in a schema the role can resolve (:meth:`resolves`)."""
        held = self._global(p.kind) or self.any_privilege(p.kind, p.name, p.owner)
        return held and self.resolves(p.name)

    def resolves(self, name: str) -> bool:
        """Whether the reading role can resolve the schema ``name`` is in: "The USAGE privilege
        on the parent database and schema are required to perform operations on any object in
        a schema ... a role granted any privilege on a schema allows that role to resolve the
        schema" (sql-reference/sql/desc-masking-policy, access control requirements), whatever
        global APPLY privilege it holds; MANAGE GRANTS "implicitly allows its holder to see
        every object in the account" (sql-reference/sql/show-privileges). So SHOW ... POLICIES
        IN ACCOUNT leaves out a policy of a database the role holds nothing on (issue 41,
        item 4)."""
        if self.holds("MANAGE GRANTS", "ACCOUNT"):
            return True
        db, schema, _ = self.key(name).split(".")
        return self.any_privilege("DATABASE", db) and self.any_privilege("SCHEMA", f"{db}.{schema}")

    def sees_function(self, fn: Any) -> bool:
        """A function is listed and resolves only for a role that holds a privilege on it
        (USAGE, OWNERSHIP), or MANAGE GRANTS, which "implicitly allows its holder to see every
        object in the account" (sql-reference/sql/show-privileges, usage notes)."""
        if self.holds("MANAGE GRANTS", "ACCOUNT") or self.any_privilege(
            "FUNCTION", fn.name, fn.owner
        ):
            return True
        roles = self.closure()
        return any(who in roles for _, who in self.grants.get(self.key(fn.name), ()))

    def sees_table(self, name: str) -> bool:
        return self.any_privilege("TABLE", name, self.table_owner(name))

    def _not_authorized(self, what: str, name: str) -> SqlError:
        return missing("snowflake", what, self.key(name))

    def seed_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Rows of a data table, written underneath its policies (as its loader would)."""
        t = self.table(name)
        for row in rows:
            cols = [t.columns[c.upper()][0] for c in row]
            names = ", ".join(f'"{c}"' for c in cols)
            marks = ", ".join("?" for _ in cols)
            self.db.execute(
                f"INSERT INTO {self._quoted(name)} ({names}) VALUES ({marks})", list(row.values())
            )

    # ------------------------------------------------------------------ the session

    def execute_as(self, session: Session, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        with self.lock:
            self.current = session
            try:
                return self.execute(sql)
            finally:
                self.current = None

    def _roles_in_session(self) -> set[str]:
        """The roles IS_ROLE_IN_SESSION sees: the session's primary and secondary roles and
        "any role lower in the role hierarchy" of each (sql-reference/functions/
        is_role_in_session), PUBLIC included (it is granted to every role)."""
        if self.current is None or self.current.primary is None:
            roles = set(self.session)
        else:
            roles = self.current.in_session()
        if not roles:
            return roles
        return set().union(*(self.closure(r) for r in roles))

    def _other(self, stmt: Stmt, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        if isinstance(stmt.expression, exp.Use):
            return self._use(stmt.expression)
        if isinstance(stmt.expression, exp.Show):  # sqlglot parses some SHOW forms: read them
            return self._command(sql)  # as the others, from their tokens
        return super()._other(stmt, sql)

    def _granted(self) -> set[str] | None:
        user = self.current.user.upper() if self.current is not None else ""
        return self.user_roles.get(user)

    def _grant(self, tree: exp.Grant | exp.Revoke) -> Any:
        """``REVOKE ... FROM ROLE r`` where r is a database role, a share or an application
        role names no such role: 002003, and nothing is revoked (fact 5)."""
        if isinstance(tree, exp.Revoke):
            for p in tree.args.get("principals") or []:
                who = self.key(p.this.name)
                if self.grantee_kinds.get(who, "ROLE") != "ROLE" or who not in self._roles():
                    raise missing("snowflake", "Role", who)
        return super()._grant(tree)

    def _roles(self) -> set[str]:
        """The account roles that exist: granted, holding grants, or the built-in ones."""
        roles = {"PUBLIC", *self.all_seeing, *self.role_grants, *self.created_roles}
        roles |= {n for g in self.role_grants.values() for p, o, n in g if o == "ROLE"}
        roles |= {r for rs in self.user_roles.values() for r in rs}
        roles |= {
            who
            for held in self.grants.values()
            for _, who in held
            if self.grantee_kinds.get(who, "ROLE") == "ROLE"
        }
        return roles

    def _describe(self, tree: exp.Describe) -> Any:
        """DESCRIBE ... POLICY needs APPLY or OWNERSHIP on the policy, or the global APPLY
        privilege of its kind; otherwise the policy "does not exist or not authorized"
        (facts 7 and 8: sql-reference/sql/desc-masking-policy)."""
        table = tree.find(exp.Table)
        assert table is not None
        policy = self.policies.get(self.key(self._table_name(table)))
        if policy is not None and not self.sees_policy(policy):
            raise missing("snowflake", "Policy", self.key(policy.name))
        return super()._describe(tree)

    def _use(self, tree: exp.Use) -> tuple[list[str], list[tuple[Any, ...]]]:
        """``USE ROLE r``; ``USE SECONDARY ROLES { ALL | NONE | r [, ...] }``
        (docs.snowflake.com/en/sql-reference/sql/use-role, use-secondary-roles)."""
        session = self.current
        if session is None:
            raise self._syntax("USE outside a session")
        kind = (tree.text("kind") or "").upper()
        granted = self._granted()

        def check(role: str) -> str:
            role = self.key(role)
            if granted is not None and role not in granted:
                raise SqlError(
                    "002003",
                    "02000",
                    f"SQL compilation error:\nRole '{role}' does not exist or not authorized.",
                )
            return role

        if kind == "ROLE":
            session.primary = check(tree.this.name)
            return self._ok("Statement executed successfully.")
        if kind == "SECONDARY ROLES":
            word = tree.this.name.upper() if isinstance(tree.this, exp.Var) else ""
            if word == "NONE":
                requested, session.requested = [], ""
            elif word == "ALL":
                requested, session.requested = sorted(granted or set()), "ALL"
            else:
                requested = [check(t.name) for t in tree.expressions]
                session.requested = ",".join(requested)
            session.secondary = self._allowed_secondary(session.user, requested)
            return self._ok("Statement executed successfully.")
        raise self._syntax(f"unsupported USE {kind}")

    # ------------------------------------------------------------------ session policies
    # Fact 6 (docs.snowflake.com/en/sql-reference/sql/use-secondary-roles, usage notes; and
    # user-guide/session-policies-using, ALLOWED_SECONDARY_ROLES): USE SECONDARY ROLES records
    # the requested roles and succeeds, but a session policy set on the user (or account)
    # activates only the secondary roles it allows; with ALLOWED_SECONDARY_ROLES = () the
    # statement fails ("No secondary roles are activated due to the session policy ...").
    # CURRENT_SECONDARY_ROLES() answers {"roles": <activated>, "value": <requested>}
    # (sql-reference/functions/current_secondary_roles).

    def set_session_policy(self, user: str, allowed_secondary_roles: list[str]) -> None:
        """``CREATE SESSION POLICY ... ALLOWED_SECONDARY_ROLES = (...)`` set on ``user``
        (``ALL`` in the list allows every role)."""
        self.session_policies[user.upper()] = tuple(r.upper() for r in allowed_secondary_roles)

    def _allowed_secondary(self, user: str, requested: list[str]) -> list[str]:
        allowed = self.session_policies.get(user.upper())
        if allowed is None or "ALL" in allowed:
            return requested
        if not allowed and requested:
            # the documented message; its error code is not documented (a placeholder here)
            raise SqlError(
                "003190",
                "42601",
                "No secondary roles are activated due to the session policy associated with "
                "the user or account.",
            )
        return [r for r in requested if r in allowed]

    def _current_secondary_roles(self, tree: exp.Expression) -> exp.Expression:
        session = self.current

        def answer(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.CurrentSecondaryRoles):
                return node
            if session is None:
                return exp.null()
            roles = ",".join(session.secondary)
            doc = json.dumps({"roles": roles, "value": session.requested}, separators=(",", ":"))
            return exp.Literal.string(doc)

        return tree.transform(answer)

    # ------------------------------------------------------------------ governed reads

    def _check_select(self, tree: exp.Expression) -> None:
        """A query names only tables the reading role holds SELECT or OWNERSHIP on (or one
        under it does): any other resolves as it would not exist, error 002003 "does not exist
        or not authorized" (sql-reference/sql/select, access control requirements; fact 7).
        The governed tables are the probes' business (their personas read them through the
        policies) and are not checked here: the tables this checks are the others, the mapping
        tables among them. The policies' own reads of a mapping table run with the owner's
        rights and are not the caller's."""
        if self.current is None or self.sees_all() or self.simulating:
            return
        for table in tree.find_all(exp.Table):
            name = self._table_name(table)
            key = self.key(name)
            governed = key in self.tables and key not in self.registered
            if name.count(".") != 2 or governed or ".INFORMATION_SCHEMA." in key:
                continue
            found = self.db.execute(
                "SELECT 1 FROM information_schema.tables WHERE upper(table_catalog) = ? AND "
                "upper(table_schema) = ? AND upper(table_name) = ?",
                key.split("."),
            ).fetchall()
            if not found:
                continue
            roles = self.closure()
            if self.table_owner(name).upper() in roles or self.holds("SELECT", "TABLE", name):
                continue
            raise missing("snowflake", "Object", key)

    def rewrite(self, tree: exp.Expression) -> exp.Expression:
        if isinstance(tree, exp.Query):
            self._check_select(tree)
            self._check_get_ddl(tree)
            tree = self._govern(tree)
        saved = self.session
        self.session = self._roles_in_session()
        try:
            tree = super().rewrite(tree)
        finally:
            self.session = saved
        primary = None
        if self.current is not None:
            # the session's primary role; a session that named none reads as the owner
            primary = self.current.primary or self.current.login_role
            primary = primary or (self.owner if not self.session else None)

        def current_role(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.CurrentRole):
                return exp.Literal.string(primary) if primary else exp.null()
            return node

        return self._current_secondary_roles(tree.transform(current_role))

    def _check_get_ddl(self, tree: exp.Expression) -> None:
        """``GET_DDL('POLICY', p)`` answers a role that may DESCRIBE the policy, and is "does not
        exist or not authorized" to any other (sql-reference/functions/get_ddl, usage notes:
        the role needs the privileges that describe the object)."""
        for node in tree.find_all(exp.Anonymous):
            if node.name.upper() != "GET_DDL" or len(node.expressions) < 2:
                continue
            found = self.policies.get(self.key(node.expressions[1].name))
            if found is not None and found.kind != "FUNCTION" and not self.sees_policy(found):
                raise missing("snowflake", "Policy", self.key(found.name))

    def _masks_of(self, t: Table) -> dict[str, tuple[str, tuple[str, ...]]]:
        """UPPER column -> (masking policy, using columns): set on the column, else through a tag
        on the column, else through a tag on the table (the policy returning the column's type)."""
        out = super()._masks_of(t)
        for column, (_, col_type) in t.columns.items():
            if column in out:
                continue
            # the column's own tags first, then its table's, schema's and database's
            for tag, *_ in self.effective_tags(t, column):
                if column not in out:
                    out.update(self._tag_mask(column, col_type, tag))
        return out

    def _tag_mask(self, column: str, col_type: str, tag: str) -> dict[str, Any]:
        tagdef = self.tags.get(tag)
        for policy in tagdef.masking_policies if tagdef is not None else []:
            p = self.policies.get(policy)
            if p is not None and p.returns.upper() == col_type.upper():
                return {column: (policy, ())}
        return {}

    # ---- projection, aggregation and join policies (sql-reference/sql/create-projection-policy,
    # create-aggregation-policy, create-join-policy, alter-table): attached with SET, replaced
    # in one statement with SET ... FORCE (without it, a second one is refused, as a second
    # masking policy is), removed with UNSET; an attached policy cannot be dropped

    def _do_projection_policy(self, stmt: Stmt) -> Any:
        return self._define(stmt, "PROJECTION_POLICY")

    def _do_aggregation_policy(self, stmt: Stmt) -> Any:
        return self._define(stmt, "AGGREGATION_POLICY")

    def _do_join_policy(self, stmt: Stmt) -> Any:
        return self._define(stmt, "JOIN_POLICY")

    def _do_drop_projection_policy(self, stmt: Stmt) -> Any:
        return self._drop_policy(stmt.name)

    def _do_drop_aggregation_policy(self, stmt: Stmt) -> Any:
        return self._drop_policy(stmt.name)

    def _do_drop_join_policy(self, stmt: Stmt) -> Any:
        return self._drop_policy(stmt.name)

    def _occupied(self, what: str, where: str) -> SqlError:
        return SqlError(
            "003157",
            "0A000",
            f"SQL compilation error:\n{where} already has a {what} policy attached; use FORCE to "
            "replace it.",
        )

    def _do_set_projection_policy(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        column = self._column(table, stmt.column_name)
        policy = self._policy(stmt.policy)
        if column in table.projections and not stmt.force:
            raise self._occupied("projection", f"Column {table.name}.{column}")
        table.projections[column] = policy.name
        return self._ok("Statement executed successfully.")

    def _do_unset_projection_policy(self, stmt: Stmt) -> Any:
        table = self.table(stmt.table)
        table.projections.pop(self._column(table, stmt.column_name), None)
        return self._ok("Statement executed successfully.")

    def _set_table_policy(self, stmt: Stmt, what: str) -> Any:
        table = self.table(stmt.table)
        policy = self._policy(stmt.policy)
        if getattr(table, what) is not None and not stmt.force:
            raise self._occupied(what, f"Table {table.name}")
        keys = tuple(self._column(table, c) for c in stmt.columns)
        setattr(table, what, (policy.name, keys))
        return self._ok("Statement executed successfully.")

    def _do_set_aggregation_policy(self, stmt: Stmt) -> Any:
        return self._set_table_policy(stmt, "aggregation")

    def _do_set_join_policy(self, stmt: Stmt) -> Any:
        return self._set_table_policy(stmt, "join")

    def _do_unset_aggregation_policy(self, stmt: Stmt) -> Any:
        self.table(stmt.table).aggregation = None
        return self._ok("Statement executed successfully.")

    def _do_unset_join_policy(self, stmt: Stmt) -> Any:
        self.table(stmt.table).join = None
        return self._ok("Statement executed successfully.")

    # SHOW ... is a command sqlglot does not parse: read its tokens
    def _command(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        tokens = Dialect.get_or_raise("snowflake").tokenizer_class().tokenize(sql)
        words = [t.text.upper() for t in tokens if t.token_type != TokenType.SEMICOLON]
        text = " ".join(words)

        def name_after(n: int) -> str:
            out = []
            for t in tokens[n:]:
                if t.token_type in (TokenType.L_PAREN, TokenType.SEMICOLON):
                    break
                out.append(t.text)
            return "".join(out)

        owned = self.ownership_command(words, tokens)
        if owned is None:
            owned = self.container_tag_command(words, tokens)
        if owned is None:
            owned = self.simulate_command(words, sql)
        if owned is not None:
            return owned  # type: ignore[no-any-return]
        if text.startswith("SHOW ROW ACCESS POLICIES IN SCHEMA"):
            return self._show_policies("ROW_ACCESS_POLICY", name_after(6))
        if text.startswith("SHOW MASKING POLICIES IN SCHEMA"):
            return self._show_policies("MASKING_POLICY", name_after(5))
        if text == "SHOW ROW ACCESS POLICIES IN ACCOUNT":
            return self._show_policies("ROW_ACCESS_POLICY", None)
        if text == "SHOW MASKING POLICIES IN ACCOUNT":
            return self._show_policies("MASKING_POLICY", None)
        # {DESC | DESCRIBE} <kind> POLICY p (desc-projection-policy, desc-aggregation-policy,
        # desc-join-policy), which sqlglot does not parse as DESCRIBE: as a masking policy's
        if words[:1] in (["DESC"], ["DESCRIBE"]) and words[2:3] == ["POLICY"]:
            policy = self.policies.get(self.key(name_after(3)))
            if policy is None or not self.sees_policy(policy):
                raise missing("snowflake", "Policy", self.key(name_after(3)))
            return (
                ["name", "signature", "return_type", "body"],
                [(policy.name.split(".")[-1], "()", policy.returns, policy.body)],
            )
        # sql-reference/sql/show-projection-policies, show-aggregation-policies,
        # show-join-policies: SHOW <kind> POLICIES [IN {ACCOUNT | SCHEMA s}]
        for kind in ("PROJECTION", "AGGREGATION", "JOIN"):
            if text.startswith(f"SHOW {kind} POLICIES IN SCHEMA"):
                return self._show_policies(f"{kind}_POLICY", name_after(5))
            if text == f"SHOW {kind} POLICIES IN ACCOUNT":
                return self._show_policies(f"{kind}_POLICY", None)
        if text.startswith("SHOW GRANTS TO ROLE"):
            quoted = len(tokens) > 4 and tokens[4].token_type == TokenType.IDENTIFIER
            role = tokens[4].text if quoted else self.key(name_after(4))
            return self._show_grants_to("ROLE", role)
        if text.startswith("SHOW GRANTS OF ROLE"):
            return self._show_grants_of(name_after(4))
        if text.startswith("SHOW GRANTS TO DATABASE ROLE"):
            return self._show_grants_to("DATABASE_ROLE", name_after(5))
        if text.startswith(("SHOW DATABASES LIKE", "SHOW SCHEMAS LIKE", "SHOW TABLES LIKE")):
            return self._show_like(
                words[1], tokens[3].text, name_after(6) if len(words) > 5 else ""
            )
        if words[:1] in (["GRANT"], ["REVOKE"]) and "FUNCTION" in words:
            return self._function_grant(tokens)
        if words[:2] in (["GRANT", "ROLE"], ["REVOKE", "ROLE"]):
            return self._role_grant(words)
        if words[:2] == ["CREATE", "ROLE"]:
            self.create_role(words[-1])
            return self._ok(f"Role {self.key(words[-1])} successfully created.")
        if text.startswith("SHOW USER FUNCTIONS IN SCHEMA"):
            return self._show_functions(name_after(5))
        if text.startswith("SHOW GRANTS ON FUNCTION"):
            return self._show_grants(name_after(4))
        if text.startswith("SHOW TAGS IN SCHEMA"):
            return self._show_tags(name_after(4))
        return super()._command(sql)


def _rowtype(names: list[str], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    out = []
    for i, name in enumerate(names):
        values = [r[i] for r in rows if r[i] is not None]
        if values and all(isinstance(v, bool) for v in values):
            kind: dict[str, Any] = {"type": "boolean"}
        elif values and all(isinstance(v, int) for v in values):
            kind = {"type": "fixed", "precision": 38, "scale": 0}
        else:
            kind = {"type": "text", "length": 16777216, "byteLength": 16777216}
        out.append({"name": name, "nullable": True, "database": "", "schema": "", "table": "",
                    "precision": None, "scale": None, "length": None, "byteLength": None, **kind})  # fmt: skip
    return out


def _cell(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def handler_for(estate: SnowflakeEstate) -> type[Handler]:
    class Account(Handler):
        state: ClassVar[SnowflakeEstate] = estate
        logins: ClassVar[list[dict[str, Any]]] = []
        #: token -> the login's session
        sessions: ClassVar[dict[str, Session]] = {}
        #: "query id/n" -> the body of a result chunk not yet downloaded
        chunk_bodies: ClassVar[dict[str, bytes]] = {}

        def do_POST(self) -> None:
            body = self.body()
            if self.path.startswith("/session/v1/login-request"):
                data = body.get("data", {})
                self.logins.append(data)
                user = str(data.get("LOGIN_NAME") or "").upper()
                if estate.passwords and estate.passwords.get(user) != data.get("PASSWORD"):
                    # the login Snowflake refuses: code 390100, SQLSTATE 08004
                    return self.send_json(200, {
                        "data": {"nextAction": "RETRY_LOGIN", "authnMethod": "USERNAME_PASSWORD",
                                 "loginName": data.get("LOGIN_NAME")},
                        "code": "390100", "success": False,
                        "message": "Incorrect username or password was specified.",
                    })  # fmt: skip
                token = f"standin-token-{len(self.logins)}"
                # the connector names the role in the query string (``roleName=``)
                query = parse_qs(urlsplit(self.path).query)
                role = estate.role_key((query.get("roleName") or [""])[0]) or None
                self.sessions[token] = Session(str(data.get("LOGIN_NAME") or ""), login_role=role)
                history_of(estate).login(token, data)  # the SESSIONS view
                return self.send_json(200, {
                    "data": {"token": token, "masterToken": "standin-master",
                             "sessionId": 1, "parameters": [], "validityInSeconds": 3600,
                             "masterValidityInSeconds": 14400,
                             "sessionInfo": {"databaseName": None, "schemaName": None,
                                             "warehouseName": None, "roleName": estate.owner}},
                    "success": True, "code": None, "message": None,
                })  # fmt: skip
            if self.path.startswith("/queries/v1/query-request"):
                return self._query(body.get("sqlText", ""), self._session(), self._token())
            return self.send_json(
                200, {"data": None, "success": True, "code": None, "message": None}
            )

        def _token(self) -> str:
            auth = self.headers.get("Authorization") or ""
            return auth.split('Token="', 1)[-1].rstrip('"')

        def _session(self) -> Session:
            """The session of the token the connector sends (``Snowflake Token="..."``)."""
            return self.sessions.setdefault(self._token(), Session(""))

        def _query(self, sql: str, session: Session, token: str = "") -> None:
            qid = str(uuid.uuid4())
            history = history_of(self.state)
            try:
                denied = self.state.denial_of(sql)
                if denied is not None:
                    raise denied
                view = history.view(sql, session)  # ACCOUNT_USAGE: answered from the history
                names, rows = view or self.state.execute_as(session, sql.strip().rstrip(";"))
                if view is None:
                    history.answered(token, session, sql, qid)
            except SqlError as err:
                return self.send_json(200, {
                    "data": {"errorCode": err.code, "sqlState": err.sqlstate, "queryId": qid},
                    "code": err.code, "message": err.message, "success": False,
                })  # fmt: skip
            cells = [[_cell(v) for v in r] for r in rows]
            first, chunks = cells, []
            size = self.state.chunk_rows
            if size is not None and len(cells) > size:
                # the first part rides with the answer; the rest are chunks the connector
                # downloads from their URLs (here: this server, GET /standin-chunks/...)
                first = cells[:size]
                host, port = self.server.server_address[:2]
                for n, at in enumerate(range(size, len(cells), size)):
                    part = cells[at : at + size]
                    body = json.dumps(part)[1:-1].encode()
                    self.chunk_bodies[f"{qid}/{n}"] = body
                    chunks.append({"url": f"http://{host}:{port}/standin-chunks/{qid}/{n}",
                                   "rowCount": len(part), "uncompressedSize": len(body),
                                   "compressedSize": len(body)})  # fmt: skip
            data: dict[str, Any] = {
                "rowtype": _rowtype(names, rows), "rowset": first, "total": len(rows),
                "returned": len(rows), "queryId": qid, "queryResultFormat": "json",
                "parameters": [], "statementTypeId": 4096, "finalDatabaseName": None,
            }  # fmt: skip
            if chunks:
                data["chunks"] = chunks
                data["chunkHeaders"] = {}
                self.state.chunks_served += len(chunks)
            return self.send_json(
                200, {"data": data, "code": None, "message": None, "success": True}
            )

        def do_GET(self) -> None:
            """A result chunk: the rows, comma-separated, without the enclosing brackets (the
            connector's JSON chunk format)."""
            key = self.path.split("/standin-chunks/", 1)[-1]
            body = self.chunk_bodies.pop(key, None)
            if body is None:
                return self.send_json(404, {"message": "no such chunk"})
            self.state.chunks_downloaded += 1
            self.state.round_trips += 1  # a round trip like any other, at the same latency
            if self.state.latency:
                time.sleep(self.state.latency)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Account


@contextmanager
def account(estate: SnowflakeEstate, port: int = 0) -> Iterator[dict[str, Any]]:
    """Serve ``estate`` (on ``port``, else a free one); yields the connector parameters that
    reach it."""
    with serve(handler_for(estate), port) as port:
        yield {
            "account": "standin",
            "user": "accord_ci",
            "password": "local-test",
            "host": "127.0.0.1",
            "port": port,
            "protocol": "http",
        }
