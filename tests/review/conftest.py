"""The review app's fixtures, from review_fixtures (a name of its own: test files import its helpers too)."""

from review_fixtures import graded_out, server  # noqa: F401 - pytest finds fixtures by name here
