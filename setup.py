"""The package list of the distribution (everything else is in pyproject.toml).

The distribution owns one import name, ``accord``: the repository's top-level ``compiler/`` and
``targets/`` folders are installed as ``accord.compiler`` and ``accord.targets``, with every
subpackage found beneath them, so installing accord never shadows another distribution's
``compiler`` or ``targets``. pyproject.toml cannot prefix found packages; this file does.
"""

from setuptools import find_packages, setup

FOLDERS = ("compiler", "targets", "sandbox")
packages = ["accord"] + [
    f"accord.{name}" for name in find_packages(include=[f"{f}*" for f in FOLDERS]) if name
]
setup(
    packages=packages,
    package_dir={"accord": "accord", **{f"accord.{f}": f for f in FOLDERS}},
)
