"""CS224N A5 2e: the span-corruption dataset (attngrade's reference solution)."""

import random

import torch
from torch.utils.data import Dataset


class CharCorruptionDataset(Dataset):
    def __init__(self, data, block_size):
        self.MASK_CHAR = "\u2047"
        self.PAD_CHAR = "\u25A1"
        chars = sorted(set(data))
        assert self.MASK_CHAR not in chars and self.PAD_CHAR not in chars
        chars = [self.PAD_CHAR, self.MASK_CHAR] + chars
        self.stoi = {c: i for i, c in enumerate(chars)}
        self.itos = {i: c for i, c in enumerate(chars)}
        self.block_size = block_size
        self.vocab_size = len(chars)
        self.data = data.split("\n")

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        document = self.data[idx]
        cap = int(self.block_size * 7 / 8)
        length = random.randint(4, cap)
        piece = document[:length]
        n = len(piece)
        # masked share: uniform over 1 .. n/2 - 1 (mean about n/4), at least one character
        masked = random.randint(1, max(1, n // 2 - 1)) if n >= 2 else n
        start = random.randint(0, n - masked)
        prefix, content, suffix = piece[:start], piece[start:start + masked], piece[start + masked:]
        text = prefix + self.MASK_CHAR + suffix + self.MASK_CHAR + content
        text = text + self.PAD_CHAR * (self.block_size - len(text))
        ids = torch.tensor([self.stoi[c] for c in text], dtype=torch.long)
        return ids[:-1], ids[1:]
