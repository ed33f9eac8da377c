"""Network and data for examples/sequence.yaml: a sequence classifier over padded token ids.

The data is synthetic and deterministic (a fixed NumPy seed per split, no download): each row is a
sequence of 3 to 12 token ids drawn from 1..vocab_size-1, right-padded with 0 (the padding id) to
12; its label is 1 if token 7 occurs in the sequence, else 0. The network embeds the tokens
(nn.Embedding with padding_idx=0), runs an nn.LSTM over them and classifies the last step's output
with nn.Dense.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

PAD = 0
MARKER = 7  # the label: does this token occur in the sequence?


def token_sequences(split, vocab_size=20, length=12, min_length=3):
    """Rows (tokens [length] int32, 0-padded; label int32): 64 for split "train", 32 for "test"."""
    count, seed = (64, 0) if split == "train" else (32, 1)
    rng = np.random.default_rng(seed)
    tokens = np.full((count, length), PAD, dtype=np.int32)
    for row in range(count):
        size = rng.integers(min_length, length + 1)
        tokens[row, :size] = rng.integers(1, vocab_size, size=size)
    labels = (tokens == MARKER).any(axis=1).astype(np.int32)
    columns = {"tokens": tokens, "label": labels}
    return ds.NumpySlicesDataset(columns, shuffle=False, num_parallel_workers=1)


class LSTMClassifier(nn.Cell):
    """nn.Embedding -> one-layer nn.LSTM (batch first) -> nn.Dense on the last time step."""

    def __init__(self, vocab_size=20, embed_dim=8, hidden=16, num_classes=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers=1, batch_first=True)
        self.head = nn.Dense(hidden, num_classes)

    def construct(self, tokens):
        output, _ = self.lstm(self.embedding(tokens))
        return self.head(output[:, -1, :])
