"""Hardening, round four (issue 39): items 13 to 16. Each test fails on the code before it.

* 13: ``probe sample --out`` checks its proposals against the policy files in memory: it
  copies nothing, so a FIFO or a link to a device beside the policies is never opened.
* 14: ``probe sample`` reads at most ``MAX_HISTORY_ROWS`` rows per history statement (the
  newest) and says the window was not read whole; a statement text is parsed once however often
  it recurs; ``accord gate test`` varies the keys of at most ``MAX_VARIED_ITEMS`` items of a
  list and says which lists were longer (bench/bounds_bench.py measures both).
* 15: input that crashed: a history row whose ``columns`` is a number, a statement nested
  3,000 deep, a ``.gitignore`` that is not UTF-8 (init), a 3,000-long chain of ``inherits``
  (validate), ``until: 9999-12-31`` (verify), and hostile lint-cache entries made with the
  machine's own key (a ``sem/`` entry that is not ASCII, a marshalled list claiming two
  billion items, scalar texts that are not strings, JSON nested past the decoder's depth):
  each a located error, a correct answer, or for a cache entry a miss.
* 16: ``package accord.gate  # comment`` is a package declaration; ``init`` refusing because
  ``.vscode`` is a file writes nothing at all; the gate says ``-1``, not ``--1``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.compiler.core import store
from accord.compiler.gate import prove as proving
from accord.compiler.gate.check import default_policy
from accord.compiler.gate.prove import prove
from accord.compiler.model.validate import load_project
from accord.compiler.probe_sample import history
from accord.compiler.probe_sample.filters import restricted_values
from accord.compiler.probe_sample.history import Source, databricks_reads, snowflake_reads
from accord.compiler.probe_sample.mapping import Mapper
from tests.cli import ENTRY, run_cli
from tests.conftest import ROOT
from tests.test_gate_prove import agent, sample
from tests.test_probe_sample import RESULTS, _read, _sampled, estate

# --------------------------------------------------------------------------------------------
# 13. probe sample --out copies nothing


def test_proposals_are_checked_without_copying_the_policy_directory(tmp_path: Path) -> None:
    """A FIFO beside the policy files, and a link to one outside, were copied (a FIFO is an
    internal error; a link to /dev/zero fills the disk): now nothing is copied or opened but
    the YAML files the loader reads."""
    root = estate(tmp_path)
    os.mkfifo(root / "queue")
    outside = tmp_path / "outside.fifo"
    os.mkfifo(outside)
    (root / "notes").symlink_to(outside)
    reads = [_read(query_id="q1", roles=("BENCH_CHEMIST",), columns=("SUBJECT_ID",))]
    s = _sampled(root, reads)
    assert s.proposals, "the read is uncovered: a probe is proposed"
    from accord.compiler.probe_sample.run import write_proposals

    out = tmp_path / "proposed.yaml"
    write_proposals(str(root), s, str(out))
    assert yaml.safe_load(out.read_text())["probes"].keys() == {n for n, _, _ in s.proposals}
    # the proposals replace the file they are written over, never merge with it
    again = root / "sampled.yaml"
    write_proposals(str(root), s, str(again))
    write_proposals(str(root), s, str(again))
    assert again.read_text() == out.read_text()


# --------------------------------------------------------------------------------------------
# 14. bounded work


def _history_row(i: int, text: str, columns: Any = None) -> dict[str, Any]:
    objects = [
        {
            "objectDomain": "Table",
            "objectName": RESULTS,
            "columns": [{"columnName": "SUBJECT_ID"}] if columns is None else columns,
        }
    ]
    return {
        "query_id": f"q{i:06d}",
        "query_start_time": f"2026-11-20 10:{i // 60 % 60:02d}:{i % 60:02d}.000",
        "user_name": "U",
        "base_objects_accessed": json.dumps(objects),
        "role_name": "BENCH_CHEMIST",
        "query_text": text,
        "client_application_id": "warehouse-agent 1.0",
    }


class History:
    """The history statement answered as the platform answers it: ``ORDER BY ... DESC`` and
    ``LIMIT`` honoured; every statement asked is kept."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows, self.asked = rows, []

    def __call__(self, statement: str) -> list[dict[str, Any]]:
        self.asked.append(statement)
        rows = self.rows[::-1] if " DESC" in statement else list(self.rows)
        limit = statement.rsplit("LIMIT ", 1)
        return rows[: int(limit[1])] if len(limit) == 2 else rows


def test_probe_sample_reads_the_newest_rows_of_a_long_window_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(history, "MAX_HISTORY_ROWS", 50)
    text = f"SELECT SUBJECT_ID FROM {RESULTS}"
    query = History([_history_row(i, text) for i in range(80)])
    source = Source("snowflake", [], "", read=True)
    reads = snowflake_reads(query, 7, source)
    assert "LIMIT 51" in query.asked[0]
    assert [r.query_id for r in reads] == [f"q{i:06d}" for i in range(30, 80)]  # oldest first
    assert source.to_json()["complete"] is False
    ((what, why, _),) = source.unseen
    assert what == "the snowflake reads at or before 2026-11-20 10:00:29.000"
    assert "more than 50 history rows" in why and "the newest 50" in why
    # within the bound: every row, and nothing said
    whole = Source("snowflake", [], "", read=True)
    assert len(snowflake_reads(History([_history_row(i, text) for i in range(50)]), 7, whole)) == 50
    assert whole.unseen == [] and whole.to_json()["complete"] is True


def test_a_databricks_statement_cut_by_the_bound_is_not_read_in_part(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Lineage gives a row per column read: the statement the bound cuts through is left out
    whole, never read with some of its columns."""
    monkeypatch.setattr(history, "MAX_HISTORY_ROWS", 5)
    rows = [
        {
            "statement_id": f"s{s}",
            "start_time": f"2026-11-20 10:00:0{s}.000",
            "executed_by": "u@example.com",
            "source_table_full_name": "omics.variants.calls",
            "source_column_name": column,
        }
        for s in range(3)
        for column in ("a", "b", "c")
    ]
    source = Source("databricks", [], "", read=True)
    reads = databricks_reads(History(rows), 7, source, lambda user: ())
    assert [(r.query_id, r.columns) for r in reads] == [("s2", ("a", "b", "c"))]
    assert source.unseen and source.to_json()["complete"] is False


def test_a_statement_text_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from accord.compiler.probe_sample import mapping

    calls: list[str] = []

    def counted(text: str, dialect: str, column: str, table: str) -> set[str] | None:
        calls.append(text)
        return restricted_values(text, dialect, column, table)

    monkeypatch.setattr(mapping, "restricted_values", counted)
    mapper = Mapper(load_project(estate(tmp_path)).model)
    texts = [
        f"SELECT * FROM {RESULTS} WHERE PROGRAMME_CODE = '{v}'" for v in ("CNS-204", "IMM-310")
    ]
    facts = [mapper.map(_read(query_id=f"q{i}", text=texts[i % 2])) for i in range(200)]
    assert len(calls) == 2
    assert {f[0].where for f in facts} == {("programme", "CNS-204"), ("programme", "IMM-310")}


def test_gate_test_varies_the_first_items_of_a_long_list_and_says_so() -> None:
    bound = proving.MAX_VARIED_ITEMS
    n = bound + 5
    doc = sample(*(agent(f"agent_{i:02d}") for i in range(n)))
    proof = prove(default_policy(), "policy.rego", doc, "sample.json")
    agents = ("manifest", "agents")
    varied = {o.path[2] for o in proof.outcomes if len(o.path) > 2 and o.path[:2] == agents}
    assert varied == set(range(bound))
    assert proof.passed
    (said,) = proof.bounded
    assert said.startswith(f"manifest.agents: the keys of its first {bound} of {n}")
    text = proof.render("text")
    assert f"bounded    {said}" in text and "varied in part (bounded)" in text
    assert json.loads(proof.render("json"))["bounded"] == [said]
    # a sample within the bound is varied whole, and nothing is said
    small = prove(default_policy(), "policy.rego", sample(), "sample.json")
    assert small.bounded == [] and "bounded" not in small.render("text")


# --------------------------------------------------------------------------------------------
# 15. crashes


def test_history_columns_that_are_not_a_list_are_said_not_read() -> None:
    source = Source("snowflake", [], "", read=True)
    query = History([_history_row(0, "SELECT 1", columns=5)])
    (read,) = snowflake_reads(query, 7, source)
    assert read.columns == ()
    assert [w for w, _, _ in source.unseen] == ["the columns of some reads"]
    assert source.to_json()["complete"] is False


def test_a_statement_nested_3000_deep_filters_on_nothing() -> None:
    deep = f"SELECT * FROM {RESULTS} WHERE " + "(" * 3000 + "PROGRAMME_CODE = 'X'" + ")" * 3000
    assert restricted_values(deep, "snowflake", "PROGRAMME_CODE", RESULTS) is None


def test_init_refuses_a_gitignore_that_is_not_utf8_located(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_bytes(b"node_modules/\nbuild/\xff\xfe\n")
    code, _, err = run_cli(
        ["init", str(tmp_path), "--snowflake-schema", "GOV.POL", "--branch", "main"]
    )
    assert code == 2 and "Traceback" not in err, err
    assert f"{tmp_path / '.gitignore'}:2:7: .gitignore is not valid UTF-8 (byte 0xff)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore"]


def test_validate_reads_a_chain_of_3000_inherits(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "policies", tmp_path / "p")
    chain = {
        f"link_{i:04d}": {"snowflake": f"LINK_{i:04d}", "inherits": [f"link_{i + 1:04d}"]}
        for i in range(2999)
    }
    chain["link_2999"] = {"snowflake": "LINK_2999"}
    (tmp_path / "p" / "chain.yaml").write_text(yaml.safe_dump({"principals": chain}))
    code, _, err = run_cli(["validate", str(tmp_path / "p")])
    assert code == 0, err
    # a cycle at its end is found, located, as before
    chain["link_2999"]["inherits"] = ["link_0000"]
    (tmp_path / "p" / "chain.yaml").write_text(yaml.safe_dump({"principals": chain}))
    code, _, err = run_cli(["validate", str(tmp_path / "p")])
    assert code == 2 and "Traceback" not in err
    assert "inherits forms a cycle (link_0000 -> link_0001 -> " in err
    assert "link_2999 -> link_0000)" in err


def test_verify_a_grant_until_the_last_day_there_is(tmp_path: Path) -> None:
    root = tmp_path / "p"
    shutil.copytree(ROOT / "policies", root)
    path = root / "entitlements.yaml"
    text = path.read_text()
    old = "IMM-310: [bench_chemist]"
    assert old in text
    path.write_text(
        text.replace(old, "IMM-310: [bench_chemist, {principal: cro_external, until: 9999-12-31}]")
    )
    code, out, err = run_cli(["verify", str(root), "--format", "json"])
    assert code == 0, out + err
    assert json.loads(out)["summary"]["dates"][1:] == ["9999-12-31"]


# the lint cache: entries made with this machine's key that are not what accord wrote


def _lint(where: Path) -> tuple[int, str, str]:
    return run_cli(["lint", "policies", "--format", "json"], cwd=where)


def _entries(kind: str) -> list[str]:
    return sorted(p.name for p in (store.directory() / kind).rglob("*") if p.is_file())


def _hostile(where: Path, kind: str, payload: bytes) -> None:
    """Every entry of ``kind`` replaced by ``payload`` under the machine's key, every other
    kind dropped (so that this one is read)."""
    names = _entries(kind)
    assert names, kind
    for other in store.directory().iterdir():
        if other.is_dir() and other.name != kind:
            shutil.rmtree(other)
    store.enable(True)
    for name in names:
        store.write(kind, name, payload)
    store.enable(False)


@pytest.fixture
def cached(tmp_path: Path) -> tuple[Path, tuple[int, str, str]]:
    """A policy directory with findings, linted once (the cache filled): its answer."""
    shutil.copytree(ROOT / "examples" / "as-found", tmp_path / "policies")
    first = _lint(tmp_path)
    assert first[0] == 1 and _entries("parse") and _entries("sem"), first
    return tmp_path, first


def _strings_to_numbers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strings_to_numbers(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_strings_to_numbers(v) for v in value)
    return 5 if isinstance(value, str) else value


def _retyped(kind: str, keep: tuple[str, ...], part: Any = None) -> Any:
    """Every entry of ``kind`` decoded, its strings made numbers (``part``: of the part it
    picks), and written back under the machine's key; the kinds not in ``keep`` dropped, so
    that this one is read."""
    import marshal

    def retype(where: Path) -> None:
        store.enable(True)
        for name in _entries(kind):
            value = marshal.loads(store.read(kind, name) or b"")
            value = part(value) if part is not None else _strings_to_numbers(value)
            store.write(kind, name, marshal.dumps(value))
        store.enable(False)
        for other in store.directory().iterdir():
            if other.is_dir() and other.name not in (kind, *keep):
                shutil.rmtree(other)

    return retype


DEEP_JSON = b"[" * 100_000 + b"]" * 100_000
HOSTILE = {
    # 64 bytes, as a digest is, but not ASCII
    "sem-not-ascii": lambda where: _hostile(where, "sem", "é".encode() * 32),
    # JSON nested past the decoder's depth
    "lint-deep-json": lambda where: _hostile(where, "lint", DEEP_JSON),
    "lintdeps-deep-json": lambda where: _hostile(where, "lintdeps", DEEP_JSON),
    # scalar texts (read as strings) that are numbers
    "parse-texts-not-strings": _retyped("parse", (), lambda v: (v[0], {k: 5 for k in v[1]})),
    # positions naming no file (read when a finding needs its place)
    "pos-not-positions": _retyped("pos", ("parse", "sem", "lintpieces", "lintvalid")),
    # a file's pieces of the input digests, every string a number
    "lintpieces-retyped": _retyped("lintpieces", ("parse", "pos", "sem", "lintvalid", "lintdeps")),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_cache_entry_is_a_miss(
    cached: tuple[Path, tuple[int, str, str]], case: str
) -> None:
    where, first = cached
    HOSTILE[case](where)
    assert _lint(where) == first


def test_a_marshalled_list_claiming_two_billion_items_is_a_miss(
    cached: tuple[Path, tuple[int, str, str]],
) -> None:
    """marshal makes a list's slots before reading its items: five bytes claiming 2**31 - 1
    items ask for 16 GiB. Here lint runs with its address space capped at 3 GiB (as a CI
    runner's memory limit caps it): the entry is a miss, never MemoryError."""
    where, first = cached
    _hostile(where, "parse", b"[" + struct.pack("<i", 2**31 - 1))

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    env = {**os.environ, "NO_COLOR": "1"}
    run = subprocess.run(
        [*ENTRY, "lint", "policies", "--format", "json"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=cap,
        check=False,
    )
    assert (run.returncode, run.stdout, run.stderr) == first


def test_a_decode_bounds_the_address_space_and_restores_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[int, int]] = []

    def loads(payload: bytes) -> Any:
        seen.append(resource.getrlimit(resource.RLIMIT_AS))
        raise MemoryError

    before = resource.getrlimit(resource.RLIMIT_AS)
    monkeypatch.setattr(store.marshal, "loads", loads)
    with pytest.raises(store.UNREADABLE):
        store.loads(b"[" + struct.pack("<i", 2**31 - 1))
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    ((soft, _),) = seen
    assert soft != resource.RLIM_INFINITY and soft < (1 << 40)


# --------------------------------------------------------------------------------------------
# 16. small defects


def test_a_package_line_may_end_with_a_comment(tmp_path: Path) -> None:
    policy = default_policy()
    assert policy.count("\npackage accord.gate\n") == 1
    path = tmp_path / "commented.rego"
    path.write_text(policy.replace("\npackage accord.gate\n", "\npackage accord.gate  # ours\n"))
    (tmp_path / "sample.json").write_text(json.dumps(sample()))
    code, out, err = run_cli(
        ["gate", "test", str(path), "--manifest", str(tmp_path / "sample.json")]
    )
    assert code == 0, out + err


def test_init_refused_for_a_vscode_file_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".vscode").write_text("not a directory\n")
    code, _, err = run_cli(
        ["init", str(tmp_path), "--snowflake-schema", "GOV.POL", "--branch", "main"]
    )
    assert code == 2 and "nothing was written" in err, err
    assert f"{tmp_path / '.vscode'}:1:1: exists and is not a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [".vscode"]


def test_init_removes_the_folders_it_made_when_a_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that appears between the check and the write (a race): the files written are
    removed, and so are the folders made for them."""
    from accord.compiler.commands import init

    real_open = open

    def failing(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "x" in mode and str(path).endswith(".yml"):
            raise FileExistsError(17, "File exists", str(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr(init, "open", failing, raising=False)
    code, _, err = run_cli(
        ["init", str(tmp_path), "--snowflake-schema", "GOV.POL", "--branch", "main"]
    )
    assert code == 2 and "nothing was written" in err, err
    assert list(tmp_path.iterdir()) == []


def test_the_gate_says_a_negative_count_as_it_is(tmp_path: Path) -> None:
    doc = sample()
    doc["expected_agent_count"] = -1
    (tmp_path / "m.json").write_text(json.dumps(doc))
    code, out, err = run_cli(["gate", str(tmp_path / "m.json"), "--model", str(ROOT / "policies")])
    assert code == 1, err
    assert "the registry expects -1\n" in out and "--1" not in out
    doc["expected_agent_count"] = 2.5  # a fraction: denied, not "cannot evaluate"
    (tmp_path / "m.json").write_text(json.dumps(doc))
    code, out, err = run_cli(["gate", str(tmp_path / "m.json"), "--model", str(ROOT / "policies")])
    assert code == 1 and "the registry expects 2.5\n" in out, out + err
