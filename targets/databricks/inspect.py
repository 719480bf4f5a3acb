"""Databricks' live reader: what is deployed, read back into catalog objects.

See :mod:`targets.inspect` for what every reader does. Databricks (the SDK's dataclasses,
databricks/sdk/service/catalog.py): ``functions.list`` (``FunctionInfo.input_params``,
``full_data_type``, ``routine_definition``, ``comment``, ``owner``), ``grants.get_effective``
(``privilege_assignments``, every page: :func:`effective_grants`, also read by the stage
checks), ``policies.list_policies`` (``PolicyInfo``) on the securables
``information_schema.abac_policy_definitions`` says carry a policy,
``entity_tag_assignments.list``; row filters, column masks and column tags from each
catalog's ``information_schema``; mapping rows through statement execution. The group nesting:
the workspace's SCIM Groups API.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, ClassVar

from sqlglot.errors import ParseError, TokenError

from accord.compiler.connect.denials import classify
from accord.compiler.connect.executor import DeadlineError, ExecutionError, require_databricks_apis
from accord.compiler.core.errors import UsageError, one_line
from accord.targets import abac_conditions as cond
from accord.targets import sql as tsql
from accord.targets.identity import parse_body, unparsed
from accord.targets.inspect import (
    AccessPolicy,
    Answer,
    LiveCatalog,
    Reader,
    SaltGrant,
    norm_type,
)
from accord.targets.objects import (
    AbacPolicy,
    CatalogObject,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    Param,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)


class DatabricksReader(Reader):
    """Unity Catalog through the SDK, every call bounded by the statement timeout.

    What the platform answers a caller that is not a metastore admin (fact numbers of issue
    20; databricks-sdk service/catalog.py docstrings): ``functions.list`` lists only the
    functions the caller owns or may EXECUTE (11), so a function missing from it is unseen,
    not undeployed, unless the reader sees the whole schema; ``grants.get`` "does not include
    inherited permissions" (9), so who may call a salt is read with ``grants.get_effective``,
    paged (``max_results=0``, ``next_page_token``: the unpaginated form "will be deprecated");
    ``PolicyInfo.policy_type`` is also POLICY_TYPE_GRANT / POLICY_TYPE_DENY (12), which are
    neither filters nor masks; a GRANT policy that gives EXECUTE on the governance schema
    exposes the salts. Row filters, column masks and column tags are read per catalog from
    ``information_schema.row_filters`` / ``column_masks`` / ``column_tags`` (one statement
    each; the documented column names, or the ones live workspaces have been seen to answer),
    which list the tables the caller may see only: the reader check proves it may see them.
    """

    EDGE_WORDS: ClassVar[dict[str, str]] = {
        "present": "group {child} is nested in group {parent}",
        "absent": "group {child} is not a member of group {parent}",
        "add": "add group {child} to the members of group {parent} (account console or SCIM)",
        "remove": "remove group {child} from the members of group {parent}",
    }

    #: privileges that let the reader see every object of a schema (or catalog)
    SEES_ALL = ("MANAGE", "ALL_PRIVILEGES")
    #: privileges that let a principal call a function
    CALLS = ("EXECUTE", "ALL_PRIVILEGES")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: schemas the reader was proven to see whole (MANAGE, ownership, metastore admin)
        self.whole: set[str] = set()
        self.checked = False
        #: the salts the reading principal itself may call (check_reader)
        self.calls: list[SaltGrant] = []
        #: the metastore's id (``metastores.summary``), whose ABAC policies are read too
        self.metastore = ""
        #: (lower-case table, lower-case column) -> {tag: value}: information_schema.column_tags
        self.column_tags: dict[tuple[str, str], dict[str, str]] = {}

    def call(self, what: str, fn: Callable[[], Any]) -> Any:
        bounded_call = getattr(self.run, "call", None)
        return bounded_call(what, fn) if bounded_call is not None else fn()

    def sdk(self, what: str, call: Callable[[], Any], unproven: str = "") -> Any:
        """``call()``'s answer; None when there is none (a 404), or when it could not be read
        (recorded: :meth:`cannot_see`)."""
        return self.settle(self.attempt(what, call, unproven))

    def settle(self, attempt: tuple[Any, tuple[str, str, str] | None]) -> Any:
        """An :meth:`attempt`'s answer, its failure recorded (in the caller's order)."""
        value, failed = attempt
        if failed is not None:
            self.cannot_see(*failed)
        return value

    def attempt(
        self, what: str, call: Callable[[], Any], unproven: str = ""
    ) -> tuple[Any, tuple[str, str, str] | None]:
        """``(answer, None)``, or ``(None, (what, why, unproven))`` when it could not be read:
        what :meth:`Reader.each` may run concurrently (nothing recorded here)."""
        from databricks.sdk.errors import DatabricksError, NotFound

        try:
            return self.call(what, call), None
        except NotFound:
            return None, None
        except DeadlineError as err:
            return None, (what, str(err).removeprefix(f"{what}: "), unproven)
        except DatabricksError as err:  # before OSError: DatabricksError is an IOError
            denial = classify(self.platform, err)
            if denial is not None:
                denial = denial.for_reader(self.coverage.reader)
            why = str(denial or one_line(err)[:300])
            if " Config: " in why:  # the SDK appends its configuration to what the server said
                why = why.split(" Config: ")[0].rstrip(". ") + (")" if denial else "")
            return None, (what, why, unproven)
        except (OSError, TimeoutError) as err:
            host = getattr(getattr(self.run.client, "config", None), "host", "the workspace")
            raise UsageError(f"cannot reach Databricks at {host}: {one_line(err)[:300]}") from None

    def effective(
        self, kind: str, name: str, principal: str | None = None, unproven: str = ""
    ) -> list[tuple[str, str, str]] | None:
        return self.settle(self.effective_attempt(kind, name, principal, unproven))  # type: ignore[no-any-return]

    def effective_attempt(
        self, kind: str, name: str, principal: str | None = None, unproven: str = ""
    ) -> tuple[Any, tuple[str, str, str] | None]:
        """(principal, privilege, where it is granted: "" on the securable itself, else
        ``schema c.s`` / ``catalog c``) of every effective grant on a securable, every page
        read (``grants.get_effective``, ``max_results=0``: the server's page length)."""
        client = self.run.client
        return self.attempt(
            f"grants on {kind} {name}",
            lambda: effective_grants(client, kind, name, principal),
            unproven,
        )

    def check_reader(self) -> None:
        """The principal (``current_user.me``), and whether it sees every object accord reads:
        a metastore admin (the metastore's owner) does; otherwise MANAGE or ownership on the
        governance schema and on each governed table's schema (inherited from the catalog
        counts): without it ``functions.list`` hides the functions it may not EXECUTE, grants
        and ABAC policies are refused, and information_schema leaves out what it may not see.
        EXECUTE on the governance schema is not a way to see: it calls every salt (ACC705)."""
        if self.checked:
            return
        self.checked = True

        client = self.run.client
        require_databricks_apis()
        me = self.sdk("the reading principal", lambda: client.current_user.me())
        name = (getattr(me, "user_name", None) or "") if me is not None else ""
        self.coverage.reader = name
        if not name:
            self.cannot_see(
                "the reading principal", "current_user.me() named none", "every privilege check"
            )
            return
        summary = self.sdk("the metastore", lambda: client.metastores.summary())
        if summary is not None:
            self.metastore = (
                getattr(summary, "metastore_id", None) or getattr(summary, "name", "") or ""
            )
        if summary is not None and summary.owner and summary.owner == name:
            self.coverage.privileges.append(f"metastore admin (owner of metastore {summary.name})")
            self.whole |= self.schemas()
            return
        for salt in sorted(o.name for o in self.expected.of(SaltFunction)):
            # a principal may read its own privileges: EXECUTE on a salt is an exposure
            for who, privilege, where in self.effective("function", salt, name) or []:
                if who == name and privilege in self.CALLS:
                    self.calls.append(SaltGrant(salt, privilege, name, where))
        for catalog in sorted({s.split(".")[0] for s in self.schemas()}):
            self.check_catalog(name, catalog)
        for schema in sorted(self.schemas()):
            self.check_schema(name, schema)
        for table in self.expected.of(MappingTable):
            grants = self.effective("table", table.name, name, f"drift of {table.name}")
            held = {p for who, p, _ in grants or [] if who == name}
            if (
                grants is not None
                and not held & {"SELECT", "ALL_PRIVILEGES"}
                and self.owner_of("tables", table.name) != name
            ):
                self.no_select.add(table.name.lower())
                self.cannot_see(
                    f"mapping table {table.name}",
                    f"{name} holds no SELECT on it: GRANT SELECT ON TABLE "
                    f"{tsql.name_sql(table.name, self.platform)} TO "
                    f"{tsql.principal_sql(name, self.platform)}",
                    f"drift of {table.name}",
                )

    def schemas(self) -> set[str]:
        tables = {t.rsplit(".", 1)[0].lower() for t in self.governed_tables()}
        return {self.expected.governance_schema.lower()} | tables

    def owner_of(self, kind: str, name: str) -> str:
        api = getattr(self.run.client, kind)
        info = self.sdk(f"{kind[:-1]} {name}", lambda: api.get(name))
        return (getattr(info, "owner", None) or "") if info is not None else ""

    def check_catalog(self, me: str, catalog: str) -> None:
        """ABAC policies on a catalog apply to every table in it: seeing them needs READ
        METADATA or MANAGE on the catalog, or its ownership (unity-catalog/abac/policies)."""
        unproven = f"drift of the ABAC policies on catalog {catalog}"
        if self.owner_of("catalogs", catalog) == me:
            self.coverage.privileges.append(f"owner of catalog {catalog}")
            return
        grants = self.effective("catalog", catalog, me, unproven)
        if grants is None:
            return
        held = {p for who, p, _ in grants if who == me}
        sees = next((p for p in ("READ_METADATA", *self.SEES_ALL) if p in held), None)
        if sees is None:
            self.cannot_see(
                f"the ABAC policies on catalog {catalog}",
                f"{me} holds neither READ METADATA nor MANAGE nor ownership on it",
                unproven,
            )
            return
        self.coverage.privileges.append(f"{sees.replace('_', ' ')} on catalog {catalog}")

    def check_schema(self, me: str, schema: str) -> None:
        gov = schema == self.expected.governance_schema.lower()
        what = "the governance schema" if gov else "the governed tables' schema"
        unproven = (
            f"drift of the functions in {schema} and of who may call its salts"
            if gov
            else f"drift of the row filters, masks, tags and ABAC policies in {schema}"
        )
        catalog = schema.split(".")[0]
        for kind, securable in (("schemas", schema), ("catalogs", catalog)):
            if self.owner_of(kind, securable) == me:
                self.coverage.privileges.append(f"owner of {kind[:-1]} {securable}")
                self.whole.add(schema)
                return
        grants = self.effective("schema", schema, me, unproven)
        if grants is None:
            return
        held = {p: where for who, p, where in grants if who == me}
        if gov and (calls := [p for p in self.CALLS if p in held]):
            where = held[calls[0]] or f"schema {schema}"
            self.coverage.privileges.append(
                f"{calls[0]} on {where}: {me} may call every salt function in {schema} "
                "(an exposure: ACC705)"
            )
        sees = next((p for p in self.SEES_ALL if p in held), None)
        if sees is None:
            self.cannot_see(
                f"everything in {what} {schema}",
                f"{me} holds neither MANAGE nor ownership on it or on catalog {catalog}",
                unproven,
            )
            return
        where = f" (inherited from {held[sees]})" if held[sees] else ""
        self.coverage.privileges.append(f"{sees} on schema {schema}{where}")
        self.whole.add(schema)

    # ------------------------------------------------------------------ the group nesting

    def inheritors(self, group: str, live: LiveCatalog) -> Answer:
        """The groups nested in ``group``, or why they are unseen: the workspace's SCIM Groups
        API (``w.groups.list`` filtered by ``displayName eq``, then ``w.groups.get`` for the
        group's ``members``; databricks-sdk service/iam.py GroupsAPI): a member whose ``$ref``
        is ``Groups/<id>`` is a group nested in it. The workspace lists the account groups
        assigned to it (admin/users-groups/groups); a modelled group it does not list is
        unseen (ACC707), never taken for one without members. ``is_account_group_member``
        sees "a direct or indirect member" of an account group
        (sql/language-manual/functions/is_account_group_member), so a nesting is a grant."""
        client = self.run.client
        unproven = f"drift of which groups are nested in {group}"
        what = f"the members of group {group} (SCIM Groups)"
        quoted = group.replace("\\", "\\\\").replace('"', '\\"')
        found, failed = self.attempt(
            what,
            lambda: list(
                client.groups.list(filter=f'displayName eq "{quoted}"', attributes="id,displayName")
            ),
            unproven,
        )
        if failed is not None:
            return Answer([], failed)
        matches = [g for g in found or [] if (g.display_name or "") == group and g.id]
        if not matches:
            return Answer(
                [],
                (
                    what,
                    "the workspace's SCIM Groups API does not list it (an account group not "
                    "assigned to the workspace is not listed)",
                    unproven,
                ),
            )
        info, failed = self.attempt(what, lambda: client.groups.get(matches[0].id), unproven)
        if failed is not None:
            return Answer([], failed)
        if info is None:
            return Answer([], (what, "the group was not found by its id", unproven))
        children = [
            str(m.display or "")
            for m in info.members or []
            if str(m.ref or "").startswith("Groups/") or str(m.type or "").lower() == "group"
        ]
        return Answer(sorted({c for c in children if c}), None)

    def read(self) -> LiveCatalog:
        client = self.run.client
        self.check_reader()
        gov, objects, live = self.start()
        catalog_name, schema_name = gov.split(".")
        self.progress(f"databricks: functions in {gov}")
        functions = (
            self.sdk(
                f"functions in {gov}",
                lambda: list(
                    client.functions.list(
                        catalog_name=catalog_name, schema_name=schema_name, max_results=0
                    )
                ),
                f"drift of the functions in {gov}",
            )
            or []
        )
        salts = {s.name.lower() for s in self.expected.of(SaltFunction)}
        filters = {p.name.lower() for p in self.expected.of(RowFilterPolicy)}
        listed: set[str] = set()
        salt_infos = []
        for fn in functions:
            name = fn.full_name or ""
            if not self.about(name.rpartition(".")[0], gov, f"functions in {gov}"):
                continue
            listed.add(name.lower())
            params = tuple(
                Param(p.name, norm_type(p.type_text))
                for p in sorted(
                    (fn.input_params.parameters if fn.input_params else None) or [],
                    key=lambda p: p.position,
                )
            )
            returns = norm_type(fn.full_data_type or (fn.data_type.value if fn.data_type else ""))
            if name.lower() in salts:
                objects.append(self.keep(SaltFunction(name, "", "")))
                live.salt_owners[name] = fn.owner or ""
                salt_infos.append(fn)
                continue
            body = parse_body(fn.routine_definition or "", self.platform)
            if body is None:
                self.cannot_see(name, unparsed(fn.routine_definition or ""), f"drift of {name}")
                continue
            comment = fn.comment or ""
            if name.lower() in filters or (returns == "BOOLEAN" and name.lower() not in salts):
                objects.append(self.keep(RowFilterPolicy(name, params, body, None, comment)))
            else:
                objects.append(self.keep(MaskPolicy(name, params, returns, body, "", "", comment)))
        if gov.lower() not in self.whole:
            # fact 11: the list leaves out what the reader may not EXECUTE; what it lacks is
            # unseen, not undeployed: taken as the model has it (never reported missing or
            # changed), and said to be unproven (ACC707; a plan refuses an unread base)
            wanted = [*self.expected.of(SaltFunction), *self.expected.of(RowFilterPolicy)]
            for o in sorted([*wanted, *self.expected.of(MaskPolicy)], key=lambda o: o.name):
                if o.name.lower() not in listed:
                    self.cannot_see(
                        f"function {o.name}",
                        "functions.list shows only the functions the reader owns or may EXECUTE",
                        f"whether {o.name} is deployed as the model has it",
                    )
                    objects.append(o)
                    if isinstance(o, SaltFunction):
                        salt_infos.append(SimpleNamespace(full_name=o.name, owner=None))
        grants = self.each(
            lambda fn: self.effective_attempt(
                "function", fn.full_name, unproven=f"who may call {fn.full_name}"
            ),
            salt_infos,
        )
        for fn, attempt in zip(salt_infos, grants, strict=True):
            found = self.settle(attempt)
            seen: set[tuple[str, str, str]] = set()
            for principal, privilege, where in found or []:
                if (
                    privilege in self.CALLS
                    and principal != fn.owner
                    and (principal, privilege, where) not in seen
                ):
                    seen.add((principal, privilege, where))
                    live.salt_grants.append(SaltGrant(fn.full_name, privilege, principal, where))
        for g in self.calls:  # the reader's own, when the full grants were not readable
            if not any(
                (h.function, h.grantee, h.privilege) == (g.function, g.grantee, g.privilege)
                for h in live.salt_grants
            ):
                live.salt_grants.append(g)
        objects += self.attachments()
        ordered = self.policy_securables(catalog_name, gov)
        found_policies = self.each(
            lambda ks: self.attempt(
                f"ABAC policies on {ks[0].lower()} {ks[1]}",
                lambda: list(client.policies.list_policies(ks[0].lower(), ks[1])),
                f"drift of the ABAC policies on {ks[0].lower()} {ks[1]}",
            ),
            ordered,
        )
        for (kind, name), attempt in zip(ordered, found_policies, strict=True):
            for p in self.settle(attempt) or []:
                policy = self.policy(p, kind, name, live)
                if policy is not None:
                    objects.append(self.keep(policy))
        if self.metastore:
            # metastore-level ABAC policies (Beta: unity-catalog/abac/metastore-policies) apply
            # to every catalog: listing them needs READ METADATA on the metastore or the
            # metastore admin role, so a reader scoped to catalogs is refused (ACC707). Which
            # name list_policies takes for the metastore (its id here) is UNCONFIRMED.
            found = self.settle(
                self.attempt(
                    "ABAC policies on the metastore",
                    lambda: list(client.policies.list_policies("metastore", self.metastore)),
                    "drift of the metastore-level ABAC policies, which apply to every table",
                )
            )
            for p in found or []:
                policy = self.policy(p, "METASTORE", self.metastore, live)
                if policy is not None:
                    objects.append(self.keep(policy))
        if self.expected.style == "abac":
            for tag in self.expected.of(Tag):
                found = self.sdk(
                    f"governed tag {tag.name}",
                    lambda k=tag.name: client.tag_policies.get_tag_policy(k),
                )
                if found is not None:
                    values = tuple(v.name for v in found.values or ())
                    objects.append(
                        self.keep(Tag(found.tag_key, values, (), found.description or ""))
                    )
            objects += self.tag_assignments()
            self.mask_conflicts(objects, live)
        return self.finish(live, objects)

    def mask_conflicts(self, objects: list[CatalogObject], live: LiveCatalog) -> None:
        """A column mask set directly on a column that an ABAC column-mask policy also masks:
        Unity Catalog lets neither win. A table whose "access control policies result in
        multiple column masks applying to the same column" fails its queries with
        COLUMN_MASKS_FEATURE_NOT_SUPPORTED.MULTIPLE_MASKS (SQLSTATE 0A000; docs.databricks.com
        error-messages/column-masks-feature-not-supported-error-class; table-level and ABAC
        policies with different functions on one table block access: unity-catalog/abac/
        abac-vs-rls-cm). Recorded in ``live.overrides`` (drift's ACC702 says it): the policy
        whose scope covers the table and one of whose MATCH COLUMNS conditions, the one its
        ON COLUMN names, holds on the column's tags (information_schema.column_tags). A
        condition accord cannot evaluate, or a WHEN, is not taken to match."""

        policies = [
            o for o in objects if isinstance(o, AbacPolicy) and o.kind == "COLUMN MASK" and o.to
        ]
        for m in objects:
            if not isinstance(m, MaskAttachment):
                continue
            tags = self.column_tags.get((m.table.lower(), m.column.lower()), {})
            for p in sorted(policies, key=lambda p: (p.securable_type, p.securable, p.name)):
                if p.when or not cond.covers(p, m.table.lower(), str.lower):
                    continue
                wanted = [c for c, alias in p.match_columns if alias == p.on_column]
                try:
                    hit = any(cond.holds(cond.parse(c), tags) for c in wanted)
                except (ValueError, ParseError, TokenError):
                    continue
                if hit:
                    same = "the same function" if self.same(p.function, m.policy) else ""
                    live.overrides[f"{m.table}.{m.column}".upper()] = (
                        f"ABAC policy {p.name} on {p.securable_type.lower()} {p.securable} "
                        f"masks it too, with {same or p.function}"
                    )
                    break

    def policy_securables(self, catalog_name: str, gov: str) -> list[tuple[str, str]]:
        """The securables whose ABAC policies are listed (``policies.list_policies`` each):
        every catalog and schema of the governed tables, the governance schema and its catalog
        (a GRANT policy there may give EXECUTE on the salts), and of the governed tables those
        that carry a policy. Which tables carry one is read per catalog from
        ``information_schema.abac_policy_definitions`` (one statement; Public Preview,
        docs.databricks.com sql/language-manual/information-schema/abac_policy_definitions),
        whose columns say where a policy is attached (``CATALOG_NAME``, ``SCHEMA_NAME``,
        ``SECURABLE_NAME``, ``ON_SECURABLE_TYPE``) but not its function, ``USING`` columns or
        comment, which ``list_policies`` answers. The view shows only the policies the caller
        may describe (MANAGE, READ METADATA or ownership where the policy is attached), so it
        stands for a table only in a schema the reader was proven to see whole; any other
        table, and every table of a catalog whose view could not be read, is listed itself
        (the fallback is said in the coverage notes). Round trips grow with catalogs, schemas
        and the tables that carry a policy, not with the governed tables."""
        containers = {("CATALOG", catalog_name), ("SCHEMA", gov)}
        tables = self.governed_tables()
        for table in tables:
            cat, sch, _ = table.split(".")
            containers |= {("CATALOG", cat), ("SCHEMA", f"{cat}.{sch}")}
        listed = self.tables_with_policies(tables)
        return sorted(containers | {("TABLE", t) for t in tables if t.lower() in listed})

    def tables_with_policies(self, tables: list[str]) -> set[str]:
        """Lower-case names of the governed tables whose policies must be listed one by one:
        those the catalog's ``abac_policy_definitions`` names, and those it cannot stand for."""

        out: set[str] = set()
        by_catalog: dict[str, list[str]] = {}
        for table in tables:
            by_catalog.setdefault(table.split(".")[0].lower(), []).append(table.lower())
        for catalog, names in sorted(by_catalog.items()):
            seen = [t for t in names if t.rsplit(".", 1)[0] in self.whole]
            out |= set(names) - set(seen)
            if not seen:
                continue
            self.progress(f"databricks: ABAC policy definitions in {catalog}")
            view = f"{tsql.name_sql(catalog, self.platform)}.information_schema.abac_policy_definitions"
            sql = (
                "SELECT catalog_name, schema_name, securable_name, on_securable_type "
                f"FROM {view} WHERE on_securable_type = 'TABLE'"
            )
            try:
                rows = self.run.query(sql)
            except ExecutionError as err:
                self.coverage.note(
                    f"{catalog}.information_schema.abac_policy_definitions could not be read "
                    f"({one_line(err)[:300]}): the ABAC policies of its governed tables were listed table by "
                    "table"
                )
                out |= set(seen)
                continue
            for r in rows:
                name = str(r.get("securable_name") or "")
                if name.count(".") != 2:
                    name = (
                        ".".join(str(r.get(c) or "") for c in ("catalog_name", "schema_name"))
                        + f".{name}"
                    )
                out.add(name.lower())
        return out

    def policy(self, p: Any, kind: str, securable: str, live: LiveCatalog) -> AbacPolicy | None:
        """A row filter or column mask policy as an AbacPolicy; a GRANT policy that gives
        EXECUTE where the salts are, as salt grants; a DENY policy is neither (fact 12). Every
        GRANT and DENY policy is also recorded as read (``live.access_policies``)."""
        from databricks.sdk.service.catalog import PolicyType

        where = f"ABAC policy {p.name} on {kind.lower()} {securable}"
        if p.policy_type in (PolicyType.POLICY_TYPE_ROW_FILTER, PolicyType.POLICY_TYPE_COLUMN_MASK):
            return _abac(p, kind, securable)
        if p.policy_type == PolicyType.POLICY_TYPE_GRANT:
            privileges = {str(v).upper() for v in (p.grant.privileges if p.grant else None) or []}
            access = self.access_policy(p, kind, securable, "GRANT", privileges)
            gov = self.expected.governance_schema.lower()
            covers = securable.lower() in (gov, gov.split(".")[0])
            covers = covers or kind == "METASTORE"
            if covers and privileges & {"EXECUTE", "ALL_PRIVILEGES", "ALL PRIVILEGES"}:
                granted = "EXECUTE" if "EXECUTE" in privileges else "ALL_PRIVILEGES"
                for salt in sorted(self.expected.of(SaltFunction), key=lambda s: s.name):
                    for principal in sorted(
                        set(p.to_principals or ()) - set(p.except_principals or ())
                    ):
                        live.salt_grants.append(
                            SaltGrant(salt.name, granted, principal, f"policy {p.name} on {kind.lower()} {securable}")
                        )  # fmt: skip
            elif self.holds_governed(kind, securable):
                access = dataclasses.replace(access, widens=True)
            else:
                self.ignored.append(
                    f"{where}: a GRANT policy of {', '.join(sorted(privileges))}; not compared"
                )
            live.access_policies.append(access)
            return None
        if p.policy_type == PolicyType.POLICY_TYPE_DENY:
            denied = sorted(str(v) for v in (p.deny.privileges if p.deny else None) or [])
            live.access_policies.append(self.access_policy(p, kind, securable, "DENY", set(denied)))
            self.ignored.append(f"{where}: a DENY policy of {', '.join(denied)}; not compared")
            if self.holds_governed(kind, securable):
                # it can only take reach away (DENY wins over every grant: abac/policy-
                # evaluation), so it leaks nothing; it is said, since the model does not have it
                self.coverage.note(
                    self.access_text(p, where, "DENY", set(denied))
                    + ": it narrows what they reach beyond the model"
                )
            return None
        self.cannot_see(
            where,
            f"its policy type ({_value(p.policy_type) or 'none'}) is not one accord reads",
            f"drift of the ABAC policies on {kind.lower()} {securable}",
        )
        return None

    def holds_governed(self, kind: str, securable: str) -> bool:
        """Whether a policy on ``securable`` (of ``kind``) applies to a governed table: the
        metastore, or the table, its schema or its catalog."""
        if kind == "METASTORE":
            return True
        name = securable.lower()
        return any(
            t.lower() == name or t.lower().startswith(name + ".") for t in self.governed_tables()
        )

    def access_policy(
        self, p: Any, kind: str, securable: str, verb: str, privileges: set[str]
    ) -> AccessPolicy:
        """A GRANT or DENY policy as read (:class:`~targets.inspect.AccessPolicy`)."""
        where = f"ABAC policy {p.name} on {kind.lower()} {securable}"
        return AccessPolicy(
            str(p.name or ""),
            kind,
            securable,
            verb,
            tuple(sorted(privileges)),
            tuple(p.to_principals or ()),
            tuple(p.except_principals or ()),
            self.access_text(p, where, verb, privileges),
        )

    def access_text(self, p: Any, where: str, verb: str, privileges: set[str]) -> str:
        """A GRANT or DENY policy over governed tables, in words."""
        to = sorted(set(p.to_principals or ()) - set(p.except_principals or ()))
        what = ", ".join(sorted(privileges)) or "no privilege"
        whom = ", ".join(to) or "nobody"
        verb_text = "grants" if verb == "GRANT" else "denies"
        return f"{where}: a {verb} policy {verb_text} {what} to {whom} on the governed tables it covers"

    def info_schema(self, catalog: str, view: str) -> list[dict[str, Any]] | None:
        """Every row of ``<catalog>.information_schema.<view>``, one statement (every chunk
        followed by the executor); None when it failed (recorded)."""

        sql = f"SELECT * FROM {tsql.name_sql(catalog, self.platform)}.information_schema.{view}"
        try:
            return self.run.query(sql)
        except ExecutionError as err:
            self.cannot_see(
                f"{catalog}.information_schema.{view}",
                err,
                f"drift of the {view.replace('_', ' ')} in catalog {catalog}",
            )
            return None

    def catalogs(self) -> list[str]:
        return sorted({t.split(".")[0].lower() for t in self.governed_tables()})

    def attachments(self) -> list[CatalogObject]:
        """Row filters and column masks of the governed tables: two statements per catalog."""
        governed = {t.lower(): t for t in self.governed_tables()}
        out: list[CatalogObject] = []
        for catalog in self.catalogs():
            self.progress(f"databricks: row filters and column masks in {catalog}")
            for r in self.info_schema(catalog, "row_filters") or []:
                table = governed.get(_table_of(r))
                if table is None:
                    continue
                function = _function_of(r, "filter")
                columns = _columns(_first(r, "filter_col_usage", "target_columns"))
                out.append(self.keep(RowFilterAttachment(table, function, columns, "")))
            for r in self.info_schema(catalog, "column_masks") or []:
                table = governed.get(_table_of(r))
                if table is None:
                    continue
                using = _columns(_first(r, "mask_col_usage", "using_columns"))
                column = str(r.get("column_name") or "")
                out.append(
                    self.keep(MaskAttachment(table, column, _function_of(r, "mask"), "", using))
                )
        return out

    def tag_assignments(self) -> list[CatalogObject]:
        """The model's governed-tag assignments: column tags from each catalog's
        information_schema.column_tags (one statement), table tags per table."""
        wanted = {
            (o.table.lower(), (o.column or "").lower(), o.tag): o
            for o in self.expected.of(TagAssignment)
        }
        out: list[CatalogObject] = []
        catalogs = sorted({o.table.split(".")[0].lower() for o in wanted.values() if o.column})
        for catalog in catalogs:
            self.progress(f"databricks: column tags in {catalog}")
            for r in self.info_schema(catalog, "column_tags") or []:
                key = (_table_of(r), str(r.get("column_name") or "").lower(), r.get("tag_name"))
                self.column_tags.setdefault(key[:2], {})[str(key[2])] = str(
                    r.get("tag_value") or ""
                )
                o = wanted.get(key)  # type: ignore[arg-type]
                if o is not None:
                    value = str(r.get("tag_value") or "")
                    out.append(self.keep(TagAssignment(o.table, o.column, o.tag, value, "")))
        client = self.run.client
        tables = [o for o in wanted.values() if not o.column]
        found = self.each(
            lambda o: self.attempt(
                f"tags on {o.table}",
                lambda: list(client.entity_tag_assignments.list("tables", o.table)),
            ),
            tables,
        )
        for o, attempt in zip(tables, found, strict=True):
            for t in self.settle(attempt) or []:
                if t.tag_key == o.tag:
                    out.append(
                        self.keep(
                            TagAssignment(o.table, o.column, t.tag_key, t.tag_value or "", "")
                        )
                    )
        return out


def effective_grants(
    client: Any, kind: str, name: str, principal: str | None = None
) -> list[tuple[str, str, str]]:
    """(principal, privilege, where it is granted: "" on the securable itself, else ``schema
    c.s`` / ``catalog c``) of every effective grant on a securable (of ``principal``'s only,
    when given), every page read: ``grants.get_effective`` with ``max_results=0`` (the
    server's page length) and ``next_page_token`` ("does not include inherited permissions"
    is ``grants.get``; the unpaginated form "will be deprecated"). The one pager of it: the
    reader and the stage checks both read grants through it."""
    out: list[tuple[str, str, str]] = []
    token: str | None = None
    seen: set[str] = set()
    while True:
        page = client.grants.get_effective(
            kind, name, max_results=0, page_token=token, principal=principal
        )
        for pa in page.privilege_assignments or []:
            for priv in pa.privileges or []:
                where = ""
                if priv.inherited_from_name:
                    typ = _value(priv.inherited_from_type).lower() or "securable"
                    where = f"{typ} {priv.inherited_from_name}"
                out.append((pa.principal or "", _value(priv.privilege), where))
        token = page.next_page_token
        if not token:
            return out
        if token in seen:
            raise ValueError(f"grants.get_effective named page {token!r} twice")
        seen.add(token)


def _value(v: Any) -> str:
    return str(getattr(v, "value", v) or "")


def _first(row: dict[str, Any], *names: str) -> Any:
    return next((row[n] for n in names if row.get(n) is not None), None)


def _table_of(row: dict[str, Any]) -> str:
    """``catalog.schema.table`` of an information_schema row, whichever names it uses (the
    documentation's ``catalog_name``/``schema_name``, or ``table_catalog``/``table_schema``)."""
    parts = (
        _first(row, "catalog_name", "table_catalog"),
        _first(row, "schema_name", "table_schema"),
        row.get("table_name"),
    )
    return ".".join(str(p or "") for p in parts).lower()


def _function_of(row: dict[str, Any], kind: str) -> str:
    name = str(row.get(f"{kind}_name") or "")
    if name.count(".") == 2:
        return name
    return ".".join(str(row.get(f"{kind}_{p}") or "") for p in ("catalog", "schema")) + f".{name}"


def _columns(text: Any) -> tuple[str, ...]:
    return tuple(c.strip() for c in str(text or "").split(",") if c.strip())


def _abac(p: Any, kind: str, securable: str) -> AbacPolicy:
    is_filter = p.policy_type is not None and "ROW_FILTER" in str(p.policy_type.value)
    opts = p.row_filter if is_filter else p.column_mask
    using = tuple((u.alias or u.constant or "") for u in (opts.using if opts else None) or [])
    return AbacPolicy(
        name=p.name or "",
        securable_type=kind,  # type: ignore[arg-type]
        securable=securable,
        kind="ROW FILTER" if is_filter else "COLUMN MASK",
        function=opts.function_name if opts else "",
        to=tuple(p.to_principals or ()),
        except_=tuple(p.except_principals or ()),
        match_columns=tuple((m.condition or "", m.alias or "") for m in p.match_columns or ()),
        on_column=getattr(opts, "on_column", None),
        using=using,
        comment=p.comment or "",
        when=p.when_condition,
    )
