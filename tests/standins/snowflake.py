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
desc-masking-policy, show-user-functions, show-grants, show-tags; POLICY_REFERENCES:
sql-reference/functions/policy_references).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

from tests.standins.engine import Estate, SqlError, Table, missing
from tests.standins.history import history_of
from tests.standins.http import Handler, serve
from tests.standins.reader import Stmt

CREATED = "2026-11-03 10:00:00.000 +0000"
POLICY_REFERENCE_COLUMNS = [
    "POLICY_DB",
    "POLICY_SCHEMA",
    "POLICY_NAME",
    "POLICY_KIND",
    "REF_DATABASE_NAME",
    "REF_SCHEMA_NAME",
    "REF_ENTITY_NAME",
    "REF_ENTITY_DOMAIN",
    "REF_COLUMN_NAME",
    "REF_ARG_COLUMN_NAMES",
    "TAG_DATABASE",
    "TAG_SCHEMA",
    "TAG_NAME",
    "POLICY_STATUS",
]


@dataclass
class Session:
    """One login's session: its user, primary role and secondary roles (``None`` until a
    ``USE ROLE``: then the estate's own :attr:`Estate.session` roles apply, as before)."""

    user: str
    primary: str | None = None
    #: the secondary roles *activated* (a session policy may allow fewer than requested)
    secondary: list[str] = field(default_factory=list)
    #: what USE SECONDARY ROLES asked for: ALL, or the roles named ("" for NONE)
    requested: str = ""

    def in_session(self) -> set[str]:
        return {self.primary, *self.secondary} if self.primary else set(self.secondary)


class SnowflakeEstate(Estate):
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
        #: the session of the statement being executed (set by the HTTP handler)
        self.current: Session | None = None
        #: UPPER user -> the ALLOWED_SECONDARY_ROLES of the session policy set on it (fact 6)
        self.session_policies: dict[str, tuple[str, ...]] = {}

    def grant_roles(self, user: str, roles: list[str]) -> None:
        self.user_roles.setdefault(user.upper(), set()).update(r.upper() for r in roles)

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
        if self.current is None or self.current.primary is None:
            return set(self.session)
        return self.current.in_session()

    def _other(self, stmt: Stmt, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        if isinstance(stmt.expression, exp.Use):
            return self._use(stmt.expression)
        return super()._other(stmt, sql)

    def _granted(self) -> set[str] | None:
        user = self.current.user.upper() if self.current is not None else ""
        return self.user_roles.get(user)

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

    def rewrite(self, tree: exp.Expression) -> exp.Expression:
        if isinstance(tree, exp.Query):
            tree = self._govern(tree)
        saved = self.session
        self.session = self._roles_in_session()
        try:
            tree = super().rewrite(tree)
        finally:
            self.session = saved
        primary = self.current.primary if self.current is not None else None

        def current_role(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.CurrentRole):
                return exp.Literal.string(primary) if primary else exp.null()
            return node

        return self._current_secondary_roles(tree.transform(current_role))

    def _masks_of(self, t: Table) -> dict[str, tuple[str, tuple[str, ...]]]:
        """UPPER column -> (masking policy, using columns): set on the column, else through a tag
        on the column, else through a tag on the table (the policy returning the column's type)."""
        out = super()._masks_of(t)
        for column, (_, col_type) in t.columns.items():
            if column in out:
                continue
            for on in (column, ""):  # the column's own tags first, then the table's
                for tag in sorted(tag for (c, tag) in t.tags if c == on):
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

        if text.startswith("SHOW ROW ACCESS POLICIES IN SCHEMA"):
            return self._show_policies("ROW_ACCESS_POLICY", name_after(6))
        if text.startswith("SHOW MASKING POLICIES IN SCHEMA"):
            return self._show_policies("MASKING_POLICY", name_after(5))
        if text.startswith("SHOW USER FUNCTIONS IN SCHEMA"):
            return self._show_functions(name_after(5))
        if text.startswith("SHOW GRANTS ON FUNCTION"):
            return self._show_grants(name_after(4))
        if text.startswith("SHOW TAGS IN SCHEMA"):
            return self._show_tags(name_after(4))
        return super()._command(sql)

    def _in_schema(self, name: str, schema: str) -> bool:
        return self.key(name).rsplit(".", 1)[0] == self.key(schema)

    def _show_policies(self, kind: str, schema: str) -> Any:
        cols = ["created_on", "name", "database_name", "schema_name", "kind", "owner", "comment"]
        cols += ["options", "owner_role_type"]
        rows = []
        for p in sorted(self.policies.values(), key=lambda p: p.name):
            if p.kind == kind and self._in_schema(p.name, schema):
                db, sch, leaf = p.name.split(".")
                rows.append((CREATED, leaf, db, sch, kind, p.owner, p.comment or "", "", "ROLE"))
        return cols, rows

    def _show_functions(self, schema: str) -> Any:
        cols = ["created_on", "name", "schema_name", "is_builtin", "is_aggregate", "is_ansi"]
        cols += ["min_num_arguments", "max_num_arguments", "arguments", "description"]
        cols += ["catalog_name", "is_table_function", "valid_for_clustering", "is_secure"]
        cols += ["secrets", "external_access_integrations", "is_external_function", "language"]
        cols += ["is_memoizable", "is_data_metric"]
        rows = []
        for p in sorted(self.policies.values(), key=lambda p: p.name):
            if p.kind == "FUNCTION" and self._in_schema(p.name, schema):
                db, sch, leaf = p.name.split(".")
                args = f"{leaf}({', '.join(t for _, t in p.params)}) RETURN {p.returns}"
                rows.append(
                    (CREATED, leaf, sch, "N", "N", "N", len(p.params), len(p.params), args,
                     p.comment or "user-defined function", db, "N", "N",
                     "Y" if p.secure else "N", None, None, "N", "SQL", "N", "N")
                )  # fmt: skip
        return cols, rows

    def _show_grants(self, name: str) -> Any:
        fn = self.policies.get(self.key(name))
        if fn is None or fn.kind != "FUNCTION":
            raise missing("snowflake", "Function", self.key(name))
        cols = ["created_on", "privilege", "granted_on", "name", "granted_to", "grantee_name"]
        cols += ["grant_option", "granted_by"]
        rows = [(CREATED, "OWNERSHIP", "FUNCTION", fn.name, "ROLE", fn.owner, "true", fn.owner)]
        for priv, who in sorted(self.grants.get(self.key(name), ())):
            rows.append((CREATED, priv, "FUNCTION", fn.name, "ROLE", who, "false", fn.owner))
        return cols, rows

    def _show_tags(self, schema: str) -> Any:
        cols = ["created_on", "name", "database_name", "schema_name", "owner", "comment"]
        cols += ["allowed_values", "owner_role_type"]
        rows = []
        for t in sorted(self.tags.values(), key=lambda t: t.name):
            if self._in_schema(t.name, schema):
                db, sch, leaf = t.name.split(".")
                allowed = json.dumps(list(t.allowed_values)) if t.allowed_values else None
                rows.append((CREATED, leaf, db, sch, self.owner, t.comment or "", allowed, "ROLE"))
        return cols, rows

    # TABLE(db.INFORMATION_SCHEMA.POLICY_REFERENCES(...)) and TAG_REFERENCES_ALL_COLUMNS(...)
    # -> what this estate holds
    def rewrite_tables(self, tree: exp.Expression) -> exp.Expression:
        def replace(node: exp.Expression) -> exp.Expression:
            if not isinstance(node, exp.TableFromRows):
                return node
            call = node.this.expression if isinstance(node.this, exp.Dot) else node.this
            if not isinstance(call, exp.Anonymous):
                return node
            if call.name.upper() == "TAG_REFERENCES_ALL_COLUMNS":
                name, domain = (a.name for a in call.expressions[:2])
                if domain.lower() != "table":
                    raise SqlError("002140", "22023", "object_domain must be 'table'")
                table = self.materialize(TAG_REFERENCE_COLUMNS, self.tag_references(name))
                if node.args.get("alias") is not None:
                    table.set("alias", node.args["alias"])
                return table
            if call.name.upper() != "POLICY_REFERENCES":
                return node
            args = {
                kw.this.name.upper(): kw.expression.name
                for kw in call.expressions
                if isinstance(kw, exp.Kwarg)
            }
            table = self.materialize(POLICY_REFERENCE_COLUMNS, self.policy_references(args))
            alias = node.args.get("alias")
            if alias is not None:
                table.set("alias", alias)
            return table

        return tree.transform(replace)

    def tag_references(self, table_name: str) -> list[tuple[Any, ...]]:
        t = self.table(table_name)
        return [
            _tag_ref_row(tag, value, t.name, t.columns[column][0])
            for (column, tag), value in sorted(t.tags.items())
            if column
        ]

    def policy_references(self, args: dict[str, str]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        entity = args.get("REF_ENTITY_NAME")
        tables = self.tables.values()
        if entity is not None:
            if args.get("REF_ENTITY_DOMAIN", "").lower() != "table":
                raise SqlError("002140", "22023", "REF_ENTITY_DOMAIN must be 'table' here")
            tables = [self.table(entity)]
        only = self.key(args["POLICY_NAME"]) if "POLICY_NAME" in args else None

        def add(
            policy: str, kind: str, t: str, column: str | None, argcols: Any, tag: str | None
        ) -> None:
            if only is not None and self.key(policy) != only:
                return
            pdb, psch, pname = self.key(policy).split(".")
            tdb, tsch, tname = t.split(".")
            tag_parts = tag.split(".") if tag else [None, None, None]
            rows.append(
                (pdb, psch, pname, kind, tdb, tsch, tname, "TABLE", column,
                 json.dumps(list(argcols)) if argcols else None, *tag_parts, "ACTIVE")
            )  # fmt: skip

        if only is not None and entity is None:
            for tag in sorted(self.tags.values(), key=lambda t: t.name):
                if only in tag.masking_policies:
                    pdb, psch, pname = only.split(".")
                    tdb, tsch, tname = tag.name.split(".")
                    rows.append(
                        (pdb, psch, pname, "MASKING_POLICY", tdb, tsch, tname, "TAG", None,
                         None, None, None, None, "ACTIVE")
                    )  # fmt: skip
        for t in tables:
            if t.row_filter is not None:
                add(t.row_filter[0], "ROW_ACCESS_POLICY", t.name, None, t.row_filter[1], None)
            for column, (policy, using) in sorted(t.masks.items()):
                add(policy, "MASKING_POLICY", t.name, column, using, None)
            for (column, tag), _ in sorted(t.tags.items()):
                tagdef = self.tags.get(tag)
                if not column or tagdef is None or column in t.masks:
                    continue
                col_type = t.columns[column][1].upper()
                for policy in tagdef.masking_policies:
                    p = self.policies.get(policy)
                    if p is not None and p.returns.upper() == col_type:
                        add(policy, "MASKING_POLICY", t.name, column, (), tag)
        return rows


TAG_REFERENCE_COLUMNS = [
    "TAG_DATABASE",
    "TAG_SCHEMA",
    "TAG_NAME",
    "TAG_VALUE",
    "APPLY_METHOD",
    "LEVEL",
    "OBJECT_DATABASE",
    "OBJECT_SCHEMA",
    "OBJECT_NAME",
    "DOMAIN",
    "COLUMN_NAME",
]


def _tag_ref_row(tag: str, value: str, table: str, column: str) -> tuple[Any, ...]:
    tdb, tsch, tname = tag.split(".")
    odb, osch, oname = table.split(".")
    return (tdb, tsch, tname, value, "MANUAL", "COLUMN", odb, osch, oname, "COLUMN", column)


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

        def do_POST(self) -> None:
            body = self.body()
            if self.path.startswith("/session/v1/login-request"):
                data = body.get("data", {})
                self.logins.append(data)
                token = f"standin-token-{len(self.logins)}"
                self.sessions[token] = Session(str(data.get("LOGIN_NAME") or ""))
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
                view = history.view(sql)  # ACCOUNT_USAGE views: answered from the history
                names, rows = view or self.state.execute_as(session, sql.strip().rstrip(";"))
                if view is None:
                    history.answered(token, session, sql, qid)
            except SqlError as err:
                return self.send_json(200, {
                    "data": {"errorCode": err.code, "sqlState": err.sqlstate, "queryId": qid},
                    "code": err.code, "message": err.message, "success": False,
                })  # fmt: skip
            return self.send_json(200, {
                "data": {"rowtype": _rowtype(names, rows),
                         "rowset": [[_cell(v) for v in r] for r in rows],
                         "total": len(rows), "returned": len(rows), "queryId": qid,
                         "queryResultFormat": "json", "parameters": [],
                         "statementTypeId": 4096, "finalDatabaseName": None},
                "code": None, "message": None, "success": True,
            })  # fmt: skip

    return Account


@contextmanager
def account(estate: SnowflakeEstate) -> Iterator[dict[str, Any]]:
    """Serve ``estate``; yields the connector parameters that reach it."""
    with serve(handler_for(estate)) as port:
        yield {
            "account": "standin",
            "user": "accord_ci",
            "password": "local-test",
            "host": "127.0.0.1",
            "port": port,
            "protocol": "http",
        }
