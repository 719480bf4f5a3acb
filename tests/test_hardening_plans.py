"""Hardening, data safety of plans and the ledger (issue 14, items 5-7): one run of
``migrate apply``/``rollback`` per ledger at a time; a plan directory appears whole or not at
all and is immutable once its stages are in the ledger; every plan and ledger read is
validated and refused with ``file:line:column``. Each class is table-driven and asserts the
exit code, the located message, no traceback, and that nothing ran or was written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from accord.compiler.core.filelock import LedgerLocked, ledger_lock, lock_path
from accord.compiler.history.ledger import append_record, read_ledger, read_plans
from accord.compiler.plan.apply import apply, rollback
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.plan_helpers import reference_plan

SECRETS = {"SUBJECT_SALT_SNOWFLAKE": "sf-7c1d-secret", "SUBJECT_SALT_DATABRICKS": "dbx-90aa-secret"}


class Recorder:
    """An executor that records statements and answers every check with ``ok``; ``during``
    runs inside the first statement (a second run started while the first is under way)."""

    def __init__(self, during: Callable[[], None] | None = None) -> None:
        self.executed: list[str] = []
        self.during = during

    def run(self, text: str) -> None:
        if self.during is not None:
            during, self.during = self.during, None
            during()
        self.executed.append(text)

    def results(self, text: str) -> list[list[tuple[Any, ...]]]:
        return [[(True,)]]


@pytest.fixture
def plans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    return reference_plan(tmp_path / "migrations").parent


def _plan_dir(plans: Path) -> Path:
    return next(p for p in plans.iterdir() if p.name.startswith("0001_"))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _assert_clean_refusal(code: int, out: str, err: str, where: str, message: str) -> None:
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    assert where in err, err
    assert message in err, err


# --------------------------------------------------------------------------------------------
# 5. one apply or rollback per ledger


def test_a_second_apply_during_the_first_stops_and_names_the_holder(plans: Path) -> None:
    ledger = plans / "ledger.jsonl"
    seen: list[str] = []

    def second_run() -> None:
        for run in (apply, rollback):
            with pytest.raises(LedgerLocked) as refused:
                run(str(plans), ledger, "snowflake", Recorder, seen.append)
            seen.append(str(refused.value))

    first = Recorder(during=second_run)
    outcome = apply(str(plans), ledger, "snowflake", lambda: first, seen.append)
    assert not outcome.error
    refusals = [s for s in seen if "is locked by" in s]
    assert len(refusals) == 2
    assert f"pid {os.getpid()} on host " in refusals[0]
    assert str(lock_path(ledger)) in refusals[0]
    # each stage ran once, and the ledger has each once
    stages = [r.stage for r in read_ledger(ledger)]
    assert len(stages) == len(set(stages)) == 4
    assert len(first.executed) == 4
    assert not lock_path(ledger).exists()  # released on exit


_HOLDER = """
import sys, time
from pathlib import Path
from accord.compiler.core.filelock import ledger_lock
with ledger_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.mark.parametrize("command", ["apply", "rollback"])
def test_a_lock_held_by_another_process_refuses_then_a_killed_holder_is_stale(
    plans: Path, command: str
) -> None:
    ledger = plans / "ledger.jsonl"
    append_record(
        ledger,
        {
            "plan": _plan_dir(plans).name,
            "stage": "01_snowflake_prepare",
            "platform": "snowflake",
            "status": "applied",
            "at": "2026-11-03T10:00:00+00:00",
            "sha256": json.loads((_plan_dir(plans) / "plan.json").read_text())["stages"][0][
                "sha256"
            ],
        },
    )
    before = ledger.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(ledger)],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, out, err = run_cli(
            ["migrate", command, "--platform", "snowflake", "--plans", str(plans)]
        )
        _assert_clean_refusal(code, out, err, str(ledger), f"is locked by pid {holder.pid}")
        assert ledger.read_bytes() == before  # nothing ran, nothing recorded
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # the killed holder left its lock file behind: it is stale, and the next run takes it
    assert lock_path(ledger).exists()
    with ledger_lock(ledger):
        assert f'"pid": {os.getpid()}' in lock_path(ledger).read_text()
    assert not lock_path(ledger).exists()


# --------------------------------------------------------------------------------------------
# 6. plans appear whole or not at all; applied plans are immutable


def _hidden_copy(plans: Path) -> Path:
    """What an interrupted ``plan`` used to leave: a hidden staging directory with a plan."""
    staging = plans / ".0002_leftover.k3j2"
    shutil.copytree(_plan_dir(plans), staging)
    return staging


def _incomplete_copy(plans: Path) -> Path:
    """A plan directory without the manifest that is written with it."""
    copy = plans / "0002_incomplete"
    shutil.copytree(_plan_dir(plans), copy)
    data = json.loads((copy / "plan.json").read_text())
    data["id"] = copy.name
    (copy / "plan.json").write_text(json.dumps(data))
    (copy / "manifest.json").unlink()
    return copy


def test_a_hidden_staging_directory_is_never_listed_or_applied(plans: Path) -> None:
    _hidden_copy(plans)
    assert [p.id for p in read_plans(plans)] == [_plan_dir(plans).name]
    code, out, _ = run_cli(["migrate", "status", "--plans", str(plans)])
    assert code == 0 and "leftover" not in out
    executor = Recorder()
    outcome = apply(str(plans), plans / "ledger.jsonl", "snowflake", lambda: executor, print)
    assert all(r.plan == _plan_dir(plans).name for r in read_ledger(plans / "ledger.jsonl"))
    assert len(outcome.done) == 4


def test_an_incomplete_plan_is_refused_before_anything_runs(plans: Path) -> None:
    copy = _incomplete_copy(plans)
    for argv in (
        ["migrate", "status", "--plans", str(plans)],
        ["migrate", "apply", "--platform", "snowflake", "--plans", str(plans)],
    ):
        code, out, err = run_cli(argv)
        _assert_clean_refusal(code, out, err, f"{copy}/plan.json:1:1", "incomplete plan")
    assert not (plans / "ledger.jsonl").exists()


def _record_applied(plans: Path) -> None:
    directory = _plan_dir(plans)
    stage = json.loads((directory / "plan.json").read_text())["stages"][0]
    append_record(
        plans / "ledger.jsonl",
        {
            "plan": directory.name,
            "stage": stage["id"],
            "platform": stage["platform"],
            "status": "applied",
            "at": "2026-11-03T10:00:00+00:00",
            "sha256": stage["sha256"],
        },
    )


REPLAN = [
    # (case, extra arguments, exit code, message)
    ("under-another-name", ["--name", "renamed"], 2, "is immutable"),
    ("same-name-unchanged", [], 0, "already in the ledger and unchanged: nothing written"),
]


@pytest.mark.parametrize("extra,code,message", [r[1:] for r in REPLAN], ids=[r[0] for r in REPLAN])
def test_replanning_never_touches_an_applied_plan(
    plans: Path, extra: list[str], code: int, message: str
) -> None:
    _record_applied(plans)
    before = _snapshot(plans)
    argv = ["plan", str(ROOT / "policies"), "--base", f"dir:{ROOT / 'examples/as-found'}"]
    got, out, err = run_cli([*argv, "--out", str(plans), *extra])
    assert got == code, (out, err)
    assert message in out + err
    assert "Traceback" not in out + err
    assert _snapshot(plans) == before
    assert sorted(p.name for p in plans.iterdir()) == [_plan_dir(plans).name, "ledger.jsonl"]


def test_an_interrupted_plan_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import accord.compiler.core.outdir as compile_module

    out = tmp_path / "migrations"
    real = compile_module._write_file
    calls = []

    def crash(path: Path, text: str) -> None:
        calls.append(path)
        if len(calls) == 5:
            raise KeyboardInterrupt  # as a signal arriving mid-write
        real(path, text)

    monkeypatch.setattr(compile_module, "_write_file", crash)
    argv = ["plan", str(ROOT / "policies"), "--base", f"dir:{ROOT / 'examples/as-found'}"]
    code, _, _ = run_cli([*argv, "--out", str(out)])
    assert code in (2, 130)  # click reports the interrupt as "aborted"
    assert not out.exists()


# --------------------------------------------------------------------------------------------
# 7. every plan and ledger read is validated


def _rewrite(directory: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit plan.json and, as a careful attacker would, its manifest entry too."""
    data = json.loads((directory / "plan.json").read_text())
    change(data)
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    (directory / "plan.json").write_text(text)
    manifest = json.loads((directory / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == "plan.json":
            entry["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    (directory / "manifest.json").write_text(json.dumps(manifest))


def _unknown_member(data: dict[str, Any]) -> None:
    data["groups"][0]["stages"].append("99_snowflake_extra")


def _path_out(data: dict[str, Any]) -> None:
    data["stages"][0]["file"] = "../../outside.sql"


def _twice(data: dict[str, Any]) -> None:
    data["stages"].append(dict(data["stages"][0]))


def _wrong_type(data: dict[str, Any]) -> None:
    data["stages"][0]["platform"] = "oracle"


def _renamed(data: dict[str, Any]) -> None:
    data["id"] = "0009_other"


def _missing_file(data: dict[str, Any]) -> None:
    data["stages"][0]["verify"] = "00_gone.verify.sql"


PLAN_CASES = [
    ("unknown-group-member", _unknown_member, "plan.json:", "'99_snowflake_extra' is no stage"),
    ("file-outside-the-plan", _path_out, "plan.json:", "stages.0.file: String should match"),
    ("stage-twice", _twice, "plan.json:", "is listed twice"),
    ("unknown-platform", _wrong_type, "plan.json:", "stages.0.platform: Input should be"),
    ("id-not-the-directory", _renamed, "plan.json:", "is not its directory's name"),
    ("missing-stage-file", _missing_file, "plan.json:", "00_gone.verify.sql is missing"),
]


@pytest.mark.parametrize(
    "change,where,message", [c[1:] for c in PLAN_CASES], ids=[c[0] for c in PLAN_CASES]
)
@pytest.mark.parametrize("command", ["status", "apply", "rollback"])
def test_a_plan_that_does_not_validate_runs_nothing(
    plans: Path, command: str, change: Callable[[dict[str, Any]], None], where: str, message: str
) -> None:
    _rewrite(_plan_dir(plans), change)
    argv = ["migrate", command, "--plans", str(plans)]
    if command != "status":
        argv += ["--platform", "snowflake"]
    code, out, err = run_cli(argv)
    _assert_clean_refusal(code, out, err, where, message)
    line = err.split(where, 1)[1].split(":", 2)
    assert line[0].isdigit() and line[1].isdigit()  # file:line:column
    assert not (plans / "ledger.jsonl").exists()


RAW_PLANS = [
    # (case, bytes of plan.json, location, message)
    ("not-utf8", b'{"id": "\xff"}', "plan.json:1:9", "not valid UTF-8"),
    ("deeply-nested", b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "plan.json:1:", "nested"),
    ("not-json", b'{"id": }', "plan.json:1:8", "invalid JSON"),
    ("not-an-object", b"[1, 2]", "plan.json:1:1", "not an accord plan"),
    ("edited-not-in-manifest", None, "plan.json:1:1", "does not match the checksum"),
]


@pytest.mark.parametrize(
    "raw,where,message", [c[1:] for c in RAW_PLANS], ids=[c[0] for c in RAW_PLANS]
)
def test_a_corrupt_plan_json_is_located(
    plans: Path, raw: bytes | None, where: str, message: str
) -> None:
    path = _plan_dir(plans) / "plan.json"
    path.write_bytes(raw if raw is not None else path.read_bytes().replace(b"  ", b"   ", 1))
    for argv in (
        ["migrate", "status", "--plans", str(plans)],
        ["migrate", "apply", "--platform", "databricks", "--plans", str(plans)],
        ["lint", str(ROOT / "policies"), "--plans", str(plans)],
    ):
        code, out, err = run_cli(argv)
        _assert_clean_refusal(code, out, err, where, message)


LEDGERS = [
    ("not-utf8", b'{"plan": "\xfe"}\n', "ledger.jsonl:1:11", "not valid UTF-8"),
    ("deeply-nested", b"[" * 50_000 + b"]" * 50_000 + b"\n", "ledger.jsonl:1:", "nested"),
    ("second-line-broken", b'{"plan": "x"}\n{"plan": \n', "ledger.jsonl:1:1", "string fields"),
    ("not-json", b'\n\n{"plan": x}\n', "ledger.jsonl:3:10", "invalid JSON"),
    ("not-an-object", b"[]\n", "ledger.jsonl:1:1", "a ledger record is a JSON object"),
    ("bad-status", None, "ledger.jsonl:1:1", "status: Input should be"),
]


@pytest.mark.parametrize("raw,where,message", [c[1:] for c in LEDGERS], ids=[c[0] for c in LEDGERS])
def test_a_corrupt_ledger_is_located(
    plans: Path, raw: bytes | None, where: str, message: str
) -> None:
    ledger = plans / "ledger.jsonl"
    if raw is None:
        _record_applied(plans)
        raw = ledger.read_bytes().replace(b'"applied"', b'"half-done"')
    ledger.write_bytes(raw)
    for argv in (
        ["migrate", "status", "--plans", str(plans)],
        ["migrate", "apply", "--platform", "snowflake", "--plans", str(plans)],
        ["migrate", "rollback", "--platform", "snowflake", "--plans", str(plans)],
    ):
        code, out, err = run_cli(argv)
        _assert_clean_refusal(code, out, err, where, message)
        assert ledger.read_bytes() == raw


def test_a_ledger_without_a_final_newline_stays_readable_after_apply(plans: Path) -> None:
    _record_applied(plans)
    ledger = plans / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes().rstrip(b"\n"))
    outcome = apply(str(plans), ledger, "snowflake", Recorder, print)
    assert not outcome.error and len(outcome.done) == 3
    records = read_ledger(ledger)
    assert [r.line for r in records] == [1, 2, 3, 4]
    assert len({r.stage for r in records}) == 4


def test_an_oversized_plan_is_refused_before_reading(
    plans: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import accord.compiler.history.ledger as ledger_module

    monkeypatch.setattr(ledger_module, "MAX_PLAN_BYTES", 1024)
    code, out, err = run_cli(["migrate", "status", "--plans", str(plans)])
    _assert_clean_refusal(code, out, err, "plan.json:1:1", "at most 1024 are read")


@pytest.mark.parametrize(
    "raw", [b"[" * 100_000, b"\xff\xfe", b"{}"], ids=["deep", "not-utf8", "empty"]
)
def test_planning_beside_a_corrupt_plan_never_crashes(plans: Path, raw: bytes) -> None:
    (_plan_dir(plans) / "plan.json").write_bytes(raw)
    argv = ["plan", str(ROOT / "policies"), "--base", f"dir:{ROOT / 'examples/as-found'}"]
    code, out, err = run_cli([*argv, "--out", str(plans)])
    assert code == 0, err
    assert "Traceback" not in out + err and "internal error" not in err
    assert (_plan_dir(plans) / "plan.json").read_bytes() == raw  # the other plan is left alone


def test_what_a_killed_plan_left_is_recovered_by_the_next(plans: Path) -> None:
    applied = _plan_dir(plans)
    # killed between its two renames while rewriting 0001, and while staging another plan
    moved = plans / f".{applied.name}.accord-old-k1ll3d"
    applied.rename(moved)
    staged = plans / ".0002_other.accord-new-s1gk1l"
    shutil.copytree(moved, staged)
    assert read_plans(plans) == []  # neither is ever a plan
    argv = ["plan", str(ROOT / "policies"), "--base", f"dir:{ROOT / 'examples/as-found'}"]
    code, _, err = run_cli([*argv, "--out", str(plans)])
    assert code == 0, err
    assert sorted(p.name for p in plans.iterdir()) == [applied.name]
    assert [p.id for p in read_plans(plans)] == [applied.name]


def test_a_stage_file_swapped_after_its_check_never_runs(
    plans: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import accord.compiler.plan.apply as runner
    from accord.compiler.core.errors import UsageError

    stage = _plan_dir(plans) / "01_snowflake_prepare.sql"
    real = runner.changed_files

    def check_then_swap(stages: list[Any]) -> list[str]:
        bad = real(stages)
        stage.write_text(stage.read_text() + "\nDROP TABLE DISCOVERY.ASSAYS.RESULTS;\n")
        return bad

    monkeypatch.setattr(runner, "changed_files", check_then_swap)
    executor = Recorder()
    with pytest.raises(UsageError, match="changed while being read"):
        apply(str(plans), plans / "ledger.jsonl", "snowflake", lambda: executor, print)
    assert executor.executed == []
    assert not (plans / "ledger.jsonl").exists()


@pytest.mark.parametrize("command", ["apply", "rollback", "status"])
def test_a_missing_plans_directory_is_refused_and_not_created(tmp_path: Path, command: str) -> None:
    plans = tmp_path / "no-such-plans"
    argv = ["migrate", command, "--plans", str(plans)]
    if command != "status":
        argv += ["--platform", "snowflake"]
    code, out, err = run_cli(argv)
    _assert_clean_refusal(code, out, err, "accord: ", "no such plans directory")
    assert list(tmp_path.iterdir()) == []


def test_a_plan_under_a_name_accord_cannot_write_is_refused_not_skipped(tmp_path: Path) -> None:
    """`migrate apply` and `status` read plans from NNNN_<slug> directories; one holding a
    plan.json under another name (a hand-made copy, an older accord's empty slug) is reported,
    never passed over as if nothing were pending."""
    from accord.compiler.core.errors import UsageError
    from accord.compiler.history.ledger import read_plans

    (tmp_path / "0001_").mkdir()
    (tmp_path / "0001_" / "plan.json").write_text("{}")
    with pytest.raises(UsageError, match="not a plan directory name"):
        read_plans(tmp_path)
