"""Installed outside the checkout, accord owns one import name and shadows nobody.

The wheel is built from this checkout and installed into a fresh virtual environment beside
another distribution that provides a top-level ``compiler`` module (a package of that name is on
the package index). Both must keep working: ``accord lint`` on a copy of ``policies/`` from a
directory outside the repository, and ``import compiler`` giving the other distribution's module.
The fresh environment borrows the third-party dependencies (sqlglot, pydantic, ...) from the
test's own environment through a path file, so the test needs no network; accord itself comes
only from the wheel.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: pip builds wheels and installs them into a fresh virtual environment
pytestmark = pytest.mark.slow


def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


def _wheel(source: Path, out: Path) -> Path:
    done = _run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out, source)
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


#: what a checkout holds besides its sources (environments, caches, build output)
NOT_SOURCES = shutil.ignore_patterns(
    ".venv", ".git", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", ".benchmarks"
)


@pytest.fixture(scope="module")
def accord_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """accord's wheel, built once for both tests from a copy of this checkout: a build writes
    build/ and accord.egg-info/ beside its sources, never into the repository (which the
    suite's other processes read meanwhile)."""
    tmp = tmp_path_factory.mktemp("wheels-accord")
    source = tmp / "checkout"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCES)
    return _wheel(source, tmp / "out")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, accord_wheel: Path) -> Path:
    """A fresh venv holding accord's wheel and another distribution's ``compiler``."""
    tmp = tmp_path_factory.mktemp("install")
    other = tmp / "other-src"
    (other / "compiler").mkdir(parents=True)
    (other / "compiler" / "__init__.py").write_text('WHO = "another distribution"\n')
    (other / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "not-accord-compiler"\nversion = "1.0"\n'
        '[tool.setuptools]\npackages = ["compiler"]\n'
    )
    venv = tmp / "venv"
    # no pip of its own: this environment's pip installs into it (pip --python)
    done = _run(sys.executable, "-m", "venv", "--without-pip", venv)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    # the dependencies, borrowed from this environment (a path file, not its site customisation:
    # this environment's editable accord is not visible there)
    Path(purelib.stdout.strip(), "borrowed-deps.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n"
    )
    for wheel in (accord_wheel, _wheel(other, tmp / "wheels-other")):
        done = _run(
            sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", wheel
        )
        assert done.returncode == 0, done.stderr
    return venv


def test_the_wheel_holds_only_the_accord_import_name(accord_wheel: Path) -> None:
    wheel = accord_wheel
    tops = {
        name.split("/")[0]
        for name in zipfile.ZipFile(wheel).namelist()
        if not name.split("/")[0].endswith(".dist-info")
    }
    assert tops == {"accord"}
    names = zipfile.ZipFile(wheel).namelist()
    assert "accord/compiler/cli.py" in names and "accord/targets/objects.py" in names
    assert "accord/compiler/data/denial_codes.json" in names  # package data goes with it


def test_accord_lints_beside_another_compiler_package(installed: Path, tmp_path: Path) -> None:
    estate = tmp_path / "my-estate"
    shutil.copytree(ROOT / "policies", estate / "policies")
    done = _run(installed / "bin" / "accord", "lint", "policies", cwd=estate)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "accord lint: no findings in 7 files"
    done = _run(installed / "bin" / "accord", "--version", cwd=estate)
    assert done.returncode == 0 and done.stdout.strip() == "accord 0.1.0", done.stderr
    # the other distribution's module is untouched, and accord is the wheel's, not the checkout's
    probe = (
        "import compiler, accord.compiler.cli as cli; "
        f"print(compiler.WHO); print(cli.__file__.startswith({str(installed)!r}))"
    )
    done = _run(installed / "bin" / "python", "-c", probe, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["another distribution", "True"]
    # the installed accord finds what it is for: a primary-role policy in hand-written SQL
    sql = estate / "masks.snowflake.sql"
    sql.write_text(
        "CREATE MASKING POLICY GOV.P.M AS (val STRING) RETURNS STRING ->\n"
        "  CASE WHEN CURRENT_ROLE() = 'SUPPORT' THEN val ELSE '***' END;\n"
    )
    done = _run(installed / "bin" / "accord", "lint", "--format", "json", sql.name, cwd=estate)
    assert done.returncode == 1, done.stdout + done.stderr
    assert [f["rule"] for f in json.loads(done.stdout)["findings"]] == ["ACC101"]
