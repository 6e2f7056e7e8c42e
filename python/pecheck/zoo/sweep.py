"""The sweep: every architecture, each family builder asked in turn, each Subject judged."""
import sys
import time
import warnings

from . import bias, decoders, discover, embeddings, judge, mrope, others, rope, rope_tables, tables
from .subject import Skip

# Every builder is asked; for one family and variant the first that finds it wins (find()).
FAMILY_BUILDERS = (
    rope.config_style, rope.dim_style, rope_tables.table_style, rope_tables.interleaved_sinusoid_style,
    rope_tables.sequence_style, mrope.subjects, bias.alibi_subjects, bias.t5_subjects, tables.sinusoid_subjects,
    tables.sinusoid_function_subjects, tables.learned_class_subjects, embeddings.subjects, decoders.subjects,
)


def find(arch):
    """The Subjects of one architecture, or a Skip."""
    loaded = discover.load(arch)
    if isinstance(loaded, Skip):
        return loaded
    config_cls, module = loaded
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        subjects, errors = [], []
        for builder in FAMILY_BUILDERS:  # every family an architecture offers (Falcon: RoPE and ALiBi)
            try:
                subjects += builder(arch, module, config_cls) or []
            except embeddings.NotCallable as e:
                errors.append(str(e))
            except Exception as e:  # noqa: BLE001 - a builder that cannot read a config is a reported skip
                errors.append(f"{builder.__module__.rsplit('.', 1)[-1]}: {type(e).__name__}: {e}".splitlines()[0])
    if subjects:  # one builder per family and variant: the first that found it (BERT's embeddings before GPT's)
        first = {}
        for s in subjects:
            first.setdefault((s.family, s.variant), s)
        return list(first.values())
    skip = others.classify(arch, module, config_cls)
    if errors:
        skip.reason += f" ({errors[0][:160]})"
    return skip


def run(archs=None, variants=None, cases=30, seed=None, ladder=True, log=sys.stderr):
    """(rows, skips) for the given architectures (default: every one)."""
    import pecheck

    seed = pecheck.DEFAULT_SEED if seed is None else seed
    rows, skips = [], []
    for arch in archs or discover.architectures():
        found = find(arch)
        if isinstance(found, Skip):
            skips.append(found)
            continue
        for subject in found:
            if variants and subject.variant not in variants:
                continue
            start = time.monotonic()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row = judge.judge(subject, cases=cases, seed=seed, ladder=ladder)
            rows.append(row)
            print(f"{row.verdict:5} {arch:24} {subject.family:10} {subject.variant:16} "
                  f"{time.monotonic() - start:5.1f} s  {row.failures[0][:150] if row.failures else ''}", file=log,
                  flush=True)
    return rows, skips
