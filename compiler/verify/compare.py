"""Comparing what the compiled SQL shows with what the model says.

The answers (:mod:`compiler.verify.results`) are compared with :mod:`compiler.meaning.semantics`
(the oracle: the persona's rows, whether it sees a mask's clear value, ``apply_mask``) once per
distinct (part, inputs, value) cell, replicas are compared with each other, and identifier
digests are compared across platforms; a mismatch is reported per persona, dataset and column
with every row it concerns, exactly as when each dataset's rows were compared one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING, Any

from accord.compiler.meaning import semantics
from accord.compiler.model.identities import identity_subject
from accord.compiler.model.schema import PolicyModel
from accord.compiler.verify.data import GenTable
from accord.compiler.verify.parts import Part, objects_of
from accord.compiler.verify.report import Mismatch, Observation, Report, SqlObject
from accord.compiler.verify.results import NOBODY, Answers

if TYPE_CHECKING:
    from accord.compiler.verify.results import Uses


class Comparison:
    """Compares the evaluated datasets with the model, adding checks and mismatches to
    ``report``. ``salt_for(mask, platform)``: the run's test salt of a mask."""

    def __init__(
        self,
        model: PolicyModel,
        personas: list[str],
        tables: dict[str, GenTable],
        uses: Uses,
        parts_of: dict[str, tuple[Part, dict[str, Part]]],
        answers: Answers,
        salt_for: Callable[[str, str], str | None],
        report: Report,
        as_of: date | None = None,
    ) -> None:
        self.model = model
        self.personas = personas
        self.tables = tables
        self.uses = uses
        self.parts_of = parts_of
        self.answers = answers
        self.salt_for = salt_for
        self.report = report
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._masked: dict[tuple[str, str | None, str | None], str | None] = {}
        shared: dict[tuple[str, ...], object] = {}
        self._perspectives = {p: semantics.Perspective(model, p, shared, as_of) for p in personas}

    def _masked_value(self, mask: str, value: Any, salt: str | None) -> str | None:
        key = (mask, None if value is None else str(value), salt)
        if key not in self._masked:
            self._masked[key] = semantics.apply_mask(self.model.masks[mask], key[1], salt)
        return self._masked[key]

    def _want(self, mask: str | None, salt: str | None, original: Any) -> Any:
        return original if mask is None else self._masked_value(mask, original, salt)

    def _differing(
        self, dataset: str, column: str, mask: str | None, salt: str | None
    ) -> _Differing:
        """persona -> the generated rows (visible or not) where ``column`` shows the persona
        something other than the model's value: the clear value (``mask`` None), or
        ``mask`` applied with ``salt``. Computed once per distinct (part, inputs, values)."""
        use = self.uses[dataset][1][column]
        table = self.tables[dataset]
        index = table.column_index(column)
        assert index is not None
        values = table.columns[index].values
        key = ("differ", use.group.id, id(use.codes), id(values), mask, salt)
        found = self._memo.get(key)
        if found is None:
            found = _Differing()
            n = len(values)
            cells = sorted({(code, r % n) for r, code in enumerate(use.codes)})
            for persona, answers in use.group.answers.items():
                wrong = {
                    cell
                    for cell in cells
                    if not _same(self._want(mask, salt, values[cell[1]]), answers[cell[0]])
                }
                found[persona] = (
                    tuple(r for r, code in enumerate(use.codes) if (code, r % n) in wrong)
                    if wrong
                    else ()
                )
                found.any = found.any or bool(wrong)
            self._memo[key] = found
        return found  # type: ignore[no-any-return]

    def _column_modes(
        self, dataset: str, column: str
    ) -> tuple[str | None, str | None, _Differing, _Differing]:
        """The column's mask and test salt, and the rows that differ from the masked and from
        the clear value, per persona (which one applies: :meth:`_expect_masked`)."""
        ds = self.model.datasets[dataset]
        spec = ds.columns.get(column)
        mask = spec.mask if spec is not None else None
        salt = self.salt_for(mask, ds.platform) if mask else None
        clear = self._differing(dataset, column, None, None)
        masked = self._differing(dataset, column, mask, salt) if mask else clear
        return mask, salt, masked, clear

    def _expect_masked(self, persona: str, mask: str | None, platform: str) -> bool:
        return mask is not None and not self._perspectives[persona].unmasked(mask, platform)

    def _expected_rows(self, dataset: str, persona: str) -> list[int]:
        ds = self.model.datasets[dataset]
        table = self.tables[dataset]
        rf = ds.row_filter
        rowset = self._perspectives[persona].rows(dataset)
        if rf is not None and rf.dimensions is not None:
            keyed = [(d, table.column_index(c)) for d, c, _ in ds.filter_dimensions]
            memo_key = ("expected-dims", dataset, table.length, rowset)
            hit = self._memo.get(memo_key)
            if hit is None:
                hit = self._memo[memo_key] = [
                    r
                    for r in range(table.length)
                    if rowset.sees_row(
                        {
                            d: _text(table.value(r, table.columns[i].name))
                            if i is not None
                            else None
                            for d, i in keyed
                        }
                    )
                ]
            return list(hit)  # type: ignore[call-overload]
        key = rf.column if rf is not None else None
        index = table.column_index(key) if key else None
        values = table.columns[index].values if index is not None else None
        memo = ("expected", id(values), table.length, rowset)
        found = self._memo.get(memo)
        if found is None:
            if values is None:
                found = [r for r in range(table.length) if rowset.sees(None)]
            else:
                n = len(values)
                found = [r for r in range(table.length) if rowset.sees(values[r % n])]
            self._memo[memo] = found
        return list(found)  # type: ignore[call-overload]

    def _clean(self, dataset: str, modes: dict[str, Any]) -> bool:
        """Whether every persona sees exactly what the model says of ``dataset``: no ABAC
        conflict, the entitled rows (unless a hand-written predicate decides), and in every
        checked column the model's value in every row (visible or not)."""
        ds = self.model.datasets[dataset]
        row_use, column_uses = self.uses[dataset]
        if row_use.group.conflicts or any(u.group.conflicts for u in column_uses.values()):
            return False
        if not self._rows_as_entitled(dataset):
            return False
        for mask, _, if_masked, if_clear in modes.values():
            if not if_masked.any and not if_clear.any:
                continue
            key = ("clean", id(if_masked), id(if_clear), mask, ds.platform)
            found = self._memo.get(key)
            if found is None:
                found = self._memo[key] = not any(
                    (if_masked if self._expect_masked(p, mask, ds.platform) else if_clear)[p]
                    for p in self.personas
                )
            if not found:
                return False
        return True

    def _rows_as_entitled(self, dataset: str) -> bool:
        """Whether the compiled SQL shows every persona the rows the model entitles it to
        (True when a hand-written predicate decides: nothing to compare). The answer depends
        on the row part, its inputs and the entitlement filter only: computed once for
        every dataset of that shape."""
        ds = self.model.datasets[dataset]
        rf = ds.row_filter
        if rf is not None and rf.expression is not None:
            return True
        table = self.tables[dataset]
        use = self.uses[dataset][0]
        index = table.column_index(rf.column) if rf is not None and rf.column else None
        values = table.columns[index].values if index is not None else None
        # the entitlement filter as semantics.Perspective.rows keys it
        grants = (ds.platform, rf.entitlement, tuple(rf.unfiltered_for)) if rf else None
        if rf is not None and rf.dimensions is not None:
            # the filter of several dimensions, and every key column's values
            grants = (ds.platform, dataset)  # type: ignore[assignment]
            values = tuple(  # type: ignore[assignment]
                id(table.columns[i].values)
                for _, c, _ in ds.filter_dimensions
                if (i := table.column_index(c)) is not None
            )
        key = ("entitled", use.group.id, id(use.codes), id(values), table.length, grants)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = all(
                self._expected_rows(dataset, p) == list(self.answers.shown(dataset, p))
                for p in self.personas
            )
        return found  # type: ignore[no-any-return]

    def compare(self, dataset: str, row: Part, columns: dict[str, Part]) -> None:
        """Compare what ``dataset`` shows every persona, rows and columns, with the model."""
        ds = self.model.datasets[dataset]
        platform = ds.platform
        table = self.tables[dataset]
        rf = ds.row_filter
        modes = {
            col: self._column_modes(dataset, col)
            for col, part in columns.items()
            if ds.columns.get(col) is not None or part.objects
        }
        if self._clean(dataset, modes):
            # the common case, decided without building anything per persona and row
            self.report.checks += len(self.personas) * (1 + len(modes))
            if rf is not None and rf.expression is not None:
                for persona in self.personas:
                    shown = self.answers.shown(dataset, persona)
                    self.report.observations.append(
                        Observation(
                            persona, dataset, platform, tuple(table.describe(r) for r in shown)
                        )
                    )
            return
        for persona in self.personas:
            shown = list(self.answers.shown(dataset, persona))
            for what in self.answers.conflicts(dataset, persona):
                self.report.mismatches.append(
                    Mismatch(
                        "refused",
                        persona,
                        dataset,
                        platform,
                        None if what == "rows" else what,
                        "at most one ABAC " + ("row filter" if what == "rows" else "column mask"),
                        "several apply: the platform refuses the read",
                        (),
                        tuple((row if what == "rows" else columns[what]).objects),
                        "more than one ABAC policy applies to this persona "
                        "(UC_ABAC_MULTIPLE_ROW_FILTERS / MULTIPLE_MASKS)",
                    )
                )
            self.report.checks += 1
            if rf is not None and rf.expression is not None:
                self.report.observations.append(
                    Observation(persona, dataset, platform, tuple(table.describe(r) for r in shown))
                )
            else:
                key = rf.column if rf is not None else None
                expected = self._expected_rows(dataset, persona)
                if expected != shown:
                    hidden = [r for r in expected if r not in shown]
                    extra = [r for r in shown if r not in expected]
                    parts = []
                    if hidden:
                        parts.append(f"{len(hidden)} entitled row(s) hidden")
                    if extra:
                        parts.append(f"{len(extra)} row(s) shown that the model withholds")
                    self.report.mismatches.append(
                        Mismatch(
                            "rows",
                            persona,
                            dataset,
                            platform,
                            key,
                            _rows_text(table, expected, key),
                            _rows_text(table, shown, key),
                            tuple(
                                [table.describe(r, key) + " hidden" for r in hidden]
                                + [table.describe(r, key) + " shown" for r in extra]
                            ),
                            tuple(row.objects) or _nothing("row filter", ds.table),
                            "; ".join(parts),
                        )
                    )
            perspective = self._perspectives[persona]
            for col, part in columns.items():
                spec = ds.columns.get(col)
                if spec is None and not part.objects:
                    continue  # a column no one governs: nothing to check
                self.report.checks += 1
                mask, salt, if_masked, if_clear = modes[col]
                if not self._expect_masked(persona, mask, platform):
                    mask, salt = None, None
                differing = (if_masked if mask else if_clear)[persona]
                if not differing:
                    continue
                wrong = set(differing)
                bad = [r for r in shown if r in wrong]
                if bad:
                    cv = perspective.column(dataset, col)
                    r0 = bad[0]
                    want0 = self._want(mask, salt, table.value(r0, col))
                    actual0 = self.answers.value(dataset, persona, r0, col)
                    what = (
                        f"{cv.strategy} mask {cv.mask}" if cv.disposition == "masked" else "clear"
                    )
                    self.report.mismatches.append(
                        Mismatch(
                            "column",
                            persona,
                            dataset,
                            platform,
                            col,
                            f"{what}: {_show(want0)} for {table.describe(r0, col)}",
                            f"{_show(actual0)}",
                            tuple(table.describe(r, col) for r in bad),
                            tuple(part.objects) or _nothing("mask", f"{ds.table}.{col}"),
                            f"{col} should be {cv.disposition} for {persona}; "
                            f"{len(bad)} visible row(s) differ",
                        )
                    )

    def compare_replicas(self) -> None:
        """Replicas of one dataset must show every persona the same rows and values."""
        groups: dict[str, list[str]] = {}
        for name in sorted(self.model.datasets):
            if name in self.uses:  # an engine compares the datasets it evaluated
                groups.setdefault(self.model.replica_root(name), []).append(name)
        for members in groups.values():
            for i, a in enumerate(members):
                for b in members[i + 1 :]:
                    self._compare_pair(a, b)

    def _replica_diffs(self, a: str, ca: str, b: str, cb: str, hashed: bool) -> _Differing:
        """persona -> rows (visible or not) where replicas ``a.ca`` and ``b.cb`` differ, as
        ``(row, value on a, value on b, state on a, state on b)``: one shows the value clear
        and the other masked, or both mask it differently (a salted hash differs per
        platform by design). Computed once per distinct pair of parts and inputs."""
        ua, ub = self.uses[a][1][ca], self.uses[b][1][cb]
        ta = self.tables[a]
        index = ta.column_index(ca)
        assert index is not None
        values = ta.columns[index].values
        key = ("replica", ua.group.id, id(ua.codes), ub.group.id, id(ub.codes), id(values))
        key += (hashed,)
        found = self._memo.get(key)
        if found is None:
            found = _Differing()
            n = len(values)
            rows = list(enumerate(zip(ua.codes, ub.codes, strict=True)))
            for persona, got_a in ua.group.answers.items():
                got_b = ub.group.answers[persona]
                cells: dict[tuple[int, int, int], tuple[Any, Any, str, str] | None] = {}
                out = []
                for r, (code_a, code_b) in rows:
                    cell = (code_a, code_b, r % n)
                    if cell not in cells:
                        original = values[r % n]
                        va, vb = got_a[code_a], got_b[code_b]
                        state_a = "clear" if _same(va, original) else "masked"
                        state_b = "clear" if _same(vb, original) else "masked"
                        differ = state_a != state_b or (
                            state_a == "masked" and not hashed and not _same(va, vb)
                        )
                        cells[cell] = (va, vb, state_a, state_b) if differ else None
                    found_cell = cells[cell]
                    if found_cell is not None:
                        out.append((r, *found_cell))
                found[persona] = tuple(out)  # type: ignore[assignment]
                found.any = found.any or bool(out)
            self._memo[key] = found
        return found

    def _compare_pair(self, a: str, b: str) -> None:
        ta, tb = self.tables[a], self.tables[b]
        da, db = self.model.datasets[a], self.model.datasets[b]
        common = [
            (ca.name, cb.name)
            for ca in ta.columns
            for cb in tb.columns
            if ca.name.lower() == cb.name.lower()
            and (ca.name in da.columns or cb.name in db.columns)
        ]
        hashed = {
            (ca, cb): _strategy(self.model, da, ca) == "hash"
            or (_strategy(self.model, db, cb) == "hash")
            for ca, cb in common
        }
        diffs_of = {
            (ca, cb): self._replica_diffs(a, ca, b, cb, hashed[(ca, cb)]) for ca, cb in common
        }
        for persona in self.personas:
            if da.platform != db.platform and identity_subject(persona) is not None:
                continue  # an identity is one platform's: its replicas elsewhere are no one's
            sa = list(self.answers.shown(a, persona))
            sb = list(self.answers.shown(b, persona))
            self.report.checks += 1
            key = da.row_filter.column if da.row_filter and da.row_filter.column else None
            if sa != sb:
                only_a = [r for r in sa if r not in sb]
                only_b = [r for r in sb if r not in sa]
                self.report.mismatches.append(
                    Mismatch(
                        "replica-rows",
                        persona,
                        f"{a} / {b}",
                        f"{da.platform} / {db.platform}",
                        None,
                        f"the rows {a} shows on {da.platform}: {_rows_text(ta, sa, key)}",
                        _rows_text(tb, sb, key),
                        tuple(
                            [f"{ta.describe(r)} only on {a}" for r in only_a]
                            + [f"{tb.describe(r)} only on {b}" for r in only_b]
                        ),
                        self.objects(a, None) + self.objects(b, None),
                        f"replicas {a} ({da.platform}) and {b} ({db.platform}) show "
                        f"{persona} different rows of the same facts",
                    )
                )
            both: set[int] | None = None
            for ca, cb in common:
                self.report.checks += 1
                found = diffs_of[(ca, cb)][persona]
                if not found:
                    continue
                if both is None:
                    both = set(sa) & set(sb)
                diffs = [d for d in found if d[0] in both]
                if diffs:
                    _, va0, vb0, s_a, s_b = diffs[0]
                    self.report.mismatches.append(
                        Mismatch(
                            "replica-column",
                            persona,
                            f"{a} / {b}",
                            f"{da.platform} / {db.platform}",
                            ca if ca == cb else f"{ca} / {cb}",
                            f"as {a}.{ca} on {da.platform}: {s_a} {_show(va0)}",
                            f"{s_b} {_show(vb0)}",
                            tuple(ta.describe(r, ca) for r, *_ in diffs),
                            self.objects(a, ca) + self.objects(b, cb),
                            f"replicas {a}.{ca} and {b}.{cb} show {persona} the same column "
                            "differently",
                        )
                    )

    def compare_digests(self) -> None:
        """An identifier hashed on two platforms must give different digests."""
        by_domain: dict[str, list[tuple[str, str]]] = {}
        for name in sorted(self.model.datasets):
            if name not in self.uses:
                continue
            ds = self.model.datasets[name]
            for col, spec in ds.columns.items():
                if spec.identifier and spec.mask and self.model.masks[spec.mask].strategy == "hash":
                    by_domain.setdefault(spec.identifier, []).append((name, col))
        for domain, cols in sorted(by_domain.items()):
            # every pair of columns on two platforms is one check; only pairs that share an
            # (identifier, digest) can differ, found through an index instead of comparing
            # every pair (which made verify quadratic in the number of datasets)
            platform_of = [self.model.datasets[a].platform for a, _ in cols]
            digests = [self._digests(a, ca) for a, ca in cols]
            # (identifier, digest) -> platform -> the columns giving it: a column looks only
            # at the other platforms' (the same platform shares its salt by design)
            sharing: dict[tuple[Any, Any], dict[str, list[int]]] = {}
            for j, found in enumerate(digests):
                for v, d in found.items():
                    if d is not None and d != v:
                        sharing.setdefault((v, d), {}).setdefault(platform_of[j], []).append(j)
            later = dict.fromkeys(platform_of, 0)
            for i in range(len(cols) - 1, -1, -1):
                self.report.checks += sum(n for p, n in later.items() if p != platform_of[i])
                later[platform_of[i]] += 1
            for i, (a, ca) in enumerate(cols):
                candidates = sorted(
                    {
                        j
                        for v, d in digests[i].items()
                        if d is not None and d != v
                        for p, js in sharing[(v, d)].items()
                        if p != platform_of[i]
                        for j in js
                        if j > i
                    }
                )
                for j in candidates:
                    b, cb = cols[j]
                    pa, pb = platform_of[i], platform_of[j]
                    digests_a = digests[i]
                    digests_b = digests[j]
                    same = sorted(
                        v
                        for v, d in digests_a.items()
                        if d is not None and d != v and digests_b.get(v) == d
                    )
                    if same:
                        self.report.mismatches.append(
                            Mismatch(
                                "digest",
                                None,
                                f"{a} / {b}",
                                f"{pa} / {pb}",
                                ca if ca == cb else f"{ca} / {cb}",
                                f"different digests of the same {domain} on {pa} and {pb}",
                                f"{a}.{ca} on {pa} and {b}.{cb} on {pb} give the same digest "
                                f"for {', '.join(repr(v) for v in same)}",
                                tuple(same),
                                self.objects(a, ca) + self.objects(b, cb),
                                f"masked {domain} identifiers join across platforms: the salt "
                                "functions must differ per platform",
                            )
                        )

    def objects(self, dataset: str, column: str | None) -> tuple[SqlObject, ...]:
        return objects_of(self.parts_of, dataset, column)

    def _digests(self, dataset: str, column: str) -> dict[str, Any]:
        """identifier -> what the column's mask shows a persona with no principal."""
        use = self.uses[dataset][1][column]
        table = self.tables[dataset]
        index = table.column_index(column)
        assert index is not None
        values = table.columns[index].values
        key = ("digests", use.group.id, id(use.codes), id(values))
        found = self._memo.get(key)
        if found is None:
            nobody = use.group.answers[NOBODY]
            n = len(values)
            found = self._memo[key] = {
                value: nobody[code]
                for r, code in enumerate(use.codes)
                if isinstance(value := values[r % n], str)
            }
        return found  # type: ignore[no-any-return]


class _Differing(dict[str, tuple[int, ...]]):
    """persona -> rows that differ from the model; ``any``: whether some persona has one."""

    any = False


def _strategy(model: PolicyModel, ds: Any, column: str) -> str | None:
    spec = ds.columns.get(column)
    return model.masks[spec.mask].strategy if spec and spec.mask else None


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b or str(a) == str(b)


def _show(value: Any) -> str:
    return "NULL" if value is None else repr(value)


def _rows_text(table: GenTable, rows: list[int], key: str | None) -> str:
    if not rows:
        return "no rows"
    if len(rows) == table.length:
        return f"every row ({len(rows)})"
    if key is None:
        keys = [c for c in table.columns if c.role.startswith("entitlement:")]
        if len(keys) > 1:  # a filter over several dimensions: each row's combination
            shown = [
                "(" + ", ".join(f"{c.name}={_show(table.value(r, c.name))}" for c in keys) + ")"
                for r in rows[:12]
            ]
            more = f" and {len(rows) - 12} more" if len(rows) > 12 else ""
            return "rows " + ", ".join(shown) + more
        return ", ".join(f"row {r}" for r in rows)
    return "rows with " + key + " in (" + ", ".join(_show(table.value(r, key)) for r in rows) + ")"


def _nothing(what: str, where: str) -> tuple[SqlObject, ...]:
    return (SqlObject(f"no {what} attached to", where),)


def _text(value: object) -> str | None:
    """A generated key value as the model names entitlement values (codes are text)."""
    return None if value is None else str(value)
