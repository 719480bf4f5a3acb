"""Rules over probes: the governance team's expected answers, against the model (ACC404)."""

from __future__ import annotations

from collections.abc import Iterator

from accord.compiler.lint.checks import Context, rule
from accord.compiler.lint.finding import Finding
from accord.compiler.meaning.probes import ProbeOutcome, evaluate, unanswered


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

    A surface that reaches a probe's fact (it reads the dataset, a replica, or a column of the
    probe column's identifier domain) and has no `expect` entry is the same finding, located
    at the probe: "say what surface S should answer", with what the model gives today as the
    suggested entry. It is a finding and not an input error, so adding a surface keeps
    validate, analyze and every other rule (the new surface's own ACC403) running.

    ## Why is this bad?
    The model only has to be consistent with itself: a pull request that adds a principal to
    a programme, grows a mask's `unmasked_for` or lets a new surface read a governed table
    passes every other check. A probe is the governance team's independent statement of what
    each surface should answer; when the model stops giving that answer, lint fails until the
    probe is changed too, which puts the probe's owner in the review of the change. A new
    surface that reaches the fact is a new answer nobody has stated yet.

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
    `accord probe init PERSONA DATASET` prints today's dispositions to review. For a surface
    without an entry, the probe's owner adds the entry the finding suggests, or the one the
    surface should answer.
    """
    project = ctx.project
    for u in unanswered(ctx.model):
        p = ctx.model.probes[u.probe]
        fact = p.dataset + (f".{p.column}" if p.column else "")
        a = u.answer
        if a.disposition is None:
            gives = f"the model cannot tell ({a.detail})"
            fix = (
                f"add `{u.surface}: <disposition>` under probes.{u.probe}.expect "
                f"(`accord verify` executes the predicate); {p.owner} reviews the probe"
            )
        else:
            gives = f"the model gives {a.disposition} ({a.detail})"
            fix = (
                f"add `{u.surface}: {a.disposition}` under probes.{u.probe}.expect if that is "
                f"what it should answer; {p.owner} reviews the probe"
            )
        message = (
            f"probe {u.probe} (owner {p.owner}): say what surface {u.surface} should answer: "
            f"it reaches {fact} (it reads {', '.join(u.reads)}) and has no expect entry; {gives}"
        )
        yield Finding(
            project.key_loc("probes", u.probe), "ACC404", f"probes.{u.probe}", message, fix
        )
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
