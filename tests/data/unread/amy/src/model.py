import torch.nn as nn

import attention


class GPTConfig:
    embd_pdrop = resid_pdrop = attn_pdrop = 0.1
    synthesizer = False

    def __init__(self, vocab_size, block_size, **kwargs):
        self.vocab_size, self.block_size = vocab_size, block_size
        self.__dict__.update(kwargs)


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        kind = attention.SynthesizerAttention if config.synthesizer else attention.CausalSelfAttention
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.attns = nn.ModuleList(kind(config) for _ in range(config.n_layer))
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx):
        x = self.tok_emb(idx)
        for layer in self.attns:
            x = x + layer(x)
        return self.head(x)
