import torch
import torch.nn as nn

from attention import CausalSelfAttention


class GPTConfig:
    embd_pdrop = 0.1
    resid_pdrop = 0.1
    attn_pdrop = 0.1

    def __init__(self, vocab_size, block_size, **kwargs):
        self.vocab_size = vocab_size
        self.block_size = block_size
        for key in kwargs:
            setattr(self, key, kwargs[key])


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config.vocab_size, config.n_embd)
        self.position = nn.Parameter(torch.zeros(1, config.block_size, config.n_embd))
        self.layers = nn.ModuleList([CausalSelfAttention(config) for _ in range(config.n_layer)])
        self.norm = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx):
        x = self.embed(idx) + self.position[:, : idx.size(1)]
        for layer in self.layers:
            x = x + layer(x)
        return self.head(self.norm(x))
