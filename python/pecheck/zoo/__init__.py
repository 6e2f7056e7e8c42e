"""pecheck.zoo: every architecture of the installed transformers, its positional code built from its
config class (no weights) and checked with pecheck.check under the convention its config states.

    python -m pecheck.zoo --markdown docs/model-zoo.md

sweep.run(archs, variants) returns (rows, skips); docs/model-zoo-method.md says how each family is
called and judged."""
