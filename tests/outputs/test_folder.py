"""One run's outputs switched into OUT as a unit (attngrade/runfolder.py), driven directly."""

from __future__ import annotations

from attngrade.outputs.folder import staged


def a_runs_out(tmp_path, overrides: str):
    """An OUT a run wrote, holding `overrides` as its overrides.yaml."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("[]\n", encoding="utf-8")
    (out / "overrides.yaml").write_text(overrides, encoding="utf-8")
    return out


def test_decisions_saved_while_a_run_writes_are_kept_beside_its_fresh_list(tmp_path):
    out = a_runs_out(tmp_path, "# the list of the run before\n")
    said: list[str] = []
    with staged(out, said) as stage:
        (stage / "overrides.yaml").write_text("# this run's list\n", encoding="utf-8")  # the file was untouched
        (out / "overrides.yaml").write_text("# the list of the run before\n# a TA's decision\n", encoding="utf-8")
    assert (out / "overrides.yaml").read_text(encoding="utf-8").endswith("# a TA's decision\n")
    assert (out / "overrides.new.yaml").read_text(encoding="utf-8") == "# this run's list\n"
    assert any("kept the edits saved while this run was writing" in line and "overrides.new.yaml" in line
               for line in said)


def test_decisions_saved_while_a_run_writes_over_a_list_already_decided_are_kept(tmp_path):
    out = a_runs_out(tmp_path, "# decided\n")
    said: list[str] = []
    with staged(out, said) as stage:  # the run found it edited: its fresh list is overrides.new.yaml
        (stage / "overrides.new.yaml").write_text("# this run's list\n", encoding="utf-8")
        (out / "overrides.yaml").write_text("# decided\n# and one more\n", encoding="utf-8")
    assert (out / "overrides.yaml").read_text(encoding="utf-8") == "# decided\n# and one more\n"
    assert (out / "overrides.new.yaml").read_text(encoding="utf-8") == "# this run's list\n"
