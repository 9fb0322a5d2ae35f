"""Run by test_examples.py with toolkit as torch, in word_language_model's working directory after main.py ran
with ``--onnx-export model.onnx``: the exported file passes onnx's checker and, in ONNX Runtime, gives what the
saved model (``model.pt``) gives for the same tokens and hidden state."""

import numpy as np
import onnx
import onnxruntime as ort
import torch

onnx.checker.check_model(onnx.load("model.onnx"), full_check=True)
with open("model.pt", "rb") as f:
    model = torch.load(f)
model.eval()
torch.manual_seed(0)
tokens = torch.randint(0, model.decoder.out_features, (8, 1))  # main.py exports (bptt, batch 1) tokens
hidden = model.init_hidden(1)
hidden = [torch.randn_like(h) for h in hidden] if isinstance(hidden, tuple) else [torch.randn_like(hidden)]
session = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
feeds = {i.name: t.numpy() for i, t in zip(session.get_inputs(), [tokens, *hidden])}
got = session.run(None, feeds)
with torch.no_grad():
    want = model(tokens, tuple(hidden) if len(hidden) == 2 else hidden[0])
want = [want[0], *(want[1] if isinstance(want[1], tuple) else [want[1]])]
diff = max(float(np.abs(g - w.numpy()).max()) for g, w in zip(got, want))
assert len(got) == len(want) and diff < 1e-4, (len(got), len(want), diff)
print(f"ONNX Runtime matches: max difference {diff:.2e}")
