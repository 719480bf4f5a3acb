"""`accord schema` prints a JSON Schema that editors can use on every policy file."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

from tests.cli import run_cli
from tests.conftest import ROOT

POLICY_FILES = sorted(
    p for d in ("policies", "examples/as-found") for p in (ROOT / d).rglob("*.y*ml")
)


@pytest.fixture(scope="module")
def schema() -> dict:
    proc = run_cli(["schema"])
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    jsonschema.Draft202012Validator.check_schema(document)
    return document


@pytest.mark.parametrize("path", POLICY_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_policy_file_validates_against_the_schema(schema, path) -> None:
    jsonschema.validate(yaml.safe_load(path.read_text()), schema)


def test_schema_rejects_what_the_loader_rejects(schema) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"masks": {"m": {"strategy": "scramble"}}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {"datasets": {"d": {"platform": "snowflake", "table": "x", "colums": {}}}}, schema
        )


def _section_classes() -> list[type]:
    from accord.compiler.model import schema as model

    return sorted(
        (
            c
            for c in vars(model).values()
            if isinstance(c, type)
            and issubclass(c, model.Strict)
            and c not in (model.Strict, model.PolicyModel)
            and c.__module__.startswith(model.__name__ + ".")
        ),
        key=lambda c: c.__name__,
    )


def test_every_class_of_the_model_is_exported_from_its_face() -> None:
    """The classes are written one section per module (compiler/model/schema/) and imported
    from the package: every class of every module is there, and the sections are all tried
    below."""
    import importlib
    import pkgutil

    from accord.compiler.model import schema as model

    written = set()
    for info in pkgutil.iter_modules(model.__path__):
        module = importlib.import_module(f"{model.__name__}.{info.name}")
        written |= {
            c
            for c in vars(module).values()
            if isinstance(c, type)
            and issubclass(c, model.Strict)
            and c.__module__ == module.__name__
        }
    assert written <= {c for c in vars(model).values() if isinstance(c, type)}
    assert set(_section_classes()) == written - {model.Strict, model.PolicyModel}
    assert len(written) == 24


@pytest.mark.parametrize("cls", _section_classes(), ids=lambda c: c.__name__)
def test_a_section_built_on_its_own_has_the_schema_inlined_in_the_policy_model(cls) -> None:
    # the classes defer building their validators (``defer_build``): a section's own build,
    # when it is used alone, must agree with the one inlined in PolicyModel's schema
    from accord.compiler.model.schema import PolicyModel

    whole = PolicyModel.model_json_schema(mode="validation")
    alone = cls.model_json_schema(mode="validation", ref_template="#/$defs/{model}")
    defs = alone.pop("$defs", {})
    for name, definition in defs.items():
        assert whole["$defs"][name] == definition, name
    assert whole["$defs"][cls.__name__] == alone
