"""The session of ``accord lint``: which paths are what, the repository walk, and the cache.

:func:`lint_paths` reads the configuration (``[tool.accord]``, :mod:`compiler.lint.config`),
sorts the paths given into policy directories, YAML files of one project and SQL files
(walking a repository for its SQL files and its policy directory), and lints each project
and the SQL files together, from the lint-result cache (:mod:`compiler.lint.incremental.cache`) when what
the findings were computed from is unchanged. The SQL checks are handed what they declare
they read of the projects linted beside the files (``sql_reads`` in the rule table: the
mapping tables, from each project's ``platforms`` and ``entitlements``). It returns the
findings, the input errors and the number of files read; the command renders them.

A pre-commit hook: linting policy files imports neither the SQL scanner nor its sqlglot
dialects, and a run answered from the cache imports neither sqlglot nor the model's schema.
So the loader, the validator and the scanner are imported only where a run needs them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import astuple, dataclass, field, replace
from pathlib import Path
from typing import Any

from accord.compiler.core import store
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes
from accord.compiler.lint.checks import REGISTRY, History
from accord.compiler.lint.config import (
    ALWAYS,
    LintConfig,
    Lowering,
    load_config,
    lowerings,
    parse_codes,
)
from accord.compiler.lint.engine import lint_project, lint_sql_batch, load_rules
from accord.compiler.lint.finding import Finding
from accord.compiler.lint.incremental import cache as lint_cache
from accord.compiler.lint.incremental import deps, pieces, verdict
from accord.compiler.lint.inputs.notebooks import (
    is_python_notebook,  # light: no scanner, no sqlglot
)
from accord.compiler.model import loader, parsecache
from accord.compiler.model.loader import (
    directory_files,
    discover,
    display_path,
    named_tree,
    outside_link,
    read_files,
    within,
)
from accord.compiler.model.rules import MAPPING_TABLES, RULE_TABLE, RULES_BY_ID

#: the message of a path that does not exist (printed as ``path: message``)
MISSING = "no such file or directory"


@dataclass(frozen=True)
class LintResult:
    """What a lint session found: every finding (sorted), the input errors that make the run
    exit 2, the number of files read, and the ``fail-on`` threshold in force."""

    findings: list[Finding]
    problems: list[Diagnostic]
    files: int
    fail_on: str
    #: what the configuration silences (printed on every run, cached or not)
    warnings: list[Diagnostic] = field(default_factory=list)
    #: (path, why) of every folder or file a repository walk did not lint
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: why the cache directory was not used (it is not accord's: compiler/core/store.py)
    cache_refused: str | None = None
    #: every setting in force that lowers what fails (named in every format's summary)
    lowered: list[Lowering] = field(default_factory=list)


def lint_paths(
    paths: Sequence[str],
    *,
    fail_on: str | None = None,
    select: str | None = None,
    ignore: str | None = None,
    dialect: str | None = None,
    plans: str | None = None,
    ledger: str | None = None,
    cache: bool = True,
) -> LintResult:
    """Lint ``paths`` (default: the configured policies, else ``policies``). ``select`` and
    ``ignore`` are the command line's comma-separated rules (``select`` replaces the
    configuration's, ``ignore`` adds to it); ``fail_on`` overrides the configuration's. The
    cache is read and, by a run with no input error, written, unless ``cache`` is false.
    Raises UsageError for a bad ``--select`` / ``--ignore`` or a path lint cannot read."""
    store.enable(cache)
    try:
        result = _lint(tuple(paths), fail_on, select, ignore, dialect, History(plans, ledger))
        if not result.problems:
            store.flush()  # only a run that read all of its input writes the cache
        return replace(result, cache_refused=store.refused())
    finally:
        store.enable(False)


def _lint(
    paths: tuple[str, ...],
    fail_on: str | None,
    select: str | None,
    ignore: str | None,
    dialect: str | None,
    history: History,
) -> LintResult:
    problems: list[Diagnostic] = []
    try:
        config = load_config()
    except InputError as err:  # reported with the findings of the default configuration
        problems += err.diagnostics
        config = LintConfig()
    file_config = config
    config = _with_options(config, select, ignore)
    default = config.policies and os.path.relpath(os.path.join(config.root, config.policies))
    given = paths or (default or "policies",)
    walk = Walk()
    directories, yaml_files, sql_files = classify(given, problems, config, walk)
    for f in sql_files:
        if config.force_exclude and config.excluded(f) and f not in walk.excluded:
            walk.excluded.append(f)
    sql_files = [f for f in sql_files if not (config.force_exclude and config.excluded(f))]
    findings: list[Finding] = []
    files = 0
    projects: list[tuple[str | None, list[str] | None, str | None]] = [
        (d, None, None) for d in directories
    ]
    if yaml_files:
        projects.append((None, yaml_files, None))
    projects += [(None, list(found), root) for root, found in walk.orphans]
    # what the selected SQL checks read of the projects linted beside the SQL files
    reads = {i for r in RULE_TABLE if config.selected(r.id) for i in r.sql_reads}
    grants: list[tuple[str | None, ...]] = []
    for directory, yaml, root in projects:
        try:
            documents, unreadable, root_path = _read_project(directory, yaml, root)
            found, count = _lint_project(documents, unreadable, root_path, history, config)
            findings += found
            files += count
        except InputError as err:
            problems += err.diagnostics
            continue
        if sql_files and MAPPING_TABLES in reads:
            grants += _project_grants(documents, root_path)
    if sql_files:
        sql_findings, sql_problems, count = _lint_sql(sql_files, dialect, config, grants)
        findings += sql_findings
        problems += sql_problems
        files += count
    findings = sorted(f for f in findings if not config.ignored_in(f.location.file, f.rule))
    warnings = config_warnings(config, fail_on, walk)
    lowered = lowerings(
        file_config,
        config.select if select is not None else None,
        config.ignore[len(file_config.ignore) :],
        fail_on,
        len(walk.excluded),
    )
    if not files and walk.excluded and not problems:
        where = config.where("exclude")
        problems.append(
            Diagnostic(
                where,
                f"nothing was linted: exclude leaves none of the {len(walk.excluded)} "
                "files to lint",
            )
        )
    skipped = walk.skipped + [(f, "excluded by the configuration") for f in walk.excluded]
    return LintResult(
        findings,
        sorted(set(problems)),
        files,
        fail_on or config.fail_on or "error",
        warnings,
        skipped,
        lowered=lowered,
    )


def config_warnings(config: LintConfig, fail_on: str | None, walk: Walk) -> list[Diagnostic]:
    """What the configuration turns off, said on every run: every error rule deselected (by
    select and ignore, or for some files by ``per-file-ignores``), ``fail-on = "never"``, an ``exclude`` that leaves nothing of a repository walk, a
    ``policies`` outside the configuration's directory."""
    out = []
    errors = [r.id for r in RULE_TABLE if r.severity == "error" and r.id not in ALWAYS]
    if not any(config.selected(r) for r in errors):
        key = "ignore" if config.ignore and not config.select else "select"
        out.append(
            Diagnostic(
                config.where(key),
                "warning: select and ignore disable every error rule (only ACC001 runs)",
            )
        )
    for glob, rules in config.per_file_ignores:
        if all(r in rules for r in errors):
            where = "every file" if not glob.strip("*/") else "the files it matches"
            out.append(
                Diagnostic(
                    config.where(f"per-file-ignores:{glob}"),
                    f"warning: per-file-ignores {glob!r} disables every error rule in {where} "
                    "(only ACC001 runs there)",
                )
            )
    if fail_on is None and config.fail_on == "never":
        out.append(
            Diagnostic(config.where("fail-on"), 'warning: fail-on = "never": lint never fails')
        )
    if walk.walked and len(walk.excluded) >= walk.walked:
        out.append(
            Diagnostic(
                config.where("exclude"),
                f"warning: exclude excludes every file of the repository ({walk.walked})",
            )
        )
    if config.policies is not None:
        root = os.path.realpath(config.root)
        target = os.path.realpath(os.path.join(config.root, config.policies))
        if target != root and not target.startswith(root + os.sep):
            out.append(
                Diagnostic(
                    config.where("policies"),
                    f"warning: policies = {config.policies!r} is outside the repository",
                )
            )
    return out


def _with_options(config: LintConfig, select: str | None, ignore: str | None) -> LintConfig:
    """``--select`` replaces the configured select; ``--ignore`` adds to its ignore."""
    where = Location("<command line>", 1, 1)
    try:
        if select is not None:
            config = replace(config, select=parse_codes(select, where))
        if ignore is not None:
            config = replace(config, ignore=config.ignore + parse_codes(ignore, where))
    except InputError as err:
        raise UsageError(f"--select / --ignore: {err.diagnostics[0].message}") from None
    return config


def exit_code(findings: list[Finding], fail_on: str) -> int:
    """1 when an unsuppressed finding at or above ``fail_on`` remains, else 0."""
    active = [f for f in findings if not f.suppressed]
    if fail_on == "never":
        return 0
    if fail_on == "warning":
        return 1 if active else 0
    return 1 if any(f.severity == "error" for f in active) else 0


# --------------------------------------------------------------------------------------------
# paths


#: folders a repository walk never enters, as docs/lint.md documents (What it reads): hidden folders, dbt's
#: build output and installed packages, and Node's packages; a Python virtual environment is
#: a folder holding ``pyvenv.cfg``. Every folder skipped is reported (``--statistics``, json,
#: sarif), but ``.git``, which no commit can hold.
_SKIPPED_DIRS = {
    "target": "dbt's build output",
    "dbt_packages": "dbt's installed packages",
    "node_modules": "Node packages",
}

#: the sections of the policy format (docs/policy-format.md) but ``version``: a YAML
#: file with one of them at its top level is a policy file (dbt's ``schema.yml`` has none)
_SECTIONS = (
    "datasets",
    "entitlements",
    "indexes",
    "masks",
    "mesh",
    "personas",
    "platforms",
    "principals",
    "probes",
    "surfaces",
    "unmanaged",
)


@dataclass
class Walk:
    """What the repository walks of one run found besides the files to lint."""

    #: (folder or file, why it was not linted)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: files of the walk left out by ``exclude``
    excluded: list[str] = field(default_factory=list)
    #: files the walks found (before ``exclude``)
    walked: int = 0
    #: (root, policy files) found in a repository outside its policy directory
    orphans: list[tuple[str, list[str]]] = field(default_factory=list)
    #: symbolic links that lead outside the tree linted
    refused: list[Diagnostic] = field(default_factory=list)


def classify(
    paths: Sequence[str],
    problems: list[Diagnostic],
    config: LintConfig,
    walk: Walk | None = None,
) -> tuple[list[str], list[str], list[str]]:
    """Policy directories, YAML policy files and SQL files among ``paths``. A directory that
    is a repository (see :func:`is_repository`) has its SQL files linted (dbt macros and
    models, notebooks, scripts), its policy directory (the configured ``policies`` when it
    lies inside, else ``policies/``), and every policy file outside that directory: no way
    of detecting a repository lints less than the policy model in the directory named. Paths
    that do not exist, and symbolic links that lead outside the tree linted, are reported
    and the others still linted."""
    walk = walk if walk is not None else Walk()
    directories, yaml_files, sql_files = [], [], []
    for path in paths:
        lowered = path.lower()
        if os.path.isdir(path):
            inside = _policies_inside(path, config)
            if is_repository(path, inside):
                found = walk_sql(path, walk.skipped)
                walk.walked += len(found)
                for f in found:
                    if config.excluded(f):
                        walk.excluded.append(f)
                    elif _leaves(f, path, problems):
                        sql_files.append(f)
                if inside is not None:
                    directories.append(inside)
                orphans = []
                for f in _policy_files(path, inside):
                    walk.walked += 1
                    if config.excluded(f):
                        walk.excluded.append(f)
                    elif _leaves(f, path, problems):
                        orphans.append(f)
                if orphans:
                    walk.orphans.append((path, orphans))
            else:
                directories.append(path)
        elif not os.path.exists(path):
            problems.append(Diagnostic(Location(path, 1, 1), MISSING))
        elif lowered.endswith(".sql") or is_python_notebook(path):
            if _leaves(path, named_tree(path), problems):
                sql_files.append(path)
        elif lowered.endswith((".yaml", ".yml")):
            if _leaves(path, named_tree(path), problems):
                yaml_files.append(path)
        else:
            raise UsageError(f"{path}: not a policy directory, a YAML policy file or a .sql file")
    return directories, yaml_files, list(dict.fromkeys(sql_files))


#: how a refused symbolic link names the tree (compiler.model.loader.outside_link)
TREE = "the tree linted"


def _leaves(path: str, tree: str, problems: list[Diagnostic]) -> bool:
    """True when ``path`` stays inside ``tree``; a symbolic link (of the file or of a folder
    on its way) that leads outside is reported, located, and not read."""
    if within(path, tree):
        return True
    problems.append(outside_link(path, TREE))
    return False


def _policy_files(path: str, inside: str | None) -> list[str]:
    """The policy files under the repository ``path`` outside its policy directory
    ``inside``: YAML files (as the loader finds them) with a section of the policy format at
    their top level."""
    skip = os.path.abspath(inside) + os.sep if inside is not None else None
    found = []
    for file in discover(Path(path)):
        if skip is not None and os.path.abspath(file).startswith(skip):
            continue
        if _is_policy_file(file):
            found.append(display_path(file, Path(path), path))
    return found


def _is_policy_file(file: Path) -> bool:
    """A section of the policy format at the top level of ``file``, or only ``version`` (a
    file of the model that declares its version); an unreadable file or one the loader cannot
    parse counts, so that lint reports it."""
    try:
        raw = read_bytes(file, "policy file", MAX_FILE_BYTES, str(file))
    except InputError:
        return True
    if not any(s.encode() in raw for s in (*_SECTIONS, "version")) and b"\\" not in raw:
        return False  # a key's name is written out, or escaped in a double-quoted key
    try:
        doc, _ = loader.parse_fast(raw, str(file))
    except InputError:
        return True
    if not isinstance(doc, dict):
        return False
    return any(s in doc for s in _SECTIONS) or set(doc) == {"version"}


def _policies_inside(path: str, config: LintConfig) -> str | None:
    """The policy directory inside ``path``: the configured one, else ``policies/``."""
    candidates = []
    if config.policies:
        configured = os.path.abspath(os.path.join(config.root, config.policies))
        candidates.append(configured)
    candidates.append(os.path.abspath(os.path.join(path, "policies")))
    here = os.path.abspath(path)
    for found in candidates:
        if found != here and found.startswith(here + os.sep) and os.path.isdir(found):
            return display_path(Path(found), Path(here), path)
    return None


def is_repository(path: str, policies: str | None) -> bool:
    """A dbt project; the top of a git work tree (``.git``: a folder, or a file in a worktree
    or a submodule), where ``accord init``'s hook and workflow lint, whatever other YAML the
    repository keeps there (``mkdocs.yml``); or a directory with no YAML file of its own that
    holds a policy directory (configured, or ``policies/``), SQL files, or no YAML at all.
    Anything else (YAML files, at the top or in sub-folders) is a policy directory."""
    names = os.listdir(path)
    if "dbt_project.yml" in names or "dbt_project.yaml" in names or ".git" in names:
        return True
    own_yaml = any(
        n.endswith((".yaml", ".yml"))
        and not n.startswith(".")
        and os.path.isfile(os.path.join(path, n))
        for n in names
    )
    if own_yaml:
        return False
    return policies is not None or bool(walk_sql(path)) or not discover(Path(path))


def _skip_reason(dirpath: str, name: str) -> str | None:
    if name.startswith("."):
        return "a hidden folder"
    if name in _SKIPPED_DIRS:
        return _SKIPPED_DIRS[name]
    full = os.path.join(dirpath, name)
    if os.path.islink(full):
        return "a symbolic link to a folder (not followed)"
    if os.path.isfile(os.path.join(full, "pyvenv.cfg")):
        return "a Python virtual environment (pyvenv.cfg)"
    return None


def walk_sql(root: str, skipped: list[tuple[str, str]] | None = None) -> list[str]:
    """Every ``.sql`` file (and Databricks Python notebook) under ``root``, in a stable order;
    the folders of the documented rule skipped (:data:`_SKIPPED_DIRS`, hidden folders, a
    virtual environment), each added to ``skipped`` with the reason."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        kept = []
        for d in sorted(dirnames):
            reason = _skip_reason(dirpath, d)
            if reason is None:
                kept.append(d)
            elif skipped is not None and d != ".git":
                shown = display_path(Path(dirpath) / d, Path(root), root)
                skipped.append((shown + "/", reason))
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(dirpath) / name
            if name.lower().endswith(".sql") or is_python_notebook(str(path)):
                found.append(display_path(path, Path(root), root))
    return found


# --------------------------------------------------------------------------------------------
# one project, one batch of SQL files


def _selected_ids(config: LintConfig) -> str:
    return ",".join(r for r in sorted(RULES_BY_ID) if config.selected(r))


def _read_project(
    directory: str | None, yaml_files: list[str] | None, root_dir: str | None = None
) -> tuple[list[tuple[bytes, str]], list[Diagnostic], Path]:
    """The files of one project (a directory, or YAML files), those that could not be read,
    and its root."""
    if directory is not None:
        files, root = directory_files(directory, TREE)  # links out of it refused, unread
    else:
        assert yaml_files
        files = [(Path(f), f) for f in yaml_files]
        root = Path(root_dir) if root_dir is not None else Path(yaml_files[0]).parent
    documents, unreadable = read_files(files)
    return documents, unreadable, root


def _project_grants(documents: list[tuple[bytes, str]], root: Path) -> list[tuple[str | None, ...]]:
    """The mapping tables a project compiles (:data:`MAPPING_TABLES`), as rows of
    :class:`~compiler.model.grants.GrantsTable` fields: from the cache when the files' content
    digests are those they were computed from, else from the project's ``platforms`` and
    ``entitlements`` (validated alone: nothing is lowered). A project that does not load
    gives none (linting it reported why)."""
    key = None
    if store.enabled():
        digests = lint_cache.file_digests(documents, loader.parse_document)
        key = lint_cache.grants_key(digests) if digests is not None else None
        payload = store.read("lintgrants", key) if key is not None else None
        rows = lint_cache.grants_from_json(payload) if payload is not None else None
        if rows is not None:
            return rows
    from accord.compiler.model.grants import grants_of  # noqa: PLC0415 - pydantic: not on a cache hit

    try:
        raw = loader.load_documents(documents, root)
    except InputError:
        return []
    found = [astuple(t) for t in grants_of(raw.data)]
    if key is not None:
        store.later("lintgrants", key, lint_cache.grants_to_json(found))
    return found


def _lint_project(
    documents: list[tuple[bytes, str]],
    unreadable: list[Diagnostic],
    root: Path,
    history: History,
    config: LintConfig,
) -> tuple[list[Finding], int]:
    """The findings of one project (its files read by :func:`_read_project`) and its number
    of files; from the cache when the content of the files (what lint reads of them:
    ``parsecache.content_digest``), the selected rules and accord are those the cached
    findings were computed from (compiler/lint/incremental/cache.py). The same as loading the
    project and ``lint_project(project, history, config.selected)``."""
    key = None
    digests = None
    options = "lint\0" + _selected_ids(config)
    if store.enabled() and not unreadable and history == History():
        digests = lint_cache.file_digests(documents, loader.parse_document)
        key = lint_cache.key_of(digests, options) if digests is not None else None
        payload = store.read("lint", key) if key is not None else None
        hit = lint_cache.findings_from_json(payload) if payload is not None else None
        if hit is not None:
            return hit
    raw: loader.RawProject | None = None
    reuse: dict[str, list[Finding]] = {}
    families = None
    index_key = None
    entries: dict[str, str] | None = None
    skeleton = ""
    if key is not None and digests is not None and not _unmanaged_in(documents):
        # incremental lint (compiler/lint/incremental/deps.py): the rules whose inputs this edit did not
        # change keep their findings; the others are re-run on the validated project
        index_key = deps.index_key(digests, options)
        # the input digests from per-file pieces, without loading the project when the
        # pieces can say (compiler/lint/incremental/pieces.py); else from the loaded model
        blobs = {name: blob for blob, name in documents}
        told = pieces.digests(
            digests, lambda n: parsecache.parsed(blobs[n], n, loader.parse_document)
        )
        if told is not None:
            inputs, entries, owners = told.inputs, told.entries, told.owners
        else:
            raw = loader.load_documents(documents, root, unreadable)
            owners = getattr(raw.source, "owners", {})
            inputs = deps.input_digests(raw.data, raw.source.texts, owners, digests)
            entries = verdict.entries(raw.data)
        index = deps.read_index(index_key)
        reuse = deps.reusable(index, digests, inputs)
        families = deps.families(index, reuse)
        # every rule reused and the model valid but for plain columns it checks alone: no
        # validation, no rule run (compiler/lint/incremental/verdict.py)
        if raw is None and told is not None and _skeleton_needs_keys_only(told, inputs):
            keys_only = dict.fromkeys(told.sections)  # skeleton reads the sections' names
            skeleton = verdict.skeleton(keys_only, {}, owners, list(digests), inputs)
        else:
            raw = raw or loader.load_documents(documents, root, unreadable)
            skeleton = verdict.skeleton(raw.data, raw.source.texts, owners, list(digests), inputs)
        view: Any = raw or _Unloaded(documents, root, told)
        fast = _without_validation(
            view, history, config, index, reuse, skeleton, entries, index_key
        )
        if fast is not None:
            findings, computed, past = fast
            store.later("lint", key, lint_cache.findings_to_json(findings, len(digests)))
            deps.write_index(index_key, digests, inputs, computed)
            if entries != past.entries:
                verdict.write(index_key, replace(past, entries=entries or {}))
            return findings, len(digests)
    if raw is None:
        raw = loader.load_documents(documents, root, unreadable)
    from accord.compiler.model.validate import validate_raw  # noqa: PLC0415 - pydantic: not on a cache hit

    project = validate_raw(raw)
    families = _with_ignored(families, verdict.ignores_of(project.model))
    computed: dict[str, list[Finding]] = {}
    findings = lint_project(
        project, history, config.selected, reuse=reuse, computed=computed, families=families
    )
    if key is not None and index_key is not None and digests is not None:
        store.later("lint", key, lint_cache.findings_to_json(findings, len(project.files)))
        deps.write_index(index_key, digests, inputs, computed)
        if entries is not None:
            ignores = verdict.ignores_of(project.model)
            found = verdict.Verdict(skeleton, entries, ignores, len(project.files))
            verdict.write(index_key, found)
    return findings, len(project.files)


def _unmanaged_in(documents: list[tuple[bytes, str]]) -> bool:
    """Whether a file may hold an ``unmanaged`` section (its name, or an escape that may spell
    it): its SQL is linted on every run that is not answered from the cache, and incremental
    lint, whose run without validation reads a skeleton of the model that has no such section,
    stands aside."""
    return any(b"unmanaged" in blob or b"\\" in blob for blob, _ in documents)


def _with_ignored(
    families: set[str] | None, ignores: dict[str, dict[str, dict[str, str]]]
) -> set[str] | None:
    """``families`` and the rule modules of every rule an ``ignore:`` entry names: ACC002 says
    whether the rule of an unused one is a policy rule by the checks registered, so its module
    must be loaded (None: every module)."""
    if families is None:
        return None
    out = set(families)
    for by_name in ignores.values():
        for rules in by_name.values():
            for rule_id in rules:
                if rule_id not in RULES_BY_ID:
                    return None
                out.add(RULES_BY_ID[rule_id].family)
    return out


def _skeleton_needs_keys_only(found: pieces.Digests, inputs: dict[str, str]) -> bool:
    """Whether :func:`verdict.skeleton` reads nothing of the model but its sections' names:
    every section and the governance have a digest, and no section is outside the format."""
    return (
        deps.GOVERNANCE in inputs
        and all(s in inputs for s in deps.SECTIONS if s != "datasets")
        and all(s in deps.SECTIONS for s in found.sections)
    )


class _Unloaded:
    """A project whose pieces gave its digests (:func:`pieces.digests`), not loaded: what the
    run without validation reads of it. The merged project is loaded only when a position is
    asked for (an unused suppression, ACC002)."""

    def __init__(
        self, documents: list[tuple[bytes, str]], root: Path, found: pieces.Digests
    ) -> None:
        self.files = [name for _, name in documents]
        self.origin = Location(documents[0][1], 1, 1)
        self.source = _LoadOnAsk(documents, root)
        self._found = found

    def datasets_of(self, names: list[str]) -> tuple[dict[str, Any], list[Any]]:
        """The entries of the datasets ``names`` (as ``{"datasets": ...}``) and the written
        texts of the files that hold them: all :func:`verdict.plain_columns_valid` reads."""
        datasets: dict[str, Any] = {}
        texts: list[Any] = []
        for file in dict.fromkeys(self._found.holders[n] for n in names):
            doc, source = self._found.part(file)
            datasets.update(doc["datasets"])
            texts += source.texts
        return {"datasets": {n: datasets[n] for n in names}}, texts


class _LoadOnAsk:
    """The merged source map of a project, loaded on the first position asked for."""

    def __init__(self, documents: list[tuple[bytes, str]], root: Path) -> None:
        self._documents, self._root = documents, root
        self._source: Any = None

    def at(self, path: Any, fallback: Location) -> Location:
        if self._source is None:
            self._source = loader.load_documents(self._documents, self._root).source
        return self._source.at(path, fallback)


def _without_validation(
    raw: loader.RawProject | _Unloaded,
    history: History,
    config: LintConfig,
    index: deps.Index | None,
    reuse: dict[str, list[Finding]],
    skeleton: str,
    entries: dict[str, str] | None,
    index_key: str,
) -> tuple[list[Finding], dict[str, list[Finding]], verdict.Verdict] | None:
    """The findings of a project every rule of which is reused, when the last full validation
    of this skeleton succeeded and the plain columns of every dataset changed since pass
    validation's checks (:mod:`compiler.lint.incremental.verdict`); None: validate the whole model."""
    if index is None or not index.rules or set(reuse) != set(index.rules) or entries is None:
        return None
    past = verdict.read(index_key)
    if past is None or past.skeleton != skeleton or set(past.entries) != set(entries):
        return None
    changed = [name for name, digest in entries.items() if past.entries[name] != digest]
    data, texts = (
        raw.datasets_of(changed) if isinstance(raw, _Unloaded) else (raw.data, raw.source.texts)
    )
    if not verdict.plain_columns_valid(data, texts, changed):
        return None
    needed = _with_ignored({"suppressions"}, past.ignores)
    load_rules(needed)
    for rule_id, checks in REGISTRY.items():
        if rule_id not in reuse and any(c.source == "policy" and not c.post for c in checks):
            return None
    computed: dict[str, list[Finding]] = {}
    project: Any = verdict.project_of(raw, past)
    findings = lint_project(
        project, history, config.selected, reuse=reuse, computed=computed, families=needed
    )
    return findings, computed, past


def _lint_sql(
    sql_files: list[str],
    dialect: str | None,
    config: LintConfig,
    grants: list[tuple[str | None, ...]] | None = None,
) -> tuple[list[Finding], list[Diagnostic], int]:
    """The findings of the SQL files linted together, the problems (unreadable files, bad
    suppression comments) and the number of files scanned. From the cache when every file's
    name and bytes, ``--dialect``, the selected rules, the mapping tables of the projects
    linted beside them (``grants``, :func:`_project_grants`) and accord are those the cached
    findings were computed from: SQL rules compare files (ACC203 across platforms), so the key
    covers all of them, and a warm run imports neither the scanner nor sqlglot. Only a batch
    with no problem is stored. The same as ``lint_sql_batch(read_sql_files(...))``; the files
    are read once, and the bytes hashed are the bytes scanned."""
    grants = grants or []
    blobs: list[tuple[str, bytes]] = []
    problems: list[Diagnostic] = []
    for path in sql_files:
        try:  # as compiler.lint.inputs.sqlfiles.read_text reads them
            blobs.append((path, read_bytes(Path(path), "SQL file", MAX_FILE_BYTES, path)))
        except InputError as err:
            problems.append(err.diagnostics[0])
    key = None
    if store.enabled() and not problems:
        options = f"sql\0{dialect or ''}\0{_selected_ids(config)}"
        key = lint_cache.sql_key(blobs, options, grants)
        payload = store.read("lint", key)
        hit = lint_cache.findings_from_json(payload) if payload is not None else None
        if hit is not None:
            found, count = hit
            return found, [], count
    from accord.compiler.lint.inputs.sqlfiles import (  # noqa: PLC0415 - SQL files only: policy files need no scanner
        scan_sql,  # the scanner and sqlglot: not on a hit
    )
    from accord.compiler.model.grants import GrantsTable  # noqa: PLC0415 - pydantic: not on a cache hit

    results = []
    for path, raw in blobs:
        try:
            text = decode(raw, path, "file")
        except InputError as err:
            problems.append(err.diagnostics[0])
            continue
        results.append(scan_sql(text, path, dialect))
    tables = [GrantsTable(*row) for row in grants]  # type: ignore[arg-type]
    found, bad_suppressions = lint_sql_batch(results, config.selected, tables)
    problems += bad_suppressions
    if key is not None and not problems:
        store.later("lint", key, lint_cache.findings_to_json(found, len(results)))
    return found, problems, len(results)
