# replaces: attention.py
"""A module whose named_parameters() raises, called by the driver outside any `try`."""
import torch.nn as nn


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.n_embd, config.n_embd)

    def forward(self, x):
        return self.proj(x)


class SynthesizerAttention(CausalSelfAttention):
    def named_parameters(self, *args, **kwargs):
        raise RuntimeError("no parameters for graders")
