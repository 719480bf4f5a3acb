"""Rules for platform behaviour that the vendors' documentation leaves open: where the unsafe
reading would leak, accord warns (README, platform notes)."""

from __future__ import annotations

from collections.abc import Iterator

from compiler.lint import Context, Finding, rule
from targets.abac import ALL_USERS
from targets.objects import AbacPolicy


@rule("ACC505")
def abac_service_identity(ctx: Context) -> Iterator[Finding]:
    """A service identity reads tables whose ABAC policies apply to `account users`.

    ## What it does
    Fires, on a Databricks platform with `style: abac`, for every surface with
    `identity: service` that reads a dataset an ABAC policy governs.

    ## Why is this bad?
    accord's ABAC policies apply ``TO `account users` EXCEPT ...``. The documentation calls
    `account users` "the root group to which all users in the account belong"
    (sql-ref-principal); whether service principals are members is not documented. A principal
    outside a policy's TO list is neither filtered nor masked: if service principals are not
    members, a pipeline running as one reads every row and every clear value.

    ## Example
    ```yaml
    platforms: {databricks: {governance_schema: gov.pol, style: abac}}
    surfaces:
      nightly_export: {platform: databricks, reads: [variant_calls], identity: service}
    ```

    ## How to fix
    Put the service principal in an account group and check, on the workspace, that the
    policies apply to it (query as the service principal: masked values must come back); or
    use `style: table`, whose filters and masks apply to every caller. Suppress with the
    evidence once checked: `ignore: {ACC505: "checked: ... is masked"}`.
    """
    catalog = ctx.catalogs.get("databricks")
    if catalog is None or catalog.style != "abac":
        return
    governed = {
        d
        for p in catalog.of(AbacPolicy)
        if any(t.lower() == ALL_USERS for t in p.to)
        for d in p.datasets
    }
    for name, surface in sorted(ctx.model.surfaces.items()):
        if surface.platform != "databricks" or surface.identity != "service":
            continue
        hit = sorted(set(surface.reads) & governed)
        if hit:
            yield Finding(
                ctx.project.loc("surfaces", name, "identity"),
                "ACC505",
                f"surfaces.{name}",
                f"surface {name} runs as a service identity on {', '.join(hit)}, governed by "
                "ABAC policies TO `account users`; whether service principals belong to "
                "`account users` is not documented, and a principal outside TO is neither "
                "filtered nor masked",
                "check on the workspace that the policies apply to the service principal, "
                "or use style: table",
            )


@rule("ACC506")
def abac_salt_execute(ctx: Context) -> Iterator[Finding]:
    """A salted mask under ABAC may need every querying user to hold EXECUTE on the salt.

    ## What it does
    Fires, on a Databricks platform with `style: abac`, for every hash mask with a Databricks
    salt.

    ## Why is this bad?
    ABAC filters and masks evaluate as the session user (unity-catalog/abac). Whether the
    querying user then needs EXECUTE on a function the mask calls is not documented. If so,
    everyone who queries the table must be granted EXECUTE on the salt function, and anyone who
    may execute it can `SELECT` it and read the salt: the pseudonyms can then be recomputed
    from guessed identifiers.

    ## Example
    ```yaml
    platforms: {databricks: {governance_schema: gov.pol, style: abac}}
    masks:
      subject_pseudonym:
        strategy: hash
        salt: {databricks: env:SUBJECT_SALT_DATABRICKS}
    ```

    ## How to fix
    Keep EXECUTE on the salt function with the owner of the mask functions only, and check on
    the workspace that a querying user without EXECUTE still gets salted digests (not an
    error); or use `style: table`, whose masks run with the definer's rights. Suppress with
    the evidence once checked.
    """
    catalog = ctx.catalogs.get("databricks")
    if catalog is None or catalog.style != "abac":
        return
    for name, mask in sorted(ctx.model.masks.items()):
        salt = (mask.salt or {}).get("databricks")  # type: ignore[call-overload]
        if mask.strategy == "hash" and salt:
            yield Finding(
                ctx.project.loc("masks", name, "salt"),
                "ACC506",
                f"masks.{name}",
                f"mask {name} calls its salt function under ABAC, which evaluates as the "
                "session user; whether querying users then need EXECUTE on it (and so could "
                "read the salt) is not documented",
                "grant EXECUTE on the salt function to the mask owner only and check that "
                "querying users still get salted digests, or use style: table",
            )
