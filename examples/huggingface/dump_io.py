"""Writes one dump directory for `pecheck validate --dump` (docs/dumps.md): the arrays as NPY files
and manifest.json. bf16 tensors are saved as their raw 16-bit words, as NumPy has no bfloat16."""
import json
import os

import numpy as np
import torch


def to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach()
    return t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()


def write(out: str, name: str, manifest: dict, arrays: dict) -> str:
    """arrays: role -> tensor or ndarray, each saved as ROLE.npy and named in the manifest."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for role, a in arrays.items():
        np.save(os.path.join(d, f"{role}.npy"), to_numpy(a) if isinstance(a, torch.Tensor) else a)
    manifest = dict(manifest, arrays={role: f"{role}.npy" for role in arrays})
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print(f"wrote {d}: {manifest['encoder']}")
    return d


def rope(out, name, encoder, dtype, x, y, positions, convention=None, axes="bhnd"):
    manifest = {"encoder": encoder, "family": "rope", "dtype": dtype, "axes": axes}
    if convention is not None:
        manifest["convention"] = convention
    write(out, name, manifest, {"x": x, "y": y, "positions": np.array(positions, dtype=np.int64)})
