import random

import torch
from torch.utils.data import Dataset

MASK, PAD = "\u2047", "\u25A1"


class CharCorruptionDataset(Dataset):
    def __init__(self, data, block_size):
        self.MASK_CHAR, self.PAD_CHAR = MASK, PAD
        symbols = [PAD, MASK, *sorted(set(data))]
        self.itos = {k: s for k, s in enumerate(symbols)}
        self.stoi = {s: k for k, s in self.itos.items()}
        self.block_size = block_size
        self.vocab_size = len(symbols)
        self.data = data.split("\n")

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        limit = int(self.block_size * 7 / 8)
        kept = self.data[idx][: random.choice(range(4, limit + 1))]
        # about a quarter of what is kept, somewhere inside it
        width = random.choice(range(1, max(2, len(kept) // 2)))
        left = random.choice(range(0, max(1, len(kept) - width + 1)))
        pieces = [kept[:left], MASK, kept[left + width:], MASK, kept[left:left + width]]
        sample = "".join(pieces)
        sample = sample + PAD * (self.block_size - len(sample))
        codes = torch.tensor([self.stoi[s] for s in sample], dtype=torch.long)
        return codes[:-1], codes[1:]
