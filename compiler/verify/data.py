"""Generated rows: deterministic test data for every dataset.

Each replica group (a dataset and its replicas) shares one set of rows, so replicas hold the
same facts and can be compared row by row. Column values, by what the column is:

* the entitlement column of a row filter: every value of the dimension, one value granted to
  nobody, and NULL;
* an argument of a hand-written predicate: every literal the predicate compares it with, one
  other value, and NULL;
* an identifier column: a few identifiers of its domain, the same in every dataset of that
  domain, and NULL;
* any other column: recognisable values (``notes-1``) and NULL.

Rows cycle through each column's values; the longest list sets the number of rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache

from sqlglot import exp

from accord.compiler.core.platforms import facts
from accord.compiler.model.expressions import parse_predicate
from accord.compiler.model.schema import PolicyModel
from accord.compiler.model.types import is_string_type, parse_type

IDENTIFIERS_PER_DOMAIN = 3
Value = str | int | bool | None


@dataclass(frozen=True)
class GenColumn:
    name: str
    duck_type: str
    values: tuple[Value, ...]
    #: what the column is: "entitlement:<dim>", "argument", "identifier:<domain>", "other"
    role: str


@dataclass(frozen=True)
class GenTable:
    dataset: str
    columns: tuple[GenColumn, ...]
    #: the number of rows: row ``r`` of a column holds ``values[r % len(values)]``
    length: int

    @cached_property
    def rows(self) -> tuple[tuple[Value, ...], ...]:
        return tuple(
            tuple(c.values[i % len(c.values)] for c in self.columns) for i in range(self.length)
        )

    @cached_property
    def positions(self) -> dict[str, int]:
        """Folded name -> the first column of that name (looked up per part, row and persona:
        a dict, not a scan of the columns). Each column's own spelling is a key too when it
        names the same column as its folded form does, so a name as written is found without
        folding it."""
        out: dict[str, int] = {}
        for i, c in enumerate(self.columns):
            out.setdefault(c.name.lower(), i)
        for c in self.columns:
            out.setdefault(c.name, out[c.name.lower()])
        return out

    def column_index(self, name: str) -> int | None:
        positions = self.positions
        found = positions.get(name)
        return positions.get(name.lower()) if found is None else found

    def value(self, row: int, column: str) -> Value:
        i = self.column_index(column)
        if i is None:
            return None
        values = self.columns[i].values
        return values[row % len(values)]

    def describe(self, row: int, column: str | None = None) -> str:
        """``row 2 (PROGRAMME_CODE='CNS-204')``: the row and its deciding value."""
        keys = [c.name for c in self.columns if c.role.startswith("entitlement:")]
        if column is None and len(keys) > 1:  # a filter over several dimensions
            shown = ", ".join(f"{k}={_show(self.value(row, k))}" for k in keys)
            return f"row {row} ({shown})"
        key = column or next((c.name for c in self.columns if c.role != "other"), None)
        if key is None:
            return f"row {row}"
        return f"row {row} ({key}={_show(self.value(row, key))})"


def _show(value: Value) -> str:
    return "NULL" if value is None else repr(value)


def nobody_value(dimension: str) -> str:
    return f"{dimension.upper()}-GRANTED-TO-NOBODY"


def identifiers(domain: str) -> tuple[str, ...]:
    return tuple(f"{domain}-{i:03d}" for i in range(1, IDENTIFIERS_PER_DOMAIN + 1))


def _literals(predicate: exp.Expression, column: str) -> list[Value]:
    """String and number literals the predicate compares ``column`` with."""
    out: list[Value] = []
    folded = column.lower()

    def is_col(node: exp.Expression) -> bool:
        return isinstance(node, exp.Column) and node.name.lower() == folded and not node.table

    def add(node: exp.Expression) -> None:
        if isinstance(node, exp.Literal):
            out.append(node.this if node.is_string else int(float(node.this)))

    for node in predicate.walk():
        if isinstance(node, exp.EQ | exp.NEQ | exp.Like | exp.ILike):
            if is_col(node.this):
                add(node.expression)
            elif is_col(node.expression):
                add(node.this)
        elif isinstance(node, exp.In) and is_col(node.this):
            for item in node.expressions:
                add(item)
    return out


@lru_cache(maxsize=1024)
def _kind(type_text: str, platform: str) -> str:
    dtype = parse_type(type_text, platform)
    if dtype is None or is_string_type(dtype):
        return "string"
    if dtype.is_type(*exp.DataType.NUMERIC_TYPES):
        return "number"
    if dtype.is_type(exp.DataType.Type.BOOLEAN):
        return "boolean"
    return "other"


@lru_cache(maxsize=1024)
def _duck_type(type_text: str, platform: str) -> str:
    dtype = parse_type(type_text, platform)
    if dtype is None or is_string_type(dtype):
        return "VARCHAR"
    return dtype.sql("duckdb")


def generate(model: PolicyModel, extra_columns: dict[str, set[str]]) -> dict[str, GenTable]:
    """One table per dataset. ``extra_columns`` names, per dataset, columns the compiled SQL
    refers to that the model does not list (they get recognisable values)."""
    out: dict[str, GenTable] = {}
    # equal value lists are one object (by column type: True == 1), so that what is
    # computed per list is computed once for the estate
    shared: dict[tuple[str, tuple[Value, ...]], tuple[Value, ...]] = {}
    groups: dict[str, list[str]] = {}
    for name in sorted(model.datasets):
        groups.setdefault(model.replica_root(name), []).append(name)
    made: dict[tuple[str, ...], tuple[tuple[Value, ...], str]] = {}
    for members in groups.values():
        columns_of = {name: _dataset_columns(model, name, extra_columns) for name in members}
        specs = _group_columns(model, members, columns_of, made)
        _combine(model, members, specs)
        length = max((len(v) for _, _, v, _ in specs.values()), default=1)
        for name in members:
            ds = model.datasets[name]
            cols = []
            for col in columns_of[name]:
                _, type_text, values, role = specs[col.lower()]
                duck_type = _duck_type(type_text, ds.platform)
                values = shared.setdefault((duck_type, values), values)
                cols.append(GenColumn(col, duck_type, values, role))
            out[name] = GenTable(name, tuple(cols), length)
    return out


def _dataset_columns(
    model: PolicyModel, name: str, extra_columns: dict[str, set[str]]
) -> list[str]:
    ds = model.datasets[name]
    cols: dict[str, str] = {}
    rf = ds.row_filter
    wanted = [
        *(c for _, c, _ in ds.filter_dimensions),
        *((rf.arguments or {}) if rf else {}),
        *ds.columns,
        *sorted(extra_columns.get(name, ())),
    ]
    for col in wanted:
        cols.setdefault(col.lower(), col)
    return list(cols.values())


def _group_columns(
    model: PolicyModel,
    members: list[str],
    columns_of: dict[str, list[str]],
    made: dict[tuple[str, ...], tuple[tuple[Value, ...], str]],
) -> dict[str, tuple[str, str, tuple[Value, ...], str]]:
    """folded column name -> (platform, type, values, role), decided across the group.
    ``made``: the values and role of every column that is not a predicate's argument, by
    what decides them (they repeat in every table of an estate)."""
    specs: dict[str, tuple[str, str, tuple[Value, ...], str]] = {}
    for name in members:
        ds = model.datasets[name]
        rf = ds.row_filter
        arguments = (rf.arguments or {}) if rf else {}
        default_type = facts(ds.platform).string_type
        # folded column -> the first dimension it keys (as the dimensions are listed)
        keys_of: dict[str, str] = {}
        for d, c, _ in ds.filter_dimensions:
            keys_of.setdefault(c.lower(), d)
        # folded columns a hand-written predicate takes as arguments
        predicate_args = {a.lower() for a in arguments} if rf is not None and rf.expression else ()
        for col in columns_of[name]:
            key = col.lower()
            spec = ds.columns.get(col)
            type_text = (spec.type if spec else arguments.get(col, "")) or default_type
            kind = _kind(type_text, ds.platform)
            keyed = keys_of.get(key)
            if keyed is not None:
                decided: tuple[str, ...] = ("entitlement", keyed, kind)
            elif key in predicate_args:
                decided = ()
            elif spec is not None and spec.identifier:
                decided = ("identifier", spec.identifier, kind)
            else:
                decided = ("other", key, kind)
            if decided and decided in made:
                values, role = made[decided]
            elif decided and decided[0] == "entitlement":
                dim = decided[1]
                values = (*sorted(model.entitlements[dim]), nobody_value(dim))
                role = f"entitlement:{dim}"
            elif not decided:
                found: list[Value] = []
                for platform, text in sorted(rf.expression.items()):
                    for v in _literals(parse_predicate(text, platform), col):
                        if v not in found:
                            found.append(v)
                values = (*found, f"{col.lower()}-other" if kind == "string" else 999)
                role = "argument"
            elif spec is not None and spec.identifier:
                values = identifiers(spec.identifier)
                role = f"identifier:{spec.identifier}"
            else:
                values = _recognisable(col, kind)
                role = "other"
            if not decided or decided not in made:
                if kind == "number":
                    values = tuple(
                        v if isinstance(v, int) or v is None else i for i, v in enumerate(values, 1)
                    )
                elif kind == "boolean":
                    values = (True, False)
                elif kind == "other":
                    values = ()
                values = (*values, None)
                if decided:
                    made[decided] = (values, role)
            # across a replica group the more telling role decides: an entitlement column's
            # values over a predicate's literals, over identifiers, over plain values
            if key not in specs or _RANK[role.split(":")[0]] < _RANK[specs[key][3].split(":")[0]]:
                specs[key] = (ds.platform, type_text, values, role)
    return specs


_RANK = {"entitlement": 0, "argument": 1, "identifier": 2, "other": 3}


def _combine(
    model: PolicyModel,
    members: list[str],
    specs: dict[str, tuple[str, str, tuple[Value, ...], str]],
) -> None:
    """Every combination of values of a filter over several dimensions: the key columns of
    such filters in the group (in filter order) get strides, so that row ``r`` holds value
    ``(r // stride) % n`` of each, and the rows hold every combination (every granted value,
    the value granted to nobody and NULL, of each dimension, against each of the others)."""
    keys: list[str] = []
    for name in members:
        ds = model.datasets[name]
        if ds.row_filter is None or ds.row_filter.dimensions is None:
            continue
        for _, column, _ in ds.filter_dimensions:
            if column.lower() not in keys and column.lower() in specs:
                keys.append(column.lower())
    stride = 1
    for key in keys:
        platform, type_text, values, role = specs[key]
        if stride > 1:
            values = tuple(v for v in values for _ in range(stride))
            specs[key] = (platform, type_text, values, role)
        stride = len(values)


def _recognisable(col: str, kind: str) -> tuple[Value, ...]:
    if kind == "string":
        return tuple(f"{col.lower()}-{i}" for i in range(1, 4))
    return (1, 2, 3)
