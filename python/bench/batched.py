"""Benchmark, not a test: the default check of an eager RoPE layer at about 10 ms a call, call by
call and with check(batch=) (issue 38, item 4: an eager layer's default check in <= 30 s).

The layer is transformers' rotary idiom in torch (rotate_half, cos and sin formed in float32 from
inv_freq and position_ids, batch axis leading), with a 10 ms sleep a call standing for what an
eager framework costs per call beyond the arithmetic (Keras and JAX dispatch, a module's hooks:
the issue measured ~9 ms). Each configuration is the default check: every applicable RoPE
property, 100 cases each, f32 + bf16 + f16, each property x dtype in a forked child. The calls
are counted across the children (a shared counter), so the count is what fn saw.

    python python/bench/batched.py              # both, in one run (the call-by-call one: ~4 min)
    python python/bench/batched.py --batched    # the batched one only

Prints the CPU it ran on beside every figure (these machines differ a lot)."""
import multiprocessing
import os
import sys
import time

import torch

import pecheck
from cpu_name import cpu

CONVENTION = {"rope_theta": 10000.0}
SLEEP_S = 0.010  # per call: an eager framework's overhead, beyond the arithmetic

calls = multiprocessing.Value("l", 0)  # made before check() forks: every child adds to it
rows = multiprocessing.Value("l", 0)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary(x, positions):
    """x (..., tokens, heads, head_dim), positions (..., tokens): transformers' idiom."""
    time.sleep(SLEEP_S)
    with calls.get_lock():
        calls.value += 1
        rows.value += x.shape[0] if x.dim() == 4 else 1
    d = x.shape[-1]
    inv_freq = 1.0 / (CONVENTION["rope_theta"] ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = positions[..., None].float() * inv_freq  # float32 angles, as the idiom forms them
    emb = torch.cat((freqs, freqs), dim=-1)[..., None, :]  # broadcast over heads
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return x * cos + rotate_half(x) * sin


def run(batch):
    calls.value = rows.value = 0
    start = time.perf_counter()
    report = pecheck.check(rotary, "rope", CONVENTION, framework="torch", batch=batch)
    seconds = time.perf_counter() - start
    failed = [f"{r.property}/{r.dtype}" for r in report.results if r.verdict in ("fail", "crash")]
    verdicts = ", ".join(f"{d}: {v.met or 'none'}" for d, v in report.contracts.items())
    label = f"batch={batch}" if batch else "call by call"
    print(f"  {label:>14}: {seconds:6.1f} s, {calls.value:5d} calls of fn, {rows.value:5d} cases sent; "
          f"meets {verdicts}; {len(failed)} failing {failed[:3]}")
    return report


def main():
    print(f"pecheck {pecheck.__version__}, torch {torch.__version__}, on {cpu()} ({os.cpu_count()} CPUs)")
    print(f"the default check of transformers' rotary idiom (torch, batch axis), {SLEEP_S * 1e3:.0f} ms a call:")
    batched = run(256)
    if "--batched" not in sys.argv:
        direct = run(None)
        same = [(a.property, a.dtype, a.verdict, a.max_error_u) for a in batched.results] == [
            (b.property, b.dtype, b.verdict, b.max_error_u) for b in direct.results]
        print(f"  the same verdicts and worst measurements, row for row: {same}")


if __name__ == "__main__":
    main()
