"""One run's outputs switched into OUT as a unit (attngrade/runfolder.py), driven directly."""

from __future__ import annotations

from pathlib import Path

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


def test_the_graders_secret_is_kept_in_out_for_the_next_run_and_readable_by_its_owner_alone(tmp_path, capsys):
    """The rows a checkpoint is checked on are drawn with a secret of OUT's: the same in every run into it,
    another in another OUT, never readable by another user."""
    from attngrade.cli import main

    folder = Path(__file__).resolve().parents[2] / "examples" / "cs224n-w21-a5"
    secrets = []
    for out in ("out", "out", "other"):
        assert main(["run", str(folder), "-o", str(tmp_path / out), "--workers", "1"]) == 0
        salt = tmp_path / out / ".salt"
        assert salt.stat().st_mode & 0o777 == 0o600
        secrets.append(salt.read_bytes())
    capsys.readouterr()
    assert len(secrets[0]) == 32 and secrets[0] == secrets[1] != secrets[2]


def test_a_secret_another_user_could_read_is_replaced(tmp_path, capsys):
    from attngrade.cli import main

    folder = Path(__file__).resolve().parents[2] / "examples" / "cs224n-w21-a5"
    assert main(["run", str(folder), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    salt = tmp_path / "out" / ".salt"
    first = salt.read_bytes()
    salt.chmod(0o644)
    assert main(["run", str(folder), "-o", str(tmp_path / "out"), "--workers", "1"]) == 0
    capsys.readouterr()
    assert salt.read_bytes() != first and salt.stat().st_mode & 0o777 == 0o600
