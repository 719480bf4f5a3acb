"""``accord diff``: what a change of the model changes in who sees what.

Both models are read through :mod:`compiler.meaning.semantics` (one :class:`~compiler.meaning.semantics.
Perspective` per persona and model, the same views ``accord analyze`` tabulates and
``accord lint``/``accord verify`` rely on); nothing here decides what a persona may see. For
every persona, every dataset of a governed replica group (the replicas side by side), every
governed or identifier column of the group, and every *place* the dataset is read -- each
surface that reads it, and the dataset's own platform queried directly -- the disposition
before and after is compared, and only what changed is listed.

Dispositions, from least to most exposed (the order that defines a *widening*):

* rows: ``empty`` < ``denied`` < ``filtered`` < ``clear`` < ``ungoverned``;
* columns: ``empty`` < ``denied`` < ``masked`` < ``clear`` < ``ungoverned``.

``empty``: the place does not read the dataset (a surface that does not list it in
``reads``, or a persona the model does not declare). ``ungoverned`` is above ``clear``: the
same values are shown, but no policy stands between the persona and them any more. A
dataset missing from one model is ``ungoverned`` when queried directly on its platform (its
table carries no accord policy) and ``empty`` on every surface. A dataset moved to another
table (or platform) leaves the table the base named in place with no policy: what each
persona saw of it directly becomes ``ungoverned``, a widening caused by the head's ``table``.

Within ``filtered`` rows of one entitlement dimension, entitlement values gained are a
widening and values lost a narrowing (a change may give both: two entries). A row set a
hand-written predicate decides is resolved by executing the predicate (see
:func:`~compiler.exposure.predicates.resolve_expressions`); when it cannot be compared
with the other side (a predicate over no entitlement dimension, or a filter moved to another
dimension) the change is listed as a widening: accord never reports "no change" for what it could not compare.

Within ``masked``, what the masked value reveals: ``nullify`` = ``redact`` (nothing) <
``hash`` with a salt on the column's platform (equality: rows can be counted, grouped and
joined within the platform) < ``hash`` without one (the digest is the same on every platform
and a dictionary reverses it) < ``partial`` (characters of the value; more kept is more).
Masks that reveal the same (``nullify`` <-> ``redact``, another redaction text) are no change
in exposure.

Each change names where the head model causes it: the first input of the cell that differs
between the models (the surface's reads and enforcement, the persona's principals, the
dataset's row filter, the entitlement grants and the mask's ``unmasked_for`` of the
persona's principals, the mask's strategy, the column's mask), located with the same source
map as lint findings; a removed entry is located at its nearest surviving parent.

The package, in the order it builds on itself: :mod:`~compiler.exposure.changes` (the values:
a cell, a change, its cause, the diff), :mod:`~compiler.exposure.cells` (each model's cells,
from semantics), :mod:`~compiler.exposure.causes` (where the head causes a change),
:mod:`~compiler.exposure.compare` (two cells compared), :mod:`~compiler.exposure.predicates`
(hand-written predicates executed), :mod:`~compiler.exposure.divergence` and
:mod:`~compiler.exposure.probes` (ACC403 and ACC404 before and after),
:mod:`~compiler.exposure.diff` (the walk over both models) and
:mod:`~compiler.exposure.report` (text, markdown, JSON, GitHub annotations). What ``accord
diff`` calls is exported here.
"""

from __future__ import annotations

from accord.compiler.core.annotations import annotation
from accord.compiler.exposure.changes import ExposureDiff
from accord.compiler.exposure.diff import exposure_diff
from accord.compiler.exposure.report import (
    diagram,
    places_of,
    to_github,
    to_json,
    to_markdown,
    to_text,
    verdict,
)

__all__ = [
    "ExposureDiff",
    "annotation",
    "diagram",
    "exposure_diff",
    "places_of",
    "to_github",
    "to_json",
    "to_markdown",
    "to_text",
    "verdict",
]
