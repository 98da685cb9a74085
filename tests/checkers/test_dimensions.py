"""dimensions: a shape such as t × n, written in any of the usual ways."""

from __future__ import annotations

import pytest

from attngrade.checkers import REGISTRY, Context
from attngrade.checkers.dimensions import dimensions
from attngrade.problems import load_homework

PART = load_homework("nyu-dl-transformer").part("1.1a")
SPEC = PART.checks[1]


def check(text: str):
    return REGISTRY["dimensions"].run({"shape": text}, Context(part=PART, spec=SPEC, key={"shape": r"t \times n"}))


@pytest.mark.parametrize("text", [r"t \times n", "t x n", "(t, n)", r"\mathbb{R}^{t \times n}", "t×n", "t by n",
                                  "t × n matrix", "a t by n matrix", "t rows and n columns",
                                  r"\text{a matrix of size } t \times n"])
def test_equivalent_spellings(text):
    assert dimensions(text) == ("t", "n")
    assert check(text).earned == SPEC.points


@pytest.mark.parametrize("text, message", [("n x t", "read as n × t; not the shape"),
                                           ("t", "a shape with 2 sizes was expected"),
                                           ("", "read as nothing")])
def test_wrong_shapes(text, message):
    outcome = check(text)
    assert outcome.earned == 0 and message in outcome.feedback[0]


@pytest.mark.parametrize("text", [r"t \cdot n", "t rows, n cols!", "t × n (roughly)"])
def test_a_shape_that_cannot_be_read_is_invalid_not_wrong(text):
    outcome = check(text)
    assert outcome.invalid and outcome.earned == 0
    assert "could not read a shape" in outcome.feedback[0]


@pytest.mark.parametrize("text, sizes", [(r"a \times b", ("a", "b")), ("s x a", ("s", "a")), ("A by n", ("A", "n")),
                                         ("an m x n array", ("m", "n"))])
def test_a_size_named_a_is_a_size_and_only_a_leading_article_goes(text, sizes):
    assert dimensions(text) == sizes
