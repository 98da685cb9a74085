import torch
import torch.nn as nn
import torch.nn.functional as F


class SynthesizerAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.w1 = nn.Linear(config.n_embd, config.n_embd)
        self.w2 = nn.Parameter(torch.zeros(config.n_embd // config.n_head, config.block_size - 1))
        self.b2 = nn.Parameter(torch.zeros(config.block_size - 1))
        self.value = nn.Linear(config.n_embd, config.n_embd)
        self.attn_drop = nn.Dropout(config.attn_pdrop)
        self.resid_drop = nn.Dropout(config.resid_pdrop)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        self.register_buffer("mask", torch.tril(torch.ones(config.block_size, config.block_size))
                             .view(1, 1, config.block_size, config.block_size))
        self.n_head = config.n_head
        self.block_size = config.block_size
        nn.init.uniform_(self.w2, -0.001, 0.001)

    def forward(self, x, layer_past=None):
        B, T, C = x.size()
        a = F.relu(self.w1(x)).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = a @ self.w2 + self.b2
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float('-inf'))
        att = self.attn_drop(F.softmax(att, dim=-1))
        v = self.value(x).view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_drop(self.proj(y))
