"""ACC206: what a mask reveals of the columns it masks, judged against their declared types."""

from __future__ import annotations

from collections.abc import Iterator

from accord.compiler.lint.checks import Context, rule
from accord.compiler.lint.finding import Finding
from accord.compiler.model.types import declared_length


@rule("ACC206")
def mask_reveals(ctx: Context) -> Iterator[Finding]:
    """A mask shows the whole value of a column, or more than half of it.

    ## What it does
    Compares, for every column a `partial` mask masks, the characters the mask keeps
    (`keep_last`) with the length the column's declared type allows (`VARCHAR(34)`,
    `CHAR(2)`). It reports an error when the kept characters reach the declared length: every
    value the column can hold is shown whole. It reports a warning when they are more than
    half of the declared length. A mask used by columns of different lengths is judged column
    by column, at each column's `mask:`.

    A column whose type is written without a length (`VARCHAR`, `STRING`) gets no ACC206:
    nothing in the model says how long its values are. A column a replica inherits is judged
    where its source declares it.

    ## Why is this bad?
    `partial` replaces every character but the last `keep_last` with `*`, and keeps a value
    that is no longer than `keep_last` as it is. On a column no longer than that, the masked
    value is the clear value for every row: everyone outside `unmasked_for` sees what the mask
    was written to withhold, and every report of the model (`accord analyze`, probes) still
    says `masked`. Past half the length, most of each value is shown, and what is left is
    often guessable.

    ## Example
    ```yaml
    masks:
      account_tail:
        strategy: partial
        keep_last: 40
    datasets:
      accounts:
        columns:
          IBAN: {type: VARCHAR(34), mask: account_tail}   # 40 >= 34: the clear IBAN
    ```

    ## How to fix
    Keep fewer characters (at most half of the shortest column the mask is used on), or
    give the column a mask of another strategy (`hash`, `redact`, `nullify`).
    """
    m = ctx.model
    for name in sorted(m.datasets):
        ds = m.datasets[name]
        for col, spec in ds.columns.items():
            if spec.mask is None or col in ds.inherited or spec.mask not in m.masks:
                continue
            kept = m.masks[spec.mask].kept_characters
            length = declared_length(spec.type, ds.platform)
            if length is None or kept * 2 <= length:
                continue
            whole = kept >= length
            shown = (
                "every value is shown whole"
                if whole
                else f"more than half of a full-length value is shown ({kept} of {length})"
            )
            yield Finding(
                ctx.project.loc("datasets", name, "columns", col, "mask"),
                "ACC206",
                f"datasets.{name}",
                f"mask {spec.mask} keeps the last {kept} characters, and {name}.{col} is "
                f"{spec.type} (at most {length} characters): {shown}",
                f"keep at most {length // 2} characters (keep_last) in mask {spec.mask}, or "
                f"mask {col} with another strategy",
                level="" if whole else "warning",
            )
