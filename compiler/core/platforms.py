"""The catalog platforms accord governs and their facts: named once.

Every module that needs to know something about a platform (how it folds an identifier, the
SQL string type, what kind of identity its policies check, which function checks membership,
which identities stand for every user) reads it here, from :func:`facts`, rather than
comparing the platform's name with a string. The standard library only, so that every layer
may read it (the policy format, the SQL scanner, the connections, the meaning of the model)
and linting policy files imports neither the scanner nor sqlglot to know them. The platform's
*parts* (its target, migration SQL, live reader, Terraform resources, stage checks) are bound
one layer up, in :mod:`accord.targets.platform`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: a catalog platform, as the policy format spells it
CatalogPlatform = Literal["snowflake", "databricks"]

#: every catalog platform, in accord's order (output directories, plan stages, messages)
PLATFORMS: tuple[CatalogPlatform, ...] = ("snowflake", "databricks")

#: the dialects SQL files are read in (the scanner, ``accord lint --dialect``): one per
#: platform, named by it
DIALECTS: tuple[str, ...] = PLATFORMS


@dataclass(frozen=True)
class PlatformFacts:
    """What accord knows of one platform without reading any of its SQL."""

    #: the name the policy format uses (``platform: snowflake``)
    name: CatalogPlatform
    #: the platform's own name, for messages
    title: str
    #: the sqlglot dialect its SQL is parsed and written in
    dialect: str
    #: the type of a string column or parameter
    string_type: str
    #: what a principal's identity is on the platform: a role, or an account group
    principal_kind: Literal["role", "group"]
    #: the function a compiled policy checks membership of an identity with
    member_function: str
    #: unquoted identifiers are stored upper-case (Snowflake) or lower-case (Databricks)
    folds_upper: bool
    #: identities every user of the platform holds (folded as :meth:`fold_identity` folds):
    #: Snowflake ``PUBLIC`` (granted to every role); Databricks ``account users`` (every
    #: account user) and the workspace ``users`` group
    everyone: tuple[str, ...]
    #: function names as the platform's SQL writes them (sqlglot's ``normalize_functions``)
    function_case: Literal["upper", "lower"]
    #: masking policies may be set on tags (Snowflake tag-based masking,
    #: user-guide/tag-based-masking-policies): a tag then carries them, one per data type
    tag_masking: bool
    #: a tag assignment or an ABAC policy takes effect only after a while ("it can take a few
    #: minutes for the change to take effect", unity-catalog/abac/requirements): a plan hands
    #: table-level protection over only in a later stage
    tags_take_effect_later: bool
    #: CREATE OR REPLACE of a policy is refused while it is attached
    #: (sql-reference/sql/alter-row-access-policy): an attached policy changes in place
    replace_refused_while_attached: bool
    #: compute runs on versioned runtimes, some too old to apply filters and masks (ACC401)
    versioned_runtimes: bool
    #: platform style -> what enforces rows and what masks columns, in words (analyze)
    enforcers: dict[str, tuple[str, str]]
    #: a quoted identifier keeps its case (Snowflake); else names are case-insensitive quoted
    #: or not (Databricks)
    quoted_case_sensitive: bool
    #: the kinds of retrieval index the platform has (``indexes.<name>.kind``)
    index_kinds: tuple[str, ...]
    #: a view that decides access per caller is a secure view (its definition is hidden from
    #: who may query it); else a dynamic view
    secure_views: bool
    #: a function body may qualify a parameter with the function's name (``f.param``)
    qualified_parameters: bool
    #: the policies beside row filters and masks the platform has, as the policy format names
    #: them: Snowflake's projection (per column), aggregation and join policies (per table;
    #: sql-reference/sql/create-projection-policy, create-aggregation-policy, create-join-policy)
    constraint_policies: tuple[str, ...] = ()
    #: ``substr(s, 0, n)`` starts at the first character, as position 1 does (Spark SQL, which
    #: Databricks SQL descends from: ``UTF8String.substringSQL``, seen on Spark 4.2); DuckDB's
    #: ``substring`` counts position 0 as the one before the first
    substring_zero_is_first: bool = False
    #: the format's ``platforms.<p>.style`` values: the plain one (the default: a policy
    #: attached to each column or table) and the one driven by governance tags (Snowflake's
    #: tag-based masking, Databricks' ABAC policies)
    styles: tuple[str, str] = ("column", "tag")

    def fold(self, name: str) -> str:
        """An unquoted identifier as the platform stores it (a table, column or role name)."""
        return name.upper() if self.folds_upper else name.lower()

    def fold_identity(self, name: str) -> str:
        """An identity's name as the platform compares it: Snowflake role names are
        identifiers (upper-case); Databricks group names are compared without regard to case
        (hierarchy reads and ``is_account_group_member``)."""
        return name.upper() if self.folds_upper else name.casefold()

    def resolve(self, name: str, quoted: bool = False) -> str:
        """A name as the platform resolves it: a quoted one as written where quoting keeps
        case, else folded."""
        return name if quoted and self.quoted_case_sensitive else self.fold(name)

    def stored_identity(self, name: str) -> str:
        """An identity's name as the platform stores it when it was created unquoted: a
        Snowflake role upper-case; a Databricks group as written (whether its membership check
        compares names without regard to case is not documented: the case-sensitive reading is
        the one that can deny)."""
        return name.upper() if self.folds_upper else name

    def is_everyone(self, identity: str) -> bool:
        """Whether ``identity`` is held by every user of the platform."""
        return self.fold_identity(identity) in self.everyone

    @property
    def other(self) -> PlatformFacts:
        """The other platform of the mesh (cross-platform messages)."""
        return FACTS[DATABRICKS.name if self.name == SNOWFLAKE.name else SNOWFLAKE.name]


SNOWFLAKE = PlatformFacts(
    name="snowflake",
    title="Snowflake",
    dialect="snowflake",
    string_type="VARCHAR",
    principal_kind="role",
    member_function="IS_ROLE_IN_SESSION",
    folds_upper=True,
    everyone=("PUBLIC",),
    function_case="upper",
    tag_masking=True,
    tags_take_effect_later=False,
    replace_refused_while_attached=True,
    versioned_runtimes=False,
    enforcers={
        "column": ("row access policy", "masking policies"),
        "tag": ("row access policy", "masking policies"),
    },
    quoted_case_sensitive=True,
    index_kinds=("cortex_search",),
    secure_views=True,
    qualified_parameters=False,
    constraint_policies=("projection", "aggregation", "join"),
)
DATABRICKS = PlatformFacts(
    name="databricks",
    title="Databricks",
    dialect="databricks",
    string_type="STRING",
    principal_kind="group",
    member_function="is_account_group_member",
    folds_upper=False,
    everyone=("account users", "users"),
    function_case="lower",
    tag_masking=False,
    tags_take_effect_later=True,
    replace_refused_while_attached=False,
    versioned_runtimes=True,
    enforcers={
        "table": ("row filter", "column masks"),
        "abac": ("ABAC row filter", "ABAC column masks"),
    },
    quoted_case_sensitive=False,
    index_kinds=("vector_search",),
    secure_views=False,
    qualified_parameters=True,
    substring_zero_is_first=True,
    styles=("table", "abac"),
)

#: platform name -> its facts, in accord's order
FACTS: dict[str, PlatformFacts] = {f.name: f for f in (SNOWFLAKE, DATABRICKS)}

#: platform -> the name of the sqlglot dialect its SQL is parsed and written in
SQLGLOT_DIALECTS: dict[str, str] = {name: f.dialect for name, f in FACTS.items()}


def facts(platform: str) -> PlatformFacts:
    """The facts of ``platform`` (a name the policy format allows); KeyError otherwise."""
    return FACTS[platform]


def catalog_facts(platform: str) -> PlatformFacts | None:
    """The facts of ``platform``, or None for a surface with no catalog (``platform: none``)."""
    return FACTS.get(platform)
