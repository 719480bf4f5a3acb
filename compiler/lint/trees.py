"""Syntax-tree analysis shared by the policy-file rules and the SQL rules.

Every question a rule asks of SQL is answered here, on sqlglot trees, never on raw text: which
role-context functions a predicate calls (ACC101), whether it checks workspace-local groups
(ACC102), which hash functions a mask calls and what goes into them (ACC201, ACC203, ACC204,
ACC205). The same functions read hand-written ``row_filter.expression`` predicates, the bodies
accord lowers the model to (``targets.objects``), and scanned policy DDL.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

#: Snowflake context functions that ignore secondary roles (ACC101).
_ROLE_NODES: dict[type[exp.Expression], str] = {
    exp.CurrentRole: "CURRENT_ROLE",
    exp.CurrentAvailableRoles: "CURRENT_AVAILABLE_ROLES",
}

#: Snowflake context functions that evaluate the executing role, not the session's (ACC103):
#: sqlglot leaves them as anonymous functions.
_INVOKER_CALLS: dict[str, str] = {
    "invoker_role": "INVOKER_ROLE",
    "is_granted_to_invoker_role": "IS_GRANTED_TO_INVOKER_ROLE",
}

#: Hash functions: display name by sqlglot node class. Strong ones first.
_STRONG: dict[type[exp.Expression], str] = {exp.SHA2: "SHA2", exp.SHA2Digest: "SHA2_BINARY"}
_WEAK: dict[type[exp.Expression], str] = {
    exp.MD5: "MD5",
    exp.MD5Digest: "MD5_BINARY",
    exp.MD5NumberLower64: "MD5_NUMBER_LOWER64",
    exp.MD5NumberUpper64: "MD5_NUMBER_UPPER64",
    exp.SHA: "SHA1",
    exp.SHA1Digest: "SHA1_BINARY",
}
#: Hash functions by name, for calls built or left as anonymous functions (accord's own
#: lowering builds ``SHA2(...)`` that way): name -> (display name, weak?).
_BY_NAME: dict[str, tuple[str, bool]] = {
    "SHA2": ("SHA2", False),
    "SHA2_HEX": ("SHA2", False),
    "SHA2_BINARY": ("SHA2_BINARY", False),
    "MD5": ("MD5", True),
    "MD5_HEX": ("MD5", True),
    "MD5_BINARY": ("MD5_BINARY", True),
    "SHA": ("SHA1", True),
    "SHA1": ("SHA1", True),
    "SHA1_HEX": ("SHA1", True),
    "SHA1_BINARY": ("SHA1_BINARY", True),
}
#: Non-cryptographic hashes sqlglot leaves as anonymous functions, per dialect.
_WEAK_ANONYMOUS: dict[str, frozenset[str]] = {
    "snowflake": frozenset({"HASH"}),
    "databricks": frozenset({"HASH", "XXHASH64", "CRC32"}),
}

#: Wrappers that keep a value the same value for hashing purposes (casts, trimming, case).
_TRANSPARENT = (exp.Cast, exp.TryCast, exp.Trim, exp.Upper, exp.Lower, exp.ToChar, exp.Paren)


def start_offset(node: exp.Expression) -> int | None:
    """Offset of ``node`` in the text it was parsed from: its own, else its leftmost
    descendant's (sqlglot records positions on tokens that became leaves)."""
    start = node.meta.get("start") if node.meta else None
    if isinstance(start, int):
        return start
    found = [s for n in node.walk() if n.meta and isinstance(s := n.meta.get("start"), int)]
    return min(found) if found else None


def _in_source_order(nodes: list[exp.Expression]) -> list[exp.Expression]:
    return sorted(nodes, key=lambda n: start_offset(n) or 0)


# --------------------------------------------------------------------------------------------
# role checks


def role_calls(tree: exp.Expression) -> list[tuple[exp.Expression, str]]:
    """CURRENT_ROLE() and CURRENT_AVAILABLE_ROLES() calls, in source order (ACC101)."""
    nodes = _in_source_order(list(tree.find_all(*_ROLE_NODES)))
    return [(node, _ROLE_NODES[type(node)]) for node in nodes]


def invoker_role_calls(tree: exp.Expression) -> list[tuple[exp.Expression, str]]:
    """INVOKER_ROLE() and IS_GRANTED_TO_INVOKER_ROLE(...) calls, in source order (ACC103)."""
    nodes = [n for n in tree.find_all(exp.Anonymous) if n.name.lower() in _INVOKER_CALLS]
    return [(node, _INVOKER_CALLS[node.name.lower()]) for node in _in_source_order(nodes)]


def workspace_group_calls(tree: exp.Expression) -> list[exp.Expression]:
    """is_member(...) calls: workspace-local group checks (ACC102)."""
    return _in_source_order(
        [n for n in tree.find_all(exp.Anonymous) if n.name.lower() == "is_member"]
    )


# --------------------------------------------------------------------------------------------
# hashes


def hash_name(node: exp.Expression, dialect: str) -> tuple[str, bool] | None:
    """(display name, weak?) when ``node`` is a call of a hash function, else None."""
    kind = type(node)
    if kind in _STRONG:
        return _STRONG[kind], False
    if kind in _WEAK:
        return _WEAK[kind], True
    if isinstance(node, exp.Anonymous):
        name = node.name.upper()
        if name in _BY_NAME:
            return _BY_NAME[name]
        if name in _WEAK_ANONYMOUS.get(dialect, ()):
            return name, True
    return None


def weak_hashes(tree: exp.Expression, dialect: str) -> list[tuple[exp.Expression, str]]:
    """MD5, SHA1 and non-cryptographic hash calls, in source order (ACC204)."""
    found = []
    for node in tree.find_all(exp.Func):
        named = hash_name(node, dialect)
        if named is not None and named[1]:
            found.append((node, named[0]))
    return sorted(found, key=lambda f: start_offset(f[0]) or 0)


#: One piece of a hash input: ("value", name) the masked value; ("literal", text) a constant;
#: ("call", name) a call of a function that is not the platform's (a salt function);
#: ("secret", sql) a secret the platform reads (Databricks ``secret(scope, key)``); ("public",
#: sql) a context or built-in function of nothing secret (``CURRENT_ACCOUNT()``,
#: ``current_catalog()``); ("column", name) another column or argument; ("other", sql) anything
#: else.
Part = tuple[str, str]

#: the kinds of piece that are a secret: only these make a hash salted (ACC201)
SECRET_KINDS = frozenset({"call", "secret"})

#: Context functions sqlglot leaves anonymous: their value is known to anyone who may query
#: the platform (the account, the catalog, the session), so they are never a salt. Any other
#: call sqlglot knows as a built-in (``CURRENT_DATABASE``, ``UPPER``...) is not a salt either,
#: unless a salt is among its arguments.
_CONTEXT_NAMES = frozenset(
    {
        # Snowflake
        "current_account_name",
        "current_organization_name",
        "current_organization_user",
        "current_role_type",
        "current_schemas",
        "current_secondary_roles",
        "current_client",
        "current_ip_address",
        "current_statement",
        "current_transaction",
        "invoker_role",
        "invoker_share",
        "is_role_in_session",
        "is_database_role_in_session",
        "is_granted_to_invoker_role",
        "is_application_role_in_session",
        "last_query_id",
        "last_transaction",
        "getvariable",
        # Databricks
        "current_metastore",
        "current_recipient",
        "is_member",
        "is_account_group_member",
        "user",
        "session_user",
        "version",
    }
)


def _is_context_name(name: str) -> bool:
    """A platform context function by name (``CURRENT_*`` is never a user's salt function)."""
    name = name.lower()
    return name in _CONTEXT_NAMES or name.startswith("current_")


@dataclass(frozen=True)
class HashCall:
    node: exp.Expression
    function: str
    weak: bool
    #: what decides the digest besides the input: the function and its bit length
    algorithm: tuple[str, ...]
    #: the concatenated pieces of the input, in order (empty string literals left out)
    parts: tuple[Part, ...]

    @property
    def hashes_value(self) -> bool:
        return any(kind == "value" for kind, _ in self.parts)

    @property
    def unsalted(self) -> bool:
        """Nothing secret is mixed into the masked value: it is hashed alone (through casts,
        trimming or case at most), or with public pieces only (other columns of the row, the
        account, catalog or session). Literals alone are ACC205, not this."""
        if not self.hashes_value or self.literal_salt:
            return False
        return not any(kind in SECRET_KINDS for kind, _ in self.parts)

    @property
    def public(self) -> tuple[str, ...]:
        """The pieces mixed into the value that anyone who may query the platform knows."""
        shown = {"column": "column {}", "public": "{}", "other": "{}"}  # literals: ACC205
        return tuple(shown[kind].format(text) for kind, text in self.parts if kind in shown)

    @property
    def literal_salt(self) -> tuple[str, ...]:
        """The constants mixed into the value, when nothing but constants is (ACC205)."""
        others = [p for p in self.parts if p[0] != "value"]
        if self.hashes_value and others and all(kind == "literal" for kind, _ in others):
            return tuple(text for _, text in others)
        return ()


def _hash_input(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, exp.Anonymous):
        return node.expressions[0] if node.expressions else None
    this = node.args.get("this")
    return this if isinstance(this, exp.Expression) else None


def _algorithm(node: exp.Expression, function: str, dialect: str) -> tuple[str, ...]:
    if function.startswith("SHA2"):
        if isinstance(node, exp.Anonymous):
            length = node.expressions[1] if len(node.expressions) > 1 else None
        else:
            length = node.args.get("length")
        bits = "256"
        if isinstance(length, exp.Literal) and not length.is_string and length.this != "0":
            bits = length.this
        return (function, bits)
    if function in _WEAK_ANONYMOUS.get(dialect, ()):
        return (f"{dialect}:{function}",)  # HASH() differs between the platforms
    return (function,)


def _unwrap(node: exp.Expression) -> exp.Expression:
    while True:
        if isinstance(node, _TRANSPARENT) and isinstance(node.this, exp.Expression):
            node = node.this
        elif (
            isinstance(node, exp.Coalesce)
            and isinstance(node.this, exp.Expression)
            and all(isinstance(e, exp.Literal) for e in node.expressions)
        ):
            node = node.this  # NVL(value, '') is the value
        else:
            return node


def _pieces(node: exp.Expression) -> list[exp.Expression]:
    node = _unwrap(node)
    if isinstance(node, exp.DPipe):
        return _pieces(node.this) + _pieces(node.expression)
    if isinstance(node, exp.ConcatWs) and node.expressions:  # a subclass of Concat
        separator, *items = node.expressions
        out: list[exp.Expression] = []
        for i, item in enumerate(items):
            if i:
                out.append(separator)
            out.extend(_pieces(item))
        return out
    if isinstance(node, exp.Concat):
        return [p for e in node.expressions for p in _pieces(e)]
    return [node]


def _call_name(node: exp.Expression) -> str | None:
    """``a.b.f()`` -> ``a.b.f``; a plain call -> its name; anything else None."""
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
        return f"{node.this.sql()}.{node.expression.name}".replace('"', "").lower()
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return None


def _user_call(node: exp.Expression) -> bool:
    """A call of a function the platform does not define: a qualified call (``a.b.f()``), or
    an unqualified one sqlglot does not know that is not a context function."""
    if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
        return True
    return isinstance(node, exp.Anonymous) and not _is_context_name(node.name)


def _holds_secret(node: exp.Expression) -> bool:
    """``node`` reads a secret somewhere: a user function's call or the platform's secret()."""
    return any(isinstance(n, exp.Secret) or _user_call(n) for n in node.walk())


def _classify(node: exp.Expression, value: str | None, seen_value: list[bool]) -> Part | None:
    if isinstance(node, exp.Literal):
        return ("literal", node.this) if node.this != "" else None
    if isinstance(node, exp.Column) and not node.table:
        name = node.name
        if (value is not None and name.lower() == value.lower()) or (
            value is None and not seen_value[0]
        ):
            seen_value[0] = True
            return ("value", name)
        return ("column", name)
    if isinstance(node, exp.Column):
        return ("column", node.sql())
    if isinstance(node, exp.Secret):
        return ("secret", node.sql())
    called = _call_name(node)
    if called is not None and _user_call(node):
        return ("call", called)
    if _holds_secret(node):  # SUBSTR(gov.pol.salt(), 1, 16), a CASE around a salt
        return ("call", called or node.sql())
    if called is not None:
        return ("public", f"{called.upper()}()")
    return ("other", node.sql())


def hash_calls(tree: exp.Expression, value: str | None, dialect: str) -> list[HashCall]:
    """Every hash call of ``tree`` and what its input is made of, in source order.

    ``value`` is the masked value: the first parameter of the mask. When the signature is not
    known (``ALTER ... SET BODY``), the first unqualified column of each input stands for it."""
    out = []
    hashes = [n for n in tree.find_all(exp.Func) if hash_name(n, dialect) is not None]
    for node in _in_source_order(hashes):
        named = hash_name(node, dialect)
        assert named is not None
        source = _hash_input(node)
        if source is None:
            continue
        seen = [False]
        parts = tuple(
            part for piece in _pieces(source) if (part := _classify(piece, value, seen)) is not None
        )
        out.append(HashCall(node, named[0], named[1], _algorithm(node, named[0], dialect), parts))
    return out
