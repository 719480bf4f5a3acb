"""A catalog stand-in for `accord probe --live`: it answers a probe's query the way the
compiled policies do, by reading `accord verify`'s DuckDB evaluation of them (generated rows,
the compiled row filters and masks, per persona).

The persona is taken from the session, not from the caller: on Snowflake the `USE ROLE` /
`USE SECONDARY ROLES` statements must name exactly one persona's roles, so a probe that set
the wrong session is answered for the wrong roles (or refused), as the platform would."""

from __future__ import annotations

from typing import Any

import sqlglot
from sqlglot import exp

from compiler.model.validate import Project
from compiler.probe_live.catalog import QueryError, session_statements
from targets.render import render_files


class CompiledPolicyRunner:
    def __init__(self, project: Project, platform: str) -> None:
        from compiler.verify.engine import TestSalts, Verifier
        from compiler.verify.sources import load_sql

        salts = TestSalts()
        sql = load_sql(render_files(project, "all"), salts, "stand-in")
        self.verifier = Verifier(project, sql, salts)
        self.verifier.run()
        self.model = project.model
        self.platform = platform
        self.seen: list[tuple[str, list[str]]] = []

    def persona_of(self, session: list[str], asked_for: str) -> str:
        if self.platform != "snowflake":
            return asked_for  # Databricks: the SDK profile is the persona
        for persona in sorted(self.model.personas):
            if session_statements(self.model, persona, "snowflake") == session:
                return persona
        raise QueryError("no role in session", {"errorCode": "002003", "sqlState": "42S02"})

    def run(self, persona: str, statements: list[str]) -> list[tuple[Any, ...]]:
        self.seen.append((persona, statements))
        who = self.persona_of(statements[:-1], persona)
        query = sqlglot.parse_one(statements[-1], read=self.platform)
        table = query.find(exp.Table)
        assert table is not None
        name = table.sql(self.platform).lower()
        dataset = next(
            d
            for d, ds in self.model.datasets.items()
            if ds.platform == self.platform and ds.table.lower() == name
        )
        gen = self.verifier.tables[dataset]
        where = query.args.get("where")
        key = value = None
        if where is not None:
            eq = where.this
            key, value = eq.this.name, eq.expression.this
        selected = query.expressions[0]
        out: list[tuple[Any, ...]] = []
        for r, (visible, values) in sorted(self.verifier.results[dataset][who].items()):
            if not visible or (key is not None and gen.value(r, key) != value):
                continue
            if isinstance(selected, exp.Column):
                col = next(c.name for c in gen.columns if c.name.lower() == selected.name.lower())
                out.append((values[col],))
            else:
                out.append((1,))
        if query.args.get("distinct"):
            out = sorted(set(out), key=str)
        return out
