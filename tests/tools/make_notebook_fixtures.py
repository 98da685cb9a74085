#!/usr/bin/env python3
"""Write the notebook fixtures under tests/data/notebooks/ (run once; the files are committed).

    python tests/tools/make_notebook_fixtures.py

- saved-by-jupyter.ipynb: shaped like a notebook Jupyter saved after a run: kernelspec
  and language_info, cell ids, code cells with execution counts, stream and error
  outputs, and several MB of PNG plots (real PNG images, made here with zlib), with the
  answers in Markdown cells under `## Answer` headings and the attngrade metadata.
- vscode-stripped.ipynb: the same answers with every metadata field and cell tag
  removed, as VS Code or Colab may leave a notebook: the homework comes from --homework.
- fenced-answers.ipynb: the answers in a raw cell holding a fenced attngrade YAML block.
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "notebooks"


def png(width: int, height: int, rng: random.Random) -> bytes:
    """A valid RGB PNG of noise (noise does not compress, so the file is as large as a real plot's)."""
    rows = b"".join(b"\x00" + bytes(rng.getrandbits(8) for _ in range(width * 3)) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")


def lines(text: str) -> list[str]:
    """Jupyter stores a cell's source as a list of lines, each but the last ending in a newline."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


ANSWERS_MD = [
    "## Answer 1b\n\n$$C(k_a + k_b)$$\n\nHere $C$ is a large constant, so the weights on k_a and k_b tend to 1/2.",
    "### Answer 1e.i:\n\nc2: $u_a$\npossible: no\nwhy: x_2 scores 2 beta^2 against itself and only beta^2\n"
    "against any other input, so c2 follows x_2.",
    "## Answer 1e.ii\n\nV: \\frac{u_b u_b^\\top - u_c u_c^\\top}{\\beta^2}\nK: I\nQ: (u_d u_a^T + u_c u_d^T)/beta^2",
]


def saved_by_jupyter(rng: random.Random) -> dict:
    cells = [{"cell_type": "markdown", "id": "intro", "metadata": {},
              "source": lines("# Assignment 5\n\nMy answers to the written questions are in the cells below.")}]
    for i in range(6):
        image = base64.encodebytes(png(480, 360, rng)).decode()
        cells.append({
            "cell_type": "code", "execution_count": i + 1, "id": f"plot-{i}", "metadata": {"scrolled": True},
            "source": lines(f"import matplotlib.pyplot as plt\nplt.imshow(attention[{i}])\nplt.show()"),
            "outputs": [
                {"output_type": "stream", "name": "stdout", "text": lines(f"step {i}: loss 0.{rng.randint(100, 999)}\n")},
                {"output_type": "display_data", "metadata": {},
                 "data": {"image/png": image, "text/plain": ["<Figure size 640x480 with 1 Axes>"]}},
            ],
        })
    cells.append({"cell_type": "code", "execution_count": 7, "id": "oops", "metadata": {}, "source": ["1/0"],
                  "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero",
                               "traceback": ["\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"]}]})
    for n, text in enumerate(ANSWERS_MD):
        cells.append({"cell_type": "markdown", "id": f"answer-{n}", "metadata": {"tags": ["attngrade-answer"]},
                      "source": lines(text)})
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"attngrade": {"homework": "cs224n-w21-a5", "student": "jupyter-user"},
                         "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                         "language_info": {"codemirror_mode": {"name": "ipython", "version": 3},
                                           "file_extension": ".py", "mimetype": "text/x-python", "name": "python",
                                           "nbconvert_exporter": "python", "pygments_lexer": "ipython3",
                                           "version": "3.11.7"}}}


def stripped(notebook: dict) -> dict:
    cells = []
    for cell in notebook["cells"]:
        cell = {k: v for k, v in cell.items() if k not in ("id", "metadata", "outputs", "execution_count")}
        if cell["cell_type"] == "code":
            cell.update(metadata={}, outputs=[], execution_count=None)
        else:
            cell["metadata"] = {}
        cells.append(cell)
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 2, "metadata": {}}


def fenced() -> dict:
    block = ("Answers for the grader:\n\n```attngrade\nhomework: cs224n-w21-a5\nanswers:\n  1b: C(k_a + k_b)\n"
             "  1e.ii:\n    V: (u_b u_b^T - u_c u_c^T)/beta^2\n    K: I\n    Q: (u_d u_a^T + u_c u_d^T)/beta^2\n```\n")
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": lines("# My notebook")},
                      {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                       "source": ["print('hello')"]},
                      {"cell_type": "raw", "metadata": {}, "source": lines(block)}],
            "nbformat": 4, "nbformat_minor": 4, "metadata": {"attngrade": {"homework": "cs224n-w21-a5"}}}


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(5)
    full = saved_by_jupyter(rng)
    for name, data in (("saved-by-jupyter.ipynb", full), ("vscode-stripped.ipynb", stripped(full)),
                       ("fenced-answers.ipynb", fenced())):
        (OUT / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {OUT / name} ({(OUT / name).stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
