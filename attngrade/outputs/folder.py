"""One run's outputs as a unit: written into a fresh folder beside OUT, then switched in.

A reader of OUT sees the previous complete run or this complete run, never a mix (a
report of this run beside the grades.csv of the last). The staging folder is a hidden
sibling, `.OUT.partial-XXXX`, on the same file system, so the switch is two renames:
OUT → `.OUT.old-XXXX`, then the staging folder → OUT; the old one is removed after.

A run killed before the switch leaves OUT as it was; the next run discards the partial
folder and says so. A run killed between the two renames leaves no OUT but a complete
`.OUT.old-XXXX`, which the next run puts back first. The overrides file a person edited
in OUT is carried into the new run (`overrides.py` keeps it and writes the fresh list
beside it).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Collection, Iterator

from ..errors import ConfigError
from ..runtime.files import file_sha256
from ..runtime.outfiles import FOLDERS_FILE, OUTPUT_FILES
from ..runtime.text import counted

# What a run writes into OUT (output.OUTPUT_FILES, and report.html in each student's folder);
# anything else there (a decisions file, notes) is someone's, and is moved into the new OUT at
# the switch.
CARRIED = ("overrides.yaml", ".overrides.sha256")  # a person's edits to keep across runs
IN_PLACE_LOCK = ".attngrade.lock"  # inside an OUT written in place (its parent may not be ours)


_HELD: set[Path] = set()  # OUT folders this process holds (see `claimed`)


@contextmanager
def claimed(out: Path, said: list[str]) -> Iterator[None]:
    """Hold OUT for a whole run, from before it grades anything.

    A second run into the same OUT is refused at once, not after grading a class; what an
    interrupted run left beside OUT is put right first (so a run reading OUT/overrides.yaml
    reads the restored one). Messages for the instructor (a discarded partial run, a restored
    previous run) are appended to `said`.
    """
    out = Path(os.path.abspath(out))
    out.parent.mkdir(parents=True, exist_ok=True)
    if out in _HELD:
        yield
        return
    in_place = _in_place(out)
    with _locked(out, out / IN_PLACE_LOCK if in_place else None):  # in place, its parent may not be ours
        if not in_place:
            said.extend(_recover(out))
            check_only_outputs(out)
        _HELD.add(out)
        try:
            yield
        finally:
            _HELD.discard(out)


def new_stage(out: Path) -> Path | None:
    """A staging folder for OUT made now, for `staged` to use later (the students' folders can
    then be made in it while the class is graded); None where OUT is written in place. The
    caller removes it if `staged` never takes it (a run killed before then leaves it for the
    next run to discard, as any partial run)."""
    out = Path(os.path.abspath(out))
    if _in_place(out):
        return None
    return _make_stage(out)


def _make_stage(out: Path) -> Path:
    return Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))


@contextmanager
def staged(out: Path, said: list[str], persons: Collection[str] = (), stage: Path | None = None) -> Iterator[Path]:
    """Yield a fresh folder to write the run into; switch it in as OUT when the block ends.

    OUT is held (`claimed`) if the caller does not hold it already. On an exception (Ctrl-C
    included) the staging folder is removed, OUT is untouched, and stderr says so.
    `persons`: folders of OUT the run before did not write (see `lastrun`): a person's, a
    report.html in them included. `stage`: one `new_stage` made for this OUT, used (and so
    removed or switched in) instead of a new one.
    """
    out = Path(os.path.abspath(out))
    with claimed(out, said):
        if _in_place(out):
            if stage is not None:  # OUT became a mount point or lost its parent's permission meanwhile
                shutil.rmtree(stage, ignore_errors=True)
            said.append(f"{out} cannot be replaced as a whole (a mount point, a link, or its parent is not "
                        "writable): its outputs were written in place")
            earlier = _reports_in(out, persons)
            (out / WRITING).touch()  # a run stopped now leaves an OUT the next run knows for a run's
            try:
                yield out
            except BaseException:
                sys.stderr.write(f"grade: stopped while writing in place; {out} may now hold files of this run "
                                 "beside files of the last one: run again to complete it\n")
                raise
            said.extend(_remove_unwritten(earlier, out))
            (out / WRITING).unlink(missing_ok=True)
            return
        stage = stage or _make_stage(out)
        try:
            for name in CARRIED:
                if (out / name).is_file():
                    shutil.copy2(out / name, stage / name)
            started = _sha256(out / "overrides.yaml")
            yield stage
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            before = "still holds the previous complete run" if out.exists() else "was not written"
            sys.stderr.write(f"grade: stopped before the outputs were complete; {out} {before}\n")
            raise
        os.chmod(stage, 0o777 & ~_umask())  # mkdtemp makes 0700; an output folder is an ordinary one
        said.extend(_switch(stage, out, started, persons))


def _reports_in(out: Path, persons: Collection[str] = ()) -> dict[Path, tuple[int, int]]:
    """The students' reports an earlier run left in OUT (and the temporary files of one that was
    killed), each with what tells it from a file written later (a report is replaced by a
    rename, so a rewritten one is another inode)."""
    found = {}
    with os.scandir(out) as entries:
        folders = [Path(entry.path) for entry in entries if entry.is_dir(follow_symlinks=False)
                   and entry.name not in persons]
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if _STUDENT.match(entry.name) and entry.is_file(follow_symlinks=False):
                        stat = entry.stat(follow_symlinks=False)
                        found[Path(entry.path)] = (stat.st_ino, stat.st_mtime_ns)
        except OSError:
            continue
    return found


def _remove_unwritten(earlier: dict[Path, tuple[int, int]], out: Path) -> list[str]:
    """In place, a student who left the class keeps no report: remove each report of `earlier`
    this run did not write (their folder too, once nothing else is in it), and what a killed
    run left half-written."""
    gone, kept, torn = [], [], 0
    for report, seen in earlier.items():
        try:
            stat = report.lstat()
            if (stat.st_ino, stat.st_mtime_ns) != seen:  # rewritten by this run (or replaced)
                continue
            report.unlink()
        except FileNotFoundError:
            continue
        except OSError as err:  # the run is complete: a report it may not remove is said, not fatal
            kept.append(f"{report} ({err.strerror or err})")
            continue
        if report.name == "report.html":
            gone.append(report.parent.name)
        else:
            torn += 1
        try:
            report.parent.rmdir()  # only if empty: a person's notes beside the report stay
        except OSError:
            pass
    said = []
    if gone:
        said.append(f"{out}: removed the reports of {counted(len(gone), 'folder')} no student of this run has "
                    f"({_some(sorted(gone))})")
    if torn:
        said.append(f"{out}: removed {counted(torn, 'temporary report file')} an interrupted run had left")
    if kept:
        said.append(f"{out}: could not remove {counted(len(kept), 'old report file')} of students no longer in the class: "
                    f"{_some(kept)}; remove them by hand")
    return said


def _some(names: list[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def written_at_the_top(entry: Path) -> bool:
    """Whether `entry`, at the top of OUT, is what a run writes there (results.json, grades.csv...)."""
    return _written(entry, _TOP)


def written_in_a_students_folder(entry: Path) -> bool:
    """Whether `entry`, in a student's folder of OUT, is what a run writes there (their report)."""
    return _written(entry, _STUDENT)


def _in_place(out: Path) -> bool:
    """OUT that two renames cannot replace: a mount point (docker -v), a link, or a parent we may not write."""
    return out.exists() and (_mount_point(out) or out.is_symlink() or not os.access(out.parent, os.W_OK))


def _mount_point(folder: Path) -> bool:
    """os.path.ismount, and a folder bound onto itself or onto another folder of the same file
    system (`mount --bind`, a container's volume), which only the kernel's mount table tells."""
    if os.path.ismount(folder):
        return True
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as table:
            points = {_unescaped(line.split()[4]) for line in table if len(line.split()) > 4}
    except OSError:  # not Linux
        return False
    return os.path.realpath(folder) in points


def _unescaped(field: str) -> str:
    """A path of /proc/self/mountinfo, where a space is written \\040."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


@contextmanager
def _locked(out: Path, lock: Path | None = None) -> Iterator[None]:
    """OUT for this process alone, by a lock file beside it (`lock`: elsewhere)."""
    lock = lock or out.parent / f".{out.name}.lock"
    for _ in range(3):
        handle = open(lock, "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise ConfigError(f"-o {out}: another grade run is writing this folder; wait for it to finish") from None
        if _same_file(handle, lock):
            break
        handle.close()  # the run before unlinked it as we locked it: lock the file that is there now
    else:
        raise ConfigError(f"-o {out}: could not lock {lock}; is another grade run starting and stopping?")
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)  # nothing of the run stays beside OUT
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _same_file(handle: Any, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(handle.fileno()), os.stat(path))
    except OSError:
        return False


def _sha256(path: Path) -> str | None:
    """What an overrides file holds, by hash (never the whole file in memory); None if there is none."""
    return file_sha256(path) if path.is_file() else None


def _switch(stage: Path, out: Path, started: str | None = None, persons: Collection[str] = ()) -> list[str]:
    """Put the staged run in OUT's place (see the module's docstring); what is said of it."""
    old, said = None, []
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        os.rename(out, old / "run")
    os.rename(stage, out)
    if old is not None:
        edited = old / "run" / "overrides.yaml"
        if edited.is_file() and _sha256(edited) != started:  # a person saved it during the run
            said.extend(_keep_edits(edited, out, started))
        _carry_foreign(old / "run", out, persons)
        shutil.rmtree(old, ignore_errors=True)
    return said


def _keep_edits(edited: Path, out: Path, started: str | None) -> list[str]:
    """OUT/overrides.yaml saved by a person while the run wrote: theirs stays, and the fresh list
    this run wrote in its place (if it did: the file it started from was an untouched list) goes
    beside it as overrides.new.yaml, as when a run finds the file edited."""
    fresh = out / "overrides.yaml"
    said = [f"{fresh}: kept the edits saved while this run was writing"]
    if fresh.is_file() and _sha256(fresh) != started:
        os.replace(fresh, out / "overrides.new.yaml")
        said[0] += f"; this run's list of parts to decide is {out / 'overrides.new.yaml'}"
    os.replace(edited, fresh)
    return said


def _recover(out: Path) -> list[str]:
    """Put back a previous run left aside by a kill mid-switch; discard partial runs."""
    said = []
    siblings = sorted(out.parent.glob(f".{glob_escape(out.name)}.*-*"))
    for path in siblings:
        kind = re.match(rf"^\.{re.escape(out.name)}\.(partial|old)-[A-Za-z0-9_]+$", path.name)
        if not kind or not path.is_dir():
            continue
        if kind.group(1) == "old" and (path / "run").is_dir():
            if not out.exists():
                os.rename(path / "run", out)
                said.append(f"{out}: put back the previous complete run (the last run was stopped while "
                            "switching its outputs in)")
            else:  # stopped after the switch: only the person's own files may still be there
                if _edited_during_the_run(path / "run", out):
                    os.replace(path / "run" / "overrides.yaml", out / "overrides.yaml")
                    said.append(f"{out}: kept the edits to overrides.yaml saved while the last run was "
                                "writing (it was stopped as it finished)")
                _carry_foreign(path / "run", out)
        elif kind.group(1) == "partial":
            said.append(f"{out}: discarded the outputs of an interrupted run ({path.name}); "
                        "the folder held the run before it")
        shutil.rmtree(path, ignore_errors=True)
    return said


def _edited_during_the_run(old: Path, out: Path) -> bool:
    """The old run's overrides.yaml, left aside by a run stopped just after its switch, holds
    edits saved during that run. Without the bytes the run started from (what `_switch` compares
    with), it does when it is neither the copy the run carried nor an untouched template."""
    left, new = old / "overrides.yaml", out / "overrides.yaml"
    if not left.is_file() or (new.is_file() and _sha256(new) == _sha256(left)):
        return False
    return edited_by_hand(old)


def check_only_outputs(out: Path) -> None:
    """OUT must be a folder (or not exist yet), and one a run wrote if it holds anything: a run
    replaces the outputs it finds there (index.html, each folder's report.html), so a folder
    of someone's own (a web site, the class itself) is refused before it is touched."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"-o {out}: this is a file; name a folder for the outputs")
    if out.is_symlink() and not out.exists():
        raise ConfigError(f"-o {out}: a link to nothing ({os.readlink(out)}); make the folder it names, "
                          "or name another folder for the outputs")
    strangers = _not_a_runs(out)
    if strangers:
        raise ConfigError(f"-o {out}: this folder holds files no grade run wrote ({_some(strangers)}), and a run "
                          "replaces what it writes there; name a new or empty folder for the outputs, or the "
                          "folder of an earlier run")






# Left in OUT by a run (WRITING while a run writes in place): OUT is a run's, whatever else it holds.
WRITING = ".attngrade.writing"
_A_RUNS = ("results.json", FOLDERS_FILE, WRITING, IN_PLACE_LOCK)


def _not_a_runs(out: Path) -> list[str]:
    """What OUT holds if no run wrote it (hidden files and an overrides file to start from aside)."""
    if not out.is_dir() or any((out / name).exists() for name in _A_RUNS):
        return []
    with os.scandir(out) as entries:
        return sorted(e.name for e in entries if not e.name.startswith(".") and e.name not in CARRIED
                      and e.name != "lost+found")  # the root of a file system mounted as OUT


def _carry_foreign(src: Path, dst: Path, persons: Collection[str] = ()) -> None:
    """Move what a person put into the old OUT (their notes, a decisions file, a file beside a
    student's report) into the new one; a name the new run also wrote is kept as NAME.kept.

    What a run writes is known by place, not by name alone: the files of OUTPUT_FILES at the
    top, report.html in a student's folder (and their temporary files). A person's own
    grades.csv in a folder of theirs is theirs, and a student's old report is never carried
    (their folder may have moved: another student's id now takes its name). A folder of
    `persons` (one the old run did not write) is the person's, whole."""
    for entry in src.iterdir():
        if _written(entry, _TOP):
            continue
        if entry.is_dir() and not entry.is_symlink():
            _carry_folder(entry, dst / entry.name, entry.name not in persons)
        else:
            _move(entry, dst / entry.name)


def _carry_folder(src: Path, dst: Path, a_students: bool = True) -> None:
    """A folder at the top of the old OUT: a student's (keep what is not their report) or the person's."""
    entries = list(src.iterdir())
    kept = [e for e in entries if not (a_students and _written(e, _STUDENT))]
    if entries and not kept:
        return  # a student's folder holding only what the run wrote
    if not dst.exists():
        if not entries:
            _move(src, dst)  # an empty folder someone made
            return
        dst.mkdir()
    elif not dst.is_dir() or dst.is_symlink():
        dst = _free(dst)
        dst.mkdir()
    for entry in kept:
        _move(entry, dst / entry.name)


def _move(entry: Path, target: Path) -> None:
    os.rename(entry, _free(target))


def _free(target: Path) -> Path:
    while target.exists() or target.is_symlink():
        target = target.with_name(target.name + ".kept")
    return target


# The names a run writes (output.write_atomic's temporary files too: "." + name + "." + 8 characters).
_OUTPUT_NAMES = "|".join(re.escape(n) for n in sorted(OUTPUT_FILES))
_TOP = re.compile(rf"^(?:{_OUTPUT_NAMES})$|^\.(?:{_OUTPUT_NAMES})\.[a-z0-9_]{{8}}$")
_STUDENT = re.compile(r"^report\.html$|^\.report\.html\.[a-z0-9_]{8}$")


def _written(entry: Path, names: re.Pattern) -> bool:
    return not entry.is_dir() and not entry.is_symlink() and names.match(entry.name) is not None


def glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def edited_by_hand(folder: Path) -> bool:
    """Whether folder/overrides.yaml is not the template a run wrote there (its stamp, beside
    it, holds the template's hash): a person's decisions, never to be overwritten."""
    stamp = folder / ".overrides.sha256"
    written = stamp.read_text().strip() if stamp.exists() else None
    return file_sha256(folder / "overrides.yaml") != written
