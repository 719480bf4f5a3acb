"""``accord rules``: the registered lint rules, or one rule's page."""

from __future__ import annotations

import click

from accord.compiler.core.errors import UsageError


@click.command("rules")
@click.argument("rule_id", required=False)
def command(rule_id: str | None) -> int:
    """List the lint rules (id, name, severity, where they apply, summary), or print the
    documentation of RULE_ID (an id such as ACC101, or a name such as current-role)."""
    from accord.compiler.lint.docs import doc_sections
    from accord.compiler.lint.engine import registered_rules, rule_doc, rule_sources

    rules = registered_rules()
    if rule_id is not None:
        wanted = rule_id.strip()
        found = next((r for r in rules if wanted.upper() == r.id or wanted.lower() == r.name), None)
        if found is None:
            raise UsageError(f"unknown rule {rule_id!r}: `accord rules` lists them")
        where = ", ".join(rule_sources(found.id))
        click.echo(f"{found.id} {found.name} ({found.severity}; {where})\n")
        click.echo(rule_doc(found.id))
        return 0
    width = max(len(r.name) for r in rules)
    for r in rules:
        summary, _ = doc_sections(rule_doc(r.id))
        where = "+".join(rule_sources(r.id))
        click.echo(f"{r.id}  {r.name:<{width}}  {r.severity:<7}  {where:<10}  {summary}")
    return 0
