# replaces: attention.py
"""A module whose eval() raises: the driver called it outside any `try`, so the failure read as
attngrade's own ("could not run your code") and the part's points waited for staff."""
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x):
        return self.proj(x)


class SynthesizerAttention(CausalSelfAttention):
    def eval(self):
        raise RuntimeError("eval is not for graders")
