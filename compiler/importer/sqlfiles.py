"""The SQL front end of ``accord import``: hand-written policy SQL read as ``accord lint`` reads
it, replayed into catalog objects.

Paths are files or directories (walked as lint walks a repository: ``.sql`` files and
Databricks notebook sources, without hidden folders, dbt's ``target/`` and
``dbt_packages/``); each file is read by lint's readers (:func:`compiler.lint.inputs.
sqlfiles.scan_sql`: plain SQL, Snowflake scripts, dbt/Jinja templates, notebooks), its dialect
as lint decides it. Statements are replayed in file order, files in path order:

* ``CREATE ... ROW ACCESS POLICY`` / ``MASKING POLICY``, a Databricks ``CREATE FUNCTION ...
  RETURN`` with parameters (``BOOLEAN``: a row filter; else a mask), ``ALTER ... SET BODY``
  and ``DROP`` into :class:`~targets.objects.RowFilterPolicy` /
  :class:`~targets.objects.MaskPolicy`; Snowflake's ``CREATE ... PROJECTION | AGGREGATION |
  JOIN POLICY`` (and their ``SET BODY`` and ``DROP``) into :class:`~targets.objects.
  ProjectionPolicy` / :class:`~targets.objects.AggregationPolicy` / :class:`~targets.objects.
  JoinPolicy`;
* a function of no parameters into a :class:`~targets.objects.SaltFunction`: its body is
  taken for a salt and never kept;
* attachments (of every policy kind: ``ALTER TABLE ... SET PROJECTION | AGGREGATION | JOIN
  POLICY`` too), tags and ABAC policies through :class:`targets.read.Placements`, as ``accord
  verify`` reads the SQL that ships; an aggregation policy set with an ``ENTITY KEY`` is
  marked with why the model cannot say it (its ``aggregation`` has no entity key);
* the tables policies look values up in, with the rows ``INSERT`` / ``MERGE ... VALUES``
  write into them (``DELETE`` empties them), into :class:`~targets.objects.MappingTable`;
* a view that decides access per caller (lint reads it for ACC101, ACC102, ACC201, ACC204)
  and a policy statement accord could not read (ACC001) into ``statement`` items, kept;
  other statements (tables, grants, queries) are no policy and are counted, not kept.

A salt written as a literal in a policy body is withheld from the SQL kept: the literal is
replaced by a placeholder (its finding, ACC205, stays).
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from sqlglot import exp

from accord.compiler.core.errors import Diagnostic, InputError, Location
from accord.compiler.core.platforms import PLATFORMS, facts
from accord.compiler.importer.found import Found, Item
from accord.compiler.importer.shapes import WITHHELD, filter_shape
from accord.compiler.lint.bodies import access_views
from accord.compiler.lint.checks import SqlContext
from accord.compiler.lint.inputs.notebooks import is_python_notebook
from accord.compiler.lint.inputs.sqlfiles import read_sql_files, scan_sql
from accord.compiler.lint.run import walk_sql
from accord.compiler.lint.trees import hash_calls
from accord.compiler.model.types import policy_type
from accord.compiler.sqlscan import ScanResult, Statement
from accord.targets.objects import (
    AbacPolicy,
    AggregationAttachment,
    AggregationPolicy,
    JoinAttachment,
    JoinPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    Param,
    ProjectionAttachment,
    ProjectionPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)
from accord.targets.read import PLACEMENT_KINDS, Placements


def sql_paths(paths: list[str]) -> list[str]:
    """The SQL files (and notebooks) of ``paths``, in order: a directory walked as lint walks a
    repository. A path that does not exist is bad input."""
    out: list[str] = []
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise InputError(
            [Diagnostic(Location(p, 1, 1), "no such file or directory") for p in missing]
        )
    for path in paths:
        if os.path.isdir(path):
            out += walk_sql(path)
        elif path.lower().endswith(".sql") or is_python_notebook(path):
            out.append(path)
        else:
            raise InputError(
                [Diagnostic(Location(path, 1, 1), "not a .sql file, a notebook or a directory")]
            )
    return list(dict.fromkeys(out))


def read_sql(paths: list[str], dialect: str | None = None) -> tuple[list[Found], list[str]]:
    """One :class:`Found` per platform the files hold SQL of, and what was read in words."""
    files = sql_paths(paths)
    results, problems = read_sql_files(files, dialect)
    if problems:
        raise InputError(problems)
    texts = {path: Path(path).read_text(encoding="utf-8") for path in files}
    said: list[str] = [f"read {len(files)} SQL file{'s' if len(files) != 1 else ''}"]
    results = _told(results, files, texts, said)
    per: dict[str, _Replay] = {}
    other = Counter[str]()
    for result in results:
        for error in result.errors:
            platform = result.dialect
            if platform not in PLATFORMS or error.kind not in ("statement", "dialect", "template"):
                continue
            replay = per.setdefault(platform, _Replay(platform))
            text = _span(texts.get(error.file, ""), error.span) or error.message
            replay.statement(
                text,
                f"{error.file}:{error.line}",
                f"{Path(error.file).name}:{error.line}",
                f"accord could not read it ({error.message})",
            )
        for stmt in result.statements:
            if stmt.dialect not in PLATFORMS:
                continue
            replay = per.setdefault(stmt.dialect, _Replay(stmt.dialect))
            replay.template = result.template
            if not replay.read(stmt, texts.get(stmt.file, "")):
                other[stmt.dialect] += 1
    for view in access_views(SqlContext(results)):
        stmt = view.stmt
        replay = per.setdefault(stmt.dialect, _Replay(stmt.dialect))
        replay.statement(stmt.text, _origin(stmt), view.what, "")
    founds = []
    for platform in PLATFORMS:
        if platform in per:
            founds.append(per[platform].found())
            if other[platform]:
                said.append(
                    f"{platform}: {other[platform]} statement(s) that are no policy "
                    "(tables, grants, queries) were not kept"
                )
    return founds, said


def _told(
    results: list[ScanResult], files: list[str], texts: dict[str, str], said: list[str]
) -> list[ScanResult]:
    """Each file's scan, a file whose dialect lint leaves untold (tables, rows and grants
    only: no policy says it) scanned in the dialect its folder names (``snowflake/``,
    ``databricks/``: as ``accord compile`` writes them), else in the one dialect of every other
    file; a file still untold is said, and its statements not read."""
    known = {r.dialect for r in results if r.dialect in PLATFORMS}
    out = []
    for path, result in zip(files, results, strict=True):
        if result.dialect is not None:
            out.append(result)
            continue
        folders = [part for part in Path(path).parts[:-1] if part in PLATFORMS]
        dialect = folders[-1] if folders else (next(iter(known)) if len(known) == 1 else None)
        if dialect is None:
            said.append(
                f"{path}: the dialect could not be told (no policy statement, no "
                ".snowflake.sql / .databricks.sql suffix, no snowflake/ or databricks/ folder): "
                "its tables and rows were not read (pass --dialect)"
            )
            out.append(result)
            continue
        out.append(scan_sql(texts[path], path, dialect))
    return out


def _origin(stmt: Statement) -> str:
    return f"{stmt.file}:{stmt.line}"


def _span(text: str, span: tuple[int, int] | None) -> str:
    if span is None or not text:
        return ""
    return text[span[0] : span[1]].strip()


class _Replay:
    """One platform's statements, replayed in order."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self.fold = facts(platform).fold
        self.policies: dict[str, tuple[_Policy, str, str]] = {}
        self.placements = Placements(platform)
        self.tag_texts: dict[tuple[str, ...], str] = {}
        #: folded table -> (name as written, columns as written, its text, where)
        self.created: dict[str, tuple[str, tuple[str, ...], str, str]] = {}
        #: folded table -> rows written, in order; the texts that wrote them
        self.rows: dict[str, list[tuple[str, ...]]] = defaultdict(list)
        self.row_texts: dict[str, list[str]] = defaultdict(list)
        self.tags: dict[str, tuple[Tag, str, str]] = {}
        self.statements: list[Item] = []
        self.withheld: dict[str, str] = {}
        #: the template the statement being read comes from (a dbt macro), or None
        self.template: Any = None
        #: folded name -> the name as the template writes it (a dbt macro's
        #: ``{{node_database}}.{{node_schema}}.name``): settled by the placements (:meth:`settle`)
        self.templated: dict[str, str] = {}
        #: functions written without RETURNS: a filter or a mask as their placements say
        self.untyped: set[str] = set()

    def statement(self, text: str, origin: str, label: str, why: str) -> None:
        self.statements.append(Item(self.platform, None, text, origin, label, why=why))

    def read(self, stmt: Statement, file_text: str) -> bool:
        """Replay ``stmt``; False when it is no policy statement."""
        kind = stmt.kind
        if kind in PLACEMENT_KINDS:
            if self.placements.read(stmt):
                self.tag_texts[_place_key(stmt, self.fold)] = stmt.text
                return True
            return False
        if kind in ("row_access_policy", "masking_policy", "function", *_CONSTRAINTS) and stmt.name:
            return self.define(stmt, file_text)
        if kind == "alter_policy_body" and stmt.name and stmt.body is not None:
            found = self.policies.get(self.fold(stmt.name))
            if found is not None and not isinstance(found[0], SaltFunction):
                obj = found[0]
                text = found[1] + ";\n" + self.kept_text(stmt, file_text)
                new = type(obj)(**{**obj.__dict__, "body": stmt.body})  # type: ignore[arg-type]
                self.policies[self.fold(stmt.name)] = (new, text, found[2])
            return True
        if kind.startswith("drop_") and kind.endswith("_policy") and stmt.name:
            self.policies.pop(self.fold(stmt.name), None)
            return True
        if kind in ("snowflake_tag", "governed_tag") and stmt.name:
            self.tags[self.fold(stmt.name)] = (
                Tag(stmt.name, comment=stmt.comment or ""),
                stmt.text,
                _origin(stmt),
            )
            return True
        if kind == "other" and stmt.expression is not None:
            return self.table_statement(stmt)
        return False

    def restored(self, text: str) -> str:
        """``text`` with a template's placeholders back to its source (``{{node_schema}}``)."""
        return self.template.restore(text) if self.template is not None else text

    def kept_text(self, stmt: Statement, file_text: str) -> str:
        """The statement's text with every salt written as a literal in a hash withheld."""
        return self.restored(self._kept_text(stmt, file_text))

    def _kept_text(self, stmt: Statement, file_text: str) -> str:
        text = stmt.text
        if stmt.body is None or not stmt.params:
            return text
        literals: list[tuple[int, int]] = []
        for call in hash_calls(stmt.body, stmt.params[0].name, facts(self.platform).dialect):
            if not call.literal_salt:
                continue
            for node in call.node.find_all(exp.Literal):
                start, end = node.meta.get("start"), node.meta.get("end")
                if (
                    isinstance(start, int)
                    and isinstance(end, int)
                    and str(node.this) in call.literal_salt
                ):
                    literals.append((start, end))
        if not literals:
            return text
        base = _offset(file_text, stmt.line, stmt.column)
        for start, end in sorted(literals, reverse=True):
            a, b = start - base, end + 1 - base
            if 0 <= a < b <= len(text):
                text = text[:a] + f"'{WITHHELD}'" + text[b:]
        self.withheld[self.fold(stmt.name or "")] = "a salt written as a literal in its body"
        return text

    def define(self, stmt: Statement, file_text: str) -> bool:
        name = stmt.name
        assert name is not None
        written = self.restored(name)
        if written != name:
            # a dbt macro's policy: its database and schema are decided when dbt renders it
            self.templated[self.fold(name)] = written
        params = tuple(Param(p.name, _type(p.type, self.platform)) for p in stmt.params)
        comment = stmt.comment or ""
        if stmt.kind == "function" and not params:
            # a function of nothing: read as a salt; its body is never kept
            self.policies[self.fold(name)] = (SaltFunction(name, "", ""), "", _origin(stmt))
            return True
        if stmt.body is None:
            return False
        returns = _type(stmt.returns, self.platform) if stmt.returns else ""
        if stmt.kind in _CONSTRAINTS:
            made = _CONSTRAINTS[stmt.kind](name, stmt.body, comment)
            self.policies[self.fold(name)] = (made, self.kept_text(stmt, file_text), _origin(stmt))
            return True
        if stmt.kind == "row_access_policy" or (stmt.kind == "function" and returns == "BOOLEAN"):
            obj: RowFilterPolicy | MaskPolicy = RowFilterPolicy(
                name, params, stmt.body, None, comment
            )
        elif stmt.kind in ("masking_policy", "function"):
            if stmt.kind == "function" and not returns:
                self.untyped.add(self.fold(name))
            obj = MaskPolicy(name, params, returns or params[0].type, stmt.body, "", "", comment)
        else:
            return False
        self.policies[self.fold(name)] = (obj, self.kept_text(stmt, file_text), _origin(stmt))
        return True

    def settle(self) -> None:
        """What only the placements say. A function written without RETURNS that a row filter
        applies is a filter. A dbt macro's policy, whose qualifier is a template expression,
        takes the qualified name of the placements that apply a policy of its name, when they
        all name one; else it keeps the name its template writes (and nothing applies it)."""
        filters = {self.fold(a.policy) for a in self.placements.row_filters.values()}
        filters |= {
            self.fold(a.function) for a in self.placements.abac.values() if a.kind == "ROW FILTER"
        }
        for folded in sorted(self.untyped & filters):
            obj, text, origin = self.policies[folded]
            assert isinstance(obj, MaskPolicy)
            found = RowFilterPolicy(obj.name, obj.params, obj.body, None, obj.comment)
            self.policies[folded] = (found, text, origin)
        applied = [a.policy for a in self.placements.row_filters.values()]
        applied += [a.policy for a in self.placements.masks.values()]
        applied += [a.function for a in self.placements.abac.values()]
        applied += [a.policy for a in self.placements.constraints.values()]
        for folded, written in sorted(self.templated.items()):
            leaf = folded.rsplit(".", 1)[-1]
            named = sorted({n for n in applied if self.fold(n).rsplit(".", 1)[-1] == leaf})
            obj, text, origin = self.policies.pop(folded)
            name = named[0] if len(named) == 1 else written
            self.policies[self.fold(name)] = (replace(obj, name=name), text, origin)

    def table_statement(self, stmt: Statement) -> bool:
        """CREATE TABLE, INSERT, MERGE and DELETE of a table: a mapping table's definition and
        rows, should a policy look values up in it."""
        tree = stmt.expression
        if isinstance(tree, exp.Create) and str(tree.args.get("kind") or "").upper() == "TABLE":
            schema = tree.this
            if isinstance(schema, exp.Schema) and isinstance(schema.this, exp.Table):
                table = ".".join(p.name for p in schema.this.parts)
                columns = tuple(c.name for c in schema.expressions if isinstance(c, exp.ColumnDef))
                self.created[self.fold(table)] = (table, columns, stmt.text, _origin(stmt))
                return True
            return False
        if isinstance(tree, exp.Delete) and isinstance(tree.this, exp.Table):
            table = self.fold(".".join(p.name for p in tree.this.parts))
            self.rows[table] = []
            self.row_texts[table].append(stmt.text)
            return True
        if isinstance(tree, exp.Insert | exp.Merge):
            target = tree.this
            if isinstance(target, exp.Schema):
                target = target.this
            if not isinstance(target, exp.Table):
                return False
            table = self.fold(".".join(p.name for p in target.parts))
            for values in tree.find_all(exp.Values):
                for row in values.expressions:
                    cells = row.expressions if isinstance(row, exp.Tuple) else [row]
                    found = [_cell(c) for c in cells]
                    if all(c is not _NOT_A_VALUE for c in found):
                        self.rows[table].append(tuple(found))  # type: ignore[arg-type]
            self.row_texts[table].append(stmt.text)
            return True
        return False

    def found(self) -> Found:
        self.settle()
        items: list[Item] = []
        for folded, (obj, text, origin) in sorted(self.policies.items()):
            if isinstance(obj, SaltFunction):
                text = (
                    f"-- {obj.name}(): a function of no parameters, read as a salt function; its "
                    "body (the salt) is not kept by accord import"
                )
            items.append(
                Item(self.platform, obj, text, origin, withheld=self.withheld.get(folded, ""))
            )
        items += self.mapping_tables()
        for folded, (tag, text, origin) in sorted(self.tags.items()):
            placed = self.placements.tag_policies.get(folded)
            if placed is not None:
                tag = Tag(tag.name, tag.allowed_values, placed.masking_policies, tag.comment)
            items.append(Item(self.platform, tag, text, origin))
        for folded, placed in sorted(self.placements.tag_policies.items()):
            if folded not in self.tags:
                items.append(Item(self.platform, placed, "", "sql"))
        for obj in self.placements.objects():
            key = _object_key(obj, self.fold)
            stmt = self.placements.sources.get(key)
            text = self.restored(stmt.text if stmt is not None else self.tag_texts.get(key, ""))
            origin = _origin(stmt) if stmt is not None else "sql"
            keyed = obj.entity_key if isinstance(obj, AggregationAttachment) else ()
            why = (
                f"an aggregation policy set with ENTITY KEY ({', '.join(keyed)}): the model's "
                "`aggregation` has no entity key"
                if keyed
                else ""
            )
            items.append(Item(self.platform, obj, text, origin, why=why))
        items += self.statements
        return Found(self.platform, self.governance_schema(items), self.style(), items)

    def mapping_tables(self) -> list[Item]:
        """The tables a policy looks values up in (a lookup of :func:`filter_shape`), with the
        rows written into them."""
        out: list[Item] = []
        seen: set[str] = set()
        for obj, _, _ in self.policies.values():
            if not isinstance(obj, RowFilterPolicy):
                continue
            shape = filter_shape(obj.body, self.platform)
            for look in shape.lookups if shape is not None else ():
                folded = self.fold(look.table)
                if folded in seen:
                    continue
                seen.add(folded)
                name, _, create, origin = self.created.get(folded, (look.table, (), "", ""))
                expiry = look.expiry_column
                width = 3 if expiry else 2
                rows = tuple(
                    sorted(
                        {
                            tuple(r[:width]) + (None,) * (width - len(r))
                            for r in self.rows.get(folded, [])
                        },
                        key=lambda r: tuple("" if c is None else c for c in r),
                    )
                )
                table = MappingTable(name, "", look.key_column, look.principal_column, rows, expiry)  # type: ignore[arg-type]
                text = ";\n".join(
                    t.rstrip(";") for t in [create, *self.row_texts.get(folded, [])] if t
                )
                kept = text + ";" if text else ""
                out.append(Item(self.platform, table, kept, origin or "no CREATE TABLE read"))
        return out

    def governance_schema(self, items: list[Item]) -> str | None:
        """The schema holding the most policies, mapping tables and salt functions."""
        schemas = Counter(
            self.fold(i.obj.name.rsplit(".", 1)[0])  # type: ignore[union-attr]
            for i in items
            if isinstance(
                i.obj,
                RowFilterPolicy | MaskPolicy | SaltFunction | MappingTable | _ConstraintPolicy,
            )
            and i.obj.name.count(".") == 2
        )
        if not schemas:
            return None
        top = max(schemas.values())
        return min(s for s, n in schemas.items() if n == top)

    def style(self) -> str:
        plain, tagged = facts(self.platform).styles
        if facts(self.platform).tag_masking:
            return tagged if self.placements.tag_policies else plain
        return tagged if self.placements.abac else plain


#: a projection, aggregation or join policy
_ConstraintPolicy = ProjectionPolicy | AggregationPolicy | JoinPolicy
#: what a definition replayed is
_Policy = RowFilterPolicy | MaskPolicy | SaltFunction | _ConstraintPolicy
#: statement kind -> the catalog object of a projection, aggregation or join policy
_CONSTRAINTS: dict[str, type[_ConstraintPolicy]] = {
    "projection_policy": ProjectionPolicy,
    "aggregation_policy": AggregationPolicy,
    "join_policy": JoinPolicy,
}


def _type(text: str, platform: str) -> str:
    """A type as a policy signature uses it (string types: the platform's string type)."""
    try:
        return policy_type(text, platform)
    except ValueError:
        return text.upper()


#: a cell of a VALUES row that is no literal: the row is not read
_NOT_A_VALUE = object()


def _cell(node: exp.Expression) -> object:
    """A VALUES cell: a literal's text, None for NULL (a standing grant's expiry), through a
    CAST; anything else is :data:`_NOT_A_VALUE`."""
    if isinstance(node, exp.Cast):
        node = node.this
    if isinstance(node, exp.Literal):
        return str(node.this)
    if isinstance(node, exp.Null):
        return None
    return _NOT_A_VALUE


def _offset(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def _place_key(stmt: Statement, fold: Callable[[str], str]) -> tuple[str, ...]:
    return ("tag", fold(stmt.table or ""), fold(stmt.column_name or ""))


def _object_key(obj: object, fold: Callable[[str], str]) -> tuple[str, ...]:
    """The key :class:`targets.read.Placements` keeps the statement that placed ``obj`` by
    (its ``sources``), or the one a tag's statement is kept by here."""
    if isinstance(obj, RowFilterAttachment):
        return ("filter", fold(obj.table))
    if isinstance(obj, MaskAttachment):
        return ("mask", fold(obj.table), fold(obj.column))
    if isinstance(obj, AbacPolicy):
        return ("abac", fold(obj.name), fold(obj.securable))
    if isinstance(obj, ProjectionAttachment):
        return ("projection", fold(obj.table), fold(obj.column))
    if isinstance(obj, AggregationAttachment | JoinAttachment):
        return (
            "aggregation" if isinstance(obj, AggregationAttachment) else "join",
            fold(obj.table),
        )
    assert isinstance(obj, TagAssignment)
    return ("tag", fold(obj.table), fold(obj.column or ""))
