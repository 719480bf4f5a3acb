"""``accord terraform plan|apply OUT``: run Terraform on ``OUT/terraform/main.tf.json``.

A plan is data, reviewed before anything runs. ``plan`` initialises the working directory,
writes the saved plan ``OUT/terraform/accord.tfplan``, prints it with its SHA-256 and records
the digest beside it. ``apply`` applies exactly that file, after checking it still has the
recorded digest (and the one the reviewer passes with ``--sha256``), and removes it once
applied. Terraform runs through python-terraform's ``cmd()`` with explicit flags: the
package's ``apply()``, ``destroy()``, ``output()`` and ``plan()`` helpers are not used (they
cannot approve non-interactively, pass a removed flag, break on Terraform >= 0.12 and
misreport plan exit codes).

``plan`` also reads the saved plan back (``terraform show -json``) and refuses, saving
nothing, a change that would swap a masking policy or a row access attachment on an existing
object in two steps (``targets/terraform/guard.py``).

Exit codes: 0 planned or applied; 1 the plan was refused (digest mismatch, or a change that
would leave data unprotected); 2 Terraform,
python-terraform or the configuration is missing, or Terraform failed.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import click

from accord.compiler.core.errors import UsageError
from accord.compiler.core.visible import visible

PLAN_FILE = "accord.tfplan"
DIGEST_FILE = "accord.tfplan.sha256"

#: ``terraform plan -detailed-exitcode``: 0 no changes, 2 changes, anything else an error
PLAN_NO_CHANGES, PLAN_CHANGES = 0, 2


class TerraformFailed(Exception):
    def __init__(self, step: str, code: int, err: str) -> None:
        super().__init__(f"terraform {step} failed (exit {code})")
        self.err = err


def run(
    workdir: Path, step: str, *args: str, switches: tuple[str, ...] = (), **options: object
) -> tuple[int, str, str]:
    """Run ``terraform <step> [options] [switches] [args]`` in ``workdir`` through
    python-terraform's ``cmd()``.

    ``options`` and ``switches`` follow python-terraform's spelling (``_`` for ``-``):
    ``input=False`` is ``-input=false``, ``out="x"`` is ``-out=x``, switch ``"no_color"`` is
    ``-no-color``. Returns (exit code, stdout, stderr). A missing python-terraform or terraform
    binary is a UsageError (exit 2), never a traceback."""
    try:
        from python_terraform import IsFlagged, Terraform
    except ImportError:
        raise UsageError(
            "accord terraform needs python-terraform: pip install 'accord[terraform]'"
        ) from None
    binary = shutil.which("terraform")
    if binary is None:
        raise UsageError("accord terraform needs the terraform binary on PATH")
    tf = Terraform(working_dir=str(workdir), terraform_bin_path=binary)
    flags = {**options, **dict.fromkeys(switches, IsFlagged)}
    code, out, err = tf.cmd(step, *args, **flags)
    return code, out or "", err or ""


def workdir_of(out: str) -> Path:
    workdir = Path(out) / "terraform"
    if not (workdir / "main.tf.json").is_file():
        raise UsageError(
            f"{workdir / 'main.tf.json'}: not found; run "
            f"`accord compile --out {out} --target terraform` (or all) first"
        )
    return workdir


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def plan(workdir: Path) -> tuple[bool, str, str]:
    """init + plan; returns (changes?, plan text, digest of the saved plan)."""
    code, _, err = run(workdir, "init", input=False, switches=("no_color",))
    if code != 0:
        raise TerraformFailed("init", code, err)
    (workdir / DIGEST_FILE).unlink(missing_ok=True)
    code, out, err = run(
        workdir,
        "plan",
        input=False,
        out=PLAN_FILE,
        switches=("no_color", "detailed_exitcode"),
    )
    if code not in (PLAN_NO_CHANGES, PLAN_CHANGES):
        raise TerraformFailed("plan", code, err)
    refused = unsafe(workdir) if code == PLAN_CHANGES else []
    if refused:
        (workdir / PLAN_FILE).unlink(missing_ok=True)  # nothing left that apply could run
        raise UnsafePlan(refused)
    digest = sha256_of(workdir / PLAN_FILE)
    (workdir / DIGEST_FILE).write_text(f"{digest}  {PLAN_FILE}\n", encoding="utf-8")
    return code == PLAN_CHANGES, out, digest


class UnsafePlan(Exception):
    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def unsafe(workdir: Path) -> list[str]:
    """The changes of the saved plan that would leave data unprotected (targets/terraform/guard.py),
    read from ``terraform show -json``."""
    import json

    from accord.targets.terraform.guard import unsafe_changes

    code, out, err = run(workdir, "show", PLAN_FILE, switches=("json", "no_color"))
    if code != 0:
        raise TerraformFailed("show", code, err)
    try:
        return unsafe_changes(json.loads(out))
    except ValueError:
        raise TerraformFailed("show", code, "terraform show -json printed no JSON") from None


def apply(workdir: Path, expected: str | None) -> tuple[bool, str]:
    """Apply the saved plan if its digest is the recorded (and expected) one; returns
    (applied?, message or Terraform's output)."""
    path, record = workdir / PLAN_FILE, workdir / DIGEST_FILE
    if not path.is_file() or not record.is_file():
        raise UsageError(f"{path}: no reviewed plan; run `accord terraform plan` first")
    digest = sha256_of(path)
    recorded = record.read_text(encoding="utf-8").split()[0]
    if digest != recorded:
        return False, f"{path} has SHA-256 {digest}, not {recorded} as planned: refusing"
    if expected is not None and digest != expected.lower():
        return False, f"{path} has SHA-256 {digest}, not the reviewed {expected}: refusing"
    code, out, err = run(
        workdir, "apply", PLAN_FILE, input=False, switches=("no_color", "auto_approve")
    )
    if code != 0:
        raise TerraformFailed("apply", code, err)
    path.unlink()
    record.unlink()
    return True, out


@click.group("terraform")
def command() -> None:
    """Plan and apply OUT/terraform/main.tf.json (written by `accord compile`)."""


@command.command("plan")
@click.argument("out", type=click.Path())
def plan_command(out: str) -> int:
    """Write OUT/terraform/accord.tfplan for review and print it with its SHA-256."""
    workdir = workdir_of(out)
    try:
        changes, text, digest = plan(workdir)
    except TerraformFailed as failure:
        click.echo(failure.err, err=True)
        raise UsageError(str(failure)) from None
    except UnsafePlan as refusal:
        from accord.targets.terraform.guard import ALTERNATIVE

        for reason in refusal.reasons:
            click.echo(f"accord: refused: {visible(reason)}", err=True)
        click.echo(f"accord: no plan was saved; {ALTERNATIVE}", err=True)
        return 1
    click.echo(text.rstrip())
    click.echo(f"accord: {'changes' if changes else 'no changes'}; plan {workdir / PLAN_FILE}")
    click.echo(f"accord: sha256 {digest}")
    click.echo(f"accord: after review: accord terraform apply {out} --sha256 {digest}")
    return 0


@command.command("apply")
@click.argument("out", type=click.Path())
@click.option("--sha256", "expected", help="Apply only if the saved plan has this SHA-256.")
def apply_command(out: str, expected: str | None) -> int:
    """Apply exactly the plan saved by `accord terraform plan OUT`."""
    workdir = workdir_of(out)
    try:
        applied, text = apply(workdir, expected)
    except TerraformFailed as failure:
        click.echo(failure.err, err=True)
        raise UsageError(str(failure)) from None
    if not applied:
        click.echo(f"accord: {visible(text)}", err=True)
        return 1
    click.echo(text.rstrip())
    return 0
