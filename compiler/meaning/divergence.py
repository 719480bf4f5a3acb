"""Divergences between surfaces (ACC403): the same facts, less restricted for a persona on
one surface than on another.

The facts are a dataset and its replicas (rows and same-named columns) and every identifier
domain (columns). What a persona sees of each place is :mod:`compiler.meaning.semantics`'s
(:meth:`~compiler.meaning.semantics.Perspective.seen`); this module only compares the places.
:func:`divergences` is the one function behind ACC403 in ``accord lint``, ``accord analyze``
and ``accord diff``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from accord.compiler.meaning.order import COLUMNS, compare
from accord.compiler.meaning.semantics import (
    Disposition,
    Perspective,
    RowSet,
    Seen,
    Shape,
    enforcement,
    governed_columns,
)
from accord.compiler.model.identities import identity_subject, subjects
from accord.compiler.model.schema import PolicyModel


def _openness(disposition: str) -> tuple[int, int]:
    """A linear order that extends the order of column dispositions
    (:mod:`compiler.meaning.order`): what to compare a place with first."""
    point = COLUMNS[disposition]
    return (sum(point), point[0])


def _looser_or_apart(a: str, b: str) -> bool:
    """``a`` gives away something ``b`` keeps: looser, or incomparable."""
    return compare(a, b, "column") in ("looser", "incomparable")


@dataclass(frozen=True)
class Reach:
    """One place a fact is answered: a surface reading a dataset (and a column of it)."""

    surface: str
    dataset: str
    column: str | None = None


@dataclass(frozen=True)
class Divergence:
    """The same facts are less restricted for ``persona`` on ``loose`` than on ``strict``."""

    persona: str
    #: ("dataset", replica-group root) or ("identifier", domain)
    facts: tuple[str, str]
    loose: Reach
    strict: Reach
    aspect: Literal["rows", "column"]
    detail: str


def reaches(model: PolicyModel) -> dict[str, list[tuple[str, str]]]:
    """For each dataset, the (surface, dataset) pairs that read it, in a stable order."""
    out: dict[str, list[tuple[str, str]]] = {d: [] for d in model.datasets}
    for sname in sorted(model.surfaces):
        for d in model.surfaces[sname].reads:
            out[d].append((sname, d))
    return out


def _describe_rows(rows: RowSet, disposition: Disposition) -> str:
    if disposition == "ungoverned":
        return "every row (ungoverned)"
    if rows.aggregated and not rows.nothing:
        plain = _describe_rows(dataclasses.replace(rows, aggregated=0), "clear")
        return f"{plain} only in aggregates over groups of at least {rows.aggregated} rows"
    if rows.all:
        return "every row"
    if rows.nothing:
        return "no rows"
    if rows.expression:
        return "rows the hand-written predicate admits"
    return "rows of " + ", ".join(sorted(rows.values))


def divergences(
    model: PolicyModel,
    personas: Iterable[str] | None = None,
    *,
    refused_as_intended: bool = True,
    datasets: Iterable[str] | None = None,
) -> list[Divergence]:
    """Where the same facts are looser for a subject on one surface than on another
    (:func:`_divergences`): for every persona (or those of ``personas``) and every identity
    no persona holds (:func:`compiler.model.identities.subjects`). An identity is one
    platform's: its divergences are those among the places of its platform's datasets."""
    found = list(personas) if personas is not None else subjects(model)
    own = sorted(s for s in found if identity_subject(s) is None)
    out = _divergences(model, own, refused_as_intended=refused_as_intended, datasets=datasets)
    by_platform: dict[str, list[str]] = {}
    for s in found:
        identity = identity_subject(s)
        if identity is not None:
            by_platform.setdefault(identity.platform, []).append(s)
    for platform, names in sorted(by_platform.items()):
        out += _divergences(
            model,
            sorted(names),
            refused_as_intended=refused_as_intended,
            datasets=datasets,
            on=platform,
        )
    return out


def _divergences(
    model: PolicyModel,
    personas: Iterable[str],
    *,
    refused_as_intended: bool = True,
    datasets: Iterable[str] | None = None,
    on: str | None = None,
) -> list[Divergence]:
    """Where the same facts are looser for a persona on one surface than on another: a
    dataset and its replicas (rows and same-named columns), and every identifier domain
    (columns). Deterministic order.

    Each loose place (a surface reading a dataset, and a column of it) is reported once per
    persona and aspect, against the *strictest* place that reads the same facts, so the
    result grows with the number of places, not with the number of pairs of them.

    The one function behind ACC403 in ``accord lint``, ``accord analyze`` (and ``accord
    diff``): they report the same set.

    ``refused_as_intended`` (the default, as ACC403's page says): a surface whose runtime
    returns no rows (:func:`~compiler.meaning.semantics.runtime_refusal`) is compared by what
    its catalog's policies intend instead of as "denied". Its failure is a
    defect of its own (ACC401), not a restriction, and counting it as one would make every
    working surface that reads the same facts look loose.

    ``datasets``: only the facts that hold one of them (their replica groups, and the
    identifier domains of their columns): the divergences of the whole model whose facts
    are those, in the same order. Used to recompute only what a change can touch.

    How it stays cheap: what a persona sees of a place is :meth:`Perspective.seen`, memoised
    by how the dataset is governed rather than by its name; and the divergences of one set
    of facts are a function of what each of its places shows, so personas that see the
    same there share one computation (only the persona differs in what is reported)."""
    personas = sorted(personas)
    by_dataset = reaches(model)
    root_of = {d: model.replica_root(d) for d in model.datasets}
    # ``on``: the datasets of one platform only (an identity's)
    mine = sorted(d for d in model.datasets if on is None or model.datasets[d].platform == on)
    groups: dict[str, list[str]] = {}
    for d in mine:
        groups.setdefault(root_of[d], []).append(d)
    domains: dict[str, list[tuple[str, str]]] = {}
    for d in mine:
        for col, spec in model.datasets[d].columns.items():
            if spec.identifier:
                domains.setdefault(spec.identifier, []).append((d, col))
    if datasets is not None:
        wanted = set(datasets) & set(model.datasets)
        roots = {root_of[d] for d in wanted}
        groups = {r: m for r, m in groups.items() if r in roots}
        domains = {k: v for k, v in domains.items() if any(d in wanted for d, _ in v)}
    refused = {
        s for s in model.surfaces if refused_as_intended and enforcement(model, s).mode == "no-rows"
    }
    # a replica shows every column its group governs anywhere: one that lost its mask is the
    # very leak to find
    also: dict[str, list[str]] = {}
    for members in groups.values():
        if len(members) > 1:
            union = sorted({c for d in members for c in governed_columns(model.datasets[d])})
            for d in members:
                # a column the replica's table lacks (``omits``) shows nothing there
                gone = {c.lower() for c in model.datasets[d].omits}
                also[d] = [c for c in union if c.lower() not in gone]

    if not personas:
        return []
    shared: dict[tuple[str, ...], object] = {}
    first = Perspective(model, personas[0], shared)
    needed = {d for members in groups.values() for d in members}
    needed.update(d for cols in domains.values() for d, _ in cols)
    shapes = {d: first.shape(d, also.get(d, ())) for d in sorted(needed)}
    compared = [
        (root, [r for d in members for r in by_dataset[d]])
        for root, members in sorted(groups.items())
        if any(model.datasets[d].governed for d in members)
    ]
    compared = [(root, places) for root, places in compared if len(places) >= 2]
    keys = _PlaceKeys(first, refused, shapes)
    # each domain: its places (surface, dataset, column); the distinct questions they ask
    # (what a persona sees of a column position of datasets governed alike, through surfaces
    # of one mode), and which question each place asks
    domain_places = []
    for domain, cols in sorted(domains.items()):
        places3 = [(s, d, c) for d, c in cols for s, _ in by_dataset[d]]
        questions: dict[tuple[object, ...], int] = {}
        asks = []
        for s, d, c in places3:
            q = (keys(s, d), shapes[d].columns.index(c))
            asks.append(questions.setdefault(q, len(questions)))
        first_of = {j: p for p, j in zip(places3, asks, strict=True)}
        distinct = [(first_of[j][0], first_of[j][1], q[1]) for q, j in questions.items()]
        domain_places.append((domain, places3, distinct, asks))

    # groups alike: the same place keys (so every persona sees the same there), and for
    # columns the same column names too; whether a group diverges depends on that alone.
    # One numbering for both kinds, so their entries in ``quiet`` never meet
    kinds: dict[tuple[object, ...], int] = {}
    group_kinds = []
    for _, places in compared:
        rows_kind = tuple(keys(*p) for p in places)
        names = tuple(tuple(c.lower() for c in shapes[d].columns) for _, d in places)
        group_kinds.append(
            (
                kinds.setdefault(rows_kind, len(kinds)),
                kinds.setdefault((rows_kind, names), len(kinds)),
            )
        )

    out: list[Divergence] = []
    # the divergences of each set of facts, by what its places show (the first persona's)
    done: dict[tuple[object, ...], list[Divergence]] = {}
    done_columns: dict[tuple[object, ...], list[Divergence]] = {}
    done_domains: dict[tuple[object, ...], list[Divergence]] = {}
    # what groups alike show that diverges nowhere (Seen and their parts are interned, so
    # identities stand for values)
    quiet: set[tuple[object, ...]] = set()
    for persona in personas:
        view = _Views(Perspective(model, persona, shared), keys)
        seen_of: dict[int, list[Seen]] = {}
        for (root, places), (rows_kind, columns_kind) in zip(compared, group_kinds, strict=True):
            seen = seen_of.get(rows_kind)
            if seen is None:
                seen = seen_of[rows_kind] = [view(*p) for p in places]
            # rows depend on the row sets only, columns on the column dispositions only
            rows = seen[0].rows
            if any(v.rows is not rows for v in seen):  # else one row set: nothing is looser
                shows: tuple[object, ...] = (rows_kind, *(id(v.rows) for v in seen))
                shows += tuple(v.row_disposition for v in seen)
                if shows not in quiet:
                    key: tuple[object, ...] = (root, shows)
                    found = done.get(key)
                    if found is None:
                        found = done[key] = list(_row_divergences(persona, root, places, view))
                        if not found:
                            quiet.add(shows)
                        out.extend(found)
                    else:
                        out.extend(_for(persona, found))
            shows = (columns_kind, *(id(v.columns) for v in seen))
            if shows not in quiet:
                key = (root, shows)
                found = done_columns.get(key)
                if found is None:
                    found = done_columns[key] = list(
                        _column_divergences(persona, root, places, view, shapes)
                    )
                    if not found:
                        quiet.add(shows)
                    out.extend(found)
                else:
                    out.extend(_for(persona, found))
        for domain, places3, distinct, asks in domain_places:
            answers = tuple(view(s, d).columns[i] for s, d, i in distinct)
            key = (domain, answers)
            found = done_domains.get(key)
            if found is None:
                shown = [answers[j] for j in asks]
                found = done_domains[key] = list(
                    _domain_divergences(persona, domain, places3, shown, root_of)
                )
                out.extend(found)
            else:
                out.extend(_for(persona, found))
    return out


def _for(persona: str, found: list[Divergence]) -> Iterator[Divergence]:
    """The divergences another persona has, for ``persona`` (who sees the same)."""
    for d in found:
        yield Divergence(persona, d.facts, d.loose, d.strict, d.aspect, d.detail)


class _PlaceKeys:
    """What the :class:`Seen` of a place (surface, dataset) is memoised by: the dataset's
    :func:`shape_key` and the surface's enforcement mode (a refused surface's as its catalog
    intends). The same for every persona."""

    def __init__(self, perspective: Perspective, refused: set[str], shapes: dict[str, Shape]):
        self.perspective = perspective
        self.refused = refused
        self.shapes = shapes
        self.found: dict[tuple[str, str], tuple[object, ...]] = {}
        #: key -> a place with that key, and the surface to read it through
        self.through: dict[tuple[object, ...], tuple[str, str | None]] = {}

    def __call__(self, surface: str, dataset: str) -> tuple[object, ...]:
        place = (surface, dataset)
        key = self.found.get(place)
        if key is None:
            through = None if surface in self.refused else surface
            key = self.found[place] = self.perspective.place_key(self.shapes[dataset], through)
            self.through.setdefault(key, (dataset, through))
        return key


class _Views:
    """One persona's :class:`Seen` of each place, computed once per place key."""

    def __init__(self, perspective: Perspective, keys: _PlaceKeys) -> None:
        self.perspective = perspective
        self.keys = keys
        self.seen: dict[tuple[object, ...], Seen] = {}

    def __call__(self, surface: str, dataset: str) -> Seen:
        key = self.keys.found.get((surface, dataset)) or self.keys(surface, dataset)
        found = self.seen.get(key)
        if found is None:
            d, through = self.keys.through[key]
            found = self.seen[key] = self.perspective.seen(d, through, self.keys.shapes[d], key)
        return found


_View = Callable[[str, str], Seen]


def _row_divergences(
    persona: str, root: str, places: list[tuple[str, str]], view: _View
) -> Iterator[Divergence]:
    """Rows: each place whose row set strictly covers another's, against a minimal one.
    Places are grouped by their row set first, so only distinct row sets are compared."""
    first_with: dict[RowSet, tuple[str, str]] = {}
    for place in places:
        first_with.setdefault(view(*place).rows, place)
    distinct = list(first_with)
    strictest: dict[RowSet, RowSet] = {}
    for ra in distinct:
        best: RowSet | None = None
        for rb in distinct:
            below = ra.covers(rb) and rb.covers(ra) is False
            if below and (best is None or (best.covers(rb) and rb.covers(best) is False)):
                best = rb
        if best is not None:
            strictest[ra] = best
    # row by row against aggregates, neither covering the other (the order of dispositions:
    # incomparable): the place answered row by row gives away what the other keeps
    apart: dict[RowSet, RowSet] = {}
    for ra in distinct:
        if ra in strictest or ra.aggregated:
            continue
        for rb in distinct:
            if rb.aggregated and ra.covers(rb) is False and rb.covers(ra) is False:
                apart[ra] = rb
                break
    for a in places:
        va = view(*a)
        other = strictest.get(va.rows) or apart.get(va.rows)
        if other is None:
            continue
        b = first_with[other]
        vb = view(*b)
        tail = "; neither answers less than the other" if va.rows in apart else ""
        yield Divergence(
            persona,
            ("dataset", root),
            Reach(*a),
            Reach(*b),
            "rows",
            f"{a[0]} shows {_describe_rows(va.rows, va.row_disposition)} of {a[1]}; {b[0]} "
            f"shows {_describe_rows(vb.rows, vb.row_disposition)} of {b[1]}{tail}",
        )


def _column_divergences(
    persona: str,
    root: str,
    places: list[tuple[str, str]],
    view: _View,
    shapes: dict[str, Shape],
) -> Iterator[Divergence]:
    """Same-named columns of a replica group: each place more open than the strictest."""
    by_column: dict[str, list[tuple[tuple[str, str], str, Disposition]]] = {}
    for place in places:
        for name, disposition in zip(shapes[place[1]].columns, view(*place).columns, strict=True):
            # a column of no row exposes no value: the row aspect reports that place
            if disposition != "denied":
                by_column.setdefault(name.lower(), []).append((place, name, disposition))
    for entries in by_column.values():
        ordered = sorted(entries, key=lambda e: _openness(e[2]))
        for a, name_a, disp_a in entries:
            b, name_b, disp_b = next(
                (e for e in ordered if _looser_or_apart(disp_a, e[2])), (a, name_a, disp_a)
            )
            if b is not a:
                yield Divergence(
                    persona,
                    ("dataset", root),
                    Reach(a[0], a[1], name_a),
                    Reach(b[0], b[1], name_b),
                    "column",
                    f"{a[1]}.{name_a} is {disp_a} on {a[0]} but "
                    f"{b[1]}.{name_b} is {disp_b} on {b[0]}",
                )


#: how an identifier's *value* is exposed where the persona reaches rows: in the clear, masked
#: (a digest or a redaction: neither gives the value), only in aggregates, or not at all
#: (hidden by a projection policy); compared by the order of dispositions
_EXPOSURE = frozenset({"clear", "ungoverned", "masked", "aggregated", "hidden"})


def _domain_divergences(
    persona: str,
    domain: str,
    places3: list[tuple[str, str, str]],
    shown: list[Disposition],
    root_of: dict[str, str],
) -> Iterator[Divergence]:
    """An identifier domain: datasets that share it hold the same *kind* of identifier, not
    the same rows. What is compared is how the identifier value is exposed (clear or masked)
    on each surface, for the rows the persona reaches there: a place where the persona
    reaches no row exposes no value and is not compared (being denied a row of one dataset
    and seeing a masked identifier in another is no divergence), nor are two places of one
    surface (a surface is not looser than itself) or of one replica group (compared column
    by column above). Each place is compared with the strictest place of another surface
    and another group.

    ``places3``: every (surface, dataset, column) of the domain; ``shown``: the persona's
    disposition of each."""
    places: list[tuple[tuple[str, str, str], Disposition, tuple[int, int]]] = []
    for place, disposition in zip(places3, shown, strict=True):
        if disposition in _EXPOSURE:
            places.append((place, disposition, _openness(disposition)))
    # the strictest places per (replica group, surface) (several when incomparable),
    # strictest first
    strictest: dict[
        tuple[str, str], list[tuple[tuple[int, int], tuple[str, str, str], Disposition]]
    ]
    strictest = {}
    for place, disposition, rank in places:
        key = (root_of[place[1]], place[0])
        kept = strictest.setdefault(key, [])
        if any(compare(disposition, d, "column") in ("looser", "same") for _, _, d in kept):
            continue
        kept[:] = [k for k in kept if compare(k[2], disposition, "column") != "looser"]
        kept.append((rank, place, disposition))
    ordered = sorted(
        ((key, k) for key, kept in strictest.items() for k in kept),
        key=lambda kv: (kv[1][0], kv[0]),
    )
    for a3, disp_a, _ in places:
        group, surface = root_of[a3[1]], a3[0]
        for (other_group, other_surface), (_, b3, disp_b) in ordered:
            if not _looser_or_apart(disp_a, disp_b):
                continue
            if other_group == group or other_surface == surface:
                continue
            yield Divergence(
                persona,
                ("identifier", domain),
                Reach(*a3),
                Reach(*b3),
                "column",
                f"{domain} identifiers are {disp_a} in {a3[1]}.{a3[2]} on {a3[0]} "
                f"but {disp_b} in {b3[1]}.{b3[2]} on {b3[0]}",
            )
            break
