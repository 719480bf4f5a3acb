"""Hardening, security classes (issue: no injection through any input, no salt or file content in
any output). Each class is table-driven and asserts the exit code, a located message, no
traceback, nothing written, and that the payload or secret appears in no output at all."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from snowflake.connector.errors import ProgrammingError

from accord.compiler.core import secrets
from accord.compiler.model.salts import (
    SaltBox,
    SaltError,
    materialize,
    placeholder,
    renderings,
    resolve,
)
from accord.compiler.plan.apply import SnowflakeExecutor, apply, split_statements
from accord.targets import get_target, sql
from accord.targets.base import UnsafeOutput
from accord.targets.objects import SaltFunction
from tests.cli import run_cli
from tests.conftest import ROOT
from tests.plan_helpers import reference_plan
from tests.test_migrate import FakeCursor, FakeSnowflake

# --------------------------------------------------------------------------------------------
# 1. SQL injection through a salt reference

PAYLOAD = "DROP TABLE DISCOVERY.ASSAYS.RESULTS"
HOSTILE_REFS = [
    ("quote-braces-semicolon", f"file:x') }} $$; {PAYLOAD}; --"),
    ("carriage-return", f"file:x\r{PAYLOAD}; --"),
    ("line-feed", f"env:X\n{PAYLOAD};"),
    ("line-separator", f"file:x\u2028{PAYLOAD};"),
    ("paragraph-separator", f"file:x\u2029{PAYLOAD};"),
    ("next-line", f"file:x\u0085{PAYLOAD};"),
    ("blank", f"file:x {PAYLOAD}"),
    ("backslash-quote", "file:x\\'); " + PAYLOAD),
    ("dollar-quote", "file:x$$" + PAYLOAD),
    ("dot-dot", "file:../../etc/passwd"),
    ("env-with-dash", "env:SALT-X"),
    ("no-kind", "SUBJECT_SALT"),
    ("too-long", "file:" + "a/" * 600 + "x"),
]


def _policies_with_salt(tmp_path: Path, ref: str) -> Path:
    target = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", target)
    masks = target / "masks.yaml"
    text = masks.read_text(encoding="utf-8")
    escaped = ref.replace("\\", "\\\\").replace('"', '\\"')
    for ch, esc in (("\r", "\\r"), ("\n", "\\n"), ("\u2028", "\\L"), ("\u2029", "\\P")):
        escaped = escaped.replace(ch, esc)
    escaped = escaped.replace("\u0085", "\\N")
    masks.write_text(
        text.replace("env:SUBJECT_SALT_SNOWFLAKE", f'"{escaped}"', 1), encoding="utf-8"
    )
    return target


def _everything_written(root: Path) -> str:
    out = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(out)


@pytest.mark.parametrize("ref", [r for _, r in HOSTILE_REFS], ids=[i for i, _ in HOSTILE_REFS])
@pytest.mark.parametrize("command", ["validate", "lint", "compile", "plan"])
def test_a_hostile_salt_reference_is_refused_with_its_location(
    tmp_path: Path, ref: str, command: str
) -> None:
    policies = _policies_with_salt(tmp_path, ref)
    out = tmp_path / "out"
    argv = {
        "validate": ["validate", str(policies)],
        "lint": ["lint", str(policies)],
        "compile": ["compile", str(policies), "--out", str(out), "--target", "all"],
        "plan": ["plan", str(policies), "--base", f"dir:{ROOT / 'policies'}", "--out", str(out)],
    }[command]
    code, stdout, stderr = run_cli(argv)
    assert code == 2, stdout + stderr
    assert f"{policies / 'masks.yaml'}:" in stderr
    assert "masks.subject_pseudonym.salt.snowflake" in stderr
    assert "Traceback" not in stdout + stderr
    assert not out.exists()


def test_a_placeholder_refuses_any_reference_outside_the_grammar() -> None:
    for _, ref in HOSTILE_REFS:
        with pytest.raises(SaltError):
            placeholder(ref)
    assert placeholder("env:SUBJECT_SALT") == "{{ accord_salt('env:SUBJECT_SALT') }}"
    assert placeholder("file:/run/secrets/subject.salt") == (
        "{{ accord_salt('file:/run/secrets/subject.salt') }}"
    )


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_a_salt_function_that_bypassed_validation_is_never_rendered(platform: str) -> None:
    """The model is not the only way to build a SaltFunction: the renderer refuses too."""
    target = get_target(platform)
    fn = SaltFunction("GOV.POL.S_SALT", "s", f"file:x') }} $$; {PAYLOAD}; --")
    with pytest.raises(SaltError):
        target.render_object(fn)


@pytest.mark.parametrize("platform", ["snowflake", "databricks"])
def test_rendered_sql_holds_exactly_the_statements_of_its_object(
    platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever reaches SQL, a rendered object with an extra statement is refused."""
    target = get_target(platform)
    fn = SaltFunction("GOV.POL.S_SALT", "s", "env:S")
    good = target.render_object(fn)
    assert good is not None and sql.statement_count(good[1], platform) == 1
    monkeypatch.setattr(
        type(target),
        "render_salt_function",
        lambda self, f: ("020_salt_functions.sql", good[1] + f"\n{PAYLOAD};"),
    )
    with pytest.raises(UnsafeOutput, match="holds 2 statement"):
        target.render_object(fn)


def test_every_compiled_file_holds_the_statements_of_its_objects(tmp_path: Path) -> None:
    """The compiled reference estate: statement counts per file equal the objects' counts."""
    from accord.compiler.model.validate import load_project
    from accord.targets import lower_all

    project = load_project(ROOT / "policies")
    for platform, catalog in lower_all(project).items():
        target = get_target(platform)
        want: dict[str, int] = {}
        for obj in catalog:
            rendered = target.render_object(obj)
            if rendered is not None:
                want[rendered[0]] = want.get(rendered[0], 0) + target.expected_statements(obj)
        files = target.render(catalog)
        assert {f: sql.statement_count(t, platform) for f, t in files.items()} == want


@pytest.mark.parametrize(
    "text",
    [
        "SELECT {{ accord_salt('file:x\\') }}",
        "SELECT {{accord_salt('env:X')}}",
        'SELECT {{ accord_salt("env:X") }}',
        "SELECT {{ accord_salt('env:X'); DROP TABLE t; --') }}",
    ],
)
def test_a_hand_edited_placeholder_is_never_filled(text: str) -> None:
    with pytest.raises(SaltError, match="not accord's own form"):
        materialize(text, "snowflake", lambda ref: "secret")


# --------------------------------------------------------------------------------------------
# 2. File and environment disclosure through verify

CANARY = "canary-7f3e-do-not-print"
MASK_FILE = "snowflake/040_masking_policies.sql"
MASK_BODY = "SHA2(VAL || GOVERNANCE.POLICIES.SUBJECT_PSEUDONYM_SALT(), 256)"
READERS = [
    ("read_text-environ", "(SELECT string_agg(content, '') FROM read_text('/proc/self/environ'))"),
    ("read_text-salt-file", "(SELECT string_agg(content, '') FROM read_text('{salt}'))"),
    ("read_csv", "(SELECT string_agg(column0, '') FROM read_csv('/etc/passwd'))"),
    ("glob", "(SELECT string_agg(file, '') FROM glob('/*'))"),
    ("getenv", "getenv('ACCORD_TEST_CANARY')"),
    ("current_setting", "current_setting('home_directory')"),
    ("duckdb_settings", "(SELECT string_agg(value, '') FROM duckdb_settings())"),
]


@pytest.fixture
def compiled(tmp_path: Path) -> Path:
    out = tmp_path / "compiled"
    code, stdout, stderr = run_cli(["compile", str(ROOT / "policies"), "--out", str(out)])
    assert code == 0, stdout + stderr
    return out


@pytest.mark.parametrize("reader", [r for _, r in READERS], ids=[i for i, _ in READERS])
def test_verify_never_reads_files_or_the_environment(
    compiled: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reader: str
) -> None:
    salt_file = tmp_path / "salt.txt"
    salt_file.write_text(CANARY, encoding="utf-8")
    monkeypatch.setenv("ACCORD_TEST_CANARY", CANARY)
    path = compiled / MASK_FILE
    text = path.read_text(encoding="utf-8")
    assert MASK_BODY in text
    path.write_text(text.replace(MASK_BODY, reader.format(salt=salt_file)), encoding="utf-8")
    code, stdout, stderr = run_cli(["verify", str(ROOT / "policies"), "--compiled", str(compiled)])
    assert code == 2, stdout + stderr
    assert f"{MASK_FILE}:" in stderr
    assert CANARY not in stdout + stderr
    assert "root:" not in stdout + stderr
    assert "Traceback" not in stdout + stderr


def test_a_mapping_table_statement_that_reads_a_file_is_refused(
    compiled: Path, tmp_path: Path
) -> None:
    salt_file = tmp_path / "salt.txt"
    salt_file.write_text(CANARY, encoding="utf-8")
    path = compiled / "snowflake/010_mapping_tables.sql"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "COMMIT;",
            "INSERT INTO GOVERNANCE.POLICIES.PROGRAMME_GRANTS (PROGRAMME_CODE, ROLE_NAME) "
            f"SELECT content, 'X' FROM read_text('{salt_file}');\nCOMMIT;",
        ),
        encoding="utf-8",
    )
    code, stdout, stderr = run_cli(["verify", str(ROOT / "policies"), "--compiled", str(compiled)])
    assert code == 2, stdout + stderr
    assert "010_mapping_tables.sql:" in stderr
    assert CANARY not in stdout + stderr


def test_the_verify_connection_is_locked() -> None:
    import duckdb

    from accord.compiler.verify.execute import locked_connection

    con = locked_connection()
    for statement in (
        "SET enable_external_access = true",
        "SELECT * FROM read_text('/etc/hostname')",
        "ATTACH '/tmp/accord-test.db'",
        "INSTALL httpfs",
    ):
        with pytest.raises(duckdb.Error):
            con.execute(statement)


# ---- file: salts are read at apply time only, inside the salt root, from regular files


def test_a_file_salt_is_read_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "subject").write_text("s3cret\n", encoding="utf-8")
    assert resolve("file:secrets/subject", tmp_path) == "s3cret"
    assert resolve(f"file:{tmp_path}/secrets/subject", tmp_path) == "s3cret"


def _fifo(root: Path) -> str:
    os.mkfifo(root / "fifo")
    return "file:fifo"


def _symlink_out(root: Path) -> str:
    outside = root.parent / "outside.txt"
    outside.write_text(CANARY, encoding="utf-8")
    (root / "link").symlink_to(outside)
    return "file:link"


def _big(root: Path) -> str:
    (root / "big").write_bytes(b"x" * 5000)
    return "file:big"


def _directory(root: Path) -> str:
    (root / "dir").mkdir()
    return "file:dir"


def _absolute_outside(root: Path) -> str:
    outside = root.parent / "abs.txt"
    outside.write_text(CANARY, encoding="utf-8")
    return f"file:{outside}"


def _binary(root: Path) -> str:
    (root / "bin").write_bytes(b"\xff\xfe\x00")
    return "file:bin"


def _newline_inside(root: Path) -> str:
    (root / "two").write_text("a\nb", encoding="utf-8")
    return "file:two"


BAD_FILES = [
    ("fifo", _fifo, "not a regular file"),
    ("symlink-out-of-root", _symlink_out, "outside the salt root"),
    ("absolute-outside-root", _absolute_outside, "outside the salt root"),
    ("oversized", _big, "more than 4096 bytes"),
    ("directory", _directory, "not a regular file"),
    ("not-utf8", _binary, "not UTF-8"),
    ("line-break", _newline_inside, "control character"),
]


@pytest.mark.parametrize(
    ("make", "message"), [(m, msg) for _, m, msg in BAD_FILES], ids=[i for i, _, _ in BAD_FILES]
)
def test_a_file_salt_outside_the_rules_is_refused(tmp_path: Path, make, message: str) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ref = make(root)
    with pytest.raises(SaltError, match=message) as err:
        resolve(ref, root)
    assert CANARY not in str(err.value)


def test_a_device_is_not_a_salt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCORD_SALT_ROOT", "/dev")
    assert stat.S_ISCHR(os.stat("/dev/zero").st_mode)
    with pytest.raises(SaltError, match="not a regular file"):
        resolve("file:/dev/zero")


# --------------------------------------------------------------------------------------------
# 3. Salts printed in escaped form

ESCAPY = [
    ("quote", "it's-a-salt"),
    ("backslash", "back\\slash-salt"),
    ("both", "o'neil\\\\x\"y"),
    ("unicode", "sälz-☃-'x"),
]


@pytest.mark.parametrize("salt", [s for _, s in ESCAPY], ids=[i for i, _ in ESCAPY])
def test_every_rendering_of_a_salt_is_redacted(salt: str) -> None:
    box = SaltBox(lambda ref: salt)
    box("env:X")
    for dialect in ("snowflake", "databricks"):
        filled = materialize("SELECT {{ accord_salt('env:X') }}", dialect, lambda ref: salt)
        message = f"001003 (42000): SQL compilation error: syntax error near {filled}"
        assert secrets.MASK in box.redact(message)
        for form in renderings(salt):
            assert form not in box.redact(message)


class EscapingSnowflake(FakeSnowflake):
    """A platform that quotes the failed statement back, as its own literal."""

    def execute_string(self, text: str) -> list[FakeCursor]:
        for statement in split_statements(text, "snowflake"):
            if "SECURE FUNCTION" in statement:
                raise ProgrammingError(msg=f"001003 (42000): syntax error in: {statement}")
        return super().execute_string(text)


@pytest.mark.parametrize("salt", [s for _, s in ESCAPY], ids=[i for i, _ in ESCAPY])
def test_apply_never_prints_an_escaped_salt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, salt: str
) -> None:
    monkeypatch.setenv("SUBJECT_SALT_SNOWFLAKE", salt)
    monkeypatch.setenv("SUBJECT_SALT_DATABRICKS", "other-" + salt)
    plans = reference_plan(tmp_path / "migrations").parent
    lines: list[str] = []
    outcome = apply(
        str(plans),
        plans / "ledger.jsonl",
        "snowflake",
        lambda: SnowflakeExecutor(EscapingSnowflake()),
        lines.append,
    )
    printed = outcome.error + "\n".join(lines)
    assert "syntax error in" in outcome.error
    for form in renderings(salt):
        assert form not in printed, form


# --------------------------------------------------------------------------------------------
# 4. Secrets written through symlinks


def _link_state(out: Path, secret: Path) -> None:
    (out / "terraform" / "terraform.tfstate").symlink_to(secret)


def _link_dot_terraform(out: Path, secret: Path) -> None:
    (out / "terraform" / ".terraform").symlink_to(secret.parent, target_is_directory=True)


def _link_sql_file(out: Path, secret: Path) -> None:
    (out / "snowflake" / "010_mapping_tables.sql").unlink()
    (out / "snowflake" / "010_mapping_tables.sql").symlink_to(secret)


def _link_platform_dir(out: Path, secret: Path) -> None:
    shutil.rmtree(out / "databricks")
    (out / "databricks").symlink_to(secret.parent, target_is_directory=True)


SYMLINKS = [
    ("terraform.tfstate", _link_state),
    (".terraform", _link_dot_terraform),
    ("a compiled file", _link_sql_file),
    ("a platform directory", _link_platform_dir),
]


@pytest.mark.parametrize("make", [m for _, m in SYMLINKS], ids=[i for i, _ in SYMLINKS])
def test_recompiling_never_follows_a_symlink(tmp_path: Path, make) -> None:
    out = tmp_path / "out"
    secret_dir = tmp_path / "elsewhere"
    secret_dir.mkdir()
    secret = secret_dir / "secret.txt"
    secret.write_text(CANARY, encoding="utf-8")
    argv = ["compile", str(ROOT / "policies"), "--out", str(out), "--target", "all"]
    assert run_cli(argv)[0] == 0
    make(out, secret)
    before = {p: p.read_bytes() for p in secret_dir.iterdir()}
    code, stdout, stderr = run_cli(argv)
    assert code == 2, stdout + stderr
    assert "symbolic link" in stderr and str(out) in stderr
    assert {p: p.read_bytes() for p in secret_dir.iterdir()} == before
    assert CANARY not in _everything_written(out) + stdout + stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


def test_an_output_directory_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "out"
    link.symlink_to(real, target_is_directory=True)
    code, _, stderr = run_cli(["compile", str(ROOT / "policies"), "--out", str(link)])
    assert code == 2
    assert "symbolic link" in stderr
    assert not any(real.iterdir())


def test_links_inside_dot_terraform_are_kept_as_links(tmp_path: Path) -> None:
    """A provider plugin cache puts links inside .terraform/: carried over, never followed."""
    out = tmp_path / "out"
    argv = ["compile", str(ROOT / "policies"), "--out", str(out), "--target", "all"]
    assert run_cli(argv)[0] == 0
    cache = tmp_path / "plugin-cache"
    cache.mkdir()
    (cache / "provider").write_text("binary", encoding="utf-8")
    providers = out / "terraform" / ".terraform" / "providers"
    providers.mkdir(parents=True)
    (providers / "provider").symlink_to(cache / "provider")
    assert run_cli(argv)[0] == 0
    kept = out / "terraform" / ".terraform" / "providers" / "provider"
    assert kept.is_symlink() and os.readlink(kept) == str(cache / "provider")
