"""Tag inheritance and propagation on the Snowflake stand-in (issue 41, item 2).

A tag set on a database or schema is inherited by every table and column under it, one set on a
table by its columns, and the nearest one wins: a column's own tag, then its table's, then its
schema's, then its database's (docs.snowflake.com/en/user-guide/object-tagging/inheritance:
"A descendant of an object in the hierarchy inherits tags from its ancestors ... It's possible
to override the value of an inherited tag on a given object by manually setting the tag").
``ALTER { DATABASE | SCHEMA } x { SET | UNSET } TAG t [= 'v']`` (sql-reference/sql/
alter-database, alter-schema). A tag may also reach a column by propagation through lineage
(user-guide/object-tagging/propagation); the stand-in models its result only
(:meth:`TagInheritanceMixin.propagate_tag`): the column holds the tag with APPLY_METHOD
PROPAGATED, which overwrites an inherited value. TAG_REFERENCES_ALL_COLUMNS reports each with
its LEVEL (the domain the tag is set on) and APPLY_METHOD (MANUAL, INHERITED, PROPAGATED;
sql-reference/functions/tag_references_all_columns), and a tag's masking policy masks every
column that carries the tag, however it got it (user-guide/tag-based-masking-policies)."""

from __future__ import annotations

from typing import Any

from accord.sandbox.standins.engine import missing


class TagInheritanceMixin:
    """Database and schema tags, propagated column tags, and each column's effective tags."""

    #: (DATABASE | SCHEMA, UPPER name) -> {tag: value}
    container_tags: dict[tuple[str, str], dict[str, str]]
    #: (UPPER table, UPPER column, tag) whose column tag came by propagation
    propagated: set[tuple[str, str, str]]

    def propagate_tag(self, table: str, column: str, tag: str, value: str) -> None:
        """``tag = value`` reaches ``table.column`` by propagation through lineage."""
        t = self.table(table)  # type: ignore[attr-defined]
        col = self._column(t, column)  # type: ignore[attr-defined]
        key = self.key(tag)  # type: ignore[attr-defined]
        t.tags[(col, key)] = value
        self.propagated.add((t.name, col, key))

    def effective_tags(self, t: Any, column: str) -> list[tuple[str, str, str, str]]:
        """(tag, value, APPLY_METHOD, LEVEL) of every tag ``column`` carries, the nearest
        setting of each tag only, in precedence order (its own first)."""
        db, schema, _ = t.name.split(".")
        levels: list[tuple[str, str, dict[str, str]]] = [
            ("COLUMN", "MANUAL", {tag: v for (c, tag), v in t.tags.items() if c == column}),
            ("TABLE", "INHERITED", {tag: v for (c, tag), v in t.tags.items() if c == ""}),
            ("SCHEMA", "INHERITED", self.container_tags.get(("SCHEMA", f"{db}.{schema}"), {})),
            ("DATABASE", "INHERITED", self.container_tags.get(("DATABASE", db), {})),
        ]
        out: list[tuple[str, str, str, str]] = []
        seen: set[str] = set()
        for level, method, tags in levels:
            for tag, value in sorted(tags.items()):
                if tag in seen:
                    continue
                seen.add(tag)
                if level == "COLUMN" and (t.name, column, tag) in self.propagated:
                    method = "PROPAGATED"
                elif level == "COLUMN":
                    method = "MANUAL"
                out.append((tag, value, method, level))
        return out

    def container_tag_command(self, words: list[str], tokens: list[Any]) -> Any:
        """``ALTER { DATABASE | SCHEMA } x SET TAG t = 'v' [, ...]`` / ``UNSET TAG t [, ...]``;
        None for any other statement."""
        if words[:1] != ["ALTER"] or words[1:2] not in (["DATABASE"], ["SCHEMA"]):
            return None
        if "TAG" not in words or words[words.index("TAG") - 1] not in ("SET", "UNSET"):
            return None
        level = words[1]
        verb_at = words.index("TAG") - 1
        name = self.key("".join(t.text for t in tokens[2:verb_at]))  # type: ignore[attr-defined]
        known = {n.split(".")[0] if level == "DATABASE" else ".".join(n.split(".")[:2])
                 for n in self.table_names()}  # type: ignore[attr-defined]  # fmt: skip
        if name not in known:
            raise missing("snowflake", level.title(), name)
        tags = self.container_tags.setdefault((level, name), {})
        rest = tokens[verb_at + 2 :]
        if words[verb_at] == "UNSET":
            for tok in "".join(t.text for t in rest).split(","):
                tags.pop(self.key(tok), None)  # type: ignore[attr-defined]
            return self._ok("Statement executed successfully.")  # type: ignore[attr-defined]
        i = 0
        while i < len(rest):
            j = next(k for k in range(i, len(rest)) if rest[k].text == "=")
            tag = self.key("".join(t.text for t in rest[i:j]))  # type: ignore[attr-defined]
            tags[tag] = rest[j + 1].text
            i = j + 3  # past the value and a comma
        return self._ok("Statement executed successfully.")  # type: ignore[attr-defined]
