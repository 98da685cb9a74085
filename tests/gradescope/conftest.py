"""Fixtures for the Gradescope tests: the built autograders, a Gradescope-like root, the schema.

The autograder zips are built once per session (a wheel build each); every test then
unpacks one into its own temporary root laid out as Gradescope lays out /autograder.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from attngrade.cli import main
from gradescope_helpers import HOMEWORK, REPO, SCHEMA, Gradescope, write_gold


@pytest.fixture(scope="session")
def test_gold(tmp_path_factory) -> Path:
    return write_gold(tmp_path_factory.mktemp("gold") / "birth_test.tsv")


@pytest.fixture(scope="session")
def autograder_zip(tmp_path_factory, test_gold) -> Path:
    """The autograder for A5 with the test gold, built through the command line."""
    out = tmp_path_factory.mktemp("autograder") / "autograder.zip"
    code = main(["autograder", HOMEWORK, "-o", str(out), "--solutions", str(REPO / "solutions"),
                 "--gold", f"test={test_gold}"])
    assert code == 0 and out.is_file()
    return out


@pytest.fixture(scope="session")
def autograder_zip_without_gold(tmp_path_factory) -> Path:
    from attngrade.gradescope import build_autograder

    out = tmp_path_factory.mktemp("autograder-nogold") / "autograder.zip"
    return build_autograder(HOMEWORK, out, solutions=REPO / "solutions", gold={})


@pytest.fixture(scope="session")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture()
def gradescope(tmp_path, validator) -> Gradescope:
    return Gradescope(tmp_path, validator)
