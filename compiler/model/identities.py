"""Platform identities: what the platforms check, and the principals each one holds.

A principal's ``snowflake`` and ``databricks`` values are platform identities: a Snowflake role
(with every role granted to it) and a Databricks account group (with its nesting). The platforms
never see a principal or a persona: two principals with the same identity are one identity
there (what the model grants one, the platform gives the other), and whatever is granted to an
*everyone* identity (Snowflake ``PUBLIC``; Databricks ``account users`` and the workspace
``users`` group: :mod:`compiler.core.platforms`) every identity has, named in the model or not.

So the principals whose grants an identity receives on its platform (:func:`holders`) are the
principals that name it, the principals that name an everyone identity, and everything they
inherit (``principals.*.inherits``: :func:`compiler.model.hierarchy.effective`). A persona is a
named set of identities: those of its principals and of what they inherit, and the everyone
identities of every platform (:func:`persona_identities`); it sees what the principals of all of
them hold (:func:`persona_principals`). An identity no persona holds is judged all the same
(:func:`unheld`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accord.compiler.core.memo import IdentityMemo
from accord.compiler.core.platforms import FACTS, facts
from accord.compiler.model.hierarchy import effective
from accord.compiler.model.schema import PolicyModel


@dataclass(frozen=True, order=True)
class Identity:
    """One identity on one platform: ``key`` as the platform compares it (folded), ``name``
    as the model first writes it (or the everyone identity's own spelling)."""

    platform: str
    key: str
    name: str

    @property
    def everyone(self) -> bool:
        return self.key == ANY or facts(self.platform).is_everyone(self.name)

    def to_json(self) -> dict[str, str]:
        return {"platform": self.platform, "name": self.name}

    def __str__(self) -> str:
        if self.key == ANY:
            return (
                f"any caller of a {self.platform} surface"
                if self.platform in FACTS
                else ("any caller")
            )
        kind = facts(self.platform).principal_kind
        return f"{facts(self.platform).title} {kind} {self.name}"


#: the key of :func:`any_caller`
ANY = "*"


def any_caller(platform: str) -> Identity:
    """Whoever calls a surface that answers every caller alike (a service identity, no
    catalog, a runtime that returns nothing): its answer is no identity's own."""
    return Identity(platform, ANY, "any caller")


#: a subject of exposure that is an identity is written ``platform:name`` (a persona's name
#: never holds a colon)
SEPARATOR = ":"


def subject(identity: Identity) -> str:
    """``identity`` as a subject of exposure, beside the personas' names."""
    return f"{identity.platform}{SEPARATOR}{identity.name}"


def identity_subject(subject: str) -> Identity | None:
    """The identity a subject names (None: the subject is a persona). An identity the model
    does not name is an identity all the same: it holds what every identity holds."""
    platform, sep, name = subject.partition(SEPARATOR)
    if not sep or platform not in FACTS:
        return None
    return Identity(platform, facts(platform).fold_identity(name), name)


def identity_of(model: PolicyModel, principal: str, platform: str) -> Identity | None:
    """The identity ``principal`` names on ``platform``, or None."""
    p = model.principals.get(principal)
    name = p.identity(platform) if p is not None else None
    if not name:
        return None
    return _table(model, platform)["by_key"][facts(platform).fold_identity(str(name))]


def identities(model: PolicyModel, platform: str) -> list[Identity]:
    """Every identity a principal names on ``platform``, by key."""
    return list(_table(model, platform)["by_key"].values())


def aliases(model: PolicyModel, identity: Identity) -> list[str]:
    """The principals that name ``identity``, in the model's order (none when the model does
    not name it)."""
    return list(_table(model, identity.platform)["aliases"].get(identity.key, ()))


def everyone_principals(model: PolicyModel, platform: str) -> list[str]:
    """The principals whose identity on ``platform`` is an everyone identity."""
    return list(_table(model, platform)["everyone"])


def holders(model: PolicyModel, identity: Identity) -> list[str]:
    """The principals whose grants ``identity`` receives on its platform: those that name it,
    those that name an everyone identity, and what they inherit there."""
    memo = _memo(model)
    key = ("holders", identity.platform, identity.key)
    found = memo.get(key)
    if found is None:
        named = [*aliases(model, identity), *everyone_principals(model, identity.platform)]
        found = memo[key] = effective(model, list(dict.fromkeys(named)), identity.platform)
    return list(found)


def persona_identities(model: PolicyModel, persona: str, platform: str) -> list[Identity]:
    """The identities ``persona`` holds on ``platform``: those of its principals and of what
    they inherit there, then every everyone identity a principal names there (every user of
    the platform holds them)."""
    out: dict[Identity, None] = {}
    for p in effective(model, list(model.personas[persona]), platform):
        found = identity_of(model, p, platform)
        if found is not None:
            out[found] = None
    for p in everyone_principals(model, platform):
        found = identity_of(model, p, platform)
        if found is not None:
            out[found] = None
    return list(out)


def persona_principals(model: PolicyModel, persona: str, platform: str) -> list[str]:
    """The principals whose grants ``persona`` receives on ``platform``: its own and what
    they inherit (first, in order), then those of every identity it holds."""
    memo = _memo(model)
    key = ("persona", persona, platform)
    found = memo.get(key)
    if found is None:
        own = effective(model, list(model.personas[persona]), platform)
        more = [p for i in persona_identities(model, persona, platform) for p in holders(model, i)]
        found = memo[key] = list(dict.fromkeys([*own, *more]))
    return list(found)


def personas_holding(model: PolicyModel, identity: Identity) -> list[str]:
    """The personas that hold ``identity`` as their own, sorted: those that list a principal
    naming it (a session of theirs is that role, a user of theirs is in that group), and for
    an everyone identity every persona. One held only through the hierarchy is not theirs:
    what it sees alone is not what they see."""
    if identity.everyone:
        return sorted(model.personas)
    named = set(aliases(model, identity))
    return sorted(p for p, listed in model.personas.items() if named & set(listed))


def unheld(model: PolicyModel, platform: str) -> list[Identity]:
    """The identities on ``platform`` that no persona holds as its own."""
    return [i for i in identities(model, platform) if not personas_holding(model, i)]


def subjects(model: PolicyModel) -> list[str]:
    """Whose exposure a model is judged for: every persona, then every identity a principal
    names that no persona holds (:func:`unheld`), by platform."""
    out = sorted(model.personas)
    for platform in model.declared_platforms():
        out += [subject(i) for i in unheld(model, platform)]
    return out


def label(subject_: str) -> str:
    """A subject in words: a persona's name, or an identity held by no declared persona."""
    identity = identity_subject(subject_)
    if identity is None:
        return subject_
    return f"{identity} (held by no declared persona)"


#: the answers of each model (frozen once validated), remembered by identity
_memo: IdentityMemo[PolicyModel, dict[Any, Any]] = IdentityMemo(lambda model: {}, limit=64)


def _table(model: PolicyModel, platform: str) -> dict[str, Any]:
    """Per platform: key -> Identity (named as first written), key -> principals naming it,
    and the principals naming an everyone identity."""
    memo = _memo(model)
    found = memo.get(("table", platform))
    if found is None:
        f = facts(platform)
        by_key: dict[str, Identity] = {}
        named: dict[str, list[str]] = {}
        for name, p in model.principals.items():
            ident = p.identity(platform)
            if not ident:
                continue
            key = f.fold_identity(str(ident))
            by_key.setdefault(key, Identity(platform, key, str(ident)))
            named.setdefault(key, []).append(name)
        everyone = [p for k, ps in named.items() if k in f.everyone for p in ps]
        found = memo[("table", platform)] = {
            "by_key": dict(sorted(by_key.items())),
            "aliases": named,
            "everyone": everyone,
        }
    return found
