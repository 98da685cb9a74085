import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.out = nn.Linear(config.n_embd, config.n_embd)
        self.heads = config.n_head

    def forward(self, x, layer_past=None):
        B, T, C = x.size()
        q, k, v = (t.view(B, T, self.heads, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class SynthesizerAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        width, heads, span = config.n_embd, config.n_head, config.block_size - 1
        self.w1 = nn.Linear(width, width)
        self.w2 = nn.Parameter(torch.zeros(width // heads, span))
        self.b2 = nn.Parameter(torch.zeros(span))
        self.value = nn.Linear(width, width)
        self.attn_drop = nn.Dropout(config.attn_pdrop)
        self.resid_drop = nn.Dropout(config.resid_pdrop)
        self.proj = nn.Linear(width, width)
        self.register_buffer("mask", torch.tril(torch.ones(span + 1, span + 1))[None, None])
        self.n_head = heads
        nn.init.uniform_(self.w2, -0.001, 0.001)

    def forward(self, x, layer_past=None):
        B, T, C = x.size()
        heads = lambda t: t.reshape(B, T, self.n_head, -1).permute(0, 2, 1, 3)
        scores = torch.einsum("bhtd,ds->bhts", heads(F.relu(self.w1(x))), self.w2[:, :T]) + self.b2[:T]
        scores = scores.masked_fill(~self.mask[:, :, :T, :T].bool(), float("-inf"))
        mixed = self.attn_drop(scores.softmax(dim=-1)) @ heads(self.value(x))
        return self.resid_drop(self.proj(mixed.permute(0, 2, 1, 3).reshape(B, T, C)))
