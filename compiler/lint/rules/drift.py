"""ACC701-ACC708: differences between the model and the live platforms (``accord drift``).

These are the rules' pages, for ``accord rules`` and docs/rules.md: the comparison itself
lives in :mod:`compiler.live.drift` (it needs a connection), and ``accord drift`` finalises its
findings with :func:`compiler.lint.engine.finalize` (suppressions, sorting) without running any
check. ``accord lint`` never connects: it has no check for these rules.
"""

from __future__ import annotations

from accord.compiler.lint.checks import rule_page
from accord.compiler.model.rules import RULE_TABLE

#: raised only by ``accord drift`` (it reads the platforms): ``accord lint`` cannot tell whether
#: a suppression of one is used, so ACC002 does not judge them
LIVE_RULES = frozenset(r.id for r in RULE_TABLE if r.family == "drift")


@rule_page("ACC701")
class LiveMissing:
    """An object or attachment the model needs is not deployed on the platform.

    ## What it does
    `accord drift` reads the platform (policies or filter and mask functions in the governance
    schema, salt functions, mapping tables, and the policies attached to every governed table
    and masked column) and reports each object the model compiles to that is not there. It also
    reports what it could not read: a platform accord could not see is never reported clean.
    A replica inherits its source's masks by column name; for each column its `omits` says the
    table lacks, drift lists the live table's columns (`information_schema.columns`) and
    reports a column that is there: no mask was compiled for it.

    ## Why is this bad?
    A governed column without its mask shows every value in clear; a table without its row
    filter shows every row. Someone unset it in a console, a deployment stopped half way, or a
    table was recreated without its policies. An `omits` entry the table contradicts leaves a
    masked fact readable in the clear on the replica.

    ## Example
    ```sql
    ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN SUBJECT_ID UNSET MASKING POLICY;
    ```
    `policies/datasets.yaml:12:9: ACC701 snowflake: mask of DISCOVERY.ASSAYS.RESULTS.SUBJECT_ID is not deployed`

    ## How to fix
    Plan from the live estate and apply the reviewed plan:
    `accord plan policies --base live:snowflake`, then `accord migrate apply --platform snowflake`.
    For a contradicted `omits` entry, remove it (the replica then inherits the mask) and plan.
    """


@rule_page("ACC702")
class LiveUnmanaged:
    """A policy, filter or mask on a governed table or column that the model did not put there.

    ## What it does
    Reports every attachment on a governed table or column that is not in the model: a
    console-added masking policy, a row filter from another team's schema, an ABAC policy on
    the table's schema or catalog, and objects in the governance schema the model does not
    declare.

    ## Why is this bad?
    An attachment accord did not make decides what people see, and nobody reviewed it. A
    replacement mask may show the value in clear to more roles than the model says; a second
    ABAC filter makes Unity Catalog refuse every query on the table.

    ## Example
    ```sql
    ALTER TABLE DISCOVERY.ASSAYS.RESULTS MODIFY COLUMN RESULT SET MASKING POLICY OPS.ADHOC.CONSOLE_MASK;
    ```

    ## How to fix
    Remove it, or bring it into the model. `accord plan --base live:P` lists such attachments
    and refuses to plan until you choose: `--adopt` (the plan takes them over and converges them
    to the model) or `--keep-unmanaged` (the plan leaves them where they are).
    """


@rule_page("ACC703")
class LiveChanged:
    """A deployed object's body, signature, comment or attachment differs from the model's.

    ## What it does
    Compares each deployed policy or function with the compiled one as syntax trees (parsed
    with sqlglot in the platform's dialect, so formatting does not count), its signature and
    comment, each attachment's policy and arguments, and a Snowflake salt function's SECURE
    flag. A row filter over several dimensions attached on its columns in another order, or
    on fewer, is reported at the dataset's `row_filter` (each parameter is one dimension, so
    swapped columns make each dimension's check read the other's values); a mapping table
    that lacks the expiry column the model's grants `until` a date need is reported at the
    first such grant's `until`.

    ## Why is this bad?
    The platform no longer enforces what was reviewed: a body edited in a console can add a
    role to the clear branch of a mask, and the YAML still says it cannot.

    ## Example
    ```sql
    ALTER MASKING POLICY GOVERNANCE.POLICIES.FREE_TEXT_MASK SET BODY -> VAL;
    ```

    ## How to fix
    Plan from the live estate (`accord plan --base live:P`): the plan changes the body in place,
    or swaps the attachment in one statement.
    """


@rule_page("ACC704")
class GrantsDiverge:
    """A platform's mapping rows differ from the model, or from the other platform's copy.

    ## What it does
    Reads every mapping table and compares its rows with the model's entitlements; with
    `--platform all` it also compares the two platforms' copies value by value, naming the
    dimension, the value and the principals each side grants. For a dimension with grants
    `until` a date it compares each row's expiry column too: a live row that holds later than
    the model's day, or is standing (NULL) where the model has a day, is a widening; an
    earlier day is a narrowing; both are reported at that grant's `until` (at the grant when
    the model's is standing).

    ## Why is this bad?
    The two catalogs' grant tables are two copies of one decision. When they disagree, the same
    person sees a programme's rows in the warehouse and not in the lakehouse (or the reverse),
    and the loosest copy decides what leaks.

    ## Example
    A row deleted on Databricks only:
    ```sql
    DELETE FROM governance.policies.programme_grants
    WHERE programme_code = 'ONC-101' AND group_name = 'bench-chemists';
    ```
    `dimension 'programme', value 'ONC-101': databricks grants clinical_unblinded, snowflake
    grants bench_chemist, clinical_unblinded`

    ## How to fix
    Re-apply the model's grants: `accord plan --base live:P` replaces the rows in one
    transaction (Snowflake) or one MERGE (Databricks).
    """


@rule_page("ACC705")
class SaltExposed:
    """A salt function can be called by someone other than the owner of its policies.

    ## What it does
    Reads the grants on every salt function (Snowflake `SHOW GRANTS ON FUNCTION`, Databricks
    `grants.get_effective`) and reports each grant of USAGE / EXECUTE to anyone but the owner.
    On Databricks that includes a grant on the function's schema or catalog (inherited by
    every function in it), an ABAC GRANT policy there that gives EXECUTE, and the reading
    principal itself when it may call the salt.

    ## Why is this bad?
    Whoever can call the salt function can select the salt, and with the salt every salted
    digest can be recomputed from a guessed identifier: the mask no longer hides anything from
    that role.

    ## Example
    ```sql
    GRANT USAGE ON FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT() TO ROLE ANALYST;
    ```

    ## How to fix
    `REVOKE USAGE ON FUNCTION ... FROM ROLE ANALYST` (Databricks: `REVOKE EXECUTE ON FUNCTION
    ... FROM `group``, or `ON SCHEMA` / `ON CATALOG` where the grant is inherited from, `ALL
    PRIVILEGES` in two words; drop or narrow a GRANT policy). `accord plan --base live:` writes
    these. The policy owner needs USAGE; the querying roles do not.
    """


@rule_page("ACC706")
class SaltDrift:
    """A live salt's canary digest is not the referenced salt's, or equals the other platform's.

    ## What it does
    When the salts are in the environment, `accord drift` asks each platform for the salted
    digest of a fixed canary (`SHA2('accord-canary' || salt(), 256)`), compares it with the digest
    of the salt the model references, and compares the platforms' digests with each other.

    ## Why is this bad?
    A salt function re-created by hand with another salt changes every pseudonym on that
    platform; one re-created with the other platform's salt makes masked identifiers join
    across the two catalogs again.

    ## Example
    `SUBJECT_SALT_SNOWFLAKE` is set, and the warehouse's salt function was re-created by hand:
    ```sql
    CREATE OR REPLACE SECURE FUNCTION GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT()
      RETURNS VARCHAR AS $$ '<an older salt>' $$;
    ```

    ## How to fix
    Re-create the salt function from the model (`accord plan --base live:P`, then apply), and
    keep one salt per platform.
    """


@rule_page("ACC707")
class LiveIncomplete:
    """The reading role could not see everything drift needs: drift of what it missed is not proven.

    ## What it does
    Every live read records what it read, with which role or principal, and each thing the
    platform did not show it: a policy-reference lookup refused, a `SHOW` answer filtered to the
    objects the role holds a privilege on, a grant list without the inherited grants, a table
    the platform answered about instead of the asked one. `accord drift` reports each as
    ACC707 and exits 1; its coverage (text, `coverage` in JSON, SARIF run properties) lists
    what was read and what was not. `accord introspect --check-reader` says which grants
    the reading role is missing before a read.

    ## Why is this bad?
    Snowflake and Databricks answer a role with limited privileges with less, not with an
    error: a masking policy made in a console, or a salt callable by a whole group, is simply
    not in the answer. A drift check that reports clean where it could not see produces a
    green check over a leak.

    ## Example
    The reading role holds APPLY on one masking policy only, so `POLICY_REFERENCES` answers
    for that policy's columns alone:
    ```sql
    GRANT APPLY ON MASKING POLICY GOVERNANCE.POLICIES.MASK_SUBJECT_ID TO ROLE ACCORD_READER;
    ```
    `policies/platforms.yaml:3:3: ACC707 snowflake: the reading role cannot see policy references of DISCOVERY.ASSAYS.RESULTS (002003: does not exist or not authorized); drift of DISCOVERY.ASSAYS.RESULTS's row filter and masks is not proven`

    ## How to fix
    Grant the reading role the reader grants docs/live.md lists for the platform (Reader grants; run
    `accord introspect --check-reader --platform P` to see what is missing), then run drift
    again. Never suppress it: a suppressed ACC707 is a clean verdict nobody proved.
    """


@rule_page("ACC708")
class HierarchyDrift:
    """A live role-to-role grant or group nesting differs from the model's `inherits`.

    ## What it does
    When the model declares `inherits`, `accord drift` reads who inherits each principal the
    model names: Snowflake `SHOW GRANTS OF ROLE` (the roles each modelled role is granted
    to), Databricks the workspace's SCIM Groups API (the groups nested in each modelled
    group). An edge the platform holds and `inherits` does not say is reported at the
    inheriting principal (or, when the inheriting role or group is not in the model, at the
    inherited one); an edge `inherits` says and the platform lacks is reported at the
    `inherits` item. An edge that could not be read is ACC707, never passed.

    ## Why is this bad?
    A role granted to a role gives it everything the granted role holds, and a group nested
    in a group is a member of it for `is_account_group_member`: one console grant gives a
    persona every row and clear value of another. A missing edge takes away what the model
    says the persona holds, so verify and analyze describe an estate that is not deployed.

    ## Example
    ```sql
    GRANT ROLE AUDITOR TO ROLE ANALYST;
    ```
    `policies/principals.yaml:4:3: ACC708 snowflake: role AUDITOR is granted to role ANALYST (which principals.analyst.inherits does not say): ANALYST inherits everything granted to AUDITOR`

    ## How to fix
    Revoke the grant (`REVOKE ROLE AUDITOR FROM ROLE ANALYST`; on Databricks remove the group
    from the parent group's members), or, when the edge is intended, add it to the model's
    `inherits` and review what `accord diff` says it widens. accord never creates roles,
    groups or their edges.
    """
