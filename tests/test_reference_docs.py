"""docs/policy-format.md and docs/cli.md are generated from the model and the command
definitions, are current, and leave nothing out: every key of every pydantic class (walked
here through pydantic's own field table, not the JSON Schema the generator reads) is in its
section's key table with a description, and every command, argument and option the click
definitions declare is on its command's page with its exit codes."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from pydantic import BaseModel

from accord.compiler import reference
from accord.compiler.cli import COMMANDS
from accord.compiler.model.schema import PolicyModel
from tests.conftest import ROOT


def _section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    rest = text[start + len(heading) + 2 :]
    stop = re.search(rf"\n#{{1,{len(level)}}} ", rest)
    return rest[: stop.start()] if stop else rest


def test_the_pages_are_current() -> None:
    for path, text in reference.pages().items():
        current = (ROOT / path).read_text(encoding="utf-8")
        assert current == text, f"{path} is stale: run `make docs`"


def test_check_mode_fails_on_a_stale_page(tmp_path: Path) -> None:
    assert reference.main(["--check", "--root", str(tmp_path)]) == 1
    assert reference.main(["--root", str(tmp_path)]) == 0
    assert reference.main(["--check", "--root", str(tmp_path)]) == 0
    page = tmp_path / "docs" / "cli.md"
    page.write_text(page.read_text(encoding="utf-8").replace("--fail-on", "--fail"), "utf-8")
    assert reference.main(["--check", "--root", str(tmp_path)]) == 1


def _inside(kind: object, path: str) -> list[tuple[str, type[BaseModel]]]:
    """The pydantic classes in an annotation, each with its path: ``.NAME`` per mapping
    level, ``[]`` per list (how the page files a class met inside them)."""
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return _classes(kind, path)
    origin = getattr(kind, "__origin__", None)
    args = getattr(kind, "__args__", ()) or ()
    if getattr(kind, "__metadata__", None) is not None:  # Annotated[...]
        return _inside(origin, path)
    if origin is dict:
        return _inside(args[-1], path + ".NAME")
    if origin is list:
        return _inside(args[0], path + "[]")
    return [found for arg in args for found in _inside(arg, path)]


def _classes(model: type[BaseModel], path: str) -> list[tuple[str, type[BaseModel]]]:
    """Every pydantic class reachable from ``model`` with the path the page files it under."""
    found = [(path, model)]
    for name, field in model.model_fields.items():
        found += _inside(field.annotation, f"{path}.{name}" if path else name)
    return found


def test_every_key_of_every_class_is_documented() -> None:
    page = (ROOT / "docs" / "policy-format.md").read_text(encoding="utf-8")
    classes = _classes(PolicyModel, "")
    names = {cls.__name__ for _, cls in classes}
    assert {"Mask", "Dataset", "RowFilter", "ColumnSpec", "Surface", "A2AEndpoint"} <= names
    seen: set[type[BaseModel]] = set()
    for path, cls in classes:
        if cls in seen:
            continue
        seen.add(cls)
        section, _, rest = path.partition(".")
        if not path:
            body = _section(page, "## Top level")
        elif rest in ("", "NAME"):
            body = _section(page, f"## {section}")
        else:
            body = _section(page, f"### {path}")
        for key, field in cls.model_fields.items():
            assert field.description, f"{cls.__name__}.{key} has no description"
            row = next((ln for ln in body.splitlines() if ln.startswith(("| `", "| [`"))), None)
            assert row is not None, path
            assert re.search(rf"^\| \[?`{key}`", body, re.M), f"{path}: key {key} is missing"


def _commands() -> list[tuple[str, click.Command]]:
    from accord.compiler.cli import cli

    ctx = click.Context(cli)
    out = []
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        out.append((name, command))
        if isinstance(command, click.Group):
            out += [(f"{name} {sub}", c) for sub, c in command.commands.items()]
    return out


@pytest.mark.parametrize("path", sorted(p for p, _ in _commands()))
def test_every_command_and_option_is_on_its_page(path: str) -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    command = dict(_commands())[path]
    body = _section(page, f"## accord {path}")
    assert f"[`accord {path}`](#accord-{path.replace(' ', '-')})" in page
    for param in command.params:
        if isinstance(param, click.Argument):
            assert f"| `{param.human_readable_name}` |" in body, (path, param.name)
        else:
            for opt in param.opts:
                assert f"`{opt}`" in body, (path, opt)
    if not isinstance(command, click.Group):
        assert "Exit codes: `0` success" in body and "`2` it could not run." in body
        one = reference.EXIT_ONE[path]
        assert (f"`1` {one}" if one else "(never `1`)") in body


def test_the_exit_table_names_exactly_the_commands() -> None:
    assert set(reference.command_paths()) == set(reference.EXIT_ONE)
    assert set(reference.command_paths()) == {
        p for p, c in _commands() if not isinstance(c, click.Group)
    }


def test_the_readme_points_to_the_reference_pages() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(docs/policy-format.md)" in readme and "(docs/cli.md)" in readme
    assert "(docs/rules.md)" in readme
