"""What the sweep checks: a Subject (one architecture's positional code, built from its config class,
with the convention its config states) or a Skip (an architecture left out, and why)."""
from dataclasses import dataclass, field
from typing import Callable, Optional

# The families pecheck has an operation for (its table's operations, short names).
FAMILIES = ("rope", "mrope", "rope2d", "alibi", "t5", "sinusoidal", "learned", "shaw", "relative_bias_2d")


@dataclass
class Subject:
    arch: str  # transformers' model_type
    family: str  # one of FAMILIES
    variant: str  # "default", or the rope_scaling rule, or the config option that selects the module
    op: str  # pecheck.check's op
    build: Callable[[], Callable]  # builds the function pecheck calls (the model's own module inside)
    convention: Optional[dict]  # the pinned convention, as the config states it (None: opaque)
    stated: str  # the config keys read, as "key=value" (what a user would read in config.json)
    module: str  # the transformers code called: "LlamaRotaryEmbedding + apply_rotary_pos_emb"
    quirk: str = ""  # a convention the config does not state, with where it comes from
    max_position: Optional[int] = None
    dtypes: tuple = ("f32", "bf16")
    contracts: tuple = ("exact",)  # rope.agrees' contracts tried, strongest first
    asserted: tuple = ()  # the property ids the verdict rests on ("*": every one that ran)
    reported: tuple = ()  # ids that run and are shown, but are not part of the verdict (why: beside each list)
    extra: dict = field(default_factory=dict)  # check() keyword arguments beyond the defaults


@dataclass
class Skip:
    arch: str
    family: str  # a family of FAMILIES, "unknown: <what it is>", "none" or "composite"
    reason: str


class NotCallable(Exception):
    """The architecture has the family's module, but not in a form the zoo calls (the message says why)."""
