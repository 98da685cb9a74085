"""CS224N A5 2g.i: causal self-attention and synthesizer attention (attngrade's reference solution; also the reference module of the torch_module check)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _output_side(module, config):
    """Dropouts, output projection, causal mask and head count, as both modules have them."""
    module.attn_drop = nn.Dropout(config.attn_pdrop)
    module.resid_drop = nn.Dropout(config.resid_pdrop)
    module.proj = nn.Linear(config.n_embd, config.n_embd)
    size = config.block_size
    module.register_buffer("mask", torch.tril(torch.ones(size, size)).view(1, 1, size, size))
    module.n_head = config.n_head


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.key = nn.Linear(config.n_embd, config.n_embd)
        self.query = nn.Linear(config.n_embd, config.n_embd)
        self.value = nn.Linear(config.n_embd, config.n_embd)
        _output_side(self, config)

    def forward(self, x, layer_past=None):
        b, t, c = x.size()
        h = self.n_head
        k = self.key(x).view(b, t, h, c // h).transpose(1, 2)
        q = self.query(x).view(b, t, h, c // h).transpose(1, 2)
        v = self.value(x).view(b, t, h, c // h).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        weights = self.attn_drop(F.softmax(scores, dim=-1))
        y = (weights @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class SynthesizerAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.w1 = nn.Linear(config.n_embd, config.n_embd)
        self.w2 = nn.Parameter(torch.zeros(config.n_embd // config.n_head, config.block_size - 1))
        self.b2 = nn.Parameter(torch.zeros(config.block_size - 1))
        self.value = nn.Linear(config.n_embd, config.n_embd)
        _output_side(self, config)
        self.block_size = config.block_size
        nn.init.uniform_(self.w2, -0.001, 0.001)

    def forward(self, x, layer_past=None):
        b, t, c = x.size()
        h = self.n_head
        hidden = F.relu(self.w1(x)).view(b, t, h, c // h).transpose(1, 2)
        scores = hidden @ self.w2[:, :t] + self.b2[:t]
        scores = scores.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
        weights = self.attn_drop(F.softmax(scores, dim=-1))
        v = self.value(x).view(b, t, h, c // h).transpose(1, 2)
        y = (weights @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))
