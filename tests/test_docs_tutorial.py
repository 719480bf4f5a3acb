"""The tutorial (docs/tutorial.md) and the README's example run as written.

The page is read in order: a ```yaml block titled with a path (``title="policies/x.yaml"``)
holds one snippet line (``--8<-- "docs/tutorial/..."``) and writes that file's text to the
path, as a reader who copies it would; a ```console block holds commands (``$ ...``), each
run exactly as written by bash in a temporary directory with the installed ``accord`` first on
PATH, and what it prints (stdout and stderr, as a terminal shows them) must be the lines the
page shows after it, ``...`` standing for lines left out. A command exits 0 unless its line
says ``# exit N``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.md"
#: a fenced block: its language, the rest of its opening line, its body
FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```$", re.M | re.S)
TITLE = re.compile(r'title="([^"]+)"')
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$')
EXIT = re.compile(r"#\s*exit\s+(\d+)")


@dataclass
class Step:
    """Write ``text`` to ``path``, or run ``command`` and expect ``output`` and ``exit``."""

    path: str | None = None
    text: str = ""
    command: str | None = None
    output: tuple[str, ...] = ()
    exit: int = 0


def steps(page: str) -> list[Step]:
    out: list[Step] = []
    for lang, head, body in FENCE.findall(page):
        title = TITLE.search(head)
        if lang == "yaml" and title:
            snippet = SNIPPET.match(body.strip())
            assert snippet, f"{title.group(1)}: the page shows its file through a snippet line"
            text = (ROOT / snippet.group(1)).read_text(encoding="utf-8")
            out.append(Step(path=title.group(1), text=text))
        elif lang == "console":
            for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
                command, *lines = chunk.rstrip("\n").split("\n")
                code = EXIT.search(command)
                out.append(
                    Step(command=command, output=tuple(lines), exit=int(code[1]) if code else 0)
                )
    return out


def matches(expected: tuple[str, ...], actual: list[str]) -> bool:
    """``actual`` is ``expected`` with each ``...`` line standing for any lines (none too)."""
    pattern = "".join(
        r"(?:[^\n]*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in expected
    )
    return re.fullmatch(pattern, "".join(line + "\n" for line in actual)) is not None


def run(command: str, cwd: Path, env: dict[str, str]) -> tuple[int, list[str]]:
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    return done.returncode, [line.rstrip() for line in done.stdout.splitlines()]


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    """The installed entry point first on PATH; output unbuffered so stdout and stderr
    interleave as on a terminal; the lint cache in the test's own directory."""
    bin_dir = Path(sys.executable).parent
    assert shutil.which("accord", path=str(bin_dir)), "accord is not installed beside python"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
        ACCORD_CACHE_DIR=str(tmp_path / "cache"),
        NO_COLOR="1",
    )
    return env


def play(page_steps: list[Step], cwd: Path, env: dict[str, str]) -> None:
    for step in page_steps:
        if step.path is not None:
            target = cwd / step.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.text, encoding="utf-8")
            continue
        assert step.command is not None
        code, lines = run(step.command, cwd, env)
        shown = "\n".join(lines)
        assert code == step.exit, (
            f"$ {step.command}\nexit {code}, the page says {step.exit}\n{shown}"
        )
        assert matches(step.output, lines), (
            f"$ {step.command}\nprinted:\n{shown}\nthe page shows:\n" + "\n".join(step.output)
        )


@pytest.mark.slow
def test_every_command_of_the_tutorial_runs_as_the_page_shows(
    tmp_path: Path, shell_env: dict[str, str]
) -> None:
    page_steps = steps(TUTORIAL.read_text(encoding="utf-8"))
    commands = [s.command for s in page_steps if s.command]
    # the walkthrough the page promises: each command at least once, a defect found and fixed
    for word in ("validate", "lint", "compile", "verify", "analyze", "probe", "diff"):
        assert any(c.startswith(f"accord {word} ") for c in commands), word
    assert any(s.exit == 1 and s.command.startswith("accord lint") for s in page_steps if s.command)
    work = tmp_path / "work"
    work.mkdir()
    play(page_steps, work, shell_env)


def test_every_tutorial_file_is_on_the_page() -> None:
    """The files under docs/tutorial/ are the page's: none unused, none missing."""
    page = TUTORIAL.read_text(encoding="utf-8")
    shown = {m for m in re.findall(r'^--8<-- "([^"]+)"$', page, re.M)}
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "tutorial").rglob("*.yaml")}
    assert shown == files


@pytest.mark.slow
def test_a_page_that_differs_from_what_accord_prints_fails(
    tmp_path: Path, shell_env: dict[str, str]
) -> None:
    """The guard: a wrong line of output, or a wrong exit code, is reported."""
    (tmp_path / "policies").mkdir()
    empty = Step(command="accord lint policies", output=("accord lint: no findings in 0 files",))
    play([empty], tmp_path, shell_env)
    wrong = Step(command=empty.command, output=("accord lint: no findings in 2 files",))
    with pytest.raises(AssertionError, match=r"(?s)in 0 files.*the page shows:.*in 2 files"):
        play([wrong], tmp_path, shell_env)
    missing = Step(command="accord lint nowhere", output=("...",), exit=2)
    play([missing], tmp_path, shell_env)  # no such path: exit 2, whatever it printed
    with pytest.raises(AssertionError, match="exit 2, the page says 0"):
        play([Step(command=missing.command, output=("...",))], tmp_path, shell_env)
    assert matches(("a", "...", "d"), ["a", "b", "c", "d"])
    assert matches(("a", "...", "b"), ["a", "b"])
    assert not matches(("a", "d"), ["a", "b", "d"])
    assert not matches(("a",), ["a", "b"])


README_EXAMPLE = re.compile(
    r"<!-- example: (?P<file>[\w.]+) -->\n```yaml\n(?P<yaml>.*?)^```\n.*?"
    r"<!-- example: (?P<command>[^>]+?) -->\n```console\n(?P<console>.*?)^```",
    re.M | re.S,
)


@pytest.mark.slow
def test_the_readme_example_runs_as_shown(tmp_path: Path, shell_env: dict[str, str]) -> None:
    """The README's example: its YAML, written to policies/<file>, gives what the README shows;
    with the salt the README names added, lint finds nothing."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    m = README_EXAMPLE.search(readme)
    assert m, "the README's example (<!-- example: ... --> markers) is missing"
    write = Step(path=f"policies/{m['file']}", text=m["yaml"])
    (ran,) = steps("```console\n" + m["console"] + "```\n")
    assert ran.command == m["command"]
    ran.exit = 1  # the example shows an error-level finding
    play([write, ran], tmp_path, shell_env)
    fixed = re.search(r"\(`(email: \{strategy: hash.*?\}\})`\)", readme, re.S)
    assert fixed, "the README names the fixed mask"
    line = " ".join(fixed[1].split())
    text = re.sub(r"^  email: .*$", "  " + line, m["yaml"], flags=re.M)
    assert text != m["yaml"]
    play(
        [
            Step(path=write.path, text=text),
            Step(command="accord lint policies", output=("accord lint: no findings in 1 file",)),
        ],
        tmp_path,
        shell_env,
    )
