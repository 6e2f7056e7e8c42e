"""The sweep: every architecture, each family builder asked in turn, each Subject judged in a child
process of its own (forked: a model that crashes or hangs is an ERROR row, and the next one runs),
as many at once as the machine has cores."""
import os
import pickle
import select
import signal
import sys
import time
import warnings
from dataclasses import asdict

from . import (bias, conformer, decoders, discover, embeddings, judge, mrope, others, rope, rope_tables, tables,
               vision)
from .subject import NotCallable, Skip

# Every builder is asked; for one family and variant the first that finds it wins (find()).
FAMILY_BUILDERS = (
    rope.config_style, rope.dim_style, rope_tables.table_style, rope_tables.interleaved_sinusoid_style,
    rope_tables.sequence_style, mrope.subjects, bias.alibi_subjects, bias.t5_subjects, bias.relative_bias_2d_subjects, tables.sinusoid_subjects,
    tables.sinusoid_function_subjects, tables.learned_class_subjects, embeddings.subjects, decoders.subjects,
    vision.subjects, conformer.subjects,
)

# A row that runs longer than this is killed and reported as hung (the slowest rows take ~10 s).
ROW_TIMEOUT = 120.0


def find(arch):
    """The Subjects of one architecture, or a Skip."""
    loaded = discover.load(arch)
    if isinstance(loaded, Skip):
        return loaded
    config_cls, module = loaded
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = config_cls()
        sub = discover.text_model_type(arch, config)
        if sub is not None and discover.text_config(config) is not config:
            return Skip(arch, "composite", f"its text model is `{sub}` (another model_type of this sweep, checked "
                                           "there); its other parts are their own model_types")
        subjects, errors = [], []
        for builder in FAMILY_BUILDERS:  # every family an architecture offers (Falcon: RoPE and ALiBi)
            try:
                subjects += builder(arch, module, config_cls) or []
            except NotCallable as e:
                errors.append(str(e))
            except Exception as e:  # noqa: BLE001 - a builder that cannot read a config is a reported skip
                errors.append(f"{builder.__module__.rsplit('.', 1)[-1]}: {type(e).__name__}: {e}".splitlines()[0])
    if subjects:  # one builder per family and variant: the first that found it (BERT's embeddings before GPT's)
        first = {}
        for s in subjects:
            first.setdefault((s.family, s.variant), s)
        return list(first.values())
    vision = discover.vision_rotary(module, discover.text_config(config))
    building = discover.parts_building(arch, module, config, vision) if vision else []
    if building:  # BLT's local encoder, DeepSeek-OCR 2's encoder: checked in the part that builds it
        return Skip(arch, "composite", f"its rotary module, {', '.join(vision)}, is built by its parts "
                    + ", ".join(f"`{t}`" for t in building) + " (model_types of this sweep, checked there)")
    if vision:
        why = next((e for e in errors if e.startswith(tuple(vision))), None) or \
            "not the axial module (compute_axial_rope_parameters) of transformers 5's vision towers"
        return Skip(arch, "rope2d", f"2-D RoPE over the image patches ({', '.join(vision)}) not checked: {why}")
    owner = discover.rotary_owner(arch, module, discover.text_config(config))
    if owner is not None:
        return Skip(arch, "composite", f"its rotary module, {owner[1]}, is built from `{owner[0]}`'s config "
                                       "(another model_type of this sweep, checked there)")
    composed = discover.parts(arch, config)
    if composed:
        return Skip(arch, "composite", "its positions are its parts': " + ", ".join(f"`{t}`" for t in composed)
                    + " (model_types of this sweep, checked there)")
    skip = others.classify(arch, module, config_cls, discover.text_config(config))
    if errors:
        skip.reason += f" ({errors[0][:200]})"
    return skip


def _judge_in_child(subject, cases, seed, ladder):
    """Forks; the child judges the subject (pecheck.check in-process, on one torch thread) and writes
    the Row to a pipe. Returns (pid, read end)."""
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(r)
            import torch

            torch.set_num_threads(1)  # torch's thread pool does not survive fork() (docs/python.md)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row = judge.judge(subject, cases=cases, seed=seed, ladder=ladder, isolate=False)
            data = pickle.dumps(asdict(row))
            with os.fdopen(w, "wb") as f:
                f.write(data)
        except BaseException as e:  # noqa: BLE001 - the row says what ended its process
            code = 1
            try:
                row = _crashed(subject, 0, 0.0, f"the row's process raised {type(e).__name__}: "
                                                f"{str(e).splitlines()[0][:300] if str(e) else ''}")
                with os.fdopen(w, "wb") as f:
                    f.write(pickle.dumps(asdict(row)))
            except BaseException:  # noqa: BLE001 - the pipe is gone: the parent reports a silent child
                pass
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _crashed(subject, status, seconds, why=None):
    row = judge.Row(subject.arch, subject.family, subject.variant, subject.module, subject.stated, subject.quirk,
                    judge.reading(subject.convention), verdict="ERROR", seconds=seconds)
    if why is None:
        why = (f"the row's process died of signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
               else f"the row's process exited with status {os.WEXITSTATUS(status)} and no result")
    row.failures.append(f"crash: {why}")
    return row


def _log(row, log):
    print(f"{row.verdict:5} {row.arch:24} {row.family:10} {row.variant:18} {row.seconds:5.1f} s  "
          f"{row.failures[0][:150] if row.failures else ''}", file=log, flush=True)


def judge_all(subjects, cases, seed, ladder, jobs, log):
    """Rows for the subjects, in their order, `jobs` children at a time."""
    rows = [None] * len(subjects)
    running = {}  # read fd -> (index, pid, start, chunks)
    queue = list(enumerate(subjects))
    while queue or running:
        while queue and len(running) < jobs:
            i, s = queue.pop(0)
            pid, fd = _judge_in_child(s, cases, seed, ladder)
            running[fd] = (i, pid, time.monotonic(), [])
        ready, _, _ = select.select(list(running), [], [], 1.0)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                running[fd][3].append(chunk)
                continue
            i, pid, start, chunks = running.pop(fd)
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            seconds = time.monotonic() - start
            try:
                rows[i] = judge.Row(**pickle.loads(b"".join(chunks)))
            except Exception:  # noqa: BLE001 - nothing (or half a row) came back: the child died
                rows[i] = _crashed(subjects[i], status, seconds)
            _log(rows[i], log)
        now = time.monotonic()
        for fd, (i, pid, start, _) in list(running.items()):
            if now - start > ROW_TIMEOUT:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(fd)
                del running[fd]
                rows[i] = _crashed(subjects[i], 0, now - start, f"hung: no result after {ROW_TIMEOUT:.0f} s")
                _log(rows[i], log)
    return rows


def run(archs=None, variants=None, cases=30, seed=None, ladder=True, log=sys.stderr, jobs=None):
    """(rows, skips) for the given architectures (default: every one)."""
    import pecheck

    seed = pecheck.DEFAULT_SEED if seed is None else seed
    subjects, skips = [], []
    for arch in archs or discover.architectures():
        found = find(arch)
        if isinstance(found, Skip):
            skips.append(found)
            continue
        subjects += [s for s in found if not variants or s.variant in variants]
    rows = judge_all(subjects, cases, seed, ladder, jobs or os.cpu_count() or 1, log)
    return rows, skips
