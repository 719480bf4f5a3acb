"""Snowflake's live reader: what is deployed, read back into catalog objects.

See :mod:`targets.inspect` for what every reader does. Snowflake (docs.snowflake.com/en/
sql-reference): ``SHOW ROW ACCESS POLICIES IN SCHEMA`` / ``SHOW MASKING POLICIES IN SCHEMA``
(columns ``name``, ``database_name``, ``schema_name``, ``owner``, ``comment``), ``DESCRIBE ...
POLICY`` (``name``, ``signature``, ``return_type``, ``body``), ``SHOW USER FUNCTIONS IN
SCHEMA`` (``name``, ``arguments``, ``is_secure``), ``SHOW GRANTS ON FUNCTION`` (``privilege``,
``granted_to``, ``grantee_name``), and per policy ``TABLE(<db>.INFORMATION_SCHEMA.
POLICY_REFERENCES(POLICY_NAME => ...))`` (``POLICY_DB``, ``POLICY_SCHEMA``, ``POLICY_NAME``,
``POLICY_KIND``, ``REF_COLUMN_NAME``, ``REF_ARG_COLUMN_NAMES``, ``TAG_NAME``): the
information-schema function answers at once, where ``ACCOUNT_USAGE`` lags by hours. The role
hierarchy: ``SHOW GRANTS OF ROLE``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from accord.compiler.connect.executor import ExecutionError
from accord.compiler.core.platforms import SNOWFLAKE
from accord.targets import sql as tsql
from accord.targets.identity import parse_body, unparsed
from accord.targets.inspect import (
    Answer,
    InheritedTag,
    LiveCatalog,
    Reader,
    SaltGrant,
    norm_type,
)
from accord.targets.objects import (
    AggregationAttachment,
    AggregationPolicy,
    CatalogObject,
    JoinAttachment,
    JoinPolicy,
    MappingTable,
    MaskAttachment,
    MaskPolicy,
    Param,
    ProjectionAttachment,
    ProjectionPolicy,
    RowFilterAttachment,
    RowFilterPolicy,
    SaltFunction,
    Tag,
    TagAssignment,
)
from accord.targets.snowflake import bulk
from accord.targets.snowflake.ownership import table_owners
from accord.targets.snowflake.truth import exempt_of, mapping_policies


def _sf_name(name: str) -> str:
    return tsql.name_sql(name, SNOWFLAKE.name)


def _sf_literal(value: str) -> str:
    return tsql.literal_sql(value, SNOWFLAKE.name)


def _sf_role(name: str, kind: str = "ROLE") -> str:
    """A role (or a database role ``DB.R``) as the platform answered its name: each part
    quoted exactly (``"drift_reader"``), never upper-cased into another role's name."""
    parts = [name] if kind == "ROLE" else name.split(".")
    return ".".join(
        tsql.render(tsql.exact_ident(_unquoted(p), SNOWFLAKE.name), SNOWFLAKE.name) for p in parts
    )


def _unquoted(name: str) -> str:
    """A name as SHOW output may give it, in double quotes (``"drift_reader"``), unquoted."""
    if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
        return name[1:-1].replace('""', '"')
    return name


def _params(signature: str) -> tuple[Param, ...]:
    """``(A VARCHAR, B NUMBER(38,0))`` as returned by DESCRIBE ... POLICY."""
    inner = signature.strip()
    if inner.startswith("(") and inner.endswith(")"):
        inner = inner[1:-1]
    out, depth, current = [], 0, ""
    for ch in inner:  # commas inside NUMBER(38,0) do not split
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current)
    params = []
    for item in out:
        name, _, typ = item.strip().partition(" ")
        params.append(Param(name.strip('"'), norm_type(typ)))
    return tuple(params)


#: the global privileges a complete Snowflake read needs, and what each one lets the reading
#: role see (docs.snowflake.com/en/sql-reference/functions/policy_references, usage notes;
#: sql-reference/sql/desc-masking-policy; sql-reference/sql/show-privileges: MANAGE GRANTS
#: "implicitly allows its holder to see every object in the account")
SF_GLOBAL = {
    "APPLY MASKING POLICY": (
        "every masking policy's associations and bodies",
        "SHOW MASKING POLICIES, DESCRIBE MASKING POLICY and POLICY_REFERENCES answer only "
        "for the policies it holds APPLY or OWNERSHIP on",
        "drift of the masks (direct and tag-based) of the governed tables",
    ),
    "APPLY ROW ACCESS POLICY": (
        "every row access policy's associations and bodies",
        "SHOW ROW ACCESS POLICIES, DESCRIBE ROW ACCESS POLICY and POLICY_REFERENCES answer "
        "only for the policies it holds APPLY or OWNERSHIP on",
        "drift of the row filters of the governed tables",
    ),
    "APPLY TAG": (
        "every tag of the governance schema",
        "SHOW TAGS lists only the tags it holds a privilege on",
        "drift of the tags and their masking policies",
    ),
}

#: Snowflake's projection, aggregation and join policies, read as the other kinds are:
#: kind -> (SHOW ... POLICIES, the catalog object, its POLICY_REFERENCES' POLICY_KIND, the global
#: APPLY privilege that lets a role see them all). sql-reference/sql/show-projection-policies,
#: show-aggregation-policies, show-join-policies (``name``, ``database_name``, ``schema_name``,
#: ``owner``, ``comment``); desc-projection-policy, desc-aggregation-policy, desc-join-policy
#: (``name``, ``signature``, ``return_type``, ``body``, as for masking policies: UNCONFIRMED
#: beyond ``body``, the one column read); POLICY_KIND AGGREGATION_POLICY and PROJECTION_POLICY as
#: snowflakedb/terraform-provider-snowflake reads them (pkg/sdk/policy_references.go), JOIN_POLICY
#: by the same pattern (UNCONFIRMED); the aggregation policy's entity key and the join policy's
#: allowed join keys in REF_ARG_COLUMN_NAMES (the provider reads the entity key there; the join
#: keys UNCONFIRMED)
CONSTRAINTS: dict[str, tuple[str, type, str, str]] = {
    "PROJECTION": (
        "PROJECTION POLICIES",
        ProjectionPolicy,
        "PROJECTION_POLICY",
        "APPLY PROJECTION POLICY",
    ),
    "AGGREGATION": (
        "AGGREGATION POLICIES",
        AggregationPolicy,
        "AGGREGATION_POLICY",
        "APPLY AGGREGATION POLICY",
    ),
    "JOIN": ("JOIN POLICIES", JoinPolicy, "JOIN_POLICY", "APPLY JOIN POLICY"),
}
SF_GLOBAL.update(
    {
        apply: (
            f"every {kind.lower()} policy's associations and bodies",
            f"SHOW {show}, DESCRIBE {kind} POLICY and POLICY_REFERENCES answer only for the "
            "policies it holds APPLY or OWNERSHIP on",
            f"drift of the {kind.lower()} policies of the governed tables",
        )
        for kind, (show, _, _, apply) in CONSTRAINTS.items()
    }
)

#: POLICY_STATUS of a policy reference that is in effect (a direct mask on a column that a tag
#: also masks reads MULTIPLE_...: the direct one is, user-guide/tag-based-masking-policies)
_SF_STATUS_OK = ("", "ACTIVE", "MULTIPLE_MASKING_POLICY_ASSIGNED_TO_THE_COLUMN")


@dataclass(frozen=True)
class Reference:
    """One row of ``POLICY_REFERENCES`` (sql-reference/functions/policy_references), read:
    the entity it is on (``db.schema.name``) and its domain (``TABLE``, ``TAG``, ...), the
    column, the argument columns (a row filter's, a mask's conditional ones, an aggregation
    policy's entity key, a join policy's allowed join keys), the kind, the status, and for a
    tag-based mask its tag (``db.schema.name``, else "")."""

    entity: str
    domain: str
    column: str
    args: tuple[str, ...]
    kind: str
    status: str
    tag: str


def references(reader: Reader, policy: str, rows: list[dict[str, Any]] | None) -> list[Reference]:
    """The rows of ``policy``'s ``POLICY_REFERENCES`` that are about it (another policy's row is
    ignored and said, :meth:`Reader.about`), read."""

    def dotted(r: dict[str, Any], *keys: str) -> str:
        return ".".join(str(r.get(k) or "") for k in keys)

    out = []
    for r in rows or []:
        named = dotted(r, "policy_db", "policy_schema", "policy_name")
        if not reader.about(named, policy, f"references of {policy}"):
            continue
        args = json.loads(r["ref_arg_column_names"]) if r.get("ref_arg_column_names") else []
        out.append(
            Reference(
                dotted(r, "ref_database_name", "ref_schema_name", "ref_entity_name"),
                str(r.get("ref_entity_domain") or "TABLE").upper(),
                str(r.get("ref_column_name") or ""),
                tuple(args),
                str(r.get("policy_kind") or ""),
                str(r.get("policy_status") or "").upper(),
                dotted(r, "tag_database", "tag_schema", "tag_name") if r.get("tag_name") else "",
            )
        )
    return out


class SnowflakeReader(Reader):
    EDGE_WORDS: ClassVar[dict[str, str]] = {
        "present": "role {parent} is granted to role {child}",
        "absent": "role {parent} is not granted to role {child}",
        "add": "GRANT ROLE {parent} TO ROLE {child}",
        "remove": "REVOKE ROLE {parent} FROM ROLE {child}",
    }

    def information_schema(self, name: str, call: str, what: str) -> list[dict[str, Any]] | None:
        """SELECT * FROM TABLE(<name's database>.INFORMATION_SCHEMA.<call>)."""
        db = _sf_name(name.split(".")[0])
        return self.query(f"SELECT * FROM TABLE({db}.INFORMATION_SCHEMA.{call})", what)

    # ------------------------------------------------------------------ the role hierarchy

    def inheritors(self, role: str, live: LiveCatalog) -> Answer:
        """The roles ``role`` is granted to (``SHOW GRANTS OF ROLE``: columns ``role``,
        ``granted_to``, ``grantee_name``; docs.snowflake.com/en/sql-reference/sql/show-grants),
        or why they are unseen. A role outside the reading role's hierarchy is answered "does
        not exist or not authorized" (002003) like a missing one: with the global MANAGE GRANTS
        (which "implicitly allows its holder to see every object in the account",
        sql-reference/sql/show-privileges) that answer means the role does not exist; without
        it, the role's grantees are unseen (ACC707)."""
        unproven = f"drift of which roles inherit {role}"
        try:
            rows = self.run.query(f"SHOW GRANTS OF ROLE {_sf_name(role)}")
        except ExecutionError as err:
            if "002003" in str(err) and _sees_every_object(live):
                # MANAGE GRANTS sees every role: none such, none inherit it
                return Answer([], None)
            what = f"the grantees of role {role} (SHOW GRANTS OF ROLE)"
            return Answer([], (what, str(err), unproven))
        children, ignored = [], []
        for r in rows:
            answered = str(r.get("role") or role).strip('"')
            if answered.upper() != role.upper():
                # an answer about another role: ignored and said, never taken for this one's
                ignored.append(
                    f"SHOW GRANTS OF ROLE {role}: the platform answered about role {answered}, "
                    f"not {role}; ignored"
                )
                continue
            if str(r.get("granted_to") or "").upper() != "ROLE":
                continue  # a user holds it: not a role-to-role edge
            children.append(str(r.get("grantee_name") or ""))
        if ignored:  # whatever else it said, the answer is not the asked role's whole answer
            what = f"the grantees of role {role} (SHOW GRANTS OF ROLE)"
            why = "the platform's answer was about another role"
            return Answer([], (what, why, unproven), tuple(ignored))
        return Answer(sorted({c for c in children if c}), None)

    # ------------------------------------------------------------------ the reading role

    def _grants_to(self, roles: list[tuple[str, str]]) -> list[list[dict[str, Any]] | None]:
        def show(item: tuple[str, str]) -> Any:
            kind, name = item
            try:
                return self.run.query(f"SHOW GRANTS TO {kind} {_sf_role(name, kind)}")
            except ExecutionError as err:
                return err

        out: list[list[dict[str, Any]] | None] = []
        for (kind, name), rows in zip(roles, self.each(show, roles), strict=True):
            if isinstance(rows, ExecutionError):
                self.cannot_see(
                    f"the privileges of {kind.lower()} {name}",
                    rows,
                    "what the reading role can see",
                )
                out.append(None)
            else:
                out.append(rows)
        return out

    def reader_grants(self, role: str) -> set[tuple[str, str, str]]:
        """(privilege, granted_on, name) of ``role`` and every role and database role granted
        to it, and PUBLIC's (``SHOW GRANTS TO ROLE`` / ``TO DATABASE ROLE``, level by level:
        the role hierarchy). Roles are named exactly as the platform answered them."""
        held: set[tuple[str, str, str]] = set()
        seen: set[tuple[str, str]] = set()
        level = [("ROLE", role), ("ROLE", "PUBLIC")]
        while level:
            level = [r for r in dict.fromkeys(level) if r not in seen]
            seen |= set(level)
            found = self._grants_to(level)
            level = []
            for rows in found:
                for g in rows or []:
                    priv = str(g.get("privilege") or "").upper()
                    on = str(g.get("granted_on") or "").upper().replace(" ", "_")
                    answered = str(g.get("name") or "")
                    name = answered.upper()
                    held.add((priv, on, "" if on == "ACCOUNT" else name.replace('"', "")))
                    if priv == "USAGE" and on in ("ROLE", "DATABASE_ROLE"):
                        level.append(("ROLE" if on == "ROLE" else "DATABASE ROLE", answered))
        return held

    def check_reader(self) -> None:
        """What the reading role can see: CURRENT_ROLE(), its grants and its hierarchy's, and
        for each privilege a complete read needs and the role lacks, what is not proven."""
        rows = self.query("SELECT CURRENT_ROLE() AS ROLE", "the reading role (CURRENT_ROLE())")
        role = str(next(iter(rows[0].values())) or "") if rows else ""
        if not role:
            if rows is not None:
                self.cannot_see(
                    "the reading role",
                    "CURRENT_ROLE() names no role",
                    "what the reading role can see",
                )
            return
        self.coverage.reader = role
        held: dict[tuple[str, str], set[str]] = {}
        for p, o, n in self.reader_grants(role):
            held.setdefault((o, n), set()).add(p)
        privileges: set[str] = set()

        def has(privilege: str, on: str, name: str = "", any_privilege: bool = False) -> bool:
            key = name.upper()
            on_it = held.get((on, key), set())
            found = on_it if any_privilege else on_it & {privilege, "OWNERSHIP"}
            for p in found:
                privileges.add(f"{p} on {on.replace('_', ' ')}{' ' + key if key else ''}")
            return bool(found)

        e = self.expected
        needs_global = {
            "APPLY MASKING POLICY": bool(e.of(MaskPolicy) or e.of(MaskAttachment)),
            "APPLY ROW ACCESS POLICY": bool(e.of(RowFilterPolicy) or e.of(RowFilterAttachment)),
            "APPLY TAG": bool(e.of(Tag)),
            **{apply: bool(e.of(cls)) for _, cls, _, apply in CONSTRAINTS.values()},
        }
        for privilege, needed in needs_global.items():
            if needed and not has(privilege, "ACCOUNT"):
                what, why, unproven = SF_GLOBAL[privilege]
                self.cannot_see(what, f"it lacks the global {privilege} privilege: {why}", unproven)
        sees_every_object = has("MANAGE GRANTS", "ACCOUNT")
        if not sees_every_object and (needs_global["APPLY MASKING POLICY"] or needs_global[
            "APPLY ROW ACCESS POLICY"
        ]):  # fmt: skip
            # whatever global APPLY privilege it holds, SHOW ... POLICIES IN ACCOUNT leaves out
            # a policy whose database and schema it cannot resolve (sql-reference/sql/
            # desc-masking-policy: USAGE on the parent database and schema)
            self.cannot_see(
                "policies in databases and schemas it holds no privilege on",
                "SHOW ... POLICIES IN ACCOUNT lists a policy only to a role that can resolve its "
                "database and schema, whatever global APPLY privilege it holds; the global "
                "MANAGE GRANTS privilege lets it see every object",
                "that no policy of another database is on a governed table or a mapping table",
            )

        def absent(on: str, name: str) -> bool:
            """With MANAGE GRANTS, SHOW lists every object: one it does not list does not
            exist (not deployed yet), which is no gap in what the role sees. Without it a
            missing object and a hidden one answer alike (error 002003)."""
            if not sees_every_object:
                return False
            *parent, leaf = name.split(".")
            where = {"DATABASE": "ACCOUNT", "SCHEMA": "DATABASE", "TABLE": "SCHEMA"}[on]
            scope = f" IN {where} {_sf_name('.'.join(parent))}" if parent else ""
            show = {"DATABASE": "DATABASES", "SCHEMA": "SCHEMAS", "TABLE": "TABLES"}[on]
            try:
                rows = self.run.query(f"SHOW {show} LIKE {_sf_literal(leaf)}{scope}")
            except ExecutionError:
                return bool(parent) and absent(
                    ("DATABASE", "SCHEMA")[len(parent) - 1], ".".join(parent)
                )
            return not any(self.same(str(r.get("name") or ""), leaf) for r in rows)

        gov = e.governance_schema
        schemas = {gov.upper()} | {t.upper().rsplit(".", 1)[0] for t in self.governed_tables()}
        schemas |= {m.name.upper().rsplit(".", 1)[0] for m in e.of(MappingTable)}
        for schema in sorted(schemas):
            db = schema.split(".")[0]
            for on, name in (("DATABASE", db), ("SCHEMA", schema)):
                if not has("USAGE", on, name, any_privilege=True) and not absent(on, name):
                    self.cannot_see(
                        f"{on.lower()} {name}",
                        f"it holds no privilege on {on.lower()} {name}, so nothing in it resolves "
                        "(error 002003: does not exist or not authorized)",
                        f"drift of what {schema} holds",
                    )
                    break
        for m in e.of(MappingTable):
            if not has("SELECT", "TABLE", m.name) and not absent("TABLE", m.name):
                self.no_select.add(m.name.lower())
                self.cannot_see(
                    f"the rows of mapping table {m.name}",
                    f"it lacks SELECT on it: GRANT SELECT ON TABLE {_sf_name(m.name)} TO ROLE "
                    f"{_sf_role(role)}",
                    f"drift of {m.name}",
                )
        if e.of(Tag):
            for table in self.governed_tables():
                if not has("SELECT", "TABLE", table, any_privilege=True):
                    self.cannot_see(
                        f"the tags on {table}",
                        "it holds no privilege on the table: TAG_REFERENCES_ALL_COLUMNS answers "
                        "only for a role with access to it",
                        f"drift of {table}'s tags",
                    )
        if e.owner and not has("MANAGE GRANTS", "ACCOUNT"):
            # ownership: SHOW TABLES lists a table only to a role holding a privilege on it
            for kind, table in self.owned_tables():
                if not has("SELECT", "TABLE", table, any_privilege=True):
                    self.cannot_see(
                        f"the owner of {kind} {table}",
                        "SHOW TABLES lists only the tables it holds a privilege on: GRANT "
                        f"REFERENCES ON TABLE {table} TO ROLE {role}, or the global MANAGE GRANTS",
                        f"who owns {table}",
                    )
        if e.of(SaltFunction) and not has("MANAGE GRANTS", "ACCOUNT"):
            for salt in e.of(SaltFunction):
                self.cannot_see(
                    f"salt function {salt.name} and its grants",
                    "SHOW USER FUNCTIONS and SHOW GRANTS ON FUNCTION answer only for functions "
                    "it holds a privilege on (USAGE would let it select the salt); the global "
                    "MANAGE GRANTS privilege lets it see every object",
                    f"that {salt.name} is deployed, SECURE and callable by its owner only",
                )
        owned = [
            t
            for t in self.governed_tables()
            if ("TABLE", t.upper()) in held and "OWNERSHIP" in held[("TABLE", t.upper())]
        ]
        if owned and self.coverage.reader.upper() != "ACCOUNTADMIN":
            self.coverage.note(
                f"the reading role owns {len(owned)} governed table(s) ({owned[0]}"
                f"{', ...' if len(owned) > 1 else ''}): that is the simulator's privilege (probe "
                "--live --simulate), more than a drift reader needs"
            )
        self.coverage.privileges = sorted(privileges)

    # ------------------------------------------------------------------ the read

    def _show(self, show: str, where: str) -> list[dict[str, Any]]:
        return self.query(f"SHOW {show} IN {where}", f"SHOW {show} IN {where}") or []

    def read(self) -> LiveCatalog:
        self.check_reader()
        gov, objects, live = self.start()
        judged = self.judges_owners()
        self.progress(f"snowflake: policies in {gov}")
        kinds = (("ROW ACCESS", "ROW ACCESS POLICIES"), ("MASKING", "MASKING POLICIES"))
        kinds += tuple((k, show) for k, (show, *_) in CONSTRAINTS.items())
        defined: list[tuple[str, str, dict[str, Any]]] = []
        for kind, show in kinds:
            for row in self._show(show, f"SCHEMA {_sf_name(gov)}"):
                schema = f"{row.get('database_name', '')}.{row.get('schema_name', '')}"
                if self.about(schema, gov, f"SHOW {show} IN SCHEMA {gov}"):
                    defined.append((kind, f"{schema}.{row.get('name', '')}", row))
                    if judged:  # the owner column of SHOW ... POLICIES
                        policy = f"{kind.lower()} policy"
                        self.owned(live, policy, defined[-1][1], str(row.get("owner") or ""))
        described = bulk.definitions(self, defined)
        for (kind, name, row), desc in zip(defined, described, strict=True):
            if not desc:
                continue
            d = desc[0]
            body = parse_body(str(d["body"]), self.platform)
            if body is None:
                self.cannot_see(name, unparsed(str(d["body"])), f"drift of {name}")
                continue
            comment = row.get("comment") or ""
            if kind == "ROW ACCESS":
                obj: CatalogObject = RowFilterPolicy(
                    name, _params(d["signature"]), body, None, comment
                )
            elif kind in CONSTRAINTS:
                obj = CONSTRAINTS[kind][1](name, body, comment)
            else:
                obj = MaskPolicy(
                    name,
                    _params(d["signature"]),
                    norm_type(d["return_type"]),
                    body,
                    "",
                    "",
                    comment,
                )
            objects.append(self.keep(obj))
        self.salts(gov, objects, live)
        tag_policies = self.references(objects, live)
        if self.expected.of(Tag):
            objects += self.tags(gov, tag_policies, live)
        if judged:
            table_owners(self, live, objects)
        return self.finish(live, objects)

    def salts(self, gov: str, objects: list[CatalogObject], live: LiveCatalog) -> None:
        """Salt functions (SHOW USER FUNCTIONS IN SCHEMA, once) and who may call each (SHOW
        GRANTS ON FUNCTION, one a salt); each grantee with its kind (``granted_to``)."""
        self.progress(f"snowflake: salt functions in {gov}")
        wanted = {s.name.upper(): s for s in self.expected.of(SaltFunction)}
        found = []
        for row in self._show("USER FUNCTIONS", f"SCHEMA {_sf_name(gov)}"):
            schema = f"{row.get('catalog_name', '')}.{row.get('schema_name', '')}"
            name = f"{schema}.{row.get('name', '')}"
            if not self.about(schema, gov, f"SHOW USER FUNCTIONS IN SCHEMA {gov}"):
                continue
            if name.upper() not in wanted:
                continue
            objects.append(self.keep(SaltFunction(name, "", "")))
            if str(row.get("is_secure", "")).upper() != "Y":
                live.insecure_salts.append(name)
            found.append(name)
        grants = self.each(
            lambda n: self.query(f"SHOW GRANTS ON FUNCTION {_sf_name(n)}()", f"grants on {n}"),
            found,
        )
        exposed: list[tuple[str, str, str, str]] = []
        for name, rows in zip(found, grants, strict=True):
            for g in rows or []:
                if g["privilege"] == "OWNERSHIP":
                    live.salt_owners[name] = g["grantee_name"]
                elif g["privilege"] in ("USAGE", "ALL"):
                    kind = str(g.get("granted_to") or "ROLE").upper().replace(" ", "_")
                    exposed.append((name, g["privilege"], g["grantee_name"], kind))
        roles = {who for _, _, who, kind in exposed if kind == "ROLE"}
        owners = {n: o for n, o in live.salt_owners.items() if self.expected.owner}
        # whether PUBLIC holds an owner other than the expected one (the expected one is asked
        # nothing: it owns the policies that call the salt)
        other = {o for o in owners.values() if not self.same(o, self.expected.owner or "")}
        roles = sorted(roles | other)
        holders = dict(zip(roles, self.each(self._public_holds, roles), strict=True))
        public = "granted to PUBLIC: every user of the account"
        for name, privilege, who, kind in exposed:
            reach = public if holders.get(who) else ""
            live.salt_grants.append(SaltGrant(name, privilege, who, kind=kind, reach=reach))
        for name, owner in sorted(owners.items()):
            self.owned(live, "salt function", name, owner, public if holders.get(owner) else "")

    def _public_holds(self, role: str) -> bool:
        """Whether PUBLIC holds ``role`` (``SHOW GRANTS OF ROLE``: the roles and users it is
        granted to), so that every user may use what it may."""
        if SNOWFLAKE.is_everyone(role):
            return True
        try:
            rows = self.run.query(f"SHOW GRANTS OF ROLE {_sf_name(role)}")
        except ExecutionError:
            return False
        return any(str(r.get("grantee_name") or "").upper() == "PUBLIC" for r in rows)

    def references(self, objects: list[CatalogObject], live: LiveCatalog) -> dict[str, list[str]]:
        """Every association of every policy in the account on a governed table: SHOW ... IN
        ACCOUNT once a kind, then POLICY_REFERENCES(POLICY_NAME => ...) once a policy (round
        trips grow with policies, not with tables). Returns tag -> its masking policies (the
        rows whose REF_ENTITY_DOMAIN is TAG)."""
        self.progress("snowflake: policy references")
        governed = {t.upper(): t for t in self.governed_tables()}
        # the mapping tables too: a policy on one hides grant rows (mapping_policies)
        governed |= {m.name.upper(): m.name for m in self.expected.of(MappingTable)}
        policies = []
        shows = ["ROW ACCESS POLICIES", "MASKING POLICIES"]
        shows += [show for show, *_ in CONSTRAINTS.values()]
        for show in shows:
            for row in self._show(show, "ACCOUNT"):
                policies.append(
                    f"{row.get('database_name', '')}.{row.get('schema_name', '')}."
                    f"{row.get('name', '')}"
                )
                if exempt_of(row):
                    live.exempt.append(policies[-1])
        policies = sorted(set(policies))
        answers = bulk.references(
            self,
            policies,
            lambda p: self.information_schema(
                p, f"POLICY_REFERENCES(POLICY_NAME => {_sf_literal(p)})", f"references of {p}"
            ),
        )
        tag_policies: dict[str, list[str]] = {}
        by_tag: dict[tuple[str, str], str] = {}
        direct: list[tuple[str, str, str, str]] = []
        for policy, rows in zip(policies, answers, strict=True):
            for ref in references(self, policy, rows):
                if ref.domain == "TAG":
                    tag_policies.setdefault(ref.entity.upper(), []).append(policy)
                    continue
                table = governed.get(ref.entity.upper())
                if table is None:
                    continue  # a table the model does not govern
                column, args, status = ref.column, ref.args, ref.status
                if ref.kind == "ROW_ACCESS_POLICY":
                    objects.append(self.keep(RowFilterAttachment(table, policy, args, "")))
                elif ref.kind == "MASKING_POLICY" and ref.tag:
                    by_tag[(table.upper(), column.upper())] = (
                        f"tag {ref.tag}'s masking policy {policy}"
                    )
                    continue
                elif ref.kind == "MASKING_POLICY":
                    objects.append(self.keep(MaskAttachment(table, column, policy, "", args)))
                    direct.append((table, column, policy, status))
                elif ref.kind == "PROJECTION_POLICY":
                    objects.append(self.keep(ProjectionAttachment(table, column, policy, "")))
                elif ref.kind == "AGGREGATION_POLICY":
                    objects.append(self.keep(AggregationAttachment(table, policy, "", args)))
                elif ref.kind == "JOIN_POLICY":
                    objects.append(self.keep(JoinAttachment(table, policy, "", args)))
                if status not in _SF_STATUS_OK:
                    where = f"{table}.{column}" if column else table
                    live.not_in_effect.append(f"{policy} on {where}: POLICY_STATUS {status}")
        for table, column, _, _ in direct:
            over = by_tag.get((table.upper(), column.upper()))
            if over is not None:
                live.overrides[f"{table}.{column}".upper()] = over
        mapping_policies(self, objects)
        return tag_policies

    def tags(
        self, gov: str, tag_policies: dict[str, list[str]], live: LiveCatalog
    ) -> list[CatalogObject]:
        """Tags of the governance schema (SHOW TAGS), the masking policies set on them (the
        TAG rows of the policies' references), and their assignments on the governed tables'
        columns (TAG_REFERENCES_ALL_COLUMNS, one a table, bounded by ``--jobs``): a column's
        own tag (LEVEL COLUMN, set by hand) is an assignment; one it inherits from its table or
        gets by propagation is reported as inherited, never taken for its own."""
        self.progress(f"snowflake: tags in {gov}")
        found: dict[str, Tag] = {}
        for row in self.query(f"SHOW TAGS IN SCHEMA {_sf_name(gov)}", "SHOW TAGS") or []:
            schema = f"{row.get('database_name', '')}.{row.get('schema_name', '')}"
            if not self.about(schema, gov, f"SHOW TAGS IN SCHEMA {gov}"):
                continue
            name = f"{schema}.{row.get('name', '')}"
            allowed = tuple(json.loads(row["allowed_values"])) if row.get("allowed_values") else ()
            policies = tuple(sorted(tag_policies.get(name.upper(), [])))
            found[name.upper()] = Tag(name, allowed, policies, row.get("comment") or "")
        out: list[CatalogObject] = [self.keep(t) for t in found.values()]
        tables = self.governed_tables()
        answers = bulk.tag_references(
            self,
            tables,
            gov,
            lambda t: self.information_schema(
                t, f"TAG_REFERENCES_ALL_COLUMNS({_sf_literal(t)}, 'table')", f"tags on {t}"
            ),
        )
        for table, rows in zip(tables, answers, strict=True):
            for r in rows or []:
                entity = ".".join(
                    str(r.get(k) or "") for k in ("object_database", "object_schema", "object_name")
                )
                if not self.about(entity, table, f"tags on {table}"):
                    continue
                tag = f"{r['tag_database']}.{r['tag_schema']}.{r['tag_name']}"
                if tag.upper() not in found:  # tags of the governance schema only
                    continue
                level = str(r.get("level") or "COLUMN").upper()
                method = str(r.get("apply_method") or "MANUAL").upper()
                if level == "COLUMN" and method == "MANUAL":
                    out.append(
                        self.keep(TagAssignment(table, r["column_name"], tag, r["tag_value"], ""))
                    )
                else:
                    got = InheritedTag(
                        table, str(r["column_name"]), tag, str(r["tag_value"]), method, level
                    )
                    live.inherited.append(got)
                    live.inherited_tags.append(got.words())
        return out


def _sees_every_object(live: LiveCatalog) -> bool:
    held = live.coverage.privileges if live.coverage is not None else []
    return "MANAGE GRANTS on ACCOUNT" in held
