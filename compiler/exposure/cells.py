"""The cells of one model, read from :mod:`compiler.meaning.semantics`: persona x dataset x
(rows, columns) x place, each as a :class:`~compiler.exposure.changes.Cell`.

Nothing here decides what a persona may see: one memoised
:class:`~compiler.meaning.semantics.Perspective` per persona gives the views, and this module
only turns them into comparable cells (entitlement values, the mask's strategy and salt, a
hand-written predicate's inputs).
"""

from __future__ import annotations

import json
from typing import Any

from accord.compiler.exposure.changes import PLAIN, Cell
from accord.compiler.meaning import semantics
from accord.compiler.meaning.divergence import reaches
from accord.compiler.model.grants import dumped
from accord.compiler.model.identities import identity_subject
from accord.compiler.model.schema import PolicyModel

#: subject (a persona, or an identity: compiler.model.identities.subject), dataset, folded column
#: or None, place
Key = tuple[str, str, str | None, str | None]


class Cells:
    """Every cell of one model: subject (a persona or a platform identity) x dataset x (rows,
    columns) x place."""

    def __init__(self, model: PolicyModel, datasets: list[str], also: dict[str, list[str]]):
        self.model = model
        self.datasets = datasets
        self.also = also
        self.places = readers(model)
        self._reads = {d: set(v) for d, v in self.places.items()}
        self._extras: dict[str, list[str]] = {}
        self.grants = json.dumps(dumped(model), sort_keys=True)
        self._column_cells: dict[tuple[str, str | None, str], Cell] = {}
        self._views: dict[tuple[object, ...], dict[str | None, Cell]] = {}
        self._alike: dict[tuple[str, str | None], tuple[object, ...]] = {}
        self._shared: dict[tuple[str, ...], object] = {}
        self.perspectives: dict[str, semantics.Perspective | None] = {}

    def perspective(self, subject: str) -> semantics.Perspective | None:
        """The subject's perspective: None for a persona this model does not declare (an
        identity is one in every model: what it holds there)."""
        if subject not in self.perspectives:
            known = subject in self.model.personas or identity_subject(subject) is not None
            self.perspectives[subject] = (
                semantics.Perspective(self.model, subject, self._shared) if known else None
            )
        return self.perspectives[subject]

    def at(self, persona: str, dataset: str, place: str | None) -> dict[str | None, Cell] | None:
        """The cells of one view: None (the rows) and each folded column name to its state;
        None when this model has no such view (persona or dataset not declared, or a
        surface that does not read the dataset)."""
        persp = self.perspective(persona)
        ds = self.model.datasets.get(dataset)
        if persp is None or ds is None or (place is not None and place not in self._reads[dataset]):
            return None
        # the cells are a function of the persona and of what the view depends on
        # (semantics.shape_key: the platform, the row filter's entitlement, each column's
        # mask; the surface's mode), the column names, and a hand-written predicate's text:
        # datasets governed alike share one answer per persona (the returned dict is shared:
        # callers only read it). That part of the key is the same for every persona.
        alike = self._alike.get((dataset, place))
        if alike is None:
            shape = persp.shape(dataset, self._extra(dataset, ds))
            rf = ds.row_filter
            text = (rf.expression or {}).get(ds.platform) if rf is not None else None
            alike = self._alike[(dataset, place)] = (
                persp.place_key(shape, place),
                shape.columns,
                text,
            )
        key = (persona, alike)
        found = self._views.get(key)
        if found is None:
            view = persp.view(dataset, place, self._extra(dataset, ds))
            found = {None: self._row_cell(view, ds)}
            for cv in view.columns:
                found[cv.column.lower()] = self._column_cell(cv, ds)
            self._views[key] = found
        return found

    def _extra(self, dataset: str, ds: Any) -> list[str]:
        """The columns of ``also`` the dataset does not govern itself (most have none)."""
        found = self._extras.get(dataset)
        if found is None:
            own = {c.lower() for c in semantics.governed_columns(ds)}
            found = self._extras[dataset] = [
                c for c in self.also.get(dataset, []) if c.lower() not in own
            ]
        return found

    def _row_cell(self, view: semantics.DatasetView, ds: Any) -> Cell:
        disp = view.row_disposition
        if disp == "aggregated":
            rows = view.rows
            return Cell(
                disp,
                values=rows.values,
                dimension=rows.dimension,
                until=rows.until,
                group_size=rows.aggregated,
            )
        if disp != "filtered":
            return PLAIN[disp]
        if view.rows.expression:
            # what the predicate may read: its text, the persona's identities on the
            # platform and the grants (the mapping tables); unresolved, a change of any of
            # them is a change of the rows it admits
            rf = ds.row_filter
            text = (rf.expression or {}).get(ds.platform, "") if rf is not None else ""
            held = sorted(
                str(self.model.principals[p].identity(ds.platform))
                for p in semantics.principals_on(self.model, view.persona, ds.platform)
            )
            return Cell(disp, predicate=json.dumps([text, held, self.grants]))
        return Cell(
            disp, values=view.rows.values, dimension=view.rows.dimension, until=view.rows.until
        )

    def _column_cell(self, cv: semantics.ColumnView, ds: Any) -> Cell:
        key = (cv.disposition, cv.mask if cv.disposition == "masked" else None, ds.platform)
        found = self._column_cells.get(key)
        if found is None:
            if cv.disposition != "masked" or cv.mask is None:
                found = Cell(cv.disposition)
            else:
                mask = self.model.masks[cv.mask]
                found = Cell(
                    "masked",
                    strategy=mask.strategy,
                    salted=bool((mask.salt or {}).get(ds.platform)),  # type: ignore[call-overload]
                    keep_last=mask.keep_last or 0,
                )
            self._column_cells[key] = found
        return found


def _groups(model: PolicyModel) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in sorted(model.datasets):
        out.setdefault(model.replica_root(d), []).append(d)
    return out


def columns_shown(
    base: PolicyModel, head: PolicyModel, datasets: list[str]
) -> dict[str, list[str]]:
    """Per dataset, the columns its replica group governs in either model (a replica that
    lost its mask must still show the column)."""
    union: dict[str, dict[str, str]] = {}
    for model in (base, head):
        for members in _groups(model).values():
            cols: dict[str, str] = {}
            for d in members:
                for c in semantics.governed_columns(model.datasets[d]):
                    cols.setdefault(c.lower(), c)
            for d in members:
                mine = union.setdefault(d, {})
                gone = {c.lower() for c in model.datasets[d].omits}  # the table lacks them
                for k, v in cols.items():
                    if k not in gone:
                        mine.setdefault(k, v)
    return {d: sorted(union.get(d, {}).values(), key=str.lower) for d in datasets}


def readers(model: PolicyModel) -> dict[str, list[str]]:
    """Per dataset, the surfaces that read it (:func:`compiler.meaning.divergence.reaches`)."""
    return {d: list(dict.fromkeys(s for s, _ in r)) for d, r in reaches(model).items()}
