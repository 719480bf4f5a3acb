"""Rules over probes: the governance team's expected answers, against the model (ACC404)."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.lint.checks import Context, rule
from compiler.lint.finding import Finding
from compiler.meaning.probes import ProbeOutcome, evaluate


def outcomes(ctx: Context) -> list[ProbeOutcome]:
    """Every probe's outcome per the model, computed once per lint run."""
    result: list[ProbeOutcome] = ctx.memo("probe_rules.outcomes", lambda: evaluate(ctx.model))
    return result


@rule("ACC404")
def probe_mismatch(ctx: Context) -> Iterator[Finding]:
    """What the model gives a probe's persona on a surface is not what the probe expects.

    ## What it does
    Computes, for every probe and every surface its `expect` names, the disposition the model
    gives the probe's persona — with the same views as `accord analyze` and ACC403
    (`compiler/meaning/semantics.py`) — and flags each surface whose disposition differs from the
    expected one. The finding names the probe's owner, the surface, expected and actual, and
    the model entries that decide it (a mask's `unmasked_for`, an entitlement value, a
    surface's platform, identity or runtime), and is located at the probe's `expect` entry.
    A hand-written row-filter predicate cannot be evaluated from the model: the finding then
    says so, and `accord verify` executes the predicate.

    ## Why is this bad?
    The model only has to be consistent with itself: a pull request that adds a principal to
    a programme, grows a mask's `unmasked_for` or lets a new surface read a governed table
    passes every other check. A probe is the governance team's independent statement of what
    each surface should answer; when the model stops giving that answer, lint fails until the
    probe is changed too, which puts the probe's owner in the review of the change.

    ## Example
    ```yaml
    masks:
      subject_pseudonym:
        strategy: hash
        unmasked_for: [clinical_unblinded, cro_external]   # widened in this change
    probes:
      cro_cannot_unmask_cns_subjects:
        owner: data-governance
        persona: cro_collaborator
        dataset: assay_results
        where: {programme: CNS-204}
        column: SUBJECT_ID
        expect:
          warehouse_agent: masked      # the model now gives: clear
          lakehouse_agent: masked
    ```

    ## How to fix
    If the change is wrong, revert it: the probe stands. If the wider (or narrower) access
    is intended, the probe's owner changes `expect` in the same pull request;
    `accord probe init PERSONA DATASET` prints today's dispositions to review.
    """
    project = ctx.project
    for o in outcomes(ctx):
        if o.ok:
            continue
        where = project.loc("probes", o.probe, "expect", o.surface)
        deciders = []
        for path in o.deciders:
            if path in project.source.values or path in project.source.keys:
                dotted = ".".join(str(p) for p in path)
                deciders.append(f"{dotted} ({project.loc(*path)})")
        decided = f"; decided by {', '.join(deciders)}" if deciders else ""
        place = o.dataset + (f".{o.column}" if o.column else "")
        if o.actual is None:
            message = (
                f"probe {o.probe} (owner {o.owner}): {o.persona} on {o.surface} expected "
                f"{o.expected}, and the model cannot tell ({place}: {o.detail}){decided}"
            )
            fix = (
                f"replace the hand-written predicate with `entitlement:` and `column:`, or run "
                f"`accord verify`, which executes it; {o.owner} reviews the probe"
            )
        else:
            message = (
                f"probe {o.probe} (owner {o.owner}): {o.persona} on {o.surface} expected "
                f"{o.expected}, the model gives {o.actual} ({place}: {o.detail}){decided}"
            )
            fix = (
                f"revert the change that made {o.surface} answer {o.actual}, or, if it is "
                f"intended, have {o.owner} change the probe's expect entry to {o.actual}"
            )
        yield Finding(where, "ACC404", f"probes.{o.probe}", message, fix)
