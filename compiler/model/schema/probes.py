"""``probes``: the governance team's expected answer, per surface, to one question of one
persona."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_serializer

from accord.compiler.model.schema.base import ColumnName, Name, Strict, Text
from accord.compiler.model.schema.entitlements import EntitlementValue

#: what a surface answers of a probe's fact: the dispositions of ``accord analyze`` and
#: ``empty`` (the surface returns no rows although nothing withholds them: a runtime too old
#: to apply the policies, ACC401)
ProbeDisposition = Literal[
    "clear", "masked", "filtered", "denied", "ungoverned", "empty", "hidden", "aggregated"
]


class ProbeControl(Strict):
    """A positive control: a query the probe's persona is expected to see rows of, run in the
    same live session before a deny-expecting probe's question (accord probe --live)."""

    dataset: Name | None = Field(
        None,
        description="the dataset to read (default: the probe's; a replica on the probed "
        "platform stands in for it there)",
    )
    where: Annotated[dict[Name, EntitlementValue], Field(min_length=1, max_length=1)] | None = (
        Field(None, description="the rows of one entitlement value the persona is granted")
    )


class Probe(Strict):
    """The governance team's expected answer, per surface, to one question of one persona.

    ```yaml
    probes:
      cro_cannot_unmask_cns_subjects:
        owner: data-governance            # required: who is told when it fails
        persona: cro_collaborator
        dataset: assay_results            # the fact: this dataset and its replicas
        where: {programme: CNS-204}       # optional: the rows of one entitlement value
        column: SUBJECT_ID                # optional: one column
        expect:                           # every surface that reaches the fact, and no other
          warehouse_agent: masked         # clear | masked | filtered | denied | ungoverned | empty
          lakehouse_agent: masked
          variant_annotation: denied
    ```

    Checked against the model (ACC404), the compiled SQL (`accord verify`) and the live
    platforms (`accord probe --live`). A surface *reaches* the fact when it reads the dataset
    or one of its replicas, or, for a column with an identifier domain, a dataset whose column
    carries the same domain. A surface that reaches the fact without an `expect` entry is
    ACC404; an entry for a surface that does not reach it, or a `where` naming a dimension
    the dataset is not filtered by, is a validation error. On a dataset filtered by several
    dimensions, `where` may name one value of each of several of them
    (`where: {region: EU, business_line: RETAIL}`: the rows that hold both). For rows,
    `denied` means the persona sees none of the rows the probe names, `filtered` that it sees
    some."""

    owner: Annotated[Text, Field(min_length=1)] = Field(
        description="who is told when the probe fails: a team or a person"
    )
    persona: Name = Field(description="a persona from `personas`")
    dataset: Name = Field(description="the fact: this dataset and its replicas")
    where: Annotated[dict[Name, EntitlementValue], Field(min_length=1)] | None = Field(
        None,
        description="the rows of one entitlement value: {dimension: value}; on a dataset "
        "filtered by several dimensions, one value of each of several of them (the rows that "
        "hold every named value)",
    )
    column: ColumnName | None = Field(
        None, description="one column (with an identifier domain: every column of the domain)"
    )
    expect: dict[Name, ProbeDisposition] = Field(
        description="one expected disposition per surface that reaches the fact, and no other"
    )
    question: Annotated[Text, Field(min_length=1)] | None = Field(
        None, description="the question sent to A2A surfaces (default: generated)"
    )
    canary: Annotated[Text, Field(min_length=1)] | None = Field(
        None,
        description="clear value of `column` in a canary row of the `where` value, kept in the "
        "estate so live answers can be told clear from masked",
    )
    control: ProbeControl | None = Field(
        None,
        description="the positive control of a deny-expecting probe (accord probe --live; "
        "default: the probe's fact with a `where` value the persona is granted)",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> Any:
        # no ``control`` is not written: a model's dump (its fingerprint, which plans record)
        # is what it was before the key existed
        data = handler(self)
        if isinstance(data, dict) and self.control is None:
            data.pop("control", None)
        return data
