import torch
from torch.utils.data import Dataset


class CharCorruptionDataset(Dataset):
    """Every id decodes to half a megabyte of text: decoding each draw with this vocabulary took
    the grader gigabytes, from a result of under a megabyte."""

    def __init__(self, data, block_size):
        self.itos = {0: "\u25a1", 1: "\u2047", 2: "x" * (512 * 1024)}
        self.stoi = {c: i for i, c in self.itos.items()}
        self.block_size = block_size
        self.data = data.split("\n")

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        ids = torch.full((self.block_size,), 2, dtype=torch.long)
        return ids[:-1], ids[1:]
