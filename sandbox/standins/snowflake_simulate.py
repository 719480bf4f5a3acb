"""``EXECUTE USING POLICY_CONTEXT(...) AS SELECT ...`` on the Snowflake stand-in (issue 41,
item 7).

docs.snowflake.com/en/sql-reference/functions/policy_context: "Simulates the results of a query
based upon the value of one or more context functions"; the arguments name a context function
and its value as a string (``CURRENT_ROLE => 'R'``, ``CURRENT_AVAILABLE_ROLES => '[...]'``,
the list of roles "in square brackets"); "If a table is protected by a policy, the specified
user or role must be granted ... OWNERSHIP on the table or view, and the APPLY privilege for
the policy, either at the account-level or on the policy itself". The reference is silent on
whether ``IS_ROLE_IN_SESSION`` honours a simulated role list: the stand-in honours it by
default (:attr:`SimulationMixin.simulation_honours_roles`); set it False and the policies see
the simulating session's own roles, the case accord's proof (a control asking
``IS_ROLE_IN_SESSION`` of a role in the list and of one outside it) must catch. The query's own
context functions are simulated alike (the control reads them)."""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from accord.sandbox.standins.engine import SqlError


class SimulationMixin:
    """``EXECUTE USING POLICY_CONTEXT``, for :class:`SnowflakeEstate`."""

    #: whether IS_ROLE_IN_SESSION sees the simulated roles (the reference does not say)
    simulation_honours_roles: bool
    #: set while a simulated query runs: the caller's table privileges are not checked (the
    #: simulating role owns the tables it may simulate on)
    simulating: bool

    def simulate_command(self, words: list[str], sql: str) -> Any:
        """``EXECUTE USING POLICY_CONTEXT(...) AS <query>``; None for any other statement (read
        from the text: sqlglot's tokenizer takes EXECUTE's rest as one token)."""
        if not re.match(r"(?is)\s*EXECUTE\s+USING\s+POLICY_CONTEXT\b", sql):
            return None
        found = re.match(r"(?is)\s*EXECUTE\s+USING\s+POLICY_CONTEXT\s*\((.*?)\)\s+AS\s+(.*)$", sql)
        if found is None:
            raise self._syntax("EXECUTE USING POLICY_CONTEXT(...) AS <query>")  # type: ignore[attr-defined]
        args = _arguments(found.group(1))
        if not args:
            raise self._syntax("POLICY_CONTEXT needs at least one argument")  # type: ignore[attr-defined]
        query = found.group(2).strip()
        self._may_simulate(query)
        from accord.sandbox.standins.snowflake import Session

        session = self.current  # type: ignore[attr-defined]
        primary = args.get("CURRENT_ROLE", "").upper() or None
        available = [
            r.upper()
            for r in re.findall(r"""["']([^"']+)["']""", args.get("CURRENT_AVAILABLE_ROLES", ""))
        ]
        simulated = session
        if self.simulation_honours_roles and primary:
            simulated = Session(
                session.user if session else "",
                primary=primary,
                secondary=[r for r in available if r != primary],
            )
        self.current, self.simulating = simulated, True  # type: ignore[attr-defined]
        try:
            return self.execute(query)  # type: ignore[attr-defined]
        finally:
            self.current, self.simulating = session, False  # type: ignore[attr-defined]

    def _may_simulate(self, query: str) -> None:
        """The simulating role owns every policy-protected table the query reads and holds
        APPLY on its policies (the account's, or the policy's own, or owns it); else 003001."""
        import sqlglot

        try:
            tree = sqlglot.parse_one(query, read="snowflake")
        except Exception:
            raise self._syntax(f"cannot read {query!r}") from None  # type: ignore[attr-defined]
        roles = self.closure()  # type: ignore[attr-defined]
        for node in tree.find_all(exp.Table):
            t = self.tables.get(self.key(self._table_name(node))) if node.name else None  # type: ignore[attr-defined]
            if t is None:
                continue
            policies = [p for p, _ in ([t.row_filter] if t.row_filter else [])]
            policies += [p for p, _ in self._masks_of(t).values()]  # type: ignore[attr-defined]
            if not policies:
                continue
            if self.table_owner(t.name).upper() not in roles and not self.sees_all():  # type: ignore[attr-defined]
                raise _insufficient(f"OWNERSHIP on {t.name}")
            for name in policies:
                p = self.policies[self.key(name)]  # type: ignore[attr-defined]
                if not (self._global(p.kind) or self.any_privilege(p.kind, p.name, p.owner)):  # type: ignore[attr-defined]
                    raise _insufficient(f"APPLY on {p.name}")


def _arguments(text: str) -> dict[str, str]:
    """``NAME => '<string literal>'`` pairs, each literal read by sqlglot's tokenizer (either
    escape of a quote: doubled or backslashed)."""
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.tokens import TokenType

    tokens = Dialect.get_or_raise("snowflake").tokenizer_class().tokenize(text)
    out: dict[str, str] = {}
    name = ""
    for tok in tokens:
        if tok.token_type == TokenType.STRING and name:
            out[name.upper()] = tok.text
            name = ""
        elif tok.token_type not in (TokenType.COMMA, TokenType.FARROW):
            name = tok.text
    return out


def _insufficient(what: str) -> SqlError:
    return SqlError(
        "003001",
        "42501",
        f"SQL access control error:\nInsufficient privileges to operate on {what}",
    )
