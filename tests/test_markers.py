"""The suite's markers (pyproject.toml, tests/conftest.py): ``-m "not standin"`` leaves out every
test that serves on loopback, because a test that starts a stand-in unmarked fails; and
:func:`fast_sample` leaves the fast tier only the cases it keeps."""

from __future__ import annotations

import pytest

from tests.conftest import fast_sample

pytest_plugins = ["pytester"]

INNER = """
import pytest

from accord.sandbox.standins.http import Handler, serve, silent_host


def test_serves_unmarked():
    with serve(Handler):
        pass


def test_silent_unmarked():
    with silent_host():
        pass


@pytest.mark.standin
def test_serves_marked():
    with serve(Handler):
        pass


def test_serves_nothing():
    pass


@pytest.fixture
def platforms():
    with serve(Handler) as port:
        yield port


def test_through_the_platforms_fixture(platforms):
    assert platforms
"""


@pytest.mark.standin
def test_a_test_that_starts_a_stand_in_unmarked_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_inprocess("-p", "tests.conftest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "test_inner.py::test_serves_unmarked starts a stand-in: mark it @pytest.mark.standin",
            "test_inner.py::test_silent_unmarked starts a stand-in: mark it @pytest.mark.standin",
        ]
    )
    # the fixture named platforms marks the tests asking for it
    marked = pytester.runpytest_inprocess(
        "-p", "tests.conftest", "-p", "no:cacheprovider", "-m", "standin", "--co", "-q"
    )
    marked.stdout.fnmatch_lines(
        ["test_inner.py::test_serves_marked", "test_inner.py::test_through_the_platforms_fixture"]
    )
    assert "test_serves_nothing" not in marked.stdout.str()


def test_fast_sample_marks_all_but_the_kept_cases_slow() -> None:
    cases = fast_sample(range(4), keep={0, 2})
    assert cases[0] == 0 and cases[2] == 2
    for case, value in ((cases[1], 1), (cases[3], 3)):
        assert isinstance(case, type(pytest.param(0)))
        assert case.values == (value,) and [m.name for m in case.marks] == ["slow"]
