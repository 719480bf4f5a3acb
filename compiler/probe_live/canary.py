"""Canaries: telling a clear answer from a masked one.

A probe's ``canary`` is the clear value of its column in a canary row of its ``where`` value,
kept in the estate for probing. An answer that contains it is ``clear``; one that contains
what the mask makes of it (the salted digest, the redaction, the partial form) is ``masked``.
A hex string is the canary's digest only when accord can recompute it: a hash mask whose salt
is not available here has no masked form accord can recognise, so an answer without the clear
value is undetermined (never ``masked``: 64 hex digits are as likely a trace id as a digest).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from accord.compiler.core import secrets
from accord.compiler.meaning.semantics import apply_mask
from accord.compiler.model.schema import PolicyModel


@dataclass(frozen=True)
class Canary:
    clear: str
    #: what the mask shows instead of ``clear`` (exact strings)
    masked: tuple[str, ...] = ()
    #: why the masked form cannot be recomputed here (a hash mask whose salt is not set): an
    #: answer without the clear value then tells nothing
    unknown_mask: str | None = None

    def classify(self, text: str) -> str | None:
        """``clear``, ``masked``, or None (neither the value nor a known mask of it appears).
        The clear value is found in any letter case (an agent may restate it), and outranks a
        masked form or a digest-shaped string beside it (a 64-hex trace id is no mask)."""
        folded = text.casefold()
        if self.clear and self.clear.casefold() in folded:
            return "clear"
        if any(m and m.casefold() in folded for m in self.masked):
            return "masked"
        return None


def _salt(ref: str | None) -> str | None:
    """An ``env:`` salt, when this process has it (file salts are for ``migrate apply``)."""
    if ref and ref.startswith("env:"):
        value = os.environ.get(ref[4:])
        secrets.register(value)
        return value
    return None


def canary_for(model: PolicyModel, dataset: str, column: str | None, value: str) -> Canary:
    """The canary of ``value`` in ``dataset.column``: its clear form and its masked forms."""
    ds = model.datasets[dataset]
    spec = None
    if column is not None:
        folded = column.lower()
        spec = next((c for n, c in ds.columns.items() if n.lower() == folded), None)
    if spec is None or spec.mask is None:
        return Canary(value)
    mask = model.masks[spec.mask]
    if mask.strategy == "hash":
        ref = (mask.salt or {}).get(ds.platform)  # type: ignore[call-overload]
        salt = _salt(ref)
        if ref and salt is None:
            why = f"the salt {ref} is not available here, so its digest cannot be recomputed"
            return Canary(value, unknown_mask=f"mask {spec.mask}: {why}")
        shown = apply_mask(mask, value, salt)  # an unsalted hash is the value's plain SHA-256
        return Canary(value, (shown,) if shown else ())
    shown = apply_mask(mask, value, None)
    return Canary(value, (shown,) if shown else ())
