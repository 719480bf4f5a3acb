"""ACC301 and ACC401-ACC403: derived objects and surfaces that expose what the policies withhold."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from accord.compiler.lint.checks import Context, rule
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.usage import has_key
from accord.compiler.meaning import semantics as sem
from accord.compiler.meaning.divergence import Divergence, divergences
from accord.compiler.model.identities import label


@rule("ACC301")
def index_over_governed_data(ctx: Context) -> Iterator[Finding]:
    """A retrieval index exposes what its source's policies withhold.

    ## What it does
    - **Cortex Search** (`kind: cortex_search`): fires when the source has a row filter or
      the index holds a masked column, unless `inherit_governance: true`.
    - **Databricks vector search** over a *table-style* governed table (`style: table`):
      fires when the source has any row filter or mask.
    - **Databricks vector search** over an *ABAC-governed* table (`style: abac`): fires when
      the source has a row filter or the index holds (`columns`) a masked column.

    ## Why is this bad?
    A Cortex Search service runs with its owner's rights: any role that may query it sees
    everything it indexed, whatever its privileges on the source table. The public-preview
    option `INHERIT_DATA_GOVERNANCE_POLICIES = TRUE` re-applies the source's policies in the
    caller's context. Databricks cannot create a vector (AI Search) index from a table that
    has table-level row filters or column masks at all; over an ABAC-governed table it builds
    one that syncs every row and enforces neither filter nor mask at query time (masked
    columns can be left out with the columns-to-sync setting).

    ## Example
    ```yaml
    indexes:
      assay_search:
        platform: snowflake
        kind: cortex_search
        source: assay_results          # row-filtered, NOTES masked
        columns: [NOTES, SUBJECT_ID]
        inherit_governance: false
    ```

    ## How to fix
    For Cortex Search, set `inherit_governance: true`. For vector search, build the index
    over an ungoverned, de-identified table; under ABAC, at least leave masked columns out of
    `columns` and index only a table without a row filter.
    """
    m = ctx.model
    style = m.platforms.databricks.style if m.platforms.databricks is not None else "table"
    for name in sorted(m.indexes):
        idx = m.indexes[name]
        src = m.datasets[idx.source]
        held = {c.lower() for c in idx.columns}
        masked_held = [c for c in src.masked_columns if c.lower() in held]
        exposed = []
        if src.row_filter is not None:
            exposed.append("every row its row filter withholds")
        if masked_held:
            exposed.append("clear values of masked " + ", ".join(masked_held))
        where = None  # located only once a finding is certain
        if idx.kind == "cortex_search":
            if idx.inherit_governance or not exposed:
                continue
            if has_key(ctx, "indexes", name, "inherit_governance"):
                where = ctx.project.loc("indexes", name, "inherit_governance")
            message = (
                f"Cortex Search service {name} answers with its owner's rights over "
                f"{idx.source}: every caller gets {' and '.join(exposed)}"
            )
            fix = "set `inherit_governance: true` (INHERIT_DATA_GOVERNANCE_POLICIES = TRUE)"
        elif style == "abac":
            if not exposed:
                continue
            message = (
                f"vector index {name} over ABAC-governed {idx.source} syncs every row and "
                f"enforces neither filter nor mask: it answers {' and '.join(exposed)}"
            )
            fix = (
                "index an ungoverned, de-identified table instead; at least leave masked "
                "columns out of `columns` and index no row-filtered table"
            )
        else:
            if not src.governed:
                continue
            message = (
                f"vector index {name} over {idx.source}, which has table-level "
                f"{'row filter' if src.row_filter else 'masks'}: Databricks cannot build an "
                "index over a table with row filters or column masks"
            )
            fix = "index an ungoverned, de-identified copy of the data instead"
        if where is None:
            where = ctx.project.key_loc("indexes", name)
        yield Finding(where, "ACC301", f"indexes.{name}", message, fix)


@rule("ACC401")
def unsupported_runtime(ctx: Context) -> Iterator[Finding]:
    """A Databricks surface reads governed data on a runtime that returns no rows for it.

    ## What it does
    Flags a Databricks surface that reads a governed dataset on a numbered `runtime` below the
    one its policies need: 12.2 for table-level filters and masks, 15.4 in `access_mode:
    dedicated`, 16.4 when the platform's `style` is `abac`. `serverless` and `sql-warehouse`
    (always current) are fine.

    ## Why is this bad?
    Runtimes too old for the policies fail *securely but silently*: reading the table returns
    no data, with no error. An agent on such a runtime confidently answers "no variant calls"
    to everyone, entitled or not, and nothing in the logs says why.

    ## Example
    ```yaml
    platforms:
      databricks: {governance_schema: governance.policies, style: abac}
    surfaces:
      lakehouse_agent:
        platform: databricks
        reads: [variant_calls]
        runtime: "14.3"
    ```

    ## How to fix
    Run the surface on a runtime that applies the policies (the finding names the version),
    or on serverless compute or a SQL warehouse.
    """
    m = ctx.model
    for name in sorted(m.surfaces):
        surface = m.surfaces[name]
        refusal = sem.runtime_refusal(m, surface)
        governed = [d for d in surface.reads if m.datasets[d].governed]
        if refusal is None or not governed:
            continue
        needed, _ = sem.required_runtime(m, surface)
        yield Finding(
            ctx.project.loc("surfaces", name, "runtime"),
            "ACC401",
            f"surfaces.{name}",
            f"{name} reads governed {', '.join(governed)}, but {refusal}, with no error",
            f'set `runtime: "{needed[0]}.{needed[1]}"` or later (or serverless / sql-warehouse)',
        )


@rule("ACC402")
def ungoverned_surface(ctx: Context) -> Iterator[Finding]:
    """A surface with no catalog, or with a service identity, reads governed data.

    ## What it does
    Flags every governed dataset in the `reads` of a surface with `platform: none` (a
    pipeline or tool server outside any catalog) or `identity: service` (one identity
    answers for everyone).

    ## Why is this bad?
    Row filters and masks are evaluated for the identity that queries the catalog. A surface
    with no catalog has nothing between its callers and the data; a surface with a service
    identity is governed for the service, not for whoever asks it. Either way every caller
    gets what the surface itself may read: the mesh answers whatever its loosest surface
    answers (ACC403 compares it with the others).

    ## Example
    ```yaml
    surfaces:
      variant_annotation:
        platform: none
        reads: [variant_calls]          # row-filtered, subject_id masked
        identity: service
    ```

    ## How to fix
    Answer such questions through a caller-identity surface on the catalog
    (`identity: caller`), or give the surface an ungoverned, de-identified dataset to read.
    """
    m = ctx.model
    for name in sorted(m.surfaces):
        surface = m.surfaces[name]
        mode = sem.enforcement(m, name).mode
        if mode not in ("none", "service"):
            continue
        why = (
            "it has no catalog (platform none): nothing applies the row filter and masks"
            if mode == "none"
            else "it runs as one service identity: the catalog applies the row filter and "
            "masks for the service, not"
        )
        for i, dataset in enumerate(surface.reads):
            if not m.datasets[dataset].governed:
                continue
            yield Finding(
                ctx.project.loc("surfaces", name, "reads", i),
                "ACC402",
                f"surfaces.{name}",
                f"{name} reads governed dataset {dataset}, but {why} for whoever asks it: "
                "every caller gets what the surface can read",
                f"read {dataset} through a surface with `identity: caller` on "
                f"{m.datasets[dataset].platform}, or give {name} an ungoverned, de-identified "
                "dataset",
            )


@rule("ACC403")
def loosest_surface(ctx: Context) -> Iterator[Finding]:
    """The same facts are less restricted on one surface than on another.

    ## What it does
    For every persona, compares what each surface answers of the same facts (a dataset and
    its `replica_of` copies; an `identifier` domain across datasets), on every surface that
    reads them, including surfaces with no catalog. Fires for each surface that shows some
    persona more rows or clearer columns than the strictest surface reading the same facts:
    one finding per (facts, loose surface), listing the personas and what differs.

    Datasets that share an identifier domain hold the same kind of identifier, not the same
    rows: for a domain, what is compared is how the identifier value is exposed (clear or
    masked) on each surface where the persona reaches rows. Being denied every row of one
    dataset while seeing a masked identifier in another is not a divergence, nor are two
    datasets read by the same surface (a surface is not looser than itself).

    Answers are compared by the order of dispositions: for a column, `clear` (and
    `ungoverned`) is looser than `masked`, which is looser than `hidden` (a Snowflake
    projection policy: the column cannot be selected); for rows, `clear` is looser than
    `filtered`, which is looser than `denied` and `empty`; `aggregated` (a Snowflake
    aggregation policy: only aggregates over groups of a least size) is looser than `denied`,
    tighter than `clear`, and incomparable with `masked` and `filtered`. Two surfaces whose
    answers are incomparable diverge too: the one that answers row by row is reported against
    the one that answers in aggregates, and the message says neither answers less.

    A surface whose runtime returns no rows (ACC401) is compared by what its catalog's
    policies intend: its failure is reported by ACC401 and is not a restriction.
    `accord analyze` reports the same divergences (one function computes them), and
    honours `ignore: {ACC403: "why"}` on the looser surface, listing those separately.

    ## Why is this bad?
    The mesh answers whatever its loosest surface answers. A persona denied a programme on the
    lakehouse agent gets it from a pipeline that reads the same table with no catalog; a
    subject id masked in the warehouse is clear in a replica. No platform sees the
    difference, because each enforces only its own policies. The per-persona meaning of the
    model is computed once, by `compiler.meaning.semantics` (also behind `accord analyze` and
    `accord verify`).

    ## Example
    ```yaml
    surfaces:
      lakehouse_agent: {platform: databricks, reads: [variant_calls], identity: caller}
      variant_annotation: {platform: none, reads: [variant_calls], identity: service}
    ```
    The CRO collaborator sees CNS-204 rows of `variant_calls` through the agent and every row
    through the pipeline.

    ```yaml
    datasets:
      trial_outcomes:                   # Snowflake: aggregates over groups of 5 only
        platform: snowflake
        table: CLINICAL.OUTCOMES.TRIAL_OUTCOMES
        aggregation: {min_group_size: 5}
      trial_outcomes_lake:              # its lakehouse copy: no aggregation policy there
        platform: databricks
        table: clinical_lake.outcomes.trial_outcomes
        replica_of: trial_outcomes
    ```
    The lakehouse agent answers row by row what the warehouse agent answers only in aggregates:
    the table leaks through the lakehouse.

    ## How to fix
    Make the loose surface enforce what the strict one does: read through a caller-identity
    surface on a catalog, give replicas the same row filter and masks as their original, and
    mask every column of an identifier domain alike; or stop reading the facts there (a copy on
    a platform without the strict surface's kind of policy, such as an aggregation-only table
    copied to Databricks, cannot be made to answer alike: withdraw it, or copy the aggregates).
    """
    m = ctx.model
    group_size = Counter(m.replica_root(d) for d in m.datasets)
    groups: dict[tuple[tuple[str, str], str], list[Divergence]] = defaultdict(list)
    for d in divergences(m, refused_as_intended=True):
        groups[(d.facts, d.loose.surface)].append(d)
    for (facts, surface), found in sorted(groups.items()):
        kind, name = facts
        what = (
            f"the facts of {name}" + (" and its replicas" if group_size[name] > 1 else "")
            if kind == "dataset"
            else f"{name} identifiers"
        )
        # one clause per (what differs, where): the personas it differs for, with the first
        # persona's detail (row sets differ per persona)
        clauses: dict[tuple[object, ...], list[Divergence]] = defaultdict(list)
        for d in found:
            clauses[(d.aspect, d.loose, d.strict)].append(d)
        parts = []
        for same in clauses.values():
            personas_here = [label(d.persona) for d in same]
            if len({d.detail for d in same}) == 1:
                parts.append(f"{same[0].detail} (for {', '.join(personas_here)})")
            else:
                parts.append(
                    f"{same[0].detail} (for {personas_here[0]}; likewise for "
                    f"{', '.join(personas_here[1:])})"
                )
        shown = "; ".join(parts[:4]) + (f"; and {len(parts) - 4} more" if len(parts) > 4 else "")
        stricter = sorted({d.strict.surface for d in found})
        personas = [label(p) for p in sorted({d.persona for d in found})]
        read = m.surfaces[surface].reads.index(found[0].loose.dataset)
        yield Finding(
            ctx.project.loc("surfaces", surface, "reads", read),
            "ACC403",
            f"surfaces.{surface}",
            f"{surface} is looser than {', '.join(stricter)} on {what} for "
            f"{', '.join(personas)}: {shown}",
            f"make {surface} enforce what {', '.join(stricter)} enforce(s) for {what} "
            "(caller identity on a catalog, the same filter and masks on every replica and "
            f"every column of the domain), or stop reading them on {surface}",
        )
