"""The storage dtypes pecheck checks, as the ecosystem names them: pecheck's short names ("f32",
"bf16", "f16"), NumPy's and torch's names ("float32", "bfloat16", "float16"), torch's dtype objects
(torch.bfloat16) and NumPy's (np.float16). Read without importing torch: a torch.dtype prints as
"torch.bfloat16"."""
from typing import Any, Tuple

DTYPES: Tuple[str, ...] = ("f32", "bf16", "f16")
# No "float" or "half": NumPy's float is float64, and torch's aliases print as torch.float32, torch.float16.
_NAMES = {"f32": "f32", "float32": "f32", "bf16": "bf16", "bfloat16": "bf16", "f16": "f16", "float16": "f16"}


def dtype_name(d: Any) -> str:
    """pecheck's short name for d; ValueError (starting "dtypes: ") for anything else (float64 included:
    pecheck's storage dtypes are the three a kernel stores)."""
    # np.dtype("float16").name, np.float16.__name__, str(torch.bfloat16) == "torch.bfloat16"
    text = d if isinstance(d, str) else str(getattr(d, "name", None) or getattr(d, "__name__", None) or d)
    name = _NAMES.get(text.removeprefix("torch."))
    if name is None:
        raise ValueError(f"dtypes: {d!r} is not one of f32, bf16, f16 (or torch.float32, torch.bfloat16, "
                         "torch.float16, numpy's float32 and float16)")
    return name
