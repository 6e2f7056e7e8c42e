#!/usr/bin/env python3
"""PyTorch's attention on the same GPU, as the baseline for attention/bf16/cuda (bench/cuda_bench.cu).

Same problem: one sequence of 4096 tokens, 32 heads of 128, bf16, not causal, 1/sqrt(128) scale,
RoPE (half-split, base 10000) on q and k. Two timings, each the median of 20 calls after 3 warm-up
calls, with CUDA events:

  sdpa/bf16/torch       torch.nn.functional.scaled_dot_product_attention alone (q, k already rotated)
  rope+sdpa/bf16/torch  Hugging Face's eager apply_rotary_pos_emb (fp32 cos/sin cache, cast to bf16)
                        on q and k, then the same call: the whole operation, as attention/bf16/cuda

Both count 4 n^2 d heads FLOP per call (the two matrix products), as the CUDA benchmark does.
Writes a JSON list of {name, ms, tflops, backend} to the path given, or an empty list and the reason
on stderr when torch or a GPU is missing. Usage: sdpa_bench.py OUT.json
"""
import json
import sys

TOKENS, HEADS, DIM, BASE = 4096, 32, 128, 10000.0
FLOP = 4.0 * TOKENS * TOKENS * DIM * HEADS


def median_ms(fn, torch, warmup=3, reps=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def main(out_path):
    results = []
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"sdpa_bench: no torch here ({e})", file=sys.stderr)
        json.dump(results, open(out_path, "w"))
        return
    if not torch.cuda.is_available():
        print("sdpa_bench: torch sees no GPU", file=sys.stderr)
        json.dump(results, open(out_path, "w"))
        return

    dev = torch.device("cuda")
    gen = torch.Generator(device=dev).manual_seed(1)
    shape = (1, HEADS, TOKENS, DIM)
    q, k, v = (torch.randn(shape, device=dev, dtype=torch.bfloat16, generator=gen) for _ in range(3))

    # Hugging Face's rotary embedding, as written there: fp32 inverse frequencies and angles,
    # cos/sin cast to the activations' dtype, rotate_half on the halves.
    inv_freq = 1.0 / (BASE ** (torch.arange(0, DIM, 2, device=dev, dtype=torch.int64).float() / DIM))
    positions = torch.arange(TOKENS, device=dev).float()
    freqs = torch.outer(positions, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(torch.bfloat16)[None, None], emb.sin().to(torch.bfloat16)[None, None]

    def rotate_half(x):
        x1, x2 = x[..., : DIM // 2], x[..., DIM // 2 :]
        return torch.cat((-x2, x1), dim=-1)

    def rope_then_sdpa():
        qr = q * cos + rotate_half(q) * sin
        kr = k * cos + rotate_half(k) * sin
        return F.scaled_dot_product_attention(qr, kr, v)

    qr = q * cos + rotate_half(q) * sin
    kr = k * cos + rotate_half(k) * sin
    backend = "default dispatch"
    try:  # name the kernel SDPA picks when the API to ask exists
        from torch.nn.attention import SDPBackend, sdpa_kernel

        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            F.scaled_dot_product_attention(qr, kr, v)
        backend = "flash"
    except Exception:  # noqa: BLE001 - any failure means flash is not what runs
        pass

    for name, fn in (("sdpa/bf16/torch", lambda: F.scaled_dot_product_attention(qr, kr, v)),
                     ("rope+sdpa/bf16/torch", rope_then_sdpa)):
        ms = median_ms(fn, torch)
        results.append({"name": name, "ms": ms, "tflops": FLOP / (ms / 1e3) / 1e12, "backend": backend})
    json.dump(results, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: sdpa_bench.py OUT.json")
    main(sys.argv[1])
