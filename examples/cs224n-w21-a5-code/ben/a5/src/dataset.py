import random

import torch
from torch.utils.data import Dataset


class CharCorruptionDataset(Dataset):
    def __init__(self, data, block_size):
        self.MASK_CHAR = u"\u2047"
        self.PAD_CHAR = u"\u25A1"
        chars = sorted(list(set(data)))
        chars.insert(0, self.MASK_CHAR)
        chars.insert(0, self.PAD_CHAR)
        self.stoi = {c: n for n, c in enumerate(chars)}
        self.itos = {n: c for n, c in enumerate(chars)}
        self.block_size = block_size
        self.vocab_size = len(chars)
        self.data = data.split('\n')

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        trunc_len = random.randint(4, int(self.block_size * 7 / 8))
        text = self.data[idx][:trunc_len]
        mask_len = random.randint(1, trunc_len // 2 - 1)
        start = random.randint(0, trunc_len - mask_len)
        masked = text[:start] + self.MASK_CHAR + text[start + mask_len:] + self.MASK_CHAR + text[start:start + mask_len]
        masked += self.PAD_CHAR * (self.block_size - len(masked))
        x = torch.tensor([self.stoi[c] for c in masked[:-1]], dtype=torch.long)
        y = torch.tensor([self.stoi[c] for c in masked[1:]], dtype=torch.long)
        return x, y
