"""The checkpoint behind an A5 dev prediction file, loaded with weights_only and decoded again in the sandbox.

The checkpoints are made here: the reference solution's GPT (solutions/cs224n-w21-a5/reference, the
handout's architecture at a small width), a fixed seed, a few training steps on the dev questions, saved
with `torch.save(model.state_dict(), path)`; the prediction file is what that model decodes for the 500 dev
questions, as the handout's run.py evaluates. The check's own copy of the GPT (in the sandbox's driver) is
never this code: the two agree only if the driver computes what the handout's model computes."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from attngrade.checkers import REGISTRY, Context
from attngrade.checkers.checkpoint import MAX_BYTES, CheckpointFile, dev_questions, vocabulary
from attngrade.errors import ConfigError
from attngrade.problems import Bank, prepare_part
from attngrade.reading import FileReading
from attngrade.runtime.files import NotRead

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "tests" / "data" / "banks" / "a5-checkpoint"
REFERENCE = ROOT / "solutions" / "cs224n-w21-a5" / "reference"
WIKI = ROOT.parent / "shared" / "data" / "cs224n-w21-a5" / "wiki.txt"
MASK, PAD = "\u2047", "\u25a1"
SMALL = {"n_layer": 2, "n_head": 8, "n_embd": 32}  # the handout's shape (4 layers, 8 heads, 256 wide), narrower
BLOCK = 128  # the handout's block size


# -- making a checkpoint and its predictions, as a student does -------------------------------------
@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)  # the machine's cores are shared: one thread is the fastest there
    return torch


def reference_model_module():
    """The reference solution's model.py (and the attention.py it imports), loaded from its folder."""
    sys.path.insert(0, str(REFERENCE))
    try:
        spec = importlib.util.spec_from_file_location("reference_model", REFERENCE / "model.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REFERENCE))


def trained(torch, seed: int, synthesizer: bool = False, steps: int = 5):
    """The handout's GPT after a few Adam steps on (question ⁇ place ⁇) rows of the dev set: far from
    trained, so its answers still differ from row to row (more steps first make it answer one place)."""
    model_module = reference_model_module()
    torch.manual_seed(seed)
    stoi = {c: i for i, c in enumerate(vocabulary())}
    model = model_module.GPT(model_module.GPTConfig(len(stoi), BLOCK, synthesizer=synthesizer, **SMALL))
    rows = [line.split("\t") for line in gold_lines()]
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(steps):
        batch = [rows[(step * 32 + i) % len(rows)] for i in range(32)]
        x, y = zip(*(name_item(question, place, stoi) for question, place in batch))
        _, loss = model(torch.tensor(x), torch.tensor(y))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model.eval()


def name_item(question: str, place: str, stoi: dict[str, int]) -> tuple[list[int], list[int]]:
    """The finetuning item of the handout's NameDataset: x and y, the question's part of y padded."""
    text = question + MASK + place + MASK
    text += PAD * (BLOCK - len(text))
    target = PAD * (len(question) - 1) + text[len(question):]
    return [stoi[c] for c in text[:-1]], [stoi[c] for c in target]


def gold_lines() -> list[str]:
    path = ROOT / "attngrade" / "data" / "cs224n-w21-a5" / "birth_dev.tsv"
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]


def predictions(torch, model) -> list[str]:
    """The handout's evaluate: each question, the mask character, 32 greedy steps, the text between the
    first mask character and the next. Questions of one length go through together."""
    stoi = {c: i for i, c in enumerate(vocabulary())}
    itos = vocabulary()
    questions = dev_questions()
    answers = [""] * len(questions)
    by_length: dict[int, list[int]] = {}
    for i, question in enumerate(questions):
        by_length.setdefault(len(question), []).append(i)
    with torch.no_grad():
        for rows in by_length.values():
            x = torch.tensor([[stoi[c] for c in questions[i] + MASK] for i in rows])
            for _ in range(32):
                logits, _ = model(x[:, -BLOCK:])
                _, ix = torch.topk(torch.softmax(logits[:, -1, :], dim=-1), k=1, dim=-1)
                x = torch.cat((x, ix), dim=1)
            for i, ids in zip(rows, x.tolist()):
                answers[i] = "".join(itos[j] for j in ids).split(MASK)[1]
    return answers


@pytest.fixture(scope="module")
def vanilla(torch, tmp_path_factory):
    """A vanilla checkpoint and the prediction file it decodes."""
    return saved(torch, trained(torch, seed=224), tmp_path_factory.mktemp("vanilla"), "vanilla.finetune.params")


@pytest.fixture(scope="module")
def synthesizer(torch, tmp_path_factory):
    model = trained(torch, seed=225, synthesizer=True)
    return saved(torch, model, tmp_path_factory.mktemp("synthesizer"), "synthesizer.finetune.params")


def saved(torch, model, folder: Path, name: str) -> dict:
    path = folder / name
    torch.save(model.state_dict(), path)
    lines = predictions(torch, model)
    assert not any("\n" in line for line in lines)  # run.py would have written such an answer on two lines
    return {"path": path, "lines": lines, "model": model}


def prediction_file(lines: list[str], name: str = "vanilla.pretrain.dev.predictions", end: str = "\n") -> FileReading:
    text = "".join(line + end for line in lines)
    return FileReading.of(name, text, hashlib.sha256(text.encode()).hexdigest())


# -- running the check ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def parts():
    return {part.id: part for part in Bank(BANK).load_homework("a5-checkpoint").parts}


def run(parts, part_id: str, checkpoint_path: Path | None, lines: list[str] | None, **file_args):
    part = parts[part_id]
    index = next(i for i, spec in enumerate(part.checks) if spec.check == "checkpoint")
    answers = {}
    if checkpoint_path is not None:
        answers["checkpoint"] = CheckpointFile.at(checkpoint_path)
    if lines is not None:
        answers["dev"] = prediction_file(lines, **file_args)
    return REGISTRY["checkpoint"].run(answers, Context(part, part.checks[index]))


def record(outcome) -> dict:
    return next(v for k, v in outcome.evidence.items() if k.startswith("checkpoint:"))


def test_the_vocabulary_is_the_one_the_handout_builds_from_wiki_txt():
    itos = vocabulary()
    assert (itos[0], itos[1], len(itos), len(set(itos))) == (PAD, MASK, 256, 256)
    if not WIKI.is_file():
        pytest.skip("the course's wiki.txt is not at hand")
    raw = WIKI.read_bytes()
    chars = sorted(set(raw.decode("utf-8")))
    assert list(itos) == [PAD, MASK, *chars]
    shipped = json.loads((ROOT / "attngrade" / "data" / "cs224n-w21-a5" / "wiki-vocabulary.json").read_text())
    assert shipped["wiki_sha256"] == hashlib.sha256(raw).hexdigest()


def test_a_checkpoint_and_the_predictions_it_decodes_are_verified(parts, vanilla):
    outcome = run(parts, "2f", vanilla["path"], vanilla["lines"])
    found = record(outcome)
    assert "flags" not in outcome.evidence, outcome.evidence
    assert not outcome.is_pending and outcome.earned == 0.0  # the bundled parts give it no points
    assert found["decoded"] == 30 and found["reproduced"] + len(found["ties"]) == 30 and not found["differ"]
    assert any("reproduces 30 of 30 sampled rows of your dev predictions (vanilla.pretrain.dev.predictions)" in line
               for line in outcome.feedback), outcome.feedback
    assert "a vanilla GPT: 2 layers, 8 heads, width 32, block 128" in outcome.feedback[0]
    assert len(set(vanilla["lines"])) > 5  # the model says more than one thing: the rows tell models apart


def test_a_required_checkpoint_that_reproduces_the_file_earns_its_points(parts, vanilla):
    outcome = run(parts, "2f-required", vanilla["path"], vanilla["lines"])
    assert outcome.earned == 4.0 and not outcome.is_pending and "flags" not in outcome.evidence, outcome.feedback


def test_the_same_checkpoint_decoded_again_gives_the_same_rows(parts, vanilla):
    first, second = (record(run(parts, "2f", vanilla["path"], vanilla["lines"])) for _ in range(2))
    assert first["rows"] == second["rows"] and len(first["rows"]) == 30


def test_the_rows_are_drawn_with_the_graders_secret(parts, vanilla):
    """A student who knows the files' hashes and the homework cannot tell which rows a run checks (an edit
    made where the public draw would not look was once never seen): the grader's secret draws them."""
    part = parts["2f"]
    index = next(i for i, spec in enumerate(part.checks) if spec.check == "checkpoint")
    answers = {"checkpoint": CheckpointFile.at(vanilla["path"]), "dev": prediction_file(vanilla["lines"])}
    drawn = [record(REGISTRY["checkpoint"].run(answers, Context(part, part.checks[index], salt=salt)))["rows"]
             for salt in (b"\x01" * 32, b"\x02" * 32)]
    assert drawn[0] != drawn[1] and len(drawn[0]) == len(drawn[1]) == 30


def test_a_synthesizer_checkpoint_is_built_as_one_and_verified(parts, synthesizer):
    outcome = run(parts, "2g.i", synthesizer["path"], synthesizer["lines"],
                  name="synthesizer.pretrain.dev.predictions")
    assert outcome.earned == 1.0 and "flags" not in outcome.evidence, outcome.feedback
    assert record(outcome)["model"]["synthesizer"] is True
    assert "a synthesizer GPT: 2 layers, 8 heads" in outcome.feedback[0]


@pytest.mark.parametrize("form", ["crlf", "data_parallel", "legacy_format", "without_masks"])
def test_the_same_model_saved_or_written_another_way_is_verified(torch, parts, vanilla, tmp_path, form):
    """Windows line endings, a state dict saved through nn.DataParallel ("module." names), torch's
    pre-zip format, a state dict without the causal-mask buffers: the same model, the same answers."""
    path = tmp_path / "vanilla.finetune.params"
    state = vanilla["model"].state_dict()
    if form == "data_parallel":
        state = {f"module.{k}": v for k, v in state.items()}
    if form == "without_masks":
        state = {k: v for k, v in state.items() if not k.endswith(".attn.mask")}
    torch.save(state, path, _use_new_zipfile_serialization=form != "legacy_format")
    outcome = run(parts, "2f-required", path, vanilla["lines"], end="\r\n" if form == "crlf" else "\n")
    assert outcome.earned == 4.0 and "flags" not in outcome.evidence, outcome.feedback


def test_a_file_edited_after_decoding_is_flagged_with_the_rows_that_differ(parts, vanilla):
    """A third of the rows replaced by the public dev gold's answers where the model said otherwise."""
    gold = [line.split("\t")[1] for line in gold_lines()]
    edited = [g if i % 3 == 0 and g != line else line for i, (g, line) in enumerate(zip(gold, vanilla["lines"]))]
    changed = {i + 1 for i, (a, b) in enumerate(zip(edited, vanilla["lines"])) if a != b}
    assert len(changed) > 100
    outcome = run(parts, "2f", vanilla["path"], edited)
    found = record(outcome)
    differ = {d["row"] for d in found["differ"]}
    assert differ and differ == changed & set(found["rows"]), (differ, found["rows"])
    assert all(d["file"] == gold[d["row"] - 1] and d["checkpoint"] == vanilla["lines"][d["row"] - 1]
               for d in found["differ"])
    (flag,) = outcome.evidence["flags"]
    assert flag.startswith(f"2f: vanilla.finetune.params does not reproduce vanilla.pretrain.dev.predictions: "
                           f"{len(differ)} of 30 sampled dev rows differ (row {min(differ)}: the file says «")
    agreed = 30 - len(differ)
    assert any(f"reproduces {agreed} of 30 sampled rows" in line for line in outcome.feedback)
    assert not outcome.is_pending and outcome.earned == 0.0  # no points of its own: the flag is for staff
    assert not any("«" in line for line in outcome.feedback)  # the rows that differ are staff's to read


def test_where_points_ride_on_it_a_file_not_reproduced_waits_for_staff_never_a_zero(parts, vanilla, torch):
    other = trained(torch, seed=7)
    outcome = run(parts, "2f-required", vanilla["path"], predictions(torch, other))
    assert outcome.is_pending and outcome.earned == 0.0 and outcome.evidence["flags"], outcome.feedback
    assert outcome.feedback[-1] == "its points wait for course staff"


def test_lines_longer_than_any_answer_differ_and_are_kept_short(parts, vanilla):
    outcome = run(parts, "2f", vanilla["path"], ["Paris" * 2000] * 500)
    found = record(outcome)
    assert len(found["differ"]) == 30 and all(len(d["file"]) == 33 for d in found["differ"])
    assert all(d["gap"] is None for d in found["differ"])  # greedy decoding never gives more than 32 characters
    assert len(outcome.evidence["flags"][0]) < 2500


def test_a_checkpoint_of_the_other_model_is_flagged(parts, vanilla):
    outcome = run(parts, "2g.i", vanilla["path"], vanilla["lines"], name="synthesizer.pretrain.dev.predictions")
    assert any("holds a vanilla GPT, but the part's predictions should come from the synthesizer model" in flag
               for flag in outcome.evidence["flags"]), outcome.evidence
    assert "vanilla.finetune.params holds a vanilla GPT, not the synthesizer model" in " ".join(outcome.feedback)


def test_without_a_checkpoint_the_part_is_graded_as_before(parts, vanilla):
    outcome = run(parts, "2f", None, vanilla["lines"])
    assert (outcome.earned, outcome.feedback, dict(outcome.evidence), outcome.is_pending) == (0.0, (), {}, False)


def test_a_required_checkpoint_missing_holds_the_share_for_staff_with_the_reason(parts, vanilla):
    outcome = run(parts, "2f-required", None, vanilla["lines"])
    assert outcome.is_pending and outcome.earned == 0.0
    assert outcome.feedback[0] == ("vanilla.finetune.params: this homework asks for the checkpoint your dev "
                                   "predictions were decoded with, and none was handed in")


def test_a_prediction_file_with_other_lines_is_not_compared(parts, vanilla):
    outcome = run(parts, "2f", vanilla["path"], vanilla["lines"][:-3])
    assert outcome.feedback == ("vanilla.finetune.params: not compared, vanilla.pretrain.dev.predictions has 497 "
                                "lines and the dev set 500, so its rows cannot be matched",)
    assert "flags" not in outcome.evidence


def test_a_required_checkpoint_whose_file_cannot_be_matched_waits_for_staff(parts, vanilla):
    """An answer run.py wrote across two lines (the vocabulary holds a newline) leaves rows unmatched: not a 0."""
    outcome = run(parts, "2f-required", vanilla["path"], vanilla["lines"][:-3])
    assert outcome.is_pending and outcome.earned == 0.0
    assert outcome.feedback[0].startswith("vanilla.finetune.params: not compared")


def test_require_needs_the_points_it_holds_back(parts):
    part = parts["2f-required"]
    zero = replace(part, checks=(part.checks[0], replace(part.checks[1], points=0.0, prepared=None)))
    with pytest.raises(ConfigError, match="require: checkpoint holds the check's points back"):
        prepare_part(zero)


# -- checkpoints that are not the course's model ----------------------------------------------------
class Payload:
    """Unpickled by a loader that builds objects, it opens (creates) the file `marker`."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def payload_checkpoint(torch, model, folder: Path) -> tuple[Path, Path]:
    """The model's state dict with a payload among its tensors; the payload's file is in a folder every uid
    may write (a sandbox job that ran it could leave the file there)."""
    shared = folder / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)
    marker = shared / "payload-ran"
    path = folder / "vanilla.finetune.params"
    torch.save({**model.state_dict(), "head.extra": Payload(marker)}, path)
    return path, marker


def test_a_pickle_payload_is_real_and_weights_only_refuses_it_without_running_it(torch, vanilla, tmp_path):
    path, marker = payload_checkpoint(torch, vanilla["model"], tmp_path)
    with pytest.raises(Exception, match="Unsupported global"):
        torch.load(path, weights_only=True)
    assert not marker.exists()
    torch.load(path, weights_only=False)  # the loader the check never uses: it runs the payload
    assert marker.exists()


def test_a_pickle_payload_is_refused_in_the_sandbox_and_never_runs(torch, parts, vanilla, tmp_path):
    path, marker = payload_checkpoint(torch, vanilla["model"], tmp_path)
    outcome = run(parts, "2f-required", path, vanilla["lines"])
    assert outcome.feedback == (
        "vanilla.finetune.params: torch.load(weights_only=True) refused it: it holds something other than tensors "
        "(«Unsupported global: GLOBAL io.open was not an allowed global by default»), and nothing in it was run; "
        "save the model with torch.save(model.state_dict(), path), as the handout's run.py does",)
    assert (outcome.earned, outcome.is_pending) == (0.0, False)  # required: the student's problem
    assert not marker.exists()


class ShellPayload:
    """The classic payload: unpickled by a loader that builds objects, it runs a shell command."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_shell_payload_is_refused_as_one_and_never_runs(torch, parts, vanilla, tmp_path):
    """torch words a blocked module's global (os.system) without its usual marker: still a refusal, without
    torch's advice to load the file with weights_only=False."""
    path, marker = payload_checkpoint(torch, vanilla["model"], tmp_path)
    torch.save({**vanilla["model"].state_dict(), "head.extra": ShellPayload(marker)}, path)
    outcome = run(parts, "2f-required", path, vanilla["lines"])
    assert outcome.feedback[0].startswith("vanilla.finetune.params: torch.load(weights_only=True) refused it: it "
                                          "holds something other than tensors («Trying to load unsupported GLOBAL")
    assert "weights_only set to False" not in outcome.feedback[0] and not marker.exists()


def edited_state(torch, model, edit: str) -> dict:
    state = dict(model.state_dict())
    if edit == "transposed":
        state["blocks.1.mlp.0.weight"] = state["blocks.1.mlp.0.weight"].T.contiguous()
    elif edit == "renamed":
        state["blocks.0.attn.keys.weight"] = state.pop("blocks.0.attn.key.weight")
    elif edit == "vocabulary":
        state["tok_emb.weight"] = torch.zeros(300, SMALL["n_embd"])
        state["head.weight"] = torch.zeros(300, SMALL["n_embd"])
    elif edit == "long_block":
        state["pos_emb"] = torch.zeros(1, 8192, SMALL["n_embd"])
    elif edit == "training_state":
        state = {"epoch": 3, "model": state}
    return state


UNUSABLE = {
    "transposed": "vanilla.finetune.params is not the course's GPT: «blocks.1.mlp.0.weight» has shape [32, 128], "
                  "expected [128, 32]",
    "renamed": "vanilla.finetune.params is not the course's GPT: missing «blocks.0.attn.key.weight»; unexpected "
               "«blocks.0.attn.keys.weight»",
    "vocabulary": "vanilla.finetune.params: its token embedding has 300 rows, but the vocabulary the handout builds "
                  "from wiki.txt has 256 characters, so it cannot have written these predictions",
    "long_block": "vanilla.finetune.params describes a model far larger than the course's GPT («{'block_size': "
                  "8192}»)",
    "training_state": "vanilla.finetune.params does not map names to tensors (it holds «epoch, model»); save the "
                      "model with torch.save(model.state_dict(), path), as the handout's run.py does",
}


@pytest.mark.parametrize("edit", sorted(UNUSABLE))
def test_a_state_dict_that_is_not_the_courses_gpt_is_named_as_such(torch, parts, vanilla, tmp_path, edit):
    path = tmp_path / "vanilla.finetune.params"
    torch.save(edited_state(torch, vanilla["model"], edit), path)
    outcome = run(parts, "2f-required", path, vanilla["lines"])
    assert outcome.feedback == (UNUSABLE[edit],) and outcome.earned == 0.0 and not outcome.is_pending


def test_an_optional_checkpoint_that_is_unusable_costs_nothing(torch, parts, synthesizer, tmp_path):
    path = tmp_path / "synthesizer.finetune.params"
    path.write_bytes(synthesizer["path"].read_bytes()[:5000])
    outcome = run(parts, "2g.i", path, synthesizer["lines"], name="synthesizer.pretrain.dev.predictions")
    assert outcome.earned == 1.0 and not outcome.is_pending
    assert outcome.feedback[0].startswith("synthesizer.finetune.params is not a checkpoint torch can read («")


def test_bytes_that_are_no_checkpoint_are_refused(parts, vanilla, tmp_path):
    import random

    path = tmp_path / "vanilla.finetune.params"
    path.write_bytes(random.Random(5).randbytes(4096))
    outcome = run(parts, "2f-required", path, vanilla["lines"])
    assert outcome.feedback == ("vanilla.finetune.params is not a checkpoint torch can read («Unsupported operand "
                                "69»); save the model with torch.save(model.state_dict(), path), as the handout's "
                                "run.py does",)


def test_a_tensor_that_unpacks_far_past_the_model_is_refused_before_torch_reads_it(torch, vanilla, parts, tmp_path):
    """A zip entry may be compressed: 300 MB of zeros fit in a file of a few hundred kilobytes."""
    plain = tmp_path / "plain.params"
    torch.save({"tok_emb.weight": torch.zeros(4)}, plain)
    path = tmp_path / "vanilla.finetune.params"
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bomb:
        for info in source.infolist():
            if info.filename.endswith("/data/0"):
                with bomb.open(info.filename, "w", force_zip64=True) as entry:
                    for _ in range(300):
                        entry.write(bytes(1 << 20))
            else:
                bomb.writestr(info.filename, source.read(info.filename))
    assert path.stat().st_size < MAX_BYTES
    outcome = run(parts, "2f-required", path, vanilla["lines"])
    assert outcome.feedback[0].startswith("vanilla.finetune.params: its zip entries unpack to 3145"), outcome.feedback


def test_a_checkpoint_changed_after_it_was_read_is_not_sent(parts, vanilla, tmp_path):
    path = tmp_path / "vanilla.finetune.params"
    path.write_bytes(vanilla["path"].read_bytes())
    part = parts["2f-required"]
    answers = {"checkpoint": CheckpointFile.at(path), "dev": prediction_file(vanilla["lines"])}
    path.write_bytes(b"PK" + path.read_bytes()[2:-1])
    outcome = REGISTRY["checkpoint"].run(answers, Context(part, part.checks[1]))
    assert outcome.feedback == ("vanilla.finetune.params changed after it was read; submit it again",)


def test_a_file_is_bounded_before_a_byte_of_it_is_read(vanilla, tmp_path):
    sparse = tmp_path / "sparse.params"
    with open(sparse, "wb") as handle:
        handle.truncate(2 * 1024**3)  # 2 GB that take no disk
    with pytest.raises(NotRead, match=f"is 2147483648 bytes; at most {MAX_BYTES} are read"):
        CheckpointFile.at(sparse)
    link = tmp_path / "link.params"
    link.symlink_to(vanilla["path"])
    with pytest.raises(NotRead, match="is a link"):
        CheckpointFile.at(link)
    first, second = tmp_path / "first.params", tmp_path / "second.params"
    first.write_bytes(vanilla["path"].read_bytes())
    os.link(first, second)
    with pytest.raises(NotRead, match="is a hard link"):
        CheckpointFile.at(second)


# -- on Gradescope's hosts ------------------------------------------------------------------------
sys.path.insert(0, str(ROOT / "tests" / "sandbox"))
from hostile_cases import CONTAINERS, CONTAINER_SIM, confinable, run_confined  # noqa: E402

PROBE = ROOT / "tests" / "data" / "checkpoint" / "probe.py"
IN_CONTAINERS = os.geteuid() == 0 and CONTAINER_SIM.is_file() and os.uname().machine == "x86_64"


@pytest.mark.skipif(not IN_CONTAINERS or not confinable(), reason="container-sim runs as root on x86_64 only")
@pytest.mark.parametrize("mode", CONTAINERS)
def test_in_a_container_a_payload_is_refused_and_a_real_checkpoint_verified(torch, vanilla, tmp_path, mode):
    """Root in a container that refuses namespaces and mounts (shared/tools/container-sim), with and without
    Landlock: the payload is refused and never runs, and the checkpoint that wrote the file reproduces it."""
    path, marker = payload_checkpoint(torch, vanilla["model"], tmp_path)
    dev = tmp_path / "vanilla.pretrain.dev.predictions"
    dev.write_text("".join(line + "\n" for line in vanilla["lines"]), encoding="utf-8")
    got = {}
    for name, checkpoint in (("payload", path), ("real", vanilla["path"])):
        work = tmp_path / name
        work.mkdir()
        report = run_confined(work, mode, [sys.executable, str(PROBE), "2f-required", str(checkpoint), str(dev)], {})
        assert report["returncode"] == 0 and not report["left"], (work / "stderr").read_text()[-2000:]
        got[name] = json.loads((work / "stdout").read_text())
    assert "refused it: it holds something other than tensors" in got["payload"]["feedback"][0], got
    assert not marker.exists()
    assert got["real"]["earned"] == 4.0 and "reproduces 30 of 30" in got["real"]["feedback"][0], got
    missing = got["real"]["layers"]["missing"]
    assert "mount namespace" in missing and ("Landlock" in missing) == mode.endswith("no-landlock"), missing


def test_a_text_file_by_the_checkpoints_name_is_no_checkpoint(parts, vanilla):
    part = parts["2f-required"]
    answers = {"checkpoint": prediction_file(["not a model"], name="vanilla.finetune.params"),
               "dev": prediction_file(vanilla["lines"])}
    outcome = REGISTRY["checkpoint"].run(answers, Context(part, part.checks[1]))
    assert outcome.feedback == ("vanilla.finetune.params is a text file, not a checkpoint: torch.save writes a "
                                "binary one",) and outcome.earned == 0.0 and not outcome.is_pending


def test_decoding_stops_at_its_budget(torch, vanilla, tmp_path, monkeypatch):
    """The sandbox's driver, run here: with its CPU budget spent it decodes no further row (the grader then
    has too few rows to decide, and says so)."""
    from attngrade.sandbox import drivers

    monkeypatch.chdir(vanilla["path"].parent)
    rows = [{"row": i, "query": q, "line": ""} for i, q in enumerate(dev_questions()[:5])]
    job = {"file": vanilla["path"].name, "itos": list(vocabulary()), "n_head": 8, "rows": rows, "wall": 60}
    assert len(drivers.checkpoint({**job, "budget": 60})["rows"]) == 5
    spent = drivers.checkpoint({**job, "budget": 0})
    assert spent["rows"] == [] and spent["stopped"] is True


# -- ties: what another machine's rounding decides ----------------------------------------------------
def twin_model(torch, first: str, second: str):
    """The vanilla model with `second` made `first`'s twin: the same embedding and the same output row, so
    wherever one is the best choice, both are, to the last bit."""
    model = trained(torch, seed=224)
    stoi = {c: i for i, c in enumerate(vocabulary())}
    with torch.no_grad():
        for table in (model.tok_emb.weight, model.head.weight):
            table[stoi[second]] = table[stoi[first]]
    return model


def test_an_answer_that_differs_only_by_a_tie_counts_as_reproduced_and_is_said(torch, parts, vanilla, tmp_path):
    from attngrade.checkers.checkpoint import sample_rows

    model = twin_model(torch, "x", "Z")
    path = tmp_path / "vanilla.finetune.params"
    torch.save(model.state_dict(), path)
    lines = predictions(torch, model)
    part = parts["2f"]
    seed = Context(part, part.checks[1]).seed
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    for row in (i for i, line in enumerate(lines) if "x" in line or "Z" in line):
        swapped = lines[row].translate(str.maketrans("xZ", "Zx"))
        edited = [*lines[:row], swapped, *lines[row + 1:]]
        text = "".join(line + "\n" for line in edited)
        if row in sample_rows(sha, hashlib.sha256(text.encode()).hexdigest(), seed, 30, 500):
            break
    else:
        pytest.skip("no row with the twin characters lands in the sample")
    outcome = run(parts, "2f", path, edited)
    found = record(outcome)
    assert found["ties"] == [row + 1] and not found["differ"] and "flags" not in outcome.evidence, found
    assert ("reproduces 30 of 30 sampled rows of your dev predictions (vanilla.pretrain.dev.predictions), decoded as "
            "the handout's evaluation decodes (1 of them only up to a tie between two characters, which rounding "
            "decides)") in outcome.feedback[0]


def test_a_model_that_ties_everywhere_cannot_cover_a_copied_file(torch, parts, vanilla, tmp_path):
    """Every character ties when the output layer is zero: any file would be "reproduced" by ties alone."""
    state = dict(vanilla["model"].state_dict())
    state["head.weight"] = torch.zeros_like(state["head.weight"])
    path = tmp_path / "vanilla.finetune.params"
    torch.save(state, path)
    gold = [line.split("\t")[1] for line in gold_lines()]
    outcome = run(parts, "2f-required", path, gold)
    found = record(outcome)
    assert len(found["ties"]) == 30 and outcome.is_pending and outcome.earned == 0.0
    assert outcome.evidence["flags"] == ["2f-required: vanilla.finetune.params agrees with "
                                         "vanilla.pretrain.dev.predictions on 30 of 30 sampled dev rows only up to "
                                         "ties between characters: a trained model rarely ties so often"]



# -- a binary file field --------------------------------------------------------------------------
def test_a_binary_file_field_reads_a_checkpoint_by_name_size_and_hash_and_its_bytes_again(parts, vanilla, tmp_path):
    from attngrade.reading import BinaryFileReading, FieldError, read_field
    from attngrade.records import Field

    part = parts["2f"]
    field = Field("checkpoint", "file", filename="vanilla.finetune.params", binary=True, max_bytes=MAX_BYTES)
    raw = vanilla["path"].read_bytes()
    reading = read_field(part, field, None, vanilla["path"].parent)
    assert isinstance(reading, BinaryFileReading) and reading.packed == b""  # no bytes kept
    assert (reading.size, reading.sha256, reading.data()) == (len(raw), hashlib.sha256(raw).hexdigest(), raw)
    as_text = Field("checkpoint", "file", filename="vanilla.finetune.params")
    with pytest.raises(FieldError, match="is not UTF-8 text"):
        read_field(part, as_text, None, vanilla["path"].parent)
    small = Field("checkpoint", "file", filename="vanilla.finetune.params", binary=True, max_bytes=1000)
    with pytest.raises(FieldError, match=f"is {len(raw)} bytes; at most 1000 are read"):
        read_field(part, small, None, vanilla["path"].parent)
    os.link(vanilla["path"], tmp_path / "vanilla.finetune.params")
    with pytest.raises(FieldError, match="is a hard link"):
        read_field(part, field, None, tmp_path)


def test_only_a_file_field_may_be_binary_and_its_bound_is_a_whole_number(tmp_path):
    import shutil

    folder = tmp_path / "bank"
    shutil.copytree(BANK, folder)
    library = folder / "library" / "a5-checkpoint.yaml"
    text = library.read_text(encoding="utf-8")
    marked = "checkpoint: {kind: file, filename: vanilla.finetune.params}"
    library.write_text(text.replace(marked, marked[:-1] + ", binary: true, max_bytes: 33554432}", 1), encoding="utf-8")
    field = next(f for f in Bank(folder).load_homework("a5-checkpoint").parts[0].fields if f.name == "checkpoint")
    assert field.binary and field.max_bytes == 33554432
    for wrong, said in (("accuracy: {kind: number, percent: true}", "only a file field may be binary"),
                        (marked, "max_bytes must be a whole number")):
        odd = wrong[:-1] + (", binary: true}" if "number" in wrong else ", max_bytes: 1.5}")
        library.write_text(text.replace(wrong, odd, 1), encoding="utf-8")
        with pytest.raises(ConfigError, match=said):
            Bank(folder).load_homework("a5-checkpoint")


# -- through `grade run` --------------------------------------------------------------------------
def test_grade_run_reads_a_checkpoint_beside_the_predictions_and_says_the_agreement(vanilla, tmp_path, capsys):
    """An A5 submission folder as a student hands it in: the dev predictions, the checkpoint that wrote
    them (binary, read by the bundled 2f part's checkpoint field) and an answers file."""
    import shutil

    from attngrade.cli import main

    folder = tmp_path / "class" / "ada"
    folder.mkdir(parents=True)
    (folder / "answers.yaml").write_text("homework: cs224n-w21-a5\nstudent: ada\nanswers:\n  2f:\n    accuracy: 1%\n",
                                         encoding="utf-8")
    (folder / "vanilla.pretrain.dev.predictions").write_text("".join(f"{line}\n" for line in vanilla["lines"]),
                                                             encoding="utf-8")
    shutil.copyfile(vanilla["path"], folder / "vanilla.finetune.params")
    # The bundled solutions: their reference holds no checkpoint, so the canary proves the host on the other
    # code parts and refuses nothing for this one; the student's checkpoint is decoded.
    main(["run", str(tmp_path / "class"), "-o", str(tmp_path / "out"), "--workers", "1",
          "--solutions", str(ROOT / "solutions")])
    capsys.readouterr()
    (result,) = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    part = next(p for p in result["parts"] if p["id"] == "2f")
    assert any("vanilla.finetune.params: the checkpoint (a vanilla GPT: 2 layers, 8 heads, width 32, block 128) "
               "reproduces 30 of 30 sampled rows of your dev predictions (vanilla.pretrain.dev.predictions)" in line
               for line in part["feedback"]), part["feedback"]
    assert not any("not read" in note and "vanilla.finetune.params" in note for note in result.get("notes", []))
