"""What the executed parts answer, per dataset, persona and generated row.

Each part of a dataset is evaluated in a group (:class:`compiler.verify.execute.Use`): the
group's answers, indexed by the row's input code, are what the compiled SQL shows.
:class:`Answers` reads them for the comparison (the rows shown, a cell's value, the ABAC
conflicts); :class:`Results` assembles them, when asked, into per-row records for the probes
and ``accord diff``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from accord.compiler.verify.execute import Use

    #: dataset -> (where its row part is evaluated, where each column's part is)
    Uses = dict[str, tuple[Use, dict[str, Use]]]

#: a persona with no principal at all: used to compare identifier digests across platforms
NOBODY = "accord:nobody"


class Answers:
    """The answers of the evaluated datasets (``uses``: filled as they are evaluated)."""

    def __init__(self, uses: Uses) -> None:
        self.uses = uses
        self._memo: dict[tuple[Any, ...], tuple[int, ...]] = {}

    def shown(self, dataset: str, persona: str) -> tuple[int, ...]:
        """The rows of ``dataset`` the compiled SQL shows ``persona``."""
        use = self.uses[dataset][0]
        key = ("shown", use.group.id, id(use.codes), persona)
        found = self._memo.get(key)
        if found is None:
            answers = use.group.answers[persona]
            found = self._memo[key] = tuple(
                r for r, code in enumerate(use.codes) if bool(answers[code])
            )
        return found

    def value(self, dataset: str, persona: str, row: int, column: str) -> Any:
        """What ``column`` of generated row ``row`` shows ``persona``."""
        use = self.uses[dataset][1][column]
        return use.group.answers[persona][use.codes[row]]

    def conflicts(self, dataset: str, persona: str) -> list[str]:
        """Where more than one ABAC policy applies to ``persona`` in some row of ``dataset``:
        ``"rows"`` and the columns, sorted."""
        row_use, column_uses = self.uses[dataset]
        out = []
        for what, use in [("rows", row_use), *column_uses.items()]:
            flagged = use.group.conflicts.get(persona)
            if flagged and not flagged.isdisjoint(use.codes):
                out.append(what)
        return sorted(out)


class Values:
    """One result row's column values, looked up by column name."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: dict[str, int], values: tuple[Any, ...]) -> None:
        self._index = index
        self._values = values

    def __getitem__(self, name: str) -> Any:
        return self._values[self._index[name]]


class Results(Mapping[str, Mapping[str, dict[int, tuple[bool, Values]]]]):
    """dataset -> persona -> row -> (visible, values by column), for the datasets evaluated,
    assembled from the groups' answers when asked for (probes, ``accord diff``).
    ``personas``: the model's, without :data:`NOBODY`."""

    def __init__(self, uses: Uses, personas: list[str]) -> None:
        self._uses = uses
        self._personas = sorted([*personas, NOBODY])

    def __getitem__(self, dataset: str) -> Mapping[str, dict[int, tuple[bool, Values]]]:
        if dataset not in self._uses:
            raise KeyError(dataset)
        return DatasetResults(self._uses, dataset, self._personas)

    def __iter__(self) -> Iterator[str]:
        return iter(self._uses)

    def __len__(self) -> int:
        return len(self._uses)


class DatasetResults(Mapping[str, dict[int, tuple[bool, Values]]]):
    def __init__(self, uses: Uses, dataset: str, personas: list[str]) -> None:
        self._uses = uses
        self._dataset = dataset
        self._personas = personas

    def __getitem__(self, persona: str) -> dict[int, tuple[bool, Values]]:
        if persona not in self._personas:
            raise KeyError(persona)
        row_use, column_uses = self._uses[self._dataset]
        visible = row_use.group.answers[persona]
        names = list(column_uses)
        index = {name: i for i, name in enumerate(names)}
        answers = [(u.codes, u.group.answers[persona]) for u in column_uses.values()]
        return {
            r: (
                bool(visible[code]),
                Values(index, tuple(got[codes[r]] for codes, got in answers)),
            )
            for r, code in enumerate(row_use.codes)
        }

    def __iter__(self) -> Iterator[str]:
        return iter(self._personas)

    def __len__(self) -> int:
        return len(self._personas)
