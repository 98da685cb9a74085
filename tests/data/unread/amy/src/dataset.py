import random

import torch
from torch.utils.data import Dataset


class CharCorruptionDataset(Dataset):
    def __init__(self, data, block_size):
        self.MASK_CHAR, self.PAD_CHAR = "\u2047", "\u25A1"
        vocab = [self.PAD_CHAR, self.MASK_CHAR] + sorted(set(data))
        self.stoi = {ch: i for i, ch in enumerate(vocab)}
        self.itos = dict(enumerate(vocab))
        self.block_size, self.vocab_size = block_size, len(vocab)
        self.data = data.split("\n")

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        doc = self.data[idx][: random.randint(4, int(self.block_size * 7 / 8))]
        span = max(1, round(random.gauss(len(doc) / 4, len(doc) / 10)))
        span = min(span, max(len(doc) - 1, 1))
        cut = random.randint(0, len(doc) - span)
        rearranged = (doc[:cut] + self.MASK_CHAR + doc[cut + span:] + self.MASK_CHAR + doc[cut:cut + span]
                      + self.MASK_CHAR).ljust(self.block_size, self.PAD_CHAR)
        ids = [self.stoi[ch] for ch in rearranged]
        return torch.tensor(ids[:-1], dtype=torch.long), torch.tensor(ids[1:], dtype=torch.long)
