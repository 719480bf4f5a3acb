"""Read a policy directory into one plain document, keeping the position of every node.

Every ``*.yaml`` / ``*.yml`` file under the directory is composed with PyYAML's C loader in
safe mode, converted to plain Python values by hand (refusing language-specific tags,
duplicate keys, runaway aliases and misread scalars), and merged section by section. The
result is a :class:`RawProject`: the merged data plus a source map from *paths* (tuples of keys
and list indexes, the same shape pydantic uses for error locations) to ``file:line:column``.

Positions are needed only when something is reported, and a clean estate reports nothing, so
they are computed lazily (:func:`parse_fast`, :class:`FileSource`): a file is converted without
positions, and composed again with positions (:func:`parse_document`) only when a message about
it needs one. Whatever the fast conversion cannot accept as is (a tag, a merge key, a duplicate
key, a non-scalar key, the depth or size bounds, a top level that is not a mapping) makes it
hand the same node graph to the position-keeping converter, which gives today's value or
today's message: the two paths never disagree (tests/test_loader_fast.py).
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from accord.compiler.core import store
from accord.compiler.core.errors import Diagnostic, InputError, Location, UsageError
from accord.compiler.core.jsonfile import MAX_FILE_BYTES, decode, read_bytes
from accord.compiler.model import parsecache
from accord.compiler.model.source import Path_, Pos, Positions, SourceMap

try:  # the C loader is a hard requirement of speed, but fall back rather than fail
    _Base: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Base = yaml.SafeLoader

#: Bound on the tags :class:`_Loader` remembers (the least recently asked go first).
MAX_REMEMBERED_TAGS = 1 << 16

#: What :class:`_Loader`'s shortcuts rely on: the safe loader has no path resolvers (which
#: would make a tag depend on where a node sits) and its implicit resolvers are the safe table.
_PURE_RESOLVER = (
    not _Base.yaml_path_resolvers
    and _Base.yaml_implicit_resolvers is yaml.SafeLoader.yaml_implicit_resolvers
)


@functools.lru_cache(maxsize=MAX_REMEMBERED_TAGS)
def _tag(kind: type, value: Any, implicit: Any) -> str:
    """The tag the safe resolver gives a node of ``kind`` with ``value`` and ``implicit``."""
    return _Base.resolve(_Base, kind, value, implicit)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    """The safe loader, without the resolver's work repeated for every node.

    The composer asks :meth:`resolve` for the tag of every node, keys included (310,000 asks
    for an estate of 4,000 datasets, most of them repeats: column names, types, mask names),
    and the resolver answers by trying its regular expressions in turn. Without path
    resolvers the answer depends on the node's kind, value and implicit flags only (the
    resolver reads nothing else: its tables are class attributes nothing here changes), so
    :func:`_tag` remembers it. Without path resolvers, ``descend_resolver`` and
    ``ascend_resolver`` (called around every node) return at once and the composer ignores
    what they return, so here they are C callables of the same arity that do nothing either:
    no Python frame per node. ``tests/test_loader_tags.py`` compares every node this loader
    composes with the safe loader's, on the repository's YAML and on generated documents."""

    if _PURE_RESOLVER:
        resolve = staticmethod(_tag)
        descend_resolver = staticmethod(slice)  # slice(parent, index): built and dropped
        ascend_resolver = staticmethod(tuple)  # tuple(): the empty tuple, dropped


#: Bound on the number of nodes one file may expand to (aliases included): a billion-laughs
#: document is refused instead of eating the machine.
MAX_NODES_PER_FILE = 200_000
#: Bound on nesting depth (a recursive alias would otherwise never end).
MAX_DEPTH = 64

_STR = "tag:yaml.org,2002:str"
#: YAML 1.1 resolves a plain 2027-03-31 to a timestamp: the policy format reads it as the
#: text written (a grant's ``until`` checks that it is a day, YYYY-MM-DD)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_PLAIN_TAGS = {
    _STR,
    _TIMESTAMP,
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:merge",
}


class WrittenFloat(float):
    """A float that remembers how it was written (``16.10``), so that a message can quote it."""

    text: str

    def __new__(cls, value: float, text: str = "") -> WrittenFloat:
        made = super().__new__(cls, value)
        made.text = text or repr(float(value))
        return made

    def __getnewargs__(self) -> tuple[float, str]:  # type: ignore[override]
        return (float(self), self.text)


class FileSource(Positions):
    """The source map of one file read by :func:`parse_fast`: the texts of its non-string
    scalars at once, its positions only when first asked for (the file is composed again)."""

    def __init__(self, text: str, name: str, texts: dict[Path_, str]):
        self.text = text
        self.name = name
        self.texts = texts
        self._full: SourceMap | None = None

    @property
    def materialised(self) -> bool:
        """Whether the positions were asked for (a clean lint asks for none)."""
        return self._full is not None

    def _positions(self) -> SourceMap:
        if self._full is None:
            node = _compose(self.text, self.name)
            _, self._full = _convert_full(node, self.name)
        return self._full

    @property
    def values(self) -> dict[Path_, Pos]:  # type: ignore[override]
        return self._positions().values

    @property
    def keys(self) -> dict[Path_, Pos]:  # type: ignore[override]
        return self._positions().keys


class _Table(Mapping[Path_, Pos]):
    """One table (``values`` or ``keys``) of a :class:`MergedSource`, read through the file
    that contributed each path."""

    def __init__(self, merged: MergedSource, kind: str):
        self._merged = merged
        self._kind = kind

    def get(self, path: Path_, default: Any = None) -> Any:  # type: ignore[override]
        src = self._merged.owner(path)
        if src is None:
            return default
        pos = getattr(src, self._kind).get(path)
        return default if pos is None else pos

    def __getitem__(self, path: Path_) -> Pos:
        pos = self.get(path)
        if pos is None:
            raise KeyError(path)
        return pos

    def __contains__(self, path: object) -> bool:
        return isinstance(path, tuple) and self.get(path) is not None

    def _items(self) -> dict[Path_, Pos]:
        out: dict[Path_, Pos] = {}
        for src in self._merged.sources():
            for path, pos in getattr(src, self._kind).items():
                if self._merged.owner(path) is src:
                    out[path] = pos
        return out

    def __iter__(self) -> Iterator[Path_]:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())


class MergedSource(Positions):
    """The source map of a merged project: each path is read from the source map of the file
    that contributed it (a whole scalar section such as ``version``, or one entry of a
    section), so no position is copied, or computed, before a message needs it."""

    def __init__(self) -> None:
        #: section -> the file whose value of the (non-mapping) section was kept
        self._whole: dict[Any, Positions] = {}
        #: (section, entry) -> the file that defines the entry
        self._entries: dict[tuple[Any, Any], Positions] = {}
        #: section -> the first file that declares it as a mapping (the section's own place)
        self._heads: dict[Any, Positions] = {}
        self.texts: dict[Path_, str] = {}
        #: section -> the name of the file that gives the section its place (see ``owner``)
        self.owners: dict[Any, str] = {}
        #: display name -> (document, source map) of every file merged, in order
        self.parts: dict[str, tuple[dict[str, Any], Positions]] = {}
        self.values = _Table(self, "values")
        self.keys = _Table(self, "keys")

    def owner(self, path: Path_) -> Positions | None:
        path = tuple(path)
        if not path:
            return None
        src = self._whole.get(path[0])
        if src is not None:
            return src
        if len(path) == 1:
            return self._heads.get(path[0])
        return self._entries.get(path[:2])

    def sources(self) -> list[Positions]:
        seen: dict[int, Positions] = {}
        for table in (self._whole, self._heads, self._entries):
            for src in table.values():
                seen.setdefault(id(src), src)
        return list(seen.values())


@dataclass
class RawProject:
    root: Path
    files: list[str]
    data: dict[str, Any]
    source: Positions
    #: location of the project itself (the first file), for errors with no better place
    origin: Location


def discover(root: Path) -> list[Path]:
    """Every YAML file under ``root``, recursively, in a stable order; hidden folders skipped."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith((".yaml", ".yml")) and not name.startswith("."):
                found.append(Path(dirpath) / name)
    return sorted(found, key=lambda p: p.as_posix())


def display_path(path: Path, root: Path, given: str) -> str:
    """The path as given on the command line, joined with the file's place under it."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return path.as_posix()
    if given in ("", "."):
        return rel.as_posix()
    return (Path(given) / rel).as_posix()


def load_directory(directory: str | os.PathLike[str]) -> RawProject:
    """Load and merge every YAML file of a policy directory (or a single YAML file)."""
    return load_files(*directory_files(directory))


def directory_files(
    directory: str | os.PathLike[str], tree: str = "the policy directory"
) -> tuple[list[tuple[Path, str]], Path]:
    """The (path, display name) of every YAML file of a policy directory (or of a single YAML
    file), and the project root. A file that is a symbolic link leading outside the directory
    (a named file: outside :func:`named_tree`) is refused, located, before anything is read
    (``tree`` names the tree in the message)."""
    given = os.fspath(directory)
    root = Path(given)
    if root.is_file():
        files = [root]
        names = [given]
        inside = named_tree(given)
        root = root.parent
    elif root.is_dir():
        files = discover(root)
        names = [display_path(f, root, given) for f in files]
        inside = given
    else:
        raise UsageError(f"{given}: no such policy directory")
    if not files:
        raise UsageError(f"{given}: no *.yaml or *.yml files found")
    refused = [
        outside_link(name, tree)
        for path, name in zip(files, names, strict=True)
        if not within(str(path), inside)
    ]
    if refused:
        raise InputError(refused)
    return list(zip(files, names, strict=True)), root


def within(path: str, tree: str) -> bool:
    """Whether ``path``, every symbolic link resolved, lies inside ``tree`` (resolved)."""
    root = os.path.realpath(tree)
    real = os.path.realpath(path)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def named_tree(path: str) -> str:
    """The tree a file named on the command line is read in: the working directory (the
    checkout) when the file is under it, else the file's own folder."""
    here = os.path.abspath(".")
    given = os.path.abspath(path)
    return here if given.startswith(here.rstrip(os.sep) + os.sep) else os.path.dirname(given)


def outside_link(name: str, tree: str) -> Diagnostic:
    """The refusal of a file that is (or lies under) a symbolic link leading outside ``tree``:
    located at the file, never read (a pull request can commit a link to a runner's file)."""
    return Diagnostic(Location(name, 1, 1), f"a symbolic link that leads outside {tree}: not read")


def load_files(files: list[tuple[Path, str]], root: Path) -> RawProject:
    documents, diagnostics = read_files(files)
    return load_documents(documents, root, diagnostics)


def read_files(
    files: list[tuple[Path, str]],
) -> tuple[list[tuple[bytes, str]], list[Diagnostic]]:
    """The bytes of each file with its display name; unreadable files as diagnostics."""
    diagnostics: list[Diagnostic] = []
    documents: list[tuple[bytes, str]] = []
    for path, name in files:
        try:
            documents.append((read_bytes(path, "policy file", MAX_FILE_BYTES, name), name))
        except InputError as err:
            diagnostics.extend(err.diagnostics)
    return documents, diagnostics


def load_documents(
    documents: list[tuple[bytes, str]], root: Path, diagnostics: list[Diagnostic] | None = None
) -> RawProject:
    """Parse and merge policy files given as (content, display name) pairs: the files of a
    directory, or blobs read from a git revision. ``diagnostics`` carries earlier problems
    (files that could not be read), reported together with these."""
    diagnostics = list(diagnostics or [])
    merged: dict[str, Any] = {}
    source = MergedSource()
    for raw, name in documents:
        try:
            if store.enabled():
                # the cache of parsed files holds positions (compiler/model/parsecache.py)
                doc, doc_source = parsecache.parse(raw, name, parse_document)
            else:
                doc, doc_source = parse_shared(raw, name)
        except InputError as err:
            diagnostics.extend(err.diagnostics)
            continue
        _merge(merged, source, doc, doc_source, name, diagnostics)
        source.parts[name] = (doc, doc_source)
    if diagnostics:
        raise InputError(diagnostics)
    if not documents:
        raise UsageError(f"{root}: no *.yaml or *.yml files found")
    origin = Location(documents[0][1], 1, 1)
    return RawProject(
        root=root, files=[n for _, n in documents], data=merged, source=source, origin=origin
    )


# --------------------------------------------------------------------------------------------
# one file


def parse_document(raw: bytes, name: str) -> tuple[dict[str, Any], SourceMap]:
    """Parse one YAML file into a plain mapping and its source map (positions 1-based)."""
    text = _decode(raw, name)
    _refuse_tab_indentation(text, name)
    return _convert_full(_compose(text, name), name)


def parse_fast(raw: bytes, name: str) -> tuple[dict[str, Any], Positions]:
    """What :func:`parse_document` returns (the same value, the same refusals), with the
    positions computed only when first asked for (:class:`FileSource`)."""
    text = _decode(raw, name)
    _refuse_tab_indentation(text, name)
    node = _compose(text, name)
    if not isinstance(node, yaml.MappingNode):
        return _convert_full(node, name)  # empty, or a refusal
    try:
        value, texts = _convert_fast(node)
    except _Fallback:
        return _convert_full(node, name)
    return value, FileSource(text, name, texts)


#: while :func:`sharing` is on: file content -> its decoded text and the marshal form of what
#: :func:`parse_fast` made of it (value, scalar texts), for contents the fast path read whole
_shared: dict[bytes, tuple[str, bytes]] | None = None


@contextlib.contextmanager
def sharing() -> Iterator[None]:
    """Within the block, a file content parsed once is not parsed again (``accord diff``
    loads two trees whose files are mostly byte-identical): a repeat gets a fresh copy of the
    first parse (``marshal.loads``), so nothing one tree's validation does to its values can
    reach the other tree's."""
    global _shared
    before = _shared
    if before is None:
        _shared = {}
    try:
        yield
    finally:
        _shared = before


def parse_shared(raw: bytes, name: str) -> tuple[dict[str, Any], Positions]:
    """:func:`parse_fast`, through the contents already parsed in a :func:`sharing` block.
    The fast path's value and scalar texts depend on the bytes only (the name goes into
    messages and positions, which the copy computes afresh under its own name); anything the
    fast path did not read whole (a refusal, a fallback to the position-keeping converter, a
    value marshal cannot hold such as a float that remembers its text) is parsed as before."""
    shared = _shared
    if shared is None:
        return parse_fast(raw, name)
    found = shared.get(raw)
    if found is not None:
        text, payload = found
        value, texts = marshal.loads(payload)
        return value, FileSource(text, name, texts)
    value, source = parse_fast(raw, name)
    if isinstance(source, FileSource):
        with contextlib.suppress(ValueError):  # a value marshal cannot hold: not shared
            shared[raw] = (source.text, marshal.dumps((value, source.texts)))
    return value, source


def _compose(text: str, name: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = err.problem or err.context or "invalid YAML"
        raise InputError(
            Diagnostic(Location(name, line, col), f"invalid YAML: {problem}")
        ) from None
    except yaml.YAMLError as err:  # pragma: no cover - unmarked errors are rare
        raise InputError(Diagnostic(Location(name, 1, 1), f"invalid YAML: {err}")) from None


def _convert_full(node: yaml.Node | None, name: str) -> tuple[dict[str, Any], SourceMap]:
    source = SourceMap()
    if node is None:  # an empty file, or comments only
        return {}, source
    if not isinstance(node, yaml.MappingNode):
        raise InputError(
            Diagnostic(
                _loc(name, node),
                "the top level of a policy file must be a mapping of sections "
                "(version, platforms, principals, ...)",
            )
        )
    converter = _Converter(name, source)
    value = converter.convert(node, ())
    return value, source


def _decode(raw: bytes, name: str) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return decode(raw, name, "file")


def _refuse_tab_indentation(text: str, name: str) -> None:
    if "\t" not in text:
        return
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip(" ")
        if stripped.startswith("\t"):
            column = len(line) - len(stripped) + 1
            raise InputError(
                Diagnostic(
                    Location(name, number, column),
                    "tab character in indentation: YAML indents with spaces only",
                )
            )


def _pos(name: str, node: yaml.Node) -> Pos:
    mark = node.start_mark
    return (name, mark.line + 1, mark.column + 1)


def _loc(name: str, node: yaml.Node) -> Location:
    return Location(*_pos(name, node))


def _unreadable(node: yaml.Node) -> str:
    """Why a scalar with a plain tag has no value (``b: <<``, ``!!int x``, ``!!map x``)."""
    if node.tag == "tag:yaml.org,2002:merge":
        return (
            "<< is YAML's merge key, which stands only as a key of a mapping: quote it "
            '("<<") where the text is meant'
        )
    kind = node.tag.rsplit(":", 1)[-1]
    return f"{node.value!r} cannot be read as {kind} (tag {node.tag!r}): quote it or drop the tag"


class _Converter:
    """Turn a composed node graph into plain values, recording positions and refusing
    language-specific tags, duplicate keys and runaway alias expansion."""

    def __init__(self, name: str, source: SourceMap):
        self.name = name
        self.source = source
        self.count = 0
        self.constructor = yaml.constructor.SafeConstructor()

    def convert(self, node: yaml.Node, path: Path_, depth: int = 0) -> Any:
        self.count += 1
        if self.count > MAX_NODES_PER_FILE or depth > MAX_DEPTH:
            raise InputError(
                Diagnostic(
                    _loc(self.name, node),
                    "document expands beyond a sane size (aliases nested too deeply or "
                    f"more than {MAX_NODES_PER_FILE} nodes)",
                )
            )
        if node.tag not in _PLAIN_TAGS:
            raise InputError(
                Diagnostic(
                    _loc(self.name, node),
                    f"tag {node.tag!r} is not allowed: policy files hold plain "
                    "mappings, lists, strings, numbers and booleans",
                )
            )
        self.source.values.setdefault(path, _pos(self.name, node))
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        if node.tag == _STR or node.tag == _TIMESTAMP:
            return node.value
        self.source.texts[path] = node.value
        try:
            value = self.constructor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, KeyError, TypeError):
            raise InputError(Diagnostic(_loc(self.name, node), _unreadable(node))) from None
        if isinstance(value, float):
            return WrittenFloat(value, node.value)
        return value

    def _key(self, node: yaml.Node, depth: int) -> str:
        """A mapping key, as written: YAML 1.1 would read ``010:`` as 8, ``0x1F:`` as 31,
        ``1:30:`` as 90 and ``yes:`` as True, and ``2024:`` beside ``"2024":`` as two keys.
        Every key is a name or a code, so it is the scalar's source text (its tag still has
        to be a plain one)."""
        if node.tag not in _PLAIN_TAGS or node.tag in (
            "tag:yaml.org,2002:map",
            "tag:yaml.org,2002:seq",
        ):
            raise InputError(
                Diagnostic(
                    _loc(self.name, node),
                    f"tag {node.tag!r} is not allowed on a key: keys are plain names or codes",
                )
            )
        self.count += 1
        return str(node.value)

    def _mapping(self, node: yaml.MappingNode, path: Path_, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        seen: dict[Any, Pos] = {}
        merges: list[yaml.Node] = []
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merges.append(value_node)
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(
                    Diagnostic(_loc(self.name, key_node), "mapping keys must be plain scalars")
                )
            key = self._key(key_node, depth)
            here = _pos(self.name, key_node)
            if key in seen:
                raise InputError(
                    Diagnostic(
                        Location(*here),
                        f"duplicate key {key!r}: first defined at {Location(*seen[key])}",
                    )
                )
            seen[key] = here
            self.source.keys[(*path, key)] = here
            result[key] = self.convert(value_node, (*path, key), depth + 1)
        # YAML merge keys (<<: *anchor): keys already present win, as in the YAML spec.
        for merge in merges:
            sources = merge.value if isinstance(merge, yaml.SequenceNode) else [merge]
            for src in sources:
                if not isinstance(src, yaml.MappingNode):
                    raise InputError(
                        Diagnostic(_loc(self.name, src), "a merge key (<<) takes a mapping")
                    )
                for k, v in self._mapping(src, path, depth + 1).items():
                    result.setdefault(k, v)
        return result


class _Fallback(Exception):
    """The fast conversion met something only the position-keeping converter decides."""


_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
#: the constructors of the plain scalars that are not strings (the ones _Converter reaches
#: through ``construct_object``)
_SCALARS = {
    tag: yaml.constructor.SafeConstructor.yaml_constructors[tag]
    for tag in (
        "tag:yaml.org,2002:int",
        "tag:yaml.org,2002:float",
        "tag:yaml.org,2002:bool",
        "tag:yaml.org,2002:null",
    )
}
#: key tags _Converter reads as the scalar's text (the merge key ``<<`` is left to it)
_KEY_TAGS = frozenset({_STR, *_SCALARS})


def _convert_fast(root: yaml.MappingNode) -> tuple[dict[str, Any], dict[Path_, str]]:
    """The value :class:`_Converter` makes of ``root`` and the texts of its non-string
    scalars, without positions. Raises :class:`_Fallback` on anything it would not accept as
    is or would refuse: a tag other than the plain ones, a merge key, a key that is not a plain
    scalar, a duplicate key, more than ``MAX_NODES_PER_FILE`` nodes (counted as _Converter
    counts them: every value and every key, aliases expanded), nesting beyond ``MAX_DEPTH``."""
    texts: dict[Path_, str] = {}
    constructor = yaml.constructor.SafeConstructor()
    scalar_node, mapping_node, sequence_node = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
    count = 1  # the root

    def mapping(node: yaml.MappingNode, path: Path_, depth: int) -> dict[str, Any]:
        nonlocal count
        pairs = node.value
        count += 2 * len(pairs)
        if node.tag != _MAP or depth >= MAX_DEPTH or count > MAX_NODES_PER_FILE:
            raise _Fallback
        out: dict[str, Any] = {}
        for key_node, value_node in pairs:
            if key_node.__class__ is not scalar_node or key_node.tag not in _KEY_TAGS:
                raise _Fallback
            key = key_node.value
            if value_node.__class__ is scalar_node and value_node.tag == _STR:
                out[key] = value_node.value
            else:
                out[key] = convert(value_node, (*path, key), depth + 1)
        if len(out) != len(pairs):  # a duplicate key
            raise _Fallback
        return out

    def sequence(node: yaml.SequenceNode, path: Path_, depth: int) -> list[Any]:
        nonlocal count
        items = node.value
        count += len(items)
        if node.tag != _SEQ or depth >= MAX_DEPTH or count > MAX_NODES_PER_FILE:
            raise _Fallback
        return [
            item.value
            if item.__class__ is scalar_node and item.tag == _STR
            else convert(item, (*path, i), depth + 1)
            for i, item in enumerate(items)
        ]

    def convert(node: yaml.Node, path: Path_, depth: int) -> Any:
        kind = node.__class__
        if kind is mapping_node:
            return mapping(node, path, depth)  # type: ignore[arg-type]
        if kind is sequence_node:
            return sequence(node, path, depth)  # type: ignore[arg-type]
        if kind is not scalar_node:
            raise _Fallback
        if node.tag == _STR or node.tag == _TIMESTAMP:
            return node.value
        construct = _SCALARS.get(node.tag)
        if construct is None:
            raise _Fallback
        texts[path] = node.value
        try:
            value = construct(constructor, node)
        except Exception:  # the converter says why (the same exceptions, located)
            raise _Fallback from None
        if isinstance(value, float):
            return WrittenFloat(value, node.value)
        return value

    return mapping(root, (), 0), texts


# --------------------------------------------------------------------------------------------
# merging files


def _merge(
    merged: dict[str, Any],
    source: MergedSource,
    doc: dict[str, Any],
    doc_source: Positions,
    name: str,
    diagnostics: list[Diagnostic],
) -> None:
    """Merge one file's sections into ``merged``; ``source`` records which file contributed
    each accepted entry (its positions are read from that file's source map when asked)."""
    accepted: set[Path_] = set()

    def key_loc(section: Any) -> Location:
        return doc_source.key((section,)) or Location(name, 1, 1)

    for section, value in doc.items():
        if not isinstance(section, str):
            diagnostics.append(
                Diagnostic(key_loc(section), f"section names are strings, not {section!r}")
            )
            continue
        if section == "version" or not isinstance(value, dict):
            # scalars (version) may repeat across files if they agree; anything else is
            # left to validation, which reports the type error at this location
            if section in merged and (type(merged[section]), merged[section]) != (
                type(value),
                value,
            ):
                first = source.key((section,))
                diagnostics.append(
                    Diagnostic(
                        key_loc(section),
                        f"{section!r} is {value!r} here but {merged[section]!r} at {first}",
                    )
                )
                continue
            if section not in merged:
                merged[section] = value
                accepted.add((section,))
                source._whole[section] = doc_source
                source.owners[section] = name
            continue
        target = merged.setdefault(section, {})
        if not isinstance(target, dict):
            diagnostics.append(
                Diagnostic(key_loc(section), f"section {section!r} must be a mapping")
            )
            continue
        source._heads.setdefault(section, doc_source)
        source.owners.setdefault(section, name)
        for entry, entry_value in value.items():
            if entry in target:
                first = source.key((section, entry))
                here = doc_source.key((section, entry))
                diagnostics.append(
                    Diagnostic(
                        here,
                        f"{section}.{entry} is defined twice: here and at {first}",
                    )
                )
                continue
            target[entry] = entry_value
            accepted.add((section, entry))
            source._entries[(section, entry)] = doc_source
    # the texts of this file's non-string scalars under the entries it contributed
    for path, text in doc_source.texts.items():
        if path[:1] in accepted or path[:2] in accepted:
            source.texts[path] = text
