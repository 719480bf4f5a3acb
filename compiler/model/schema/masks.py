"""``masks``: column masks (hash, redact, nullify, partial) and who sees the clear value."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from accord.compiler.core.platforms import CatalogPlatform
from accord.compiler.model.salts import salt_ref_problem
from accord.compiler.model.schema.base import (
    IGNORE_DESCRIPTION,
    Ignore,
    Name,
    Strict,
    Text,
    empty_list,
)


def _salt_ref(value: str) -> str:
    # the grammar is the one placeholders are rendered and read back with (compiler/model/salts.py):
    # no quote, brace, semicolon, space or line break can reach compiled SQL through it
    problem = salt_ref_problem(value)
    if problem:
        raise ValueError(problem)
    return value


SaltRef = Annotated[str, AfterValidator(_salt_ref)]


Strategy = Literal["hash", "redact", "nullify", "partial"]


class Mask(Strict):
    """A column mask.

    ```yaml
    masks:
      subject_pseudonym:
        strategy: hash                   # hash | redact | nullify | partial
        unmasked_for: [clinical_unblinded]
        salt:                            # hash only: one secret reference per platform
          snowflake: env:SUBJECT_SALT_SNOWFLAKE
          databricks: env:SUBJECT_SALT_DATABRICKS
      free_text:
        strategy: redact
        replacement: "[redacted]"        # redact only; default '***'
        unmasked_for: [clinical_unblinded]
      phone:
        strategy: partial
        keep_last: 4                     # partial only
    ```

    - `hash`: deterministic SHA-256 of the value concatenated with the platform's salt, as a
      lower-case hex string; NULL stays NULL.
    - `redact`: the replacement string. `nullify`: NULL. `partial`: every character but the
      last `keep_last` replaced by `*`; a value no longer than `keep_last` is shown whole
      (ACC206 compares it with the declared length of each column).
    - `hash`, `redact` and `partial` apply to string columns only; `nullify` to any type.
    - A salt reference is `env:NAME` (read from the environment when SQL is applied) or
      `file:PATH`. The salt value itself never appears in any file accord writes. Each
      platform needs its own salt (ACC202), or masked identifiers join across platforms.
    - `unmasked_for`: principals who see the clear value; everyone else sees the mask."""

    strategy: Strategy = Field(description="hash | redact | nullify | partial")
    unmasked_for: list[Name] = Field(
        default_factory=empty_list, description="principals who see the clear value"
    )
    salt: dict[CatalogPlatform, SaltRef] | None = Field(
        None, description="hash only: one secret reference per platform"
    )
    replacement: Text | None = Field(None, description="redact only; default '***'")
    keep_last: int | None = Field(None, ge=0, le=1000, description="partial only")
    ignore: Ignore = Field(default_factory=dict, description=IGNORE_DESCRIPTION)

    @model_validator(mode="after")
    def _options_fit_strategy(self) -> Mask:
        if self.salt is not None and self.strategy != "hash":
            raise ValueError(f"'salt' applies to strategy hash only, not {self.strategy}")
        if self.replacement is not None and self.strategy != "redact":
            raise ValueError(f"'replacement' applies to strategy redact only, not {self.strategy}")
        if self.keep_last is not None and self.strategy != "partial":
            raise ValueError(f"'keep_last' applies to strategy partial only, not {self.strategy}")
        if self.strategy == "partial" and self.keep_last is None:
            raise ValueError("strategy partial needs 'keep_last'")
        return self

    @property
    def redaction(self) -> str:
        return "***" if self.replacement is None else self.replacement

    @property
    def kept_characters(self) -> int:
        """How many characters of a value the mask shows in the clear, at most: a ``partial``
        mask's ``keep_last`` (every character but those is replaced by ``*``); none for the
        other strategies, which show no character of the value."""
        return (self.keep_last or 0) if self.strategy == "partial" else 0
