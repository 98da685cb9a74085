"""The staff store as the outputs saw it before it had a package of its own (`attngrade.staff`):
every public name, unchanged, for code that still imports it from here."""

from __future__ import annotations

from ..staff import *  # noqa: F403 - this module is the package's old face
from ..staff import __all__  # noqa: F401
